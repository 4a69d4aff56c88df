//! Harmless composition (`[permissions] read_only = "inspect"`): a pipeline or list (`|`,
//! `&&`, `||`, `;`) whose every part is allowed, with only `2>/dev/null`, `>/dev/null`,
//! `&>/dev/null`, `2>&1` and `<` from a workspace file, is allowed. Owns the splitting of such
//! a command into parts and the harmless redirections; each part is then decided from the
//! start like a command of its own (deny rules, allow rules, option tables, the built-in
//! lists), so a part keeps every check a single command gets. The whole command has already
//! passed the deny search.
//!
//! Anything else asks: expansions and backticks, `(`/`)` (subshells, functions), `&`
//! (background), `|&`, here-documents and here-strings, `>>`, `>|`, `<>`, redirections to or
//! from anything else, a redirection glued to a word (`ls>x`), newlines, more than
//! [`MAX_PARTS`] parts. Operators inside quotes stay in their part, where they are text
//! (`rg "a|b" src | head`; a `$` or backtick inside `"…"` still asks there). `cd DIR` inside the workspace changes the directory
//! the later parts are judged in (both the old and the new one: `cd` may fail). An
//! `if … then … fi` is read as its parts (`compound`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::word::Word;
use super::{Context, Decision, Rules, Source, Verdict, compound, path_rule, split};

/// Most parts in one composed command: real pipelines have a handful; hundreds are built to
/// be slow or to hide something.
pub(super) const MAX_PARTS: usize = 16;

/// Most working directories a composed command is judged in (`cd a; cd b; …`).
const MAX_DIRECTORIES: usize = 4;

/// How a part is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Joint {
    Pipe,
    And,
    Or,
    Then,
}

/// One part's verdict, for `agent check --json` (`"parts"`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PartDecision {
    /// The part as decided, without its harmless redirections.
    pub command: String,
    /// Allow, ask or deny.
    pub decision: Verdict,
    /// Why.
    pub reason: String,
    /// Which list or rule decided.
    pub source: Source,
    /// The rule or list entry, if one decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// A command split at its top-level operators, harmless redirections removed. A part is a
/// slice of the command unless a redirection was taken out of it.
#[derive(Debug, Default)]
struct Split<'c> {
    parts: Vec<(Option<Joint>, Cow<'c, str>)>,
    /// `<` sources, to be checked against the workspace.
    inputs: Vec<&'c str>,
    /// The parts that start with a redirection (by index).
    redirected_first: Vec<usize>,
}

/// How one part is decided: the caller's decision of a whole command as written (deciding a
/// part is deciding a command; passed in, so this file does not import its caller).
pub(super) type DecidePart = fn(&Rules, &Context, &str) -> Decision;

/// The strictest part so far: its index, verdict, source and whether it is destructive (its
/// reason and rule are in its [`PartDecision`]).
type Worst = (usize, Verdict, Source, bool);

/// Decides a composed command, or `None` when it is not one this module reads (the caller
/// asks with its usual reason). `destructive` comes from the deny search of the whole; each
/// part is decided by `decide_part`.
pub(super) fn decide(
    rules: &Rules,
    context: &Context,
    command: &str,
    destructive: bool,
    decide_part: DecidePart,
) -> Option<Decision> {
    let split = match split_parts(command).and_then(|split| split.map(without_if).transpose()) {
        Ok(split) => split?,
        Err(reason) => {
            return Some(Decision::new(
                Verdict::Ask,
                reason,
                Source::Parser,
                destructive,
            ));
        }
    };
    // The directories besides the context's that later parts may run in (`cd DIR`).
    let mut changed: Vec<PathBuf> = Vec::new();
    let mut parts = Vec::with_capacity(split.parts.len());
    let mut worst: Option<Worst> = None;
    for (joint, text) in &split.parts {
        let trimmed = text.trim_matches([' ', '\t']);
        let mut decision = if trimmed == ":" && *joint == Some(Joint::Or) {
            Decision::new(Verdict::Allow, "`:` does nothing", Source::Builtin, false).with_rule(":")
        } else {
            decide_in(decide_part, rules, context, &changed, trimmed)
        };
        decision.destructive |= destructive;
        if decision.verdict == Verdict::Allow
            && let Some(next) = change_directory(context, &changed, trimmed)
        {
            match next {
                Ok(added) => changed.extend(added),
                Err(reason) => {
                    decision = Decision::new(Verdict::Ask, reason, Source::Parser, destructive);
                }
            }
        }
        // The strictest part decides; among allowed parts, one allowed by a rule rather than
        // the built-in list (the caller runs built-in-only commands read-only).
        let rank = |verdict: Verdict, source: Source| (verdict, source != Source::Builtin);
        let this = (
            parts.len(),
            decision.verdict,
            decision.source,
            decision.destructive,
        );
        if worst.is_none_or(|(_, verdict, source, _)| rank(this.1, this.2) > rank(verdict, source))
        {
            worst = Some(this);
        }
        parts.push(PartDecision {
            command: trimmed.to_owned(),
            decision: decision.verdict,
            reason: decision.reason,
            source: decision.source,
            rule: decision.rule,
        });
    }
    if let Some(decision) = read_inputs(context, &changed, &split.inputs, destructive) {
        return Some(decision);
    }
    Some(strictest(parts, worst?, destructive))
}

