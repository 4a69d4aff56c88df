//! Allow and deny rules as written in settings and flags, compiled once by [`Rules::new`] into
//! words for fast matching. Owns how one rule matches one argv; does not know where rules come
//! from, nor how a script is split into argvs (see `scan`).
//!
//! Allow rules are literal: the first words of argv, as written, equal the rule's words.
//! Deny rules are strict (see the module doc of `policy` for the full list): the program
//! matches by name (path, case and `.exe` ignored), the rule's first plain word is the first
//! word after it that is not an option or an option's value (a subcommand: `git push` denies
//! `git -C x push`, not `git stash push`), its later plain words appear in order anywhere after
//! that, and the rule's options appear anywhere, in any order, split or combined. A rule also
//! denies the other spellings of its subcommand (`assets/command-spellings.txt`: `git push`
//! denies `git send-pack`, `npm install` denies `npm i`).

use std::sync::OnceLock;

use super::word::{Word, WordKind, glob_could_match, program_key};
use super::{OsFamily, Source};

const SPELLINGS: &str = include_str!("../../assets/command-spellings.txt");

/// One allow or deny rule, as written by the user (`"git status"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Space-separated words, e.g. `git status` or `rm -rf`.
    pub prefix: String,
    /// The settings layer or flag the rule came from.
    pub source: Source,
}

/// What an MCP tool rule starts with (`mcp:SERVER`, `mcp:SERVER/TOOL`): such rules sit in the
/// same lists as command rules, and no command is allowed by one.
pub const MCP_RULE_PREFIX: &str = "mcp:";

/// Whether `prefix` (a rule as written) is an MCP tool rule.
#[must_use]
pub fn is_mcp_rule(prefix: &str) -> bool {
    prefix.trim_start().starts_with(MCP_RULE_PREFIX)
}

/// The merged allow and deny rules, pre-tokenized for speed.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub(super) allow: Vec<AllowRule>,
    pub(super) deny: Vec<DenyRule>,
}

impl Rules {
    /// Compiles the rules. Rules without any word are dropped: an empty allow rule would match
    /// everything. MCP tool rules (`mcp:…`) allow no command.
    #[must_use]
    pub fn new(allow: Vec<Rule>, deny: Vec<Rule>) -> Self {
        Rules {
            allow: allow
                .into_iter()
                .filter(|rule| !is_mcp_rule(&rule.prefix))
                .filter_map(AllowRule::compile)
                .collect(),
            deny: deny.into_iter().flat_map(DenyRule::compile_all).collect(),
        }
    }

    /// No rules at all: only the built-in list allows.
    #[must_use]
    pub fn empty() -> Self {
        Rules::default()
    }
}

/// A compiled allow rule.
#[derive(Debug, Clone)]
pub(super) struct AllowRule {
    pub(super) prefix: String,
    pub(super) source: Source,
    words: Vec<String>,
}

impl AllowRule {
    fn compile(rule: Rule) -> Option<Self> {
        let words: Vec<String> = rule.prefix.split_whitespace().map(str::to_owned).collect();
        (!words.is_empty()).then_some(AllowRule {
            prefix: rule.prefix,
            source: rule.source,
            words,
        })
    }

    /// How many argv words the rule covers.
    pub(super) fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether argv starts with the rule's words, each known and equal as written.
    pub(super) fn matches(&self, argv: &[Word]) -> bool {
        self.words.len() <= argv.len()
            && self
                .words
                .iter()
                .zip(argv)
                .all(|(want, have)| have.known() == Some(want.as_str()))
    }
}

/// How sure a deny match is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Match {
    /// The rule does not apply.
    No,
    /// Only an expansion, a glob or input read at run time could make it apply.
    Possible,
    /// The rule applies.
    Definite,
}

