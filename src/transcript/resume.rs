//! Rebuilding a run's conversation from its transcript, for `run --continue` / `--resume ID`:
//! the prompts (`start`, `continue`), each turn's text (its `text_delta`s), tool calls and
//! provider replay data (its `turn_end`), and the results sent back (`tool_result`). Reading
//! stops at the first line that does not parse (a cut last line, garbage); a turn counts only
//! once its `turn_end` was recorded. What could not be rebuilt is said in a note. Finding the
//! transcript to continue is here too; running anything is not.

use std::collections::HashMap;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::model::{Message, Reasoning, ToolCall};

/// A conversation rebuilt from a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebuilt {
    /// The messages, oldest first, ending with a complete turn (or a prompt).
    pub messages: Vec<Message>,
    /// Complete model turns in `messages`.
    pub turns: u32,
    /// What was left out or guessed, for the person and the `continue` marker.
    pub note: Option<String>,
    /// The person's `!command`s (`user_command`), in order: what the model was told of
    /// each, already in the message it went with, or in `waiting`.
    pub typed: Vec<Typed>,
    /// What the model is still to be told with the next message: `!command`s run and
    /// `/undo`s made after the last message was sent.
    pub waiting: Vec<String>,
}

/// A command the person ran themselves, as a rebuilt conversation carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed {
    /// The command as typed.
    pub command: String,
    /// What the model is told of it ([`crate::agent::typed_note`]).
    pub note: String,
}

/// The prompt of the part being read while none of its turns has finished: where it is,
/// the person's words and the notes recorded with it.
struct Unanswered {
    at: usize,
    words: String,
    notes: Vec<String>,
}

pub use crate::model::repair::summary_message;

/// The wire format a `provider/model` string speaks: reasoning and call data recorded on one
/// wire mean nothing on another.
fn wire(model: &str) -> &str {
    match model.split('/').next().unwrap_or_default() {
        "anthropic" => "anthropic",
        "demo" => "demo",
        _ => "openai",
    }
}

/// The content sent to the model for a recorded `tool_result` (as `agent::tool` builds it).
fn result_content(event: &Value) -> String {
    // A file tool's or an MCP tool's result: the text the model got, or its error.
    if event["tool"].is_string() {
        return match event["content"].as_str() {
            Some(content) => content.to_owned(),
            None => json!({"error": event["error"]}).to_string(),
        };
    }
    let result = &event["result"];
    if !result.is_object() {
        return json!({"error": event["error"]}).to_string();
    }
    let mut content = json!({
        "exit_code": result["exit_code"],
        "stdout": result["stdout"],
        "stderr": result["stderr"],
        "duration_ms": result["duration_ms"],
        "timed_out": result["timed_out"],
        "truncated": result["truncated"],
    });
    if !result["error"].is_null() {
        content["error"] = result["error"].clone();
    }
    if result["sandbox_denied"] == true {
        content["sandbox_denied"] = json!(true);
        content["sandbox_note"] = result["sandbox_note"].clone();
    }
    content.to_string()
}

/// A turn whose `turn_end` came, waiting for its results.
struct Pending {
    text: String,
    calls: Vec<ToolCall>,
    replay: Vec<Value>,
    results: HashMap<String, String>,
    /// Recorded before `turn_end` carried the calls: they are rebuilt from `tool_call` events.
    older: bool,
    /// Calls the output limit cut off (dropped from `calls`): the model is told.
    cut: usize,
}

impl Pending {
    /// The turn a `turn_end` event records, its text `text`; reasoning and call data kept
    /// only when it ran on the `same_wire`.
    fn from_turn_end(event: &Value, text: String, same_wire: bool) -> Self {
        let recorded = event
            .get("tool_calls")
            .and_then(|calls| serde_json::from_value::<Vec<ToolCall>>(calls.clone()).ok());
        let older = recorded.is_none();
        let mut calls = recorded.unwrap_or_default();
        let mut replay: Vec<Value> = event["replay"].as_array().cloned().unwrap_or_default();
        if !same_wire {
            replay.clear();
            for call in &mut calls {
                call.extra = None;
            }
        }
        Self {
            text,
            calls,
            replay,
            results: HashMap::new(),
            older,
            cut: event["cut_calls"]
                .as_u64()
                .and_then(|cut| usize::try_from(cut).ok())
                .unwrap_or(0),
        }
    }
}

