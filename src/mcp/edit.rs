//! Writing servers into the user settings file (`agent mcp add`, `remove`, `approve`),
//! keeping its comments and layout, atomically (through `approve`'s settings writer).

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use super::config::{ServerConfig, valid_name};

/// What `agent mcp add` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewServer {
    /// `-- COMMAND ARGS…`.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// `--url URL`.
    Http {
        /// The endpoint.
        url: String,
    },
}

/// Adds `[mcp.servers.NAME]` to the settings file at `path`.
///
/// # Errors
/// A bad name, a server of that name already there, or the file cannot be read or written.
pub fn add(
    path: &Path,
    name: &str,
    server: &NewServer,
    env: &[(String, String)],
) -> Result<(), String> {
    if !valid_name(name) {
        return Err(format!(
            "`{name}` is not a server name: use letters, digits, `-` and single `_` (at most {} \
             characters)",
            super::config::MAX_NAME_CHARS
        ));
    }
    crate::approve::edit_settings(path, |doc| {
        let servers = servers(doc)?;
        if servers.contains_key(name) {
            return Err(format!(
                "a server `{name}` is already configured: `agent mcp remove {name}` first"
            ));
        }
        let mut table = Table::new();
        match server {
            NewServer::Stdio { command, args } => {
                table.insert("command", value(command.as_str()));
                if !args.is_empty() {
                    table.insert("args", value(args.iter().collect::<Array>()));
                }
            }
            NewServer::Http { url } => {
                table.insert("url", value(url.as_str()));
            }
        }
        if !env.is_empty() {
            let mut inline = InlineTable::new();
            for (key, val) in env {
                inline.insert(key, val.as_str().into());
            }
            table.insert("env", value(inline));
        }
        servers.insert(name, Item::Table(table));
        Ok(())
    })
}

/// Takes `[mcp.servers.NAME]` out of the settings file; `false` when it was not there.
///
/// # Errors
/// The file cannot be read, parsed or written.
pub fn remove(path: &Path, name: &str) -> Result<bool, String> {
    crate::approve::edit_settings(path, |doc| Ok(servers(doc)?.remove(name).is_some()))
}

/// Records that the person approved `server` (a project's proposal, as it is now) for
/// `workspace`: `[projects."<workspace>".mcp.approved] NAME = "<fingerprint>"`.
///
/// # Errors
/// The file cannot be read, parsed or written.
pub fn approve(path: &Path, workspace: &Path, server: &ServerConfig) -> Result<(), String> {
    let print = super::config::fingerprint(server);
    crate::approve::edit_settings(path, |doc| {
        let key = workspace.display().to_string();
        let approved = [key.as_str(), "mcp", "approved"]
            .iter()
            .try_fold(sub(doc.as_table_mut(), "projects")?, |table, key| {
                sub(table, key)
            })?;
        approved.insert(&server.name, value(print.as_str()));
        Ok(())
    })
}

/// `[mcp.servers]` of `doc`, made when missing.
fn servers(doc: &mut DocumentMut) -> Result<&mut Table, String> {
    let mcp = sub(doc.as_table_mut(), "mcp")?;
    sub(mcp, "servers")
}

/// The sub-table `key` of `parent` (made, implicit, when missing).
fn sub<'a>(parent: &'a mut Table, key: &str) -> Result<&'a mut Table, String> {
    parent
        .entry(key)
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| format!("`{key}` in the settings file is not a table"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn add_remove_and_approve_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.toml");
        std::fs::write(&path, "# mine\n[model]\nmodel = \"m\"\n").unwrap();
        let server = NewServer::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "srv".into()],
        };
        add(&path, "fs", &server, &[("A".into(), "1".into())]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\n[model]\nmodel = \"m\"\n\n[mcp.servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"srv\"]\nenv = { A = \"1\" }\n"
        );
        let again = add(&path, "fs", &server, &[]).unwrap_err();
        assert!(again.contains("already configured"), "{again}");
        assert!(add(&path, "a__b", &server, &[]).is_err());
        let catalogue = super::super::config::load(&path, None, None, Path::new("/w")).unwrap();
        assert_eq!(catalogue.servers.len(), 1);
        approve(&path, Path::new("/w"), &catalogue.servers[0].0).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("[projects.\"/w\".mcp.approved]\nfs = \""),
            "{text}"
        );
        assert!(remove(&path, "fs").unwrap());
        assert!(!remove(&path, "fs").unwrap());
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("# mine\n")
        );
    }
}