/// One requirement of a deny rule after its program.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Need {
    /// A plain word: must appear after the previous plain word.
    Word(String),
    /// Short options (`-rf`): each letter must appear in some option of argv.
    Letters(Vec<char>),
    /// A long option (`--force`, without the dashes): argv has it, possibly abbreviated.
    Long(String),
    /// Any other option-looking word (`-delete`, `--x=1`): argv has exactly it.
    Exact(String),
    /// A cmd.exe switch (`/s`, lowercase): on Windows present in any `/a/b` word.
    Switch(String),
    /// Any one plain word: a name inside a spelling (`?` in `yarn workspace+?+publish`).
    AnyWord,
}

/// A compiled deny rule.
#[derive(Debug, Clone)]
pub(super) struct DenyRule {
    pub(super) prefix: String,
    pub(super) source: Source,
    /// The program's key (see `word::program_key`).
    pub(super) program: String,
    needs: Vec<Need>,
}

/// Longest single-dash word read as combined short options (`-rfv`): longer ones (`-delete`,
/// `-exec`) are single-dash long options of programs like `find`, matched as whole words.
const MAX_SHORT_CLUSTER_LETTERS: usize = 3;

/// Options that mean the same as a short option, per program, so that deny `rm -rf` also denies
/// `rm -R --force`. The letter is the canonical short option.
const OPTION_SYNONYMS: &[(&str, &str, char)] = &[
    ("rm", "-R", 'r'),           // GNU and BSD rm: -R is -r
    ("rm", "--recursive", 'r'),  // long form of -r
    ("rm", "--force", 'f'),      // long form of -f
    ("rm", "--dir", 'd'),        // long form of -d
    ("cp", "-R", 'r'),           // GNU cp: -R is -r
    ("cp", "--recursive", 'r'),  // long form of -r
    ("cp", "--force", 'f'),      // long form of -f
    ("mv", "--force", 'f'),      // long form of -f
    ("rmdir", "--parents", 'p'), // long form of -p
    ("chmod", "--recursive", 'R'),
    ("chown", "--recursive", 'R'),
    ("chgrp", "--recursive", 'R'),
    ("git", "--force", 'f'),  // git push/clean/checkout/branch: -f is --force
    ("git", "--delete", 'd'), // git push/branch: -d is --delete
    ("shred", "--remove", 'u'), // long form of -u
];

/// The canonical letter for an option word of a program, if it has one.
fn synonym(program: &str, option: &str) -> Option<char> {
    OPTION_SYNONYMS
        .iter()
        .find(|(p, o, _)| *p == program && *o == option)
        .map(|(_, _, c)| *c)
}

/// The canonical letters a long option in argv stands for, abbreviations included (GNU
/// getopt accepts any unambiguous prefix: `--rec` is `--recursive`).
fn long_synonyms<'a>(program: &'a str, arg: &'a str) -> impl Iterator<Item = char> + 'a {
    OPTION_SYNONYMS
        .iter()
        .filter(move |(p, o, _)| *p == program && o.starts_with("--") && o.starts_with(arg))
        .map(|(_, _, c)| *c)
}

/// Classes of equivalent subcommand spellings per program, from the assets table: each
/// spelling is its words (`container rm`).
fn spelling_classes() -> &'static [(String, Vec<Vec<String>>)] {
    static CLASSES: OnceLock<Vec<(String, Vec<Vec<String>>)>> = OnceLock::new();
    CLASSES.get_or_init(|| parse_spellings(SPELLINGS))
}

fn parse_spellings(text: &str) -> Vec<(String, Vec<Vec<String>>)> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let program = fields.next()?.to_owned();
            let class: Vec<Vec<String>> = fields
                .map(|spelling| spelling.split('+').map(str::to_owned).collect())
                .collect();
            (class.len() > 1).then_some((program, class))
        })
        .collect()
}

