//! Processes as the system's `/proc` shows them from outside: what a test's commands left
//! running, and their cleanup.

use std::path::{Path, PathBuf};

/// A live process (not a zombie), as the system's `/proc` shows it from outside.
pub struct Process {
    pub pid: u32,
    /// The program's name (`comm`).
    pub name: String,
    /// Its working directory, where it can be read.
    pub cwd: Option<PathBuf>,
    /// Its arguments, NUL-separated.
    pub cmdline: String,
}

/// Every live process this test can see, read from outside (the system's `/proc`): inside the
/// sandbox a command sees neither its own numbers there nor any process outside its PID
/// namespace.
pub fn live_processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (name, rest) = stat.split_once(" (")?.1.rsplit_once(')')?;
            let state = rest.split_whitespace().next()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            (state != "Z").then(|| Process {
                pid,
                name: name.to_owned(),
                cwd: std::fs::read_link(entry.path().join("cwd")).ok(),
                cmdline: String::from_utf8_lossy(&cmdline).into_owned(),
            })
        })
        .collect()
}

/// The `sleep` processes still running (not zombies) in the working directory `work`: what
/// the tests' commands leave behind if anything of them outlives its call.
pub fn left_running(work: &Path) -> Vec<u32> {
    let canonical = work.canonicalize().unwrap_or_else(|_| work.to_path_buf());
    live_processes()
        .into_iter()
        .filter(|p| {
            p.name == "sleep"
                && p.cwd
                    .as_deref()
                    .is_some_and(|cwd| cwd == canonical || cwd == work)
        })
        .map(|p| p.pid)
        .collect()
}

/// Kills what [`left_running`] finds (a test's cleanup; one process at a time, never a group).
pub fn kill_left(work: &Path) {
    for pid in left_running(work).into_iter().filter(|&pid| pid > 1) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status();
    }
}
