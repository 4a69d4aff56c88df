//! Tables of programs the deny search and the prefix suggestion treat specially: protected
//! programs, wrappers that run another program, shells and programs that run a command string,
//! and programs that run code given to them (no one-word rule for them).
//! Owns the names (program keys: basename, lowercase, no `.exe`); not how they are used.

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

/// Whether a program key is protected (`mkfs.ext4` counts as `mkfs`).
pub(super) fn is_protected(key: &str) -> bool {
    PROTECTED.contains(&key) || PROTECTED_WINDOWS.contains(&key) || key.starts_with("mkfs.")
}

/// Whether later words of the command may be the program that actually runs.
pub(super) fn is_wrapper(key: &str) -> bool {
    // Asked for every word of every command: the tables are merged into one set, once.
    static WRAPPERS: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    WRAPPERS
        .get_or_init(|| {
            [
                RUN_PROGRAM,
                RUN_PROGRAM_MORE,
                RUN_AS_USER,
                FEED_ARGUMENTS,
                MULTI_CALL,
                RUN_WORDS,
                RUN_WINDOWS,
            ]
            .iter()
            .flat_map(|table| table.iter().copied())
            .collect()
        })
        .contains(key)
}

/// Whether a program runs other programs or code given to it (wrappers and shells).
pub(super) fn runs_other_programs(key: &str) -> bool {
    is_wrapper(key) || SHELLS.contains(&key) || JOINERS.contains(&key)
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
}