impl DenyRule {
    /// The rule and one copy per other spelling of its subcommand (same prefix and source, so
    /// the reason names the rule as written).
    fn compile_all(rule: Rule) -> Vec<Self> {
        let Some(base) = Self::compile(rule) else {
            return Vec::new();
        };
        let Some(Need::Word(sub)) = base.needs.first() else {
            return vec![base];
        };
        let mut variants = Vec::new();
        for (program, class) in spelling_classes() {
            if *program != base.program || !class.iter().any(|s| s.len() == 1 && s[0] == *sub) {
                continue;
            }
            for spelling in class {
                if spelling.len() == 1 && spelling[0] == *sub {
                    continue;
                }
                let mut needs: Vec<Need> = spelling
                    .iter()
                    .map(|w| match w.as_str() {
                        "?" => Need::AnyWord,
                        _ => Need::Word(w.clone()),
                    })
                    .collect();
                needs.extend(base.needs[1..].iter().cloned());
                variants.push(DenyRule {
                    needs,
                    ..base.clone()
                });
            }
        }
        // Git's dashed form: each subcommand is also a program of its own in git's exec path
        // (`/usr/lib/git-core/git-push origin` pushes).
        if base.program == "git" {
            let mut dashed: Vec<DenyRule> = std::iter::once(&base)
                .chain(&variants)
                .filter_map(|rule| match rule.needs.first() {
                    Some(Need::Word(sub)) => Some(DenyRule {
                        program: format!("git-{sub}"),
                        needs: rule.needs[1..].to_vec(),
                        ..rule.clone()
                    }),
                    _ => None,
                })
                .collect();
            variants.append(&mut dashed);
        }
        let mut all = vec![base];
        all.extend(variants);
        all
    }

    fn compile(rule: Rule) -> Option<Self> {
        let mut words = rule.prefix.split_whitespace();
        let program = program_key(words.next()?, OsFamily::Windows).into_owned();
        let needs = words.map(|w| Self::need(&program, w)).collect();
        Some(DenyRule {
            prefix: rule.prefix,
            source: rule.source,
            program,
            needs,
        })
    }

