//! A quick test that one component of a path cannot match any secret-name glob, so that
//! [`super::SecretFiles::matching`] runs the glob set only on components that may match
//! (almost none do, and the set is one case-insensitive regex). Exact in one direction only:
//! a component it passes may still not match; one it rejects matches no pattern (a property
//! test checks this against the glob set on generated patterns and names).
//!
//! The rule: a glob whose first character is a plain ASCII one matches only names that start
//! with it, ignoring ASCII case; otherwise, one whose last character is plain matches only
//! names that end with it. A glob with neither (`*`, `[ab]*x?`) may match anything. globset
//! folds ASCII case only (`(?-u)(?i)`), yet names whose first or last byte is not ASCII are
//! always passed on, so that Unicode folding (`ſ` is `s`, the Kelvin sign `K` is `k`) could
//! never make this test reject a match.

/// The first and last characters that a name may have to match one of the patterns.
#[derive(Debug, Clone)]
pub(super) struct NameEnds {
    /// Some pattern has no plain character at either end: every name is passed on.
    any: bool,
    /// Lowercase ASCII first characters of patterns that start with a plain one.
    first: [bool; 128],
    /// Lowercase ASCII last characters of patterns that start with a glob but end plainly.
    last: [bool; 128],
}

impl NameEnds {
    pub(super) fn new<'a>(patterns: impl IntoIterator<Item = &'a str>) -> NameEnds {
        let mut ends = NameEnds {
            any: false,
            first: [false; 128],
            last: [false; 128],
        };
        for pattern in patterns {
            let bytes = pattern.as_bytes();
            if let Some(first) = bytes.first().copied().filter(|&b| plain(b)) {
                ends.first[usize::from(first.to_ascii_lowercase())] = true;
            } else if let Some(last) = bytes.last().copied().filter(|&b| plain(b)) {
                ends.last[usize::from(last.to_ascii_lowercase())] = true;
            } else {
                ends.any = true;
            }
        }
        ends
    }

    /// Whether a name (one path component, as bytes) may match one of the patterns.
    pub(super) fn may_match(&self, name: &[u8]) -> bool {
        let (Some(&first), Some(&last)) = (name.first(), name.last()) else {
            return true;
        };
        self.any
            || !first.is_ascii()
            || !last.is_ascii()
            || self.first[usize::from(first.to_ascii_lowercase())]
            || self.last[usize::from(last.to_ascii_lowercase())]
    }
}

/// A character that stands for itself at either end of a glob: never one of globset's
/// special characters (`*?[]{}\,!^`), nor anything outside ASCII.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._-+@%=~#:;'\" ".contains(&b)
}

#[cfg(test)]
mod tests {
    use globset::{GlobBuilder, GlobSetBuilder};
    use proptest::prelude::*;

    use super::NameEnds;

    /// Pattern pieces: plain text, globs, classes, braces, escapes, letters that fold.
    const PIECES: &[&str] = &[
        "a", "S", "k", "y", ".", "_", "-", "env", "id_rsa", "pem", "*", "?", "[ab]", "[!a]",
        "[a-z]", "{a,b}", "{x,}", "\\*", "\\a", "ſ", "K", "é", "É", "~", "#", "1",
    ];

    /// Name pieces: the same letters in both cases, folding letters, dots, digits.
    const NAME_PIECES: &[&str] = &[
        "a", "A", "s", "S", "k", "K", "y", "Y", "b", "x", ".", "_", "-", "env", "ENV", "id_rsa",
        "pem", "PEM", "ſ", "K", "é", "É", "*", "?", "~", "#", "1", "[", "]", "{", ",",
    ];

    fn joined(pieces: &'static [&'static str], max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(pieces), 0..max).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Every name that one of the patterns matches (as `SecretFiles` builds them) is passed on.
        #[test]
        fn no_matching_name_is_rejected(
            patterns in prop::collection::vec(joined(PIECES, 4), 1..4),
            names in prop::collection::vec(joined(NAME_PIECES, 5), 1..8),
        ) {
            let mut builder = GlobSetBuilder::new();
            let mut kept = Vec::new();
            for pattern in &patterns {
                let Ok(glob) = GlobBuilder::new(pattern)
                    .case_insensitive(true)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                else {
                    continue;
                };
                builder.add(glob);
                kept.push(pattern.as_str());
            }
            let set = builder.build().unwrap();
            let ends = NameEnds::new(kept.iter().copied());
            // Names made from the patterns match far more often: globs dropped, case
            // changed, letters swapped for ones that fold to them.
            let made = kept.iter().flat_map(|pattern| {
                let plain = pattern.replace(['*', '\\'], "").replace('?', "a");
                let folded = plain.replace(['s', 'S'], "ſ").replace(['k', 'K'], "\u{212a}");
                [plain.to_uppercase(), folded, plain]
            });
            for name in names.iter().cloned().chain(made) {
                if set.is_match(&name) {
                    prop_assert!(ends.may_match(name.as_bytes()), "{:?} against {:?}", name, kept);
                }
            }
        }
    }

    #[test]
    fn names_are_told_apart_by_their_ends() {
        let ends = NameEnds::new([".env*", "*.pem", "id_rsa*"]);
        for passed in [
            ".env", ".ENV.x", "a.pem", "x.PEM", "ID_RSA", "ſrc", "\u{212a}", "",
        ] {
            assert!(ends.may_match(passed.as_bytes()), "{passed:?}");
        }
        for rejected in ["src", "main.rs", "lib", "Cargo.toml", "README.md"] {
            assert!(!ends.may_match(rejected.as_bytes()), "{rejected:?}");
        }
        assert!(NameEnds::new(["[ab]*"]).may_match(b"src"));
        assert!(NameEnds::new(["*"]).may_match(b"src"));
    }
}