/// Asks when a `<` source is not a file this policy lets a command read, in any directory.
fn read_inputs(
    context: &Context,
    changed: &[PathBuf],
    inputs: &[&str],
    destructive: bool,
) -> Option<Decision> {
    for input in inputs {
        for cwd in directories(context, changed) {
            let result = if cwd == context.cwd {
                path_rule::path(context, "<", &Word::literal(*input), true)
            } else {
                let here = Context {
                    cwd: cwd.to_path_buf(),
                    ..context.clone()
                };
                path_rule::path(&here, "<", &Word::literal(*input), true)
            };
            if let Err(reason) = result {
                let reason = format!("reads standard input from a file: {reason}");
                return Some(Decision::new(
                    Verdict::Ask,
                    reason,
                    Source::Parser,
                    destructive,
                ));
            }
        }
    }
    None
}

/// The decision of the whole: the strictest part's, with every part's in [`Decision::parts`].
fn strictest(parts: Vec<PartDecision>, worst: Worst, destructive: bool) -> Decision {
    let (at, verdict, source, worst_destructive) = worst;
    let (reason, rule) = match verdict {
        Verdict::Allow => {
            // "every part is allowed (RULE, RULE …)"; the rule is the list in parentheses.
            const OPEN: &str = "every part is allowed (";
            let mut reason = String::with_capacity(OPEN.len() + 8 * parts.len());
            reason.push_str(OPEN);
            for (i, rule) in parts.iter().filter_map(|p| p.rule.as_deref()).enumerate() {
                if i > 0 {
                    reason.push_str(", ");
                }
                reason.push_str(rule);
            }
            let rules = reason[OPEN.len()..].to_owned();
            reason.push(')');
            (reason, Some(rules))
        }
        Verdict::Ask | Verdict::Deny => {
            let part = parts
                .iter()
                .find(|p| p.decision == verdict)
                .map_or("", |p| p.command.as_str());
            let reason = ["part `", part, "`: ", &parts[at].reason].concat();
            (reason, parts[at].rule.clone())
        }
    };
    Decision {
        verdict,
        reason,
        source,
        rule,
        destructive: destructive || worst_destructive,
        prefix: None,
        parts,
    }
}

/// Every directory a part may run in: the context's, then those `cd` added.
fn directories<'d>(context: &'d Context, changed: &'d [PathBuf]) -> impl Iterator<Item = &'d Path> {
    std::iter::once(context.cwd.as_path()).chain(changed.iter().map(PathBuf::as_path))
}

