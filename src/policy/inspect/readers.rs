//! The listed programs read through the option walk (the text readers, `rg`/`grep`, `sed -n`
//! …): each operand checked by what the program does with it; `jq`, `find` and `xxd` go to
//! their own readers.

use super::super::Context;
use super::super::path_rule::{path, unexpanding};
use super::super::word::{Word, WordKind};
use super::find::find;
use super::jq::jq;
use super::sed::sed_script;
use super::table::{Entry, Model, Operands};
use super::walk::{later_words_as_operands, walk};
use super::xxd::xxd;

pub(super) fn program_check(
    context: &Context,
    entry: &Entry,
    args: &[Word],
) -> Result<String, String> {
    let name = entry.name.as_str();
    match entry.operands {
        Operands::Jq => return jq(context, entry, args).map(|()| "jq".to_owned()),
        Operands::Find => return find(context, args).map(|()| "find".to_owned()),
        _ if name == "xxd" => return xxd(context, args).map(|()| "xxd".to_owned()),
        _ => {}
    }
    let walked = walk(context, entry, args)?;
    if entry.model == Model::Gnu {
        later_words_as_operands(context, entry, args, &walked.operands)?;
    }
    let mut operands = walked.operands.iter();
    match entry.operands {
        Operands::Files | Operands::Names => {
            let content = entry.operands == Operands::Files;
            for word in operands {
                // `tail +1f FILE`: the old `+NUM[bcl][f]` form, which can follow forever.
                if name == "tail" && word.text.starts_with('+') {
                    return Err(format!(
                        "`tail {}` asks (an old `+NUM` form, which can follow the file)",
                        word.text
                    ));
                }
                path(context, name, word, content)?;
            }
        }
        Operands::OneFile => {
            if walked.operands.len() > 1 {
                return Err(format!(
                    "`{name}` with a second operand writes to it (it is the output file)"
                ));
            }
            for word in operands {
                path(context, name, word, true)?;
            }
        }
        Operands::Search => {
            if !walked.pattern_given {
                let pattern = operands.next();
                if let Some(pattern) = pattern {
                    unexpanding(name, pattern)?;
                }
            }
            // Files whose lines are printed: content paths (a glob that could match a
            // secret asks); a directory is searched, and what is inside is the sandbox's.
            for word in operands {
                path(context, name, word, true)?;
            }
        }
        Operands::Sets => {
            if let Some(word) = operands.find(|w| w.kind != WordKind::Literal) {
                return Err(format!(
                    "`{name}` with a glob (`{}`) is not on the read-only list",
                    word.text
                ));
            }
        }
        Operands::Sed => {
            if !walked.quiet {
                return Err("`sed` is on the read-only list only with `-n`".to_owned());
            }
            let mut scripts = walked.scripts.clone();
            if scripts.is_empty() {
                let Some(script) = operands.next() else {
                    return Err("`sed` without a script".to_owned());
                };
                scripts.push(script.known().unwrap_or("w").to_owned());
            }
            for script in &scripts {
                sed_script(script)?;
            }
            for word in operands {
                path(context, name, word, true)?;
            }
            return Ok("sed -n".to_owned());
        }
        Operands::Jq | Operands::Find => {}
    }
    Ok(name.to_owned())
}
