//! Each settings warning is printed once (issue 36: "the project-file warning is printed
//! twice"). It was printed twice — and the person's own keys called "ignored: a project
//! file can only …" — when the user settings file was the workspace's `.agent/settings.toml`
//! under another name: a relative `--config` or `AGENT_CONFIG_DIR`, a `..` in the path, a
//! symlink. The file was read as both layers. Every spelling is tried, in `check`, `exec`
//! and `run`.

use super::fake_model::{FakeModel, turn_text};
use super::harness::Sandbox;

/// What is tried, its flags and its environment.
#[cfg(unix)]
type Spelling = (&'static str, Vec<String>, Vec<(&'static str, String)>);

const WARNED: &str = "unknown key `bogus` in [model] is ignored";

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// A sandbox whose workspace's `.agent/settings.toml` warns (an unknown key) and sets a
/// key only a user file may (`price_in`).
fn warning_workspace() -> Sandbox {
    let sandbox = Sandbox::new();
    let dir = sandbox.work().join(".agent");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.toml"),
        "[model]\nprice_in = 2.0\nbogus = 1\n",
    )
    .unwrap();
    sandbox
}

#[cfg(unix)]
#[test]
fn a_project_file_that_is_also_the_user_file_warns_once_whatever_its_spelling() {
    let sandbox = warning_workspace();
    let work = sandbox.work();
    std::os::unix::fs::symlink(
        work.join(".agent/settings.toml"),
        sandbox.root.path().join("linked.toml"),
    )
    .unwrap();
    let linked = sandbox.root.path().join("linked.toml");
    let dotted = work.join(".agent/../.agent/settings.toml");
    let spellings: Vec<Spelling> = vec![
        (
            "relative --config",
            vec!["--config".into(), ".agent/settings.toml".into()],
            vec![],
        ),
        (
            "./ --config",
            vec!["--config".into(), "./.agent/settings.toml".into()],
            vec![],
        ),
        (
            ".. in --config",
            vec!["--config".into(), dotted.display().to_string()],
            vec![],
        ),
        (
            "symlinked --config",
            vec!["--config".into(), linked.display().to_string()],
            vec![],
        ),
        (
            "relative AGENT_CONFIG_DIR",
            vec![],
            vec![("AGENT_CONFIG_DIR", ".agent".to_owned())],
        ),
        (
            "absolute --config",
            vec![
                "--config".into(),
                work.join(".agent/settings.toml").display().to_string(),
            ],
            vec![],
        ),
    ];
    for (what, flags, env) in &spellings {
        for command in [&["check", "ls"][..], &["exec", "true"][..]] {
            let mut agent = sandbox.agent();
            agent.args(flags).args(command);
            for (name, value) in env {
                agent.env(name, value);
            }
            let output = agent.output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(
                count(&stderr, WARNED),
                1,
                "{what}, {command:?}: the warning once:\n{stderr}"
            );
            assert_eq!(
                count(&stderr, "is ignored: a project file"),
                0,
                "{what}, {command:?}: the person's own file is not a project's:\n{stderr}"
            );
        }
    }
}

#[test]
fn a_project_file_warns_once_in_a_run_piped() {
    let sandbox = warning_workspace();
    let server = FakeModel::openai_turns([turn_text("done")]);
    let output = sandbox.openai_run(&server).arg("hello").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(count(&stderr, WARNED), 1, "{stderr}");
    assert_eq!(
        count(&stderr, "`model.price_in` is ignored: a project file"),
        1,
        "{stderr}"
    );
}
