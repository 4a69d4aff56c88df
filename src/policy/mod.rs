//! The permission policy: for every shell command the model asks to run, decide allow, ask or
//! deny (DESIGN.md "Permission policy"). Pure: no I/O, no prompt, no settings files; the
//! caller merges rules, asks the person and applies [`apply_mode`]. It would rather ask than
//! wrongly allow.
//!
//! [`decide`] runs, in order: size and NUL checks; the deny search over every simple command
//! anywhere (`scan`); asks for whatever could not be checked; the metacharacter string check
//! (rule 3); the single-simple-command check; user allow rules; the built-in read-only list
//! (`assets/builtin-*.txt`). Everything else asks. It is given a [`Context`]: the OS family,
//! the workspace and working directory (paths in the command are judged against them,
//! lexically), and which read-only list applies ([`ReadOnly`]).
//!
//! With `ReadOnly::Inspect` (the default) rule 3 becomes "operators ask unless every part is
//! allowed": the inspection programs (`inspect`, `assets/builtin-inspect.txt`) join the list
//! with option allowlists and every file inside the workspace and not a secret; a pipeline or
//! list of parts that are each allowed, with only harmless redirections, is allowed, each part
//! decided from the start like a command of its own (`compose`), its verdict in
//! [`Decision::parts`]; operator characters only inside quotes (`'…'`, `"…"` without `$` or
//! backticks) are text. A command allowed by
//! the built-in list alone has source `builtin` (a composed one only when every part is), so a
//! caller can run it read-only. `ReadOnly::Strict` keeps exactly the 0.1 behaviour.
//!
//! Decisions this module documents (the contract leaves them open):
//! - **Deny rules are strict.** The program matches by name: path, case and a Windows `.exe`
//!   are ignored (`/bin/RM` is `rm`; macOS and Windows ignore case). The rule's first plain word
//!   is a subcommand: the first word after the program that is not an option or maybe an
//!   option's value (`git push` denies `git -C x push`, not `git stash push`); later plain words
//!   follow in order but not adjacently. Other spellings of a subcommand count
//!   (`assets/command-spellings.txt`: `git send-pack`, `npm i`). Its options may
//!   appear anywhere, in any order, split or combined: `rm -rf` denies `rm -r -f`, `rm -fr`,
//!   `rm -f x -r`, `rm -rfv`, and through a per-program synonym table also `rm -R`,
//!   `rm --recursive --force` and GNU abbreviations (`--rec`). Single-dash words of more than
//!   three letters (`-delete`) are whole words. Rules are split at blanks, without quoting.
//! - **Anywhere** (fail closed): in every simple command every word is tried as the program,
//!   so no wrapper, listed or not, hides one (`setarch x86_64 rm -rf x`), and arguments that are
//!   not plain words are searched as command strings (`hyperfine 'rm -rf x'`); only a deny rule
//!   that does or may match counts there. Not for the arguments `assets/data-arguments.txt`
//!   lists as data (`echo sudo`, `grep 'rm -rf' notes`, `git commit -m …`). A git alias given on
//!   the line is searched as what it stands for; an unknown subcommand with aliases or included
//!   configuration on the line matches every git deny rule (`git` module).
//! - **Wrappers** (`sudo`, `env`, `xargs`, `timeout`, `setarch` …, tables in `programs`) are
//!   searched strictly: a word that is not fixed may be the program, and a command string that
//!   cannot be checked asks (`su -c '…'`, `env -S '…'`). Shells
//!   (`sh -c`, `bash -lc` …), `eval`, `watch`, `cmd /c`, `find -exec`, `trap`, `alias`
//!   values, assignment values and heredocs or here-strings fed to a shell are searched as
//!   scripts, up to 8 levels (deeper: ask). A shell reading commands from a pipe asks.
//! - **Not fixed**: an expansion or glob in program position, or where a deny rule needs a
//!   word, cannot be known: ask ("may match deny rule …"), and `destructive` is set.
//! - **Allow rules** match the program word as written: `/usr/bin/git status` does not match
//!   `git status`, and `/bin/ls` is not the built-in `ls` (both ask).
//! - **Globs** are fine in the arguments of list entries marked `globs` (`ls *.rs`, `echo *`),
//!   never in a program name, never for `date`/`hostname` (a file named `--set=…` could
//!   expand there), and never with a user allow rule (same reason): those ask.
//! - **Comments** are ignored: `ls #x` is `ls`. Operators inside a comment still ask (rule 3
//!   is a plain string check).
//! - **`cd`** is on the list with any argument: it only changes the directory of the shell
//!   that runs the command.
//! - **Sources of a default ask**: a command that is simply not on the list asks with source
//!   `builtin` and no rule; everything about the shape of the string (operators, parse errors,
//!   compound commands, unknown words) asks with source `parser`; a possible deny names the
//!   rule and its source.
//! - **Windows** uses cmd.exe rules, not a POSIX parser (see `windows`); deny rules match
//!   without regard to case there, and the built-in list too.
//! - **tree-sitter-bash is not trusted blindly** (differential fuzzing against bash found
//!   these): a line starting with `\` is glued to the line before (searched again with a
//!   blank added), `! { rm x; }` yields a command named `{` (reserved words as command names
//!   are treated like wrappers), `\⇥` splits a word (words must be separated by plain blanks
//!   to be allowed), backticks in unquoted heredoc bodies are not parsed (searched
//!   separately), and `me@x.com` or `==` are syntax errors (ask, unless the command is plain
//!   words only, which skip the parser).
//! - **Line continuations**: the shell deletes backslash-newline before it splits words, so a
//!   command containing one is also decided with them removed, and the stricter answer wins.
//! - **`destructive` errs wide**: besides the structural search, any word of the raw text
//!   that names a protected program (`echo rm`, `git -c core.pager='rm …' log`), a renaming
//!   builtin (`alias`, `hash`), or a line continuation sets it, so mode allow-all asks.
//! - **Windows list = cmd.exe built-ins only**: cmd.exe runs `whoami.bat` from the current
//!   directory before `whoami.exe` on PATH, so programs from DESIGN.md's list that are not
//!   built-ins are left out (a cloned repository could otherwise plant one).

