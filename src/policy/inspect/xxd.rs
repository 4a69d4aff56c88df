//! `xxd`'s own reader: whole-word options and at most one file.

use super::super::Context;
use super::super::path_rule::path;
use super::super::word::Word;
use super::walk::is_number;

/// xxd's options, matched as whole words (xxd is not getopt: `-ps` is `-p`, not `-p -s`).
const XXD_FLAGS: &[&str] = &[
    "-p",
    "-ps",
    "-plain",
    "-postscript",
    "-a",
    "-autoskip",
    "-C",
    "-capitalize",
    "-e",
    "-i",
    "-include",
    "-u",
    "-uppercase",
    "-b",
    "-bits",
    "-d",
    "-decimal",
];

/// xxd's options that take a number as the next word.
const XXD_NUMBERS: &[&str] = &[
    "-c",
    "-cols",
    "-g",
    "-groupsize",
    "-l",
    "-len",
    "-o",
    "-s",
    "-seek",
];

/// xxd: whole-word options, at most one file (a second operand is written; `-r` writes too).
pub(super) fn xxd(context: &Context, args: &[Word]) -> Result<(), String> {
    let mut files = 0;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += 1;
        let text = word.text.as_str();
        // Options end at the first operand: `xxd a -p` writes a file named `-p`.
        if files == 0 && XXD_FLAGS.contains(&text) {
            continue;
        }
        if files == 0 && XXD_NUMBERS.contains(&text) {
            let value = args.get(i).and_then(Word::known).unwrap_or("");
            if !is_number(value) {
                return Err(format!("`xxd {text}` takes a number"));
            }
            i += 1;
            continue;
        }
        if files == 0 && text.starts_with('-') && text != "-" {
            return Err(format!("`xxd` with `{text}` is not read-only"));
        }
        files += 1;
        if files > 1 {
            return Err(
                "`xxd` with a second operand writes to it (it is the output file)".to_owned(),
            );
        }
        path(context, "xxd", word, true)?;
    }
    Ok(())
}
