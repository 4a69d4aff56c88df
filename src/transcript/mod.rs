//! Transcripts: every run's events appended as NDJSON to
//! `<state>/runs/<UTC time>-<id>.ndjson`, one line per event, written and
//! flushed as it happens so a crash loses at most the event in flight. The API
//! key is redacted from every line; nothing else about credentials is ever
//! recorded. A continued run appends to its own file after a `continue` event. Also reading
//! them back for `agent history` and for continuing a run (`resume`).

mod history;
mod resume;

use std::fs::File;
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub use history::{RunSummary, find, list, read_events, render_show, short_id};
pub use resume::{Rebuilt, Typed, latest_in, rebuild, summary_message};

use crate::event::Event;
use crate::exec::Secrets;

/// An open transcript.
#[derive(Debug)]
pub struct Transcript {
    file: File,
    path: PathBuf,
    id: String,
    redact: Secrets,
    failed: bool,
}

impl Transcript {
    /// Creates a new transcript in `runs_dir` for a run starting at `start`.
    ///
    /// # Errors
    /// When the directory or the file cannot be created.
    pub fn create(runs_dir: &Path, start: SystemTime) -> std::io::Result<Self> {
        std::fs::create_dir_all(runs_dir)?;
        let stamp: String = humantime::format_rfc3339_seconds(start)
            .to_string()
            .chars()
            .filter(|c| !matches!(c, '-' | ':'))
            .collect();
        let id = format!("{stamp}-{}", random_id());
        let path = runs_dir.join(format!("{id}.ndjson"));
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)?;
        Ok(Self {
            file,
            path,
            id,
            redact: Secrets::default(),
            failed: false,
        })
    }

    /// Opens the transcript at `path` to append a continued run's events. A last line cut
    /// by a crash is ended first, so the next event starts a line of its own.
    ///
    /// # Errors
    /// When the file cannot be opened for appending.
    pub fn append(path: &Path) -> std::io::Result<Self> {
        let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
        let ends_cut = last_byte(path).is_some_and(|last| last != b'\n');
        if ends_cut {
            file.write_all(b"\n")?;
        }
        let id = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Self {
            file,
            path: path.to_owned(),
            id,
            redact: Secrets::default(),
            failed: false,
        })
    }

    /// The run id (the file name without `.ndjson`).
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Never writes `secret` (an API key) into the file.
    pub fn redact(&mut self, secret: &str) {
        self.redact.add(secret);
    }

    /// Appends one event and flushes it.
    ///
    /// # Errors
    /// The first write failure (e.g. a full disk); later events are skipped.
    pub fn record(&mut self, event: &Event) -> std::io::Result<()> {
        if self.failed {
            return Ok(());
        }
        let mut line = self
            .redact
            .redact(serde_json::to_string(event).map_err(std::io::Error::other)?);
        line.push('\n');
        let written = self
            .file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush());
        if written.is_err() {
            self.failed = true;
        }
        written
    }
}

/// The last byte of the file at `path`, if it has one.
fn last_byte(path: &Path) -> Option<u8> {
    use std::io::{Read as _, Seek as _};
    let mut file = File::open(path).ok()?;
    file.seek(std::io::SeekFrom::End(-1)).ok()?;
    let mut byte = [0];
    file.read_exact(&mut byte).ok()?;
    Some(byte[0])
}

/// Six hex digits, random per run (std's hasher keys are random per process).
fn random_id() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    format!("{:06x}", hasher.finish() & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_appended_one_per_line_and_keys_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let mut transcript = Transcript::create(dir.path(), SystemTime::UNIX_EPOCH).unwrap();
        assert!(
            transcript.id().starts_with("19700101T000000Z-"),
            "{}",
            transcript.id()
        );
        transcript.redact("sk-secret-123456");
        transcript
            .record(&Event::TextDelta {
                text: "key is sk-secret-123456".into(),
            })
            .unwrap();
        transcript
            .record(&Event::Error {
                code: "test".into(),
                message: "boom".into(),
            })
            .unwrap();
        let text = std::fs::read_to_string(transcript.path()).unwrap();
        assert_eq!(
            text,
            "{\"type\":\"text_delta\",\"text\":\"key is [REDACTED]\"}\n{\"type\":\"error\",\"code\":\"test\",\"message\":\"boom\"}\n"
        );
    }
}
