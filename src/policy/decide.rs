//! The two decision paths, side by side: POSIX `sh` (tree-sitter-bash, checked against a
//! second reading of the words) and cmd.exe (a conservative tokenizer). Each runs the deny
//! search over everything in the command, asks for whatever could not be checked or has an
//! operator, and lets one plain simple command through to the allow rules and the built-in
//! list. Owns the order of the checks; the search is `scan`'s, the lists `builtin`'s and
//! `options`'s.

use super::parse;
use super::scan::{Findings, Scan};
use super::script::{Shape, TEST};
use super::simple::{MAX_COMMAND_BYTES, control_character, posix_metacharacter};
use super::word::{Word, WordKind};
use super::{
    Context, Decision, OsFamily, ReadOnly, Rules, Source, Verdict, builtin, builtins_pure, cmd,
    compose, options, split, suggest,
};

pub(super) fn decide_as_written(rules: &Rules, context: &Context, command: &str) -> Decision {
    let os = context.os;
    if command.trim().is_empty() {
        return Decision::new(Verdict::Ask, "empty command", Source::Parser, false);
    }
    if command.contains('\0') {
        return unreadable(rules, os, command, "contains a NUL byte".to_owned());
    }
    if command.len() > MAX_COMMAND_BYTES {
        let reason = format!("is longer than {MAX_COMMAND_BYTES} bytes, too long to check");
        return unreadable(rules, os, command, reason);
    }
    match os {
        OsFamily::Unix => decide_unix(rules, context, command),
        OsFamily::Windows => decide_windows(rules, context, command),
    }
}

/// A command whose structure is not read: best-effort search of the raw text, then ask.
fn unreadable(rules: &Rules, os: OsFamily, command: &str, reason: String) -> Decision {
    let mut scan = Scan::new(rules, os);
    scan.crude(command);
    let findings = scan.findings();
    checked(rules, &findings, Some(reason))
        .unwrap_or_else(|| Decision::new(Verdict::Ask, "cannot be checked", Source::Parser, true))
}

fn decide_unix(rules: &Rules, context: &Context, command: &str) -> Decision {
    let script = parse::parse(command);
    let mut scan = Scan::new(rules, OsFamily::Unix);
    if script.has_error {
        scan.unchecked("could not be parsed as a shell command");
    }
    scan.posix(&script, 0);
    // The second, independent reading of the words (`split`), once: the parser's structure is
    // exact only for one plain simple command that reading agrees on; anywhere else a deny
    // rule's words in the raw text at least ask.
    let shell_words = split::agrees(command, script.commands.first().map_or(&[], |c| &c.words));
    // A `$` or backtick is a metacharacter too: such a command is searched as raw text.
    let metacharacter = posix_metacharacter(command);
    if scan.has_unchecked() || shell_words.is_none() || metacharacter.is_some() {
        scan.crude(command);
    }
    let findings = scan.findings();
    if let Some(decision) = checked(rules, &findings, None) {
        return decision;
    }
    let destructive = findings.destructive;
    let ask = |reason: String| Decision::new(Verdict::Ask, reason, Source::Parser, destructive);
    let inspect = context.read_only == ReadOnly::Inspect;
    let control = may_hold_control(command)
        .then(|| control_character(command))
        .flatten();
    if let Some(reason) = metacharacter.clone().or_else(|| control.clone()) {
        // Inspect list: operator characters only inside quotes are text (the second reading
        // found one simple command: `rg 'a|b' src`, `sed -n '$p'`, `grep "a|b" x`; a `$` or
        // backtick inside "…" is not); a pipeline or list of allowed parts with harmless
        // redirections is decided part by part.
        let quoted = inspect && control.is_none() && shell_words.is_some();
        if !quoted {
            if inspect
                && control.is_none()
                && let Some(decision) =
                    compose::decide(rules, context, command, destructive, decide_as_written)
            {
                return decision;
            }
            return ask(reason);
        }
    }
    if inspect && script.shape == Shape::Other(TEST) {
        return match builtins_pure::test_command(context, command) {
            Ok(entry) => on_the_list(entry, destructive),
            Err(reason) => Decision::new(Verdict::Ask, reason, Source::Builtin, destructive),
        };
    }
    let simple = match script.shape {
        Shape::Simple => script.commands.first(),
        Shape::Empty => return ask("contains only a comment".to_owned()),
        Shape::Other(what) => return ask(format!("is not a single simple command ({what})")),
    };
    let Some(simple) = simple else {
        return ask("has no program".to_owned());
    };
    if let Some(assignment) = simple.assignments.first() {
        return ask(format!("sets a variable for the program (`{assignment}`)"));
    }
    if simple.redirected {
        return ask("contains a redirection".to_owned());
    }
    if let Some(odd) = simple.odd {
        return ask(format!("contains {odd}"));
    }
    let decision = simple_command(rules, context, &simple.words, destructive);
    // Allow only words that a second, independent reading of the shell's rules agrees on: the
    // parser has quirks (`\⇥` as a blank, a comment at a glued `#`) that would otherwise let
    // the shell run other words than the ones decided.
    if shell_words != Some(true) {
        return match decision.verdict {
            Verdict::Allow => ask("may be split into words differently by the shell".to_owned()),
            Verdict::Ask | Verdict::Deny => Decision {
                prefix: None,
                ..decision
            },
        };
    }
    decision
}

