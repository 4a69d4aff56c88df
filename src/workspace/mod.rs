//! One notion of "inside the workspace" and one list of files that hold secrets, shared by the
//! shell policy (which judges the words of a command, lexically, without touching the disk) and
//! the file tools (which resolve a path, symlinks followed, before they decide).
//!
//! Lexical rules ([`lexically_inside`]): a path is joined to the working directory, `.` is
//! dropped and `..` removes the component before it; it is inside when the result starts with
//! the workspace root. `~`, `~user` and anything that climbs above the root are outside. The
//! policy never follows a symlink: a link inside the workspace that points out is the sandbox's
//! business (commands that run without a person's yes read only the workspace and the system).
//!
//! Resolved rules ([`resolve`]): the longest existing ancestor is canonicalised (symlinks
//! followed) and the rest appended lexically, so a file that does not exist yet is judged by
//! where its parent really is.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

mod name_ends;

use name_ends::NameEnds;

const SECRET_FILES: &str = include_str!("../../assets/secret-files.txt");

/// `base` joined with `path`, with `.` and `..` applied lexically. A `..` at the root stays at
/// the root (as the kernel does). Never touches the disk.
#[must_use]
pub fn normalize(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` keeps a root or prefix: `/..` is `/`.
                if !matches!(
                    out.components().next_back(),
                    None | Some(Component::RootDir | Component::Prefix(_))
                ) {
                    out.pop();
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether `path` (as a command or tool wrote it: relative to `cwd`, or absolute) names a
/// place inside `root`, lexically. `root` and `cwd` should be absolute and normalised; a
/// `cwd` outside `root` makes every relative path outside too. A path starting with `~` is
/// outside (the shell expands it to a home directory).
#[must_use]
pub fn lexically_inside(root: &Path, cwd: &Path, path: &str) -> bool {
    if path.starts_with('~') {
        return false;
    }
    normalize(cwd, Path::new(path)).starts_with(root)
}

/// `path` (relative to `base`, or absolute) with symlinks followed: the longest existing
/// ancestor canonicalised, the rest appended lexically. Errors only when not even `base`'s
/// root can be resolved.
///
/// # Errors
/// An I/O error from canonicalising the existing ancestor.
pub fn resolve(base: &Path, path: &Path) -> io::Result<PathBuf> {
    let lexical = normalize(base, path);
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(real) => {
                let mut real = real;
                for name in rest.iter().rev() {
                    real.push(name);
                }
                return Ok(real);
            }
            Err(error) => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(error);
                };
                rest.push(name.to_owned());
                existing = parent;
            }
        }
    }
}

/// Whether `resolved` (from [`resolve`]) is `root` (canonical) or below it.
#[must_use]
pub fn resolved_inside(root: &Path, resolved: &Path) -> bool {
    resolved.starts_with(root)
}

/// Whether `text` is a relative path of plain components: not from `/` or `~`, no `\\` or
/// `:` (Windows separators and prefixes), no component empty, `.` or `..`: it is its own
/// lexical normal form below any base. Read in one pass over its bytes (every character it
/// looks for is ASCII).
#[must_use]
pub fn is_plain_relative(text: &str) -> bool {
    // A component that is empty, `.` or `..`: all dots, at most two.
    let odd = |length: usize, dots: usize| dots == length && length <= 2;
    if text.starts_with(['/', '~']) {
        return false;
    }
    let (mut length, mut dots) = (0, 0);
    for byte in text.bytes() {
        match byte {
            b'\\' | b':' => return false,
            b'/' => {
                if odd(length, dots) {
                    return false;
                }
                (length, dots) = (0, 0);
            }
            b'.' => (length, dots) = (length + 1, dots + 1),
            _ => length += 1,
        }
    }
    !odd(length, dots)
}

/// The files that hold secrets: the defaults in `assets/secret-files.txt` plus what the user
/// adds. Matched without regard to case. A pattern without `/` is tried against every
/// component of the path, one with `/` against the path relative to the workspace.
#[derive(Debug, Clone)]
pub struct SecretFiles {
    names: GlobSet,
    /// Which components may match `names` at all (most are never tried against it).
    name_ends: NameEnds,
    name_patterns: Vec<String>,
    paths: GlobSet,
    path_patterns: Vec<String>,
}

impl SecretFiles {
    /// The built-in list.
    ///
    /// # Panics
    /// Never: the built-in list is checked by a unit test.
    #[must_use]
    pub fn defaults() -> &'static SecretFiles {
        static DEFAULTS: OnceLock<SecretFiles> = OnceLock::new();
        DEFAULTS.get_or_init(|| {
            #[allow(clippy::expect_used)]
            SecretFiles::new(default_patterns()).expect("assets/secret-files.txt is valid")
        })
    }

    /// The built-in list plus `extra` (e.g. `[permissions.files] ask_read`).
    ///
    /// # Errors
    /// A pattern that is not a valid glob, named in the message.
    pub fn with_extra<'a>(extra: impl IntoIterator<Item = &'a str>) -> Result<SecretFiles, String> {
        let mut patterns: Vec<&str> = default_patterns().collect();
        patterns.extend(extra);
        SecretFiles::new(patterns)
    }

    fn new<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<SecretFiles, String> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let mut name_patterns = Vec::new();
        let mut path_patterns = Vec::new();
        for pattern in patterns {
            let glob = GlobBuilder::new(pattern.trim_start_matches('/'))
                .case_insensitive(true)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|error| format!("`{pattern}` is not a valid glob: {error}"))?;
            if pattern.contains('/') {
                paths.add(glob);
                path_patterns.push(pattern.to_owned());
            } else {
                names.add(glob);
                name_patterns.push(pattern.to_owned());
            }
        }
        let build = |builder: GlobSetBuilder| {
            builder
                .build()
                .map_err(|error| format!("secret-file patterns: {error}"))
        };
        Ok(SecretFiles {
            names: build(names)?,
            name_ends: NameEnds::new(name_patterns.iter().map(String::as_str)),
            name_patterns,
            paths: build(paths)?,
            path_patterns,
        })
    }

    /// The pattern that makes `relative` (a path relative to the workspace; an absolute path
    /// is judged by its components) a secret file, if any.
    #[must_use]
    pub fn matching(&self, relative: &Path) -> Option<&str> {
        for component in relative.components() {
            // `is_match` first: it allocates nothing, and almost no component matches.
            if let Component::Normal(name) = component
                && self.name_ends.may_match(name.as_encoded_bytes())
                && self.names.is_match(name)
                && let Some(&index) = self.names.matches(name).first()
            {
                return Some(&self.name_patterns[index]);
            }
        }
        // An empty set (the built-in list has no pattern with `/`) matches nothing; asking it
        // would still prepare the path for matching.
        if self.paths.is_empty() {
            return None;
        }
        let relative = relative.strip_prefix("/").unwrap_or(relative);
        if !self.paths.is_match(relative) {
            return None;
        }
        self.paths
            .matches(relative)
            .first()
            .map(|&index| self.path_patterns[index].as_str())
    }

    /// The patterns matched against one component of a path (those without `/`), as written.
    #[must_use]
    pub fn name_patterns(&self) -> &[String] {
        &self.name_patterns
    }

    /// The patterns matched against the whole path relative to the workspace (with `/`).
    #[must_use]
    pub fn path_patterns(&self) -> &[String] {
        &self.path_patterns
    }

    /// Whether `relative` is a secret file (see [`SecretFiles::matching`]).
    #[must_use]
    pub fn is_secret(&self, relative: &Path) -> bool {
        self.matching(relative).is_some()
    }
}

/// Two lists are the same when they hold the same patterns (the compiled sets follow).
impl PartialEq for SecretFiles {
    fn eq(&self, other: &Self) -> bool {
        self.name_patterns == other.name_patterns && self.path_patterns == other.path_patterns
    }
}

impl Eq for SecretFiles {}

fn default_patterns() -> impl Iterator<Item = &'static str> {
    SECRET_FILES
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
}

#[cfg(test)]
mod tests;
