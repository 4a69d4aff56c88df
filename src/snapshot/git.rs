//! The `git` program, run hermetically for the snapshot repository: no system or global
//! config, no hooks, no fsmonitor, no signing, no content filters, every inherited `GIT_*`
//! variable cleared. Every call has a deadline: a git that hangs is killed, never waited for.
//! This file knows how to run git; what to ask it is the caller's.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::SnapshotError;

/// How often a running git is checked against its deadline, at most: the checks start at
/// [`FIRST_POLL`] and double, so a call of a few milliseconds is not kept waiting for the
/// next check (a snapshot makes four of them), and a long one does not spin.
const POLL_INTERVAL: Duration = Duration::from_millis(2);
const FIRST_POLL: Duration = Duration::from_micros(50);

/// The null device, for `GIT_CONFIG_GLOBAL` and `core.hooksPath` (Git for Windows reads
/// `/dev/null` too, but `NUL` is its own name).
#[cfg(unix)]
const NULL_DEVICE: &str = "/dev/null";
#[cfg(not(unix))]
const NULL_DEVICE: &str = "NUL";

/// Settings given to every call with `-c`: nothing runs code, nothing rewrites content.
const HERMETIC_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "core.quotePath=false",
    "core.precomposeUnicode=false",
    "core.bigFileThreshold=512m",
    "index.sparse=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.external=",
    "protocol.ext.allow=never",
];

/// What a finished git call printed.
#[derive(Debug)]
pub(crate) struct Output {
    pub stdout: Vec<u8>,
}

/// One repository to run git for: its git dir, the work tree, and the index file.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub git_dir: PathBuf,
    pub work_tree: PathBuf,
    /// `GIT_INDEX_FILE`, when not the git dir's own `index`.
    pub index: Option<PathBuf>,
}

impl Git {
    /// A command for `args`, hermetic, with no deadline yet.
    fn command(&self, args: &[&OsStr]) -> Command {
        let mut command = hermetic_command();
        command.arg("--git-dir").arg(&self.git_dir);
        command.arg("--work-tree").arg(&self.work_tree);
        command.current_dir(&self.work_tree);
        if let Some(index) = &self.index {
            command.env("GIT_INDEX_FILE", index);
        }
        command.args(args);
        command
    }

    /// Runs git with `args` (and `input` on stdin) until it exits or `deadline` passes.
    pub fn run(
        &self,
        args: &[&OsStr],
        input: Option<&[u8]>,
        deadline: Instant,
    ) -> Result<Output, SnapshotError> {
        run_command(self.command(args), args, input, deadline)
    }

    /// Runs git with `args` while `feed` writes its stdin (from a thread of its own: git
    /// may answer before it has read everything), until it exits or `deadline` passes.
    pub fn run_feeding(
        &self,
        args: &[&str],
        feed: impl FnOnce(&mut dyn Write) + Send + 'static,
        deadline: Instant,
    ) -> Result<Output, SnapshotError> {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        run_fed(self.command(&args), &args, Some(Box::new(feed)), deadline)
    }

    /// Like [`Git::run`] with string arguments.
    pub fn run_str(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
        deadline: Instant,
    ) -> Result<Output, SnapshotError> {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        self.run(&args, input, deadline)
    }
}

/// `git` with the hermetic environment and settings, and no repository chosen.
pub(crate) fn hermetic_command() -> Command {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            command.env_remove(name);
        }
    }
    command
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", NULL_DEVICE)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("GIT_AUTHOR_NAME", "agent")
        .env("GIT_AUTHOR_EMAIL", "agent@localhost")
        .env("GIT_COMMITTER_NAME", "agent")
        .env("GIT_COMMITTER_EMAIL", "agent@localhost")
        .env("LC_ALL", "C");
    command
        .arg("-c")
        .arg(format!("core.hooksPath={NULL_DEVICE}"));
    for setting in HERMETIC_CONFIG {
        command.arg("-c").arg(setting);
    }
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Whether the `git` program can be started at all.
pub(crate) fn available() -> bool {
    let mut command = hermetic_command();
    command.arg("--version");
    command.output().is_ok_and(|output| output.status.success())
}

