//! A process a test started, killed with what it left in its working directory when the test
//! ends, panicking or not, so a failing test leaves nothing running.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::Child;

/// `child`, and the workspace whose leftover `sleep`s ([`super::process::kill_left`])
/// go with it.
pub struct Reaped {
    child: Child,
    work: PathBuf,
}

impl Reaped {
    pub fn new(child: Child, work: &Path) -> Self {
        Self {
            child,
            work: work.to_path_buf(),
        }
    }
}

impl Deref for Reaped {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        super::process::kill_left(&self.work);
    }
}
