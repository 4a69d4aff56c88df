//! The path rule: a word that names a file stays inside the workspace, lexically, and is not
//! a secret file; a glob could not expand into an option. Shared by the inspection programs,
//! the pure built-ins, read-only git and redirections.

use std::borrow::Cow;
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
    let Some(relative) = relative_inside(context, text) else {
        return Err(format!(
            "`{name}` names `{text}`, outside the workspace `{}`",
            context.workspace.display()
        ));
    };
    let relative = relative.as_ref();
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

/// `workspace::lexically_inside`, keeping the normalised path for the secret check: the path
/// relative to the workspace, or `None` outside it. A plain relative path in the workspace's
/// root is already that path (`secret_paths::plain_relative`): most words are not built again.
fn relative_inside<'t>(context: &Context, text: &'t str) -> Option<Cow<'t, Path>> {
    if let Some(relative) = secret_paths::plain_relative(context, text) {
        return Some(Cow::Borrowed(relative));
    }
    let full = workspace::normalize(&context.cwd, Path::new(text));
    if text.starts_with('~') || !full.starts_with(&context.workspace) {
        return None;
    }
    let relative = full.strip_prefix(&context.workspace).unwrap_or(&full);
    Some(Cow::Owned(relative.to_path_buf()))
}

pub(super) fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{OsFamily, ReadOnly};
    use proptest::prelude::*;

    proptest! {
        /// The shortcut for plain relative paths gives what normalising gives: the path
        /// relative to the workspace (`relative_inside`), and the secret list's pattern for
        /// it (`secret_paths::named`).
        #[test]
        fn plain_paths_are_taken_as_normalised(
            parts in prop::collection::vec(
                prop_oneof![
                    3 => "[a-z.]{1,4}",
                    2 => prop::sample::select(
                        &[".env", "id_rsa", "a.pem", "vault", "x.tfstate", ".npmrc"][..]
                    )
                    .prop_map(str::to_owned),
                    1 => prop::sample::select(&["", ".", "..", "~", "a:b", "a\\b", "..."][..])
                        .prop_map(str::to_owned),
                ],
                1..5,
            ),
            absolute in prop::bool::weighted(0.1),
            sub in prop::bool::ANY,
        ) {
            let text = format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"));
            let cwd = if sub { "/w/sub" } else { "/w" };
            let context = Context::new(OsFamily::Unix, Path::new("/w"), Path::new(cwd), ReadOnly::Inspect);
            let full = workspace::normalize(&context.cwd, Path::new(&text));
            let relative = full.strip_prefix(&context.workspace).unwrap_or(&full);
            let want = (!text.starts_with('~') && full.starts_with(&context.workspace))
                .then(|| relative.to_path_buf());
            let got = relative_inside(&context, &text);
            prop_assert_eq!(
                got.as_ref().map(|p| p.to_string_lossy().into_owned()),
                want.as_ref().map(|p| p.to_string_lossy().into_owned()),
                "{}", text
            );
            prop_assert_eq!(
                secret_paths::named(&context, &text),
                context.secrets.matching(relative),
                "{}", text
            );
        }
    }
}
