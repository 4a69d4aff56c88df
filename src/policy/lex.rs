//! The second fast path of the parser: a conservative lexer for the few shapes that most
//! commands take beyond plain words — `NAME=value` prefixes, pipelines and `&&`/`||`/`;`
//! lists of simple commands, plain tests (`[ -f x ]`), one `if … then … [elif …] [else …] fi`
//! of such lists (there a command may be negated: `if ! test -d x; …`), whole-word
//! `'…'`/`"…"` strings without expansions (a backslash inside them that stands for itself:
//! `"a\|b"`) or, as an argument, of one variable (`"$HOME"`, `"${HOME}"`: an unknown word)
//! or one substituted program without arguments (`"`whoami`"`, `"$(whoami)"`: an unknown
//! word, and the program a command after the one it is in),
//! plain text glued to a string without expansions (`--include="*.py"`), and trailing
//! `>FILE`/`2>&1` redirections — building the same [`Script`] tree-sitter-bash would (a
//! property test compares the two on generated commands of this grammar, field by field).
//! Anything else, or anything it is unsure of, is `None` and goes to tree-sitter: other `$`,
//! backticks, an unquoted `\` or one before a blank, `#`, newlines and control characters,
//! `((` anywhere, unquoted parentheses and braces, `[` (but a test of a plain shape at a
//! command's start: `[ -f x ]`), `!` (but before a command of an `if`'s list), `<`, `&` other
//! than in `&&`/`&>`/`>&`, other glued quotes (`"a"b`, `a"b"c`), a reserved or declaration
//! word (`if`, `export` …) as a program, `@` or `==` (tree-sitter-bash reads some of those
//! as errors). Owns only that lexing; decides nothing.

use super::script::{Command, Script, Shape, TEST, is_reserved};
use super::word::{ByteSet, Word, WordKind, has_pair};

/// Programs tree-sitter-bash reads as a declaration or `unset`, not a command.
mod if_statement;

const DECLARATION_WORDS: &[&str] = &[
    "declare", "typeset", "export", "readonly", "local", "unset", "unsetenv",
];

/// The unary tests of `[ -X WORD ]` and `[[ -X WORD ]]` read here (files and strings).
const UNARY_TESTS: &[&str] = &[
    "-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-n", "-z",
];

/// The binary tests of `[ WORD OP WORD ]` read here (not in `[[ … ]]`, where the right side
/// of `=` is a pattern).
const BINARY_TESTS: &[&str] = &["=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot"];

/// Most commands read this way; longer scripts go to tree-sitter.
const MAX_COMMANDS: usize = 16;

/// An unquoted character of a plain word (the `is_plain` set, `~`, and the glob `*`).
fn bare_char(b: u8) -> bool {
    const BARE: ByteSet = ByteSet::new(true, b"_./:,%+=-~*");
    BARE.contains(b)
}

/// How a statement's commands are joined, for the shape.
#[derive(Default)]
struct Statement {
    pipe: bool,
    list: bool,
    /// The last command so far has a redirection.
    redirect: bool,
    /// `|` operators since the last `&&`/`||`.
    pipes: usize,
}

