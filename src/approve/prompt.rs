//! The confirmation prompt itself: draws the question on stderr and reads keys
//! from the terminal in raw mode (restored on every path). Every answer says its
//! scope: `1`/`y`/Enter once, `2` this exact command for the rest of the run, `3`
//! the offered prefix in this project, `a` the prefix everywhere; `0`/`n` deny,
//! `t` deny with a note for the model, `e` edit the command before it runs, Esc
//! or Ctrl+C deny and stop. It answers only what the person typed after seeing it:
//!
//! - keys typed before it appeared (while the model streamed) are discarded;
//! - `3` and `a` show the exact rule, the table and the file it goes to, with
//!   "press y" in the same frame, and save it only on a second key (`y`). A `y`
//!   right after a `3`/`a` pressed on its own counts however fast it comes; when
//!   the `3`/`a` came within [`CONFIRM_PAUSE`] of another key (a word being
//!   typed: `say`, `away`) keys in the pause after the rule is shown are dropped,
//!   so a word typed into the prompt never writes a rule;
//! - a prefix (`3`, `a`) is offered only when the policy offers one — never for a
//!   compound command or a protected program; `2` (the exact command) remains;
//! - Enter does not allow a command with a [`Caution`] — destructive, or run without the
//!   sandbox — (`1`/`y` do), and the warning line says which;
//! - an unknown key shows which keys answer;
//! - the task that asked can cancel it ([`Cancel`]): a signal that reached the
//!   process rather than the prompt (Ctrl+C before raw mode, SIGTERM …) ends it
//!   within `KEY_POLL` ([`super::keys`]), terminal restored.
//!
//! `y`/`n` work like `1`/`0` for people used to `[y/N]` prompts. The question
//! is sanitised and fitted to the screen (see [`super::display`]); `e` and `t`
//! use a one-line editor ([`super::line`]).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use crossterm::style::Stylize as _;

use super::display;
use super::keys::{Cancel, Next, RawMode, discard_type_ahead, next_key, stops};
use super::line::{self, Edited};
use super::rules_file::Scope;
use crate::ui::sanitize;

/// A `3`/`a` this soon after another key is part of a typed word: keys this soon
/// after its rule is shown are then dropped. Longer than the gap between the keys
/// of a typed word, shorter than it takes to read the rule.
const CONFIRM_PAUSE: Duration = Duration::from_millis(600);
/// Lines of the model's description shown; it is the model's word, not what runs.
const DESCRIPTION_LINES: usize = 3;
/// Characters of the description (and of the policy's reason) shown.
const NOTE_CHARS: usize = 300;
/// Longest note for the model (`t`): a sentence or two, not a document.
pub const MAX_NOTE_CHARS: usize = 500;
/// Longest edited command (`e`): the policy refuses longer ones anyway.
const MAX_EDIT_CHARS: usize = 100_000;
/// Rows kept free below the question for the answer and a confirmation.
const SPARE_ROWS: usize = 3;
/// Written before the question: attributes off, ASCII character set, autowrap
/// on, cursor shown — whatever was printed before cannot disguise the question.
pub(super) const RESET: &str = "\u{1b}[0m\u{1b}(B\u{1b}[?7h\u{1b}[?25h";

/// One question to a person.
#[derive(Debug, Clone)]
pub struct Question {
    /// The exact command.
    pub command: String,
    /// The model's description.
    pub description: String,
    /// Why the policy could not decide.
    pub reason: String,
    /// Why Enter alone does not allow it, each shown as a warning line; none: Enter allows.
    pub cautions: Vec<Caution>,
    /// The prefix `3` and `a` would save; `None` offers neither.
    pub prefix: Option<String>,
    /// The settings file `3` and `a` write to.
    pub rule_file: PathBuf,
    /// The workspace `3` saves the rule for.
    pub workspace: PathBuf,
    /// The model's command, when the person edited it into this one.
    pub edited_from: Option<String>,
    /// What the call asks for beyond the sandbox and why (`escalate`), shown whole.
    pub escalation: Option<String>,
    /// Use colour.
    pub color: bool,
    /// What is asked about: its title, and whether `e. Edit` is offered.
    pub subject: Subject,
}

