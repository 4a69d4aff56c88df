//! Writing rules into the user settings file: an "always allow" prefix into
//! `[permissions.commands] allow`, a "this project" prefix into
//! `[projects."<workspace>".permissions.commands] allow`, a rule of either list from
//! `agent rules add`, and taking a rule out again (`agent rules remove`). Comments and layout are kept (toml_edit). The
//! new text goes to a temporary file beside the real one, with the real one's
//! permissions, and is renamed over it, so a crash never leaves a half-written
//! settings file. A settings file that is a symbolic link (dotfiles managers)
//! stays one: the file it points to is written.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};

/// Links followed before giving up on a settings path (a loop of links).
const MAX_LINKS: usize = 40;

/// Which allow list a rule goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// `[permissions.commands]`: everywhere.
    Everywhere,
    /// `[projects."<workspace>".permissions.commands]`: only in this workspace.
    Project(&'a Path),
}

impl Scope<'_> {
    /// The table a rule of this scope is written to, as a person reads it in the file.
    #[must_use]
    pub fn table(&self) -> String {
        match self {
            Scope::Everywhere => "[permissions.commands]".to_owned(),
            Scope::Project(workspace) => format!(
                "[projects.{}.permissions.commands]",
                quoted_key(&workspace.display().to_string())
            ),
        }
    }
}

impl Scope<'_> {
    /// The `[network]` table a host of this scope is written to.
    #[must_use]
    pub fn network_table(&self) -> String {
        match self {
            Scope::Everywhere => "[network]".to_owned(),
            Scope::Project(workspace) => format!(
                "[projects.{}.network]",
                quoted_key(&workspace.display().to_string())
            ),
        }
    }
}

/// Appends `host` to `[network] allow` of `scope` in `path` (a person allowed it at the
/// per-host prompt), creating the file and tables as needed; nothing when it is there.
///
/// # Errors
/// A message naming the file when it cannot be read, parsed or written.
pub fn save_host(path: &Path, scope: Scope<'_>, host: &str) -> Result<(), String> {
    let name = path.display();
    let mut doc = read_document(path)?;
    let root = scope_root(&mut doc, scope, path)?;
    let where_ = scope.network_table();
    let network =
        table(root, "network").ok_or_else(|| format!("`{name}`: {where_} is not a table"))?;
    let array = network
        .entry("allow")
        .or_insert_with(|| Item::Value(Value::Array(Array::new())))
        .as_array_mut()
        .ok_or_else(|| format!("`{name}`: `allow` in {where_} is not an array"))?;
    if array.iter().any(|value| value.as_str() == Some(host)) {
        return Ok(());
    }
    array.push(host);
    write_through_links(path, doc.to_string().as_bytes())
        .map_err(|error| format!("cannot write `{name}`: {error}"))
}

/// A TOML basic string for `key`, as toml_edit writes a quoted key.
fn quoted_key(key: &str) -> String {
    toml_edit::Key::new(key).display_repr().into_owned()
}

/// Appends `prefix` to the allow list in `path` (creating the file and tables as
/// needed). Does nothing when the prefix is already there.
///
/// # Errors
/// A message naming the file when it cannot be read, parsed or written.
pub fn save_allow_rule(path: &Path, prefix: &str) -> Result<(), String> {
    save_rule(path, Scope::Everywhere, prefix)
}

/// Appends `prefix` to the allow list of `scope` in `path`, creating the file and
/// tables as needed; nothing when it is already there.
///
/// # Errors
/// A message naming the file when it cannot be read, parsed or written.
pub fn save_rule(path: &Path, scope: Scope<'_>, prefix: &str) -> Result<(), String> {
    add_rule(path, scope, List::Allow, prefix).map(|_| ())
}

/// Which list of a `permissions.commands` table a rule goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    /// `allow`.
    Allow,
    /// `deny`.
    Deny,
}

impl List {
    /// The key as written in the file.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            List::Allow => "allow",
            List::Deny => "deny",
        }
    }
}

