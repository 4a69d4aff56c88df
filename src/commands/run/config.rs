//! What a run's loop needs from the settings and the flags: the overrides `agent run`'s
//! flags make, the loop's configuration, the secrets kept out of every record, and the
//! notice of the AGENTS.md files read.

use std::io::Write as _;

use crate::agent;
use crate::cli::{GlobalArgs, RunArgs};
use crate::error::{Error, Result};
use crate::exec;
use crate::policy::OsFamily;
use crate::settings::{Overrides, Settings};

/// The key and the values of secret headers (`api-key`, `X-Auth-Token`, …): they never
/// reach a transcript or `--json`.
pub(super) fn secrets(settings: &Settings) -> Vec<&str> {
    settings
        .api_key
        .as_deref()
        .into_iter()
        .chain(
            settings
                .headers
                .iter()
                .filter(|h| crate::model::secret_header(&h.value.0))
                .map(|h| h.value.1.as_str()),
        )
        .collect()
}

/// Names the AGENTS.md files read (`-v`), and warns (unless -q) when they were cut or
/// could not be read.
pub(in crate::commands) fn instructions_notice(
    instructions: &agent::Instructions,
    global: &GlobalArgs,
) {
    let mut stderr = std::io::stderr().lock();
    if global.verbose {
        for path in &instructions.files {
            let _ = writeln!(stderr, "agent: instructions: {}", path.display());
        }
    }
    if global.quiet {
        return;
    }
    if instructions.cut_bytes > 0 {
        let _ = writeln!(
            stderr,
            "agent: warning: AGENTS.md is cut at {} KiB ({} bytes left out): shorten it, the \
             model sees only the start",
            agent::MAX_INSTRUCTION_BYTES / 1024,
            instructions.cut_bytes
        );
    }
    for problem in &instructions.unreadable {
        let _ = writeln!(
            stderr,
            "agent: warning: cannot read {problem}: it is left out"
        );
    }
}

/// The settings overrides `agent run` takes from its flags.
pub(in crate::commands) fn run_overrides(global: &GlobalArgs, args: &RunArgs) -> Overrides {
    Overrides {
        provider: args.provider,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        max_output_tokens: args.max_output_tokens,
        headers: args.headers.clone(),
        mode: args.mode,
        allow: args.allow.clone(),
        deny: args.deny.clone(),
        timeout: args.timeout,
        max_turns: args.max_turns,
        fail_on_deny: args.fail_on_deny.then_some(true),
        edits: args
            .allow_edits
            .then_some(crate::policy::files::Edits::Allow),
        ..crate::commands::with_sandbox_flags(crate::commands::overrides(global), &args.sandbox)
    }
}

/// What the loop needs, from the settings and the flags.
pub(in crate::commands) fn agent_config(
    settings: &Settings,
    workspace: &std::path::Path,
    args: &RunArgs,
    sandbox: crate::sandbox::Sandbox,
) -> Result<agent::Config> {
    let files = settings.file_rules(workspace).map_err(|error| {
        Error::Usage(format!("{error}: fix [permissions.files] in the settings"))
    })?;
    Ok(agent::Config {
        workspace: workspace.to_path_buf(),
        os: OsFamily::current(),
        shell: settings.shell.value.clone(),
        allow: settings.allow.clone(),
        deny: settings.deny.clone(),
        mode: settings.mode.value,
        read_only: settings.read_only.value,
        limits: settings.limits(),
        inspect_limits: settings.inspect_limits(),
        max_turns: settings.max_turns.value,
        env_remove: Some(settings.api_key_env.value.clone())
            .into_iter()
            .filter(|v| !v.is_empty())
            .collect(),
        secrets: exec::Secrets::new(secrets(settings)),
        sandbox,
        network: None,
        network_reach: Vec::new(),
        network_questions: None,
        budget: agent::Budget {
            max_tokens: args.max_tokens,
            max_time: args.max_time,
        },
        instructions: if args.no_project_instructions {
            agent::Instructions::default()
        } else {
            agent::Instructions::load(workspace)
        },
        files: std::sync::Arc::new(files),
        snapshots: crate::snapshot::Recorder::default(),
        run_allowed: agent::RunAllowed::default(),
        mcp: None,
        // Without a person to ask (`network::start_for_loop` adds one at a terminal).
        web_fetch: settings.net.offers_web_fetch().then(|| {
            std::sync::Arc::new(crate::net::fetch::Fetcher::new(settings.net.rules(), None))
        }),
    })
}
