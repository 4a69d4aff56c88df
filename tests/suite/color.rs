//! Every coloured write goes through the one colour decision (`--color`, `NO_COLOR`, a
//! terminal). Runs the demo model in a real pseudo-terminal made by `script(1)`.

use super::harness::Sandbox;
use super::support::require_program;

/// The bytes `agent ARGS run --plain 'list the files here'` writes to a terminal, with
/// `env` added.
fn on_a_terminal(args: &str, env: &[(&str, &str)]) -> String {
    let sandbox = Sandbox::new();
    let agent = assert_cmd::cargo::cargo_bin("agent");
    let line = format!(
        "{} {args} run --plain 'list the files here'",
        agent.display()
    );
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.root.path().join("home"))
        .env("AGENT_CONFIG_DIR", sandbox.config_dir())
        .env("XDG_STATE_HOME", sandbox.state_dir())
        .env("TERM", "xterm-256color")
        .current_dir(sandbox.work())
        .stdin(std::process::Stdio::null());
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd.output().expect("script(1)");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

const DIM: &str = "\x1b[2m";

#[test]
fn the_demo_notice_follows_the_colour_decision() {
    if !require_program("script") {
        return;
    }
    let auto = on_a_terminal("", &[]);
    assert!(
        auto.contains(DIM) && auto.contains("offline demo model"),
        "a terminal gets the dimmed notice: {auto:?}"
    );
    let never = on_a_terminal("--color never", &[]);
    assert!(never.contains("offline demo model"), "{never:?}");
    assert!(
        !never.contains('\x1b'),
        "--color never wrote colour: {never:?}"
    );
    let no_color = on_a_terminal("", &[("NO_COLOR", "1")]);
    assert!(
        !no_color.contains('\x1b'),
        "NO_COLOR wrote colour: {no_color:?}"
    );
}
