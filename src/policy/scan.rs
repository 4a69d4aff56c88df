//! The deny and protected-program search over every simple command of a script, the same for
//! both OS families: each argv is checked as written, then behind wrappers (`sudo`, `env`,
//! `xargs` …: every later word may be the program), inside command strings (`sh -c`, `eval`,
//! `cmd /c`, `find -exec`, heredocs fed to a shell, assignment values, `alias`), recursively up
//! to a depth limit. Owns the search; the program tables are in `programs`; it does not decide
//! allow.

use super::parse;
use super::programs::{Traits, is_protected, traits};
use super::rules::{Match, Rules};
use super::script::{Command, Script};
use super::word::{
    ByteSet, Word, WordKind, any_ascii_token_either_way, glob_could_match, is_plain, program_key,
    without_quoting,
};
use super::{OsFamily, cmd, data, git};

/// Deepest nesting of command strings (`sh -c "sh -c '…'"`) searched; deeper is unchecked
/// (ask). Real commands nest two or three levels.
const MAX_NESTING_DEPTH: usize = 8;

/// Most command strings parsed for one decision; bounds the work for inputs built to be slow
/// (every parse costs a few microseconds).
const MAX_NESTED_SCRIPTS: usize = 64;

/// What the search found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Findings {
    /// The first deny rule (index into `Rules::deny`) that definitely matches.
    pub(super) deny: Option<usize>,
    /// The first deny rule that an expansion, a glob or run-time input could make match.
    pub(super) maybe_deny: Option<usize>,
    /// A word that is not fixed may be a program, so any deny rule could match.
    pub(super) unknown_program: bool,
    /// A protected program appears, or code that cannot be checked.
    pub(super) destructive: bool,
    /// Why some code could not be checked (ask), if so.
    pub(super) unchecked: Option<String>,
}

/// One search over a command string and everything nested in it.
pub(super) struct Scan<'r> {
    rules: &'r Rules,
    os: OsFamily,
    findings: Findings,
    scripts_left: usize,
    /// The command being searched sets git configuration in its environment (`GIT_CONFIG_…`).
    git_env: bool,
}

impl<'r> Scan<'r> {
    pub(super) fn new(rules: &'r Rules, os: OsFamily) -> Self {
        Scan {
            rules,
            os,
            findings: Findings::default(),
            scripts_left: MAX_NESTED_SCRIPTS,
            git_env: false,
        }
    }

    pub(super) fn findings(self) -> Findings {
        self.findings
    }

    /// Whether some code could not be checked (a raw-text search may still catch a rule).
    pub(super) fn has_unchecked(&self) -> bool {
        self.findings.unchecked.is_some()
    }

    fn done(&self) -> bool {
        self.findings.deny.is_some()
    }

    /// Records code that cannot be checked: ask, and treat as destructive.
    pub(super) fn unchecked(&mut self, reason: impl Into<String>) {
        self.findings.destructive = true;
        if self.findings.unchecked.is_none() {
            self.findings.unchecked = Some(reason.into());
        }
    }

    /// Records that an unknown program could be anything, so any deny rule could match.
    fn any_program(&mut self) {
        self.findings.destructive = true;
        self.findings.unknown_program = true;
    }

    /// Searches a parsed POSIX script.
    pub(super) fn posix(&mut self, script: &Script, depth: usize) {
        if script.misread {
            self.unchecked(
                "has a `#` glued to a word, which the shell keeps in the word but the parser \
                 reads as a comment",
            );
        }
        for command in &script.commands {
            if self.done() {
                return;
            }
            self.command(command, depth);
        }
        for code in &script.embedded_code {
            self.code_string(code, depth);
        }
    }

    /// Searches a cmd.exe command line.
    pub(super) fn cmd_line(&mut self, text: &str, depth: usize) {
        for argv in cmd::segments(text) {
            if self.done() {
                return;
            }
            self.argv(&argv, depth, false);
        }
    }

