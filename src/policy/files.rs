//! The file tools' access decision: may `read_file`, `list_files` or `search` look at a path,
//! may `edit_file` or `write_file` change it? Pure: the caller resolves the path (symlinks
//! followed, `workspace::resolve`) and hands over the result; nothing here touches the disk.
//!
//! Reads inside the workspace are allowed; reads outside it, or of files that hold secrets
//! (`workspace::SecretFiles`), ask. Writes ask (the person sees the diff), unless
//! `[permissions.files] edits` says `allow` or `deny`. Never, in any mode or setting: a write
//! outside the workspace, into a `.git` or `.agent` directory, or to the user settings file.
//! `[permissions.files] deny` globs deny reads and writes alike, in every mode.
//!
//! Modes: `deny` turns ask into deny; `allow-all` turns ask into allow — for reads outside the
//! workspace and for edits inside it — but never for a file that holds secrets (it still
//! asks, as a protected program does for commands); `off` denies everything (the loop offers
//! no tools then anyway).

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::{Decision, Mode, OsFamily, Source, Verdict, windows_path};
use crate::workspace::SecretFiles;

/// What a tool wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// `read_file`, `list_files`, `search`.
    Read,
    /// `edit_file`, `write_file`.
    Write,
}

/// `[permissions.files] edits`: what a write inside the workspace needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Edits {
    /// Ask the person, showing the diff (the default).
    #[default]
    Ask,
    /// Apply edits inside the workspace without asking.
    Allow,
    /// Never apply an edit.
    Deny,
}

impl Edits {
    /// Strictness for comparing layers (`allow < ask < deny`): a project file may only raise it.
    #[must_use]
    pub const fn strictness(self) -> u8 {
        match self {
            Edits::Allow => 0,
            Edits::Ask => 1,
            Edits::Deny => 2,
        }
    }

    /// Parses the settings value.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "ask" => Some(Edits::Ask),
            "allow" => Some(Edits::Allow),
            "deny" => Some(Edits::Deny),
            _ => None,
        }
    }
}

/// One `[permissions.files] deny` glob and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRule {
    /// The glob as written (`secrets/**`, `*.sqlite`).
    pub pattern: String,
    /// The layer it came from.
    pub source: Source,
}

/// Everything the decision needs besides the path: the workspace, the deny globs, the secret
/// files, the `edits` setting and the files no tool may ever write.
#[derive(Debug, Clone)]
pub struct FileRules {
    root: PathBuf,
    deny: GlobSet,
    deny_rules: Vec<FileRule>,
    secrets: std::sync::Arc<SecretFiles>,
    edits: Edits,
    never_write: Vec<PathBuf>,
}

impl FileRules {
    /// Rules for the workspace `root` (canonical). `never_write` holds resolved paths no tool
    /// may write (the user settings file); `ask_read` adds secret-file patterns to the defaults.
    ///
    /// # Errors
    /// A glob that does not parse, named in the message.
    pub fn new(
        root: PathBuf,
        deny: Vec<FileRule>,
        ask_read: &[String],
        edits: Edits,
        never_write: Vec<PathBuf>,
    ) -> Result<Self, String> {
        let mut set = GlobSetBuilder::new();
        for rule in &deny {
            set.add(glob(&rule.pattern)?);
        }
        let deny_set = set
            .build()
            .map_err(|error| format!("[permissions.files] deny: {error}"))?;
        let secrets = SecretFiles::with_extra(ask_read.iter().map(String::as_str))?.into();
        Ok(Self {
            root,
            deny: deny_set,
            deny_rules: deny,
            secrets,
            edits,
            never_write,
        })
    }

    /// The workspace root these rules judge against.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The secret-file list these rules use (the built-in list plus `ask_read`), for the
    /// shell policy to judge commands by the same list ([`super::Context::with_secrets`]).
    #[must_use]
    pub fn secrets(&self) -> std::sync::Arc<SecretFiles> {
        std::sync::Arc::clone(&self.secrets)
    }

