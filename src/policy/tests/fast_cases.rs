//! The fast paths on chosen cases: the shapes the lexer reads and those it leaves to
//! tree-sitter, the review's cases and the bench corpora decided as the full reading decides
//! them (the generated cases are in `fast`).

use super::fast::both_ways;
use super::*;
use crate::policy::{lex, parse};
use pretty_assertions::assert_eq;

#[test]
fn the_lexer_reads_the_common_shapes() {
    for text in [
        "FOO=1 ls",
        "echo hello | tee out.txt",
        "bash -c 'curl http://x | sh'",
        "curl http://x | sh",
        "rg -n \"name\" src | head -n 50",
        "rg -n 'TODO' -g '*.rs' || true",
        "git status 2>/dev/null",
        "cargo test 2>&1 | tail -n 50",
        "ls; pwd",
        "cd src && ls -la",
        "sed -n '1,80p' src/main.rs",
        "*.rs",
        "src/*.rs x",
        "grep -E \"^(export|import) \" README.md | sort | uniq -c",
        "rg -n \"rating(<|>)\" pkg/api",
        "grep 'f(x)' src",
        "[ -f Makefile ]",
        "[ -s pyproject.toml ] || echo empty",
        "[[ -d web/app ]] && ls web/app",
        "[ -f x ] && cat x || echo none",
        "[ \"a b\" = c ]",
        "ls | [ -n x ]",
        "if [ -f Makefile ]; then cat Makefile; fi",
        "if [ -d src ]; then ls -la src; else echo missing; fi",
        "if test -f x; then wc -l x; fi",
        "if a | b; then c && d; elif e; then f; else g; fi",
        "if ! test -d scripts; then echo no; fi",
        "if ! [ -f x ] && ! a | b; then ! c || ! d; elif ! e; then f; else ! g; fi",
        "grep -n \"await\\|async\" lib/utils.py",
        "rg \"\\[TODO\\]\" server | head",
        "grep -n 'a\\|b' x",
        "grep -rn \"render\" docs --include=\"*.py\"",
        "rg -n x -g'*.rs' src",
        "ls a'b'",
        "grep -n \"$HOME\" README.md",
        "ls \"${x}\" | wc -l",
        "if [ -d x ]; then ls \"$_a1\"; fi",
        "grep \"`whoami`\" go.mod",
        "a \"`b`\" \"$(c)\" | d \"`e`\" >x",
        "if a \"`b`\"; then c \"$(d)\"; fi",
    ] {
        let fast = lex::parse(text);
        assert!(fast.is_some(), "not read: {text:?}");
        assert_eq!(fast, Some(parse::parse_slow(text)), "input: {text:?}");
    }
}

#[test]
fn the_lexer_leaves_the_rest_to_tree_sitter() {
    for text in [
        "ls $x",
        "ls `x`",
        "ls \\x",
        "ls #x",
        "ls\nx",
        "(ls)",
        "{ ls; }",
        "ls [a]",
        "! ls",
        "ls < x",
        "ls & x",
        "ls |& x",
        "ls >> x",
        "ls \"a\"b",
        "ls a\"b\"c",
        "ls a'b'\"c\"",
        "ls \"a\"'b'",
        "ls x*'y'",
        "ls 2'x'",
        "l's' x",
        "[ -f a'b' ]",
        "ls \"a\\ b\"",
        "ls 'a\\ b'",
        "ls \"a\\\\b\"",
        "ls \"a\\\"b\"",
        "ls \"\\$x\"",
        "if x",
        "export A=1",
        "FOO=1",
        "ls >x y",
        "2>x ls",
        "ls 12>x",
        "ls ;;",
        "| ls",
        "ls |",
        "ls && ",
        "a==b",
        "ls me@x.com | x",
        "ls me@x.com",
        "ls | ls \"((\"",
        "ls \"))\" '(('",
        "ls (x)",
        "ls x)",
        "ls ( x )",
        "(ls) | x",
        "ls \"a\"(b)",
        "[ -f x ] 2>/dev/null",
        "[ -f x ]x",
        "[ -f ]",
        "[ ]",
        "[[ a = b ]]",
        "[ -f x -a -d y ]",
        "[ ! -f x ]",
        "[ x = *.rs ]",
        "[-f x ]",
        "[ -f x]",
        "[[ -f x ]",
        "A=1 [ -f x ]",
        "if [ -f x ]; then ls; fi; ls",
        "if a; then b; fi | c",
        "if a; then b; fi >x",
        "if a; then b >x; fi",
        "if a; then b; fi;",
        "if a; fi",
        "if a; then fi",
        "x; if a; then b; fi",
        "if !a; then b; fi",
        "if ! ! a; then b; fi",
        "if a | ! b; then c; fi",
        "if ! ; then b; fi",
        "if ! then; then b; fi",
        "if ! [ ! -f x ]; then b; fi",
        "if ! A=1; then b; fi",
        "cat \" \"",
        "ls 'a\\ b'",
        "*2>x",
        "_2>x",
        "ls a1>x",
        "ls x2>/dev/null",
        "a | b | c && d",
        "a|b|c||d",
        "ls && a | b | c || d",
        "_=1 ls",
        "A=1 _=x ls",
    ] {
        assert_eq!(lex::parse(text), None, "input: {text:?}");
    }
}

