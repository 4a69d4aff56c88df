//! `find`'s own reader: start directories inside the workspace and an expression that only
//! tests and prints.

use super::super::Context;
use super::super::path_rule::path;
use super::super::word::{Word, WordKind};

/// find's expression words that take no argument.
const FIND_FLAGS: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-empty",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-xdev",
    "-mount",
    "-noleaf",
    "-ignore_readdir_race",
    "-daystart",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    "!",
    "(",
    ")",
    ",",
];

/// find's expression words that take one argument that is not a file.
const FIND_VALUES: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-regextype",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-fstype",
    "-printf",
    "-lname",
    "-ilname",
];

/// find's expression words that take a file (read for its times or identity).
const FIND_FILES: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile"];

/// find: `-P` (not `-H`/`-L`, which follow links out of the workspace), start directories
/// inside the workspace, then only the expression
/// words above (never `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fls`, `-fprint*`).
pub(super) fn find(context: &Context, args: &[Word]) -> Result<(), String> {
    if let Some(word) = args.iter().find(|w| w.kind != WordKind::Literal) {
        return Err(format!(
            "`find` with the glob `{}` asks (quote the pattern)",
            word.text
        ));
    }
    let mut i = 0;
    while args.get(i).is_some_and(|w| w.text == "-P") {
        i += 1;
    }
    let starts_expression =
        |w: &Word| w.text.starts_with('-') || matches!(w.text.as_str(), "!" | "(" | ")" | ",");
    while let Some(word) = args.get(i).filter(|w| !starts_expression(w)) {
        path(context, "find", word, false)?;
        i += 1;
    }
    while let Some(word) = args.get(i) {
        i += 1;
        let text = word.text.as_str();
        if FIND_FLAGS.contains(&text) {
            continue;
        }
        let takes_file = FIND_FILES.contains(&text);
        if !takes_file && !FIND_VALUES.contains(&text) {
            return Err(format!("`find` with `{text}` is not read-only"));
        }
        let value = args
            .get(i)
            .ok_or_else(|| format!("`find {text}` is missing its value"))?;
        i += 1;
        if takes_file {
            path(context, "find", value, false)?;
        }
    }
    Ok(())
}
