//! The pane's ratatui backend: crossterm on stderr, except that the cursor
//! position is asked of the terminal through the terminal itself. crossterm
//! writes that query to stdout, which breaks `agent run … > answer.txt` (the
//! query lands in the file and the reply never comes).

use std::io::Stderr;

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// crossterm on stderr with a cursor query that works when stdout is redirected.
pub struct StderrBackend(CrosstermBackend<Stderr>);

impl StderrBackend {
    /// A backend drawing on stderr.
    #[must_use]
    pub fn new() -> Self {
        Self(CrosstermBackend::new(std::io::stderr()))
    }
}

impl Default for StderrBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl Backend for StderrBackend {
    type Error = std::io::Error;

    fn draw<'a, I>(&mut self, content: I) -> std::io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.0.draw(content)
    }

    fn append_lines(&mut self, n: u16) -> std::io::Result<()> {
        self.0.append_lines(n)
    }

    fn hide_cursor(&mut self) -> std::io::Result<()> {
        self.0.hide_cursor()
    }

    fn show_cursor(&mut self) -> std::io::Result<()> {
        self.0.show_cursor()
    }

    fn get_cursor_position(&mut self) -> std::io::Result<Position> {
        cursor_position().map(|(x, y)| Position { x, y })
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> std::io::Result<()> {
        self.0.set_cursor_position(position)
    }

    fn clear(&mut self) -> std::io::Result<()> {
        self.0.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> std::io::Result<()> {
        self.0.clear_region(clear_type)
    }

    fn size(&self) -> std::io::Result<Size> {
        self.0.size()
    }

    fn window_size(&mut self) -> std::io::Result<WindowSize> {
        self.0.window_size()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Backend::flush(&mut self.0)
    }
}

/// How long to wait for the terminal to report the cursor position.
#[cfg(unix)]
const CURSOR_REPLY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The cursor position (column, row), 0-based, asked through `/dev/tty`.
#[cfg(unix)]
fn cursor_position() -> std::io::Result<(u16, u16)> {
    use std::io::{IsTerminal as _, Read as _, Write as _};
    use std::time::Instant;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    if std::io::stdout().is_terminal() {
        return crossterm::cursor::position();
    }
    let mut tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let was_raw = crossterm::terminal::is_raw_mode_enabled()?;
    if !was_raw {
        crossterm::terminal::enable_raw_mode()?;
    }
    let result = (|| {
        tty.write_all(b"\x1b[6n")?;
        tty.flush()?;
        let deadline = Instant::now() + CURSOR_REPLY_TIMEOUT;
        let mut reply = Vec::new();
        loop {
            if let Some(position) = parse_position_reply(&reply) {
                return Ok(position);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || reply.len() > 64 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the terminal did not report the cursor position",
                ));
            }
            let timeout = Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let mut fds = [PollFd::new(&tty, PollFlags::IN)];
            if poll(&mut fds, Some(&timeout))? > 0 {
                let mut byte = [0u8; 1];
                if tty.read(&mut byte)? == 1 {
                    reply.push(byte[0]);
                }
            }
        }
    })();
    if !was_raw {
        let _ = crossterm::terminal::disable_raw_mode();
    }
    result
}

#[cfg(not(unix))]
fn cursor_position() -> std::io::Result<(u16, u16)> {
    crossterm::cursor::position()
}

/// Parses `ESC [ row ; col R` (1-based) into 0-based (column, row).
#[cfg_attr(not(unix), allow(dead_code))]
fn parse_position_reply(reply: &[u8]) -> Option<(u16, u16)> {
    let start = reply.windows(2).rposition(|w| w == b"\x1b[")?;
    let body = &reply[start + 2..];
    let end = body.iter().position(|b| *b == b'R')?;
    let text = std::str::from_utf8(&body[..end]).ok()?;
    let (row, col) = text.split_once(';')?;
    let row: u16 = row.parse().ok()?;
    let col: u16 = col.parse().ok()?;
    Some((col.saturating_sub(1), row.saturating_sub(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_replies_parse() {
        assert_eq!(parse_position_reply(b"\x1b[12;5R"), Some((4, 11)));
        assert_eq!(parse_position_reply(b"junk\x1b[1;1R"), Some((0, 0)));
        assert_eq!(parse_position_reply(b"\x1b[12;5"), None);
        assert_eq!(parse_position_reply(b"\x1b[x;5R"), None);
    }
}
