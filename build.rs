//! Records the git commit (when built from a clone) for `agent --version`.
//!
//! The build script runs again only when the commit can have changed: when
//! HEAD, the branch it names or the packed refs change. Their paths come from
//! git, because in a linked worktree `.git` is a file, not a directory, and a
//! path that does not exist would make Cargo run the script (and rebuild the
//! crate) on every build.

use std::path::Path;

fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}

/// Tells Cargo to run the script again when `path` changes, or when the
/// nearest directory above it that exists does (a loose ref not yet written).
fn watch(path: &str) {
    let mut path = Path::new(path);
    while !path.exists() {
        match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => path = parent,
            _ => return,
        }
    }
    println!("cargo:rerun-if-changed={}", path.display());
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(commit) = git(&["rev-parse", "--short=9", "HEAD"]) else {
        return;
    };
    for file in ["HEAD", "packed-refs"] {
        if let Some(path) = git(&["rev-parse", "--git-path", file])
            && Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(path) = git(&["rev-parse", "--git-path", &branch])
    {
        watch(&path);
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=AGENT_VERSION_LONG={version} ({commit})");
}