impl Unanswered {
    /// Adds a part's `prompt`, with the `!command`s run since the last message.
    fn push(prompt: &str, rebuilt: &mut Rebuilt) -> Self {
        let notes = std::mem::take(&mut rebuilt.waiting);
        let at = rebuilt.messages.len();
        let sent = crate::agent::with_notes(&notes, prompt);
        rebuilt.messages.push(Message::User(sent));
        Self {
            at,
            words: prompt.to_owned(),
            notes,
        }
    }
}

/// A `user_command`: its note goes with the message as [`noted`] says.
fn typed_command(event: &Value, rebuilt: &mut Rebuilt, unanswered: Option<&mut Unanswered>) {
    let command = event["command"].as_str().unwrap_or_default().to_owned();
    let note = crate::agent::typed_note(&command, &result_content(event));
    rebuilt.typed.push(Typed {
        command,
        note: note.clone(),
    });
    noted(note, rebuilt, unanswered);
}

/// A note for the model (a `user_command`'s, a `model_note`): it goes with the message of the
/// part it is recorded in while none of that part's turns has finished (it was recorded with
/// the part's opening, made before the session had a transcript), else it waits for the
/// next message.
fn noted(note: String, rebuilt: &mut Rebuilt, unanswered: Option<&mut Unanswered>) {
    match unanswered {
        Some(part) => {
            part.notes.push(note);
            rebuilt.messages[part.at] =
                Message::User(crate::agent::with_notes(&part.notes, &part.words));
        }
        None => rebuilt.waiting.push(note),
    }
}

/// The arguments of an older transcript's `tool_call` event, as the model most likely sent
/// them.
fn older_call(event: &Value) -> ToolCall {
    let arguments = match event["arguments"].as_str() {
        Some(raw) => raw.to_owned(),
        None => {
            let mut arguments = json!({
                "command": event["command"],
                "description": event["description"],
            });
            if let Some(dir) = event["working_directory"].as_str() {
                arguments["working_directory"] = json!(dir);
            }
            arguments.to_string()
        }
    };
    ToolCall {
        id: event["id"].as_str().unwrap_or_default().to_owned(),
        name: crate::agent::SHELL.to_owned(),
        arguments,
        extra: None,
    }
}

/// The conversation in transcript `text`, to be sent to a model described as `model`
/// (`provider/model`).
#[must_use]
pub fn rebuild(text: &str, model: &str) -> Rebuilt {
    let mut rebuilt = Rebuilt {
        messages: Vec::new(),
        turns: 0,
        note: None,
        typed: Vec::new(),
        waiting: Vec::new(),
    };
    let mut notes: Vec<String> = Vec::new();
    let mut text_buf = String::new();
    let mut pending: Option<Pending> = None;
    let mut same_wire = true;
    let mut older = false;
    let mut other_wire = false;
    // This part's prompt, while none of its turns has finished.
    let mut unanswered: Option<Unanswered> = None;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            let what = if line.ends_with('\n') {
                "is unreadable"
            } else {
                "was cut"
            };
            notes.push(format!(
                "line {} of the transcript {what}: continuing after the last complete turn \
                 before it",
                number + 1
            ));
            break;
        };
        match event["type"].as_str().unwrap_or_default() {
            "start" | "continue" => {
                finish(&mut pending, &mut rebuilt);
                text_buf.clear();
                same_wire = wire(event["model"].as_str().unwrap_or_default()) == wire(model);
                other_wire |= !same_wire;
                unanswered = event["prompt"]
                    .as_str()
                    .map(|prompt| Unanswered::push(prompt, &mut rebuilt));
            }
            "user_command" => typed_command(&event, &mut rebuilt, unanswered.as_mut()),
            "model_note" => {
                if let Some(note) = event["note"].as_str() {
                    noted(note.to_owned(), &mut rebuilt, unanswered.as_mut());
                }
            }
            "text_delta" => text_buf.push_str(event["text"].as_str().unwrap_or_default()),
            "turn_end" => {
                finish(&mut pending, &mut rebuilt);
                unanswered = None;
                let turn = Pending::from_turn_end(&event, std::mem::take(&mut text_buf), same_wire);
                older |= turn.older;
                pending = Some(turn);
            }
            "tool_call" => {
                if let Some(turn) = pending.as_mut().filter(|turn| turn.older) {
                    turn.calls.push(older_call(&event));
                }
            }
            // An MCP call's result too: what the model got (or the error) is what it gets
            // back — never "not run", which would invite it to repeat a call that acted.
            "tool_result" | "mcp_result" => {
                if let (Some(turn), Some(id)) = (pending.as_mut(), event["id"].as_str()) {
                    turn.results.insert(id.to_owned(), result_content(&event));
                }
            }
            kind @ ("done" | "compacted") => {
                finish(&mut pending, &mut rebuilt);
                text_buf.clear();
                if kind == "compacted" {
                    rebuilt.messages = compacted(&event);
                    unanswered = None;
                }
                // A part that failed before any of its turns finished leaves no prompt behind
                // for the next one to repeat.
                if let Some(part) = unanswered.take().filter(|_| event["outcome"] == "error") {
                    rebuilt.messages.truncate(part.at);
                }
            }
            _ => {}
        }
    }
    finish(&mut pending, &mut rebuilt);
    notes.extend(crate::model::repair::repair(&mut rebuilt.messages));
    if older {
        notes.push(
            "part of it was recorded by an older agent: its tool calls are rebuilt from their \
             commands and its reasoning is not sent back"
                .to_owned(),
        );
    }
    if other_wire {
        notes.push("part of it ran on another provider: its reasoning is not sent back".to_owned());
    }
    rebuilt.note = (!notes.is_empty()).then(|| notes.join("; "));
    rebuilt
}

