//! Mode `auto`: what the sandbox contains runs, what acts on the machine or may leave the
//! workspace still asks, deny rules win, and removals need a whole snapshot.

use std::path::Path;

use super::super::{Context, OsFamily, ReadOnly, Rule, Rules, Source, Verdict, decide};
use super::apply_auto;

const WORKSPACE: &str = "/work/project";

fn context(cwd: &str) -> Context {
    Context::new(
        OsFamily::Unix,
        Path::new(WORKSPACE),
        Path::new(cwd),
        ReadOnly::Inspect,
    )
}

fn rules(deny: &[&str]) -> Rules {
    let rule = |prefix: &&str| Rule {
        prefix: (*prefix).to_owned(),
        source: Source::User,
    };
    Rules::new(Vec::new(), deny.iter().map(rule).collect())
}

/// The decision in mode `auto`, with the snapshot whole or not; and whether the snapshot was
/// asked about.
fn auto(deny: &[&str], cwd: &str, command: &str, whole: bool) -> (Verdict, String, bool) {
    let context = context(cwd);
    let mut asked = false;
    let decision = apply_auto(
        decide(&rules(deny), &context, command),
        &context,
        command,
        |_| {
            asked = true;
            whole
        },
    );
    (decision.verdict, decision.reason, asked)
}

fn verdict(command: &str) -> Verdict {
    auto(&[], WORKSPACE, command, true).0
}

#[test]
fn what_the_sandbox_contains_runs_and_says_auto() {
    for command in [
        "touch made.txt",
        "python3 -m pytest -x",
        "cargo build && cargo test",
        "npm run build > log.txt",
        "make -j4",
        "echo hi | tee out.txt",
        "digit --legit x_git",
    ] {
        let (verdict, reason, asked) = auto(&[], WORKSPACE, command, true);
        assert_eq!(verdict, Verdict::Allow, "{command}: {reason}");
        assert!(
            reason.starts_with("allowed by mode `auto`: runs in the sandbox"),
            "{reason}"
        );
        assert!(
            asked,
            "{command}: every command needs the snapshot before it"
        );
        // A snapshot that failed or is not whole: undo could not take it back, so it asks.
        let (verdict, reason, _) = auto(&[], WORKSPACE, command, false);
        assert_eq!(verdict, Verdict::Ask, "{command}: {reason}");
        assert!(reason.contains("is not whole"), "{reason}");
    }
}

/// Snapshots do not keep git's history, refs or stash (and `auto` runs commands with git's
/// directory read-only): whatever may run git asks, in every spelling, as does an alias a
/// deny rule cannot see through the environment or a config file.
#[test]
fn what_may_run_git_still_asks() {
    for command in [
        "git add -A",
        "git commit -m x",
        "git branch -D feature && git reflog expire --expire=now --all && git gc --prune=now",
        "git clean -fdx",
        "git stash drop",
        "/usr/bin/git update-ref -d HEAD",
        "'git' checkout --orphan x",
        "g\\it gc",
        "env GIT_DIR=x git gc",
        "export GIT_CONFIG_PARAMETERS=\"'alias.r=reset --hard'\"; git r",
        "HOME=. git r",
        "XDG_CONFIG_HOME=. Git r",
        "git-receive-pack .",
        "python3 -c \"import subprocess; subprocess.run(['git', 'gc'])\"",
        "make GIT=1 x",
    ] {
        let (verdict, reason, _) = auto(&[], WORKSPACE, command, true);
        assert_eq!(verdict, Verdict::Ask, "{command}: {reason}");
        assert!(
            reason.contains("mode `auto` still asks"),
            "{command}: {reason}"
        );
    }
}

#[test]
fn allow_and_deny_are_unchanged() {
    // The read-only list's allow keeps its source (the caller runs it read-only).
    let context = context(WORKSPACE);
    let listed = decide(&rules(&[]), &context, "ls");
    let applied = apply_auto(listed.clone(), &context, "ls", |_| unreachable!());
    assert_eq!(applied, listed);
    for (deny, command) in [
        ("git push", "git push origin main"),
        ("rm -rf", "rm -rf build"),
        ("curl", "cd x && curl http://127.0.0.1"),
        ("make", "make install"),
    ] {
        let (verdict, reason, _) = auto(&[deny], WORKSPACE, command, true);
        assert_eq!(verdict, Verdict::Deny, "{command}: {reason}");
    }
    // A word that is not fixed could complete a deny rule: still asks.
    let (verdict, reason, _) = auto(&["git push"], WORKSPACE, "git $X", true);
    assert_eq!(verdict, Verdict::Ask, "{reason}");
    assert!(reason.contains("mode `auto` still asks"), "{reason}");
}

#[test]
fn programs_that_act_on_the_machine_or_another_user_still_ask() {
    let machine = [
        "sudo",
        "su",
        "doas",
        "pkexec",
        "runuser",
        "sudoedit",
        "sg",
        "shutdown",
        "reboot",
        "poweroff",
        "halt",
        "mkfs",
        "mkfs.ext4",
        "dd",
    ];
    let shapes = [
        "{p} x",
        "{p} -h now",
        "/usr/bin/{p} x",
        "cd sub && {p} x",
        "ls | {p} x",
        "env {p} x",
        "nice -n 5 {p} x",
        "xargs {p} < list",
        "sh -c '{p} x'",
        "echo x && {p} x",
        "true; {p} of=/dev/sda",
    ];
    for program in machine {
        for shape in shapes {
            let command = shape.replace("{p}", program);
            let (verdict, reason, _) = auto(&[], WORKSPACE, &command, true);
            assert_eq!(verdict, Verdict::Ask, "{command}: {reason}");
        }
    }
    assert!(
        auto(&[], WORKSPACE, "sudo x", true)
            .1
            .contains("acts on the machine")
    );
}

