//! The path rule: a word that names a file stays inside the workspace, lexically, and is not
//! a secret file; a glob could not expand into an option. Shared by the inspection programs,
//! the pure built-ins, read-only git and redirections.

use std::path::Path;

use super::word::{Word, WordKind, glob_could_match};
use super::{Context, secret_paths};
use crate::workspace;

/// A glob word that the shell could expand into an option asks: every expansion must start
/// with the same literal character, and that character must not be `-`.
pub(super) fn unexpanding(name: &str, word: &Word) -> Result<(), String> {
    if word.kind == WordKind::Literal {
        return Ok(());
    }
    let first = word.text.chars().next();
    if first.is_none_or(|c| matches!(c, '*' | '?' | '[' | '{' | '-')) {
        return Err(format!(
            "`{name}` with the glob `{}` asks (it could expand to an option)",
            word.text
        ));
    }
    Ok(())
}

/// The path rule: a word that names a file must stay inside the workspace (lexically, from
/// the working directory), and — where the program prints content, or the name is written
/// out — must not be a secret file.
pub(super) fn path(
    context: &Context,
    name: &str,
    word: &Word,
    content: bool,
) -> Result<(), String> {
    let text = word.text.as_str();
    if word.kind == WordKind::Expansion {
        return Err(format!(
            "`{name}` with an expansion is not on the read-only list"
        ));
    }
    if text == "-" || text.is_empty() {
        return Ok(());
    }
    if text.starts_with('@') {
        return Err(format!(
            "`{name}` with `{text}` asks (a word starting with `@` can be a file of options)"
        ));
    }
    let pattern = word.kind == WordKind::Pattern;
    if pattern {
        unexpanding(name, word)?;
        if text
            .split('/')
            .any(|part| is_glob(part) && glob_could_match(part, ".."))
        {
            return Err(format!(
                "`{name}` with the glob `{text}` asks (it could climb out with `..`)"
            ));
        }
    }
    // `workspace::lexically_inside`, keeping the normalised path for the secret check.
    let full = workspace::normalize(&context.cwd, Path::new(text));
    if text.starts_with('~') || !full.starts_with(&context.workspace) {
        return Err(format!(
            "`{name}` names `{text}`, outside the workspace `{}`",
            context.workspace.display()
        ));
    }
    let relative = full.strip_prefix(&context.workspace).unwrap_or(&full);
    if let Some(secret) = context.secrets.matching(relative) {
        return Err(format!(
            "`{name}` names `{text}`, a file that may hold secrets (`{secret}`)"
        ));
    }
    if pattern && content {
        let part = text
            .split('/')
            .filter(|p| is_glob(p))
            .find(|p| secret_paths::shell_component_could_match(context, p))
            .map(str::to_owned)
            .or_else(|| secret_paths::shell_path_could_match(context, &relative.to_string_lossy()));
        if let Some(part) = part {
            return Err(format!(
                "`{name}` with the glob `{text}` asks (`{part}` could match a file that may \
                 hold secrets)"
            ));
        }
    }
    Ok(())
}

pub(super) fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}
