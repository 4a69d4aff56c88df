//! The run's network namespaces are shared by the commands of one sandbox only, through the
//! real binary (Linux, mode `auto` applying): a server a person approved (wider sandbox) is not
//! reached by what mode `auto` let through on its own, while the person-approved commands
//! still reach it (rev5 B7).

use super::auto::{auto_applies, ci_run, dirs, of_type, verdicts};
use super::background::server_command;
use super::background::{Cleanup, available, background_turn, free_port, last_result};
use super::fake_model::{FakeModel, Turn, turn_text, turn_tool_call};
use super::support::require::require_program;

/// A Python script that fetches `http://localhost:PORT/`, trying until the server listens
/// (bounded), and prints `status=CODE` or `unreachable`.
fn probe(port: u16) -> String {
    format!(
        "import time, urllib.request as u\n\
         for _ in range(200):\n    \
         try:\n        \
         print('status=%d' % u.urlopen('http://localhost:{port}/', timeout=2).status); break\n    \
         except Exception: time.sleep(0.05)\n\
         else: print('unreachable')\n"
    )
}

#[test]
fn an_auto_allowed_command_does_not_reach_a_server_a_person_approved() {
    let (sandbox, tmp, _) = dirs();
    if !available(&sandbox) || !require_program("python3") || !auto_applies(&sandbox, &tmp) {
        return;
    }
    let port = free_port();
    let marker = server_command(port, &sandbox);
    let _cleanup = Cleanup(marker.clone());
    // The same probe twice: as `auto` lets it through, and as a rule (a person) allows it.
    let work = sandbox.work();
    std::fs::write(work.join("auto_probe.py"), probe(port)).unwrap();
    std::fs::write(work.join("approved_probe.py"), probe(port)).unwrap();
    sandbox.settings(
        "[permissions.commands]\n\
         allow = [\"python3 -m http.server\", \"python3 approved_probe.py\"]\n\
         [network]\nmode = \"off\"\n",
    );
    let server = FakeModel::openai_turns([
        background_turn(&marker),
        turn_tool_call("python3 auto_probe.py", "auto's"),
        turn_tool_call("python3 approved_probe.py", "the person's"),
        turn_text("done"),
    ]);
    let (events, _) = ci_run(&sandbox, &tmp, &server, &[]);
    let result = |index: usize| last_result(&server, index);
    assert!(
        result(1).contains("\"background\":\"bg1\""),
        "{}",
        result(1)
    );
    assert_eq!(
        verdicts(&of_type(&events, "decision")),
        [("allow", "policy"), ("allow", "mode"), ("allow", "policy")]
    );
    assert!(result(2).contains("unreachable"), "{}", result(2));
    assert!(!result(2).contains("status="), "{}", result(2));
    assert!(result(3).contains("status=200"), "{}", result(3));
}

/// A background process cannot be granted hosts through the proxy: its connections cannot be
/// told from other commands', so a yes would open them for whoever connects — or, as before
/// this refusal, be dropped while the process kept `[network] allow`'s hosts (rev6 F1). The
/// call is refused before it is decided or asked about; the same escalation in the
/// foreground is decided as usual (denied here: nobody can be asked).
#[test]
fn a_background_process_cannot_escalate_for_hosts_through_the_proxy() {
    use super::escalate::escalated;
    let (sandbox, tmp, _) = dirs();
    if !available(&sandbox) || !auto_applies(&sandbox, &tmp) {
        return;
    }
    sandbox.settings(
        "[network]\nmode = \"allowlist\"\nallow = [\"allowed.test\"]\n\
         hosts = { \"esc.test\" = \"127.0.0.1:9\" }\n",
    );
    let asked = serde_json::json!({"network": ["esc.test"], "reason": "fetch the fixture"});
    let arguments = serde_json::json!({
        "command": "sleep 30",
        "description": "serve",
        "background": true,
        "escalate": asked,
    });
    let background = Turn::default().with_call("bg_esc", "shell", &arguments.to_string());
    let server =
        FakeModel::openai_turns([background, escalated("sleep 0", asked), turn_text("done")]);
    let (events, _) = ci_run(&sandbox, &tmp, &server, &[]);
    let refused = last_result(&server, 1);
    assert!(
        refused.contains("EINVAL") && refused.contains("cannot be given to a background process"),
        "{refused}"
    );
    assert!(!refused.contains("\"background\""), "{refused}");
    // Only the foreground call was decided.
    assert_eq!(
        verdicts(&of_type(&events, "decision")),
        [("deny", "no_terminal")],
        "{events:?}"
    );
}
