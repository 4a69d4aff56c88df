//! The offline demo model: no key, no network, deterministic. It matches the last thing the
//! person asked against the plans in `assets/demo-plans.toml`, asks for one tool call per
//! turn (a shell command, or a file tool: `list_files`, `read_file`, `search`), and once the
//! results are back writes a short answer quoting them — or says honestly what it is and how
//! to configure a real model. Plans are data; this file only follows them.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Delta, Message, Model, ModelError, Reasoning, Reply, Request, StopReason, ToolCall};

/// The plans, compiled in.
const PLANS_TOML: &str = include_str!("../../assets/demo-plans.toml");
/// The tool a step calls when it names a command.
const SHELL_TOOL: &str = "shell";
/// Output lines quoted in an answer — enough to show the gist, short enough for a screen.
const QUOTED_LINES: usize = 20;
/// Pieces the demo's text is streamed in — more than one, so the streaming path is used.
const TEXT_CHUNKS: usize = 3;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Plans {
    unknown: String,
    no_shell: String,
    plan: Vec<Plan>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Plan {
    summary: String,
    keywords: Vec<String>,
    say: String,
    done: String,
    step: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    unix: Option<String>,
    windows: Option<String>,
    /// A file tool instead of a command, with its arguments.
    tool: Option<String>,
    arguments: Option<Value>,
    description: String,
    say: Option<String>,
    none: Option<String>,
    #[serde(default)]
    pick: Vec<Pick>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pick {
    found: String,
    command: Option<String>,
    tool: Option<String>,
    arguments: Option<Value>,
}

/// The offline demo model.
#[derive(Debug)]
pub struct Demo {
    windows: bool,
    /// The parsed plans, or why they did not parse (a bug: the file is compiled in).
    plans: Result<Plans, String>,
}

/// What one step asks for: a shell command (`tool` is `shell`) or a file tool's call.
struct Call {
    tool: String,
    /// The command, or how the file call is named in the text (`list_files`).
    command: String,
    arguments: Value,
    text: String,
}

impl Call {
    fn new(
        tool: Option<&str>,
        command: String,
        arguments: Option<&Value>,
        description: &str,
    ) -> Self {
        let tool = tool.unwrap_or(SHELL_TOOL).to_owned();
        let arguments = if tool == SHELL_TOOL {
            json!({"command": command, "description": description})
        } else {
            arguments.cloned().unwrap_or_else(|| json!({}))
        };
        Self {
            tool,
            command,
            arguments,
            text: String::new(),
        }
    }
}

impl Demo {
    /// A demo planning commands for Windows (`cmd.exe`) or for Unix (`sh`).
    #[must_use]
    pub fn new(os_is_windows: bool) -> Self {
        let plans = toml::from_str(PLANS_TOML).map_err(|e| format!("demo-plans.toml: {e}"));
        Self {
            windows: os_is_windows,
            plans,
        }
    }

    /// The reply to `request`, without streaming.
    fn reply(&self, request: &Request<'_>) -> Result<Reply, ModelError> {
        let plans = self
            .plans
            .as_ref()
            .map_err(|e| ModelError::Internal { message: e.clone() })?;
        let last_user = request
            .messages
            .iter()
            .rposition(|m| matches!(m, Message::User(_)));
        let plan = last_user.and_then(|i| match &request.messages[i] {
            Message::User(text) => find_plan(plans, text),
            Message::Assistant { .. } | Message::ToolResult { .. } => None,
        });
        let (Some(plan), Some(start)) = (plan, last_user) else {
            let capabilities: Vec<&str> = plans.plan.iter().map(|p| p.summary.as_str()).collect();
            return Ok(text_reply(
                plans
                    .unknown
                    .replace("{capabilities}", &capabilities.join(", ")),
            ));
        };
        let results = results_since(&request.messages[start..]);
        let Some((command, content, file_tool)) = results.last() else {
            let call = self.first_call(plan)?;
            if !request.tools.iter().any(|tool| tool.name == call.tool) {
                return Ok(text_reply(
                    plans.no_shell.replace("{command}", &call.command),
                ));
            }
            return Ok(Self::call_reply(request, call));
        };
        let outcome = Outcome::parse(content, *file_tool);
        let went_well = match &outcome {
            Outcome::Ran {
                exit_code: 0,
                stdout,
                ..
            }
            | Outcome::Text(stdout) => Some(stdout),
            _ => None,
        };
        match (went_well, plan.step.get(results.len())) {
            (Some(stdout), Some(step)) => match self.next_call(step, stdout) {
                Some(call) => Ok(Self::call_reply(request, call)),
                None => Ok(text_reply(step.none.clone().unwrap_or_default())),
            },
            _ => Ok(text_reply(outcome.answer(command, &plan.done))),
        }
    }

    fn first_call(&self, plan: &Plan) -> Result<Call, ModelError> {
        let step = plan.step.first().ok_or_else(|| ModelError::Internal {
            message: format!("demo plan `{}` has no steps", plan.summary),
        })?;
        let command = self
            .command(step)
            .or_else(|| step.tool.clone())
            .ok_or_else(|| ModelError::Internal {
                message: format!(
                    "the first step of demo plan `{}` has no command or tool",
                    plan.summary
                ),
            })?;
        let mut call = Call::new(
            step.tool.as_deref(),
            command,
            step.arguments.as_ref(),
            &step.description,
        );
        call.text = plan.say.replace("{command}", &call.command);
        Ok(call)
    }

    /// The step's command, or the first pick whose word is in `previous` output.
    fn next_call(&self, step: &Step, previous: &str) -> Option<Call> {
        let say = step.say.as_deref().unwrap_or("I'll run `{command}`.");
        if let Some(command) = self.command(step).or_else(|| step.tool.clone()) {
            let mut call = Call::new(
                step.tool.as_deref(),
                command,
                step.arguments.as_ref(),
                &step.description,
            );
            call.text = say.replace("{command}", &call.command);
            return Some(call);
        }
        let pick = step.pick.iter().find(|pick| {
            previous
                .split_whitespace()
                .any(|w| w == pick.found || w.rsplit('/').next() == Some(pick.found.as_str()))
        })?;
        let command = pick.command.clone().or_else(|| pick.tool.clone())?;
        let mut call = Call::new(
            pick.tool.as_deref(),
            command,
            pick.arguments.as_ref(),
            &step.description,
        );
        call.text = say
            .replace("{found}", &pick.found)
            .replace("{command}", &call.command);
        Some(call)
    }

    fn command(&self, step: &Step) -> Option<String> {
        if self.windows {
            step.windows.clone().or_else(|| step.unix.clone())
        } else {
            step.unix.clone()
        }
    }

    fn call_reply(request: &Request<'_>, call: Call) -> Reply {
        let earlier = request
            .messages
            .iter()
            .map(|m| match m {
                Message::Assistant { tool_calls, .. } => tool_calls.len(),
                Message::User(_) | Message::ToolResult { .. } => 0,
            })
            .sum::<usize>();
        Reply {
            text: call.text,
            tool_calls: vec![ToolCall {
                id: format!("demo-{}", earlier + 1),
                name: call.tool,
                arguments: call.arguments.to_string(),
                extra: None,
            }],
            stop: StopReason::ToolUse,
            reasoning: Reasoning::default(),
            usage: None,
        }
    }
}

impl Model for Demo {
    fn describe(&self) -> String {
        "demo/demo".to_owned()
    }

    async fn complete(
        &mut self,
        request: &Request<'_>,
        on_delta: &mut (dyn FnMut(Delta<'_>) + Send),
    ) -> Result<Reply, ModelError> {
        let reply = self.reply(request)?;
        for piece in chunks(&reply.text, TEXT_CHUNKS) {
            on_delta(Delta::Text(piece));
            tokio::task::yield_now().await;
        }
        Ok(reply)
    }
}

fn text_reply(text: String) -> Reply {
    Reply {
        text,
        tool_calls: Vec::new(),
        stop: StopReason::EndTurn,
        reasoning: Reasoning::default(),
        usage: None,
    }
}

/// The first plan with a keyword in `text`, compared as whole lower-case words.
fn find_plan<'p>(plans: &'p Plans, text: &str) -> Option<&'p Plan> {
    let words = |s: &str| {
        let spaced: String = s
            .chars()
            .map(|c| {
                if c.is_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    ' '
                }
            })
            .collect();
        format!(
            " {} ",
            spaced.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    };
    let asked = words(text);
    plans
        .plan
        .iter()
        .find(|plan| plan.keywords.iter().any(|k| asked.contains(&words(k))))
}

/// The (command, result, whether a file tool made it) of the tool calls in `messages`, in
/// order; a file tool's call is named by its tool and path (`read_file README.md`).
fn results_since(messages: &[Message]) -> Vec<(String, String, bool)> {
    let command_of = |call_id: &str| {
        messages.iter().find_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls.iter().find(|c| c.id == call_id),
            Message::User(_) | Message::ToolResult { .. } => None,
        })
    };
    messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult { call_id, content } => {
                let call = command_of(call_id);
                let file_tool = call.is_some_and(|c| c.name != SHELL_TOOL);
                let arguments = call.and_then(|c| serde_json::from_str::<Value>(&c.arguments).ok());
                let command = if file_tool {
                    let name = call.map(|c| c.name.clone()).unwrap_or_default();
                    match arguments
                        .as_ref()
                        .and_then(|v| v.get("path"))
                        .and_then(Value::as_str)
                    {
                        Some(path) => format!("{name} {path}"),
                        None => name,
                    }
                } else {
                    arguments
                        .as_ref()
                        .and_then(|v| v.get("command").and_then(Value::as_str).map(str::to_owned))
                        .unwrap_or_else(|| "the command".to_owned())
                };
                Some((command, content.clone(), file_tool))
            }
            Message::User(_) | Message::Assistant { .. } => None,
        })
        .collect()
}

