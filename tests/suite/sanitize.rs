//! Escape sequences from a model or a command never reach a terminal raw:
//! plain progress lines (`-v`), `agent history` — while an answer redirected
//! to a file, `--json` and `history show --json` stay byte-exact.

use super::fake_model::{FakeModel, turn_text, turn_tool_call};
use super::harness::{KEY, Sandbox};
use pretty_assertions::assert_eq;

const OSC_52: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}";
const TITLE: &str = "\u{1b}]0;PWNED\u{1b}\\";
const CLEAR: &str = "\u{1b}[2J\u{1b}[H";
const HIDDEN: &str = "\u{1b}[8mhidden\u{1b}[0m";

/// Prints colour, a clipboard write and a screen clear.
const PRINTS_ESCAPES: &str = r"printf '\033[31mred\033[0m \033]52;c;eA==\007 \033[2J end\n'";

fn scripted() -> FakeModel {
    FakeModel::openai_turns([
        turn_tool_call(PRINTS_ESCAPES, &format!("print{TITLE} colours{HIDDEN}"))
            .with_text(&format!("looking{OSC_52}\u{202e} around\n")),
        turn_text(&format!("answer {OSC_52}{CLEAR}{HIDDEN}\u{200b} end")),
    ])
}

fn run(sandbox: &Sandbox, server: &FakeModel, flags: &[&str]) -> std::process::Output {
    sandbox
        .agent()
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "--provider", "openai", "--base-url"])
        .arg(server.openai_url())
        .args(["--mode", "allow-all"])
        .args(flags)
        .arg("look around")
        .output()
        .unwrap()
}

#[test]
fn plain_progress_shows_escapes_and_strips_colour_from_output() {
    let sandbox = Sandbox::new();
    let server = scripted();
    let output = run(&sandbox, &server, &["--plain", "-v"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "a raw escape reached stderr:\n{stderr:?}"
    );
    for shown in [
        "looking\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{202e} around",
        "(print\\u{1b}]0;PWNED\\u{1b}\\ colours\\u{1b}[8mhidden\\u{1b}[0m)",
        "red \\u{1b}]52;c;eA==\\u{7} \\u{1b}[2J end",
        "→ printf '\\033[31mred",
    ] {
        assert!(stderr.contains(shown), "`{shown}` not in:\n{stderr}");
    }
    assert!(
        !stderr.contains("\\u{1b}[31m") && !stderr.contains("\\u{1b}[0m \\u{1b}]52"),
        "colour shown as noise:\n{stderr}"
    );
}

#[test]
fn the_answer_redirected_and_json_events_stay_byte_exact() {
    let sandbox = Sandbox::new();
    let server = scripted();
    let output = run(&sandbox, &server, &["--plain"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("answer {OSC_52}{CLEAR}{HIDDEN}\u{200b} end\n")
    );

    let server = scripted();
    let output = run(&sandbox, &server, &["--json"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let done = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|event| event["type"] == "done")
        .unwrap();
    assert_eq!(
        done["answer"],
        format!("answer {OSC_52}{CLEAR}{HIDDEN}\u{200b} end")
    );
}

#[test]
fn history_shows_escapes_and_json_keeps_the_transcript_exact() {
    let sandbox = Sandbox::new();
    let server = scripted();
    assert!(run(&sandbox, &server, &["--plain"]).status.success());
    let list = sandbox
        .agent()
        .args(["history", "--json"])
        .output()
        .unwrap();
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();

    let show = sandbox
        .agent()
        .args(["history", "show", &id])
        .output()
        .unwrap();
    assert!(show.status.success(), "{show:?}");
    let text = String::from_utf8(show.stdout).unwrap();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
        "a raw escape in history show:\n{text:?}"
    );
    for shown in [
        "looking\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{202e} around",
        "# print\\u{1b}]0;PWNED\\u{1b}\\ colours\\u{1b}[8mhidden\\u{1b}[0m",
        "answer \\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\\u{1b}[2J\\u{1b}[H",
    ] {
        assert!(text.contains(shown), "`{shown}` not in:\n{text}");
    }

    let json = sandbox
        .agent()
        .args(["history", "show", &id, "--json"])
        .output()
        .unwrap();
    let events: Vec<serde_json::Value> = String::from_utf8(json.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let done = events.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(
        done["answer"],
        format!("answer {OSC_52}{CLEAR}{HIDDEN}\u{200b} end")
    );
}

#[test]
fn selectors_and_format_controls_are_shown_while_emoji_and_scripts_stay() {
    let sandbox = Sandbox::new();
    // A variation selector (U+FE0F) after ASCII and an Egyptian format control hide in the
    // command; the emoji with ZWJ and the accented and CJK text are what a person reads.
    let command = "echo ok\u{fe0f}\u{13430} # 👩\u{200d}💻 café 日本";
    let server = FakeModel::openai_turns([
        turn_tool_call(command, "say \u{e0100}ok"),
        turn_text("done ❤\u{fe0f} x\u{1d173}"),
    ]);
    let output = run(&sandbox, &server, &["--plain", "-v"]);
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    for shown in [
        "echo ok\\u{fe0f}\\u{13430} # 👩\u{200d}💻 café 日本",
        "say \\u{e0100}ok",
    ] {
        assert!(stderr.contains(shown), "`{shown}` not in:\n{stderr}");
    }
    let show = |args: &[&str]| {
        let output = sandbox.agent().args(args).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let list: serde_json::Value = serde_json::from_str(&show(&["history", "--json"])).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();
    let text = show(&["history", "show", &id]);
    assert!(text.contains("done ❤\u{fe0f} x\\u{1d173}"), "{text}");
}