/// What a `compacted` event leaves of the conversation: its summary, or nothing (`/clear`).
fn compacted(event: &Value) -> Vec<Message> {
    event["summary"]
        .as_str()
        .map(summary_message)
        .into_iter()
        .collect()
}

/// Adds the pending turn, with a result for every call (recorded, or "not run").
fn finish(pending: &mut Option<Pending>, rebuilt: &mut Rebuilt) {
    let Some(mut turn) = pending.take() else {
        return;
    };
    rebuilt.messages.push(Message::Assistant {
        text: turn.text,
        tool_calls: turn.calls.clone(),
        reasoning: Reasoning {
            text: String::new(),
            replay: turn.replay,
        },
    });
    for call in turn.calls {
        let content = turn
            .results
            .remove(&call.id)
            .unwrap_or_else(crate::model::repair::not_run_result);
        rebuilt.messages.push(Message::ToolResult {
            call_id: call.id,
            content,
        });
    }
    if turn.cut > 0 {
        rebuilt
            .messages
            .push(crate::model::repair::cut_calls_note(turn.cut));
    }
    rebuilt.turns += 1;
}

/// The transcript in `runs_dir` written to last whose run started in `workspace`.
///
/// # Errors
/// When `runs_dir` exists but cannot be read.
pub fn latest_in(runs_dir: &Path, workspace: &str) -> std::io::Result<Option<PathBuf>> {
    let mut paths: Vec<(std::time::SystemTime, PathBuf)> =
        super::history::transcript_paths(runs_dir)?
            .into_iter()
            .map(|path| {
                let modified = std::fs::metadata(&path)
                    .and_then(|meta| meta.modified())
                    .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
                (modified, path)
            })
            .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .rev()
        .map(|(_, path)| path)
        .find(|path| started_in(path, workspace)))
}