    /// Searches a nested command string in the given dialect.
    fn nested(&mut self, text: &str, posix: bool, depth: usize) {
        if self.done() {
            return;
        }
        if depth >= MAX_NESTING_DEPTH {
            self.unchecked(format!(
                "nests command strings more than {MAX_NESTING_DEPTH} levels deep"
            ));
            self.crude(text);
            return;
        }
        if self.scripts_left == 0 {
            self.unchecked("contains too many nested command strings to check");
            self.crude(text);
            return;
        }
        self.scripts_left -= 1;
        if !posix {
            self.cmd_line(text, depth + 1);
            return;
        }
        let script = parse::parse(text);
        if script.has_error {
            self.unchecked("contains a command string that could not be parsed");
            self.crude(text);
        }
        self.posix(&script, depth + 1);
    }

    /// A word that a program may run as code: searched in the dialects of this OS.
    fn code_string(&mut self, text: &str, depth: usize) {
        match self.os {
            OsFamily::Unix => self.nested(text, true, depth),
            OsFamily::Windows => {
                self.nested(text, false, depth);
                self.nested(text, true, depth);
            }
        }
    }

    fn command(&mut self, command: &Command, depth: usize) {
        let git_env = command
            .assignments
            .iter()
            .any(|a| a.starts_with("GIT_CONFIG"));
        let saved = self.git_env;
        self.git_env |= git_env;
        let shell = self.argv(&command.words, depth, false);
        self.git_env = saved;
        let Some(shell) = shell else {
            return;
        };
        if command.stdin.is_empty() {
            self.unchecked(format!(
                "`{shell}` reads commands from standard input, which cannot be checked"
            ));
        }
        for body in &command.stdin {
            match body.known() {
                Some(text) => self.nested(text, true, depth),
                None => self.unchecked(format!("`{shell}` reads commands that are not fixed")),
            }
        }
    }

    /// Searches one argv; returns the name of a shell in it that reads commands from standard
    /// input, if any.
    ///
    /// Fail closed: every word is tried as the program (an unknown wrapper, `setarch x86_64 rm
    /// …`, cannot hide one), and every argument that looks like code is searched as a command
    /// string (`hyperfine 'rm -rf x'`) — except the arguments `data` lists (`echo sudo`). After
    /// a known wrapper this is strict (a word that is not fixed may be any program; a command
    /// string that cannot be checked asks); elsewhere only what a deny rule could match counts.
    pub(super) fn argv(&mut self, argv: &[Word], depth: usize, more_args: bool) -> Option<String> {
        let first = argv.first()?;
        let key = first.known().map(|t| program_key(t, self.os));
        let first_traits = key.as_deref().map(traits).unwrap_or_default();
        let wrapper = first_traits.has(Traits::WRAPPER) || first_traits.has(Traits::RESERVED);
        let data = key.as_deref().and_then(|k| data::data_words(k, argv));
        let is_data = |at: usize| data.as_ref().is_some_and(|d| d.get(at));
        let saved_git_env = self.git_env;
        self.git_env |= argv.iter().any(|w| w.text.starts_with("GIT_CONFIG"));
        let mut stdin_shell = None;
        let mut more_args = more_args;
        for start in 0..argv.len() {
            if self.done() {
                break;
            }
            if start > 0 && is_data(start) {
                continue;
            }
            let layer = &argv[start..];
            let strict = start == 0 || wrapper;
            // The first word's key is the one computed above.
            let later_key;
            let (layer_key, layer_traits) = if start == 0 {
                (key.as_deref(), first_traits)
            } else {
                later_key = layer[0].known().map(|t| program_key(t, self.os));
                let later_traits = later_key.as_deref().map(traits).unwrap_or_default();
                (later_key.as_deref(), later_traits)
            };
            let program = layer_key.map(|key| (key, layer_traits));
            if let Some(shell) = self.layer(layer, program, depth, more_args, start == 0, strict) {
                stdin_shell = Some(shell);
            }
            if layer_traits.has(Traits::FEEDS) {
                more_args = true;
            }
        }
        self.git_env = saved_git_env;
        // A shell's arguments are its own (`sh -c …` is searched by `shell`).
        if !first_traits.has(Traits::SHELL) {
            for (at, word) in argv.iter().enumerate().skip(1) {
                if self.done() {
                    return None;
                }
                // A pattern's text is what dash passes (`zap\ {a,b}` is one word there) and
                // what each of bash's brace expansions starts with: search it too.
                let text = match word.kind {
                    WordKind::Literal | WordKind::Pattern => word.text.as_str(),
                    WordKind::Expansion => continue,
                };
                if is_plain(text) || is_data(at) {
                    continue;
                }
                if wrapper {
                    self.code_parts(text, depth);
                } else {
                    self.loosely(|scan| scan.code_parts(text, depth));
                }
            }
        }
        stdin_shell
    }

