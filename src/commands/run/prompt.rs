//! A run's task: the words given, all of stdin, or (for a run picked from a list at the
//! keyboard) asked for there. Words given with text piped on stdin (`git diff | agent run
//! 'review this'`) send that text with them, up to [`PIPED_BYTES`] (the cut is said, to the
//! person and to the model).

use std::io::{IsTerminal as _, Read as _, Write as _};

/// Most bytes of piped stdin sent with the words: a large diff or log, not a disk image.
pub(crate) const PIPED_BYTES: usize = 256 * 1024;

use crate::cli::GlobalArgs;
use crate::error::{Error, Result};

/// The task: for a run picked from a list at the keyboard with no task given yet, asked for
/// there; else [`read_prompt`].
pub(super) fn task(
    earlier: Option<&crate::commands::resume::Earlier>,
    words: Option<&str>,
    global: &GlobalArgs,
) -> Result<String> {
    match earlier {
        Some(earlier) if earlier.picked && words.is_none() && std::io::stdin().is_terminal() => {
            crate::commands::resume::ask_next_message(crate::commands::use_color(global))
        }
        _ => read_prompt(words),
    }
}

/// The prompt from the argument, or all of stdin for `-` / no argument when stdin is piped.
fn read_prompt(arg: Option<&str>) -> Result<String> {
    let from_stdin = match arg {
        Some("-") => true,
        Some(_) => false,
        None if std::io::stdin().is_terminal() => {
            return Err(Error::Usage(
                "no prompt: give the task as an argument (`agent run 'list the files'`) or pipe it on stdin"
                    .to_owned(),
            ));
        }
        None => true,
    };
    let prompt = if from_stdin {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map_err(|error| {
            Error::Runtime(format!("cannot read the prompt from stdin: {error}"))
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::Usage("the prompt on stdin is not valid UTF-8".to_owned()))?;
        text.trim_end().to_owned()
    } else {
        let words = arg.unwrap_or_default().to_owned();
        match piped_stdin()? {
            Some(piped) => with_piped(&words, &piped),
            None => words,
        }
    };
    if prompt.trim().is_empty() {
        return Err(Error::Usage(
            "the prompt is empty: say what to do (`agent run 'list the files'`)".to_owned(),
        ));
    }
    Ok(prompt)
}

/// What was piped on stdin, when it is a pipe or a file (never a terminal, nor `/dev/null`
/// and other devices, which hold no text for the task).
fn piped_stdin() -> Result<Option<Vec<u8>>> {
    if !stdin_is_piped() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    // One byte past the cap says there was more; the rest is left unread.
    std::io::stdin()
        .lock()
        .take(u64::try_from(PIPED_BYTES + 1).unwrap_or(u64::MAX))
        .read_to_end(&mut bytes)
        .map_err(|error| Error::Runtime(format!("cannot read stdin: {error}")))?;
    Ok((!bytes.iter().all(u8::is_ascii_whitespace)).then_some(bytes))
}

#[cfg(unix)]
fn stdin_is_piped() -> bool {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::FileTypeExt as _;
    let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|meta| meta.file_type().is_fifo() || meta.file_type().is_file())
}

#[cfg(not(unix))]
fn stdin_is_piped() -> bool {
    !std::io::stdin().is_terminal()
}

/// The words, then the piped text in a `<stdin>` block; past [`PIPED_BYTES`] it is cut (at a
/// character boundary) and both the block and a warning on stderr say so.
fn with_piped(words: &str, piped: &[u8]) -> String {
    let cut = piped.len() > PIPED_BYTES;
    let kept = &piped[..piped.len().min(PIPED_BYTES)];
    let text = String::from_utf8_lossy(kept);
    // A character cut in two at the cap is dropped, not shown as U+FFFD.
    let text = if cut {
        text.trim_end_matches('\u{fffd}')
    } else {
        &text
    };
    let note = if cut {
        let _ = writeln!(
            std::io::stderr(),
            "agent: warning: stdin is cut at {} KiB: the model sees only its start",
            PIPED_BYTES / 1024
        );
        format!(
            " (cut at {} KiB: only its start is here)",
            PIPED_BYTES / 1024
        )
    } else {
        String::new()
    };
    format!(
        "{words}\n\nThe text piped to agent on stdin{note}:\n<stdin>\n{}\n</stdin>",
        text.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piped_text_follows_the_words_and_a_cut_is_said() {
        let shown = with_piped("review this", b"line 1\nline 2\n");
        assert_eq!(
            shown,
            "review this\n\nThe text piped to agent on stdin:\n<stdin>\nline 1\nline 2\n</stdin>"
        );
        for extra in [1, 2, 3, 1000] {
            // With `lead`, a two-byte character straddles the cap.
            let lead = if extra % 2 == 0 { "a" } else { "" };
            let mut big = format!("{lead}{}", "é".repeat(PIPED_BYTES / 2)).into_bytes();
            big.extend(std::iter::repeat_n(b'x', extra));
            let shown = with_piped("go", &big);
            assert!(shown.contains("(cut at 256 KiB"), "{extra}");
            assert!(!shown.contains('\u{fffd}'), "{extra}");
            assert!(shown.len() < PIPED_BYTES + 200, "{extra}");
        }
    }
}
