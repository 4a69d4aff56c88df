//! Properties over generated commands, and the decisions-per-second benchmark.

use super::*;

/// Commands that are allowed on their own, for the properties below.
const ALLOWED: &[&str] = &[
    "ls -la",
    "echo hi",
    "git status",
    "cargo test --all",
    "date +%s",
    "pwd",
    "which ls",
    "cd /tmp",
];

/// Every control operator of DESIGN.md rule 3, alone and in common combinations.
const OPERATORS: &[&str] = &[
    ";", "|", ">", "<", "`", "$", "&", "\n", "&&", "||", ">>", "$(", "<<<", "2>&1", "|&",
];

fn insert_at(base: &str, at: prop::sample::Index, text: &str) -> String {
    let chars: Vec<char> = base.chars().collect();
    let i = at.index(chars.len() + 1);
    let head: String = chars[..i].iter().collect();
    let tail: String = chars[i..].iter().collect();
    format!("{head}{text}{tail}")
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_control_operator_is_ever_allowed(
        base in prop::sample::select(ALLOWED),
        op in prop::sample::select(OPERATORS),
        at in any::<prop::sample::Index>(),
        rest in "[a-z \\-./'\"#*\\\\]{0,12}",
    ) {
        let command = insert_at(base, at, &format!("{op}{rest}"));
        let rules = rules();
        for os in [OsFamily::Unix, OsFamily::Windows] {
            let decision = decide(&rules, os, &command);
            prop_assert_ne!(decision.verdict, Allow, "{:?} input: {:?}", os, command);
        }
    }

    #[test]
    fn no_printable_string_with_an_operator_is_allowed(
        text in "[ -~\t]{0,30}",
        op in prop::sample::select(OPERATORS),
        at in any::<prop::sample::Index>(),
    ) {
        let command = insert_at(&text, at, op);
        let rules = rules();
        for os in [OsFamily::Unix, OsFamily::Windows] {
            let decision = decide(&rules, os, &command);
            prop_assert_ne!(decision.verdict, Allow, "{:?} input: {:?}", os, command);
        }
    }

    #[test]
    fn a_denied_command_after_an_operator_is_denied(
        program in prop::sample::select(&["ls", "echo", "git", "cat", "x", "foo"][..]),
        args in "( [a-z0-9./-]{1,6}){0,3}",
        op in prop::sample::select(&[
            ";", "&&", "||", "|", "&", "\n", "\n\n", "\n\t", " #c\n", ";\n", " &&\n",
            " $(", " `", " <(", "; (", "; { ", " \"$(", "\n\\\n",
            "; sh -c '", "; bash -c \"", "; eval ", "; env ", "; sudo -u x ", "; xargs ",
        ][..]),
        denied in prop::sample::select(&[
            "rm -rf /", "r''m -rf x", "\\rm -fr x", "/bin/rm -r -f x", "sudo ls",
            "env rm -rf x", "git push", "\"rm\" -Rf x", "nice -n 1 rm -rf x",
            "xargs rm -rf", "timeout 5 rm --recursive --force x", "command rm -rf x",
            "git -C . push origin",
        ][..]),
        suffix in "( [a-z0-9./]{1,6}){0,2}",
    ) {
        let close = match op {
            " $(" | " <(" | "; (" => ")",
            " `" => "`",
            "; { " => "; }",
            " \"$(" => ")\"",
            "; sh -c '" => "'",
            "; bash -c \"" => "\"",
            _ => "",
        };
        let command = format!("{program}{args}{op}{denied}{suffix}{close}");
        let decision = decide(&rules(), OsFamily::Unix, &command);
        prop_assert_eq!(decision.verdict, Deny, "input: {:?} → {:?}", command, decision);
    }

    #[test]
    fn a_denied_command_after_a_cmd_operator_is_denied(
        program in prop::sample::select(&["dir", "echo", "git", "type", "ver"][..]),
        args in "( [a-z0-9.:/-]{1,6}){0,3}",
        op in prop::sample::select(&[
            "&", "&&", "|", "||", "\n", "\r\n", " & (", " && cmd /c \"", " & start ",
        ][..]),
        denied in prop::sample::select(&[
            "del /s x", "DEL /Q /S x", "d^el /s x", "del.exe /s x", "\"del\" /s x",
            "C:\\Windows\\del.exe /s x", "rm -rf x", "git push", "sudo dir",
        ][..]),
    ) {
        let close = match op {
            " & (" => ")",
            " && cmd /c \"" => "\"",
            _ => "",
        };
        let command = format!("{program}{args}{op}{denied}{close}");
        let decision = decide(&rules(), OsFamily::Windows, &command);
        prop_assert_eq!(decision.verdict, Deny, "input: {:?} → {:?}", command, decision);
    }
}

/// A mixed corpus: allowed, asked and denied commands, plain and nested.
const CORPUS: &[&str] = &[
    "ls -la",
    "git status -s",
    "cargo test --all",
    "echo hello world",
    "date +%Y-%m-%d",
    "touch src/main.rs",
    "cargo build --release",
    "rm -rf target",
    "ls | wc -l",
    "git diff > /tmp/x.patch",
    "grep -rn 'fn main' src/",
    "cat README.md",
    "npm run build && npm test",
    "echo \"$(git rev-parse HEAD)\"",
    "sh -c 'ls; rm -rf /'",
    "find . -name '*.rs' -exec wc -l {} \\;",
    "FOO=1 cargo run",
    "sudo apt-get install x",
    "python3 -m pytest -q tests/",
    "for f in *.rs; do echo $f; done",
    "git push origin main",
    "ls *.rs",
    "mkdir -p build/out",
    "cd /tmp",
];

/// `cargo test --release -- --ignored --nocapture decisions_per_second`
#[test]
#[ignore = "benchmark; run in release with --nocapture"]
#[allow(clippy::cast_precision_loss)] // counts far below 2^52
fn decisions_per_second() {
    let rules = rules();
    let rounds = 20_000;
    for (os, corpus) in [
        (OsFamily::Unix, CORPUS),
        (
            OsFamily::Windows,
            &[
                "dir /w",
                "del /s x",
                "echo %PATH%",
                "git status",
                "dir & ver",
                "cmd /c \"del x\"",
            ][..],
        ),
    ] {
        let start = std::time::Instant::now();
        let mut allowed = 0usize;
        for _ in 0..rounds {
            for command in corpus {
                if decide(&rules, os, command).verdict == Allow {
                    allowed += 1;
                }
            }
        }
        let elapsed = start.elapsed();
        let count = rounds * corpus.len();
        let per_second = count as f64 / elapsed.as_secs_f64();
        let micros = elapsed.as_secs_f64() * 1e6 / count as f64;
        println!(
            "{os:?}: {count} decisions in {elapsed:?}: {per_second:.0}/s ({micros:.2} µs each, {allowed} allowed)"
        );
        let mut slowest: Vec<(f64, &str)> = corpus
            .iter()
            .map(|command| {
                let start = std::time::Instant::now();
                for _ in 0..1000 {
                    let _ = decide(&rules, os, command);
                }
                (start.elapsed().as_secs_f64() * 1e3, *command)
            })
            .collect();
        slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (micros, command) in slowest.iter().take(4) {
            println!("  {micros:6.2} µs  {command:?}");
        }
    }
}