    /// A word that may hold code: the whole word, an assignment's or option's value (`PAGER=…`,
    /// `--x=…`), and an attached short-option value (`-S'rm -rf x'`).
    fn code_parts(&mut self, text: &str, depth: usize) {
        self.code_string(text, depth);
        if let Some((_, value)) = text.split_once('=') {
            self.code_string(value, depth);
        }
        if let Some(attached) = text.strip_prefix('-').and_then(|t| t.get(1..))
            && !text.starts_with("--")
            && !attached.is_empty()
        {
            self.code_string(attached, depth);
        }
    }

    /// Runs a search whose only findings that count are deny rules that do or may match: an
    /// argument that merely looks like code (`cat 'notes (draft).txt'`) may be data, so what
    /// cannot be checked in it does not ask by itself.
    fn loosely(&mut self, search: impl FnOnce(&mut Self)) {
        let unchecked = self.findings.unchecked.take();
        let unknown_program = self.findings.unknown_program;
        let destructive = self.findings.destructive;
        search(self);
        self.findings.unchecked = unchecked;
        self.findings.unknown_program = unknown_program;
        self.findings.destructive = destructive;
    }

    /// `git`: an alias defined on the command line is searched as what it stands for.
    fn git(&mut self, layer: &[Word], depth: usize, more_args: bool) {
        match git::expand(layer, self.git_env) {
            git::Expansion::None => {}
            git::Expansion::Words(expanded) => {
                if depth + 1 >= MAX_NESTING_DEPTH {
                    self.unchecked("nests git aliases too deeply to check");
                } else if let Some(shell) = self.argv(&expanded, depth + 1, more_args) {
                    self.unchecked(format!("`{shell}` reads commands from standard input"));
                }
            }
            git::Expansion::Shell(text) => self.code_string(&text, depth),
            git::Expansion::Unknown => {
                // Any command at all: a deny rule for git matches, any other may.
                let rule = self.rules.deny.iter().position(|r| r.program == "git");
                if let Some(index) = rule {
                    self.findings.deny = Some(index);
                } else {
                    self.any_program();
                }
            }
        }
    }

    /// Checks one candidate argv (a program and its arguments).
    /// `key` is the program key of `layer[0]` and its traits when that word is known.
    fn layer(
        &mut self,
        layer: &[Word],
        key: Option<(&str, Traits)>,
        depth: usize,
        more_args: bool,
        written: bool,
        strict: bool,
    ) -> Option<String> {
        let program = layer.first()?;
        let Some((key, traits)) = key.filter(|_| program.known().is_some()) else {
            if !strict && program.kind == WordKind::Pattern {
                // An argument that is a glob: only a program it could name counts (`ls *.rs`
                // names no `rm`).
                self.pattern_program(program, &layer[1..], more_args);
                return None;
            }
            self.any_program();
            if written {
                self.unchecked(if program.kind == WordKind::Pattern {
                    "the program name contains a glob"
                } else {
                    "the program name is not a fixed word"
                });
            }
            return None;
        };
        if traits.has(Traits::PROTECTED) {
            self.findings.destructive = true;
        }
        for (index, rule) in self.rules.deny.iter().enumerate() {
            match rule.matches(self.os, key, layer, more_args) {
                Match::Definite => {
                    self.findings.deny = Some(index);
                    return None;
                }
                Match::Possible => {
                    self.findings.maybe_deny.get_or_insert(index);
                }
                Match::No => {}
            }
        }
        let args = &layer[1..];
        if traits.has(Traits::SHELL) {
            return self.shell(key, args, depth);
        }
        match key {
            "cmd" => self.cmd_string(args, depth),
            "git" => self.git(layer, depth, more_args),
            "powershell" | "pwsh" => self.powershell(args),
            "find" => self.find(args, depth),
            "alias" => {
                for value in args.iter().filter_map(Word::known) {
                    if let Some((_, code)) = value.split_once('=') {
                        self.code_string(code, depth);
                    }
                }
            }
            k if traits.has(Traits::JOINER) => {
                if args.iter().any(Word::is_wild) {
                    self.unchecked(format!("`{k}` runs words that are not fixed"));
                }
                let joined = join_known(args);
                self.code_string(&joined, depth);
            }
            _ => {}
        }
        None
    }

