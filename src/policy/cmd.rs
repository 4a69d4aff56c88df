//! cmd.exe commands (`OsFamily::Windows`): a small, conservative tokenizer instead of a shell
//! parser. Owns cmd's metacharacters and how a line splits into commands for the deny search;
//! the allow side only ever sees a line without any metacharacter, split at blanks.
//!
//! For the deny search a line is split twice and both results are searched: once honouring
//! `"…"` (what cmd does) and once ignoring quotes, splitting at every quote and at the
//! separators of PowerShell and POSIX shells too (so `cmd /c "del x & rd y"` and
//! `powershell -c "ri x; rm y"` show their inner commands even without a parser for them).
//! Redirections and their targets are dropped (`>nul del x` runs `del`).

use super::word::{Word, WordKind};

/// cmd.exe characters that make a line more than one plain command, with how a person would
/// call them. Checked in addition to the POSIX set of DESIGN.md rule 3.
pub(super) const METACHARACTERS: &[(char, &str)] = &[
    ('^', "an escape ('^')"),
    ('%', "a variable ('%')"),
    ('!', "a delayed variable ('!')"),
    ('(', "a parenthesis ('(')"),
    (')', "a parenthesis (')')"),
    ('"', "a quote ('\"')"),
];

/// The commands of one cmd.exe line for the deny search, from both splits.
pub(super) fn segments(text: &str) -> Vec<Vec<Word>> {
    let mut out = Vec::new();
    split(text, false, &mut out);
    let mut blind = Vec::new();
    split(text, true, &mut blind);
    if blind != out {
        out.extend(blind);
    }
    let extra: Vec<Vec<Word>> = out.iter().filter_map(|a| split_program_switch(a)).collect();
    out.extend(extra);
    out
}

/// `del/q x` runs `del` with `/q`: cmd ends a built-in's name at `/` (and `.`, `+`).
fn split_program_switch(argv: &[Word]) -> Option<Vec<Word>> {
    let (first, rest) = argv.split_first()?;
    let text = first.known()?;
    if text.contains(['\\', ':']) {
        return None;
    }
    // `.` and `+` end a built-in's name as well (`del.`, `del+ x`).
    let at = text.find(['/', '.', '+']).filter(|&at| at > 0)?;
    let mut out = vec![Word::literal(&text[..at]), Word::literal(&text[at..])];
    out.extend_from_slice(rest);
    Some(out)
}

/// One word being read.
#[derive(Default)]
struct Pending {
    text: String,
    started: bool,
    dynamic: bool,
    pattern: bool,
}

impl Pending {
    fn push(&mut self, c: char) {
        self.started = true;
        match c {
            '%' | '!' => self.dynamic = true,
            '*' | '?' => self.pattern = true,
            _ => {}
        }
        self.text.push(c);
    }

    fn take(&mut self) -> Option<Word> {
        let pending = std::mem::take(self);
        pending.started.then_some(Word {
            text: pending.text,
            kind: if pending.dynamic {
                WordKind::Expansion
            } else if pending.pattern {
                WordKind::Pattern
            } else {
                WordKind::Literal
            },
        })
    }
}

/// Splits a line into commands. `blind` ignores quotes and splits at more characters.
fn split(text: &str, blind: bool, out: &mut Vec<Vec<Word>>) {
    let mut argv: Vec<Word> = Vec::new();
    let mut word = Pending::default();
    let mut quoted = false;
    let mut skip_target = false;
    let mut chars = text.chars().peekable();
    let end_word = |word: &mut Pending, argv: &mut Vec<Word>, skip: &mut bool| {
        if let Some(w) = word.take() {
            if *skip {
                *skip = false;
            } else {
                argv.push(w);
            }
        }
    };
    while let Some(c) = chars.next() {
        if c == '"' {
            if blind {
                end_word(&mut word, &mut argv, &mut skip_target);
            } else {
                quoted = !quoted;
                word.started = true;
            }
            continue;
        }
        if quoted {
            word.push(c);
            continue;
        }
        match c {
            '^' => match chars.next() {
                Some('\n' | '\r') | None => {}
                Some(next) => word.push(next),
            },
            // cmd also splits at vertical tab and form feed; a no-break space is split on
            // too (stricter for the deny search if cmd keeps it in the word).
            ' ' | '\t' | ',' | ';' | '=' | '\u{b}' | '\u{c}' | '\u{a0}' => {
                end_word(&mut word, &mut argv, &mut skip_target);
            }
            // `@del x` runs `del x`: cmd drops a leading `@` (echo off for the line).
            '@' if argv.is_empty() && !word.started => {}
            '\'' | '`' | '{' | '}' if blind => end_word(&mut word, &mut argv, &mut skip_target),
            '&' | '|' | '(' | ')' | '\n' | '\r' => {
                end_word(&mut word, &mut argv, &mut skip_target);
                skip_target = false;
                if !argv.is_empty() {
                    out.push(std::mem::take(&mut argv));
                }
            }
            '<' | '>' => {
                if word.started && word.text.chars().all(|d| d.is_ascii_digit()) {
                    word = Pending::default();
                } else {
                    end_word(&mut word, &mut argv, &mut skip_target);
                }
                while chars.next_if(|&n| n == '>' || n == '&').is_some() {}
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    while chars.next_if(char::is_ascii_digit).is_some() {}
                } else {
                    skip_target = true;
                }
            }
            _ => word.push(c),
        }
    }
    end_word(&mut word, &mut argv, &mut skip_target);
    if !argv.is_empty() {
        out.push(argv);
    }
}

/// The words of a line already known to hold no metacharacter: split at blanks.
pub(super) fn plain_words(text: &str) -> Vec<Word> {
    text.split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut pending = Pending::default();
            w.chars().for_each(|c| pending.push(c));
            pending.take().unwrap_or_else(Word::expansion)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn texts(text: &str) -> Vec<Vec<String>> {
        segments(text)
            .into_iter()
            .map(|argv| argv.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn lines_split_into_commands() {
        let cases: &[(&str, &[&[&str]])] = &[
            ("dir", &[&["dir"]]),
            ("dir & del x", &[&["dir"], &["del", "x"]]),
            (
                "dir && del x || rd y | more",
                &[&["dir"], &["del", "x"], &["rd", "y"], &["more"]],
            ),
            ("(del x)", &[&["del", "x"]]),
            ("echo hi > del", &[&["echo", "hi"]]),
            (">nul del x", &[&["del", "x"]]),
            ("del x 2>&1", &[&["del", "x"]]),
            ("d^el x", &[&["del", "x"]]),
            ("del,x", &[&["del", "x"]]),
            (
                "cmd /c \"del x & rd y\"",
                &[
                    &["cmd", "/c", "del x & rd y"],
                    &["cmd", "/c", "del", "x"],
                    &["rd", "y"],
                ],
            ),
            ("del/q x", &[&["del/q", "x"], &["del", "/q", "x"]]),
        ];
        for (input, want) in cases {
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|argv| argv.iter().map(|w| (*w).to_owned()).collect())
                .collect();
            assert_eq!(texts(input), want, "input: {input:?}");
        }
    }

    #[test]
    fn variables_are_unknown() {
        let argv = &segments("%X% /s")[0];
        assert_eq!(argv[0].kind, WordKind::Expansion);
        let argv = &segments("dir *.rs")[0];
        assert_eq!(argv[1].kind, WordKind::Pattern);
    }
}
