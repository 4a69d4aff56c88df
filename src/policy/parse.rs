//! POSIX shell parsing with tree-sitter-bash: turns a command string into every simple command
//! it contains (at any depth: lists, pipelines, `$(…)`, backticks, `<(…)`, subshells, groups,
//! loops, functions, heredoc bodies) plus the shape of the top level. Owns the tree walk and
//! word extraction; does not decide anything.
//!
//! The walk is iterative (a tree cursor), so 500 nested `$(…)` cannot overflow the stack. A
//! command string made only of plain words skips tree-sitter: splitting it at blanks is all a
//! shell would do with it (a test checks both paths agree).

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

use super::lex;
use super::script::{Command, Script, Shape, TEST, is_reserved};
use super::word::{Word, WordBuilder, decode_ansi_c, is_plain, is_plain_byte};

thread_local! {
    /// One parser per thread: creating one costs more than parsing a short command.
    static PARSER: RefCell<Option<Parser>> = RefCell::new(new_parser());
}

fn new_parser() -> Option<Parser> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    Some(parser)
}

#[cfg(test)]
thread_local! {
    /// Tests compare the `lex` fast path with tree-sitter's reading by turning it off.
    pub(super) static SLOW_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Parses a command string (the caller has checked its size): plain words and the shapes of
/// `lex` without tree-sitter, everything else with it.
pub(super) fn parse(text: &str) -> Script {
    if let Some(script) = parse_plain(text) {
        return script;
    }
    #[cfg(test)]
    if SLOW_ONLY.get() {
        return parse_slow(text);
    }
    if let Some(script) = lex::parse(text) {
        return script;
    }
    parse_slow(text)
}

/// The full reading: tree-sitter, corrected where it is known to differ from the shell.
pub(super) fn parse_slow(text: &str) -> Script {
    let mut script = parse_tree(text);
    correct_glued_comments(text, &mut script);
    // tree-sitter-bash glues a line that starts with `\` to the command before it
    // (`ls⏎\rm x` reads as `ls \rm x`); shells ignore leading blanks, so a copy with one
    // added is read too. It also takes `\` + blank for a blank, where the shell keeps an
    // escaped blank inside the word (`x=1\⇥\' zap` runs `zap`); a copy with each escaped blank
    // made plain characters is read too. Their commands only ever add deny findings.
    let continued = text.contains("\n\\").then(|| text.replace("\n\\", "\n \\"));
    let unescaped = escaped_blanks_made_plain(text);
    // `sh` takes a carriage return for a plain character, the parser `\` + CR LF for a line
    // continuation; dash reads `((` as two subshells, the parser as arithmetic.
    let returns = text.contains('\r').then(|| text.replace('\r', "_"));
    let subshells = text
        .contains("((")
        .then(|| text.replace("((", "( (").replace("))", ") )"));
    for variant_text in [continued, unescaped, returns, subshells]
        .into_iter()
        .flatten()
    {
        let mut variant = parse_tree(&variant_text);
        correct_glued_comments(&variant_text, &mut variant);
        script.has_error |= variant.has_error;
        script.misread |= variant.misread;
        script.commands.extend(variant.commands);
        script.embedded_code.extend(variant.embedded_code);
    }
    script
}

/// The text with every backslash-escaped blank (`\ `, `\⇥`) replaced by two plain characters,
/// or `None` when it has none. Quotes are not tracked: inside them the replacement changes no
/// structure.
fn escaped_blanks_made_plain(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(' ' | '\t') => {
                out.push_str("__");
                changed = true;
            }
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            None => out.push('\\'),
        }
    }
    changed.then_some(out)
}

/// Most corrected readings of one string: each removes at least one misread comment, and real
/// commands have none.
const MAX_COMMENT_CORRECTIONS: usize = 8;

