//! Where a person chooses from a list or fills in a field at the terminal: one of a list
//! (a run to resume), several of a list (rules to remove), a line of text (`config init`).
//! Drawn by `inquire` on stderr, keys read from the terminal.
//!
//! It does not decide whether a person is there to ask (the caller checks a terminal is
//! reachable before calling) nor what the answers mean. Every label is sanitised here,
//! since it may hold a model's words or a command.

use std::fmt;

use inquire::ui::RenderConfig;
use inquire::validator::Validation;
use inquire::{InquireError, MultiSelect, Select, Text};

use super::sanitize;

/// Lines of a list shown at once; the rest scroll.
const PAGE_ROWS: usize = 10;

/// Why nothing was chosen.
#[derive(Debug)]
pub enum PickError {
    /// Esc or Ctrl+C.
    Cancelled,
    /// The terminal failed (a message for people).
    Failed(String),
}

impl From<InquireError> for PickError {
    fn from(error: InquireError) -> Self {
        match error {
            InquireError::OperationCanceled | InquireError::OperationInterrupted => Self::Cancelled,
            other => Self::Failed(other.to_string()),
        }
    }
}

/// One entry of a list: its position and what is shown.
struct Entry {
    index: usize,
    label: String,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

fn entries(labels: &[String]) -> Vec<Entry> {
    labels
        .iter()
        .enumerate()
        .map(|(index, label)| Entry {
            index,
            label: sanitize::escape_command(label).replace('\n', "⏎"),
        })
        .collect()
}

fn render(color: bool) -> RenderConfig<'static> {
    if color {
        RenderConfig::default_colored()
    } else {
        RenderConfig::empty()
    }
}

/// The position of the one label the person picks.
///
/// # Errors
/// [`PickError::Cancelled`] on Esc or Ctrl+C, or when the terminal fails.
pub fn one(question: &str, labels: &[String], color: bool) -> Result<usize, PickError> {
    let chosen = Select::new(question, entries(labels))
        .with_page_size(PAGE_ROWS)
        .with_help_message("↑↓ to move, Enter to choose, type to filter, Esc to cancel")
        .with_render_config(render(color))
        .prompt()?;
    Ok(chosen.index)
}

/// The positions of the labels the person marks (none is an answer too).
///
/// # Errors
/// [`PickError::Cancelled`] on Esc or Ctrl+C, or when the terminal fails.
pub fn several(question: &str, labels: &[String], color: bool) -> Result<Vec<usize>, PickError> {
    let chosen = MultiSelect::new(question, entries(labels))
        .with_page_size(PAGE_ROWS)
        .with_help_message("↑↓ to move, Space to mark, Enter to take the marked, Esc to cancel")
        .with_render_config(render(color))
        .prompt()?;
    Ok(chosen.into_iter().map(|entry| entry.index).collect())
}

/// A line of text, `default` when the person just presses Enter; `check` says what is
/// wrong with an answer (`None`: fine), and the person tries again.
///
/// # Errors
/// [`PickError::Cancelled`] on Esc or Ctrl+C, or when the terminal fails.
pub fn text(
    question: &str,
    default: &str,
    help: &str,
    check: fn(&str) -> Option<String>,
    color: bool,
) -> Result<String, PickError> {
    let mut prompt = Text::new(question)
        .with_render_config(render(color))
        .with_validator(move |answer: &str| {
            Ok(match check(answer.trim()) {
                Some(problem) => Validation::Invalid(problem.into()),
                None => Validation::Valid,
            })
        });
    if !default.is_empty() {
        prompt = prompt.with_default(default);
    }
    if !help.is_empty() {
        prompt = prompt.with_help_message(help);
    }
    Ok(prompt.prompt()?.trim().to_owned())
}