/// What writes a git's stdin.
type Feed = Box<dyn FnOnce(&mut dyn Write) + Send>;

/// Runs `command` to its end or its deadline, feeding `input` and reading both pipes.
pub(crate) fn run_command(
    command: Command,
    args: &[&OsStr],
    input: Option<&[u8]>,
    deadline: Instant,
) -> Result<Output, SnapshotError> {
    let feed = input.map(|bytes| {
        let bytes = bytes.to_vec();
        Box::new(move |stdin: &mut dyn Write| {
            let _ = stdin.write_all(&bytes);
        }) as Feed
    });
    run_fed(command, args, feed, deadline)
}

fn run_fed(
    mut command: Command,
    args: &[&OsStr],
    feed: Option<Feed>,
    deadline: Instant,
) -> Result<Output, SnapshotError> {
    let what = describe(args);
    if feed.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command.spawn().map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            SnapshotError::GitMissing
        } else {
            SnapshotError::Git {
                what: what.clone(),
                message: error.to_string(),
            }
        }
    })?;
    let writer = feed.map(|feed| {
        let stdin = child.stdin.take();
        std::thread::spawn(move || {
            if let Some(stdin) = stdin {
                let mut stdin = std::io::BufWriter::with_capacity(64 * 1024, stdin);
                feed(&mut stdin);
                let _ = stdin.flush();
            }
        })
    });
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let status = wait(&mut child, deadline);
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(SnapshotError::TimedOut { what });
    };
    if !status.success() {
        let message = String::from_utf8_lossy(&stderr);
        let message = message
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("no message")
            .trim()
            .to_owned();
        return Err(SnapshotError::Git { what, message });
    }
    Ok(Output { stdout })
}

/// Waits for `child` until `deadline`; past it the child is killed and `None` returned.
fn wait(child: &mut Child, deadline: Instant) -> Option<std::process::ExitStatus> {
    let mut pause = FIRST_POLL;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(POLL_INTERVAL);
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

fn reader(pipe: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// `git ls-files …` for messages: the subcommand and its flags, no paths.
fn describe(args: &[&OsStr]) -> String {
    let words: Vec<String> = args
        .iter()
        .take_while(|arg| *arg != &OsStr::new("--"))
        .take(3)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    format!("git {}", words.join(" "))
}

/// A path from git's `-z` output (bytes, relative to the work tree).
#[cfg(unix)]
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    PathBuf::from(OsStr::from_bytes(bytes))
}

/// A path from git's `-z` output (bytes, relative to the work tree).
#[cfg(not(unix))]
pub(crate) fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).replace('/', "\\"))
}

/// The bytes git uses for a path relative to the work tree.
#[cfg(unix)]
pub(crate) fn bytes_of(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt as _;
    path.as_os_str().as_bytes().to_vec()
}

/// The bytes git uses for a path relative to the work tree.
#[cfg(not(unix))]
pub(crate) fn bytes_of(path: &Path) -> Vec<u8> {
    path.to_string_lossy().replace('\\', "/").into_bytes()
}

/// An absolute path printed by git (one line).
pub(crate) fn line_path(stdout: &[u8]) -> Option<PathBuf> {
    let text = stdout.strip_suffix(b"\n").unwrap_or(stdout);
    (!text.is_empty()).then(|| {
        #[cfg(unix)]
        {
            path_of(text)
        }
        #[cfg(not(unix))]
        {
            PathBuf::from(String::from_utf8_lossy(text).into_owned())
        }
    })
}

/// Splits `-z` output into its records.
pub(crate) fn records(stdout: &[u8]) -> impl Iterator<Item = &[u8]> {
    stdout
        .split(|b| *b == 0)
        .filter(|record| !record.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_split_on_nul_and_keep_newlines_in_names() {
        let out = b"a\nb\0c\0\0";
        let got: Vec<&[u8]> = records(out).collect();
        assert_eq!(got, vec![&b"a\nb"[..], &b"c"[..]]);
    }

    #[test]
    fn descriptions_name_the_subcommand_not_the_paths() {
        let args = [OsStr::new("ls-files"), OsStr::new("-z"), OsStr::new("--")];
        assert_eq!(describe(&args), "git ls-files -z");
    }
}