/// Where tree-sitter starts a comment at a `#` the shell keeps inside a word, reads the text
/// again with that `#` made a plain character, until the readings agree; the commands found
/// are added (they only ever add deny findings) and the script is marked misread.
fn correct_glued_comments(text: &str, script: &mut Script) {
    if script.glued_comments.is_empty() {
        return;
    }
    script.misread = true;
    let mut corrected = text.to_owned();
    let mut glued = std::mem::take(&mut script.glued_comments);
    for _ in 0..MAX_COMMENT_CORRECTIONS {
        for at in glued {
            corrected.replace_range(at..=at, "_");
        }
        let variant = parse_tree(&corrected);
        script.has_error |= variant.has_error;
        script.commands.extend(variant.commands);
        script.embedded_code.extend(variant.embedded_code);
        glued = variant.glued_comments;
        if glued.is_empty() {
            return;
        }
    }
    script.has_error = true;
}

/// Whether a comment starting at byte `at` starts where the shell would not start one: a `#`
/// begins a comment only at the start of a word, after an unescaped blank, newline or
/// operator character (POSIX 2.3 rule 9).
fn comment_is_glued(text: &str, at: usize) -> bool {
    let before = text.get(..at).unwrap_or("");
    let Some(previous) = before.chars().next_back() else {
        return false;
    };
    if !matches!(
        previous,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    ) {
        return true;
    }
    let backslashes = before[..before.len() - previous.len_utf8()]
        .chars()
        .rev()
        .take_while(|&c| c == '\\')
        .count();
    backslashes % 2 == 1
}

/// The fast path: blanks and plain characters only, no assignment, no reserved word. (Also
/// right where tree-sitter-bash is wrong: it rejects the plain words `me@x.com` and `==`.)
fn parse_plain(text: &str) -> Option<Script> {
    // By bytes: every plain character is ASCII, and no byte of a longer one is.
    // One pass checks the characters and counts the words, so the list is allocated once.
    let mut count = 0;
    let mut in_word = false;
    for b in text.bytes() {
        let blank = b == b' ' || b == b'\t';
        if !blank && b != b'~' && !is_plain_byte(b) {
            return None;
        }
        count += usize::from(!blank && !in_word);
        in_word = !blank;
    }
    let mut words: Vec<Word> = Vec::with_capacity(count);
    let mut start = None;
    // By bytes: every character is ASCII here.
    for (at, b) in text.bytes().chain([b' ']).enumerate() {
        let blank = b == b' ' || b == b'\t';
        match start {
            Some(from) if blank => {
                words.push(Word::literal(&text[from..at]));
                start = None;
            }
            None if !blank => start = Some(at),
            _ => {}
        }
    }
    let first = words.first()?;
    // A program name starting with `-` is left to tree-sitter too (it reads `- a=` as an
    // assignment); either way such a command asks.
    if first.text.contains('=') || first.text.starts_with('-') || is_reserved(&first.text) {
        return None;
    }
    Some(Script {
        commands: vec![Command {
            words,
            ..Command::default()
        }],
        embedded_code: Vec::new(),
        has_error: false,
        misread: false,
        glued_comments: Vec::new(),
        shape: Shape::Simple,
    })
}

/// Parses with tree-sitter; a parser that cannot be built (a bug) reads as a syntax error.
pub(super) fn parse_tree(text: &str) -> Script {
    let tree: Option<Tree> =
        PARSER.with_borrow_mut(|parser| parser.as_mut().and_then(|p| p.parse(text, None)));
    let Some(tree) = tree else {
        return Script {
            commands: Vec::new(),
            embedded_code: Vec::new(),
            has_error: true,
            misread: false,
            glued_comments: Vec::new(),
            shape: Shape::Other("a command the parser could not read"),
        };
    };
    let root = tree.root_node();
    let mut walk = Walk {
        src: text,
        commands: Vec::new(),
        embedded_code: Vec::new(),
        pending_stdin: Vec::new(),
        glued_comments: Vec::new(),
    };
    walk.run(root);
    Script {
        commands: walk.commands,
        embedded_code: walk.embedded_code,
        has_error: root.has_error(),
        misread: false,
        glued_comments: walk.glued_comments,
        shape: shape(root),
    }
}

