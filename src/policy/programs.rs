//! Tables of programs the deny search and the prefix suggestion treat specially: protected
//! programs, wrappers that run another program, shells and programs that run a command string,
//! and programs that run code given to them (no one-word rule for them).
//! Owns the names (program keys: basename, lowercase, no `.exe`); not how they are used.

pub(super) mod name_table;

use super::script::RESERVED_WORDS;
use name_table::NameTable;

/// Programs that destroy data or the system, or change user: `destructive` is set when one
/// appears anywhere (`mkfs.*` too), so that mode allow-all still asks. The DESIGN.md list.
const PROTECTED: &[&str] = &[
    "rm", "rmdir", "mv", "dd", "mkfs", "shutdown", "reboot", "poweroff", "halt", "sudo", "su",
    "doas", "sudoedit", "pkexec", "runuser", "sg",
];

/// Windows programs and cmd.exe built-ins of the same kind.
const PROTECTED_WINDOWS: &[&str] = &["del", "erase", "rd", "move", "format"];

/// Run the program named by a later word, with changed scheduling, limits, environment or
/// tracing (`nice -n 5 rm …`).
const RUN_PROGRAM: &[&str] = &[
    "env",
    "command",
    "builtin",
    "exec",
    "nohup",
    "time",
    "nice",
    "timeout",
    "stdbuf",
    "ionice",
    "chrt",
    "setsid",
    "taskset",
    "numactl",
    "strace",
    "ltrace",
    "valgrind",
    "watch",
    "coproc",
    "chroot",
    "unshare",
    "nsenter",
    "flock",
    "firejail",
    "fakeroot",
    "eatmydata",
    "faketime",
    "torsocks",
    "proxychains",
    "proxychains4",
    "caffeinate",
    "systemd-run",
    "script",
    "setpriv",
    "prlimit",
    "ld.so",
    "ld-linux.so.2",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
    "npx",
];

/// More programs that run the program named by a later word (the second review's list and its
/// kin): architecture and personality (`setarch x86_64 …`), terminals and input, credentials,
/// displays, crash and performance tools, sessions, cgroups and security contexts, sandboxes,
/// supervision, MPI, benchmarks, init shims. Any word is tried as a program anyway; a wrapper
/// is searched strictly (a word that is not fixed may be the program) and never offered as a
/// one-word allow rule.
const RUN_PROGRAM_MORE: &[&str] = &[
    "setarch",
    "linux32",
    "linux64",
    "i386",
    "x86_64",
    "uname26",
    "unbuffer",
    "rlwrap",
    "sshpass",
    "xvfb-run",
    "catchsegv",
    "perf",
    "dbus-run-session",
    "dbus-launch",
    "cgexec",
    "runcon",
    "bwrap",
    "chpst",
    "softlimit",
    "setuidgid",
    "envdir",
    "envuidgid",
    "mpirun",
    "mpiexec",
    "hyperfine",
    "entr",
    "gosu",
    "su-exec",
    "tini",
    "dumb-init",
    "proot",
    "fakechroot",
    "systemd-inhibit",
    "nocache",
    "cpulimit",
    "trickle",
    "torify",
    "tsocks",
    "authbind",
    "capsh",
    "aa-exec",
    "sandbox-exec",
    "nsjail",
    "minijail0",
    "daemonize",
    "start-stop-daemon",
    "sem",
];

/// Run it as another user.
const RUN_AS_USER: &[&str] = &[
    "sudo", "sudoedit", "doas", "su", "runuser", "sg", "pkexec", "run0",
];

/// Run it with more arguments read from standard input (`echo -rf | xargs rm`).
pub(super) const FEED_ARGUMENTS: &[&str] = &["xargs", "parallel"];

/// Multi-call binaries (`busybox rm`).
const MULTI_CALL: &[&str] = &["busybox", "toybox"];

/// Take a command string or words to run now, later or elsewhere.
const RUN_WORDS: &[&str] = &["eval", "trap", "ssh"];