    fn need(program: &str, word: &str) -> Need {
        if let Some(c) = synonym(program, word) {
            return Need::Letters(vec![c]);
        }
        if let Some(long) = word.strip_prefix("--") {
            return if long.is_empty() || long.contains('=') {
                Need::Exact(word.to_owned())
            } else {
                Need::Long(long.to_owned())
            };
        }
        if let Some(short) = word.strip_prefix('-') {
            let letters = short.chars().count();
            if letters > 0
                && letters <= MAX_SHORT_CLUSTER_LETTERS
                && short.chars().all(|c| c.is_ascii_alphanumeric())
            {
                let mapped = short
                    .chars()
                    .map(|c| synonym(program, &format!("-{c}")).unwrap_or(c))
                    .collect();
                return Need::Letters(mapped);
            }
            return Need::Exact(word.to_owned());
        }
        if let Some(switch) = word.strip_prefix('/')
            && (1..=3).contains(&switch.len())
            && switch
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '?')
        {
            return Need::Switch(switch.to_ascii_lowercase());
        }
        Need::Word(word.to_owned())
    }

    /// Matches one argv whose program key is `key`. `more_args` says the program gets further
    /// arguments at run time (behind `xargs`), which could supply anything still missing.
    pub(super) fn matches(&self, os: OsFamily, key: &str, argv: &[Word], more_args: bool) -> Match {
        let Some(program) = argv.first() else {
            return Match::No;
        };
        if program.is_wild() {
            return Match::Possible;
        }
        if key != self.program {
            return Match::No;
        }
        self.matches_arguments(os, &argv[1..], more_args)
    }

    /// Whether this rule's words and options are in `arguments` (the words after a program that
    /// is, or may be, this rule's).
    pub(super) fn matches_arguments(
        &self,
        os: OsFamily,
        arguments: &[Word],
        more_args: bool,
    ) -> Match {
        let wild = more_args
            || arguments.iter().any(|w| match w.kind {
                WordKind::Literal => false,
                WordKind::Expansion => true,
                WordKind::Pattern => self.could_expand_to_need(&w.text),
            });
        if self.satisfied(os, arguments) {
            Match::Definite
        } else if wild {
            Match::Possible
        } else {
            Match::No
        }
    }

    /// Whether a glob could expand to a word this rule needs.
    fn could_expand_to_need(&self, pattern: &str) -> bool {
        self.needs.iter().any(|need| match need {
            Need::Word(w) | Need::Exact(w) => glob_could_match(pattern, w),
            Need::Letters(letters) => {
                let cluster: String = std::iter::once('-')
                    .chain(letters.iter().copied())
                    .collect();
                glob_could_match(pattern, &cluster)
                    || letters
                        .iter()
                        .any(|c| glob_could_match(pattern, &format!("-{c}")))
                    || pattern.starts_with("--")
            }
            Need::Long(name) => glob_could_match(pattern, &format!("--{name}")),
            Need::Switch(switch) => glob_could_match(pattern, &format!("/{switch}")),
            Need::AnyWord => true,
        })
    }

    fn satisfied(&self, os: OsFamily, args: &[Word]) -> bool {
        // `./deploy.py` names the file `deploy.py` does.
        let eq = |a: &str, b: &str| {
            let (a, b) = (without_dot_slash(os, a), without_dot_slash(os, b));
            match os {
                OsFamily::Unix => a == b,
                OsFamily::Windows => a.eq_ignore_ascii_case(b),
            }
        };
        let known = || args.iter().filter_map(Word::known);
        let mut positional = known();
        let mut letters: Option<Vec<char>> = None;
        for (at, need) in self.needs.iter().enumerate() {
            let ok = match need {
                // A subcommand: the first word that is neither an option nor maybe its value.
                Need::Word(w) if at == 0 => {
                    let mut after_option = false;
                    loop {
                        match positional.next() {
                            Some(a) if eq(a, w) => break true,
                            Some(a) if is_option(os, a) => after_option = !a.contains('='),
                            // A variable given on the line (`make DEPLOY=1 deploy`) is no
                            // subcommand: the rule's word may still follow.
                            Some(a) if is_assignment(a) => {}
                            Some(_) if after_option => after_option = false,
                            None | Some(_) => break false,
                        }
                    }
                }
                Need::Word(w) => positional.any(|a| eq(a, w)),
                Need::AnyWord => positional.next().is_some(),
                Need::Letters(wanted) => {
                    let have = letters.get_or_insert_with(|| self.letters(known()));
                    wanted.iter().all(|c| {
                        have.iter().any(|h| match os {
                            OsFamily::Unix => h == c,
                            OsFamily::Windows => h.eq_ignore_ascii_case(c),
                        })
                    })
                }
                Need::Long(name) => known().any(|a| {
                    a.strip_prefix("--").is_some_and(|given| {
                        let given = given.split('=').next().unwrap_or(given);
                        !given.is_empty() && name.starts_with(given)
                    })
                }),
                Need::Exact(w) => known().any(|a| {
                    eq(a, w)
                        || (a.get(..w.len()).is_some_and(|head| eq(head, w))
                            && a.get(w.len()..).is_some_and(|rest| rest.starts_with('=')))
                }),
                Need::Switch(s) => match os {
                    OsFamily::Unix => known().any(|a| a.strip_prefix('/').is_some_and(|x| x == s)),
                    OsFamily::Windows => known().any(|a| {
                        a.starts_with('/') && a.split('/').any(|x| x.eq_ignore_ascii_case(s))
                    }),
                },
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Every option letter in argv: short clusters (`-rfv`, letters mapped through synonyms)
    /// and long options that have a canonical letter. Options after `--` count too (strict).
    fn letters<'a>(&self, args: impl Iterator<Item = &'a str>) -> Vec<char> {
        let mut out = Vec::new();
        for arg in args {
            if let Some(long) = arg.strip_prefix("--") {
                let name = long.split('=').next().unwrap_or(long);
                if !name.is_empty() {
                    let given = &arg[..2 + name.len()];
                    out.extend(long_synonyms(&self.program, given));
                }
            } else if let Some(short) = arg.strip_prefix('-') {
                for c in short.chars() {
                    out.push(synonym(&self.program, &format!("-{c}")).unwrap_or(c));
                }
            }
        }
        out
    }
}

/// Whether an argument is an option (`-x`, `--x`, cargo's `+toolchain`, a cmd.exe `/x`).
/// `NAME=value` with a shell-style name (`make`'s, `cmake`'s and many tools' variables).
fn is_assignment(arg: &str) -> bool {
    arg.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The word without leading `./` (`.\` on Windows too), repeated: the same file either way.
fn without_dot_slash(os: OsFamily, word: &str) -> &str {
    let mut word = word;
    loop {
        let rest = word.strip_prefix("./").or_else(|| {
            (os == OsFamily::Windows)
                .then(|| word.strip_prefix(".\\"))
                .flatten()
        });
        match rest {
            Some(rest) if !rest.is_empty() => word = rest.trim_start_matches('/'),
            _ => return word,
        }
    }
}

fn is_option(os: OsFamily, arg: &str) -> bool {
    arg.len() > 1
        && (arg.starts_with(['-', '+']) || (os == OsFamily::Windows && arg.starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn argv(words: &[&str]) -> Vec<Word> {
        words.iter().map(|w| Word::literal(*w)).collect()
    }

    fn deny(prefix: &str) -> DenyRule {
        DenyRule::compile(Rule {
            prefix: prefix.to_owned(),
            source: Source::User,
        })
        .unwrap_or_else(|| panic!("rule {prefix:?} compiles"))
    }

    #[test]
    fn an_mcp_rule_allows_no_command() {
        for prefix in ["mcp:srv", "mcp:srv/tool", " mcp:x"] {
            let rules = Rules::new(
                vec![Rule {
                    prefix: prefix.to_owned(),
                    source: Source::User,
                }],
                Vec::new(),
            );
            assert!(rules.allow.is_empty(), "{prefix}");
        }
        let kept = Rules::new(
            vec![Rule {
                prefix: "git status".to_owned(),
                source: Source::User,
            }],
            Vec::new(),
        );
        assert_eq!(kept.allow.len(), 1);
    }

    #[test]
    fn deny_rules_match_strictly() {
        let cases: &[(&str, &[&str], Match)] = &[
            ("rm -rf", &["rm", "-rf", "/x"], Match::Definite),
            ("rm -rf", &["rm", "-fr", "x"], Match::Definite),
            ("rm -rf", &["rm", "-r", "-f", "x"], Match::Definite),
            ("rm -rf", &["rm", "-f", "x", "-r"], Match::Definite),
            ("rm -rf", &["rm", "-Rf", "x"], Match::Definite),
            (
                "rm -rf",
                &["rm", "--recursive", "--force", "x"],
                Match::Definite,
            ),
            ("rm -rf", &["rm", "--rec", "--fo", "x"], Match::Definite),
            ("rm -rf", &["rm", "-rfv", "x"], Match::Definite),
            ("rm -rf", &["rm", "-r", "x"], Match::No),
            ("rm -rf", &["rm", "x"], Match::No),
            ("rm -rf", &["rmdir", "-rf"], Match::No),
            ("rm", &["/bin/rm", "x"], Match::Definite),
            ("rm", &["RM"], Match::Definite),
            ("git push", &["git", "push"], Match::Definite),
            (
                "git push",
                &["git", "-C", "x", "push", "origin"],
                Match::Definite,
            ),
            ("git push", &["git", "status"], Match::No),
            ("git push", &["git", "stash", "push"], Match::No),
            ("git push", &["git", "-c", "a=b", "push"], Match::Definite),
            ("git push", &["git", "--git-dir=x", "push"], Match::Definite),
            (
                "cargo publish",
                &["cargo", "+nightly", "publish"],
                Match::Definite,
            ),
            ("rm -rf /", &["rm", "-rf", "a", "b", "/"], Match::Definite),
            ("git push", &["git", "pushx"], Match::No),
            ("git push --force", &["git", "push", "-f"], Match::Definite),
            (
                "git push --force",
                &["git", "push", "--force-with-lease"],
                Match::No,
            ),
            (
                "git push --force",
                &["git", "push", "origin", "--force"],
                Match::Definite,
            ),
            (
                "git reset --hard",
                &["git", "reset", "--hard", "HEAD"],
                Match::Definite,
            ),
            ("find -delete", &["find", ".", "-delete"], Match::Definite),
            (
                "find -delete",
                &["find", ".", "-d", "-e", "-l", "-t"],
                Match::No,
            ),
            (
                "chmod -R 777",
                &["chmod", "777", "-R", "x"],
                Match::Definite,
            ),
            ("chmod -R 777", &["chmod", "-R", "755", "x"], Match::No),
            (
                "chmod -R 777",
                &["chmod", "-R", "777", "x"],
                Match::Definite,
            ),
            ("curl --data=x", &["curl", "--data=x"], Match::Definite),
        ];
        for (rule, words, want) in cases {
            let words = argv(words);
            let key = program_key(&words[0].text, OsFamily::Unix);
            let got = deny(rule).matches(OsFamily::Unix, &key, &words, false);
            assert_eq!(got, *want, "rule {rule:?} on {words:?}");
        }
    }

    #[test]
    fn deny_rules_on_windows_ignore_case_and_switch_order() {
        let cases: &[(&str, &[&str], Match)] = &[
            ("del /s", &["DEL", "/S", "x"], Match::Definite),
            ("del /s /q", &["del", "/q", "/s", "x"], Match::Definite),
            ("del /s /q", &["del", "/Q/S", "x"], Match::Definite),
            ("del /s /q", &["del", "/q", "x"], Match::No),
            (
                "Remove-Item -Recurse",
                &["remove-item", "-recurse", "x"],
                Match::Definite,
            ),
        ];
        for (rule, words, want) in cases {
            let words = argv(words);
            let key = program_key(&words[0].text, OsFamily::Windows);
            let got = deny(rule).matches(OsFamily::Windows, &key, &words, false);
            assert_eq!(got, *want, "rule {rule:?} on {words:?}");
        }
    }

    #[test]
    fn wild_words_make_a_possible_match() {
        let rule = deny("rm -rf");
        let words = vec![Word::literal("rm"), Word::expansion(), Word::literal("/")];
        assert_eq!(
            rule.matches(OsFamily::Unix, "rm", &words, false),
            Match::Possible
        );
        let words = vec![Word::expansion(), Word::literal("-rf")];
        assert_eq!(
            rule.matches(OsFamily::Unix, "", &words, false),
            Match::Possible
        );
        let words = argv(&["rm"]);
        assert_eq!(
            rule.matches(OsFamily::Unix, "rm", &words, true),
            Match::Possible
        );
        let pattern = Word {
            text: "-r?".to_owned(),
            kind: WordKind::Pattern,
        };
        let words = vec![Word::literal("rm"), pattern];
        assert_eq!(
            rule.matches(OsFamily::Unix, "rm", &words, false),
            Match::Possible
        );
        let rule = deny("git push");
        let pattern = Word {
            text: "*.rs".to_owned(),
            kind: WordKind::Pattern,
        };
        let words = vec![Word::literal("git"), Word::literal("status"), pattern];
        assert_eq!(
            rule.matches(OsFamily::Unix, "git", &words, false),
            Match::No
        );
    }

    #[test]
    fn allow_rules_are_literal_word_prefixes() {
        let rules = Rules::new(
            vec![
                Rule {
                    prefix: "git status".to_owned(),
                    source: Source::User,
                },
                Rule {
                    prefix: "  ".to_owned(),
                    source: Source::User,
                },
            ],
            vec![],
        );
        assert_eq!(rules.allow.len(), 1, "an empty rule is dropped");
        let rule = &rules.allow[0];
        assert!(rule.matches(&argv(&["git", "status", "-s"])));
        assert!(rule.matches(&argv(&["git", "status"])));
        assert!(!rule.matches(&argv(&["git", "statusx"])));
        assert!(!rule.matches(&argv(&["git"])));
        assert!(!rule.matches(&argv(&["/usr/bin/git", "status"])));
        assert!(!rule.matches(&[Word::literal("git"), Word::expansion()]));
    }
}
