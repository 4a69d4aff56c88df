//! A parsed command string: its simple commands, what tree-sitter left unparsed, and the
//! shape of the top level — what the parser (`parse`) and its fast lexer (`lex`) build and
//! the rest of the policy reads. Also the reserved words both treat as not a command.

use super::word::Word;

/// One simple command: argv plus what surrounds it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Command {
    /// Program then arguments; empty when the command is only assignments or redirections.
    pub(super) words: Vec<Word>,
    /// `NAME=value` words before the program, as written.
    pub(super) assignments: Vec<String>,
    /// Whether the command has a redirection.
    pub(super) redirected: bool,
    /// Heredoc bodies and here-strings fed to its standard input.
    pub(super) stdin: Vec<Word>,
    /// A child node this code does not model, if any.
    pub(super) odd: Option<&'static str>,
}

/// The shape of a test (`[ … ]`, `[[ … ]]`), which tree-sitter reads as no simple command.
pub(super) const TEST: &str = "a test ('[[ … ]]')";

/// What the top level of a script is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Exactly one simple command (`commands[0]`), possibly with a trailing comment.
    Simple,
    /// Nothing but comments.
    Empty,
    /// Anything else, described for a person.
    Other(&'static str),
}

/// A parsed script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Script {
    /// Every simple command, in source order (outer before inner).
    pub(super) commands: Vec<Command>,
    /// Text a shell or program may run that tree-sitter leaves unparsed: known, non-plain
    /// values of variable assignments (`PAGER='rm -rf /' git log`) and backtick substitutions
    /// in unquoted heredoc bodies. The deny search reads them as scripts too.
    pub(super) embedded_code: Vec<String>,
    /// Whether tree-sitter found a syntax error or a missing token.
    pub(super) has_error: bool,
    /// Whether tree-sitter started a comment where the shell does not (at a `#` glued to a
    /// word, as in `a\⇥#x` or `]#`): the shell runs text the parser skipped. The commands of
    /// a corrected reading are added to `commands`, so the deny search still sees them.
    pub(super) misread: bool,
    /// Byte offsets of comments tree-sitter started at a glued `#` (consumed by [`parse`](super::parse::parse)).
    pub(super) glued_comments: Vec<usize>,
    /// The top-level shape.
    pub(super) shape: Shape,
}

/// Words that start a compound command; a plain command string starting with one goes to the
/// real parser. tree-sitter-bash sometimes reads one as a command name without reporting an
/// error (`! { rm x; }` gives a command `{ rm x`), so the deny search treats such a command
/// like a wrapper.
pub(super) const RESERVED_WORDS: &[&str] = &[
    "!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "time", "until", "while", "{", "}", "[[", "]]",
];

/// Whether `word` is one of [`RESERVED_WORDS`], by a `match` (the list is searched for
/// nearly every word the fast readings see).
pub(super) fn is_reserved(word: &str) -> bool {
    matches!(
        word,
        "!" | "case"
            | "coproc"
            | "do"
            | "done"
            | "elif"
            | "else"
            | "esac"
            | "fi"
            | "for"
            | "function"
            | "if"
            | "in"
            | "select"
            | "then"
            | "time"
            | "until"
            | "while"
            | "{"
            | "}"
            | "[["
            | "]]"
    )
}

impl Script {
    /// A script read without tree-sitter (`lex`): no error, no comment, nothing embedded.
    pub(super) fn read_plainly(commands: Vec<Command>, shape: Shape) -> Script {
        Script {
            commands,
            embedded_code: Vec::new(),
            has_error: false,
            misread: false,
            glued_comments: Vec::new(),
            shape,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The `match` holds exactly the listed words: each of them, and generated words
        /// near them (prefixes, other cases, an added character) only when listed.
        #[test]
        fn reserved_words_match_the_list(
            index in 0..RESERVED_WORDS.len(),
            cut in 0usize..9,
            extra in proptest::sample::select(vec!["", "a", "s", "e", "!", "{", "[", "]", " "]),
            upper in proptest::bool::ANY,
        ) {
            let listed = RESERVED_WORDS[index];
            proptest::prop_assert!(is_reserved(listed));
            let mut word = format!("{}{extra}", &listed[..cut.min(listed.len())]);
            if upper {
                word = word.to_ascii_uppercase();
            }
            proptest::prop_assert_eq!(is_reserved(&word), RESERVED_WORDS.contains(&word.as_str()));
        }
    }
}