/// A tool result as the demo understands it.
enum Outcome {
    Ran {
        exit_code: i64,
        stdout: String,
        stderr: String,
        timed_out: bool,
    },
    Failed {
        code: String,
        message: String,
    },
    /// A file tool's text.
    Text(String),
    Unreadable(String),
}

impl Outcome {
    /// Reads `{"exit_code", "stdout", …}`, `{"error": {"code", "message"}}` or
    /// `{"code", "message"}`.
    fn parse(content: &str, file_tool: bool) -> Self {
        let Ok(value) = serde_json::from_str::<Value>(content) else {
            if file_tool {
                return Self::Text(content.to_owned());
            }
            return Self::Unreadable(content.to_owned());
        };
        if file_tool && value.get("error").is_none() {
            return Self::Text(content.to_owned());
        }
        let text =
            |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
        let error = value
            .get("error")
            .filter(|e| e.is_object())
            .unwrap_or(&value);
        if error.get("code").is_some_and(Value::is_string) && value.get("exit_code").is_none() {
            return Self::Failed {
                code: text(error, "code"),
                message: text(error, "message"),
            };
        }
        match value.get("exit_code").and_then(Value::as_i64) {
            Some(exit_code) => Self::Ran {
                exit_code,
                stdout: text(&value, "stdout"),
                stderr: text(&value, "stderr"),
                timed_out: value
                    .get("timed_out")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            None => Self::Unreadable(content.to_owned()),
        }
    }

    /// The final answer about running `command`, led by `done` when it went well.
    fn answer(&self, command: &str, done: &str) -> String {
        match self {
            Self::Failed { code, message } => {
                match (code.as_str(), message.trim_end_matches('.')) {
                    ("EDENIED", message) => {
                        // The advice to the model is not for the person reading the answer.
                        let message = message.split(". Do not retry").next().unwrap_or(message);
                        format!("The command `{command}` was not run. {message}.")
                    }
                    ("ETIMEDOUT", message) => {
                        format!("The command `{command}` timed out: {message}.")
                    }
                    ("ETOOL_DISABLED", message) => format!("I can't run commands here: {message}."),
                    (_, message) => {
                        format!("The command `{command}` could not run ({code}): {message}.")
                    }
                }
            }
            Self::Text(text) if text.trim().is_empty() => {
                format!("`{command}` gave nothing back.")
            }
            Self::Text(text) => format!("{done}\n\n{}", quote(text)),
            Self::Unreadable(content) => {
                format!(
                    "I got an answer for `{command}` that I can't read:\n\n{}",
                    quote(content)
                )
            }
            Self::Ran {
                exit_code,
                stdout,
                stderr,
                timed_out,
            } => {
                let output = if stdout.trim().is_empty() {
                    stderr
                } else {
                    stdout
                };
                let head = if *timed_out {
                    format!("`{command}` timed out before it finished.")
                } else if *exit_code != 0 {
                    format!("`{command}` failed with exit code {exit_code}.")
                } else if output.trim().is_empty() {
                    return format!("`{command}` finished successfully and printed nothing.");
                } else {
                    done.to_owned()
                };
                if output.trim().is_empty() {
                    head
                } else {
                    format!("{head}\n\n{}", quote(output))
                }
            }
        }
    }
}

/// The first lines of `output` in a fenced block, with a note of how many were left out.
fn quote(output: &str) -> String {
    let lines: Vec<&str> = output.trim_end().lines().collect();
    let shown = lines[..lines.len().min(QUOTED_LINES)].join("\n");
    let fence = if output.contains("```") { "~~~" } else { "```" };
    let quoted = format!("{fence}\n{shown}\n{fence}");
    match lines
        .len()
        .checked_sub(QUOTED_LINES)
        .filter(|left| *left > 0)
    {
        Some(left) => format!("{quoted}\n\n({left} more lines not shown.)"),
        None => quoted,
    }
}

/// `text` in about `count` pieces split after spaces.
fn chunks(text: &str, count: usize) -> Vec<&str> {
    let size = text.len().div_ceil(count.max(1)).max(1);
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if let Some(space) = text[end..].find(' ') {
            end += space + 1;
        } else {
            end = text.len();
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

impl super::Tunable for Demo {
    fn transport_mut(&mut self) -> Option<&mut super::transport::Transport> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolSpec;
    use pretty_assertions::assert_eq;

    fn shell() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "shell".into(),
            description: String::new(),
            parameters: json!({}),
        }]
    }