/// The parts of an `if … fi` without its keywords (`compound`).
fn without_if(mut split: Split<'_>) -> Result<Split<'_>, String> {
    // A keyword starts a part (after blanks) with one of these letters; most parts have none.
    let may_be_keyword = |text: &str| {
        text.trim_start_matches([' ', '\t'])
            .starts_with(['i', 't', 'e', 'f'])
    };
    if !split.parts.iter().any(|(_, text)| may_be_keyword(text)) {
        return Ok(split);
    }
    let parts: Vec<compound::Part<'_>> = split
        .parts
        .iter()
        .enumerate()
        .map(|(i, (joint, text))| {
            let redirected = split.redirected_first.contains(&i);
            (*joint == Some(Joint::Then), redirected, text.as_ref())
        })
        .collect();
    if let Some(texts) = compound::without_keywords(&parts)? {
        split.parts = split
            .parts
            .into_iter()
            .zip(texts)
            .filter_map(|((joint, _), text)| Some((joint, Cow::Owned(text?))))
            .collect();
        split.redirected_first.clear();
    }
    Ok(split)
}

/// The strictest decision of a part over every directory it may run in.
fn decide_in(
    decide_part: DecidePart,
    rules: &Rules,
    context: &Context,
    changed: &[PathBuf],
    text: &str,
) -> Decision {
    let mut worst: Option<Decision> = None;
    for cwd in directories(context, changed) {
        let decision = if cwd == context.cwd {
            decide_part(rules, context, text)
        } else {
            let here = Context {
                cwd: cwd.to_path_buf(),
                ..context.clone()
            };
            decide_part(rules, &here, text)
        };
        if worst.as_ref().is_none_or(|w| decision.verdict > w.verdict) {
            worst = Some(decision);
        }
    }
    worst.unwrap_or_else(|| Decision::new(Verdict::Ask, "has no directory", Source::Parser, true))
}

/// For a part that is `cd DIR`: the directories later parts may run in besides the current
/// ones (`Ok`), or why it asks (`Err`): no argument, an option, `-`, or outside the workspace.
/// `None` for any other part.
fn change_directory(
    context: &Context,
    changed: &[PathBuf],
    text: &str,
) -> Option<Result<Vec<PathBuf>, String>> {
    // A first word that is `cd` once unquoted starts with `c` or a quoting character; most
    // parts are not read again for it.
    if !text.starts_with(['c', '\'', '"', '\\']) {
        return None;
    }
    let words = split::split(text)?;
    if words.first().is_none_or(|w| w.text != "cd") {
        return None;
    }
    let ask = || {
        Err(format!(
            "`{text}` in a composed command asks (only `cd DIR` inside the workspace is followed)"
        ))
    };
    let [_, dir] = words.as_slice() else {
        return Some(ask());
    };
    let Some(dir) = dir
        .known()
        .filter(|d| !d.starts_with('-') && !d.starts_with('~'))
    else {
        return Some(ask());
    };
    let mut added = Vec::new();
    for cwd in directories(context, changed) {
        if !crate::workspace::lexically_inside(&context.workspace, cwd, dir) {
            return Some(ask());
        }
        added.push(crate::workspace::normalize(cwd, Path::new(dir)));
    }
    if 1 + changed.len() + added.len() > MAX_DIRECTORIES {
        return Some(Err(format!(
            "changes directory more than {MAX_DIRECTORIES} ways in one command"
        )));
    }
    Some(Ok(added))
}

/// Whether a text is empty or only blanks.
fn blank(text: &str) -> bool {
    text.bytes().all(|b| b == b' ' || b == b'\t')
}

/// Splits at top-level `|`, `&&`, `||`, `;` and removes harmless redirections. `Ok(None)` when
/// there is no operator or redirection outside quotes (not a composition), `Err` for anything
/// this module does not read. Reads bytes: every character it looks for is ASCII, and no
/// byte of a longer one is one, so every cut is on a character boundary.
fn split_parts(command: &str) -> Result<Option<Split<'_>>, String> {
    let unsupported = |what: &str| Err(format!("contains {what}"));
    let bytes = command.as_bytes();
    let mut split = Split::default();
    // The part being read: `taken` (the text before a removed redirection, if any) and then
    // `command[from..]`.
    let mut taken: Option<String> = None;
    let mut from = 0;
    // Where the word being read starts (none yet after a blank or operator), and whether it
    // holds quoting, to spot an fd number (`2>`).
    let mut word: Option<usize> = None;
    let mut word_quoted = false;
    let mut joint: Option<Joint> = None;
    let mut composed = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' | b'\\' => {
                let end = quoted_end(bytes, i)?;
                word_quoted = true;
                word.get_or_insert(i);
                i = end;
                continue;
            }
            b'$' | b'`' => return unsupported("an expansion or substitution ('$', '`')"),
            b'(' | b')' => return unsupported("a subshell or function ('(')"),
            b'\n' | b'\r' => return unsupported("a newline"),
            b'|' | b';' | b'&' if !(c == b'&' && bytes.get(i + 1) == Some(&b'>')) => {
                let (next_joint, width) = operator(c, bytes.get(i + 1).copied())?;
                let rest = &command[from..i];
                if taken.as_deref().is_none_or(blank) && blank(rest) {
                    return unsupported("an empty command before an operator");
                }
                split.parts.push((joint, part_text(taken.take(), rest)));
                if split.parts.len() > MAX_PARTS {
                    return Err(format!("has more than {MAX_PARTS} parts"));
                }
                joint = Some(next_joint);
                composed = true;
                word = None;
                word_quoted = false;
                i += width;
                from = i;
                continue;
            }
            b'>' | b'<' | b'&' => {
                // A redirection, with an fd number only as a word of its own digits.
                let fd = match word {
                    None => None,
                    Some(start)
                        if !word_quoted && bytes[start..i].iter().all(u8::is_ascii_digit) =>
                    {
                        Some(&command[start..i])
                    }
                    Some(_) => return unsupported("a redirection joined to a word"),
                };
                // The part's text without the fd number.
                let before = &command[from..i - fd.map_or(0, str::len)];
                if taken.as_deref().is_none_or(blank) && blank(before) {
                    split.redirected_first.push(split.parts.len());
                }
                let (consumed, input) = redirection(&command[i..], fd)?;
                if let Some(input) = input {
                    split.inputs.push(input);
                }
                let text = taken.get_or_insert_with(|| String::with_capacity(command.len()));
                text.push_str(before);
                text.push(' ');
                composed = true;
                word = None;
                word_quoted = false;
                i += consumed;
                from = i;
                continue;
            }
            b' ' | b'\t' => {
                word = None;
                word_quoted = false;
            }
            _ => {
                word.get_or_insert(i);
            }
        }
        i += 1;
    }
    if !composed {
        return Ok(None);
    }
    let rest = &command[from..];
    if taken.as_deref().is_none_or(blank) && blank(rest) {
        if joint != Some(Joint::Then) {
            return unsupported("an operator without a command after it");
        }
    } else {
        split.parts.push((joint, part_text(taken, rest)));
    }
    if split.parts.len() > MAX_PARTS {
        return Err(format!("has more than {MAX_PARTS} parts"));
    }
    Ok(Some(split))
}