/// The top-level shape of a parsed tree.
fn shape(root: Node<'_>) -> Shape {
    let mut cursor = root.walk();
    let mut statements = root
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment");
    let Some(first) = statements.next() else {
        return Shape::Empty;
    };
    if statements.next().is_some() {
        return Shape::Other("more than one command");
    }
    match first.kind() {
        "command" => Shape::Simple,
        "pipeline" => Shape::Other("a pipeline"),
        "list" => Shape::Other("a command list"),
        "subshell" => Shape::Other("a subshell"),
        "compound_statement" => Shape::Other("a group or an arithmetic command"),
        "negated_command" => Shape::Other("a negated command ('!')"),
        "test_command" => Shape::Other(TEST),
        "redirected_statement" => Shape::Other("a redirection"),
        "variable_assignment" | "variable_assignments" => Shape::Other("a variable assignment"),
        "declaration_command" | "unset_command" => Shape::Other("a variable declaration"),
        "function_definition" => Shape::Other("a function definition"),
        "if_statement"
        | "case_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "while_statement" => Shape::Other("a compound command"),
        _ => Shape::Other("a construct the policy does not model"),
    }
}

/// Deepest nesting of word pieces (concatenations inside strings…) read before a word counts
/// as unknown; real words nest two or three levels.
const MAX_WORD_DEPTH: usize = 16;

struct Walk<'s> {
    src: &'s str,
    commands: Vec<Command>,
    embedded_code: Vec<String>,
    /// Heredoc bodies waiting for their command: (command node id, body).
    pending_stdin: Vec<(usize, Word)>,
    /// Byte offsets of comments the shell would not start (see [`comment_is_glued`]).
    glued_comments: Vec<usize>,
}