    /// A glob where a program may be: a possible match for every deny rule whose program it
    /// could expand to and whose words could follow.
    fn pattern_program(&mut self, program: &Word, args: &[Word], more_args: bool) {
        let pattern = program.text.to_ascii_lowercase();
        for (index, rule) in self.rules.deny.iter().enumerate() {
            if glob_could_match(&pattern, &rule.program)
                && rule.matches_arguments(self.os, args, more_args) != Match::No
            {
                self.findings.destructive = true;
                self.findings.maybe_deny.get_or_insert(index);
            }
        }
    }

    /// `sh -c STRING …`: every word after an option containing `c` is searched as a script
    /// (strict: `$0` and option values too). Without `-c` and without a script operand (or
    /// with `-s`) the shell reads standard input: its name is returned.
    fn shell(&mut self, name: &str, args: &[Word], depth: usize) -> Option<String> {
        let mut command_string = false;
        let mut reads_stdin = false;
        let mut operand = false;
        for arg in args {
            let Some(text) = arg.known() else {
                if command_string {
                    self.unchecked(format!(
                        "`{name} -c` runs a command string that is not fixed"
                    ));
                } else {
                    self.any_program();
                    operand = true;
                }
                continue;
            };
            if command_string {
                self.nested(text, true, depth);
            } else if let Some(long) = text.strip_prefix("--") {
                if let Some(code) = long.strip_prefix("command=") {
                    self.nested(code, true, depth);
                } else if long == "command" {
                    command_string = true;
                }
            } else if let Some(short) = text.strip_prefix('-')
                && !short.is_empty()
            {
                command_string |= short.contains('c');
                reads_stdin |= short.contains('s');
            } else if !text.starts_with('+') || text.len() == 1 {
                // A script file (and its arguments); options may still follow (strict).
                operand = true;
            }
        }
        if command_string && self.os == OsFamily::Windows {
            // cmd.exe does not split at `'`: the string may arrive as several words.
            let after = args.iter().position(|a| {
                a.known()
                    .is_some_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c'))
            });
            if let Some(at) = after {
                let joined = join_known(&args[at + 1..]);
                self.nested(joined.trim_matches('\''), true, depth);
            }
        }
        (!command_string && (reads_stdin || !operand)).then(|| name.to_owned())
    }

    /// `cmd /c …` (also `/k`, `/r`, attached as in `/cdel x`): the rest of the line is a
    /// cmd.exe command.
    fn cmd_string(&mut self, args: &[Word], depth: usize) {
        for (at, arg) in args.iter().enumerate() {
            let Some(text) = arg.known() else { continue };
            let lower = text.to_ascii_lowercase();
            let Some(pos) = ["/c", "/k", "/r"]
                .iter()
                .filter_map(|o| lower.find(o))
                .min()
            else {
                continue;
            };
            let rest = &args[at + 1..];
            if rest.iter().any(Word::is_wild) {
                self.findings.destructive = true;
            }
            let mut joined = text.get(pos + 2..).unwrap_or("").to_owned();
            let tail = join_known(rest);
            if !joined.is_empty() && !tail.is_empty() {
                joined.push(' ');
            }
            joined.push_str(&tail);
            self.nested(&joined, false, depth);
            return;
        }
    }

    /// PowerShell's command words are searched as wrapper arguments; an encoded command
    /// cannot be read.
    fn powershell(&mut self, args: &[Word]) {
        let encoded = args.iter().filter_map(Word::known).any(|t| {
            let t = t.to_ascii_lowercase();
            t.starts_with('-') && t.len() >= 2 && ("-encodedcommand".starts_with(&t) || t == "-ec")
        });
        if encoded {
            self.unchecked("runs an encoded PowerShell command, which cannot be checked");
        }
    }

