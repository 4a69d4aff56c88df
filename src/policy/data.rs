//! Arguments that programs treat as data (`assets/data-arguments.txt`): the words of a simple
//! command that the deny search does not try as a program nor search as a script, because the
//! program prints, searches for or stores them (`echo sudo`, `grep 'rm -rf' notes.txt`,
//! `git commit -m 'rm -rf old'`). Owns the table and finding those words in an argv; the
//! search itself is `scan`'s.

use std::sync::OnceLock;

use super::git;
use super::programs::name_table::NameTable;
use super::word::Word;

const TABLE: &str = include_str!("../../assets/data-arguments.txt");

/// Which arguments of a program are data.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// Every argument.
    All,
    /// The search pattern; the options listed (sorted) take a value in the next word.
    Pattern(Vec<String>),
    /// The value of `-m`/`--message`.
    Message,
}

#[derive(Debug, Clone)]
struct Row {
    programs: Vec<String>,
    /// Subcommands the row applies to (`git:commit,tag`); empty for any.
    subcommands: Vec<String>,
    kind: Kind,
}

fn table() -> &'static [Row] {
    static ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    ROWS.get_or_init(|| parse_table(TABLE))
}

/// The first row naming a program, through a lookup built once (asked for every argv).
fn row_of(key: &str) -> Option<&'static Row> {
    static INDEX: OnceLock<NameTable<'static, usize>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let names = table().iter().enumerate().flat_map(|(at, row)| {
            row.programs
                .iter()
                .map(move |program| (program.as_str(), at))
        });
        NameTable::new(names, |_, _| {})
    });
    index.get(key).map(|at| &table()[at])
}

/// Reads the table. A line it cannot read is left out: fewer exceptions only deny more.
fn parse_table(text: &str) -> Vec<Row> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let first = fields.next()?;
            let (programs, subcommands) = match first.split_once(':') {
                Some((p, subs)) => (p, subs.split(',').map(str::to_owned).collect()),
                None => (first, Vec::new()),
            };
            let kind = match fields.next()? {
                "all" => Kind::All,
                "pattern" => {
                    // Sorted, for a binary search (an `rg` command has dozens to look through).
                    let mut options: Vec<String> = fields.map(str::to_owned).collect();
                    options.sort_unstable();
                    Kind::Pattern(options)
                }
                "message" => Kind::Message,
                _ => return None,
            };
            Some(Row {
                programs: programs.split(',').map(str::to_owned).collect(),
                subcommands,
                kind,
            })
        })
        .collect()
}

/// Which words of an argv are data: bits for an argv of up to 64 words (all but a few),
/// without allocating; a list for a longer one.
#[derive(Debug)]
pub(super) struct Marks {
    len: usize,
    bits: u64,
    long: Vec<bool>,
}

impl Marks {
    fn new(len: usize) -> Self {
        let long = if len > 64 {
            vec![false; len]
        } else {
            Vec::new()
        };
        Marks { len, bits: 0, long }
    }

    /// Marks word `at` (nothing past the end).
    fn set(&mut self, at: usize) {
        if at >= self.len {
            return;
        }
        match self.long.get_mut(at) {
            Some(slot) => *slot = true,
            None => self.bits |= 1 << at,
        }
    }

    /// Whether word `at` is data.
    pub(super) fn get(&self, at: usize) -> bool {
        if self.len > 64 {
            self.long.get(at).copied().unwrap_or(false)
        } else {
            at < self.len && self.bits >> at & 1 == 1
        }
    }
}

/// For an argv whose program key is `key`: which words are data, or `None` when none is (the
/// common case, without allocating).
pub(super) fn data_words(key: &str, argv: &[Word]) -> Option<Marks> {
    let row = row_of(key)?;
    let start = if row.subcommands.is_empty() {
        1
    } else {
        let at = if key == "git" {
            git::subcommand_at(argv)?
        } else {
            argv.iter().skip(1).position(|w| !w.text.starts_with('-'))? + 1
        };
        let sub = argv[at].known()?;
        if !row.subcommands.iter().any(|s| s == sub) {
            return None;
        }
        at + 1
    };
    let mut data = Marks::new(argv.len());
    match &row.kind {
        Kind::All => (1..argv.len()).for_each(|at| data.set(at)),
        Kind::Pattern(value_options) => pattern(argv, start, value_options, &mut data),
        Kind::Message => message(argv, start, &mut data),
    }
    Some(data)
}

/// Marks the pattern of a grep-like command.
fn pattern(argv: &[Word], start: usize, value_options: &[String], data: &mut Marks) {
    let mut explicit = false;
    let mut operand_seen = false;
    let mut options_done = false;
    let mut i = start;
    while i < argv.len() {
        let text = argv[i].text.as_str();
        if options_done || !text.starts_with('-') || text == "-" {
            if !explicit && !operand_seen {
                data.set(i);
            }
            operand_seen = true;
        } else if text == "--" {
            options_done = true;
        } else if text == "-e" || text == "--regexp" {
            explicit = true;
            data.set(i + 1);
            i += 1;
        } else if text.starts_with("--regexp=") || (text.starts_with("-e") && text.len() > 2) {
            explicit = true;
            data.set(i);
        } else if value_options
            .binary_search_by(|o| o.as_str().cmp(text))
            .is_ok()
        {
            i += 1;
        }
        i += 1;
    }
}

