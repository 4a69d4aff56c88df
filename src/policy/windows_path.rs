//! Windows paths as Win32 reads them, for the checks that judge a path as written (`type`,
//! `dir`, the file tools on Windows). Win32 rewrites a path before the file system sees it:
//! it drops trailing dots and spaces from every component (`server.pem.` opens
//! `server.pem`), resolves 8.3 short names (`ENV~1` may be `.env`), and opens a device for a
//! reserved name in any directory and with any extension (`src\nul`, `con.txt`, `COM¹`).
//! Pure string handling, not gated on the OS: tested on every system.
//!
//! Decisions: a component is normalised as Win32 does before the workspace and secret
//! checks; a component holding `~` and then a digit (maybe a short name, which could name
//! any file) asks; a component whose stem — before the first dot, case-insensitive, trailing
//! dots and spaces dropped — is a device name asks; a component of three or more dots (or
//! dots and spaces) asks (Win32 collapses it in ways that are hard to follow).

/// Reserved device names (and `CLOCK$`, reserved on older systems). `COM` and `LPT` with a
/// digit are matched apart.
const DEVICES: &[&str] = &["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"];

/// The digits Win32 accepts after `COM` and `LPT`: 0 to 9 and the superscripts ¹ ² ³.
const DEVICE_DIGITS: &[char] = &[
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '¹', '²', '³',
];

/// Why one component (between separators) asks, if it does.
#[must_use]
pub fn component_asks(component: &str) -> Option<String> {
    if component == "." || component == ".." || component.is_empty() {
        return None;
    }
    let trimmed = trim(component);
    if trimmed.chars().all(|c| c == '.') {
        return Some(format!(
            "`{component}` is only dots and spaces, which Win32 reads in its own way"
        ));
    }
    let mut chars = trimmed.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '~' && chars.peek().is_some_and(char::is_ascii_digit) {
            return Some(format!(
                "`{component}` may be an 8.3 short name, which can name any file"
            ));
        }
    }
    let stem = trim(trimmed.split('.').next().unwrap_or(trimmed));
    if is_device(stem) {
        return Some(format!(
            "`{component}` names the device `{}` in any directory",
            stem.to_ascii_uppercase()
        ));
    }
    None
}

/// `text` with trailing dots and spaces dropped, as Win32 drops them.
fn trim(text: &str) -> &str {
    text.trim_end_matches(['.', ' '])
}

fn is_device(stem: &str) -> bool {
    if DEVICES
        .iter()
        .any(|device| device.eq_ignore_ascii_case(stem))
    {
        return true;
    }
    let mut chars = stem.chars();
    let prefix: String = chars.by_ref().take(3).collect();
    let digit = chars.next();
    (prefix.eq_ignore_ascii_case("COM") || prefix.eq_ignore_ascii_case("LPT"))
        && digit.is_some_and(|d| DEVICE_DIGITS.contains(&d))
        && chars.next().is_none()
}

/// A path as written (`\` or `/` between components) the way Win32 opens it: `/` between
/// components, each with trailing dots and spaces dropped. `Err` says why it asks.
///
/// # Errors
/// A component that may be a short name, names a device, or is only dots.
pub fn normalise(path: &str) -> Result<String, String> {
    let mut out = Vec::new();
    for component in path.split(['\\', '/']) {
        if let Some(why) = component_asks(component) {
            return Err(why);
        }
        out.push(match component {
            "." | ".." => component,
            other => trim(other),
        });
    }
    Ok(out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_dots_and_spaces_go() {
        assert_eq!(normalise("server.pem."), Ok("server.pem".to_owned()));
        assert_eq!(normalise("a. \\b .\\.npmrc.."), Ok("a/b/.npmrc".to_owned()));
        assert_eq!(normalise("..\\x"), Ok("../x".to_owned()));
        assert_eq!(normalise(".\\src\\main.rs"), Ok("./src/main.rs".to_owned()));
        assert!(normalise("a\\...\\b").is_err());
        assert!(normalise(". .").is_err());
    }

    #[test]
    fn short_names_ask() {
        for path in ["ENV~1", "src\\PROGRA~1\\x", "a~9.txt", "x/~1"] {
            assert!(normalise(path).is_err(), "{path}");
        }
        for path in ["a~b", "~x", "backup~", "notes~.md"] {
            assert!(normalise(path).is_ok(), "{path}");
        }
    }

    #[test]
    fn device_names_ask_in_every_case_extension_and_directory() {
        let mut names: Vec<String> = DEVICES.iter().map(|d| (*d).to_owned()).collect();
        for prefix in ["COM", "LPT"] {
            names.extend(DEVICE_DIGITS.iter().map(|d| format!("{prefix}{d}")));
        }
        for name in &names {
            for case in [name.clone(), name.to_lowercase(), capitalised(name)] {
                for extension in ["", ".txt", ".tar.gz", ".", " ", " .txt", "..", ". ."] {
                    for directory in ["", "src\\", "src/", "a\\b/", ".\\"] {
                        let path = format!("{directory}{case}{extension}");
                        assert!(normalise(&path).is_err(), "{path}");
                        let deeper = format!("{path}\\x.rs");
                        assert!(normalise(&deeper).is_err(), "{deeper}");
                    }
                }
            }
        }
        for path in [
            "console",
            "nul1",
            "com10",
            "lpt",
            "auxiliary.rs",
            "conin",
            "xcon",
            "com",
        ] {
            assert_eq!(normalise(path), Ok(path.to_owned()), "{path}");
        }
    }

    fn capitalised(name: &str) -> String {
        let mut chars = name.chars();
        chars.next().map_or_else(String::new, |first| {
            first
                .to_uppercase()
                .chain(chars.flat_map(char::to_lowercase))
                .collect()
        })
    }
}