mod auto;
mod builtin;
mod builtins_pure;

mod cmd;
mod compose;
mod compound;
mod data;
mod decide;
pub mod files;
mod git;
mod git_listings;
mod git_read;
mod inspect;
mod lex;
mod listings;
mod options;
mod parse;
mod path_rule;
mod programs;
mod protected;
mod rules;
mod runners;
mod scan;
mod script;
mod secret_paths;
mod simple;
mod split;
mod suggest;
mod windows_path;
mod word;

pub use auto::apply_auto;
pub use compose::PartDecision;
pub use rules::{MCP_RULE_PREFIX, Rule, Rules, is_mcp_rule};
pub use suggest::{allow_rule_problem, is_valid_allow_prefix, suggest_prefix};

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use decide::decide_as_written;
use protected::mentions_protected;

use crate::workspace::SecretFiles;

/// The OS family whose shell runs the command: POSIX `sh` or cmd.exe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OsFamily {
    /// Linux, macOS and other POSIX systems (`sh -c`).
    Unix,
    /// Windows (`cmd.exe /d /s /c`).
    Windows,
}

impl OsFamily {
    /// The family this program was built for.
    #[must_use]
    pub fn current() -> Self {
        if cfg!(windows) {
            OsFamily::Windows
        } else {
            OsFamily::Unix
        }
    }
}

/// What to do with a command, ordered by strictness: `Allow < Ask < Deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Run it without asking.
    Allow,
    /// Ask the person; without a terminal this becomes deny.
    Ask,
    /// Do not run it.
    Deny,
}