/// Appends `prefix` to `list` of `scope` in `path`, creating the file and tables as needed.
/// Returns whether it was added (`false`: it was there already, and nothing was written).
///
/// # Errors
/// A message naming the file when it cannot be read, parsed or written.
pub fn add_rule(path: &Path, scope: Scope<'_>, list: List, prefix: &str) -> Result<bool, String> {
    let name = path.display();
    let mut doc = read_document(path)?;
    let root = scope_root(&mut doc, scope, path)?;
    let permissions = table(root, "permissions").ok_or_else(|| {
        format!(
            "`{name}`: the `permissions` of {} is not a table",
            scope.table()
        )
    })?;
    let commands = table(permissions, "commands")
        .ok_or_else(|| format!("`{name}`: {} is not a table", scope.table()))?;
    let key = list.key();
    let array = commands
        .entry(key)
        .or_insert_with(|| Item::Value(Value::Array(Array::new())))
        .as_array_mut()
        .ok_or_else(|| format!("`{name}`: `{key}` in {} is not an array", scope.table()))?;
    if array.iter().any(|value| value.as_str() == Some(prefix)) {
        return Ok(false);
    }
    array.push(prefix);
    write_through_links(path, doc.to_string().as_bytes())
        .map_err(|error| format!("cannot write `{name}`: {error}"))?;
    Ok(true)
}

/// The table `scope`'s settings sit in: the file's top, or its `[projects."<workspace>"]`
/// table (made when missing). `path` names the file in the error.
fn scope_root<'a>(
    doc: &'a mut DocumentMut,
    scope: Scope<'_>,
    path: &Path,
) -> Result<&'a mut Table, String> {
    let name = path.display();
    let root = doc.as_table_mut();
    let Scope::Project(workspace) = scope else {
        return Ok(root);
    };
    let projects =
        table(root, "projects").ok_or_else(|| format!("`{name}`: [projects] is not a table"))?;
    let key = workspace.display().to_string();
    table(projects, &key).ok_or_else(|| format!("`{name}`: [projects.\"{key}\"] is not a table"))
}

/// Takes `rule` out of every allow and deny list of `path` that applies in `workspace`:
/// `[permissions.commands]` and `[projects."<workspace>".permissions.commands]`. Returns
/// where it was found, e.g. `allow in [permissions.commands]` (empty: nowhere, and the file
/// is left untouched).
///
/// # Errors
/// A message naming the file when it cannot be read, parsed or written.
pub fn remove_rule(path: &Path, workspace: &Path, rule: &str) -> Result<Vec<String>, String> {
    let name = path.display();
    let mut doc = read_document(path)?;
    let mut removed = Vec::new();
    let key = workspace.display().to_string();
    let scopes = [Scope::Everywhere, Scope::Project(workspace)];
    for scope in scopes {
        let root: Option<&mut Table> = match scope {
            Scope::Everywhere => Some(doc.as_table_mut()),
            Scope::Project(_) => doc
                .as_table_mut()
                .get_mut("projects")
                .and_then(Item::as_table_like_mut)
                .and_then(|projects| projects.get_mut(&key))
                .and_then(Item::as_table_mut),
        };
        let Some(commands) = root
            .and_then(|root| root.get_mut("permissions"))
            .and_then(|item| item.as_table_like_mut())
            .and_then(|permissions| permissions.get_mut("commands"))
            .and_then(|item| item.as_table_like_mut())
        else {
            continue;
        };
        for list in ["allow", "deny"] {
            let Some(array) = commands.get_mut(list).and_then(Item::as_array_mut) else {
                continue;
            };
            let before = array.len();
            array.retain(|value| value.as_str().map(str::trim) != Some(rule.trim()));
            if array.len() != before {
                // The first element of a one-line list had `, ` before it: `["a", "b"]`,
                // not `[ "b"]`.
                if let Some(first) = array.get_mut(0) {
                    let decor = first.decor_mut();
                    let on_one_line = decor
                        .prefix()
                        .and_then(|prefix| prefix.as_str())
                        .is_some_and(|prefix| !prefix.contains('\n'));
                    if on_one_line {
                        decor.set_prefix("");
                    }
                }
                removed.push(format!("{list} in {}", scope.table()));
            }
        }
    }
    if !removed.is_empty() {
        write_through_links(path, doc.to_string().as_bytes())
            .map_err(|error| format!("cannot write `{name}`: {error}"))?;
    }
    Ok(removed)
}

/// Edits the settings file at `path` with `edit` (comments and layout kept) and writes it
/// back atomically, through links, when `edit` succeeds.
///
/// # Errors
/// The file cannot be read, parsed or written, or `edit`'s own error.
pub fn edit_settings<T>(
    path: &Path,
    edit: impl FnOnce(&mut DocumentMut) -> Result<T, String>,
) -> Result<T, String> {
    let mut doc = read_document(path)?;
    let result = edit(&mut doc)?;
    write_through_links(path, doc.to_string().as_bytes())
        .map_err(|error| format!("cannot write `{}`: {error}", path.display()))?;
    Ok(result)
}