    /// `find … -exec CMD … ;` runs CMD; `-delete` deletes (destructive).
    fn find(&mut self, args: &[Word], depth: usize) {
        let mut i = 0;
        while i < args.len() {
            let text = args[i].known().unwrap_or("");
            if text == "-delete" {
                self.findings.destructive = true;
            }
            if matches!(text, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let start = i + 1;
                let end = args[start..]
                    .iter()
                    .position(|a| matches!(a.known(), Some(";" | "+")))
                    .map_or(args.len(), |p| start + p);
                if depth + 1 >= MAX_NESTING_DEPTH {
                    self.unchecked("nests `find -exec` too deeply to check");
                    return;
                }
                if let Some(shell) = self.argv(&args[start..end], depth + 1, false) {
                    self.unchecked(format!("`{shell}` reads commands from standard input"));
                }
                i = end;
            }
            i += 1;
        }
    }

    /// Best-effort search of raw text whose structure is unknown (unparseable, too long, or
    /// hiding code in quotes): every run of name characters is tried as a program. Matches are
    /// only possible (ask), never a definite deny, because the text may be quoted data.
    pub(super) fn crude(&mut self, text: &str) {
        if !self.crude_protected_only(text) {
            self.crude_everywhere(text);
        }
    }

    /// The raw-text search of the text as written and without its quoting characters.
    pub(super) fn crude_everywhere(&mut self, text: &str) {
        self.crude_tokens(text);
        if let Some(unquoted) = without_quoting(text, self.os) {
            self.crude_tokens(&unquoted);
        }
    }

    /// The raw-text search when no token of either text is a deny rule's program (most
    /// texts): only protected programs count then, found in one pass without copying the
    /// text (`word::any_token_either_way`). `false`, with nothing recorded, when some token
    /// is a deny rule's program: the caller searches everything, in order.
    fn crude_protected_only(&mut self, text: &str) -> bool {
        let mut protected = false;
        let deny_program =
            any_ascii_token_either_way(text, self.os, is_crude_token_byte, |token| {
                let key = program_key(token, self.os);
                protected |= is_protected(&key);
                self.rules.deny.iter().any(|rule| rule.program == key)
            });
        if deny_program {
            return false;
        }
        self.findings.destructive |= protected;
        true
    }

    fn crude_tokens(&mut self, text: &str) {
        let tokens: Vec<&str> = text
            .split(|c: char| !is_crude_token_character(c))
            .filter(|t| !t.is_empty())
            .collect();
        for start in 0..tokens.len() {
            let key = program_key(tokens[start], self.os);
            if is_protected(&key) {
                self.findings.destructive = true;
            }
            // A token is a literal word, so a rule applies only to its own program: the words
            // are built only for a token that is one.
            if !self.rules.deny.iter().any(|rule| rule.program == key) {
                continue;
            }
            let window: Vec<Word> = tokens[start..tokens.len().min(start + 32)]
                .iter()
                .map(|token| Word::literal(*token))
                .collect();
            for (index, rule) in self.rules.deny.iter().enumerate() {
                if rule.matches(self.os, &key, &window, false) == Match::Definite {
                    self.findings.maybe_deny.get_or_insert(index);
                }
            }
        }
    }
}

/// A character of a token of the raw-text search.
fn is_crude_token_character(c: char) -> bool {
    u8::try_from(c).is_ok_and(is_crude_token_byte)
}

/// [`is_crude_token_character`] of a byte (a table: read on every command); no byte above
/// ASCII is one.
fn is_crude_token_byte(b: u8) -> bool {
    CRUDE_TOKEN.contains(b)
}

/// The characters of a token of the raw-text search: ASCII letters, digits and these.
const CRUDE_TOKEN: ByteSet = ByteSet::new(true, b"_.-/+\\:");