/// Whether `text` may hold a character [`control_character`] finds: a byte below a blank
/// other than tab and newline, DEL, or any byte of a character beyond ASCII (the C1 controls
/// are two bytes from `0xC2`). A byte look, before the look at characters.
fn may_hold_control(text: &str) -> bool {
    text.bytes()
        .any(|b| (b < b' ' && b != b'\t' && b != b'\n') || b >= 0x7f)
}

/// Deny, or ask for what could not be checked, from the search's findings.
fn checked(rules: &Rules, findings: &Findings, problem: Option<String>) -> Option<Decision> {
    let destructive = findings.destructive || problem.is_some();
    if let Some(rule) = findings.deny.and_then(|i| rules.deny.get(i)) {
        let reason = format!("matches deny rule \"{}\"", rule.prefix);
        return Some(
            Decision::new(Verdict::Deny, reason, rule.source, destructive).with_rule(&rule.prefix),
        );
    }
    let problem = problem.or_else(|| findings.unchecked.clone());
    let maybe = findings.maybe_deny.and_then(|i| rules.deny.get(i));
    match (problem, maybe) {
        (Some(problem), Some(rule)) => {
            let reason = format!("{problem}; it may match deny rule \"{}\"", rule.prefix);
            Some(Decision::new(Verdict::Ask, reason, rule.source, true).with_rule(&rule.prefix))
        }
        (Some(problem), None) => Some(Decision::new(Verdict::Ask, problem, Source::Parser, true)),
        (None, Some(rule)) => {
            let reason = format!(
                "may match deny rule \"{}\" (a word that is not fixed could complete it)",
                rule.prefix
            );
            Some(Decision::new(Verdict::Ask, reason, rule.source, true).with_rule(&rule.prefix))
        }
        (None, None) if findings.unknown_program && !rules.deny.is_empty() => Some(Decision::new(
            Verdict::Ask,
            "a word that is not fixed may be a program matching a deny rule",
            Source::Parser,
            true,
        )),
        (None, None) => None,
    }
}

/// One simple command that passed every shape check, with the prefix to offer when it asks.
fn simple_command(rules: &Rules, context: &Context, words: &[Word], destructive: bool) -> Decision {
    let mut decision = rules_and_lists(rules, context, words, destructive);
    if decision.verdict == Verdict::Ask {
        decision.prefix = suggest::prefix_for(context.os, words);
    }
    decision
}