    async fn run(windows: bool, messages: &[Message], tools: &[ToolSpec]) -> (Reply, Vec<String>) {
        let mut pieces = Vec::new();
        let request = Request {
            system: "",
            messages,
            tools,
        };
        let reply = Demo::new(windows)
            .complete(&request, &mut |delta| {
                if let Delta::Text(t) = delta {
                    pieces.push(t.to_owned());
                }
            })
            .await
            .unwrap();
        (reply, pieces)
    }

    fn command_of(reply: &Reply) -> String {
        let call = reply
            .tool_calls
            .first()
            .unwrap_or_else(|| panic!("no tool call: {reply:?}"));
        let arguments: Value = serde_json::from_str(&call.arguments).unwrap();
        arguments["command"].as_str().unwrap().to_owned()
    }

    fn ran(command: &str, result: &Value) -> Vec<Message> {
        let arguments = json!({"command": command, "description": "d"}).to_string();
        vec![
            Message::Assistant {
                text: "…".into(),
                tool_calls: vec![ToolCall {
                    id: "demo-1".into(),
                    name: "shell".into(),
                    arguments,
                    extra: None,
                }],
                reasoning: Reasoning::default(),
            },
            Message::ToolResult {
                call_id: "demo-1".into(),
                content: result.to_string(),
            },
        ]
    }