/// What a question asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Subject {
    /// A command (it can be edited).
    #[default]
    Command,
    /// A call of an MCP server's tool (nothing to edit: its arguments are the model's).
    McpCall,
    /// Starting a local MCP server without the sandbox.
    McpStart,
    /// A command that asks for more than the sandbox gives (`escalate`): a yes is for this
    /// call only, so neither `2` nor a rule is offered, and it is not edited.
    Escalation,
    /// A command that runs in the background (`background: true`): no timeout bounds it; it
    /// lives until it ends, is stopped, or the run or session ends (rev5 B8).
    Background,
}

impl Subject {
    /// The question's first line.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::Command => "? agent wants to run a command",
            Self::McpCall => "? agent wants to call an MCP server's tool",
            Self::McpStart => "? agent wants to start an MCP server without the sandbox",
            Self::Escalation => "? agent asks to run a command with more than the sandbox gives",
            Self::Background => {
                "? agent wants to run a command in the background: no timeout, it runs until \
                 the run or session ends (or is stopped)"
            }
        }
    }

    /// Whether `2` (allow for this run) is offered.
    fn for_run(self) -> bool {
        self != Self::Escalation
    }

    /// Whether `e` edits it.
    fn editable(self) -> bool {
        matches!(self, Self::Command | Self::Background)
    }
}

/// What makes a question weighty enough that Enter alone does not say yes. Each has its own
/// warning line: the line says why Enter is withheld, so it is never borrowed for another
/// reason (a rerun without the sandbox is not a destructive command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caution {
    /// A protected program (rm, mv, sudo …) appears in the command.
    Destructive,
    /// The command would run without the sandbox.
    Unsandboxed,
    /// The command asks for more than the sandbox gives (the network, `escalate`).
    Escalated,
}

impl Caution {
    /// The warning line.
    #[must_use]
    pub fn line(self) -> &'static str {
        match self {
            Self::Destructive => {
                "⚠ destructive: removes, moves or overwrites files, or gains privileges"
            }
            Self::Unsandboxed => {
                "⚠ without the sandbox: it may write outside the workspace and use the network"
            }
            Self::Escalated => "⚠ more than the sandbox gives: it may use the network",
        }
    }

    /// What Enter does not allow: `a destructive command`.
    #[must_use]
    pub fn what(self) -> &'static str {
        match self {
            Self::Destructive => "a destructive command",
            Self::Unsandboxed => "a run without the sandbox",
            Self::Escalated => "a run with more than the sandbox gives",
        }
    }
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `1`, `y`, or Enter (not when there is a [`Caution`]): this once.
    Allow,
    /// `2`: this exact command, for the rest of the run.
    AllowForRun,
    /// `3`, confirmed: allow and save this prefix for the workspace.
    AllowInProject(String),
    /// `a`, confirmed: allow and save this prefix everywhere.
    AlwaysAllow(String),
    /// `0` or `n`.
    Deny,
    /// `t`: deny, with a note for the model.
    DenyWithNote(String),
    /// `e`: run this command instead (it is decided again).
    Edit(String),
    /// Esc or Ctrl+C, or the prompt was cancelled.
    Interrupt,
}