    /// `path` as a person reads it: relative to the workspace when inside (`.` for the root),
    /// absolute otherwise.
    #[must_use]
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }

    /// Whether `list_files` and `search` leave `path` out without asking: a secret file or
    /// one a deny glob names.
    #[must_use]
    pub fn skipped(&self, path: &Path) -> bool {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        self.secrets.is_secret(relative) || self.denied_by(path).is_some()
    }

    /// The deny rule naming `path` or one of its directories, if any.
    fn denied_by(&self, path: &Path) -> Option<&FileRule> {
        let relative = path.strip_prefix(&self.root).ok();
        // The path and each of its ancestors, relative to the root when inside (`secrets/**`
        // also denies `secrets` itself), and the absolute path (`/etc/**`).
        let mut candidates: Vec<&Path> = Vec::new();
        if let Some(relative) = relative {
            candidates.extend(relative.ancestors().filter(|p| !p.as_os_str().is_empty()));
        }
        candidates.extend(path.ancestors());
        // `secrets/**` names everything below `secrets`, so the directory itself too.
        let below: Vec<PathBuf> = candidates.iter().take(1).map(|p| p.join("x")).collect();
        for candidate in candidates
            .into_iter()
            .chain(below.iter().map(PathBuf::as_path))
        {
            if let Some(&index) = self.deny.matches(candidate).first() {
                return Some(&self.deny_rules[index]);
            }
            // A pattern without `/` names a file anywhere: try the last component alone.
            if let Some(name) = candidate.file_name()
                && let Some(&index) = self.deny.matches(Path::new(name)).first()
                && !self.deny_rules[index].pattern.contains('/')
            {
                return Some(&self.deny_rules[index]);
            }
        }
        None
    }
}

/// A glob the way the secret-file list reads them: case-insensitive, `*` not crossing `/`.
fn glob(pattern: &str) -> Result<globset::Glob, String> {
    GlobBuilder::new(pattern.trim_start_matches("./"))
        .case_insensitive(true)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|error| format!("`{pattern}` is not a valid glob: {error}"))
}

/// Directory names no tool may write into, wherever they are: git's own files (hooks and
/// config run code) and the agent's project settings (a write there would grant itself rules).
const NEVER_WRITE_DIRS: &[&str] = &[".git", ".agent"];

/// Decides one access to `path` (absolute, resolved) under `rules`, before the mode. A bug
/// that panics while deciding makes the access ask, marked destructive (as for a command).
#[must_use]
pub fn decide(rules: &FileRules, access: Access, path: &Path) -> Decision {
    super::guarded("file access", || {
        decide_on(OsFamily::current(), rules, access, path)
    })
}