impl<'s> Walk<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// Visits every node once, pre-order, without recursion.
    fn run(&mut self, root: Node<'_>) {
        let mut cursor = root.walk();
        loop {
            self.visit(cursor.node());
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return;
                }
            }
        }
    }

    fn visit(&mut self, node: Node<'_>) {
        match node.kind() {
            "command" => {
                let mut command = self.command(node);
                let id = node.id();
                for (_, body) in self.pending_stdin.extract_if(.., |(owner, _)| *owner == id) {
                    command.stdin.push(body);
                }
                self.commands.push(command);
            }
            "declaration_command" | "unset_command" => {
                let command = self.declaration(node);
                self.commands.push(command);
            }
            "redirected_statement" => self.heredocs(node),
            "comment" if comment_is_glued(self.src, node.start_byte()) => {
                self.glued_comments.push(node.start_byte());
            }
            "heredoc_redirect" => self.heredoc_backticks(node),
            "variable_assignment" => {
                if let Some(value) = node.child_by_field_name("value") {
                    let value = self.word(value);
                    if let Some(text) = value.known()
                        && !is_plain(text)
                    {
                        self.embedded_code.push(text.to_owned());
                    }
                }
            }
            _ => {}
        }
    }

    fn command(&self, node: Node<'_>) -> Command {
        let mut command = Command::default();
        let mut cursor = node.walk();
        if !cursor.goto_first_child() {
            return command;
        }
        let mut previous_end: Option<usize> = None;
        loop {
            let child = cursor.node();
            // Words must be separated by plain blanks: tree-sitter-bash splits at `\⇥`, where
            // a shell keeps one word (`which\⇥ls` runs a program named "which⇥").
            if let Some(end) = previous_end {
                let gap = self.src.get(end..child.start_byte()).unwrap_or("");
                if gap.is_empty() || !gap.chars().all(|c| c == ' ' || c == '\t') {
                    command.odd = Some("an unusual separator between words");
                }
            }
            previous_end = Some(child.end_byte());
            match cursor.field_name() {
                Some("name") => {
                    if !command.words.is_empty() {
                        command.odd = Some("a second program name");
                    }
                    command.words.insert(0, self.word(child));
                }
                Some("argument") => {
                    if command.words.is_empty() {
                        command.odd = Some("an argument before the program");
                    }
                    command.words.push(self.word(child));
                }
                Some("redirect") => {
                    command.redirected = true;
                    if child.kind() == "herestring_redirect" {
                        let body = child
                            .named_child(0)
                            .map_or_else(Word::expansion, |w| self.word(w));
                        command.stdin.push(body);
                    }
                }
                _ => match child.kind() {
                    "variable_assignment" => command.assignments.push(self.text(child).to_owned()),
                    "comment" => {}
                    _ => command.odd = Some("a construct the policy does not model"),
                },
            }
            if !cursor.goto_next_sibling() {
                return command;
            }
        }
    }

    /// `export`, `declare`, `unset` …: the keyword and its plain words, so that a deny rule
    /// naming them applies; their assignments are visited on their own.
    fn declaration(&self, node: Node<'_>) -> Command {
        let mut command = Command::default();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() && command.words.is_empty() {
                command.words.push(Word::literal(self.text(child)));
            } else if child.is_named() && child.kind() != "variable_assignment" {
                command.words.push(self.word(child));
            }
        }
        command
    }

    /// Records the heredoc bodies of a redirected simple command for that command.
    fn heredocs(&mut self, node: Node<'_>) {
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        if body.kind() != "command" {
            return;
        }
        let mut cursor = node.walk();
        for redirect in node.children_by_field_name("redirect", &mut cursor) {
            if redirect.kind() != "heredoc_redirect" {
                continue;
            }
            let mut inner = redirect.walk();
            for part in redirect.named_children(&mut inner) {
                if part.kind() != "heredoc_body" {
                    continue;
                }
                let mut parts = part.walk();
                let expands = part
                    .named_children(&mut parts)
                    .any(|n| n.kind() != "heredoc_content");
                let word = if expands {
                    Word::expansion()
                } else {
                    Word::literal(self.text(part))
                };
                self.pending_stdin.push((body.id(), word));
            }
        }
    }

    /// tree-sitter-bash does not parse `` `…` `` inside an unquoted heredoc body; the shell
    /// runs it, so each backtick segment is kept as embedded code.
    fn heredoc_backticks(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let mut quoted = false;
        for part in node.named_children(&mut cursor) {
            match part.kind() {
                "heredoc_start" => quoted = self.text(part).contains(['\'', '"', '\\']),
                "heredoc_body" if !quoted => {
                    let body = self.text(part);
                    for segment in body.split('`').skip(1).step_by(2) {
                        self.embedded_code.push(segment.replace("\\`", "`"));
                    }
                }
                _ => {}
            }
        }
    }

    fn word(&self, node: Node<'_>) -> Word {
        let mut builder = WordBuilder::default();
        self.piece(node, &mut builder, 0);
        builder.finish()
    }

    fn piece(&self, node: Node<'_>, b: &mut WordBuilder, depth: usize) {
        if depth > MAX_WORD_DEPTH {
            b.expansion();
            return;
        }
        let text = self.text(node);
        match node.kind() {
            "word" | "number" => b.bare(text),
            "raw_string" => match text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
                Some(inner) => b.literal(inner),
                None => b.expansion(),
            },
            "ansi_c_string" => match decode_ansi_c(text) {
                Some(decoded) => b.literal(&decoded),
                None => b.expansion(),
            },
            "brace_expression" => b.pattern(text),
            "string" => self.pieces(node, b, depth, true),
            "concatenation" | "command_name" => self.pieces(node, b, depth, false),
            _ => b.expansion(),
        }
    }

    /// Adds the children of a string or concatenation. A gap between children (text that no
    /// child covers) means the tree is not what this code expects: the word is unknown —
    /// except blanks inside `"…"` (tree-sitter-bash leaves a newline there uncovered before a
    /// backslash), which are literal text.
    fn pieces(&self, node: Node<'_>, b: &mut WordBuilder, depth: usize, quoted: bool) {
        let mut at = node.start_byte();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.start_byte() != at {
                let gap = self.src.get(at..child.start_byte()).unwrap_or("$");
                if quoted && gap.chars().all(|c| matches!(c, ' ' | '\t' | '\n')) {
                    b.literal(gap);
                } else {
                    b.expansion();
                }
            }
            at = child.end_byte();
            match child.kind() {
                "\"" if quoted => {}
                "string_content" if quoted => b.double_quoted(self.text(child)),
                _ if quoted => b.expansion(),
                _ => self.piece(child, b, depth + 1),
            }
        }
        if at != node.end_byte() {
            b.expansion();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::word::WordKind;
    use pretty_assertions::assert_eq;

    fn texts(command: &Command) -> Vec<(String, WordKind)> {
        command
            .words
            .iter()
            .map(|w| (w.text.clone(), w.kind))
            .collect()
    }

    #[test]
    fn words_lose_their_quotes() {
        let cases: &[(&str, &[(&str, WordKind)])] = &[
            (
                "r''m -rf",
                &[("rm", WordKind::Literal), ("-rf", WordKind::Literal)],
            ),
            ("\\rm", &[("rm", WordKind::Literal)]),
            (
                "\"rm\" 'a b'",
                &[("rm", WordKind::Literal), ("a b", WordKind::Literal)],
            ),
            ("$'\\x72m'", &[("rm", WordKind::Literal)]),
            ("r\"m\"", &[("rm", WordKind::Literal)]),
            ("\\r\\m", &[("rm", WordKind::Literal)]),
            (
                "ls *.rs",
                &[("ls", WordKind::Literal), ("*.rs", WordKind::Pattern)],
            ),
            (
                "ls '*.rs'",
                &[("ls", WordKind::Literal), ("*.rs", WordKind::Literal)],
            ),
            (
                "ls {a,b}",
                &[("ls", WordKind::Literal), ("{a,b}", WordKind::Pattern)],
            ),
            (
                "echo \"a$x\"",
                &[("echo", WordKind::Literal), ("a$", WordKind::Expansion)],
            ),
            (
                "echo \"a\\\"b\"",
                &[("echo", WordKind::Literal), ("a\"b", WordKind::Literal)],
            ),
            (
                "echo \"a\n\\\\b\"",
                &[("echo", WordKind::Literal), ("a\n\\b", WordKind::Literal)],
            ),
            (
                "$\"rm\" x",
                &[("", WordKind::Expansion), ("x", WordKind::Literal)],
            ),
        ];
        for (input, want) in cases {
            let script = parse_tree(input);
            let got = texts(&script.commands[0]);
            let want: Vec<(String, WordKind)> =
                want.iter().map(|(t, k)| ((*t).to_owned(), *k)).collect();
            let got: Vec<(String, WordKind)> = got
                .into_iter()
                .map(|(t, k)| {
                    if k == WordKind::Expansion {
                        (String::new(), k)
                    } else {
                        (t, k)
                    }
                })
                .collect();
            let want: Vec<(String, WordKind)> = want
                .into_iter()
                .map(|(t, k)| {
                    if k == WordKind::Expansion {
                        (String::new(), k)
                    } else {
                        (t, k)
                    }
                })
                .collect();
            assert_eq!(got, want, "input: {input:?}");
        }
    }

    #[test]
    fn nested_commands_are_all_found() {
        let cases: &[(&str, &[&str])] = &[
            ("a && b || c; d | e & f", &["a", "b", "c", "d", "e", "f"]),
            ("a $(b `c`) <(d) >(e)", &["a", "b", "c", "d", "e"]),
            ("(a); { b; }; ! c", &["a", "b", "c"]),
            (
                "if a; then b; elif c; then d; else e; fi",
                &["a", "b", "c", "d", "e"],
            ),
            (
                "for i in $(a); do b; done; while c; do d; done",
                &["a", "b", "c", "d"],
            ),
            ("case $(a) in x) b;; esac", &["a", "b"]),
            ("f() { a; }", &["a"]),
            ("[[ -f $(a) ]] && b", &["a", "b"]),
            ("x=$(a) b", &["b", "a"]),
            ("echo ${x:-$(a)} \"$(b)\"", &["echo", "a", "b"]),
            ("cat <<EOF\n$(a)\nEOF", &["cat", "a"]),
            ("export A=$(a)", &["export", "a"]),
        ];
        for (input, want) in cases {
            let script = parse_tree(input);
            let got: Vec<&str> = script
                .commands
                .iter()
                .filter_map(|c| c.words.first())
                .map(|w| w.text.as_str())
                .collect();
            assert_eq!(got, *want, "input: {input:?}");
        }
    }

    #[test]
    fn shapes() {
        let cases: &[(&str, Shape)] = &[
            ("ls -la", Shape::Simple),
            ("ls #x", Shape::Simple),
            ("# only", Shape::Empty),
            ("(ls)", Shape::Other("a subshell")),
            ("! ls", Shape::Other("a negated command ('!')")),
            ("a=1", Shape::Other("a variable assignment")),
            ("ls | wc", Shape::Other("a pipeline")),
            ("ls; pwd", Shape::Other("more than one command")),
        ];
        for (input, want) in cases {
            assert_eq!(parse_tree(input).shape, *want, "input: {input:?}");
        }
    }

    #[test]
    fn heredocs_and_herestrings_feed_the_command() {
        let script = parse_tree("bash <<'EOF'\nrm -rf /\nEOF");
        assert_eq!(script.commands[0].stdin, vec![Word::literal("rm -rf /\n")]);
        let script = parse_tree("bash <<< 'rm -rf /'");
        assert_eq!(script.commands[0].stdin, vec![Word::literal("rm -rf /")]);
        let script = parse_tree("bash <<EOF\n$x\nEOF");
        assert_eq!(script.commands[0].stdin, vec![Word::expansion()]);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 500;
        let input = format!("{}x{}", "$(".repeat(depth), ")".repeat(depth));
        let script = parse_tree(&input);
        assert!(!script.commands.is_empty(), "input of {depth} levels");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        #[test]
        // Where tree-sitter-bash reports an error the fast path is the correct one (it rejects
        // the plain words `a@`, `me@x.com` and `==`, which shells read literally): skipped.
        fn plain_fast_path_agrees_with_tree_sitter(text in "[a-z0-9_./:,@%+=~\t -]{1,40}") {
            if let Some(fast) = parse_plain(&text) {
                let slow = parse_tree(&text);
                proptest::prop_assume!(!slow.has_error);
                proptest::prop_assert_eq!(fast.shape, slow.shape, "input: {:?}", text);
                proptest::prop_assert_eq!(slow.commands.len(), 1, "input: {:?}", text);
                let (fast, slow) = (&fast.commands[0], &slow.commands[0]);
                proptest::prop_assert!(slow.assignments.is_empty(), "input: {:?}", text);
                proptest::prop_assert_eq!(fast.words.len(), slow.words.len(), "input: {:?}", text);
                for (f, s) in fast.words.iter().zip(&slow.words) {
                    // tree-sitter reads `=~` as an operator: unknown, the careful side.
                    let agrees = f == s || s.kind == crate::policy::word::WordKind::Expansion;
                    proptest::prop_assert!(agrees, "input: {:?}: {:?} vs {:?}", text, f, s);
                }
            }
        }
    }
}
