//! `[mcp.servers.NAME]`: the MCP servers a run may use, read from the user settings file (and
//! a `--profile`'s `[profiles.P.mcp.servers.NAME]`, which replaces a server of the same name)
//! and proposed by a project file. Every value is checked for its type with a one-line error
//! naming file, line and key; unknown keys are warnings, as in the rest of the settings.
//!
//! A project file (`.agent/settings.toml`) may only *propose* a server: it is listed, never
//! started, until the person approves it (`agent mcp approve NAME`), which writes the
//! proposal's fingerprint (SHA-256) under `[projects."<workspace>".mcp.approved]` in the user file. A
//! proposal that changed since (another command, URL, environment, sandbox, hosts) is
//! proposed again.

use std::collections::BTreeMap;
use std::path::Path;

use toml_edit::{Document, Item};

pub use super::server::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerConfig, ServerOrigin, Transport,
};
pub use super::table::{MAX_NAME_CHARS, valid_name};
use super::table::{Reader, parse_doc, read};
use crate::settings::SettingsError;

/// Whether a server may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// The user file or a profile configured it.
    Configured,
    /// A project proposed it and the person approved this very proposal.
    Approved,
    /// A project proposed it; never started until approved.
    Proposed,
}

impl Standing {
    /// The word `agent mcp list` shows.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Standing::Configured => "configured",
            Standing::Approved => "approved",
            Standing::Proposed => "proposed",
        }
    }
}

/// The servers of a run, in name order, and what was worth a warning.
#[derive(Debug, Default, Clone)]
pub struct Catalogue {
    /// Every server, with whether it may start.
    pub servers: Vec<(ServerConfig, Standing)>,
    /// Unknown keys, ignored proposals.
    pub warnings: Vec<String>,
}

impl Catalogue {
    /// The values the servers that may start are given that must never reach a transcript
    /// or the model's record: bearer tokens (read through `lookup`), secret headers' values,
    /// and the values of local servers' `env` (`GITHUB_TOKEN = "…"`).
    #[must_use]
    pub fn secrets(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
        let mut secrets = Vec::new();
        for server in self.startable() {
            secrets.extend(server.env.iter().map(|(_, value)| value.clone()));
            if let Transport::Http {
                headers,
                bearer_token_env,
                ..
            } = &server.transport
            {
                secrets.extend(bearer_token_env.as_deref().and_then(lookup));
                secrets.extend(
                    headers
                        .iter()
                        .filter(|(name, _)| crate::model::secret_header(name))
                        .map(|(_, value)| value.clone()),
                );
            }
        }
        secrets
    }

    /// The servers that may start.
    pub fn startable(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers
            .iter()
            .filter(|(_, standing)| *standing != Standing::Proposed)
            .map(|(server, _)| server)
    }
}

/// Reads the servers for a run in `workspace`: the user file's, the profile's over them, and
/// the project file's proposals (each approved or not).
///
/// # Errors
/// A malformed value, naming file, line and key.
pub fn load(
    user_file: &Path,
    profile: Option<&str>,
    project_file: Option<&Path>,
    workspace: &Path,
) -> Result<Catalogue, SettingsError> {
    let mut catalogue = Catalogue::default();
    let mut servers: BTreeMap<String, (ServerConfig, Standing)> = BTreeMap::new();
    let mut approved = BTreeMap::new();
    if let Some(text) = read(user_file)? {
        let doc = parse_doc(user_file, &text)?;
        let reader = Reader {
            path: user_file,
            text: &text,
        };
        let top = reader.servers(doc.as_table(), "", &|line| {
            ServerOrigin::User(user_file.to_path_buf(), line)
        })?;
        catalogue.warnings.extend(top.1);
        for server in top.0 {
            servers.insert(server.name.clone(), (server, Standing::Configured));
        }
        if let Some(name) = profile
            && let Some(table) = doc
                .get("profiles")
                .and_then(|p| p.get(name))
                .and_then(Item::as_table)
        {
            let (list, warnings) =
                reader.servers(table, &format!("profiles.{name}."), &|line| {
                    ServerOrigin::Profile(name.to_owned(), user_file.to_path_buf(), line)
                })?;
            catalogue.warnings.extend(warnings);
            for server in list {
                servers.insert(server.name.clone(), (server, Standing::Configured));
            }
        }
        approved = approvals(&doc, workspace);
    }
    if let Some(project) = project_file.filter(|p| *p != user_file)
        && let Some(text) = read(project)?
    {
        let doc = parse_doc(project, &text)?;
        let reader = Reader {
            path: project,
            text: &text,
        };
        let (list, warnings) = reader.servers(doc.as_table(), "", &|line| {
            ServerOrigin::Project(project.to_path_buf(), line)
        })?;
        catalogue.warnings.extend(warnings);
        for server in list {
            if servers.contains_key(&server.name) {
                catalogue.warnings.push(format!(
                    "{}: the proposed MCP server `{}` is ignored: the user settings file \
                     configures a server of that name",
                    server.origin, server.name
                ));
                continue;
            }
            let standing = if approved.get(&server.name) == Some(&fingerprint(&server)) {
                Standing::Approved
            } else {
                Standing::Proposed
            };
            servers.insert(server.name.clone(), (server, standing));
        }
    }
    catalogue.servers = servers.into_values().collect();
    Ok(catalogue)
}

