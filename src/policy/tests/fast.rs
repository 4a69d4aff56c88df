//! The fast paths against the full reading: commands generated from the grammar of `lex`
//! (and of the plain-word path) give the same `Script` as tree-sitter and the same full
//! `Decision` with the fast paths turned off (`parse::SLOW_ONLY`).

use super::*;
use crate::policy::{lex, parse};
use proptest::prelude::*;

/// `decide` with the fast paths on, then off.
pub(super) fn both_ways(rules: &Rules, context: &Context, command: &str) -> (Decision, Decision) {
    let fast = super::super::decide(rules, context, command);
    parse::SLOW_ONLY.set(true);
    let slow = super::super::decide(rules, context, command);
    parse::SLOW_ONLY.set(false);
    (fast, slow)
}

const PROGRAMS: &[&str] = &[
    "ls", "git", "cat", "rg", "grep", "sed", "head", "tail", "wc", "echo", "cargo", "rm", "sudo",
    "env", "xargs", "bash", "sh", "find", "tee", "touch", "true", "cd", "jq", "nl", "sort", "npm",
    "python3", "timeout", "nice", "command", "builtin", "exec", "eval", "time", "if", "in", "do",
    "done", "export", "local", "unset", "declare", "x-y", "a.b", "/bin/rm", "./x", "~/bin/x", "-x",
    "a=b", "*", "ls*", "'ls'", "\"git\"", "''", "2", "*2", "_2", "a1", "\"$X\"", "\"`x`\"",
];

const WORDS: &[&str] = &[
    "-la",
    "-n",
    "status",
    "push",
    "-rf",
    "/",
    "src",
    "src/x.py",
    "120,240p",
    "-c",
    "--all",
    "--",
    "-",
    "~",
    "~/x",
    "a~b",
    "*.rs",
    "src/*.rs",
    "*",
    "a=b",
    "--x=y",
    "in",
    "do",
    "done",
    "then",
    "fi",
    "esac",
    "{",
    "}",
    "=",
    "==",
    "a==b",
    "=~",
    "me@x.com",
    "@x",
    "%s",
    "+%Y",
    "1",
    "12",
    "0",
    "x:y",
    "a,b",
    ".",
    "..",
    "../x",
    ".env",
    "id_rsa",
    "HEAD~1",
    "'a b'",
    "'a|b'",
    "'$x'",
    "'*.ts'",
    "''",
    "\"\"",
    "\"a b\"",
    "\"a|b;c&d\"",
    "\"x'y\"",
    "'#x'",
    "\"#x\"",
    "'rm -rf /'",
    "\"rm -rf x\"",
    "'1,80p'",
    "'x\"y'",
    "\"é\"",
    "'ü ß'",
    "'curl http://x | sh'",
    "\"Error|Warning\"",
    "'a\"b'",
    "\"-rf\"",
    "x2",
    "*1",
    "\"^(export|import) \"",
    "\"(a|b)\"",
    "'(x)'",
    "\"a)\"",
    "\")(\"",
    "\"f(<|>)\"",
    "\"))\"",
    "(",
    ")",
    "x)",
    "(x",
    "\"await\\|async\"",
    "\"\\[TODO\\]\"",
    "'a\\|b'",
    "\"a\\\\b\"",
    "\"a\\\"b\"",
    "\"x\\\"",
    "\"\\$x\"",
    "'x\\'",
    "\"a\\ b\"",
    "'a\\ b'",
    "\"\\d+\\.\\w\"",
    "--include=\"*.py\"",
    "-g'*.rs'",
    "--glob=\"!x\"",
    "a\"b\"",
    "\"a\"b",
    "a\"b\"c",
    "a'b'\"c\"",
    "2\"x\"",
    "~\"x\"",
    "=\"x\"",
    "*\"x\"",
    "x*\"y\"",
    "-\"x\"",
    "--x=\"a b\"",
    "--x=''",
    "--x=\"\"",
    "a==\"b\"",
    "x\"\\|\"",
    "\"$HOME\"",
    "\"${HOME}\"",
    "\"$_x1\"",
    "\"$_\"",
    "\"$1\"",
    "\"$@\"",
    "\"$\"",
    "\"${}\"",
    "\"${A\"",
    "\"$A}\"",
    "\"${A}x\"",
    "\"$HOME/x\"",
    "\"a$HOME\"",
    "\"$A$B\"",
    "\"$é\"",
    "--x=\"$HOME\"",
    "a\"$A\"",
    "\"$A\"b",
    "\"$A\"\"b\"",
    "\"$A\"'b'",
    "'$A'\"$B\"",
    "\"$A\">x",
    "\"$if\"",
    "\"`whoami`\"",
    "\"$(whoami)\"",
    "\"`a b`\"",
    "\"`if`\"",
    "\"`time`\"",
    "\"`export`\"",
    "\"``\"",
    "\"`1`\"",
    "\"`_x`\"",
    "\"`b-c.d`\"",
    "\"`\\b`\"",
    "\"`b`x\"",
    "\"$(b\"",
    "\"$(b))\"",
    "\"$((b))\"",
    "\"`b`\"\"`c`\"",
    "x\"`b`\"",
    "`b`",
    "$(b)",
    "\"`é`\"",
];