/// The joint an operator (`|`, `&` or `;`, then the byte after it) makes and its width.
fn operator(first: u8, next: Option<u8>) -> Result<(Joint, usize), String> {
    let unsupported = |what: &str| Err(format!("contains {what}"));
    match (first, next) {
        (b'|', Some(b'|')) => Ok((Joint::Or, 2)),
        (b'|', Some(b'&')) => unsupported("'|&'"),
        (b'|', _) => Ok((Joint::Pipe, 1)),
        (b'&', Some(b'&')) => Ok((Joint::And, 2)),
        (b'&', _) => unsupported("a background operator ('&')"),
        (b';', Some(b';')) => unsupported("';;'"),
        _ => Ok((Joint::Then, 1)),
    }
}

/// A part's text: `rest` of the command, after what was `taken` before a removed redirection.
fn part_text(taken: Option<String>, rest: &str) -> Cow<'_, str> {
    match taken {
        None => Cow::Borrowed(rest),
        Some(text) => Cow::Owned(text + rest),
    }
}

/// The end (exclusive) of the quoted text or escape starting at `at` (`'…'`, `"…"`, `\x`),
/// in bytes (an escaped character longer than a byte ends inside it; its other bytes are
/// read as word bytes after).
fn quoted_end(bytes: &[u8], at: usize) -> Result<usize, String> {
    let unsupported = |what: &str| Err(format!("contains {what}"));
    match bytes[at] {
        b'\'' => match bytes[at + 1..].iter().position(|&c| c == b'\'') {
            Some(close) => Ok(at + close + 2),
            None => unsupported("an unclosed quote"),
        },
        b'"' => {
            let mut j = at + 1;
            loop {
                match bytes.get(j) {
                    None => return unsupported("an unclosed quote"),
                    Some(b'\\') => j += 2,
                    Some(b'"') => return Ok(j + 1),
                    Some(_) => j += 1,
                }
            }
        }
        _ => match bytes.get(at + 1) {
            None => unsupported("a trailing backslash"),
            Some(b'\n') => unsupported("a line continuation"),
            Some(_) => Ok(at + 2),
        },
    }
}