fn join_known(words: &[Word]) -> String {
    words
        .iter()
        .filter_map(Word::known)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Rule, Source};
    use pretty_assertions::assert_eq;

    fn rules() -> Rules {
        let rule = |prefix: &str| Rule {
            prefix: prefix.to_owned(),
            source: Source::User,
        };
        Rules::new(vec![], vec![rule("rm -rf"), rule("del /s")])
    }

    fn posix(command: &str) -> Findings {
        let rules = rules();
        let mut scan = Scan::new(&rules, OsFamily::Unix);
        scan.posix(&parse::parse(command), 0);
        scan.findings()
    }

    fn findings(deny: Option<usize>, maybe: Option<usize>, destructive: bool) -> Findings {
        Findings {
            deny,
            maybe_deny: maybe,
            unknown_program: false,
            destructive,
            unchecked: None,
        }
    }

    #[test]
    fn posix_findings() {
        let unchecked = |reason: &str| Findings {
            unchecked: Some(reason.to_owned()),
            ..findings(None, None, true)
        };
        let cases: Vec<(&str, Findings)> = vec![
            ("ls -la", findings(None, None, false)),
            ("rm x", findings(None, None, true)),
            ("rm -rf x", findings(Some(0), None, true)),
            ("ls; nice rm -fr x", findings(Some(0), None, true)),
            (
                "rm $x y",
                Findings {
                    unknown_program: true,
                    ..findings(None, Some(0), true)
                },
            ),
            ("xargs rm", findings(None, Some(0), true)),
            ("rm *", findings(None, Some(0), true)),
            ("rm *.rs", findings(None, None, true)),
            ("find . -delete", findings(None, None, true)),
            (
                "nice $x",
                Findings {
                    unknown_program: true,
                    ..findings(None, None, true)
                },
            ),
            (
                "$x -rf",
                Findings {
                    unknown_program: true,
                    ..unchecked("the program name is not a fixed word")
                },
            ),
            (
                "sh -c \"$x\"",
                Findings {
                    unknown_program: true,
                    ..unchecked("`sh -c` runs a command string that is not fixed")
                },
            ),
            (
                "curl x | bash",
                unchecked("`bash` reads commands from standard input, which cannot be checked"),
            ),
            ("bash <<< 'ls'", findings(None, None, false)),
            (
                "bash -c 'ls ('",
                unchecked("contains a command string that could not be parsed"),
            ),
            (
                "powershell -enc AAAA",
                unchecked("runs an encoded PowerShell command, which cannot be checked"),
            ),
        ];
        for (command, want) in cases {
            assert_eq!(posix(command), want, "input: {command:?}");
        }
    }

    /// A pattern argument is a command string both ways: dash passes `rm\ -rf\ {a,b}` as one
    /// word, and each of bash's brace expansions starts with the same words.
    #[test]
    fn pattern_arguments_are_searched_as_code() {
        for command in [
            "hf rm\\ -rf\\ {a,b}",
            "hf rm\\ -rf\\ x*",
            "w hf rm\\ -rf\\ {a,b}",
            "hf x\\;rm\\ -rf\\ {a,b}",
        ] {
            assert_eq!(posix(command).deny, Some(0), "input: {command:?}");
        }
        assert_eq!(posix("hf 'rm -rf' {a,b}").deny, Some(0));
        assert_eq!(posix("ls {a,b}").deny, None);
    }

    #[test]
    fn crude_search_only_suspects() {
        let rules = rules();
        let mut scan = Scan::new(&rules, OsFamily::Unix);
        scan.crude("echo 'x; rm -rf /'");
        assert_eq!(scan.findings(), findings(None, Some(0), true));
    }

    #[test]
    fn cmd_line_findings() {
        let rules = rules();
        let cases: Vec<(&str, Findings)> = vec![
            ("dir", findings(None, None, false)),
            ("dir & del /s x", findings(Some(1), None, true)),
            ("cmd /c \"del /s x\"", findings(Some(1), None, true)),
            ("del x", findings(None, None, true)),
        ];
        for (command, want) in cases {
            let mut scan = Scan::new(&rules, OsFamily::Windows);
            scan.cmd_line(command, 0);
            assert_eq!(scan.findings(), want, "input: {command:?}");
        }
    }
}