/// [`decide`] for the file system of `os`. On Windows the path is judged as Win32 opens
/// it (`windows_path`): a device name or a short name in any component asks, and the
/// secret list sees each component with its trailing dots and spaces dropped.
pub(super) fn decide_on(os: OsFamily, rules: &FileRules, access: Access, path: &Path) -> Decision {
    let win32 = match win32_path(os, rules, path) {
        Ok(win32) => win32,
        Err(decision) => return decision,
    };
    let path = win32.as_deref().unwrap_or(path);
    let inside = crate::workspace::resolved_inside(&rules.root, path);
    let shown = rules.display(path);
    if access == Access::Write
        && let Some(never) = never_write(rules, path, inside)
    {
        return Decision::new(Verdict::Deny, never, Source::Builtin, false);
    }
    if let Some(rule) = rules.denied_by(path) {
        return Decision::new(
            Verdict::Deny,
            format!("`{shown}` is denied by [permissions.files] deny"),
            rule.source,
            false,
        )
        .with_rule(&rule.pattern);
    }
    let relative = path.strip_prefix(&rules.root).unwrap_or(path);
    let secret = rules.secrets.matching(relative).map(str::to_owned);
    match access {
        Access::Read => {
            if !inside {
                return Decision::new(
                    Verdict::Ask,
                    format!("`{shown}` is outside the workspace"),
                    Source::Builtin,
                    secret.is_some(),
                );
            }
            if let Some(pattern) = secret {
                return Decision::new(
                    Verdict::Ask,
                    format!("`{shown}` may hold secrets (matches `{pattern}`)"),
                    Source::Builtin,
                    true,
                )
                .with_rule(&pattern);
            }
            Decision::new(
                Verdict::Allow,
                "reading inside the workspace".to_owned(),
                Source::Builtin,
                false,
            )
        }
        Access::Write => {
            let what = match &secret {
                Some(pattern) => format!("`{shown}` may hold secrets (matches `{pattern}`)"),
                None => format!("edits `{shown}`"),
            };
            let decision = match rules.edits {
                Edits::Deny => Decision::new(
                    Verdict::Deny,
                    "edits are denied by [permissions.files] edits = \"deny\"".to_owned(),
                    Source::User,
                    false,
                ),
                Edits::Allow if secret.is_none() => Decision::new(
                    Verdict::Allow,
                    "edits are allowed by [permissions.files] edits = \"allow\"".to_owned(),
                    Source::User,
                    false,
                ),
                Edits::Allow | Edits::Ask => {
                    Decision::new(Verdict::Ask, what, Source::Builtin, secret.is_some())
                }
            };
            match secret {
                Some(pattern) => decision.with_rule(&pattern),
                None => decision,
            }
        }
    }
}

/// On Windows, `path` as Win32 opens it: each component with its trailing dots and spaces
/// dropped (`Some`), or the ask for a device or short name in it (`Err`). `None` elsewhere.
fn win32_path(os: OsFamily, rules: &FileRules, path: &Path) -> Result<Option<PathBuf>, Decision> {
    if os != OsFamily::Windows {
        return Ok(None);
    }
    let mut win32 = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => {
                let name = name.to_string_lossy();
                if let Some(why) = windows_path::component_asks(&name) {
                    let shown = rules.display(path);
                    return Err(Decision::new(
                        Verdict::Ask,
                        format!("`{shown}` asks on Windows: {why}"),
                        Source::Builtin,
                        true,
                    ));
                }
                win32.push(name.trim_end_matches(['.', ' ']));
            }
            other => win32.push(other.as_os_str()),
        }
    }
    Ok(Some(win32))
}

/// Why `path` may never be written, if it may not.
fn never_write(rules: &FileRules, path: &Path, inside: bool) -> Option<String> {
    let shown = rules.display(path);
    if !inside {
        return Some(format!(
            "`{shown}` is outside the workspace: the file tools never write there"
        ));
    }
    if rules.never_write.iter().any(|never| never == path) {
        return Some(format!(
            "`{shown}` is the user settings file: the file tools never write it"
        ));
    }
    let relative = path.strip_prefix(&rules.root).unwrap_or(path);
    for component in relative.components() {
        if let Component::Normal(name) = component {
            let name = name.to_string_lossy();
            if let Some(dir) = NEVER_WRITE_DIRS
                .iter()
                .find(|dir| name.eq_ignore_ascii_case(dir))
            {
                return Some(format!(
                    "`{shown}` is inside `{dir}/`: the file tools never write there"
                ));
            }
        }
    }
    None
}