const REDIRECTIONS: &[&str] = &[
    " 2>/dev/null",
    " >/dev/null",
    " 2>&1",
    " &>/dev/null",
    " > out.txt",
    " 1>x",
    " 2> /dev/null",
    " >&2",
    " 2>&1 >/dev/null",
    ">/dev/null",
    " 2>x y",
    " 3>/dev/null",
    " >>x",
    " >|x",
    ">x",
    "2>x",
];

const OPERATORS: &[&str] = &[
    " | ", "|", " && ", "&&", " || ", "||", "; ", ";", " ; ", " |& ", " & ", ";;", "\t|\t",
];

/// A word from the list, a random unquoted one, or random text in quotes.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(WORDS).prop_map(str::to_owned),
        1 => "[a-z0-9_./:,%+=~*@-]{1,6}",
        1 => "[ -~]{0,6}".prop_map(|t| format!("'{}'", t.replace('\'', ""))),
        1 => "[ -~]{0,6}".prop_map(|t| format!("\"{}\"", t.replace('"', ""))),
        1 => ("[a-z0-9_./:,%+=~*@-]{0,4}", "[ -~]{0,4}", prop::bool::ANY).prop_map(
            |(bare, quoted, double)| {
                if double {
                    format!("{bare}\"{}\"", quoted.replace('"', ""))
                } else {
                    format!("{bare}'{}'", quoted.replace('\'', ""))
                }
            }
        ),
    ]
}

fn part() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            prop::sample::select(
                &[
                    "FOO=1",
                    "A_B=x/y",
                    "X=",
                    "1A=b",
                    "GIT_CONFIG=x",
                    "a=~",
                    "_=x",
                    "_a=1",
                ][..],
            ),
            0..2,
        ),
        prop::sample::select(PROGRAMS),
        prop::collection::vec(word(), 0..4),
        prop::option::weighted(0.25, prop::sample::select(REDIRECTIONS)),
        prop::sample::select(&[" ", "  ", "\t"][..]),
    )
        .prop_map(|(assignments, program, words, redirection, blank)| {
            let mut text = String::new();
            for a in assignments {
                text.push_str(a);
                text.push_str(blank);
            }
            text.push_str(program);
            for w in words {
                text.push_str(blank);
                text.push_str(&w);
            }
            text.push_str(redirection.unwrap_or(""));
            text
        })
}

/// Words inside a generated test (`[ … ]`, `[[ … ]]`): operators, operands and odd ones.
const TEST_WORDS: &[&str] = &[
    "-f", "-d", "-e", "-s", "-n", "-z", "-L", "-x", "-v", "-o", "-a", "=", "==", "!=", "-eq",
    "-nt", "-lt", "!", "x", "src/a.rs", "Makefile", "'a b'", "\"a b\"", "\"\"", "''", "*.rs",
    "a=b", "-", "~", "(", ")", "]", "[", "]]", "x]", "'-f'", "\"]\"", "1", "2>x", "#", "\"$x\"",
    "\"`x`\"", "\"${x}\"",
];

/// A test command, well-formed or not (closed by the wrong bracket, glued, redirected).
fn test_part() -> impl Strategy<Value = String> {
    (
        prop::sample::select(&["[", "[["][..]),
        prop::collection::vec(
            prop_oneof![
                4 => prop::sample::select(TEST_WORDS).prop_map(str::to_owned),
                1 => word(),
            ],
            0..4,
        ),
        prop::sample::select(&["", "]", "]]", " ]", " ]]", "]x", " ] x"][..]),
        prop::sample::select(&[" ", "  ", "\t", ""][..]),
        prop::option::weighted(0.1, prop::sample::select(REDIRECTIONS)),
    )
        .prop_map(|(open, words, close, blank, redirection)| {
            let mut text = open.to_owned();
            for w in words {
                text.push_str(blank);
                text.push_str(&w);
            }
            // A matching closing bracket most of the time.
            let close = match close {
                "" if open == "[" => " ]",
                "" => " ]]",
                other => other,
            };
            text.push_str(close);
            text.push_str(redirection.unwrap_or(""));
            text
        })
}

/// A simple command or a test.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![4 => part(), 1 => test_part()]
}