/// Whether the transcript's first event is a `start` in `workspace`.
fn started_in(path: &Path, workspace: &str) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<Value>(&first)
        .is_ok_and(|event| event["type"] == "start" && event["cwd"] == workspace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const RUN: &str = r#"{"type":"start","id":"r","prompt":"list","model":"anthropic/m","cwd":"/w"}
{"type":"reasoning_delta","text":"hm"}
{"type":"text_delta","text":"Let me "}
{"type":"text_delta","text":"look."}
{"type":"turn_end","turn":1,"tool_calls":[{"id":"t1","name":"shell","arguments":"{\"command\":\"ls\"}"}],"replay":[{"type":"thinking","thinking":"hm","signature":"s"}]}
{"type":"tool_call","id":"t1","command":"ls","description":"d"}
{"type":"tool_result","id":"t1","command":"ls","result":{"exit_code":0,"stdout":"a\n","stderr":"","duration_ms":3,"timed_out":false,"truncated":false,"error":null}}
{"type":"text_delta","text":"One file."}
{"type":"turn_end","turn":2,"tool_calls":[]}
{"type":"done","outcome":"answered","turns":2,"commands_run":1,"commands_denied":0}
"#;

    fn assistant(text: &str, calls: Vec<ToolCall>, replay: Vec<Value>) -> Message {
        Message::Assistant {
            text: text.into(),
            tool_calls: calls,
            reasoning: Reasoning {
                text: String::new(),
                replay,
            },
        }
    }

    fn ls() -> ToolCall {
        ToolCall {
            id: "t1".into(),
            name: "shell".into(),
            arguments: r#"{"command":"ls"}"#.into(),
            extra: None,
        }
    }

    #[test]
    fn a_whole_run_comes_back_with_its_replay_data() {
        let rebuilt = rebuild(RUN, "anthropic/m");
        assert_eq!(
            rebuilt.messages,
            vec![
                Message::User("list".into()),
                assistant(
                    "Let me look.",
                    vec![ls()],
                    vec![json!({"type":"thinking","thinking":"hm","signature":"s"})]
                ),
                Message::ToolResult {
                    call_id: "t1".into(),
                    content: r#"{"duration_ms":3,"exit_code":0,"stderr":"","stdout":"a\n","timed_out":false,"truncated":false}"#.into(),
                },
                assistant("One file.", vec![], vec![]),
            ]
        );
        assert_eq!((rebuilt.turns, rebuilt.note), (2, None));
        // On the other wire the thinking blocks mean nothing.
        let other = rebuild(RUN, "openai/gpt");
        assert_eq!(
            other.messages[1],
            assistant("Let me look.", vec![ls()], vec![])
        );
        assert!(other.note.unwrap().contains("another provider"));
    }

    #[test]
    fn an_mcp_calls_result_comes_back_as_the_model_got_it() {
        let run = |result: &str| {
            format!(
                r#"{{"type":"start","id":"r","prompt":"go","model":"openai/m","cwd":"/w"}}
{{"type":"turn_end","turn":1,"tool_calls":[{{"id":"m1","name":"mcp__srv__echo","arguments":"{{}}"}}]}}
{{"type":"mcp_call","id":"m1","server":"srv","tool":"echo","arguments":{{}}}}
{result}
{{"type":"turn_end","turn":2,"tool_calls":[]}}
{{"type":"done","outcome":"answered","turns":2,"commands_run":0,"commands_denied":0}}
"#
            )
        };
        let got = |result: &str| {
            let rebuilt = rebuild(&run(result), "openai/m");
            match &rebuilt.messages[2] {
                Message::ToolResult { call_id, content } => {
                    assert_eq!(call_id, "m1");
                    content.clone()
                }
                other => panic!("{other:?}"),
            }
        };
        let ok = r#"{"type":"mcp_result","id":"m1","server":"srv","tool":"echo","duration_ms":3,"chars":8,"truncated":false,"is_error":false,"content":"echo: hi"}"#;
        assert_eq!(got(ok), "echo: hi");
        let failed = r#"{"type":"mcp_result","id":"m1","server":"srv","tool":"echo","duration_ms":0,"truncated":false,"is_error":false,"error":{"code":"denied","message":"no"}}"#;
        assert_eq!(got(failed), r#"{"error":{"code":"denied","message":"no"}}"#);
    }

    #[test]
    fn a_cut_transcript_resumes_after_the_last_complete_turn() {
        let cut = &RUN[..RUN.find("{\"type\":\"turn_end\",\"turn\":2").unwrap() + 12];
        let rebuilt = rebuild(cut, "anthropic/m");
        assert_eq!(rebuilt.turns, 1);
        assert_eq!(rebuilt.messages.len(), 3);
        assert_eq!(
            rebuilt.note.as_deref(),
            Some(
                "line 9 of the transcript was cut: continuing after the last complete turn before it"
            )
        );
        // A call whose result never came gets one saying so.
        let no_result = &RUN[..RUN.find("{\"type\":\"tool_call\"").unwrap()];
        let rebuilt = rebuild(no_result, "anthropic/m");
        let Message::ToolResult { content, .. } = &rebuilt.messages[2] else {
            panic!("{:?}", rebuilt.messages);
        };
        assert!(content.contains("was not run"), "{content}");
    }

    #[test]
    fn an_older_transcript_rebuilds_calls_from_their_commands() {
        let older = RUN
            .replace(r#","tool_calls":[{"id":"t1","name":"shell","arguments":"{\"command\":\"ls\"}"}],"replay":[{"type":"thinking","thinking":"hm","signature":"s"}]"#, "")
            .replace(r#","tool_calls":[]"#, "");
        let rebuilt = rebuild(&older, "anthropic/m");
        let Message::Assistant { tool_calls, .. } = &rebuilt.messages[1] else {
            panic!();
        };
        assert_eq!(
            tool_calls[0].arguments,
            r#"{"command":"ls","description":"d"}"#
        );
        assert_eq!(rebuilt.turns, 2);
        assert!(rebuilt.note.unwrap().contains("older agent"));
    }

    #[test]
    fn a_typed_command_goes_with_the_message_after_it_or_waits_for_the_next() {
        let typed = |command: &str, stdout: &str| {
            format!(
                r#"{{"type":"user_command","id":"typed-0","command":"{command}","result":{{"exit_code":0,"stdout":"{stdout}","stderr":"","duration_ms":1,"timed_out":false,"truncated":false,"error":null}}}}"#
            )
        };
        let note = |command: &str, stdout: &str| {
            crate::agent::typed_note(
                command,
                &format!(
                    r#"{{"duration_ms":1,"exit_code":0,"stderr":"","stdout":"{stdout}","timed_out":false,"truncated":false}}"#
                ),
            )
        };
        let answered = |turn: u32| {
            format!(
                "{{\"type\":\"turn_end\",\"turn\":{turn},\"tool_calls\":[]}}\n{{\"type\":\"done\",\"outcome\":\"answered\"}}"
            )
        };
        // Run before the first message: recorded just after its `start`.
        let text = [
            r#"{"type":"start","id":"r","prompt":"first","model":"openai/m","cwd":"/w"}"#
                .to_owned(),
            typed("ls", "a"),
            typed("pwd", "/w"),
            answered(1),
            // Run between messages: goes with the next one.
            typed("date", "today"),
            r#"{"type":"continue","id":"r","prompt":"second","model":"openai/m","cwd":"/w"}"#
                .to_owned(),
            answered(1),
            // Run after the last message: waits for the next.
            typed("make", "built"),
        ]
        .join("\n");
        let rebuilt = rebuild(&text, "openai/m");
        let words: Vec<String> = rebuilt
            .messages
            .iter()
            .filter_map(|message| match message {
                Message::User(text) => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            words,
            vec![
                format!("{}\n{}\n\nfirst", note("ls", "a"), note("pwd", "/w")),
                format!("{}\n\nsecond", note("date", "today")),
            ]
        );
        assert_eq!(rebuilt.waiting, vec![note("make", "built")]);
        let commands: Vec<&str> = rebuilt.typed.iter().map(|t| t.command.as_str()).collect();
        assert_eq!(commands, ["ls", "pwd", "date", "make"]);
        assert_eq!((rebuilt.turns, rebuilt.note), (2, None));
        // A transcript without any reads as before.
        assert!(rebuild(RUN, "anthropic/m").typed.is_empty());
    }

    /// A `/undo`'s note (`model_note`) goes as a `!command`'s does: with the next message when
    /// one came after it, else it waits for the next; several keep their order.
    #[test]
    fn an_undos_note_goes_with_the_next_message_or_waits_for_it() {
        let noted = |note: &str| format!(r#"{{"type":"model_note","note":"{note}"}}"#);
        let end = "{\"type\":\"turn_end\",\"turn\":1,\"tool_calls\":[]}\n\
                   {\"type\":\"done\",\"outcome\":\"answered\"}";
        let text = [
            r#"{"type":"start","id":"r","prompt":"first","model":"openai/m","cwd":"/w"}"#
                .to_owned(),
            end.to_owned(),
            noted("[undone a]"),
            r#"{"type":"continue","id":"r","prompt":"second","model":"openai/m","cwd":"/w"}"#
                .to_owned(),
            end.to_owned(),
            noted("[undone b]"),
            noted("[undone c]"),
        ]
        .join("\n");
        let rebuilt = rebuild(&text, "openai/m");
        let words: Vec<&str> = rebuilt
            .messages
            .iter()
            .filter_map(|message| match message {
                Message::User(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(words, ["first", "[undone a]\n\nsecond"]);
        assert_eq!(rebuilt.waiting, ["[undone b]", "[undone c]"]);
        assert!(rebuilt.typed.is_empty());
    }
}