/// The settings text of `path` as an editable document (empty when it does not exist).
fn read_document(path: &Path) -> Result<DocumentMut, String> {
    let name = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(format!("cannot read `{name}`: {error}")),
    };
    text.parse()
        .map_err(|error| format!("cannot parse `{name}`: {error}"))
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

/// The file a path finally names, following symbolic links (relative ones from the
/// link's own directory); the path itself when it is not a link or does not exist.
fn link_target(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow"
    )))
}

/// Replaces the file `path` names (through links) with `bytes`, atomically, keeping
/// its permissions.
fn write_through_links(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = link_target(path)?;
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let file_name = target
        .file_name()
        .map_or_else(|| "settings.toml".into(), |n| n.to_string_lossy());
    let temp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let permissions = std::fs::metadata(&target)
        .ok()
        .map(|meta| meta.permissions());
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        std::fs::rename(&temp, &target)
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
    fn a_host_goes_to_the_network_allow_list_of_its_scope_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, "[network]\nmode = \"allowlist\" # mine\n").unwrap();
        for _ in 0..2 {
            save_host(&path, Scope::Everywhere, "a.test").unwrap();
            save_host(&path, Scope::Project(Path::new("/w")), "b.test").unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[network]\nmode = \"allowlist\" # mine\nallow = [\"a.test\"]\n\n\
             [projects.\"/w\".network]\nallow = [\"b.test\"]\n"
        );
        std::fs::write(&path, "network = 1\n").unwrap();
        assert!(save_host(&path, Scope::Everywhere, "a.test").is_err());
    }

    #[test]
    fn a_deny_rule_goes_to_the_deny_list_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, "[permissions.commands]\nallow = [\"ls\"] # mine\n").unwrap();
        assert!(add_rule(&path, Scope::Everywhere, List::Deny, "git push").unwrap());
        assert!(!add_rule(&path, Scope::Everywhere, List::Deny, "git push").unwrap());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[permissions.commands]\nallow = [\"ls\"] # mine\ndeny = [\"git push\"]\n"
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

    #[test]
    fn a_project_rule_goes_to_the_workspace_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, "# mine\n[permissions.commands]\nallow = [\"ls\"]\n").unwrap();
        let workspace = Path::new("/home/me/src/app");
        save_rule(&path, Scope::Project(workspace), "cargo test").unwrap();
        save_rule(&path, Scope::Project(workspace), "cargo test").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\n[permissions.commands]\nallow = [\"ls\"]\n\n[projects.\"/home/me/src/app\".permissions.commands]\nallow = [\"cargo test\"]\n"
        );
        assert_eq!(
            Scope::Project(workspace).table(),
            "[projects.\"/home/me/src/app\".permissions.commands]"
        );
    }

    #[test]
    fn remove_takes_a_rule_out_of_every_list_that_applies_here() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        let text = "# top\n[permissions.commands]\nallow = [\"ls\", \"touch\"] # mine\ndeny = [\"touch\"]\n\n[projects.\"/w\".permissions.commands]\nallow = [\"touch\"]\n\n[projects.\"/other\".permissions.commands]\nallow = [\"touch\"]\n";
        std::fs::write(&path, text).unwrap();
        let removed = remove_rule(&path, Path::new("/w"), "touch").unwrap();
        assert_eq!(
            removed,
            [
                "allow in [permissions.commands]",
                "deny in [permissions.commands]",
                "allow in [projects.\"/w\".permissions.commands]"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# top\n[permissions.commands]\nallow = [\"ls\"] # mine\ndeny = []\n\n[projects.\"/w\".permissions.commands]\nallow = []\n\n[projects.\"/other\".permissions.commands]\nallow = [\"touch\"]\n"
        );
        assert!(
            remove_rule(&path, Path::new("/w"), "nope")
                .unwrap()
                .is_empty()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_settings_file_stays_a_link_and_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("dotfiles")).unwrap();
        let target = dir.path().join("dotfiles/agent.toml");
        std::fs::write(&target, "# linked\n[limits]\nmax_turns = 3\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("settings.toml");
        std::os::unix::fs::symlink("dotfiles/agent.toml", &link).unwrap();
        save_allow_rule(&link, "touch").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "# linked\n[limits]\nmax_turns = 3\n\n[permissions.commands]\nallow = [\"touch\"]\n"
        );
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("dotfiles"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }
}