impl Question {
    /// The question as the person sees it on a terminal of `columns` × `rows`:
    /// every line of the command on screen, or a count of those that are not.
    #[must_use]
    pub fn render(&self, columns: u16, rows: u16) -> String {
        let columns = usize::from(columns);
        let rows = usize::from(rows);
        let paint = |text: &str, style: fn(String) -> String| {
            if self.color {
                style(text.to_owned())
            } else {
                text.to_owned()
            }
        };
        // Prose is wrapped between words here, never by the terminal inside one.
        let description =
            display::wrap(&short(&self.description, DESCRIPTION_LINES), columns).join("\n");
        let why = why_lines(&self.reason, columns).join("\n");
        let edited = self
            .edited_from
            .as_ref()
            .map(|from| format!("edited by you from: {}", crate::ui::summary::one_line(from)));
        let keys = display::wrap(&self.keys(), columns).join("\n");
        let escalation = self
            .escalation
            .as_ref()
            .map(|text| display::wrap(&sanitize::escape_prose(text), columns).join("\n"));
        let mut others = vec![
            self.subject.title().to_owned(),
            description.clone(),
            display::size(&self.command),
            why.clone(),
            keys.clone(),
            "> ".to_owned(),
        ];
        others.extend(edited.clone());
        others.extend(
            self.cautions
                .iter()
                .map(|caution| caution.line().to_owned()),
        );
        others.extend(escalation.clone());
        let used: usize = others
            .iter()
            .map(|text| display::screen_rows(text, columns))
            .sum();
        let command_rows = rows.saturating_sub(used + SPARE_ROWS);

        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}",
            paint(self.subject.title(), |s| s.bold().to_string())
        );
        for line in description.split('\n') {
            let _ = writeln!(out, "  {line}");
        }
        for line in display::command_lines(&self.command, columns, command_rows) {
            let _ = writeln!(out, "  {}", paint(&line, |s| s.yellow().bold().to_string()));
        }
        let _ = writeln!(
            out,
            "  {}",
            paint(&display::size(&self.command), |s| s.dim().to_string())
        );
        if let Some(edited) = &edited {
            let _ = writeln!(out, "  {}", paint(edited, |s| s.cyan().to_string()));
        }
        for caution in &self.cautions {
            let _ = writeln!(
                out,
                "  {}",
                paint(caution.line(), |s| s.red().bold().to_string())
            );
        }
        for line in escalation.iter().flat_map(|text| text.split('\n')) {
            let _ = writeln!(out, "  {}", paint(line, |s| s.red().bold().to_string()));
        }
        for line in why.split('\n') {
            let _ = writeln!(out, "  {}", paint(line, |s| s.dim().to_string()));
        }
        let _ = write!(out, "  {}\n  > ", keys.replace('\n', "\n  "));
        out
    }

    /// The two lines of keys: the ways to allow, then the ways not to.
    fn keys(&self) -> String {
        let mut keys = String::from(if self.cautions.is_empty() {
            "1. Allow (Enter)"
        } else {
            "1. Allow"
        });
        if self.subject.for_run() {
            keys.push_str("   2. Allow for this run");
        }
        if let Some(prefix) = &self.prefix {
            let prefix = one_line(prefix);
            let _ = write!(
                keys,
                "   3. Allow \"{prefix}\" in this project   a. Always allow \"{prefix}\""
            );
        }
        keys.push_str("\n0. Deny   t. Deny with a note");
        if self.subject.editable() {
            keys.push_str("   e. Edit");
        }
        keys.push_str("   Esc: deny and stop");
        keys
    }

    /// Draws the question and waits for an answer. Anything going wrong with
    /// the terminal denies; `cancel` ends the wait with [`Answer::Interrupt`].
    #[must_use]
    pub fn ask(self, cancel: &Cancel) -> Answer {
        let mut stderr = std::io::stderr();
        let (columns, rows) = crossterm::terminal::size().unwrap_or((80, 24));
        let raw = RawMode::enable();
        // Keys typed just before the prompt are dropped, and make a quick `3`/`a` part of them.
        let typed_ahead = raw.is_ok() && discard_type_ahead();
        let question = self.render(columns, rows).replace('\n', "\r\n");
        let _ = write!(stderr, "{RESET}{question}");
        let _ = stderr.flush();
        let answer = match raw {
            Ok(_) => {
                let last_key = typed_ahead.then(Instant::now);
                self.read_answer(cancel, &mut stderr, usize::from(columns), last_key)
            }
            Err(_) => Answer::Deny,
        };
        let said = match &answer {
            Answer::Allow => "allowed".to_owned(),
            Answer::AllowForRun => "allowed for this run".to_owned(),
            Answer::AllowInProject(prefix) => {
                format!("allow \"{}\" in this project", one_line(prefix))
            }
            Answer::AlwaysAllow(prefix) => format!("always allow \"{}\"", one_line(prefix)),
            Answer::Deny => "denied".to_owned(),
            Answer::DenyWithNote(note) => format!("denied: \"{}\"", one_line(note)),
            Answer::Edit(_) => "edited; deciding again".to_owned(),
            Answer::Interrupt if cancel.is_cancelled() => "interrupted".to_owned(),
            Answer::Interrupt => "denied; stopping".to_owned(),
        };
        let _ = write!(stderr, "\r\u{1b}[2K  > {said}\r\n");
        let _ = stderr.flush();
        drop(raw);
        answer
    }

    fn read_answer(
        &self,
        cancel: &Cancel,
        out: &mut std::io::Stderr,
        columns: usize,
        mut last_key: Option<Instant>,
    ) -> Answer {
        let show = |out: &mut std::io::Stderr, text: &str| {
            let _ = write!(out, "\r\u{1b}[2K{}", text.replace('\n', "\r\n"));
            let _ = out.flush();
        };
        let hint = |lead: &str| {
            let lines = display::wrap(&format!("{lead}{}", self.hint()), columns);
            format!("  {}  > ", lines.join("\n  "))
        };
        loop {
            let key = match next_key(cancel, None) {
                Next::Key(key) => key,
                Next::Cancelled => return Answer::Interrupt,
                Next::TimeUp | Next::Failed => return Answer::Deny,
            };
            let now = Instant::now();
            let deliberate = last_key.is_none_or(|last| now.duration_since(last) >= CONFIRM_PAUSE);
            last_key = Some(now);
            if stops(&key) {
                return Answer::Interrupt;
            }
            let prefix = self.prefix.clone();
            match (key.code, prefix) {
                (KeyCode::Char('1' | 'y' | 'Y'), _) => return Answer::Allow,
                (KeyCode::Enter, _) if self.cautions.is_empty() => return Answer::Allow,
                (KeyCode::Char('2'), _) if self.subject.for_run() => return Answer::AllowForRun,
                (KeyCode::Char('0' | 'n' | 'N'), _) => return Answer::Deny,
                (KeyCode::Enter, _) => show(
                    out,
                    &format!(
                        "  Enter does not allow {}: press 1 to allow it, 0 to deny  > ",
                        self.cautions.first().map_or("it", |caution| caution.what())
                    ),
                ),
                (KeyCode::Char('3'), Some(prefix)) => {
                    let scope = Scope::Project(&self.workspace);
                    match self.confirm_rule(&prefix, scope, deliberate, columns, cancel, out) {
                        Confirm::Save => return Answer::AllowInProject(prefix),
                        Confirm::Stop => return Answer::Interrupt,
                        Confirm::Failed => return Answer::Deny,
                        Confirm::Back => {
                            // The key that went back was typed too.
                            last_key = Some(Instant::now());
                            show(out, &hint("rule not saved; "));
                        }
                    }
                }
                (KeyCode::Char('a' | 'A'), Some(prefix)) => {
                    let scope = Scope::Everywhere;
                    match self.confirm_rule(&prefix, scope, deliberate, columns, cancel, out) {
                        Confirm::Save => return Answer::AlwaysAllow(prefix),
                        Confirm::Stop => return Answer::Interrupt,
                        Confirm::Failed => return Answer::Deny,
                        Confirm::Back => {
                            // The key that went back was typed too.
                            last_key = Some(Instant::now());
                            show(out, &hint("rule not saved; "));
                        }
                    }
                }
                (KeyCode::Char('t' | 'T'), _) => {
                    show(
                        out,
                        "  a note for the model (Enter sends it, Esc goes back)\n",
                    );
                    match line::edit("note> ", "", MAX_NOTE_CHARS, cancel, out) {
                        Edited::Done(note) if !note.trim().is_empty() => {
                            return Answer::DenyWithNote(note.trim().to_owned());
                        }
                        Edited::Done(_) => show(out, &hint("no note; ")),
                        Edited::Back => show(out, &hint("")),
                        Edited::Stop => return Answer::Interrupt,
                        Edited::Failed => return Answer::Deny,
                    }
                }
                (KeyCode::Char('e' | 'E'), _) if self.subject.editable() => {
                    show(
                        out,
                        "  edit the command (Enter runs it through the policy again, Esc goes back)\n",
                    );
                    match line::edit("$ ", &self.command, MAX_EDIT_CHARS, cancel, out) {
                        Edited::Done(edited)
                            if !edited.trim().is_empty() && edited != self.command =>
                        {
                            return Answer::Edit(edited);
                        }
                        Edited::Done(_) => {
                            show(out, &hint("not changed; "));
                        }
                        Edited::Back => show(out, &hint("")),
                        Edited::Stop => return Answer::Interrupt,
                        Edited::Failed => return Answer::Deny,
                    }
                }
                _ => show(out, &hint("")),
            }
        }
    }

    /// `press 1 (once), 2 (this run), …, or Esc (stop)`.
    fn hint(&self) -> String {
        let mut hint = String::from("press 1 (once)");
        if self.subject.for_run() {
            hint.push_str(", 2 (this run)");
        }
        if self.prefix.is_some() {
            hint.push_str(", 3 (this project), a (always)");
        }
        hint.push_str(", 0 (deny), t (deny with a note)");
        if self.subject.editable() {
            hint.push_str(", e (edit)");
        }
        hint.push_str(" or Esc (stop)");
        hint
    }

    /// Shows the rule, its table and its file with "press y" in one frame, and waits for the
    /// second key; unless the key that asked was `deliberate`, keys in [`CONFIRM_PAUSE`] are
    /// dropped first.
    fn confirm_rule(
        &self,
        prefix: &str,
        scope: Scope<'_>,
        deliberate: bool,
        columns: usize,
        cancel: &Cancel,
        out: &mut std::io::Stderr,
    ) -> Confirm {
        let what = match scope {
            Scope::Everywhere => format!("always allow \"{}\"", one_line(prefix)),
            Scope::Project(_) => format!("allow \"{}\" in this project", one_line(prefix)),
        };
        let rule = format!(
            "{what}: adds it to {} allow in {}",
            one_line(&scope.table()),
            crate::ui::summary::home_path(&self.rule_file)
        );
        let mut frame = String::from("\r\u{1b}[2K");
        for line in display::wrap(&rule, columns) {
            frame.push_str(&format!("  {line}\r\n"));
        }
        frame.push_str("  press y to save the rule, any other key to go back  > ");
        let _ = write!(out, "{frame}");
        let _ = out.flush();
        if !deliberate {
            let until = Instant::now() + CONFIRM_PAUSE;
            loop {
                match next_key(cancel, Some(until)) {
                    Next::Key(key) if stops(&key) => return Confirm::Stop,
                    Next::Key(_) => {} // typed with the word, before the rule could be read
                    Next::TimeUp => break,
                    Next::Cancelled => return Confirm::Stop,
                    Next::Failed => return Confirm::Failed,
                }
            }
        }
        match next_key(cancel, None) {
            Next::Key(key) if stops(&key) => Confirm::Stop,
            Next::Key(key) => match key.code {
                KeyCode::Char('y' | 'Y') => Confirm::Save,
                _ => Confirm::Back,
            },
            Next::Cancelled => Confirm::Stop,
            Next::TimeUp | Next::Failed => Confirm::Failed,
        }
    }
}