#[test]
fn a_removal_inside_the_workspace_runs_only_with_a_whole_snapshot() {
    for command in [
        "rm tests/x-verification.spec.ts",
        "rm -rf build",
        "rm -r -f ./target/debug",
        "rm -- -odd-name",
        "rmdir empty",
        "mv a.txt b.txt",
        "mv -f src/old.rs src/new.rs",
        "rm build/*.o",
        "rm ./*.tmp",
        "rm sub/../other",
        "/bin/rm x",
    ] {
        let (verdict, reason, asked) = auto(&[], WORKSPACE, command, true);
        assert_eq!(verdict, Verdict::Allow, "{command}: {reason}");
        assert!(asked && reason.contains("snapshot"), "{command}: {reason}");
        let (verdict, reason, _) = auto(&[], WORKSPACE, command, false);
        assert_eq!(verdict, Verdict::Ask, "{command}: {reason}");
        assert!(reason.contains("not whole"), "{reason}");
    }
    // From a subdirectory, `..` that stays inside is fine.
    assert_eq!(
        auto(&[], "/work/project/sub", "rm ../x", true).0,
        Verdict::Allow
    );
}

#[test]
fn a_removal_that_may_leave_the_workspace_or_is_not_plain_asks() {
    let programs = ["rm", "rm -rf", "rmdir", "mv", "mv x"];
    let operands = [
        "/",
        "/etc/passwd",
        "..",
        "../x",
        "a/../../x",
        ".",
        "./",
        "~/x",
        "~",
        "$HOME/x",
        "\"$X\"",
        "$(pwd)/x",
        "*",
        "*.rs",
        "?x",
        "[a]x",
        "{a,b}",
        "x{,/../../y}",
        ".git",
        ".git/config",
        "sub/.git/hooks",
        ".GIT",
        ".agent/settings.toml",
        ".g*",
        ".*",
        ".env",
        "config/.env.local",
        "id_rsa",
        "/work/project",
        "/work/projectx/y",
        "/work/other",
    ];
    for program in programs {
        for operand in operands {
            let command = format!("{program} {operand}");
            let (verdict, reason, asked) = auto(&[], WORKSPACE, &command, true);
            assert_eq!(verdict, Verdict::Ask, "{command}: {reason}");
            assert!(!asked, "{command}: asked for a snapshot");
        }
    }
    for command in [
        "rm -rf / --no-preserve-root",
        "rm --no-preserve-root -rf x",
        "mv -t /tmp x",
        "mv --target-directory=/tmp x",
        "mv -S .bak x y",
        "rmdir -p a/b",
        "rm --rec x",
        "cd sub && rm x",
        "rm a; rm b",
        "rm x | cat",
        "rm x > log",
        "X=1 rm x",
        "xargs rm < list",
        "find . -delete",
        "find . -exec rm {} +",
        "env rm x",
        "command rm x",
        "busybox rm x",
        "sh -c 'rm x'",
        "git -c core.pager='rm x' log",
        "r\\\nm x",
        "$RM x",
        "alias x=rm",
        "rm `pwd`/x",
        "dd if=x of=y",
    ] {
        let (verdict, reason, _) = auto(&[], WORKSPACE, command, true);
        assert_eq!(verdict, Verdict::Ask, "{command}: {reason}");
    }
    // Outside the workspace even the working directory is outside.
    assert_eq!(auto(&[], "/work", "rm x", true).0, Verdict::Ask);
}

#[test]
fn the_windows_family_never_removes_in_auto() {
    let context = Context::new(
        OsFamily::Windows,
        Path::new("C:\\w"),
        Path::new("C:\\w"),
        ReadOnly::Inspect,
    );
    for command in ["del x", "rd /s /q x", "move a b"] {
        let decision = apply_auto(
            decide(&rules(&[]), &context, command),
            &context,
            command,
            |_| true,
        );
        assert_eq!(decision.verdict, Verdict::Ask, "{command}");
    }
    assert_eq!(verdict("touch x"), Verdict::Allow);
}

#[test]
fn a_removal_hands_over_the_paths_it_touches_a_glob_as_its_directory() {
    let paths = |cwd: &str, command: &str| {
        let context = context(cwd);
        let mut given = None;
        let decision = apply_auto(
            decide(&rules(&[]), &context, command),
            &context,
            command,
            |paths| {
                given = Some(paths.to_vec());
                true
            },
        );
        assert_eq!(decision.verdict, Verdict::Allow, "{command}");
        given
            .unwrap()
            .iter()
            .map(|path| path.display().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        paths(WORKSPACE, "rm -rf build x/y.txt"),
        ["build", "x/y.txt"]
    );
    assert_eq!(paths(WORKSPACE, "mv a sub/b"), ["a", "sub/b"]);
    assert_eq!(paths("/work/project/sub", "rm ../z ./w"), ["z", "sub/w"]);
    assert_eq!(paths(WORKSPACE, "rm build/*.o out/a?/x"), ["build", "out"]);
    assert_eq!(paths(WORKSPACE, "rm ./*.tmp"), [""]);
}