/// Reads `text` as a script of this module's grammar, or `None`.
pub(super) fn parse(text: &str) -> Option<Script> {
    // `parse` reads texts with these again in other ways (escaped blanks, `((`), even
    // inside quotes. A lone `(` or `)` is read here only inside quotes: unquoted, it ends
    // no word and starts no operator of this grammar, so the text goes to tree-sitter.
    if has_pair(text, b'(', b'(') || escape_read_again(text) {
        return None;
    }
    let bytes = text.as_bytes();
    let mut lexer = Lexer {
        text,
        bytes,
        at: 0,
        substituted: Vec::new(),
    };
    lexer.blanks();
    if lexer.keyword("if") {
        return lexer.if_statement();
    }
    lexer.at = 0;
    let mut commands: Vec<Command> = Vec::new();
    let mut statements = 0usize;
    let mut statement = Statement::default();
    // Commands and tests read (a test adds no command, as in tree-sitter-bash's reading).
    let mut read = 0usize;
    let mut only_test = false;
    loop {
        lexer.blanks();
        let (command, redirected) = if lexer.peek() == Some(b'[') {
            lexer.test()?;
            only_test = read == 0;
            (None, false)
        } else {
            let (command, redirected) = lexer.command()?;
            (Some(command), redirected)
        };
        read += 1;
        commands.extend(command);
        commands.append(&mut lexer.substituted);
        if read > MAX_COMMANDS {
            return None;
        }
        // tree-sitter-bash reads a redirection of the last command as one of the whole
        // statement (`a | b 2>/dev/null` is a redirected pipeline).
        statement.redirect = redirected;
        lexer.blanks();
        let operator = lexer.operator()?;
        // A redirection in the middle of a statement may take the commands before it along
        // (`a && b 2>x | c` is a pipeline to tree-sitter-bash): only the first and the last
        // command of a statement are read here with one.
        let first = !statement.pipe && !statement.list;
        if redirected && !first && matches!(operator, Operator::Pipe | Operator::List) {
            return None;
        }
        match operator {
            Operator::Pipe => {
                statement.pipe = true;
                statement.pipes += 1;
            }
            Operator::List => {
                // tree-sitter-bash reads a pipeline of three or more commands before `&&`/`||`
                // as one pipeline (`a | b | c && d`), the shell as a list.
                if statement.pipes >= 2 {
                    return None;
                }
                statement.list = true;
                statement.pipes = 0;
            }
            Operator::Then => {
                statements += 1;
                // Only blanks after a final `;`: the script ends here.
                lexer.blanks();
                if lexer.at == bytes.len() {
                    break;
                }
                statement = Statement::default();
            }
            Operator::End => {
                statements += 1;
                break;
            }
        }
    }
    let shape = if statements > 1 {
        Shape::Other("more than one command")
    } else if statement.redirect {
        Shape::Other("a redirection")
    } else if statement.list {
        Shape::Other("a command list")
    } else if statement.pipe {
        Shape::Other("a pipeline")
    } else if only_test {
        Shape::Other(TEST)
    } else {
        Shape::Simple
    };
    Some(Script::read_plainly(commands, shape))
}

enum Operator {
    End,
    Pipe,
    List,
    Then,
}

