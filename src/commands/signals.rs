//! The signals that stop `agent run` and `agent exec`: Ctrl+C everywhere, and on Unix
//! SIGTERM, SIGHUP (the terminal closed) and SIGQUIT. Each one ends the running
//! command's process group (see [`crate::exec::stop_running`]) and exits 128 + the
//! signal's number. This file only listens; what to do is the caller's.

use crate::error::Status;

/// A signal that stops the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(unix), allow(dead_code, reason = "only Ctrl+C exists on Windows"))]
pub(crate) enum Stop {
    /// SIGINT: Ctrl+C.
    Interrupt,
    /// SIGHUP: the terminal went away.
    HangUp,
    /// SIGQUIT: Ctrl+\.
    Quit,
    /// SIGTERM: asked to stop (kill, systemd, a CI runner's cancel).
    Terminate,
}

impl Stop {
    /// The signal's usual name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::HangUp => "SIGHUP",
            Stop::Quit => "SIGQUIT",
            Stop::Terminate => "SIGTERM",
        }
    }

    /// The exit status: 128 + the signal's number.
    pub(crate) fn status(self) -> Status {
        match self {
            Stop::Interrupt => Status::Interrupted,
            Stop::HangUp => Status::HangUp,
            Stop::Quit => Status::Quit,
            Stop::Terminate => Status::Terminated,
        }
    }

    /// What the `done` event's note says.
    pub(crate) fn note(self) -> String {
        match self {
            Stop::Interrupt => "interrupted (Ctrl+C)".to_owned(),
            Stop::HangUp => "stopped by SIGHUP (the terminal was closed)".to_owned(),
            Stop::Quit | Stop::Terminate => format!("stopped by {}", self.name()),
        }
    }
}

/// Listens for the stopping signals. Create it inside the runtime, before anything
/// runs: from then on these signals no longer end the process by themselves.
pub(crate) struct Signals {
    #[cfg(unix)]
    streams: Vec<(Stop, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Starts listening. A signal whose handler cannot be installed keeps its default
    /// action (the process ends at once), which is no worse than before.
    #[cfg(unix)]
    pub(crate) fn listen() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            (Stop::Interrupt, SignalKind::interrupt()),
            (Stop::HangUp, SignalKind::hangup()),
            (Stop::Quit, SignalKind::quit()),
            (Stop::Terminate, SignalKind::terminate()),
        ];
        let streams = kinds
            .into_iter()
            .filter_map(|(stop, kind)| signal(kind).ok().map(|stream| (stop, stream)))
            .collect();
        Self { streams }
    }

    /// Starts listening (Ctrl+C only on Windows).
    #[cfg(not(unix))]
    pub(crate) fn listen() -> Self {
        Self {}
    }

    /// Waits for the next stopping signal.
    #[cfg(unix)]
    pub(crate) async fn recv(&mut self) -> Stop {
        let next = std::future::poll_fn(|cx| {
            for (stop, stream) in &mut self.streams {
                if let std::task::Poll::Ready(Some(())) = stream.poll_recv(cx) {
                    return std::task::Poll::Ready(*stop);
                }
            }
            std::task::Poll::Pending
        });
        next.await
    }

    /// Waits for Ctrl+C.
    #[cfg(not(unix))]
    pub(crate) async fn recv(&mut self) -> Stop {
        match tokio::signal::ctrl_c().await {
            Ok(()) => Stop::Interrupt,
            Err(_) => std::future::pending().await,
        }
    }
}

/// Puts a terminal left in raw mode by an open prompt back to normal and shows the
/// cursor; harmless when nothing was changed.
pub(crate) fn restore_terminal() {
    use std::io::IsTerminal as _;
    let _ = crossterm::terminal::disable_raw_mode();
    if std::io::stderr().is_terminal() {
        let _ = crossterm::execute!(std::io::stderr(), crossterm::cursor::Show);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_128_plus_the_signal() {
        assert_eq!(Stop::Interrupt.status() as u8, 130);
        assert_eq!(Stop::HangUp.status() as u8, 129);
        assert_eq!(Stop::Quit.status() as u8, 131);
        assert_eq!(Stop::Terminate.status() as u8, 143);
    }
}