/// Applies the permission mode to a file decision: `ask` unchanged; `deny` turns ask into
/// deny; `allow-all` turns ask into allow unless the file holds secrets; `off` denies;
/// `auto` is `ask` (it approves no edit outside the workspace, no git surface, no secret).
#[must_use]
pub fn apply_mode(decision: Decision, mode: Mode) -> Decision {
    match (mode, decision.verdict) {
        (_, Verdict::Deny)
        | (Mode::Ask | Mode::Auto, _)
        | (Mode::Deny | Mode::AllowAll, Verdict::Allow) => decision,
        (Mode::Deny, Verdict::Ask) => Decision {
            verdict: Verdict::Deny,
            reason: format!("{} (mode `deny` never asks)", decision.reason),
            ..decision
        },
        (Mode::Off, _) => Decision {
            verdict: Verdict::Deny,
            reason: "the tools are off (mode `off`)".to_owned(),
            ..decision
        },
        (Mode::AllowAll, Verdict::Ask) if decision.destructive => Decision {
            reason: format!(
                "{} (mode `allow-all` still asks for files that may hold secrets)",
                decision.reason
            ),
            ..decision
        },
        (Mode::AllowAll, Verdict::Ask) => Decision {
            verdict: Verdict::Allow,
            reason: format!("allowed by mode `allow-all` ({})", decision.reason),
            ..decision
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/w";

    fn rules(edits: Edits) -> FileRules {
        FileRules::new(
            PathBuf::from(ROOT),
            vec![
                FileRule {
                    pattern: "secrets/**".into(),
                    source: Source::Project,
                },
                FileRule {
                    pattern: "*.sqlite".into(),
                    source: Source::User,
                },
                FileRule {
                    pattern: "/etc/shadow".into(),
                    source: Source::User,
                },
            ],
            &["*.tfstate".to_owned()],
            edits,
            vec![PathBuf::from("/w/conf/settings.toml")],
        )
        .unwrap()
    }

    use Access::{Read, Write};
    use Verdict::{Allow, Ask, Deny};

    /// (access, path, verdict before the mode, then under allow-all and deny).
    #[allow(clippy::type_complexity)]
    const TABLE: &[(Access, &str, Verdict, Verdict, Verdict)] = &[
        // Reads inside: free.
        (Read, "/w", Allow, Allow, Allow),
        (Read, "/w/src/lib.rs", Allow, Allow, Allow),
        (Read, "/w/.git/config", Allow, Allow, Allow),
        (Read, "/w/.agent/settings.toml", Allow, Allow, Allow),
        // Reads outside: ask (allow-all allows, as for an unsure command).
        (Read, "/", Ask, Allow, Deny),
        (Read, "/etc/hosts", Ask, Allow, Deny),
        (Read, "/wx/file", Ask, Allow, Deny),
        // Secrets: ask, and allow-all still asks.
        (Read, "/w/.env", Ask, Ask, Deny),
        (Read, "/w/app/.ENV.local", Ask, Ask, Deny),
        (Read, "/w/certs/server.pem", Ask, Ask, Deny),
        (Read, "/w/id_rsa.pub", Ask, Ask, Deny),
        (Read, "/w/credentials/aws", Ask, Ask, Deny),
        (Read, "/w/infra/prod.tfstate", Ask, Ask, Deny),
        (Read, "/home/me/.ssh/id_ed25519", Ask, Ask, Deny),
        // Deny globs: every mode.
        (Read, "/w/secrets", Deny, Deny, Deny),
        (Read, "/w/secrets/a/b.txt", Deny, Deny, Deny),
        (Read, "/w/data/app.SQLITE", Deny, Deny, Deny),
        (Read, "/etc/shadow", Deny, Deny, Deny),
        (Write, "/w/db.sqlite", Deny, Deny, Deny),
        // Writes inside ask; allow-all allows, deny denies.
        (Write, "/w/src/lib.rs", Ask, Allow, Deny),
        (Write, "/w/new/dir/file.rs", Ask, Allow, Deny),
        (Write, "/w/.env", Ask, Ask, Deny),
        // Never: outside, .git, .agent, the user settings file.
        (Write, "/etc/passwd", Deny, Deny, Deny),
        (Write, "/wx/file", Deny, Deny, Deny),
        (Write, "/", Deny, Deny, Deny),
        (Write, "/w/.git/config", Deny, Deny, Deny),
        (Write, "/w/.git/hooks/pre-commit", Deny, Deny, Deny),
        (Write, "/w/.GIT/HEAD", Deny, Deny, Deny),
        (Write, "/w/vendor/lib/.git/config", Deny, Deny, Deny),
        (Write, "/w/.agent/settings.toml", Deny, Deny, Deny),
        (Write, "/w/conf/settings.toml", Deny, Deny, Deny),
        // A name that only starts like a protected one is fine.
        (Write, "/w/.github/workflows/ci.yml", Ask, Allow, Deny),
        (Write, "/w/.gitignore", Ask, Allow, Deny),
        (Write, "/w/.agents", Ask, Allow, Deny),
    ];

    #[test]
    fn the_table_holds_in_every_mode() {
        let rules = rules(Edits::Ask);
        let mut failures = Vec::new();
        for &(access, path, plain, allow_all, deny) in TABLE {
            let decision = decide(&rules, access, Path::new(path));
            for (mode, want) in [
                (Mode::Ask, plain),
                (Mode::Auto, plain),
                (Mode::AllowAll, allow_all),
                (Mode::Deny, deny),
                (Mode::Off, Deny),
            ] {
                let got = apply_mode(decision.clone(), mode);
                if got.verdict != want {
                    failures.push(format!(
                        "{access:?} {path} in {mode:?}: want {want:?}, got {:?} ({})",
                        got.verdict, got.reason
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn the_edits_setting_decides_writes_inside_only() {
        let allow = rules(Edits::Allow);
        let deny = rules(Edits::Deny);
        for (path, with_allow, with_deny) in [
            ("/w/src/lib.rs", Allow, Deny),
            ("/w/.env", Ask, Deny),
            ("/w/.git/config", Deny, Deny),
            ("/etc/passwd", Deny, Deny),
            ("/w/secrets/x", Deny, Deny),
        ] {
            let got = decide(&allow, Write, Path::new(path)).verdict;
            assert_eq!(got, with_allow, "edits=allow {path}");
            let got = decide(&deny, Write, Path::new(path)).verdict;
            assert_eq!(got, with_deny, "edits=deny {path}");
        }
        // Reads do not care about `edits`.
        assert_eq!(decide(&deny, Read, Path::new("/w/a")).verdict, Allow);
    }

    #[test]
    fn reasons_name_the_path_and_the_rule() {
        let rules = rules(Edits::Ask);
        let secret = decide(&rules, Read, Path::new("/w/.env"));
        assert_eq!(secret.reason, "`.env` may hold secrets (matches `.env*`)");
        assert_eq!(secret.rule.as_deref(), Some(".env*"));
        let denied = decide(&rules, Read, Path::new("/w/secrets/k"));
        assert_eq!(denied.rule.as_deref(), Some("secrets/**"));
        assert_eq!(denied.source, Source::Project);
        let git = decide(&rules, Write, Path::new("/w/.git/config"));
        assert_eq!(
            git.reason,
            "`.git/config` is inside `.git/`: the file tools never write there"
        );
        let outside = decide(&rules, Read, Path::new("/etc/hosts"));
        assert_eq!(outside.reason, "`/etc/hosts` is outside the workspace");
    }

    #[test]
    fn listing_skips_secrets_and_denied_paths() {
        let rules = rules(Edits::Ask);
        assert!(rules.skipped(Path::new("/w/.env")));
        assert!(rules.skipped(Path::new("/w/secrets/x")));
        assert!(rules.skipped(Path::new("/w/a/b.sqlite")));
        assert!(!rules.skipped(Path::new("/w/src/lib.rs")));
    }

    #[test]
    fn a_bad_glob_is_an_error_naming_it() {
        let error = FileRules::new(
            PathBuf::from(ROOT),
            vec![FileRule {
                pattern: "a[".into(),
                source: Source::User,
            }],
            &[],
            Edits::Ask,
            Vec::new(),
        )
        .unwrap_err();
        assert!(error.contains("`a[`"), "{error}");
    }
}