/// Windows: cmd.exe and friends, and cmd.exe statements (`if exist x del x`, `for … do …`).
const RUN_WINDOWS: &[&str] = &[
    "cmd",
    "start",
    "call",
    "runas",
    "powershell",
    "pwsh",
    "wsl",
    "forfiles",
    "if",
    "for",
    "do",
    "else",
];

/// Join their arguments into one command string and run it through a shell.
pub(super) const JOINERS: &[&str] = &["eval", "watch"];

/// POSIX-like shells: `-c STRING`, a script operand, or commands on standard input.
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh",
    "tcsh",
];

/// The tables of programs that run the program named by a later word ([`is_wrapper`]).
const WRAPPERS: [&[&str]; 7] = [
    RUN_PROGRAM,
    RUN_PROGRAM_MORE,
    RUN_AS_USER,
    FEED_ARGUMENTS,
    MULTI_CALL,
    RUN_WORDS,
    RUN_WINDOWS,
];

/// What the deny search knows of a program key, read in one lookup ([`traits`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Traits(u8);

impl Traits {
    /// [`is_protected`].
    pub(super) const PROTECTED: u8 = 1;
    /// [`is_wrapper`].
    pub(super) const WRAPPER: u8 = 1 << 1;
    /// In [`SHELLS`].
    pub(super) const SHELL: u8 = 1 << 2;
    /// In [`JOINERS`].
    pub(super) const JOINER: u8 = 1 << 3;
    /// In [`FEED_ARGUMENTS`].
    pub(super) const FEEDS: u8 = 1 << 4;
    /// A shell reserved word ([`RESERVED_WORDS`]).
    pub(super) const RESERVED: u8 = 1 << 5;

    /// Whether the key has the trait `bit` (one of the constants above).
    pub(super) fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// The [`Traits`] of a program key: every table above (and the shell's reserved words)
/// merged into one lookup, built once.
#[inline]
pub(super) fn traits(key: &str) -> Traits {
    static TABLE: std::sync::OnceLock<NameTable<'static, u8>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let tables = [
            (PROTECTED, Traits::PROTECTED),
            (PROTECTED_WINDOWS, Traits::PROTECTED),
            (SHELLS, Traits::SHELL),
            (JOINERS, Traits::JOINER),
            (FEED_ARGUMENTS, Traits::FEEDS),
            (RESERVED_WORDS, Traits::RESERVED),
        ]
        .into_iter()
        .chain(WRAPPERS.map(|table| (table, Traits::WRAPPER)));
        NameTable::new(
            tables.flat_map(|(table, bit)| table.iter().map(move |name| (*name, bit))),
            |first, again| *first |= again,
        )
    });
    let mut traits = Traits(table.get(key).unwrap_or(0));
    if key.starts_with("mkfs.") {
        traits.0 |= Traits::PROTECTED;
    }
    traits
}

/// Whether a program key is protected (`mkfs.ext4` counts as `mkfs`).
pub(super) fn is_protected(key: &str) -> bool {
    traits(key).has(Traits::PROTECTED)
}

/// Whether later words of the command may be the program that actually runs.
pub(super) fn is_wrapper(key: &str) -> bool {
    traits(key).has(Traits::WRAPPER)
}

/// Whether a program runs other programs or code given to it (wrappers and shells).
pub(super) fn runs_other_programs(key: &str) -> bool {
    let traits = traits(key);
    traits.has(Traits::WRAPPER) || traits.has(Traits::SHELL) || traits.has(Traits::JOINER)
}

/// Programs that run code or commands given to them besides the wrappers and shells
/// above: a one-word rule for them would allow anything. A trailing `*` matches any name
/// starting with the rest, as in the option tables (`python*` is `python3.12`).
const CODE_RUNNERS: &[&str] = &[
    "python*",
    "pypy*",
    "node*",
    "perl*",
    "ruby*",
    "irb",
    "php*",
    "lua*",
    "tclsh*",
    "wish*",
    "expect",
    "rscript",
    "r",
    "julia",
    "osascript",
    "java*",
    "jshell",
    "groovy",
    "scala",
    "kotlin",
    "npx",
    "uvx",
    "pipx",
    "bunx", // interpreters
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "busybox",
    "sed",
    "find",
    "tar",
    "zip",
    "rsync",
    "scp",
    "sftp",
    "ssh",
    "gdb",
    "lldb", // debuggers run programs and their own command scripts
    "vi",
    "vim",
    "nvim",
    "emacs",
    "ed",
    "ex",
    "less",
    "more",
    "man", // shell escapes
    "sqlite3",
    "sqlite",
    "mysql",
    "mariadb",
    "psql",
    "gnuplot", // `.shell`, `\!`, `system` run commands
    "tmux",
    "screen",
    "xterm", // run a command in a new session or window
    "open",
    "xdg-open",
    "at",
    "batch",
    "crontab",
    "schtasks", // run later or elsewhere
    "source",
    ".",
    "alias",
    "exec",
    "eval",
    "trap",
    "command",
    "builtin", // shell built-ins
];