/// Marks the message of `git commit -m …` and the like.
fn message(argv: &[Word], start: usize, data: &mut Marks) {
    let mut i = start;
    while i < argv.len() {
        let text = argv[i].text.as_str();
        if text == "--" {
            return;
        }
        let short = text.strip_prefix('-').filter(|t| !t.starts_with('-'));
        let m_at = short.and_then(|cluster| cluster.find('m'));
        if text == "--message" || short.zip(m_at).is_some_and(|(c, at)| at + 1 == c.len()) {
            // `-m TEXT`, `-am TEXT`, `--message TEXT`
            data.set(i + 1);
            i += 1;
        } else if text.starts_with("--message=") || m_at.is_some() {
            // `-mTEXT`, `--message=TEXT`
            data.set(i);
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn marked(command: &str) -> Vec<String> {
        let argv: Vec<Word> = command.split(' ').map(Word::literal).collect();
        let key = argv[0].text.clone();
        let data = data_words(&key, &argv);
        argv.iter()
            .enumerate()
            .filter(|(at, _)| data.as_ref().is_some_and(|d| d.get(*at)))
            .map(|(_, w)| w.text.clone())
            .collect()
    }

    /// Every value option of a `pattern` line is found by the search of the sorted list, and
    /// words close to them are not.
    #[test]
    fn value_options_are_found_sorted() {
        let lines = TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains(" pattern "));
        for line in lines {
            let program = line.split([',', ' ']).next().unwrap_or_default();
            let row = row_of(program).expect("the program has a row");
            let Kind::Pattern(sorted) = &row.kind else {
                panic!("{program} is a pattern row");
            };
            let find = |text: &str| sorted.binary_search_by(|o| o.as_str().cmp(text)).is_ok();
            for option in line.split_whitespace().skip(2) {
                assert!(find(option), "{program} {option}");
                let close = format!("{option}x");
                assert_eq!(find(&close), sorted.contains(&close), "{program} {close}");
            }
            assert!(!find("-") && !find("--") && !find(""), "{program}");
        }
    }

    /// Marks hold for argvs of every length, around the 64 words kept as bits: every word of
    /// `echo`, the word after a last `-e`, nothing past the end.
    #[test]
    fn marks_hold_for_long_argvs() {
        for len in [1, 2, 63, 64, 65, 66, 130] {
            let words: Vec<String> = (1..len).map(|at| format!("w{at}")).collect();
            let echo = format!("echo {}", words.join(" "));
            assert_eq!(marked(echo.trim_end()), words, "{len} words");
            let grep = format!("grep {} -e", words.join(" "));
            let argv: Vec<Word> = grep.split_whitespace().map(Word::literal).collect();
            let marks = data_words("grep", &argv).expect("grep has data");
            let got: Vec<usize> = (0..argv.len() + 2).filter(|at| marks.get(*at)).collect();
            let want: Vec<usize> = if len > 1 { vec![1] } else { vec![] };
            assert_eq!(got, want, "{len} words");
        }
    }

    /// The lookup finds the row the search in table order finds, for every program of the
    /// table and names close to them.
    #[test]
    fn rows_are_found_as_in_order() {
        let programs = table().iter().flat_map(|row| row.programs.iter());
        for program in programs {
            let cut = &program[..program.len() - 1];
            for key in [
                program.as_str(),
                cut,
                &format!("{program}x"),
                &program.to_uppercase(),
            ] {
                let want = table()
                    .iter()
                    .find(|row| row.programs.iter().any(|p| p == key));
                assert_eq!(
                    row_of(key).map(|r| &r.programs),
                    want.map(|r| &r.programs),
                    "{key}"
                );
            }
        }
        assert!(row_of("").is_none() && row_of("ls").is_none());
    }

    #[test]
    fn the_table_reads() {
        let rows = parse_table(TABLE);
        assert_eq!(
            rows.len(),
            TABLE
                .lines()
                .filter(|l| {
                    let l = l.trim();
                    !l.is_empty() && !l.starts_with('#')
                })
                .count(),
            "every line of assets/data-arguments.txt reads"
        );
    }

    #[test]
    fn data_words_found() {
        let cases: &[(&str, &[&str])] = &[
            ("echo rm -rf x", &["rm", "-rf", "x"]),
            ("grep rm notes", &["rm"]),
            ("grep -i rm notes", &["rm"]),
            ("grep -A 3 rm notes", &["rm"]),
            ("grep -e rm -e sudo notes", &["rm", "sudo"]),
            ("grep -erm notes", &["-erm"]),
            ("grep -- -rf notes", &["-rf"]),
            ("rg --pre rm pat", &["pat"]),
            ("rg --hostname-bin rm pat", &["pat"]),
            ("git commit -m rm", &["rm"]),
            ("git commit -am rm", &["rm"]),
            ("git commit -mrm", &["-mrm"]),
            ("git commit --message=rm", &["--message=rm"]),
            ("git -C x commit -m rm", &["rm"]),
            ("git push -m rm", &[]),
            ("ls rm", &[]),
        ];
        for (command, want) in cases {
            assert_eq!(marked(command), *want, "input: {command:?}");
        }
    }
}