/// Reads one redirection at the start of `text` (its operator); returns the bytes it spans
/// and, for `<`, the file. Only the harmless forms pass.
fn redirection<'c>(text: &'c str, fd: Option<&str>) -> Result<(usize, Option<&'c str>), String> {
    let bytes = text.as_bytes();
    let (operator, width) = if text.starts_with("&>") {
        if bytes.get(2) == Some(&b'>') {
            return Err("contains a redirection that appends ('&>>')".to_owned());
        }
        ("&>", 2)
    } else if text.starts_with(">&") {
        (">&", 2)
    } else if text.starts_with(">>") || text.starts_with(">|") || text.starts_with("<>") {
        return Err(format!(
            "contains a redirection that writes ('{}')",
            &text[..2]
        ));
    } else if text.starts_with("<<") {
        return Err("contains a here-document or here-string ('<<')".to_owned());
    } else if text.starts_with("<&") {
        return Err("contains a redirection that duplicates input ('<&')".to_owned());
    } else if text.starts_with('>') {
        (">", 1)
    } else if text.starts_with('<') {
        ("<", 1)
    } else {
        return Err("contains a background operator ('&')".to_owned());
    };
    let mut i = width;
    if operator != ">&" {
        while bytes.get(i).is_some_and(|c| *c == b' ' || *c == b'\t') {
            i += 1;
        }
    }
    let start = i;
    while bytes
        .get(i)
        .is_some_and(|c| !matches!(c, b' ' | b'\t' | b'|' | b'&' | b';' | b'<' | b'>'))
    {
        i += 1;
    }
    let target = &text[start..i];
    let ok = match (operator, fd) {
        (">" | "&>", None) | (">", Some("1" | "2")) => target == "/dev/null",
        (">&", Some("2")) => target == "1",
        ("<", None | Some("0")) => {
            if !super::word::is_plain(target) {
                return Err(format!(
                    "contains a redirection from `{target}` (only a plain file name is read)"
                ));
            }
            return Ok((i, Some(target)));
        }
        _ => false,
    };
    if !ok {
        let fd = fd.unwrap_or("");
        return Err(format!(
            "contains a redirection (`{fd}{operator}{target}`; only 2>/dev/null, >/dev/null, \
             &>/dev/null, 2>&1 and < FILE are harmless)"
        ));
    }
    Ok((i, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn parts(command: &str) -> Result<Option<Vec<String>>, String> {
        split_parts(command).map(|s| {
            s.map(|s| {
                s.parts
                    .into_iter()
                    .map(|(_, p)| p.trim_matches([' ', '\t']).to_owned())
                    .collect()
            })
        })
    }

    /// A composed command split as before this module read bytes: by characters, every
    /// part an owned copy (the reference for [`split_parts`]).
    #[derive(Debug, Default, PartialEq)]
    struct CharSplit {
        parts: Vec<(Option<Joint>, String)>,
        inputs: Vec<String>,
        redirected_first: Vec<usize>,
    }

    fn split_by_chars(command: &str) -> Result<Option<CharSplit>, String> {
        let unsupported = |what: &str| Err(format!("contains {what}"));
        // Buffers sized once (a part is at most the command).
        let mut chars: Vec<char> = Vec::with_capacity(command.len());
        chars.extend(command.chars());
        let mut split = CharSplit::default();
        let mut current = String::with_capacity(command.len());
        // The unquoted text of the word being read, to spot an fd number (`2>`).
        let mut word = String::with_capacity(command.len());
        let mut word_quoted = false;
        let mut joint: Option<Joint> = None;
        let mut composed = false;
        let mut i = 0;
        let end_word = |word: &mut String, quoted: &mut bool| {
            word.clear();
            *quoted = false;
        };
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\'' | '"' | '\\' => {
                    let end = quoted_end_by_chars(&chars, i)?;
                    current.extend(&chars[i..end]);
                    word_quoted = true;
                    word.push('\'');
                    i = end;
                    continue;
                }
                '$' | '`' => return unsupported("an expansion or substitution ('$', '`')"),
                '(' | ')' => return unsupported("a subshell or function ('(')"),
                '\n' | '\r' => return unsupported("a newline"),
                '|' | ';' | '&' if !(c == '&' && chars.get(i + 1) == Some(&'>')) => {
                    let (next_joint, width) = match (c, chars.get(i + 1)) {
                        ('|', Some('|')) => (Joint::Or, 2),
                        ('|', Some('&')) => return unsupported("'|&'"),
                        ('|', _) => (Joint::Pipe, 1),
                        ('&', Some('&')) => (Joint::And, 2),
                        ('&', _) => return unsupported("a background operator ('&')"),
                        (';', Some(';')) => return unsupported("';;'"),
                        _ => (Joint::Then, 1),
                    };
                    if current.trim_matches([' ', '\t']).is_empty() {
                        return unsupported("an empty command before an operator");
                    }
                    let rest = String::with_capacity(command.len().saturating_sub(i));
                    split
                        .parts
                        .push((joint, std::mem::replace(&mut current, rest)));
                    if split.parts.len() > MAX_PARTS {
                        return Err(format!("has more than {MAX_PARTS} parts"));
                    }
                    joint = Some(next_joint);
                    composed = true;
                    end_word(&mut word, &mut word_quoted);
                    i += width;
                    continue;
                }
                '>' | '<' | '&' => {
                    // A redirection, with an fd number only as a word of its own digits.
                    let fd = if word.is_empty() {
                        None
                    } else if !word_quoted && word.chars().all(|c| c.is_ascii_digit()) {
                        Some(word.clone())
                    } else {
                        return unsupported("a redirection joined to a word");
                    };
                    if let Some(fd) = &fd {
                        // Drop the fd number from the part's text.
                        for _ in 0..fd.chars().count() {
                            current.pop();
                        }
                    }
                    if current.trim_matches([' ', '\t']).is_empty() {
                        split.redirected_first.push(split.parts.len());
                    }
                    let (consumed, input) = redirection_by_chars(&chars[i..], fd.as_deref())?;
                    if let Some(input) = input {
                        split.inputs.push(input);
                    }
                    current.push(' ');
                    composed = true;
                    end_word(&mut word, &mut word_quoted);
                    i += consumed;
                    continue;
                }
                ' ' | '\t' => end_word(&mut word, &mut word_quoted),
                _ => word.push(c),
            }
            current.push(c);
            i += 1;
        }
        if !composed {
            return Ok(None);
        }
        if current.trim_matches([' ', '\t']).is_empty() {
            if joint != Some(Joint::Then) {
                return unsupported("an operator without a command after it");
            }
        } else {
            split.parts.push((joint, current));
        }
        if split.parts.len() > MAX_PARTS {
            return Err(format!("has more than {MAX_PARTS} parts"));
        }
        Ok(Some(split))
    }

    /// The end (exclusive) of the quoted text or escape starting at `at` (`'…'`, `"…"`, `\x`).
    fn quoted_end_by_chars(chars: &[char], at: usize) -> Result<usize, String> {
        let unsupported = |what: &str| Err(format!("contains {what}"));
        match chars[at] {
            '\'' => match chars[at + 1..].iter().position(|&c| c == '\'') {
                Some(close) => Ok(at + close + 2),
                None => unsupported("an unclosed quote"),
            },
            '"' => {
                let mut j = at + 1;
                loop {
                    match chars.get(j) {
                        None => return unsupported("an unclosed quote"),
                        Some('\\') => j += 2,
                        Some('"') => return Ok(j + 1),
                        Some(_) => j += 1,
                    }
                }
            }
            _ => match chars.get(at + 1) {
                None => unsupported("a trailing backslash"),
                Some('\n') => unsupported("a line continuation"),
                Some(_) => Ok(at + 2),
            },
        }
    }

    /// Reads one redirection starting at its operator; returns the characters it spans and, for
    /// `<`, the file. Only the harmless forms pass.
    fn redirection_by_chars(
        chars: &[char],
        fd: Option<&str>,
    ) -> Result<(usize, Option<String>), String> {
        let text: String = chars.iter().take(3).collect();
        let (operator, width) = if text.starts_with("&>") {
            if chars.get(2) == Some(&'>') {
                return Err("contains a redirection that appends ('&>>')".to_owned());
            }
            ("&>", 2)
        } else if text.starts_with(">&") {
            (">&", 2)
        } else if text.starts_with(">>") || text.starts_with(">|") || text.starts_with("<>") {
            return Err(format!(
                "contains a redirection that writes ('{}')",
                &text[..2]
            ));
        } else if text.starts_with("<<") {
            return Err("contains a here-document or here-string ('<<')".to_owned());
        } else if text.starts_with("<&") {
            return Err("contains a redirection that duplicates input ('<&')".to_owned());
        } else if text.starts_with('>') {
            (">", 1)
        } else if text.starts_with('<') {
            ("<", 1)
        } else {
            return Err("contains a background operator ('&')".to_owned());
        };
        let mut i = width;
        if operator != ">&" {
            while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
                i += 1;
            }
        }
        let start = i;
        while chars
            .get(i)
            .is_some_and(|c| !matches!(c, ' ' | '\t' | '|' | '&' | ';' | '<' | '>'))
        {
            i += 1;
        }
        let target: String = chars[start..i].iter().collect();
        let ok = match (operator, fd) {
            (">" | "&>", None) | (">", Some("1" | "2")) => target == "/dev/null",
            (">&", Some("2")) => target == "1",
            ("<", None | Some("0")) => {
                if !super::super::word::is_plain(&target) {
                    return Err(format!(
                        "contains a redirection from `{target}` (only a plain file name is read)"
                    ));
                }
                return Ok((i, Some(target)));
            }
            _ => false,
        };
        if !ok {
            let fd = fd.unwrap_or("");
            return Err(format!(
                "contains a redirection (`{fd}{operator}{target}`; only 2>/dev/null, >/dev/null, \
                 &>/dev/null, 2>&1 and < FILE are harmless)"
            ));
        }
        Ok((i, None))
    }

    /// Commands made of operators, redirections, quotes, escapes, fd numbers, `if` keywords
    /// and characters longer than a byte.
    fn composed() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "ls",
            "a",
            "x y",
            " ",
            " ",
            "\t",
            "|",
            "||",
            "&",
            "&&",
            ";",
            ";;",
            ">",
            "<",
            ">>",
            ">|",
            "<>",
            "<<",
            "<&",
            ">&",
            "&>",
            "&>>",
            "|&",
            "2",
            "1",
            "0",
            "3",
            "12",
            "2>&1",
            "/dev/null",
            "file.txt",
            "'",
            "\"",
            "\\",
            "'a|b'",
            "\"a;b\"",
            "\"a\\\"b\"",
            "$",
            "`",
            "(",
            ")",
            "\n",
            "\r",
            "é",
            "ſ",
            "\\é",
            "if ",
            "then ",
            "else ",
            "fi",
            "! ",
            "cd src",
        ]);
        prop::collection::vec(piece, 0..14).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The byte reading splits, removes redirections, finds inputs and asks exactly as
        /// the character reading did.
        #[test]
        fn bytes_split_as_characters_did(command in composed()) {
            let by_bytes = split_parts(&command).map(|split| {
                split.map(|split| CharSplit {
                    parts: split
                        .parts
                        .into_iter()
                        .map(|(joint, text)| (joint, text.into_owned()))
                        .collect(),
                    inputs: split.inputs.iter().map(|s| (*s).to_owned()).collect(),
                    redirected_first: split.redirected_first,
                })
            });
            prop_assert_eq!(by_bytes, split_by_chars(&command), "{:?}", command);
        }
    }

    #[test]
    fn splits_at_operators_outside_quotes() {
        let ok = |c: &str, want: &[&str]| {
            let want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(parts(c), Ok(Some(want)), "{c:?}");
        };
        ok("a | b", &["a", "b"]);
        ok("a && b || c; d", &["a", "b", "c", "d"]);
        ok("a 2>/dev/null", &["a"]);
        ok("a 2>&1 | tail -n 5", &["a", "tail -n 5"]);
        ok("a >/dev/null 2>&1", &["a"]);
        ok("a &>/dev/null", &["a"]);
        ok("a 2> /dev/null", &["a"]);
        ok("rg 'x|y' src | head", &["rg 'x|y' src", "head"]);
        ok("cat < file", &["cat"]);
        ok("a;", &["a"]);
        assert_eq!(parts("ls -la"), Ok(None));
        assert_eq!(parts("rg 'a|b'"), Ok(None));
    }

    #[test]
    fn what_it_does_not_read_asks() {
        for c in [
            "a > x",
            "a >> /dev/null",
            "a 2>x",
            "a 3>/dev/null",
            "a>/dev/null",
            "a '2'>/dev/null",
            "a >&2",
            "a 1>&2",
            "a & b",
            "a |& b",
            "a <<EOF",
            "a <<< x",
            "a <> x",
            "(a) | b",
            "a $(b) | c",
            "a `b` | c",
            "a | b\nc",
            "a | $x",
            "| a",
            "a ||",
            "a && && b",
            "a < 'x y'",
            "a 'x | b",
        ] {
            assert!(parts(c).is_err(), "{c:?}: {:?}", parts(c));
        }
        let long = vec!["a"; MAX_PARTS + 1].join(" | ");
        assert!(parts(&long).is_err());
    }
}
