//! `read_file`: numbered lines of a text file, streamed in fixed-size chunks so memory stays
//! bounded whatever the file's size or line length; at most [`MAX_READ_LINES`] lines or the
//! output cap per call, with the file's line count and how to read on. A binary file says so.

use std::io::Read as _;
use std::path::Path;

use super::{
    MAX_LINE_CHARS, MAX_READ_LINES, Output, READ_FILE, ReadArgs, Scope, io_error, plural,
    regular_file,
};
use crate::tool_error::ToolError;

/// Bytes read at a time.
const CHUNK_BYTES: usize = 64 * 1024;
/// Bytes looked at for a NUL to call a file binary (as git and ripgrep do).
const BINARY_SNIFF_BYTES: usize = 8 * 1024;
/// Bytes of one line kept (UTF-8 needs at most 4 per character): the rest is counted.
const LINE_KEEP_BYTES: usize = MAX_LINE_CHARS * 4 + 4;
/// Past this size the lines after the window are not counted (it would take seconds): the
/// model is told the size instead.
const COUNT_ALL_LINES_BYTES: u64 = 256 * 1024 * 1024;

/// Reads `path` (resolved, decided) for `args`.
///
/// # Errors
/// Missing, a directory, not a regular file, unreadable: a message saying which.
pub fn read(scope: &Scope<'_>, path: &Path, args: &ReadArgs) -> Result<Output, ToolError> {
    let shown = scope.display(path);
    let metadata = regular_file(path, &shown, READ_FILE)?;
    let mut file = std::fs::File::open(path)
        .map_err(|error| io_error(format!("cannot read `{shown}`: {error}")))?;
    // The file opened may not be the one looked at (replaced in between): check again.
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(super::invalid(format!("`{shown}` is not a regular file")));
    }
    super::opened_as_decided(path, &shown)?;
    let first = args.offset.unwrap_or(1).max(1);
    let limit = args
        .limit
        .unwrap_or(MAX_READ_LINES)
        .clamp(1, MAX_READ_LINES);
    let last = first.saturating_add(limit - 1);
    let count_all = metadata.len() <= COUNT_ALL_LINES_BYTES;

    let mut content = String::new();
    let mut line = Vec::new();
    let mut line_cut = 0u64;
    let mut number = 1u64;
    let mut shown_last = 0u64;
    let mut capped_at = None;
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut sniffed = false;
    let mut chars = 0usize;
    let mut ended_with_newline = true;
    loop {
        let read = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(io_error(format!("cannot read `{shown}`: {error}"))),
        };
        let bytes = &chunk[..read];
        if !sniffed {
            sniffed = true;
            if bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0) {
                return Ok(Output {
                    content: format!(
                        "`{shown}` is a binary file ({} bytes): not shown",
                        metadata.len()
                    ),
                    summary: "binary".to_owned(),
                    diff: None,
                });
            }
        }
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let complete = piece.last() == Some(&b'\n');
            let text = if complete {
                &piece[..piece.len() - 1]
            } else {
                piece
            };
            let wanted = number >= first && number <= last && capped_at.is_none();
            if wanted {
                let room = LINE_KEEP_BYTES.saturating_sub(line.len());
                line.extend_from_slice(&text[..text.len().min(room)]);
                line_cut += (text.len().saturating_sub(room)) as u64;
            }
            ended_with_newline = complete;
            if !complete {
                continue;
            }
            if wanted {
                chars += push_line(&mut content, number, &line, line_cut);
                shown_last = number;
                if chars > scope.max_chars {
                    capped_at = Some(number);
                }
            }
            line.clear();
            line_cut = 0;
            number += 1;
            if number > last && !count_all {
                break;
            }
        }
        if number > last && !count_all {
            break;
        }
    }
    // A last line without a newline.
    if ended_with_newline {
        number -= 1;
    } else if number >= first && number <= last && capped_at.is_none() {
        push_line(&mut content, number, &line, line_cut);
        shown_last = number;
    }
    let total = number;
    Ok(finish(
        &shown,
        content,
        first,
        shown_last,
        count_all.then_some(total),
        metadata.len(),
        capped_at,
    ))
}

/// `{number:>6}\t{text}` with the text made UTF-8 (invalid bytes replaced) and cut; returns
/// the characters added.
fn push_line(content: &mut String, number: u64, bytes: &[u8], cut: u64) -> usize {
    let before = content.len();
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    let clipped = super::clip_line(text);
    content.push_str(&format!("{number:>6}\t{clipped}"));
    if cut > 0 && matches!(clipped, std::borrow::Cow::Borrowed(_)) {
        content.push_str(&format!("… [{cut} more bytes]"));
    }
    content.push('\n');
    content[before..].chars().count()
}

/// The result: the lines, then where they stop and how to go on.
fn finish(
    shown: &str,
    mut content: String,
    first: u64,
    last: u64,
    total: Option<u64>,
    bytes: u64,
    capped_at: Option<u64>,
) -> Output {
    let lines = |n: u64| plural(n, "line");
    if last == 0 {
        let note = match total {
            Some(0) => format!("`{shown}` is empty"),
            Some(total) => format!(
                "`{shown}` has {}; offset {first} is past the end",
                lines(total)
            ),
            None => format!("`{shown}` ({bytes} bytes) has fewer lines than offset {first}"),
        };
        return Output {
            content: note,
            summary: total.map_or_else(|| "0 lines".to_owned(), lines),
            diff: None,
        };
    }
    let whole = first == 1 && total == Some(last) && capped_at.is_none();
    let summary = if whole {
        lines(last)
    } else {
        format!("lines {first}-{last}")
    };
    if !whole {
        let of = total.map_or_else(
            || format!("a file of {bytes} bytes (too large to count its lines)"),
            lines,
        );
        let mut note = format!("[showing lines {first}-{last} of {of}");
        if let Some(at) = capped_at {
            note.push_str(&format!("; the output cap was reached at line {at}"));
        }
        if total.is_none_or(|total| last < total) {
            note.push_str(&format!("; read on with offset={}", last + 1));
        }
        note.push(']');
        content.push_str(&note);
    }
    Output {
        content,
        summary,
        diff: None,
    }
}