struct Lexer<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    /// The commands substituted in the words of the command being read (`"`whoami`"`), which
    /// tree-sitter-bash lists right after it.
    substituted: Vec<Command>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    /// Whether the next character ends a word (blank, operator start or the end).
    fn at_word_end(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(b' ' | b'\t' | b'|' | b'&' | b';' | b'>')
        )
    }

    /// `|`, `&&`, `||`, `;`, the end, or anything else (`None`).
    fn operator(&mut self) -> Option<Operator> {
        let next = self.bytes.get(self.at + 1).copied();
        let (operator, width) = match (self.peek(), next) {
            (None, _) => (Operator::End, 0),
            (Some(b'|'), Some(b'|')) | (Some(b'&'), Some(b'&')) => (Operator::List, 2),
            (Some(b'|'), next) if next != Some(b'&') => (Operator::Pipe, 1),
            (Some(b';'), next) if !matches!(next, Some(b';' | b'&')) => (Operator::Then, 1),
            _ => return None,
        };
        self.at += width;
        Some(operator)
    }

    /// One simple command: assignments, words, then redirections; and whether it has one.
    fn command(&mut self) -> Option<(Command, bool)> {
        let mut command = Command::default();
        while let Some(assignment) = self.assignment() {
            command.assignments.push(assignment.to_owned());
            self.blanks();
        }
        let start = self.at;
        let program = self.single_word()?;
        // A program name of letters, digits and `_ . / + - *` only (tree-sitter-bash reads
        // `a=b x:y` as an error); a glob (`*.rs`, a quoted argument searched as a command
        // string) stays a pattern, quoted text stays literal; a variable (`"$X"`) is left
        // to tree-sitter.
        let quoted = !self.bytes[start..].starts_with(program.text.as_bytes());
        if (quoted && program.kind != WordKind::Literal)
            || program.kind == WordKind::Expansion
            || program.text.starts_with(['-', '~'])
            || !program.text.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'+' | b'-' | b'*')
            })
            || is_reserved(&program.text)
            || DECLARATION_WORDS.contains(&program.text.as_str())
        {
            return None;
        }
        command.words.push(program);
        loop {
            self.blanks();
            match self.peek() {
                Some(b'&') if self.bytes.get(self.at + 1) == Some(&b'>') => break,
                None | Some(b'|' | b'&' | b';') => return Some((command, false)),
                Some(b'>') => break,
                Some(b'1' | b'2') if self.fd_redirect() => break,
                Some(_) => {
                    let word = self.word()?;
                    command.words.push(word);
                }
            }
        }
        // Redirections end the command: nothing but more of them may follow.
        loop {
            self.redirect()?;
            self.blanks();
            match self.peek() {
                None | Some(b'|' | b';') => return Some((command, true)),
                Some(b'&') if self.bytes.get(self.at + 1) == Some(&b'&') => {
                    return Some((command, true));
                }
                _ => {}
            }
        }
    }

    /// A test command of one of the plain shapes `[ -X WORD ]`, `[ WORD OP WORD ]` or
    /// `[[ -X WORD ]]`, the operator unquoted, the operands plain words or quoted text without
    /// brackets, `=`, `-` at the start or globs; anything else is `None`. Only an operator or
    /// the end may follow (tree-sitter-bash reads a redirection of a test as one of the
    /// statement).
    fn test(&mut self) -> Option<()> {
        let double = self.bytes[self.at..].starts_with(b"[[");
        let close: &[u8] = if double { b"]]" } else { b"]" };
        self.at += close.len();
        if !matches!(self.peek(), Some(b' ' | b'\t')) {
            return None;
        }
        let mut words = Vec::new();
        loop {
            self.blanks();
            if self.bytes[self.at..].starts_with(close) {
                self.at += close.len();
                if !self.at_word_end() {
                    return None;
                }
                break;
            }
            if words.len() == 3 {
                return None;
            }
            // Whether the word is quoted: tree-sitter-bash reads only a bare operator as one.
            let quoted = matches!(self.peek(), Some(b'\'' | b'"'));
            words.push((self.single_word()?, quoted));
        }
        // tree-sitter-bash reads a test's operands as expressions: `%` and a lone `+` or `/`
        // are its operators there, so such words are left to it.
        let operand = |(word, _): &(Word, bool)| {
            word.kind == WordKind::Literal
                && !word.text.is_empty()
                && !word.text.starts_with('-')
                && !word.text.contains([
                    '[', ']', '(', ')', '=', '*', '?', '~', '{', '}', '#', '<', '>', '\\', '%',
                ])
                && (word.text.len() != 1 || !word.text.bytes().all(|b| b.is_ascii_punctuation()))
        };
        let unary =
            |(word, quoted): &(Word, bool)| !quoted && UNARY_TESTS.contains(&word.text.as_str());
        let binary =
            |(word, quoted): &(Word, bool)| !quoted && BINARY_TESTS.contains(&word.text.as_str());
        match words.as_slice() {
            [test, word] if unary(test) && operand(word) => Some(()),
            [left, test, right] if !double && binary(test) && operand(left) && operand(right) => {
                Some(())
            }
            _ => None,
        }
    }

    /// Whether a digit here starts a redirection (`2>`): `1` or `2`, then `>`.
    fn fd_redirect(&self) -> bool {
        self.bytes.get(self.at + 1) == Some(&b'>')
    }

    /// `>FILE`, `N>FILE`, `N>&M`, `&>FILE`: the target a plain word.
    fn redirect(&mut self) -> Option<()> {
        if matches!(self.peek(), Some(b'1' | b'2')) {
            // tree-sitter-bash reads `0>x` as an argument `0` and a redirection.
            self.at += 1;
        } else if self.peek() == Some(b'&') {
            self.at += 1;
            if self.peek() != Some(b'>') || self.bytes.get(self.at + 1) == Some(&b'>') {
                return None;
            }
            self.at += 1;
            return self.redirect_target();
        }
        if self.peek() != Some(b'>') {
            return None;
        }
        self.at += 1;
        match self.peek() {
            Some(b'>' | b'|' | b'(') => None,
            Some(b'&') => {
                self.at += 1;
                self.peek().filter(|b| matches!(b, b'1' | b'2'))?;
                self.at += 1;
                self.at_word_end().then_some(())
            }
            _ => self.redirect_target(),
        }
    }

    fn redirect_target(&mut self) -> Option<()> {
        self.blanks();
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'))
        {
            self.at += 1;
        }
        (self.at > start && self.at_word_end()).then_some(())
    }

    /// `NAME=value` with a plain value, or `None` (nothing consumed).
    fn assignment(&mut self) -> Option<&str> {
        let start = self.at;
        let rest = &self.bytes[start..];
        let name = rest
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        // tree-sitter-bash reads `_=x` as a word, not an assignment (the shell assigns `_`).
        if name == 0
            || rest[0].is_ascii_digit()
            || &rest[..name] == b"_"
            || rest.get(name) != Some(&b'=')
        {
            return None;
        }
        let value = rest[name + 1..]
            .iter()
            .take_while(|&&b| {
                b.is_ascii_alphanumeric()
                    || matches!(b, b'_' | b'.' | b'/' | b':' | b',' | b'%' | b'+' | b'-')
            })
            .count();
        let end = start + name + 1 + value;
        if value == 0 {
            return None;
        }
        self.at = end;
        if !self.at_word_end() || !matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at = start;
            return None;
        }
        Some(&self.text[start..end])
    }

    /// One argument: plain characters, a whole `'…'` or `"…"` string, or plain characters
    /// glued to one such string (`--include="*.py"`, `-g'*.rs'`).
    fn word(&mut self) -> Option<Word> {
        let start = self.at;
        let word = self.whole_word()?;
        if !matches!(self.peek(), Some(b'\'' | b'"')) || word.text.is_empty() {
            return self.at_word_end().then_some(word);
        }
        // Glued: tree-sitter-bash reads a concatenation of the plain text and the string.
        // Only plain text without a glob or a digit at its end (a number to tree-sitter) is
        // read here.
        let glued = self.bytes[start] != b'\''
            && self.bytes[start] != b'"'
            && word.kind == WordKind::Literal
            && !word.text.ends_with(|c: char| c.is_ascii_digit())
            && !word.text.starts_with(['~', '=']);
        if !glued {
            return None;
        }
        let quoted = self.whole_word()?;
        if !self.at_word_end() || quoted.kind != WordKind::Literal {
            return None;
        }
        Some(Word::literal(word.text + &quoted.text))
    }

    /// One word that is not glued to another: plain characters, or a whole `'…'` or `"…"`
    /// string (for a program name and the operands of a test).
    fn single_word(&mut self) -> Option<Word> {
        let word = self.whole_word()?;
        self.at_word_end().then_some(word)
    }

    /// Plain characters, or a whole `'…'` or `"…"` string, up to what follows (not checked).
    fn whole_word(&mut self) -> Option<Word> {
        let start = self.at;
        let word = match self.peek()? {
            b'\'' => {
                let close = self.bytes[start + 1..].iter().position(|&b| b == b'\'')?;
                let inner = &self.text[start + 1..start + 1 + close];
                if inner.chars().any(char::is_control) {
                    return None;
                }
                self.at = start + close + 2;
                Word::literal(inner)
            }
            b'"' => {
                let close = self.bytes[start + 1..].iter().position(|&b| b == b'"')?;
                let inner = &self.text[start + 1..start + 1 + close];
                // A string of one variable (`"$HOME"`, `"${HOME}"`): one unknown word.
                if inner.strip_prefix('$').is_some_and(is_variable) {
                    self.at = start + close + 2;
                    return Some(Word::expansion());
                }
                // A string of one substituted program without arguments (`"`whoami`"`,
                // `"$(whoami)"`): one unknown word, and the program a command of its own.
                if let Some(program) = substituted_program(inner) {
                    self.at = start + close + 2;
                    self.substituted.push(Command {
                        words: vec![Word::literal(program)],
                        ..Command::default()
                    });
                    return Some(Word::expansion());
                }
                // tree-sitter-bash drops the text of a string of blanks only (`" "`).
                let blanks = !inner.is_empty() && inner.bytes().all(|b| b == b' ');
                if blanks
                    || inner
                        .chars()
                        .any(|c| c.is_control() || matches!(c, '$' | '`' | '!'))
                    || !literal_backslashes(inner)
                {
                    return None;
                }
                self.at = start + close + 2;
                Word::literal(inner)
            }
            _ => {
                let len = self.bytes[start..]
                    .iter()
                    .take_while(|&&b| bare_char(b))
                    .count();
                if len == 0 {
                    return None;
                }
                let text = &self.text[start..start + len];
                // `2>x` is a redirection of descriptor 2, `==` an error to tree-sitter, which
                // also drops a `-` before a redirection (`ls - 1>x`) and reports an error for
                // some words ending in a digit glued to one (`*2>x`, `_2>x`; the shell runs
                // `*2` with its output redirected).
                let digit_last = text.bytes().last().is_some_and(|b| b.is_ascii_digit());
                let fd = digit_last && self.bytes.get(start + len) == Some(&b'>');
                if text == "-" || has_pair(text, b'=', b'=') || has_pair(text, b'=', b'~') || fd {
                    return None;
                }
                self.at = start + len;
                Word {
                    text: text.to_owned(),
                    kind: if text.contains('*') {
                        WordKind::Pattern
                    } else {
                        WordKind::Literal
                    },
                }
            }
        };
        Some(word)
    }
}

