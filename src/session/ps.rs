//! `/ps`: the session's background processes (started by the model's `shell` calls with
//! `background`), one line each, escaped: a command line is the model's text.

use crate::exec::background;
use crate::ui::sanitize;

/// `/ps`'s text.
#[must_use]
pub(super) fn text() -> String {
    lines(&background::list())
}

/// One line per process: id, state, output so far, command (escaped).
fn lines(listed: &[background::Listed]) -> String {
    if listed.is_empty() {
        return "no background processes in this session (the model starts them with `shell` \
                and `background`)"
            .to_owned();
    }
    let mut out = String::from("background processes (they end with the session):");
    for process in listed {
        out.push_str(&format!(
            "\n  {:<5} {:<10} {:>9} B  {}",
            process.id,
            sanitize::escape(&process.state),
            process.output_bytes,
            sanitize::escape(&process.command),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_escapes_what_the_model_wrote() {
        let listed = [background::Listed {
            id: "bg1".to_owned(),
            command: "python3 -m http.server \u{1b}[2J\u{7}".to_owned(),
            state: "running".to_owned(),
            output_bytes: 12,
        }];
        let text = lines(&listed);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text:?}"
        );
        assert!(text.contains("bg1") && text.contains("running") && text.contains("http.server"));
        assert!(lines(&[]).contains("no background processes"));
    }
}
