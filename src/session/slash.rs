//! The session's slash commands: their names (for Tab and `/help`) and what a typed line
//! asks for. Carrying them out is the session's; this file only reads the words.

/// The commands and what each does, in `/help`'s order.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "list these commands"),
    (
        "/rules",
        "the allow and deny rules that apply, with where each comes from",
    ),
    (
        "/usage",
        "tokens used in this session and what they cost (an estimate for well-known models)",
    ),
    (
        "/model",
        "[NAME]: talk to another model of the same provider from the next message (alone: \
         pick one of the server's models)",
    ),
    (
        "/mode",
        "ask|deny|allow-all: how commands the policy is unsure about are decided",
    ),
    (
        "/clear",
        "start a new conversation (same session and transcript)",
    ),
    (
        "/compact",
        "replace the conversation so far by a summary the model writes",
    ),
    (
        "/diff",
        "what the last message that changed files changed, as a diff",
    ),
    (
        "/undo",
        "[--force]: put those files back as they were (again: puts the changes back)",
    ),
    (
        "/mcp",
        "the MCP servers and their tools (as `agent mcp list`); /mcp restart NAME",
    ),
    (
        "/ps",
        "the background processes the model started (they end with the session)",
    ),
    ("/exit", "end the session (as Ctrl+D)"),
];

/// What a line starting with `/` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    /// `/help`.
    Help,
    /// `/rules`.
    Rules,
    /// `/usage`.
    Usage,
    /// `/model [NAME]`.
    Model(Option<String>),
    /// `/mode [MODE]`.
    Mode(Option<String>),
    /// `/clear`.
    Clear,
    /// `/compact`.
    Compact,
    /// `/diff`.
    Diff,
    /// `/undo [--force]`.
    Undo(Option<String>),
    /// `/mcp [restart NAME]`: its words after `/mcp`.
    Mcp(Vec<String>),
    /// `/ps`.
    Ps,
    /// `/exit` (or `/quit`).
    Exit,
    /// Anything else that starts with one `/`.
    Unknown(String),
}

/// The slash command in `line`; `None` for a message to the model (`//` sends one `/`).
#[must_use]
pub fn parse(line: &str) -> Option<Slash> {
    let line = line.trim();
    let rest = line.strip_prefix('/')?;
    if rest.starts_with('/') {
        return None;
    }
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or_default();
    let argument = words.next().map(str::to_owned);
    Some(match name {
        "help" | "?" => Slash::Help,
        "rules" => Slash::Rules,
        "usage" | "cost" => Slash::Usage,
        "model" => Slash::Model(argument),
        "mode" => Slash::Mode(argument),
        "clear" | "new" => Slash::Clear,
        "compact" => Slash::Compact,
        "diff" => Slash::Diff,
        "undo" => Slash::Undo(argument),
        "mcp" => Slash::Mcp(rest.split_whitespace().skip(1).map(str::to_owned).collect()),
        "ps" => Slash::Ps,
        "exit" | "quit" => Slash::Exit,
        _ => Slash::Unknown(format!("/{name}")),
    })
}

/// The text sent for a line that is not a command: `//x` sends `/x`.
#[must_use]
pub fn message_text(line: &str) -> String {
    match line.trim_start().strip_prefix("//") {
        Some(rest) => format!("/{rest}"),
        None => line.to_owned(),
    }
}

/// `/help`'s text.
#[must_use]
pub fn help() -> String {
    let mut out = String::from("session commands (Tab completes them):\n");
    for (name, what) in COMMANDS {
        out.push_str(&format!("  {name:<9} {what}\n"));
    }
    out.push_str(
        "  keys: Enter sends · Alt+Enter, Shift+Enter or a trailing \\ add a line · ↑/↓ earlier \
         messages · Esc or Ctrl+C stop a turn · Ctrl+D ends · // sends a line starting with /",
    );
    out
}

/// The names Tab completes.
#[must_use]
pub fn names() -> Vec<String> {
    COMMANDS
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn lines_read_as_commands_or_messages() {
        assert_eq!(parse("/help"), Some(Slash::Help));
        assert_eq!(
            parse("  /model gpt-x  "),
            Some(Slash::Model(Some("gpt-x".into())))
        );
        assert_eq!(parse("/mode"), Some(Slash::Mode(None)));
        assert_eq!(parse("/diff"), Some(Slash::Diff));
        assert_eq!(parse("/undo"), Some(Slash::Undo(None)));
        assert_eq!(
            parse("/undo --force"),
            Some(Slash::Undo(Some("--force".into())))
        );
        assert_eq!(parse("/frob it"), Some(Slash::Unknown("/frob".into())));
        assert_eq!(parse("list the files"), None);
        assert_eq!(parse("//etc is a path"), None);
        assert_eq!(message_text("//etc is a path"), "/etc is a path");
        assert_eq!(message_text("plain"), "plain");
    }

    #[test]
    fn help_names_every_command() {
        let help = help();
        for name in names() {
            assert!(help.contains(&name), "{name} missing from {help}");
        }
    }
}
