//! `search`: a regular expression over files, with ripgrep's own libraries — the parallel
//! walker of `ignore` (the same files `rg` would search: ignore files, hidden files, `-g`
//! globs as overrides) and `grep-searcher` + `grep-regex` (line-oriented, binary files
//! skipped at their first NUL). Secret and denied files are left out. Results as
//! `path:line: text` (context lines `path-line- text`), sorted by path, capped, with the
//! number of matches not shown.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};

use super::{MAX_MATCHES_SHOWN, Output, Scope, SearchArgs, clip_line, invalid, plural};
use crate::tool_error::ToolError;

/// Most context lines asked for on each side of a match.
const MAX_CONTEXT_LINES: u32 = 10;
/// Lines kept in memory across all files before only counting: a few times what is shown, so
/// that sorting by path still shows the first files' matches.
const MAX_LINES_KEPT: usize = MAX_MATCHES_SHOWN * 20;
/// Largest regex program: a pathological pattern fails instead of eating memory.
const REGEX_SIZE_LIMIT_BYTES: usize = 10 * 1024 * 1024;

/// One line of a file's result.
struct Found {
    number: u64,
    is_match: bool,
    text: String,
}

/// What one file gave.
struct FileResult {
    shown: String,
    lines: Vec<Found>,
    breaks: Vec<usize>,
}

/// Searches `target` (resolved, decided: a file or a directory) for `args`.
///
/// # Errors
/// A bad regular expression or glob, a missing path.
pub fn search(scope: &Scope<'_>, target: &Path, args: &SearchArgs) -> Result<Output, ToolError> {
    let shown = scope.display(target);
    if !target.exists() {
        return Err(super::not_found(format!("`{shown}` does not exist")));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .size_limit(REGEX_SIZE_LIMIT_BYTES)
        .build(&args.pattern)
        .map_err(|error| {
            invalid(format!(
                "`{}` is not a valid regular expression: {error}",
                args.pattern
            ))
        })?;
    let context = args.context.unwrap_or(0).min(MAX_CONTEXT_LINES) as usize;
    let mut walk = ignore::WalkBuilder::new(target);
    if let Some(glob) = &args.glob {
        let root = if target.is_dir() {
            target
        } else {
            target.parent().unwrap_or(target)
        };
        let overrides = ignore::overrides::OverrideBuilder::new(root)
            .add(glob)
            .and_then(|builder| builder.build())
            .map_err(|error| invalid(format!("`{glob}` is not a valid glob: {error}")))?;
        walk.overrides(overrides);
    }
    let skipped = std::sync::Arc::clone(&scope.skipped);
    walk.filter_entry(move |entry| !skipped(entry.path()));

    let results: Mutex<Vec<FileResult>> = Mutex::new(Vec::new());
    let total = AtomicU64::new(0);
    let kept = AtomicUsize::new(0);
    walk.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = searcher(context);
        let (results, total, kept) = (&results, &total, &kept);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return ignore::WalkState::Continue;
            }
            let mut sink = Collect {
                lines: Vec::new(),
                breaks: Vec::new(),
                matches: 0,
                kept,
            };
            if searcher
                .search_path(&matcher, entry.path(), &mut sink)
                .is_ok()
                && sink.matches > 0
            {
                total.fetch_add(sink.matches, Ordering::Relaxed);
                let file = FileResult {
                    shown: scope.display(entry.path()),
                    lines: sink.lines,
                    breaks: sink.breaks,
                };
                results
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(file);
            }
            ignore::WalkState::Continue
        })
    });
    let mut files = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    files.sort_by(|a, b| a.shown.cmp(&b.shown));
    Ok(render(
        files,
        total.into_inner(),
        scope.max_chars,
        &args.pattern,
    ))
}

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .build()
}

/// The lines in path order, capped by count and characters.
fn render(files: Vec<FileResult>, total: u64, max_chars: usize, pattern: &str) -> Output {
    let mut content = String::new();
    let mut shown_matches = 0u64;
    let mut full = false;
    for file in &files {
        if full {
            break;
        }
        for (index, found) in file.lines.iter().enumerate() {
            if file.breaks.contains(&index) {
                content.push_str("--\n");
            }
            if found.is_match && shown_matches >= MAX_MATCHES_SHOWN as u64 {
                full = true;
                break;
            }
            let separator = if found.is_match { ':' } else { '-' };
            let line = format!(
                "{}{separator}{}{separator} {}\n",
                file.shown, found.number, found.text
            );
            if content.len() + line.len() > max_chars {
                full = true;
                break;
            }
            content.push_str(&line);
            if found.is_match {
                shown_matches += 1;
            }
        }
    }
    if total == 0 {
        content = format!("no matches for `{pattern}`");
    } else if shown_matches < total {
        content.push_str(&format!(
            "[{} not shown of {total}: narrow it with `path` or `glob`]",
            plural(total - shown_matches, "match")
        ));
    }
    Output {
        content,
        summary: plural(total, "match").replace("matchs", "matches"),
        diff: None,
    }
}

/// Collects one file's matching and context lines, within the shared budget of kept lines.
struct Collect<'a> {
    lines: Vec<Found>,
    breaks: Vec<usize>,
    matches: u64,
    kept: &'a AtomicUsize,
}

impl Collect<'_> {
    fn keep(&mut self, number: Option<u64>, bytes: &[u8], is_match: bool) {
        if self.kept.fetch_add(1, Ordering::Relaxed) >= MAX_LINES_KEPT {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        self.lines.push(Found {
            number: number.unwrap_or(0),
            is_match,
            text: clip_line(text).into_owned(),
        });
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.matches += 1;
        self.keep(found.line_number(), found.bytes(), true);
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, line: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        if !matches!(line.kind(), SinkContextKind::Other) {
            self.keep(line.line_number(), line.bytes(), false);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, std::io::Error> {
        if !self.lines.is_empty() {
            self.breaks.push(self.lines.len());
        }
        Ok(true)
    }
}