/// User allow rules (with the options they do not cover), then the built-in list.
fn rules_and_lists(
    rules: &Rules,
    context: &Context,
    words: &[Word],
    destructive: bool,
) -> Decision {
    let os = context.os;
    if words.iter().any(|w| w.kind == WordKind::Expansion) {
        let reason = "contains an expansion";
        return Decision::new(Verdict::Ask, reason, Source::Parser, destructive);
    }
    // The longest matching rule decides: it covers the most words, options included.
    if let Some(rule) = rules
        .allow
        .iter()
        .filter(|r| r.matches(words))
        .max_by_key(|r| r.len())
    {
        if let Some(glob) = words.iter().find(|w| w.kind == WordKind::Pattern) {
            let reason = format!(
                "contains a glob (`{}`); allow rule \"{}\" covers only fixed words",
                glob.text, rule.prefix
            );
            return Decision::new(Verdict::Ask, reason, Source::Parser, destructive);
        }
        if let Some(option) = options::uncovered(os, words, rule.len()) {
            let reason = format!(
                "`{}` {}; allow rule \"{}\" covers the program, not this option (a rule that \
                 contains the option allows it)",
                option.word, option.effect, rule.prefix
            );
            return Decision::new(Verdict::Ask, reason, Source::Builtin, destructive)
                .with_rule(&option.entry);
        }
        let reason = ["matches allow rule \"", &rule.prefix, "\""].concat();
        return Decision::new(Verdict::Allow, reason, rule.source, destructive)
            .with_rule(&rule.prefix);
    }
    match builtin::check(context, words) {
        Ok(entry) => on_the_list(entry, destructive),
        Err(reason) => Decision::new(Verdict::Ask, reason, Source::Builtin, destructive),
    }
}

/// Allowed by the built-in list's `entry` (which becomes the rule).
fn on_the_list(entry: String, destructive: bool) -> Decision {
    let reason = ["`", &entry, "` is on the built-in read-only list"].concat();
    Decision {
        rule: Some(entry),
        ..Decision::new(Verdict::Allow, reason, Source::Builtin, destructive)
    }
}

/// Decides one cmd.exe command line: the deny search over every part, then the allow side
/// for a line without any metacharacter.
fn decide_windows(rules: &Rules, context: &Context, command: &str) -> Decision {
    let mut scan = Scan::new(rules, OsFamily::Windows);
    scan.cmd_line(command, 0);
    if scan.has_unchecked() || command.contains(['%', '!', '$', '`']) {
        scan.crude(command);
    }
    let findings = scan.findings();
    if let Some(decision) = checked(rules, &findings, None) {
        return decision;
    }
    let cmd_metacharacter = || {
        let (_, what) = cmd::METACHARACTERS
            .iter()
            .find(|(c, _)| command.contains(*c))?;
        Some(format!("contains {what}"))
    };
    let reason = posix_metacharacter(command)
        .or_else(cmd_metacharacter)
        .or_else(|| control_character(command));
    if let Some(reason) = reason {
        return Decision::new(Verdict::Ask, reason, Source::Parser, findings.destructive);
    }
    // `dir \\host\share` opens a network connection (and can leak credentials or data in
    // the host name): not read-only.
    if names_network_path(command) {
        let reason = "names a network path (`\\\\host\\…`)".to_owned();
        return Decision::new(Verdict::Ask, reason, Source::Parser, findings.destructive);
    }
    simple_command(
        rules,
        context,
        &cmd::plain_words(command),
        findings.destructive,
    )
}

/// Whether a line may name a network path anywhere. Win32 reads `/` as `\`, so `\\`, `//`,
/// `\/` and `/\` all start a UNC path, and `\??\` (`\??\UNC\host\share`) is an NT path; cmd's
/// built-ins also split arguments at `,` `;` `=` (`dir /s,\\host\share`). Any two slashes in a
/// row, anywhere, count.
fn names_network_path(command: &str) -> bool {
    let slashes = command.replace('/', "\\");
    slashes.contains("\\\\") || slashes.contains("\\??\\")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Text with control characters (C0, DEL, C1), metacharacters and any other character.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}a é$`;|&<>\\t\\n]{0,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// The byte look before the look for control characters misses none, and a `$` or
        /// backtick is always a metacharacter (the raw-text search needs no look of its own).
        #[test]
        fn the_byte_looks_miss_nothing(text in text()) {
            if control_character(&text).is_some() {
                prop_assert!(may_hold_control(&text), "{:?}", text);
            }
            if text.contains(['$', '`']) {
                prop_assert!(posix_metacharacter(&text).is_some(), "{:?}", text);
            }
        }
    }

    #[test]
    fn control_characters_are_looked_for() {
        for text in ["a\u{1b}b", "a\rb", "\u{7f}", "a\u{85}", "\u{9f}"] {
            assert!(may_hold_control(text), "{text:?}");
            assert!(control_character(text).is_some(), "{text:?}");
        }
        for text in ["ls -la", "a\tb", "a\nb", ""] {
            assert!(!may_hold_control(text), "{text:?}");
        }
    }
}
