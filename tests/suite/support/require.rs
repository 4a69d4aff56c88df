//! The one way a test skips for want of something on the machine (the sandbox, `python3`,
//! `script`, a mount namespace…). Locally the skip is said on stderr, past the test
//! harness's capture, so it is seen in `cargo test`'s output; with `AGENT_TEST_STRICT` set
//! (`.ci/run` sets it) a missing capability fails the test instead, so a skip cannot pass
//! in CI. `AGENT_TEST_STRICT=1` is strict about every capability; a comma-separated list
//! (`sandbox,python3`) about those named only.

use std::io::Write;

/// The variable that turns a skip into a failure.
pub const STRICT: &str = "AGENT_TEST_STRICT";

/// Whether the test may go on: `present` says whether the machine has `capability`. When it
/// has not, the test is skipped (`false`, said on stderr) or, in strict mode, fails here.
pub fn require(capability: &str, present: bool) -> bool {
    if present {
        return true;
    }
    let setting = std::env::var(STRICT).ok();
    assert!(
        !strict_about(capability, setting.as_deref()),
        "needs {capability}, which this machine lacks ({STRICT} is set: a skip must not pass)"
    );
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    // Straight to stderr, not `eprintln!`: the harness keeps a passing test's prints to itself.
    let _ = writeln!(std::io::stderr(), "skipped: {test} needs {capability}");
    false
}

/// [`require`] for a program found on `PATH` (`python3`, `script`, `bash`, `renice`…).
pub fn require_program(program: &str) -> bool {
    require(program, on_path(program))
}

/// Whether `program` is found on `PATH` (by `sh`'s `command -v`, as the tests' commands run it).
pub fn on_path(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", "command -v \"$1\" > /dev/null", "sh", program])
        .status()
        .is_ok_and(|status| status.success())
}

/// Whether `setting` (the value of [`STRICT`], if set) is strict about `capability`.
fn strict_about(capability: &str, setting: Option<&str>) -> bool {
    match setting.map(str::trim) {
        None | Some("" | "0") => false,
        Some("1") => true,
        Some(list) => list.split(',').any(|name| name.trim() == capability),
    }
}

#[test]
fn strict_mode_is_strict_about_what_it_names() {
    for capability in ["sandbox", "python3", "root", "mount namespace"] {
        assert!(!strict_about(capability, None), "{capability}");
        assert!(!strict_about(capability, Some("")), "{capability}");
        assert!(!strict_about(capability, Some("0")), "{capability}");
        assert!(strict_about(capability, Some("1")), "{capability}");
        assert!(
            strict_about(capability, Some(&format!("tmux, {capability} ,git"))),
            "{capability}"
        );
        assert!(!strict_about(capability, Some("tmux,git")), "{capability}");
        assert!(
            !strict_about(capability, Some(&format!("{capability}x"))),
            "{capability}"
        );
    }
}

#[test]
fn a_present_capability_never_skips_and_a_missing_one_skips_or_fails() {
    assert!(require("something present", true));
    assert!(on_path("sh"));
    assert!(!on_path("no-such-program-agent-test"));
    let strict = strict_about("a missing thing", std::env::var(STRICT).ok().as_deref());
    let outcome = std::panic::catch_unwind(|| require("a missing thing", false));
    match outcome {
        Ok(went_on) => {
            assert!(!strict, "strict mode let a missing capability pass");
            assert!(!went_on, "a missing capability did not skip");
        }
        Err(_) => assert!(strict, "a missing capability failed outside strict mode"),
    }
}