/// A variable's name as `$` may take it in a string: `NAME` or `{NAME}`, the name a letter or
/// `_` and then letters, digits and `_` (not a positional or special parameter, `$1`, `$@`).
fn is_variable(text: &str) -> bool {
    let name = text
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or(text);
    name.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The program of a command substitution of one plain program name (`` `NAME` ``,
/// `$(NAME)`), the name a letter or `_` and then letters, digits and `_ . -`, and no reserved
/// or declaration word; `None` for anything else.
fn substituted_program(text: &str) -> Option<&str> {
    let name = text
        .strip_prefix('`')
        .and_then(|rest| rest.strip_suffix('`'))
        .or_else(|| {
            text.strip_prefix("$(")
                .and_then(|rest| rest.strip_suffix(')'))
        })?;
    let plain = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    (plain && !is_reserved(name) && !DECLARATION_WORDS.contains(&name)).then_some(name)
}

/// Whether `parse` reads the text again in other ways for a backslash in it: one before a
/// blank, a line break or the end (escaped blanks, line continuations). Any other backslash
/// is read by the lexer only inside quotes; unquoted, it ends no word, and the text goes to
/// tree-sitter.
fn escape_read_again(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, &b)| {
        b == b'\\' && matches!(bytes.get(at + 1), None | Some(b' ' | b'\t' | b'\n' | b'\r'))
    })
}

/// Whether every backslash inside `"…"` (given without its quotes) stands for itself: one
/// before a character other than `$`, a backquote, `"`, `\\` or a line break (the closing
/// quote after a final backslash would be escaped).
fn literal_backslashes(inner: &str) -> bool {
    let bytes = inner.as_bytes();
    bytes.iter().enumerate().all(|(at, &b)| {
        b != b'\\'
            || bytes
                .get(at + 1)
                .is_some_and(|next| !matches!(next, b'$' | b'`' | b'"' | b'\\' | b'\n'))
    })
}