/// Commands and tests of the shapes `if` statements hold.
const IF_PIECES: &[&str] = &[
    "ls -la src",
    "cat Makefile",
    "echo missing",
    "wc -l x",
    "git status",
    "rm -rf /",
    "test -f x",
    "echo then",
    "echo fi",
    "[ -f Makefile ]",
    "[[ -d src ]]",
    "[ a = b ]",
    "[ -n \"a b\" ]",
    "true",
    ":",
];

/// How a piece of an `if` statement's list may start: mostly as it is, sometimes negated
/// (well-formed or not: `!` glued, doubled, alone).
const NEGATIONS: &[&str] = &["! ", "!\t", "!  ", "!", "! ! ", " ! ", "!;"];

/// A list of pieces for an `if` statement.
fn list() -> impl Strategy<Value = String> {
    let piece = || {
        (
            prop_oneof![3 => Just(""), 1 => prop::sample::select(NEGATIONS)],
            prop_oneof![3 => prop::sample::select(IF_PIECES).prop_map(str::to_owned), 1 => piece()],
        )
            .prop_map(|(negation, piece)| format!("{negation}{piece}"))
    };
    (
        piece(),
        prop::collection::vec(
            (
                prop_oneof![
                    3 => prop::sample::select(&[" | ", " && ", " || ", "&&"][..]),
                    1 => prop::sample::select(OPERATORS),
                ],
                piece(),
            ),
            0..2,
        ),
    )
        .prop_map(|(first, rest)| {
            let mut text = first;
            for (operator, part) in rest {
                text.push_str(operator);
                text.push_str(&part);
            }
            text
        })
}

/// An `if` statement, well-formed or not (keywords and separators picked at random).
fn if_script() -> impl Strategy<Value = String> {
    let separator = || prop::sample::select(&["; ", ";", " ; ", " ", "\t;\t", ";  "][..]);
    let keyword = |usual: &'static str| prop_oneof![20 => Just(usual), 1 => prop::sample::select(&["then", "fi", "else", "elif", "do", "if"][..])];
    (
        prop::sample::select(&["if ", " if ", "if\t", "if  "][..]),
        list(),
        separator(),
        keyword("then"),
        list(),
        separator(),
        prop::option::weighted(
            0.3,
            (list(), separator(), keyword("then"), list(), separator()),
        ),
        prop::option::weighted(0.4, (list(), separator())),
        keyword("fi"),
        prop::sample::select(&["", "", "", " ", ";", " x", "; ls", " | ls"][..]),
    )
        .prop_map(
            |(start, condition, s1, then, body, s2, elif, otherwise, fi, end)| {
                let mut text = format!("{start}{condition}{s1}{then} {body}{s2}");
                if let Some((condition, s3, then, body, s4)) = elif {
                    text.push_str(&format!("elif {condition}{s3}{then} {body}{s4}"));
                }
                if let Some((body, s5)) = otherwise {
                    text.push_str(&format!("else {body}{s5}"));
                }
                text.push_str(fi);
                text.push_str(end);
                text
            },
        )
}

fn script() -> impl Strategy<Value = String> {
    prop_oneof![4 => plain_script(), 1 => if_script()]
}

fn plain_script() -> impl Strategy<Value = String> {
    (
        piece(),
        prop::collection::vec((prop::sample::select(OPERATORS), piece()), 0..4),
        prop::sample::select(&["", ";", " ;", " ", "; "][..]),
    )
        .prop_map(|(first, rest, end)| {
            let mut text = first;
            for (operator, part) in rest {
                text.push_str(operator);
                text.push_str(&part);
            }
            text.push_str(end);
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn lexer_reads_what_tree_sitter_reads(text in script()) {
        if let Some(fast) = lex::parse(&text) {
            let slow = parse::parse_slow(&text);
            prop_assert_eq!(fast, slow, "input: {:?}", text);
        }
    }

    #[test]
    fn if_statements_read_and_decide_alike(text in if_script()) {
        if let Some(fast) = lex::parse(&text) {
            let slow = parse::parse_slow(&text);
            prop_assert_eq!(fast, slow, "input: {:?}", text);
        }
        let rules = rules();
        for read_only in [ReadOnly::Inspect, ReadOnly::Strict] {
            let context = context(OsFamily::Unix, read_only);
            let (fast, slow) = both_ways(&rules, &context, &text);
            prop_assert_eq!(fast, slow, "input: {:?}", text);
        }
    }

    #[test]
    fn fast_and_slow_decide_alike(text in script()) {
        let rules = rules();
        for read_only in [ReadOnly::Inspect, ReadOnly::Strict] {
            let context = context(OsFamily::Unix, read_only);
            let (fast, slow) = both_ways(&rules, &context, &text);
            prop_assert_eq!(fast, slow, "input: {:?}", text);
        }
    }
}
