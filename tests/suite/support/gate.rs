//! A command the tests stop, and the proof that nothing of it is left, without waiting for
//! time to pass. The command holds a FIFO (`gate`, made by [`Gate::new`]) open for reading and
//! writes `started` once it does; every process it starts inherits the FIFO. The test holds
//! the other end (so the command's open does not block) until the agent has ended; then
//! [`Gate::held`] lets go of it and opens the write end without blocking, which fails exactly
//! when no process holds the FIFO for reading: nothing of the command survived. No sleep, no
//! window of time.

use std::path::{Path, PathBuf};

/// `prefix` (say `trap '' TERM; `), then the command: holds `gate`, says `started`, and would
/// write `LATER` after a long sleep.
pub fn held_command(prefix: &str) -> String {
    format!("{prefix}exec 3< gate; echo started > started; sleep 60; touch LATER")
}

/// How long a reader must hold the gate to count (see [`Gate::held`]).
#[cfg(unix)]
const HELD_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// The FIFO `gate` in a workspace, with the test's own end of it.
pub struct Gate {
    path: PathBuf,
    own: std::fs::File,
}

impl Gate {
    /// Makes the FIFO `gate` in `work`, where [`held_command`] runs, and holds it open.
    pub fn new(work: &Path) -> Self {
        let path = work.join("gate");
        let status = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo");
        assert!(status.success(), "mkfifo failed");
        // Read and write: on Linux this never blocks, and the command's read end opens at once.
        let own = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open the gate");
        Self { path, own }
    }

    /// Writes `text` into the gate, for a `cat gate` to print; it ends once the gate is
    /// dropped (kept in the pipe until then, whenever `cat` opens it).
    pub fn write(&mut self, text: &str) {
        use std::io::Write as _;
        self.own
            .write_all(text.as_bytes())
            .expect("write to the gate");
    }

    /// Whether any process other than the test still holds the gate open for reading (the
    /// command, or anything it started). Opening the write end without blocking fails with
    /// `ENXIO` exactly when none does.
    ///
    /// A reader seen once is looked for again for a while: another test of this process that
    /// starts a program holds a copy of every descriptor between its `fork` and `exec`, the
    /// test's own end of the gate too (close-on-exec closes it only at the `exec`). A command
    /// that ran on holds the gate all along.
    #[cfg(unix)]
    pub fn held(self) -> bool {
        use std::os::unix::fs::OpenOptionsExt as _;
        drop(self.own);
        let start = std::time::Instant::now();
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed())
                .open(&self.path)
            {
                Ok(_) if start.elapsed() >= HELD_FOR => return true,
                Ok(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
                Err(error)
                    if error.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) =>
                {
                    return false;
                }
                Err(error) => panic!("opening the gate: {error}"),
            }
        }
    }

    /// FIFOs are Unix's: elsewhere the tests that stop a command cannot tell what is left.
    #[cfg(not(unix))]
    pub fn held(self) -> bool {
        drop(self.own);
        panic!("the gate {} is a FIFO: Unix only", self.path.display())
    }
}

#[cfg(unix)]
#[test]
fn the_gate_is_held_exactly_while_the_command_runs() {
    use super::process::{kill_left, left_running};
    use super::wait::wait_for;
    let patience = std::time::Duration::from_secs(30);
    let dir = tempfile::tempdir().unwrap();
    assert!(!Gate::new(dir.path()).held(), "held before anything ran");
    std::fs::remove_file(dir.path().join("gate")).unwrap();
    for survivor in [false, true] {
        let gate = Gate::new(dir.path());
        let child = std::process::Command::new("sh")
            .args(["-c", &held_command("")])
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        let mut child = super::reaped::Reaped::new(child, dir.path());
        // Its `sleep` running, not only its marker written: the shell forks it after.
        wait_for(patience, "the command's sleep to start", || {
            !left_running(dir.path()).is_empty()
        });
        // The shell goes; its `sleep` stays unless killed too, as a survivor would.
        child.kill().unwrap();
        child.wait().unwrap();
        if !survivor {
            kill_left(dir.path());
            wait_for(patience, "the sleep to end", || {
                left_running(dir.path()).is_empty()
            });
        }
        assert_eq!(gate.held(), survivor, "survivor: {survivor}");
        kill_left(dir.path());
        std::fs::remove_file(dir.path().join("gate")).unwrap();
        std::fs::remove_file(dir.path().join("started")).unwrap();
    }
}