/// Where the rule or check that decided comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The built-in read-only list.
    Builtin,
    /// The user settings file.
    User,
    /// The project settings file (`.agent/settings.toml`).
    Project,
    /// A command-line flag (`--allow`, `--deny`).
    Flag,
    /// The shape of the command string itself (operators, parse errors …).
    Parser,
}

/// The permission mode (`[permissions] mode`, `--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Ask the person where the policy is unsure.
    Ask,
    /// What the sandbox contains runs without a prompt ([`apply_auto`]); `ask` wherever the
    /// sandbox is not fully active. Only the user file or a flag may choose it.
    Auto,
    /// Never prompt: every ask becomes deny.
    Deny,
    /// No shell tool at all.
    Off,
    /// Ask becomes allow, except for commands touching a protected program.
    AllowAll,
}

impl Mode {
    /// Strictness for comparing layers (`allow-all < auto < ask < deny < off`): a project
    /// file may only raise it (and never choose `auto`).
    #[must_use]
    pub const fn strictness(self) -> u8 {
        match self {
            Mode::AllowAll => 0,
            Mode::Auto => 1,
            Mode::Ask => 2,
            Mode::Deny => 3,
            Mode::Off => 4,
        }
    }

    /// The name as written in settings and flags.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::Auto => "auto",
            Mode::Deny => "deny",
            Mode::Off => "off",
            Mode::AllowAll => "allow-all",
        }
    }
}

/// The policy's answer for one command: everything a caller needs, from one parse.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Decision {
    /// Allow, ask or deny (`"decision"` in JSON).
    #[serde(rename = "decision")]
    pub verdict: Verdict,
    /// Why, for a person: lowercase, e.g. "contains a redirection ('>')".
    pub reason: String,
    /// Where the deciding rule or check comes from.
    pub source: Source,
    /// The rule or list entry that decided; `None` when nothing specific did.
    pub rule: Option<String>,
    /// A protected program (`rm`, `sudo` …) appears anywhere, or part of the command could not
    /// be checked: mode allow-all still asks, and the prompt marks it.
    #[serde(skip)]
    pub destructive: bool,
    /// The allow rule to offer a person for this command ("always allow"), when one would be
    /// safe: program plus subcommand (`git status`), never for a compound command or a
    /// protected program. Set only when the verdict is ask.
    #[serde(skip)]
    pub prefix: Option<String>,
    /// For a composed command (`a | b`, `a && b` …) read by the inspect list: each part's
    /// verdict, in order (`"parts"` in JSON); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartDecision>,
}

impl Decision {
    fn new(verdict: Verdict, reason: impl Into<String>, source: Source, destructive: bool) -> Self {
        Decision {
            verdict,
            reason: reason.into(),
            source,
            rule: None,
            destructive,
            prefix: None,
            parts: Vec::new(),
        }
    }

    fn with_rule(mut self, rule: &str) -> Self {
        self.rule = Some(rule.to_owned());
        self
    }
}

/// Which built-in read-only list applies (`[permissions] read_only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadOnly {
    /// The 0.1 list only (`ls`, `pwd`, `date` …); any operator asks.
    Strict,
    /// The 0.1 list plus the inspection programs (`cat`, `sed -n`, `rg`, read-only `git` …)
    /// with every path inside the workspace, and compositions of allowed parts.
    #[default]
    Inspect,
}

impl ReadOnly {
    /// The name as written in settings.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ReadOnly::Strict => "strict",
            ReadOnly::Inspect => "inspect",
        }
    }

    /// Parses a name as written in settings.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "strict" => Some(ReadOnly::Strict),
            "inspect" => Some(ReadOnly::Inspect),
            _ => None,
        }
    }
}

