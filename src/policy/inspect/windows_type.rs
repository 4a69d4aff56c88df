//! Windows `type`: relative files inside the workspace, as Win32 opens them.

use super::super::path_rule::path;
use super::super::word::Word;
use super::super::{Context, windows_path};

/// Windows `type FILE …`: relative paths inside the workspace, no wildcards, no drive or
/// stream names, not a secret file.
pub(super) fn windows_type(context: &Context, args: &[Word]) -> Result<(), String> {
    if args.is_empty() {
        return Err("`type` is on the read-only list only with a file".to_owned());
    }
    for arg in args {
        let word = arg.known().ok_or("`type` with an expansion asks")?;
        // cmd.exe's built-ins split their arguments at `,`, `;` and `=` too: `type a,.env`
        // prints both files.
        for text in word.split([',', ';', '=']).filter(|text| !text.is_empty()) {
            if text.contains(['*', '?', ':', '<', '>', '|']) || text.starts_with(['/', '\\']) {
                return Err(format!(
                    "`type {word}` asks (only a relative path inside the workspace is read-only)"
                ));
            }
            // As Win32 opens it: trailing dots and spaces dropped (`server.pem.`); short
            // names (`ENV~1`) and devices (`src\\nul`, `con.txt`) ask.
            let unix = windows_path::normalise(text)
                .map_err(|why| format!("`type {word}` asks ({why})"))?;
            path(context, "type", &Word::literal(unix), true)?;
        }
    }
    Ok(())
}