/// Whether a program key is in [`CODE_RUNNERS`].
pub(super) fn runs_code(key: &str) -> bool {
    CODE_RUNNERS
        .iter()
        .any(|entry| match entry.strip_suffix('*') {
            Some(stem) => key.starts_with(stem),
            None => *entry == key,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        let protected = ["rm", "mkfs", "mkfs.ext4", "sudo", "del", "format"];
        assert!(protected.iter().all(|p| is_protected(p)), "{protected:?}");
        assert!(!is_protected("rmx") && !is_protected("mkfsx") && !is_protected("ls"));
        let wrappers = [
            "env",
            "sudo",
            "xargs",
            "busybox",
            "eval",
            "cmd",
            "if",
            "nice",
            "setarch",
            "hyperfine",
        ];
        assert!(wrappers.iter().all(|w| is_wrapper(w)), "{wrappers:?}");
        assert!(!is_wrapper("ls") && !is_wrapper("sh"));
        assert!(runs_other_programs("sh") && runs_other_programs("watch"));
    }

    /// The one lookup answers as the tables' own searches, for every name of every table,
    /// the names changed (cut, lengthened, cased, a `.` suffix, `mkfs.` forms) and others.
    #[test]
    fn traits_are_the_tables_answers() {
        use proptest::prelude::*;
        let names: Vec<&str> = [
            PROTECTED,
            PROTECTED_WINDOWS,
            JOINERS,
            SHELLS,
            RESERVED_WORDS,
        ]
        .iter()
        .chain(&WRAPPERS)
        .flat_map(|table| table.iter().copied())
        .collect();
        let key = prop_oneof![
            prop::sample::select(names.clone()).prop_map(str::to_owned),
            (prop::sample::select(names), 0..5usize, "[a-zA-Z.]{0,2}").prop_map(
                |(name, cut, tail)| {
                    let end = name.len().saturating_sub(cut % 3);
                    let name = name.get(..end).unwrap_or(name);
                    let name = if cut == 4 {
                        name.to_uppercase()
                    } else {
                        name.to_owned()
                    };
                    format!("{name}{tail}")
                }
            ),
            "(mkfs)?[.a-z\\[{}!\u{e9}-]{0,6}",
        ];
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(&key, |key| {
                let key = key.as_str();
                let traits = traits(key);
                let protected = PROTECTED.contains(&key)
                    || PROTECTED_WINDOWS.contains(&key)
                    || key.starts_with("mkfs.");
                let wrapper = WRAPPERS.iter().any(|table| table.contains(&key));
                prop_assert_eq!(traits.has(Traits::PROTECTED), protected, "{}", key);
                prop_assert_eq!(traits.has(Traits::WRAPPER), wrapper, "{}", key);
                prop_assert_eq!(traits.has(Traits::SHELL), SHELLS.contains(&key), "{}", key);
                prop_assert_eq!(
                    traits.has(Traits::JOINER),
                    JOINERS.contains(&key),
                    "{}",
                    key
                );
                prop_assert_eq!(
                    traits.has(Traits::FEEDS),
                    FEED_ARGUMENTS.contains(&key),
                    "{}",
                    key
                );
                prop_assert_eq!(
                    traits.has(Traits::RESERVED),
                    RESERVED_WORDS.contains(&key),
                    "{}",
                    key
                );
                Ok(())
            })
            .expect("the lookup answers as the tables");
    }
}