/// What an approval is bound to: everything that decides what runs and what it may do. The
/// SHA-256 (64 hex digits) of [`canonical`]: the settings file stays short, and a changed
/// proposal no longer matches — the project's author chooses both proposals, so the hash
/// must resist collisions, not only chance.
#[must_use]
pub fn fingerprint(server: &ServerConfig) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, &canonical(server));
    digest
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The canonical form of what an approval binds: each part as its length in bytes (decimal),
/// `:`, the bytes; each list as its length first — no two proposals share one.
fn canonical(server: &ServerConfig) -> Vec<u8> {
    fn part(out: &mut Vec<u8>, text: &str) {
        out.extend_from_slice(format!("{}:", text.len()).as_bytes());
        out.extend_from_slice(text.as_bytes());
    }
    fn list<'a>(out: &mut Vec<u8>, items: impl ExactSizeIterator<Item = &'a str>) {
        part(out, &items.len().to_string());
        for item in items {
            part(out, item);
        }
    }
    fn pairs(out: &mut Vec<u8>, pairs: &[(String, String)]) {
        list(
            out,
            pairs
                .iter()
                .flat_map(|(k, v)| [k.as_str(), v.as_str()])
                .collect::<Vec<_>>()
                .into_iter(),
        );
    }
    let mut out = Vec::new();
    match &server.transport {
        Transport::Stdio { command, args } => {
            part(&mut out, "stdio");
            part(&mut out, command);
            list(&mut out, args.iter().map(String::as_str));
        }
        Transport::Http {
            url,
            headers,
            bearer_token_env,
        } => {
            part(&mut out, "http");
            part(&mut out, url);
            pairs(&mut out, headers);
            list(&mut out, bearer_token_env.iter().map(String::as_str));
        }
    }
    pairs(&mut out, &server.env);
    part(&mut out, server.sandbox.name());
    list(&mut out, server.network.iter().map(String::as_str));
    out
}

