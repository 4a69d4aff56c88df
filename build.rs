//! Records the git commit (when built from a clone) for `agent --version`.

fn main() {
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=9", "HEAD"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    if let Some(commit) = commit {
        let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
        println!("cargo:rustc-env=AGENT_VERSION_LONG={version} ({commit})");
    }
}