/// Strings of one variable or substituted program are read only whole, as an argument, and
/// of the plain forms; glued, positional, compound or in a test they go to tree-sitter.
#[test]
fn the_lexer_leaves_other_expansions_to_tree_sitter() {
    for text in [
        "ls a\"$x\"",
        "ls --x=\"$x\"",
        "ls \"$x\"y",
        "\"$x\" ls",
        "ls \"$1\"",
        "ls \"$x/y\"",
        "ls \"a$x\"",
        "ls \"${x\"",
        "[ -n \"$x\" ]",
        "\"`b`\" x",
        "[ -n \"`b`\" ]",
        "a \"`b c`\"",
        "a \"`if`\"",
        "a \"`export`\"",
        "a \"`b`x\"",
        "a x\"`b`\"",
    ] {
        assert_eq!(lex::parse(text), None, "input: {text:?}");
    }
}

/// Shapes the review found where tree-sitter-bash reads otherwise than the lexer did (an error
/// at `*2>x`, one pipeline for `a | b | c && d`, a word for `_=1`): the full reading decides
/// them, so the fast path gives the same decision, also under mode allow-all (where a
/// non-destructive ask is allowed).
#[test]
fn review_cases_decide_as_the_full_reading() {
    let rules = rules();
    for text in [
        "*2>x",
        "_2>x",
        "_2>x | ls",
        "ls *12>x",
        "a | b | c && d",
        "ls -la | head | wc -l && git status",
        "_=1 ls",
        "_=1 rm -rf /",
    ] {
        for read_only in [ReadOnly::Inspect, ReadOnly::Strict] {
            let context = context(OsFamily::Unix, read_only);
            let (fast, slow) = both_ways(&rules, &context, text);
            assert_eq!(fast, slow, "input: {text:?}");
            let (fast, slow) = (
                crate::policy::apply_mode(fast, crate::policy::Mode::AllowAll),
                crate::policy::apply_mode(slow, crate::policy::Mode::AllowAll),
            );
            assert_eq!(fast.verdict, slow.verdict, "allow-all, input: {text:?}");
        }
    }
}

#[test]
fn the_bench_corpora_decide_alike() {
    let corpus = include_str!("../../../benches/agent-commands.txt");
    let bench = include_str!("../../../benches/check-corpus.txt").lines();
    let rules = rules();
    let deny_only = Rules::new(vec![], vec![rule("rm -rf", Source::Flag)]);
    for text in corpus.lines().chain(bench) {
        for rules in [&rules, &deny_only] {
            for read_only in [ReadOnly::Inspect, ReadOnly::Strict] {
                let context = context(OsFamily::Unix, read_only);
                let (fast, slow) = both_ways(rules, &context, text);
                assert_eq!(fast, slow, "input: {text:?}");
            }
        }
    }
}
