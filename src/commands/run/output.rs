//! Where a run's events go: the live screen or plain progress on stderr, `--json` lines on
//! stdout, the transcript (created, or opened to append for a run continued), and the final
//! answer on stdout.

use std::io::{IsTerminal as _, Write as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use crate::agent::{self, Event};
use crate::cli::GlobalArgs;
use crate::error::Result;
use crate::exec;
use crate::settings;
use crate::transcript::Transcript;
use crate::ui::{Plain, Tui};

pub(super) fn open_transcript(start: SystemTime, quiet: bool) -> Option<Transcript> {
    let warn = |message: String| {
        if !quiet {
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: {message}: this run is not recorded"
            );
        }
    };
    let Some(dir) = settings::state_dir(&crate::commands::env_var) else {
        warn("no state directory (set XDG_STATE_HOME or HOME)".to_owned());
        return None;
    };
    let runs = dir.join("runs");
    match Transcript::create(&runs, start) {
        Ok(transcript) => Some(transcript),
        Err(error) => {
            warn(format!(
                "cannot create a transcript in `{}`: {error}",
                runs.display()
            ));
            None
        }
    }
}

/// The transcript of a run being continued, opened to append.
pub(super) fn append_transcript(path: &std::path::Path, quiet: bool) -> Option<Transcript> {
    match Transcript::append(path) {
        Ok(transcript) => Some(transcript),
        Err(error) => {
            if !quiet {
                let _ = writeln!(
                    std::io::stderr(),
                    "agent: warning: cannot append to the transcript `{}`: {error}: this part \
                     of the run is not recorded",
                    path.display()
                );
            }
            None
        }
    }
}

/// Where events go besides the transcript: `--json` lines or plain progress.
pub(super) struct Output {
    json: bool,
    plain: Plain,
    tui: Option<Arc<Mutex<Tui>>>,
    answer: Option<String>,
    /// Characters of the current call's output already recorded; output past
    /// the cap is still shown live but not recorded or printed as events.
    recorded_chars: usize,
    max_output_chars: usize,
    transcript_failed: bool,
    stdout_closed: bool,
    /// Colour the answer when stdout is a terminal (`--color`, NO_COLOR).
    stdout_color: bool,
    /// Secrets (the API key) never written to stdout as `--json`.
    redact: exec::Secrets,
    /// `--max-tokens`, to say once (unless -q) that a server reporting no usage cannot be
    /// held to it.
    max_tokens: Option<u64>,
    quiet: bool,
    usage_missing_said: bool,
}

impl Output {
    /// A turn ended without usage: `--max-tokens` counts nothing on this server.
    fn usage_missing(&mut self) {
        if let (Some(limit), false, false) = (self.max_tokens, self.quiet, self.usage_missing_said)
        {
            self.usage_missing_said = true;
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: the model server reports no token usage, so --max-tokens \
                 {limit} cannot be enforced: use --max-turns or --max-time to bound the run"
            );
        }
    }

    pub(super) fn new(
        global: &GlobalArgs,
        config: &agent::Config,
        tui: Option<Arc<Mutex<Tui>>>,
    ) -> Self {
        let stdout_color = match global.color {
            crate::cli::Color::Always => true,
            crate::cli::Color::Never => false,
            crate::cli::Color::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        let mut plain = Plain::new(global.verbose, global.quiet)
            .streaming(!global.json && std::io::stderr().is_terminal());
        plain.dim = crate::commands::use_color(global);
        Self {
            json: global.json,
            stdout_color,
            tui,
            plain,
            answer: None,
            recorded_chars: 0,
            max_output_chars: config.limits.max_output_chars,
            transcript_failed: false,
            stdout_closed: false,
            redact: config.secrets.clone(),
            max_tokens: config.budget.max_tokens,
            quiet: global.quiet,
            usage_missing_said: false,
        }
    }

    pub(super) fn emit(&mut self, event: &Event, transcript: Option<&mut Transcript>) {
        if let Some(tui) = &self.tui {
            tui.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .handle(event);
        } else if !self.json {
            self.plain.handle(event);
        }
        match event {
            Event::ToolCall { .. } => self.recorded_chars = 0,
            Event::OutputDelta { text, .. } => {
                let chars = text.chars().count();
                self.recorded_chars = self.recorded_chars.saturating_add(chars);
                if self.recorded_chars > self.max_output_chars {
                    return;
                }
            }
            Event::Done { answer, .. } => self.answer.clone_from(answer),
            Event::TurnEnd { usage: None, .. } => self.usage_missing(),
            _ => {}
        }
        if let Some(transcript) = transcript
            && let Err(error) = transcript.record(event)
            && !self.transcript_failed
        {
            self.transcript_failed = true;
            let _ = writeln!(
                std::io::stderr(),
                "agent: warning: cannot write the transcript `{}`: {error}: the rest of this run is not recorded",
                transcript.path().display()
            );
        }
        if self.json && !self.stdout_closed {
            let line = self
                .redact
                .redact(serde_json::to_string(event).unwrap_or_default());
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{line}")
                .and_then(|()| stdout.flush())
                .is_err()
            {
                self.stdout_closed = true;
            }
        }
    }

    /// Prints the final answer on stdout, unless it already streamed onto the
    /// same terminal (live screen with stdout a terminal) or went out as JSON.
    pub(super) fn finish(&self) -> Result<()> {
        let shown_live = self.tui.as_ref().map_or_else(
            || self.plain.streams_text(),
            |tui| {
                tui.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .shows_text()
            },
        );
        let on_screen = shown_live && std::io::stdout().is_terminal();
        match &self.answer {
            Some(answer) if !self.json && !on_screen => {
                let answer = answer.trim_end();
                // A terminal gets the Markdown rendered (and escape sequences escaped); a file
                // or pipe gets the exact bytes.
                let answer = if std::io::stdout().is_terminal() {
                    crate::ui::markdown::render(answer, self.stdout_color)
                } else {
                    answer.to_owned()
                };
                crate::commands::print_stdout(&format!("{answer}\n"))
            }
            _ => Ok(()),
        }
    }
}
