//! Readings that copy less than they did, against the copying readings they replace: the raw
//! text's searches for protected words and deny rules' programs in one pass.

use proptest::prelude::*;

use crate::policy::scan::Scan;
use crate::policy::{OsFamily, Rules, mentions_protected, programs, word};

/// The search as it was: the words of the text and of the text without quoting characters.
fn mentions_protected_copying(os: OsFamily, command: &str) -> bool {
    let unquoted = word::without_quoting(command, os);
    [Some(command), unquoted.as_deref()]
        .into_iter()
        .flatten()
        .flat_map(|text| {
            text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+')))
        })
        .filter(|token| !token.is_empty())
        .any(|token| {
            let name = match os {
                OsFamily::Unix => token,
                OsFamily::Windows => token.split(['.', '+']).next().unwrap_or(token),
            };
            [token, name].iter().any(|candidate| {
                let key = word::program_key(candidate, os);
                programs::is_protected(&key)
                    || ["alias", "unalias", "hash", "enable", "doskey"].contains(&key.as_ref())
            })
        })
}

/// Pieces of raw text: protected names and renaming words cut by quoting characters, blanks,
/// operators, `.`/`+` suffixes, paths, non-ASCII letters.
fn raw_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "rm",
            "r",
            "m",
            "del",
            "de",
            "l",
            "alias",
            "ali",
            "as",
            "mkfs.ext4",
            "mkfs",
            ".",
            "+",
            "RM",
            "rm.exe",
            "/bin/",
            "C:\\",
            "dd",
            "git",
            "ls",
            "x",
            "é",
            "ß",
            "-rf",
            "push",
            "sudo",
            "/s",
            "shred",
            "mkfs.",
            ":",
        ])
        .prop_map(str::to_owned),
        prop::sample::select(vec![
            "'", "\"", "\\", "^", " ", "\t", ";", "|", "&", "$", "(", ")", "=", "-", "_", "/",
        ])
        .prop_map(str::to_owned),
        "[a-z'\"\\\\^. +-]{0,4}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The one-pass search finds a protected word exactly when the copying one does.
    #[test]
    fn protected_words_are_found_as_before(text in raw_text()) {
        for os in [OsFamily::Unix, OsFamily::Windows] {
            prop_assert_eq!(
                mentions_protected(os, &text),
                mentions_protected_copying(os, &text),
                "{:?} {:?}", os, text
            );
        }
    }
}

/// The rule sets the raw-text search runs with: none, the tests' rules, one rule.
fn rule_sets() -> Vec<Rules> {
    vec![
        Rules::new(vec![], vec![]),
        super::rules(),
        Rules::new(
            vec![],
            vec![super::rule("rm -rf", crate::policy::Source::User)],
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The raw-text search finds what the search of every token of both texts finds.
    #[test]
    fn the_raw_text_search_finds_as_before(text in raw_text()) {
        for rules in rule_sets() {
            for os in [OsFamily::Unix, OsFamily::Windows] {
                let mut fast = Scan::new(&rules, os);
                fast.crude(&text);
                let mut full = Scan::new(&rules, os);
                full.crude_everywhere(&text);
                prop_assert_eq!(fast.findings(), full.findings(), "{:?} {:?}", os, text);
            }
        }
    }
}