/// Where a command would run, besides its text and the rules: the OS family, the workspace
/// and working directory (absolute; paths in the command are judged against them,
/// lexically), and which read-only list applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The OS family whose shell runs the command.
    pub os: OsFamily,
    /// The workspace root, absolute and normalised.
    pub workspace: PathBuf,
    /// The working directory of the command, absolute and normalised (inside the workspace,
    /// or every relative path is outside).
    pub cwd: PathBuf,
    /// Which built-in read-only list applies.
    pub read_only: ReadOnly,
    /// The files that hold secrets: `assets/secret-files.txt` plus the user's
    /// `[permissions.files] ask_read` ([`Context::with_secrets`]). Words that name one ask.
    pub secrets: Arc<SecretFiles>,
}

impl Context {
    /// A context for `workspace` with the command running in `cwd` (relative to the
    /// workspace, or absolute); both are normalised lexically.
    #[must_use]
    pub fn new(os: OsFamily, workspace: &Path, cwd: &Path, read_only: ReadOnly) -> Self {
        let workspace = crate::workspace::normalize(Path::new("/"), workspace);
        let cwd = crate::workspace::normalize(&workspace, cwd);
        Context {
            os,
            workspace,
            cwd,
            read_only,
            secrets: default_secrets(),
        }
    }

    /// The same context judging secret files by `secrets` (the built-in list plus the user's
    /// `ask_read`, as the file tools do) instead of the built-in list alone.
    #[must_use]
    pub fn with_secrets(self, secrets: Arc<SecretFiles>) -> Self {
        Context { secrets, ..self }
    }
}

/// The built-in secret-file list, shared.
fn default_secrets() -> Arc<SecretFiles> {
    static DEFAULTS: OnceLock<Arc<SecretFiles>> = OnceLock::new();
    Arc::clone(DEFAULTS.get_or_init(|| Arc::new(SecretFiles::defaults().clone())))
}

/// Decides one command under the given rules, in the given context. Pure: no I/O;
/// microseconds. A bug that panics while deciding makes the command ask (see [`guarded`]).
#[must_use]
pub fn decide(rules: &Rules, context: &Context, command: &str) -> Decision {
    guarded("command", || decide_unguarded(rules, context, command))
}

/// What `decide` gives (a command's or, from `files`, a file access's decision: `what`
/// names it), or — where deciding panicked (a bug; the panic hook has printed it, escaped) —
/// an ask marked destructive, so that neither a rule nor mode `allow-all` lets the call
/// through: a person decides, and where nobody can be asked it is denied. A line the model
/// writes then cannot end `check --stdin` or a session.
pub(super) fn guarded(what: &str, decide: impl FnOnce() -> Decision) -> Decision {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(decide)).unwrap_or_else(|_| {
        Decision::new(
            Verdict::Ask,
            format!("the policy failed on this {what} (an internal error, please report it)"),
            Source::Parser,
            true,
        )
    })
}

fn decide_unguarded(rules: &Rules, context: &Context, command: &str) -> Decision {
    let os = context.os;
    let mut decision = decide_as_written(rules, context, command);
    // Most commands have no backslash-newline and no `&>`: one look at every byte says which
    // pair may be there.
    let (mut newline, mut ampersand) = (false, false);
    for &b in command.as_bytes() {
        newline |= b == b'\n';
        ampersand |= b == b'&';
    }
    // The shell deletes backslash-newline before it splits words (`r\⏎m -rf x` runs
    // `rm -rf x`); the parser does not. Decide the joined text too and keep the stricter.
    let joined = (os == OsFamily::Unix && newline && word::has_pair(command, b'\\', b'\n'))
        .then(|| command.replace("\\\n", ""));
    if let Some(joined) = &joined {
        let joined = decide_as_written(rules, context, joined);
        if joined.verdict > decision.verdict {
            decision = joined;
        }
        decision.destructive = true;
        decision.prefix = None;
    }
    // `&>` is bash's (and bash's `sh`'s) redirection of both outputs, but in a POSIX `sh` such
    // as dash it is `&` and then `>`: `cat &>/dev/null rm -rf x` runs `cat` in the background
    // and then `rm -rf x`. Which `sh` runs the command is the machine's: decide the dash
    // reading too (every `&>`, quoted or not: a nested `sh -c '…'` reads its text the same
    // way, and a quoted one only reads alike) and keep the stricter.
    if os == OsFamily::Unix {
        // Of the text as written and, as the shell reads it, joined at backslash-newline
        // (`cat &\⏎>/dev/null perl …` holds an `&>` only once joined).
        let texts = std::iter::once(command).chain(joined.as_deref());
        for text in texts.filter(|text| ampersand && word::has_pair(text, b'&', b'>')) {
            let dash = decide_as_written(rules, context, &dash_reading(text));
            if dash.verdict > decision.verdict {
                decision = Decision {
                    reason: format!("in a POSIX sh `&>` is `&` then `>`: {}", dash.reason),
                    prefix: None,
                    parts: Vec::new(),
                    destructive: decision.destructive || dash.destructive,
                    ..dash
                };
            } else {
                decision.destructive |= dash.destructive;
            }
        }
    }
    if !decision.destructive && mentions_protected(os, command) {
        decision.destructive = true;
    }
    decision
}