    #[test]
    fn the_plans_asset_parses() {
        let demo = Demo::new(false);
        assert!(demo.plans.is_ok(), "{:?}", demo.plans.err());
    }

    #[tokio::test]
    async fn prompts_pick_their_plans_on_both_systems() {
        let cases = [
            ("Please LS.", "ls -la", "dir"),
            ("What OS is this?", "uname -a", "ver"),
            ("tell me the operating system", "uname -a", "ver"),
            (
                "git status please",
                "git status --short --branch",
                "git status --short --branch",
            ),
            ("how much disk space is left", "df -h", "dir"),
            ("where am I?", "pwd", "cd"),
            ("current directory", "pwd", "cd"),
            ("who am i", "whoami", "whoami"),
            ("what's the date today", "date", "date /t"),
            ("what time is it", "date", "date /t"),
        ];
        for (prompt, unix, windows) in cases {
            let (reply, _) = run(false, &[Message::User(prompt.into())], &shell()).await;
            assert_eq!(command_of(&reply), unix, "unix, prompt {prompt:?}");
            let (reply, _) = run(true, &[Message::User(prompt.into())], &shell()).await;
            assert_eq!(command_of(&reply), windows, "windows, prompt {prompt:?}");
        }
    }

    #[tokio::test]
    async fn the_first_turn_streams_text_and_calls_the_shell() {
        let (reply, pieces) = run(false, &[Message::User("ls please".into())], &shell()).await;
        assert_eq!(
            reply,
            Reply {
                text: "I'll list the files with `ls -la`.".into(),
                tool_calls: vec![ToolCall {
                    id: "demo-1".into(),
                    name: "shell".into(),
                    arguments: r#"{"command":"ls -la","description":"List the files in the working directory"}"#.into(),
                    extra: None,
                }],
                stop: StopReason::ToolUse,
                reasoning: Reasoning::default(),
                usage: None,
            }
        );
        assert!(pieces.len() > 1, "{pieces:?}");
        assert_eq!(pieces.concat(), reply.text);
    }

