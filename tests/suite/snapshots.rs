//! Snapshots through the real binary: a run changes files with shell commands, `agent diff`
//! shows it, `agent undo` takes it back (and an undo of the undo puts it back), in a git
//! workspace whose refs, index and `git status` stay exactly as they were, and in a plain
//! directory; a file changed since the run blocks undo without `--force`.

use std::path::Path;

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{Sandbox, events};
use super::support::git::{command, succeeded};
use predicates::prelude::*;
use pretty_assertions::assert_eq;

/// Hermetic `git ARGS` in `dir`, which must succeed; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    // `git status` must not refresh the index itself: the test compares its bytes.
    succeeded(command(dir).env("GIT_OPTIONAL_LOCKS", "0").args(args))
}

fn read(dir: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(path)).ok()
}

fn write(dir: &Path, path: &str, text: &str) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

/// A model that modifies `edit.txt`, creates `new.txt`, deletes `gone.txt` and rewrites the
/// ignored `target/out`, over two turns.
fn changing_model() -> FakeModel {
    FakeModel::openai_turns([
        turn_tool_call("sed -i s/two/TWO/ edit.txt", "edit")
            .with_shell("printf 'made\\n' > new.txt", "create"),
        turn_tool_call("unlink gone.txt", "delete").with_shell("printf x > target/out", "build"),
        turn_text("done"),
    ])
}

/// The project's own state: refs, index bytes, status, stash.
fn project_state(w: &Path) -> (String, Vec<u8>, String) {
    (
        git(w, &["for-each-ref"]),
        std::fs::read(w.join(".git/index")).unwrap(),
        git(w, &["status", "--porcelain", "--untracked-files=all"]),
    )
}

