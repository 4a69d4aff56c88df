//! What the command line asks for ([`Overrides`], already out of clap's types), applied as
//! the last layer.

use std::path::PathBuf;
use std::time::Duration;

use super::draft::{Draft, listed, rule, set_header};
use super::merged::RuleKind;
use super::origin::{Origin, sourced};
use crate::model::ProviderKind;
use crate::policy::{Mode, Source};
use crate::sandbox::SandboxMode;

/// What the command line asks for, already out of clap's types.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--config FILE`: replaces the user settings file.
    pub config_file: Option<PathBuf>,
    /// `--profile NAME`.
    pub profile: Option<String>,
    /// `--provider`.
    pub provider: Option<ProviderKind>,
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--max-output-tokens`.
    pub max_output_tokens: Option<u32>,
    /// `--header 'NAME: VALUE'` (repeatable), already split.
    pub headers: Vec<(String, String)>,
    /// `--mode`.
    pub mode: Option<Mode>,
    /// `--allow` prefixes.
    pub allow: Vec<String>,
    /// `--deny` prefixes.
    pub deny: Vec<String>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--max-output-chars`.
    pub max_output_chars: Option<usize>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--sandbox MODE`.
    pub sandbox_mode: Option<SandboxMode>,
    /// `--network`: commands may use the network inside the sandbox.
    pub network: Option<bool>,
    /// `--sandbox-required`.
    pub sandbox_required: Option<bool>,
    /// `--fail-on-deny`.
    pub fail_on_deny: Option<bool>,
    /// `--allow-edits`: the file tools' edits inside the workspace need no yes.
    pub edits: Option<crate::policy::files::Edits>,
}

pub(super) fn apply_flags(draft: &mut Draft, overrides: &Overrides) {
    let s = &mut draft.settings;
    if let Some(provider) = overrides.provider {
        draft.provider = Some(sourced(provider, Origin::Flag("--provider")));
    }
    if let Some(model) = &overrides.model {
        draft.model = Some(sourced(model.clone(), Origin::Flag("--model")));
    }
    if let Some(url) = &overrides.base_url {
        draft.base_url = Some(sourced(url.clone(), Origin::Flag("--base-url")));
    }
    if let Some(n) = overrides.max_output_tokens {
        s.max_output_tokens = Some(sourced(n, Origin::Flag("--max-output-tokens")));
    }
    for header in &overrides.headers {
        set_header(&mut s.headers, header, &Origin::Flag("--header"));
    }
    if let Some(mode) = overrides.mode {
        s.mode = sourced(mode, Origin::Flag("--mode"));
    }
    s.allow
        .extend(overrides.allow.iter().map(|r| rule(r, Source::Flag)));
    s.deny
        .extend(overrides.deny.iter().map(|r| rule(r, Source::Flag)));
    s.rules.extend(listed(
        RuleKind::Allow,
        overrides.allow.iter(),
        &Origin::Flag("--allow"),
    ));
    s.rules.extend(listed(
        RuleKind::Deny,
        overrides.deny.iter(),
        &Origin::Flag("--deny"),
    ));
    if let Some(on) = overrides.fail_on_deny {
        s.fail_on_deny = sourced(on, Origin::Flag("--fail-on-deny"));
    }
    if let Some(edits) = overrides.edits {
        s.files.edits = sourced(edits, Origin::Flag("--allow-edits"));
    }
    if let Some(timeout) = overrides.timeout {
        s.timeout = sourced(timeout, Origin::Flag("--timeout"));
    }
    if let Some(n) = overrides.max_output_chars {
        s.max_output_chars = sourced(n, Origin::Flag("--max-output-chars"));
    }
    if let Some(n) = overrides.max_turns {
        s.max_turns = sourced(n, Origin::Flag("--max-turns"));
    }
    if let Some(mode) = overrides.sandbox_mode {
        s.sandbox_mode = sourced(mode, Origin::Flag("--sandbox"));
    }
    if let Some(network) = overrides.network {
        s.network = sourced(network, Origin::Flag("--network"));
        if network {
            s.net.mode = sourced(crate::net::NetworkMode::Full, Origin::Flag("--network"));
        }
    }
    if let Some(required) = overrides.sandbox_required {
        s.sandbox_required = sourced(required, Origin::Flag("--sandbox-required"));
    }
}
