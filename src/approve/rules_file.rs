//! Saving an "always allow" prefix into the user settings file: appended to
//! `[permissions.commands] allow`, comments and layout kept (toml_edit), written
//! to a temporary file beside it and renamed over it, so a crash never leaves
//! a half-written settings file.

use std::io::Write as _;
use std::path::Path;

use toml_edit::{Array, DocumentMut, Item, Table, Value};

/// Appends `prefix` to the allow list in `path` (creating the file and tables as
/// needed). Does nothing when the prefix is already there.
///
/// # Errors
/// A message naming the file when it cannot be read, parsed or written.
pub fn save_allow_rule(path: &Path, prefix: &str) -> Result<(), String> {
    let name = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(format!("cannot read `{name}`: {error}")),
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|error| format!("cannot parse `{name}`: {error}"))?;
    let permissions = table(doc.as_table_mut(), "permissions")
        .ok_or_else(|| format!("`{name}`: [permissions] is not a table"))?;
    let commands = table(permissions, "commands")
        .ok_or_else(|| format!("`{name}`: [permissions.commands] is not a table"))?;
    let allow = commands
        .entry("allow")
        .or_insert_with(|| Item::Value(Value::Array(Array::new())))
        .as_array_mut()
        .ok_or_else(|| format!("`{name}`: `permissions.commands.allow` is not an array"))?;
    if allow.iter().any(|value| value.as_str() == Some(prefix)) {
        return Ok(());
    }
    allow.push(prefix);
    write_atomically(path, doc.to_string().as_bytes())
        .map_err(|error| format!("cannot write `{name}`: {error}"))
}

/// The sub-table `key` of `parent`, created (as a real `[table]`) when missing.
fn table<'a>(parent: &'a mut Table, key: &str) -> Option<&'a mut Table> {
    let item = parent.entry(key).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    item.as_table_mut()
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let file_name = path
        .file_name()
        .map_or_else(|| "settings.toml".into(), |n| n.to_string_lossy());
    let temp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn appends_to_an_existing_list_keeping_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(
            &path,
            "# my settings\n[permissions.commands]\n# allowed\nallow = [\"git status\"] # trailing\n\n[limits]\nmax_turns = 9 # nine\n",
        )
        .unwrap();
        save_allow_rule(&path, "touch").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# my settings\n[permissions.commands]\n# allowed\nallow = [\"git status\", \"touch\"] # trailing\n\n[limits]\nmax_turns = 9 # nine\n"
        );
        save_allow_rule(&path, "touch").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path)
                .unwrap()
                .matches("touch")
                .count(),
            1
        );
    }

    #[test]
    fn creates_the_file_and_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/settings.toml");
        save_allow_rule(&path, "cargo test").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[permissions.commands]\nallow = [\"cargo test\"]\n"
        );
    }

    #[test]
    fn refuses_a_file_it_cannot_parse() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, "[permissions\n").unwrap();
        assert!(
            save_allow_rule(&path, "ls")
                .unwrap_err()
                .contains("cannot parse")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[permissions\n");
    }
}