#[test]
fn in_a_git_workspace_a_run_is_diffed_undone_and_redone_and_the_project_is_untouched() {
    let sandbox = Sandbox::new();
    let w = sandbox.work();
    git(&w, &["init", "-q"]);
    write(&w, ".gitignore", "target/\n");
    write(&w, "edit.txt", "one\ntwo\n");
    write(&w, "gone.txt", "gone\n");
    write(&w, "keep.txt", "keep\n");
    git(&w, &["add", "."]);
    git(&w, &["commit", "-qm", "init"]);
    write(&w, "staged.txt", "staged\n");
    git(&w, &["add", "staged.txt"]);
    write(&w, "target/out", "old build\n");
    let before = project_state(&w);

    let server = changing_model();
    let output = sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "--json", "change things"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let done = events(&output.stdout)
        .into_iter()
        .find(|e| e["type"] == "done")
        .unwrap();
    assert_eq!(
        done["changes"],
        serde_json::json!({"files": 3, "added": 2, "removed": 2, "undo": true}),
        "{done}"
    );
    assert_eq!(read(&w, "edit.txt").as_deref(), Some("one\nTWO\n"));
    assert!(!w.join("gone.txt").exists());

    sandbox
        .agent()
        .arg("diff")
        .assert()
        .success()
        .stdout(predicate::str::contains("+TWO\n"))
        .stdout(predicate::str::contains("+++ b/new.txt"))
        .stdout(predicate::str::contains("--- a/gone.txt"))
        .stdout(predicate::str::contains("target/out").not());
    sandbox
        .agent()
        .args(["diff", "--stat"])
        .assert()
        .success()
        .stdout(predicate::str::contains("modified edit.txt | +1 −1"))
        .stdout(predicate::str::contains("3 files changed (+2 −2)"));
    assert_eq!(
        diffed(&sandbox),
        pairs(&[
            ("edit.txt", "modified"),
            ("gone.txt", "deleted"),
            ("new.txt", "added"),
        ])
    );

    sandbox
        .agent()
        .arg("undo")
        .assert()
        .success()
        .stderr(predicate::str::contains("restore    edit.txt"))
        .stderr(predicate::str::contains("remove     new.txt"))
        .stderr(predicate::str::contains("bring back gone.txt"));
    assert_eq!(read(&w, "edit.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(read(&w, "gone.txt").as_deref(), Some("gone\n"));
    assert!(!w.join("new.txt").exists());
    assert_eq!(
        read(&w, "target/out").as_deref(),
        Some("x"),
        "ignored files are left alone"
    );
    assert_eq!(
        project_state(&w),
        before,
        "refs, index and status are as before the run"
    );

    // The undo is undoable: the run's changes come back, then go again.
    sandbox.agent().arg("undo").assert().success();
    assert_eq!(read(&w, "edit.txt").as_deref(), Some("one\nTWO\n"));
    assert_eq!(read(&w, "new.txt").as_deref(), Some("made\n"));
    assert!(!w.join("gone.txt").exists());
    sandbox.agent().arg("undo").assert().success();
    assert_eq!(read(&w, "edit.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(project_state(&w), before);
}

#[test]
fn in_a_plain_directory_a_later_change_blocks_undo_without_force() {
    let sandbox = Sandbox::new();
    let w = sandbox.work();
    write(&w, "edit.txt", "one\ntwo\n");
    write(&w, "gone.txt", "gone\n");
    std::fs::create_dir_all(w.join("target")).unwrap();
    let server = changing_model();
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "change things"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "agent: changed 4 files (+3 −2) · agent undo to revert",
        ));
    let history = sandbox.agent().arg("history").output().unwrap();
    assert!(
        String::from_utf8_lossy(&history.stdout).contains("4 (+3 −2)"),
        "{history:?}"
    );

    write(&w, "edit.txt", "a person's edit\n");
    sandbox
        .agent()
        .arg("undo")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("`edit.txt` changed since run"))
        .stderr(predicate::str::contains("--force"));
    assert_eq!(read(&w, "edit.txt").as_deref(), Some("a person's edit\n"));
    assert!(w.join("new.txt").exists(), "nothing was undone");

    sandbox
        .agent()
        .args(["undo", "--force", "--dry-run"])
        .assert()
        .success()
        .stderr(predicate::str::contains("restore    edit.txt"));
    assert_eq!(read(&w, "edit.txt").as_deref(), Some("a person's edit\n"));

    sandbox.agent().args(["undo", "--force"]).assert().success();
    assert_eq!(read(&w, "edit.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(read(&w, "gone.txt").as_deref(), Some("gone\n"));
    assert!(!w.join("new.txt").exists());
    assert!(!w.join("target/out").exists());
}

#[test]
fn read_only_runs_take_no_snapshot_and_snapshots_can_be_turned_off() {
    let sandbox = Sandbox::new();
    write(&sandbox.work(), "a.txt", "a\n");
    let server = FakeModel::openai_turns([turn_tool_call("ls", "list"), turn_text("ok")]);
    let output = sandbox
        .openai_run(&server)
        .args(["--json", "list"])
        .output()
        .unwrap();
    let done = events(&output.stdout)
        .into_iter()
        .find(|e| e["type"] == "done")
        .unwrap();
    assert!(done.get("changes").is_none(), "{done}");
    sandbox
        .agent()
        .arg("diff")
        .assert()
        .failure()
        .stderr(predicate::str::contains("no run has changed files"));

    sandbox.settings("[snapshots]\nenabled = false\n");
    let server = FakeModel::openai_turns([turn_tool_call("touch b", "b"), turn_text("ok")]);
    let output = sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "--json", "touch"])
        .output()
        .unwrap();
    assert!(sandbox.work().join("b").exists());
    let done = events(&output.stdout)
        .into_iter()
        .find(|e| e["type"] == "done")
        .unwrap();
    assert!(done.get("changes").is_none(), "{done}");
}

/// A plain directory of 600 files: the first snapshot writes them into one pack (not 600
/// loose objects), is whole, and undo puts back a packed file's bytes.
#[test]
fn in_a_plain_directory_of_many_files_the_first_snapshot_is_whole_and_undo_restores() {
    let sandbox = Sandbox::new();
    let w = sandbox.work();
    for i in 0..600 {
        write(
            &w,
            &format!("d{}/f{i}.txt", i / 100),
            &format!("line {i}\n"),
        );
    }
    let server = FakeModel::openai_turns([
        turn_tool_call("printf changed > d3/f345.txt", "edit")
            .with_shell("unlink d5/f599.txt", "delete"),
        turn_text("done"),
    ]);
    let output = sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "--json", "change things"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let done = events(&output.stdout)
        .into_iter()
        .find(|e| e["type"] == "done")
        .unwrap();
    assert_eq!(
        done["changes"],
        serde_json::json!({"files": 2, "added": 1, "removed": 2, "undo": true}),
        "whole snapshots, no note: {done}"
    );
    let store = std::fs::read_dir(sandbox.state_dir().join("agent/snapshots"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let packs = std::fs::read_dir(store.join("repo/objects/pack"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .count();
    assert_eq!(packs, 1, "the first snapshot's files are in one pack");
    sandbox.agent().arg("undo").assert().success();
    assert_eq!(read(&w, "d3/f345.txt").as_deref(), Some("line 345\n"));
    assert_eq!(read(&w, "d5/f599.txt").as_deref(), Some("line 599\n"));
}

/// The files `agent diff --json` lists, with their status.
fn diffed(sandbox: &Sandbox) -> Vec<(String, String)> {
    let json = sandbox.agent().args(["diff", "--json"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let mut files: Vec<(String, String)> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    files.sort();
    files
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// A run that only edits `.gitignore` (and removes a nested one) does not make the files
/// they ignored its own: `agent diff` shows the edits alone, `agent undo` puts the rules
/// back and leaves a person's ignored `local.db` and cache where they were.
fn a_run_that_unignores_files_does_not_own_them(git_workspace: bool) {
    let sandbox = Sandbox::new();
    let w = sandbox.work();
    if git_workspace {
        git(&w, &["init", "-q"]);
    }
    write(&w, ".gitignore", "*.db\n");
    write(&w, "data/.gitignore", "cache/\n");
    write(&w, "local.db", "a person's data\n");
    write(&w, "data/cache/blob", "cached\n");
    if git_workspace {
        git(&w, &["add", "."]);
        git(&w, &["commit", "-qm", "init"]);
    }
    let server = FakeModel::openai_turns([
        turn_tool_call("printf '# none\\n' > .gitignore", "unignore")
            .with_shell("unlink data/.gitignore", "unignore the cache"),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        .args(["--mode", "allow-all", "change the rules"])
        .assert()
        .success()
        .stderr(predicate::str::contains("agent: changed 2 files"));
    assert_eq!(
        diffed(&sandbox),
        pairs(&[(".gitignore", "modified"), ("data/.gitignore", "deleted")])
    );
    sandbox
        .agent()
        .arg("undo")
        .assert()
        .success()
        .stderr(predicate::str::contains("local.db").not());
    assert_eq!(read(&w, ".gitignore").as_deref(), Some("*.db\n"));
    assert_eq!(read(&w, "data/.gitignore").as_deref(), Some("cache/\n"));
    assert_eq!(read(&w, "local.db").as_deref(), Some("a person's data\n"));
    assert_eq!(read(&w, "data/cache/blob").as_deref(), Some("cached\n"));
}

#[test]
fn in_a_git_workspace_a_run_that_unignores_a_file_neither_creates_nor_removes_it() {
    a_run_that_unignores_files_does_not_own_them(true);
}

#[test]
fn in_a_plain_directory_a_run_that_unignores_a_file_neither_creates_nor_removes_it() {
    a_run_that_unignores_files_does_not_own_them(false);
}

/// A run that writes ignore rules — `x/.gitignore` = `*`, the user's global excludes file —
/// next to the files it makes, or makes them in a repository of their own, hides none of
/// them from `agent diff`, the summary or `agent undo`.
fn rules_a_run_writes_hide_nothing(git_workspace: bool) {
    let sandbox = Sandbox::new();
    let w = sandbox.work();
    if git_workspace {
        git(&w, &["init", "-q"]);
        write(&w, "keep.txt", "keep\n");
        git(&w, &["add", "."]);
        git(&w, &["commit", "-qm", "init"]);
    }
    let global = sandbox.root.path().join("home/.config/git/ignore");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    std::fs::write(&global, "*.tmp\n").unwrap();
    write(&w, "old.tmp", "ignored before\n");
    let server = FakeModel::openai_turns([
        turn_tool_call("mkdir x && printf '*\\n' > x/.gitignore", "hide")
            .with_shell("printf 'echo pwned\\n' > x/payload.sh", "payload"),
        turn_tool_call(
            &format!("printf 'two.sh\\n' >> '{}'", global.display()),
            "hide globally",
        )
        .with_shell("printf x > two.sh", "second payload"),
        turn_tool_call(
            "git init -q n && printf x > n/three.sh",
            "behind a repository",
        ),
        turn_text("done"),
    ]);
    sandbox
        .openai_run(&server)
        // Outside the workspace only a run without the sandbox can write.
        .args(["--mode", "allow-all", "--sandbox", "off", "hide things"])
        .assert()
        .success()
        .stderr(predicate::str::contains("agent: changed 4 files"));
    assert_eq!(
        std::fs::read_to_string(&global).ok().as_deref(),
        Some("*.tmp\ntwo.sh\n"),
        "the run wrote the global excludes file"
    );
    assert_eq!(
        diffed(&sandbox),
        pairs(&[
            ("n/three.sh", "added"),
            ("two.sh", "added"),
            ("x/.gitignore", "added"),
            ("x/payload.sh", "added"),
        ])
    );
    sandbox
        .agent()
        .arg("undo")
        .assert()
        .success()
        .stderr(predicate::str::contains("remove     x/payload.sh"));
    assert!(!w.join("x").exists(), "the payload is gone");
    assert!(!w.join("two.sh").exists() && !w.join("n/three.sh").exists());
    assert_eq!(read(&w, "old.tmp").as_deref(), Some("ignored before\n"));
}

#[test]
fn in_a_git_workspace_ignore_rules_a_run_writes_hide_nothing_it_made() {
    rules_a_run_writes_hide_nothing(true);
}

#[test]
fn in_a_plain_directory_ignore_rules_a_run_writes_hide_nothing_it_made() {
    rules_a_run_writes_hide_nothing(false);
}