/// `[projects."<workspace>".mcp.approved]`: name → fingerprint, for the table naming
/// `workspace` (as written, or once links are resolved).
fn approvals(doc: &Document<String>, workspace: &Path) -> BTreeMap<String, String> {
    let Some(projects) = doc.get("projects").and_then(Item::as_table_like) else {
        return BTreeMap::new();
    };
    let mut approved = BTreeMap::new();
    for (key, project) in projects.iter() {
        let path = Path::new(key);
        let names = path == workspace || path.canonicalize().is_ok_and(|p| p == workspace);
        let table = project
            .get("mcp")
            .and_then(|mcp| mcp.get("approved"))
            .and_then(Item::as_table_like);
        if let (true, Some(table)) = (names, table) {
            for (name, value) in table.iter() {
                if let Some(print) = value.as_str() {
                    approved.insert(name.to_owned(), print.to_owned());
                }
            }
        }
    }
    approved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxMode;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;
    use std::time::Duration;

    fn catalogue(user: &str, project: Option<&str>) -> Result<Catalogue, String> {
        let dir = tempfile::tempdir().unwrap();
        let user_file = dir.path().join("settings.toml");
        std::fs::write(&user_file, user).unwrap();
        let project_file = dir.path().join("project.toml");
        if let Some(project) = project {
            std::fs::write(&project_file, project).unwrap();
        }
        let user_text = std::fs::read_to_string(&user_file).unwrap();
        let workspace = Path::new("/w");
        load(
            &user_file,
            Some("p"),
            project.map(|_| project_file.as_path()),
            workspace,
        )
        .map(|mut c| {
            // Paths differ per temp dir: compare lines only.
            for (server, _) in &mut c.servers {
                server.origin = match &server.origin {
                    ServerOrigin::User(_, l) => ServerOrigin::User(PathBuf::new(), *l),
                    ServerOrigin::Profile(n, _, l) => {
                        ServerOrigin::Profile(n.clone(), PathBuf::new(), *l)
                    }
                    ServerOrigin::Project(_, l) => ServerOrigin::Project(PathBuf::new(), *l),
                };
            }
            let _ = user_text;
            c
        })
        .map_err(|e| {
            e.to_string()
                .replace(&format!("{}", dir.path().display()), "DIR")
        })
    }

    #[test]
    fn a_local_server_takes_every_key() {
        let c = catalogue(
            "[mcp.servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"srv\"]\nenv = { TOKEN = \"x\" }\n\
             sandbox = \"read-only\"\nnetwork = [\"registry.npmjs.org\"]\n\
             tools = { allow = [\"read\"], deny = [\"write\"] }\nstartup_timeout_secs = 5\n\
             tool_timeout_secs = 7\n",
            None,
        )
        .unwrap();
        assert_eq!(
            c.servers,
            vec![(
                ServerConfig {
                    name: "fs".into(),
                    transport: Transport::Stdio {
                        command: "npx".into(),
                        args: vec!["-y".into(), "srv".into()]
                    },
                    env: vec![("TOKEN".into(), "x".into())],
                    sandbox: SandboxMode::ReadOnly,
                    network: vec!["registry.npmjs.org".into()],
                    tools_allow: vec!["read".into()],
                    tools_deny: vec!["write".into()],
                    startup_timeout: Duration::from_secs(5),
                    tool_timeout: Duration::from_secs(7),
                    origin: ServerOrigin::User(PathBuf::new(), 1),
                },
                Standing::Configured
            )]
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn bad_values_are_one_line_errors_naming_file_line_and_key() {
        let cases = [
            (
                "[mcp.servers.a]\ncommand = 1\n",
                "DIR/settings.toml:2: `mcp.servers.a.command` must be a non-empty string: fix the settings file",
            ),
            (
                "[mcp.servers.a]\nargs = []\n",
                "DIR/settings.toml:1: `mcp.servers.a` needs `command` (a local server) or `url` (a remote one): fix the settings file",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n",
                "DIR/settings.toml:1: `mcp.servers.a` has both `command` and `url`: give one: fix the settings file",
            ),
            (
                "[mcp.servers.a]\nurl = \"ftp://h\"\n",
                "DIR/settings.toml:2: `mcp.servers.a.url` must be an http:// or https:// URL: fix the settings file",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nsandbox = \"none\"\n",
                "DIR/settings.toml:3: `mcp.servers.a.sandbox` must be one of \"read-only\", \"workspace-write\", \"off\": fix the settings file",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nstartup_timeout_secs = 0\n",
                "DIR/settings.toml:3: `mcp.servers.a.startup_timeout_secs` must be a positive integer (seconds, at most 86400): fix the settings file",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\ntools = { only = [] }\n",
                "DIR/settings.toml:3: `mcp.servers.a.tools` must be a table { allow = [..], deny = [..] }: fix the settings file",
            ),
            (
                "[mcp.servers.a]\nurl = \"https://h\"\nbearer_token_env = \"ghp_123 secret\"\n",
                "DIR/settings.toml:3: `mcp.servers.a.bearer_token_env` must be the name of an environment variable (the token itself never goes in the file): fix the settings file",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nenv = { \"A B\" = \"1\" }\n",
                "DIR/settings.toml:3: `mcp.servers.a.env` must be a table of variable names to strings: fix the settings file",
            ),
            (
                "[mcp.servers.\"a__b\"]\ncommand = \"x\"\n",
                "DIR/settings.toml:1: `mcp.servers.a__b`: a server name is letters, digits, `-` and single `_` (at most 32 characters): fix the settings file",
            ),
            (
                "[mcp.servers.a]\ncommand = \"x\"\nheaders = { A = \"b\" }\n",
                "DIR/settings.toml:3: `mcp.servers.a.headers` must be left out for a local server (it needs `url`): fix the settings file",
            ),
            (
                "[mcp]\nservers = 1\n",
                "DIR/settings.toml:2: `mcp.servers` must be a table of [mcp.servers.NAME]: fix the settings file",
            ),
            (
                "[profiles.p.mcp.servers.a]\ncommand = \"\"\n",
                "DIR/settings.toml:2: `profiles.p.mcp.servers.a.command` must be a non-empty string: fix the settings file",
            ),
        ];
        for (text, expected) in cases {
            let error = catalogue(text, None).unwrap_err();
            assert_eq!(error, expected, "for {text:?}");
            assert!(!error.contains('\n'), "{error}");
        }
    }

    #[test]
    fn unknown_keys_warn() {
        let c = catalogue("[mcp.servers.a]\ncommand = \"x\"\ncomand = 1\n", None).unwrap();
        assert_eq!(c.warnings.len(), 1);
        assert!(
            c.warnings[0].ends_with(":3: unknown key `comand` in [mcp.servers.a] is ignored"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn a_profile_replaces_a_server_of_the_same_name() {
        let c = catalogue(
            "[mcp.servers.a]\ncommand = \"x\"\n[profiles.p.mcp.servers.a]\ncommand = \"y\"\n",
            None,
        )
        .unwrap();
        assert_eq!(c.servers.len(), 1);
        assert_eq!(
            c.servers[0].0.transport,
            Transport::Stdio {
                command: "y".into(),
                args: vec![]
            }
        );
        assert_eq!(
            c.servers[0].0.origin,
            ServerOrigin::Profile("p".into(), PathBuf::new(), 3)
        );
    }

    #[test]
    fn a_project_only_proposes_until_this_very_proposal_is_approved() {
        let proposal = "[mcp.servers.p]\ncommand = \"x\"\n";
        let c = catalogue("", Some(proposal)).unwrap();
        assert_eq!(c.servers[0].1, Standing::Proposed);
        assert_eq!(c.startable().count(), 0);
        let print = fingerprint(&c.servers[0].0);
        let approved = format!("[projects.\"/w\".mcp.approved]\np = \"{print}\"\n");
        let c = catalogue(&approved, Some(proposal)).unwrap();
        assert_eq!(c.servers[0].1, Standing::Approved);
        // The same name with another command is proposed again.
        let c = catalogue(&approved, Some("[mcp.servers.p]\ncommand = \"y\"\n")).unwrap();
        assert_eq!(c.servers[0].1, Standing::Proposed);
        // An approval for another workspace does not count.
        let elsewhere = format!("[projects.\"/v\".mcp.approved]\np = \"{print}\"\n");
        assert_eq!(
            catalogue(&elsewhere, Some(proposal)).unwrap().servers[0].1,
            Standing::Proposed
        );
    }

    #[test]
    fn loader_variables_and_tokens_are_errors_in_the_users_file_and_ignored_in_a_proposal() {
        for name in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "ld_preload",
            "DYLD_INSERT_LIBRARIES",
            "GLIBC_TUNABLES",
        ] {
            let table = format!(
                "[mcp.servers.a]\ncommand = \"x\"\nenv = {{ {name} = \"./x.so\", KEEP = \"1\" }}\n"
            );
            let error = catalogue(&table, None).unwrap_err();
            assert!(
                error.contains(&format!("`mcp.servers.a.env.{name}` is refused")),
                "{error}"
            );
            // A proposal: said and left out, the rest of it kept.
            let c = catalogue("", Some(&table)).unwrap();
            assert_eq!(c.servers[0].0.env, vec![("KEEP".into(), "1".into())]);
            assert!(
                c.warnings.iter().any(|w| w.ends_with(&format!(
                    ":3: `mcp.servers.a.env.{name}` is ignored: a loader variable runs code the \
                     sandbox does not fence"
                ))),
                "{:?}",
                c.warnings
            );
        }
        let ok = "[mcp.servers.a]\ncommand = \"x\"\nenv = { OLD_PRELOAD = \"1\" }\n";
        assert!(catalogue(ok, None).is_ok());
        assert!(catalogue("", Some(ok)).unwrap().warnings.is_empty());
        let token = |var: &str| {
            format!(
                "[mcp.servers.d]\nurl = \"http://127.0.0.1:1/mcp\"\nbearer_token_env = \"{var}\"\n"
            )
        };
        assert!(catalogue(&token("DOCS_TOKEN"), None).is_ok());
        for var in [
            "DOCS_TOKEN",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "not a name",
        ] {
            let c = catalogue("", Some(&token(var))).unwrap();
            assert!(
                matches!(
                    &c.servers[0].0.transport,
                    Transport::Http {
                        bearer_token_env: None,
                        ..
                    }
                ),
                "{var}"
            );
            assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
            assert!(
                c.warnings[0].ends_with(
                    ":3: `mcp.servers.d.bearer_token_env` is ignored: only your own settings \
                     file can give a server a token"
                ),
                "{:?}",
                c.warnings
            );
        }
        for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"] {
            let error = catalogue(&token(var), None).unwrap_err();
            assert!(error.contains("bearer_token_env"), "{error}");
        }
    }

    #[test]
    fn a_project_cannot_replace_a_users_server() {
        let c = catalogue(
            "[mcp.servers.a]\ncommand = \"x\"\n",
            Some("[mcp.servers.a]\ncommand = \"evil\"\n"),
        )
        .unwrap();
        assert_eq!(
            c.servers[0].0.transport,
            Transport::Stdio {
                command: "x".into(),
                args: vec![]
            }
        );
        assert_eq!(c.warnings.len(), 1);
    }

    #[test]
    fn a_fingerprint_is_sha256_of_an_unambiguous_canonical_form() {
        let c = catalogue("[mcp.servers.a]\ncommand = \"x\"\nargs = [\"a\"]\n", None).unwrap();
        let mut server = c.servers[0].0.clone();
        let print = fingerprint(&server);
        assert_eq!(print.len(), 64);
        assert!(print.bytes().all(|b| b.is_ascii_hexdigit()));
        let expected: String = ring::digest::digest(&ring::digest::SHA256, &canonical(&server))
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(print, expected);
        // Lists whose joined texts agree are different proposals.
        let mut seen = std::collections::BTreeSet::new();
        for args in [
            vec!["a\0b"],
            vec!["a", "b"],
            vec!["a\0", "b"],
            vec!["1:a"],
            vec!["a", "1:b"],
            vec![],
            vec![""],
            vec!["", ""],
        ] {
            server.transport = Transport::Stdio {
                command: "x".into(),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
            };
            assert!(seen.insert(fingerprint(&server)), "{args:?}");
        }
        server.transport = Transport::Stdio {
            command: "x".into(),
            args: vec![],
        };
        for env in [vec![("A", "1B=2")], vec![("A", "1"), ("B", "2")]] {
            server.env = env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            assert!(seen.insert(fingerprint(&server)), "{env:?}");
        }
    }

    #[test]
    fn fingerprints_change_with_everything_that_decides_what_runs() {
        let c = catalogue("[mcp.servers.a]\ncommand = \"x\"\n", None).unwrap();
        let base = c.servers[0].0.clone();
        let changed = [
            ServerConfig {
                transport: Transport::Stdio {
                    command: "x".into(),
                    args: vec!["-v".into()],
                },
                ..base.clone()
            },
            ServerConfig {
                env: vec![("A".into(), "1".into())],
                ..base.clone()
            },
            ServerConfig {
                sandbox: SandboxMode::Off,
                ..base.clone()
            },
            ServerConfig {
                network: vec!["h".into()],
                ..base.clone()
            },
        ];
        for other in changed {
            assert_ne!(fingerprint(&base), fingerprint(&other), "{other:?}");
        }
    }

    #[test]
    fn names_are_checked_by_rule() {
        for good in ["a", "fs", "git-hub", "a_b", "A1"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "_a", "-a", "a__b", "a b", "a.b", "ä", &"a".repeat(33)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
