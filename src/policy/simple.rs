//! What makes a command string one plain simple command, shared by the decision (`decide`)
//! and the offered prefix (`suggest`), so that neither imports the other: the size limit, the
//! characters of DESIGN.md rule 3, control characters, and the words of such a command. Owns
//! these checks; decides nothing.

use super::parse;
use super::script::Shape;
use super::word::{ByteSet, Word, WordKind};
use super::{OsFamily, cmd};

/// Longest command checked, in bytes (64 KiB): parse time grows with length, and nobody
/// reviews a longer command. Longer ones ask (deny without a terminal).
pub(super) const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// DESIGN.md rule 3: these characters ask wherever they are, even inside quotes.
pub(super) fn posix_metacharacter(text: &str) -> Option<String> {
    // By bytes: every character searched for is ASCII, and no byte of a longer one is.
    const METACHARACTERS: ByteSet = ByteSet::new(false, b";|><`$&\n");
    let bytes = text.as_bytes();
    let at = bytes.iter().position(|&b| METACHARACTERS.contains(b))?;
    let reason = match (bytes[at], bytes.get(at + 1)) {
        (b'&', Some(b'&')) => "contains a command separator ('&&')",
        (b'|', Some(b'|')) => "contains a command separator ('||')",
        (b';', _) => "contains a command separator (';')",
        (b'|', _) => "contains a pipe ('|')",
        (b'>', _) => "contains a redirection ('>')",
        (b'<', _) => "contains a redirection ('<')",
        (b'`', _) => "contains a command substitution ('`')",
        (b'$', _) => "contains a substitution or variable ('$')",
        (b'&', _) => "contains a background operator ('&')",
        _ => "contains a newline",
    };
    Some(reason.to_owned())
}

/// Control characters other than tab (a carriage return, an escape …) ask: shells and
/// terminals treat them in ways this module does not model.
pub(super) fn control_character(text: &str) -> Option<String> {
    let c = text
        .chars()
        .find(|&c| c.is_control() && c != '\t' && c != '\n')?;
    Some(format!(
        "contains a control character (U+{:04X})",
        u32::from(c)
    ))
}

/// The words of a command that is one simple command without operators, assignments or
/// redirections, for the offered prefix (`suggest`).
pub(super) fn single_words(os: OsFamily, command: &str) -> Option<Vec<Word>> {
    if command.trim().is_empty()
        || command.len() > MAX_COMMAND_BYTES
        || command.contains('\0')
        || posix_metacharacter(command).is_some()
        || control_character(command).is_some()
    {
        return None;
    }
    let words = match os {
        OsFamily::Unix => {
            let script = parse::parse(command);
            if script.has_error || script.shape != Shape::Simple {
                return None;
            }
            let first = script.commands.into_iter().next()?;
            let plain = first.assignments.is_empty() && !first.redirected && first.odd.is_none();
            plain.then_some(first.words)?
        }
        OsFamily::Windows => {
            if cmd::METACHARACTERS
                .iter()
                .any(|(c, _)| command.contains(*c))
            {
                return None;
            }
            cmd::plain_words(command)
        }
    };
    (!words.is_empty() && words.iter().all(|w| w.kind != WordKind::Expansion)).then_some(words)
}
