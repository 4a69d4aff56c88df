//! Repository configuration that would run code under read-only git commands. A repository's
//! own `.git/config` can name programs that git runs on its own: `core.fsmonitor` under
//! `git status`/`git diff`, `protocol.ext.allow` for `ext::` URLs, and a bare repository
//! inside the workspace brings a whole configuration (`safe.bareRepository=explicit`). For a command that runs
//! without a person's yes (an allow rule, the read-only list, mode allow-all), the runner
//! forces safe values through git's environment configuration (`GIT_CONFIG_COUNT`), which
//! overrides every configuration file. `diff.external` and textconv drivers cannot be switched
//! off that way; the option tables keep allowed commands from writing `.git/config`, and the
//! sandbox keeps them from writing outside the workspace.

/// Settings forced on git for commands no person approved.
/// `safe.bareRepository=explicit`: a directory of plain files shaped like a bare repository
/// (a cloned project can carry one, with a `config` naming `diff.external` or `core.pager`) is
/// not taken for a repository when a command only changes into it (`git -C x.git log`).
const FORCED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
    ("safe.bareRepository", "explicit"),
];

/// The environment variables that force [`FORCED`], numbered after any `GIT_CONFIG_COUNT`
/// entries already in the agent's environment (the user's own stay in force).
#[must_use]
pub fn neutralising_env() -> Vec<(String, String)> {
    let first = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|count| count.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut env = vec![(
        "GIT_CONFIG_COUNT".to_owned(),
        (first + FORCED.len()).to_string(),
    )];
    for (offset, (key, value)) in FORCED.iter().enumerate() {
        let index = first + offset;
        env.push((format!("GIT_CONFIG_KEY_{index}"), (*key).to_owned()));
        env.push((format!("GIT_CONFIG_VALUE_{index}"), (*value).to_owned()));
    }
    env
}