/// The second key after a rule was shown.
enum Confirm {
    Save,
    Back,
    Stop,
    Failed,
}

/// Model text made safe and short: escaped, at most `lines` lines and
/// [`NOTE_CHARS`] characters, `…` where cut.
pub(super) fn short(text: &str, lines: usize) -> String {
    let escaped = sanitize::escape_prose(text.trim());
    let mut out: Vec<&str> = escaped.split('\n').collect();
    let mut cut = out.len() > lines;
    out.truncate(lines);
    let mut joined = out.join("\n");
    if joined.chars().count() > NOTE_CHARS {
        joined = joined.chars().take(NOTE_CHARS).collect();
        cut = true;
    }
    if cut {
        joined.push('…');
    }
    joined
}

/// `why: …` — the policy's reason, made safe and short, in lines that break between words to
/// fit `columns` after the prompt's indent.
pub(super) fn why_lines(reason: &str, columns: usize) -> Vec<String> {
    display::wrap(&format!("why: {}", short(reason, 1)), columns)
}

/// A prefix or a path on one line, escaped, never shortened: it is what is saved.
pub(super) fn one_line(text: &str) -> String {
    sanitize::escape_command(text).replace('\n', "⏎")
}

/// A note line on stderr (model text in it is escaped).
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "  {}", sanitize::escape_prose(text));
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn question() -> Question {
        Question {
            command: "touch F".into(),
            description: "create F".into(),
            reason: "`touch` is not on the read-only list".into(),
            cautions: Vec::new(),
            prefix: Some("touch".into()),
            rule_file: PathBuf::from("/home/me/.config/agent/settings.toml"),
            workspace: PathBuf::from("/home/me/src/app"),
            edited_from: None,
            escalation: None,
            color: false,
            subject: Subject::Command,
        }
    }

    #[test]
    fn the_question_shows_description_command_size_and_keys() {
        assert_eq!(
            question().render(120, 40),
            r#"? agent wants to run a command
  create F
  $ touch F
  1 line · 7 characters
  why: `touch` is not on the read-only list
  1. Allow (Enter)   2. Allow for this run   3. Allow "touch" in this project   a. Always allow "touch"
  0. Deny   t. Deny with a note   e. Edit   Esc: deny and stop
  > "#
        );
    }

    /// An escalation shows what it asks for whole (escaped, never cut, however long the
    /// model's reason before it), withholds Enter, and offers no `2`, rule or edit.
    #[test]
    fn an_escalation_shows_what_it_asks_for_whole_and_offers_only_once() {
        for hosts in [1, 4, 10] {
            let names: Vec<String> = (0..hosts).map(|n| format!("host{n}.example.org")).collect();
            let text = format!(
                "this command asks to run with network to {}; the model's reason: \"npm \u{1b}[2J{}\"",
                names.join(", "),
                "z".repeat(400)
            );
            let question = Question {
                cautions: vec![Caution::Escalated],
                prefix: None,
                escalation: Some(text),
                subject: Subject::Escalation,
                ..question()
            };
            let shown = question.render(80, 60);
            assert!(shown.starts_with(Subject::Escalation.title()), "{shown}");
            assert!(shown.contains(Caution::Escalated.line()), "{shown}");
            let flat = shown.replace("\n  ", " ");
            for name in &names {
                assert!(flat.contains(name.as_str()), "{name}: {shown}");
            }
            assert!(!shown.contains('\u{1b}'), "{shown}");
            assert!(shown.matches('z').count() >= 400, "{shown}");
            assert!(
                shown
                    .contains("  1. Allow\n  0. Deny   t. Deny with a note   Esc: deny and stop\n"),
                "{shown}"
            );
            assert!(!question.hint().contains('2'), "{}", question.hint());
        }
    }

    #[test]
    fn a_background_command_says_so_and_that_no_timeout_bounds_it() {
        let question = Question {
            subject: Subject::Background,
            ..question()
        };
        let shown = question.render(200, 40);
        assert!(
            shown.starts_with(
                "? agent wants to run a command in the background: no timeout, it runs until \
                 the run or session ends (or is stopped)\n"
            ),
            "{shown}"
        );
        assert!(shown.contains("e. Edit"), "{shown}");
    }

    #[test]
    fn a_destructive_command_is_marked_and_enter_is_not_offered() {
        let question = Question {
            command: "rm -r build".into(),
            cautions: vec![Caution::Destructive],
            prefix: None,
            ..question()
        };
        let shown = question.render(120, 40);
        assert!(shown.contains("⚠ destructive"), "{shown}");
        assert!(
            shown.contains(
                "  1. Allow   2. Allow for this run\n  0. Deny   t. Deny with a note   e. Edit   Esc: deny and stop\n"
            ),
            "{shown}"
        );
    }

    #[test]
    fn an_edited_command_says_so() {
        let question = Question {
            command: "cargo nextest run".into(),
            edited_from: Some("cargo test\u{1b}[8m".into()),
            ..question()
        };
        let shown = question.render(120, 40);
        assert!(
            shown.contains("  $ cargo nextest run\n  1 line · 17 characters\n  edited by you from: cargo test\\u{1b}[8m\n"),
            "{shown}"
        );
    }

    #[test]
    fn model_text_is_escaped_and_kept_short() {
        let question = Question {
            command: "ls\u{1b}[8m; touch x\u{1b}[0m".into(),
            description: "list\u{1b}]52;c;eA==\u{7}\nline 2\nline 3\nline 4".into(),
            ..question()
        };
        let shown = question.render(120, 40);
        assert!(
            shown.contains("  $ ls\\u{1b}[8m; touch x\\u{1b}[0m\n"),
            "{shown}"
        );
        assert!(
            shown.contains("  list\\u{1b}]52;c;eA==\\u{7}\n  line 2\n  line 3…\n"),
            "{shown}"
        );
        assert!(!shown.contains('\u{1b}'), "{shown}");
    }

    #[test]
    fn the_whole_question_fits_the_screen() {
        let command: Vec<String> = (0..500).map(|i| format!("echo {i}")).collect();
        let question = Question {
            command: command.join("\n"),
            ..question()
        };
        let shown = question.render(80, 24);
        assert!(shown.lines().count() + SPARE_ROWS <= 24, "{shown}");
        assert!(shown.contains("more lines not shown"), "{shown}");
        assert!(shown.contains("$ echo 0\n"), "{shown}");
        assert!(shown.contains("  echo 499\n"), "{shown}");
        assert!(shown.contains("500 lines · "), "{shown}");
    }

    /// The `why:` line and the description break between words at any width, never inside
    /// a word at the terminal's edge.
    #[test]
    fn prose_wraps_between_words_at_every_width() {
        let words: Vec<String> = (0..60)
            .map(|i| format!("word{i}{}", "x".repeat(i % 9)))
            .collect();
        let text = words.join(" ");
        for columns in (40..=130).step_by(3) {
            let question = Question {
                description: text.clone(),
                reason: text.clone(),
                ..question()
            };
            let shown = question.render(columns, 60);
            for line in shown.lines() {
                assert!(
                    line.chars().count() <= usize::from(columns),
                    "{columns}: `{line}` is wider than the terminal:\n{shown}"
                );
            }
            let shown_words: Vec<&str> = shown.split_whitespace().collect();
            for word in words.iter().take(20) {
                assert!(
                    shown_words.contains(&word.as_str()),
                    "{columns}: `{word}` was broken:\n{shown}"
                );
            }
        }
    }
}
