//! A run's task: the words given, all of stdin, or (for a run picked from a list at the
//! keyboard) asked for there.

use std::io::{IsTerminal as _, Read as _};

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
        arg.unwrap_or_default().to_owned()
    };
    if prompt.trim().is_empty() {
        return Err(Error::Usage(
            "the prompt is empty: say what to do (`agent run 'list the files'`)".to_owned(),
        ));
    }
    Ok(prompt)
}