    #[tokio::test]
    async fn the_answer_quotes_the_first_lines_of_the_output() {
        let stdout: String = (1..=22).map(|n| format!("file{n}\n")).collect();
        let mut messages = vec![Message::User("list the files".into())];
        messages.extend(ran("ls -la", &json!({"exit_code": 0, "stdout": stdout, "stderr": "", "duration_ms": 3, "timed_out": false, "truncated": false})));
        let (reply, pieces) = run(false, &messages, &shell()).await;
        assert_eq!(reply.stop, StopReason::EndTurn);
        assert_eq!(reply.tool_calls, []);
        assert_eq!(
            reply.text,
            "Here are the files:

```
file1
file2
file3
file4
file5
file6
file7
file8
file9
file10
file11
file12
file13
file14
file15
file16
file17
file18
file19
file20
```

(2 more lines not shown.)"
        );
        assert_eq!(pieces.concat(), reply.text);
    }

    #[tokio::test]
    async fn denials_failures_and_silence_are_told_honestly() {
        let cases = [
            (
                json!({"error": {"code": "EDENIED", "message": "denied: no terminal to ask"}}),
                "The command `ls -la` was not run. denied: no terminal to ask.",
            ),
            (
                json!({"code": "ETIMEDOUT", "message": "killed after 30 s"}),
                "The command `ls -la` timed out: killed after 30 s.",
            ),
            (
                json!({"exit_code": 2, "stdout": "", "stderr": "ls: cannot open directory '.'\n"}),
                "`ls -la` failed with exit code 2.\n\n```\nls: cannot open directory '.'\n```",
            ),
            (
                json!({"exit_code": 0, "stdout": "", "stderr": ""}),
                "`ls -la` finished successfully and printed nothing.",
            ),
            (
                json!("oops"),
                "I got an answer for `ls -la` that I can't read:\n\n```\n\"oops\"\n```",
            ),
        ];
        for (result, expected) in cases {
            let mut messages = vec![Message::User("list the files".into())];
            messages.extend(ran("ls -la", &result));
            let (reply, _) = run(false, &messages, &shell()).await;
            assert_eq!(reply.text, expected, "result {result}");
        }
    }

    #[tokio::test]
    async fn the_test_plan_looks_first_then_runs_the_right_runner() {
        let mut messages = vec![Message::User("Run the tests, please".into())];
        messages.extend(ran(
            "ls",
            &json!({"exit_code": 0, "stdout": "Cargo.toml\nsrc\n", "stderr": ""}),
        ));
        let (reply, _) = run(false, &messages, &shell()).await;
        assert_eq!(reply.text, "I see `Cargo.toml`, so I'll run `cargo test`.");
        assert_eq!(command_of(&reply), "cargo test");
        assert_eq!(reply.tool_calls[0].id, "demo-2");

        messages.push(reply.to_message());
        messages.push(Message::ToolResult {
            call_id: "demo-2".into(),
            content: json!({"exit_code": 0, "stdout": "test result: ok. 3 passed\n"}).to_string(),
        });
        let (reply, _) = run(false, &messages, &shell()).await;
        assert_eq!(
            reply.text,
            "Here is how the tests went:\n\n```\ntest result: ok. 3 passed\n```"
        );

        let mut messages = vec![Message::User("test".into())];
        messages.extend(ran("ls", &json!({"exit_code": 0, "stdout": "notes.txt\n"})));
        let (reply, _) = run(false, &messages, &shell()).await;
        assert!(
            reply.text.starts_with("I listed the files but found none"),
            "{}",
            reply.text
        );
        assert_eq!(reply.tool_calls, []);
    }