/// `command` with each `&>` written as a POSIX `sh` (dash) reads it: `&` then `>`. Where the
/// redirection's target (a plain word) ends its simple command — the text or an operator
/// follows — dash runs the same programs with the same words as `>` alone would (the one
/// before in the background), so it becomes `>`: `ls &>/dev/null; pwd` stays two allowed
/// parts. Anywhere else (words follow the target, or the target is not plain) it becomes
/// `& >`, so that what follows is a command of its own.
fn dash_reading(command: &str) -> String {
    let mut out = String::with_capacity(command.len() + 8);
    let mut rest = command;
    while let Some(at) = rest.find("&>") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let appending = after.starts_with('>');
        let target = after.strip_prefix('>').unwrap_or(after);
        let target = target.trim_start_matches([' ', '\t']);
        let end = target
            .find(|c: char| c.is_whitespace() || "|&;<>()".contains(c))
            .unwrap_or(target.len());
        let plain = end > 0
            && target[..end]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
        let next = target[end..].trim_start_matches([' ', '\t']);
        let ends_command = next.is_empty() || next.starts_with(['|', '&', ';', ')', '\n']);
        out.push_str(if plain && ends_command { ">" } else { "& >" });
        if appending {
            out.push('>');
        }
        rest = if appending { &after[1..] } else { after };
    }
    out.push_str(rest);
    out
}

/// Applies the permission mode to a decision from [`decide`]. Ask mode: unchanged. Deny
/// mode: ask becomes deny. Off: everything is denied. Allow-all: ask becomes allow unless
/// the command is destructive (it still asks). Deny stays deny in every mode. Auto: unchanged
/// here, as ask; the caller applies [`apply_auto`] where the sandbox is fully active.
#[must_use]
pub fn apply_mode(decision: Decision, mode: Mode) -> Decision {
    match (mode, decision.verdict) {
        (_, Verdict::Deny)
        | (Mode::Ask | Mode::Auto, Verdict::Allow | Verdict::Ask)
        | (Mode::Deny | Mode::AllowAll, Verdict::Allow) => decision,
        (Mode::Deny, Verdict::Ask) => Decision {
            verdict: Verdict::Deny,
            reason: format!("{} (mode `deny` never asks)", decision.reason),
            ..decision
        },
        (Mode::Off, Verdict::Allow | Verdict::Ask) => Decision {
            verdict: Verdict::Deny,
            reason: "the shell tool is off (mode `off`)".to_owned(),
            ..decision
        },
        (Mode::AllowAll, Verdict::Ask) if decision.destructive => Decision {
            reason: format!(
                "{} (mode `allow-all` still asks: it may touch a protected program)",
                decision.reason
            ),
            ..decision
        },
        (Mode::AllowAll, Verdict::Ask) => Decision {
            verdict: Verdict::Allow,
            reason: format!("allowed by mode `allow-all` ({})", decision.reason),
            ..decision
        },
    }
}

#[cfg(test)]
mod tests;