    #[tokio::test]
    async fn a_new_question_starts_a_new_plan() {
        let mut messages = vec![Message::User("list the files".into())];
        messages.extend(ran("ls -la", &json!({"exit_code": 0, "stdout": "a\n"})));
        messages.push(Message::Assistant {
            text: "Here are the files".into(),
            tool_calls: vec![],
            reasoning: Reasoning::default(),
        });
        messages.push(Message::User("and who am I?".into()));
        let (reply, _) = run(false, &messages, &shell()).await;
        assert_eq!(command_of(&reply), "whoami");
        assert_eq!(reply.tool_calls[0].id, "demo-2");
    }

    #[tokio::test]
    async fn an_unknown_request_gets_an_honest_answer_without_tools() {
        let (reply, pieces) = run(
            false,
            &[Message::User("refactor the parser".into())],
            &shell(),
        )
        .await;
        assert_eq!(reply.tool_calls, []);
        assert_eq!(reply.stop, StopReason::EndTurn);
        for needle in [
            "offline demo model",
            "list the files, ",
            "run the tests",
            "`--provider openai` and `OPENAI_API_KEY`",
            "`--provider anthropic` and `ANTHROPIC_API_KEY`",
            "`--provider ollama`",
            "`[model]` in settings.toml",
        ] {
            assert!(
                reply.text.contains(needle),
                "{needle:?} missing from {}",
                reply.text
            );
        }
        assert!(pieces.len() > 1);
        let (empty, _) = run(false, &[], &shell()).await;
        assert_eq!(empty.text, reply.text);
    }

    #[tokio::test]
    async fn without_a_shell_tool_it_says_so() {
        let (reply, _) = run(false, &[Message::User("list the files".into())], &[]).await;
        assert_eq!(
            reply.text,
            "I would run `list_files` for this, but the tools are turned off \
             (permissions mode `off`), so I can't run commands or look at files here."
        );
        assert_eq!(reply.tool_calls, []);
    }

    fn file_tools() -> Vec<ToolSpec> {
        let mut tools = shell();
        for name in ["read_file", "list_files", "search"] {
            tools.push(ToolSpec {
                name: name.into(),
                description: String::new(),
                parameters: json!({}),
            });
        }
        tools
    }

    #[tokio::test]
    async fn plans_look_with_the_file_tools() {
        for (prompt, tool, arguments) in [
            ("list the files here", "list_files", json!({})),
            ("run the tests", "list_files", json!({"pattern": "*"})),
            (
                "read the README",
                "read_file",
                json!({"path": "README.md", "limit": 40}),
            ),
            ("find the TODOs", "search", json!({"pattern": "TODO|FIXME"})),
        ] {
            let (reply, _) = run(false, &[Message::User(prompt.into())], &file_tools()).await;
            let call = &reply.tool_calls[0];
            assert_eq!(call.name, tool, "{prompt}");
            let got: Value = serde_json::from_str(&call.arguments).unwrap();
            assert_eq!(got, arguments, "{prompt}");
        }
        // The test plan picks its runner from the listed files.
        let mut messages = vec![Message::User("run the tests".into())];
        messages.push(Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "demo-1".into(),
                name: "list_files".into(),
                arguments: r#"{"pattern":"*"}"#.into(),
                extra: None,
            }],
            reasoning: Reasoning::default(),
        });
        messages.push(Message::ToolResult {
            call_id: "demo-1".into(),
            content: "Cargo.toml\nREADME.md\n".into(),
        });
        let (reply, _) = run(false, &messages, &file_tools()).await;
        assert_eq!(command_of(&reply), "cargo test");
        // A file tool's text is quoted in the answer.
        let mut messages = vec![Message::User("read the readme".into())];
        messages.push(Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "demo-1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"README.md"}"#.into(),
                extra: None,
            }],
            reasoning: Reasoning::default(),
        });
        messages.push(Message::ToolResult {
            call_id: "demo-1".into(),
            content: "     1\t# app\n".into(),
        });
        let (reply, _) = run(false, &messages, &file_tools()).await;
        assert_eq!(
            reply.text,
            "Here is the start of the README:\n\n```\n     1\t# app\n```"
        );
    }

    #[test]
    fn chunks_cover_the_text() {
        for text in [
            "",
            "one",
            "a b c d e f g h",
            "héhé héhé héhé",
            "no-spaces-at-all-here",
        ] {
            assert_eq!(chunks(text, 3).concat(), text);
        }
        assert_eq!(chunks("aaa bbb ccc ddd", 3), ["aaa bbb ", "ccc ddd"]);
    }
}
