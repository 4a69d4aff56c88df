//! Which model answers a run and saying so: the provider the settings name, the model an
//! unnamed OpenAI-compatible server serves, the first line naming them (or the demo's), and
//! the notice of a retried request.

use std::io::{IsTerminal as _, Write as _};

use crate::cli::GlobalArgs;
use crate::error::{Error, Result};
use crate::model::{AnyModel, ProviderConfig, ProviderKind, Tunable as _};
use crate::settings::{Origin, Settings};

/// The model the settings name, saying each retry on stderr unless `quiet`.
pub(in crate::commands) fn model_for(settings: &Settings, quiet: bool) -> Result<AnyModel> {
    let mut config = provider_config(settings);
    if let Some(name) = served_model(settings, &config)? {
        config.model = name;
    }
    let model = AnyModel::new(&config, cfg!(windows))?;
    Ok(if quiet {
        model
    } else {
        model.with_retry_notice(retry_notice)
    })
}

/// With no model named anywhere, an OpenAI-compatible server that is not OpenAI's own is
/// asked which it serves (`GET /models`): its only model is used rather than OpenAI's default
/// name; several are listed in a usage error. `None`: keep the name (the server did not say).
fn served_model(settings: &Settings, config: &ProviderConfig) -> Result<Option<String>> {
    let unnamed = matches!(settings.model.origin, Origin::Default(_));
    let own = config.base_url.trim_end_matches('/') == config.provider.default_base_url();
    if !unnamed || own || config.provider != ProviderKind::OpenAi {
        return Ok(None);
    }
    // Its own client and runtime, both gone before the run's begin.
    let probe = crate::model::openai::OpenAi::new(config)?;
    let served = crate::commands::runtime()?.block_on(probe.served_models());
    match served.as_deref() {
        Some([only]) => Ok(Some(only.clone())),
        Some(several @ [_, _, ..]) => Err(Error::Usage(format!(
            "the model server at {} serves {} models ({}) and none is named: choose one with \
             --model (or `model` in [model])",
            config.base_url,
            several.len(),
            several
                .iter()
                .map(|name| format!("`{}`", crate::ui::sanitize::escape_prose(name)))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        _ => Ok(None),
    }
}

/// The provider the settings name.
pub(in crate::commands) fn provider_config(settings: &Settings) -> ProviderConfig {
    ProviderConfig {
        provider: settings.provider.value,
        model: settings.model.value.clone(),
        base_url: settings.base_url.value.clone(),
        api_key: settings.api_key.clone(),
        api_key_env: settings.api_key_env.value.clone(),
        max_output_tokens: settings.max_output_tokens.as_ref().map(|n| n.value),
        idle_timeout: settings.idle_timeout.as_ref().map(|idle| idle.value),
        api_key_header: settings.api_key_header.as_ref().map(|h| h.value.clone()),
        headers: settings.headers.iter().map(|h| h.value.clone()).collect(),
    }
}

/// Says why a model request is taking longer: it failed and is being tried again.
pub(in crate::commands) fn retry_notice(message: &str) {
    // The message may quote the server's reply: sanitised like everything else.
    let message = crate::ui::sanitize::escape_prose(message);
    // At a terminal the working line may be drawn where the cursor waits: erased first.
    let clear = if std::io::stderr().is_terminal() {
        "\r\x1b[K"
    } else {
        ""
    };
    let _ = writeln!(std::io::stderr(), "{clear}agent: {message}");
}

/// `agent: openai gpt-4.1-mini · OPENAI_API_KEY is set`, `agent: openai-compatible ·
/// localhost:8080 · qwen2.5 · …` for a server that is not the provider's own, `agent: demo ·
/// no provider configured …`: the provider, server and model this run uses, and why that
/// provider.
fn provider_line(settings: &Settings) -> String {
    use crate::ui::summary::{home_path, one_line};
    let provider = settings.provider.value;
    let model = one_line(&settings.model.value);
    let what = match (provider, other_server(provider, &settings.base_url.value)) {
        (ProviderKind::Demo, _) => "demo".to_owned(),
        (ProviderKind::OpenAi, Some(host)) => format!("openai-compatible · {host} · {model}"),
        (_, Some(host)) => format!("{} · {host} · {model}", provider.name()),
        (_, None) => format!("{} {model}", provider.name()),
    };
    let why = match &settings.provider.origin {
        Origin::Default(why) => (*why).to_owned(),
        Origin::Flag(flag) => format!("{flag} {}", provider.name()),
        Origin::Env(var) => format!("{var} is set"),
        Origin::User(path, line)
        | Origin::Project(path, line)
        | Origin::UserProject(path, line, _) => {
            format!("{}:{line}", home_path(path))
        }
        Origin::Profile(name, path, line) => {
            format!("profile {name} in {}:{line}", home_path(path))
        }
    };
    let demo = match (&settings.provider.origin, provider) {
        (Origin::Default(_), ProviderKind::Demo) => {
            " (offline demo model: set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)"
        }
        (_, ProviderKind::Demo) => " (offline demo model)",
        _ => "",
    };
    format!("agent: {what} · {why}{demo}")
}

/// The host (and port) of `base_url` when it is not `provider`'s own server, made safe to
/// print: no scheme, path or credentials (`user:key@` is dropped).
fn other_server(provider: ProviderKind, base_url: &str) -> Option<String> {
    let url = base_url.trim().trim_end_matches('/');
    if url.is_empty() || url == provider.default_base_url() {
        return None;
    }
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    (!host.is_empty()).then(|| crate::ui::summary::one_line(host))
}

/// On a terminal, the first line: which model answers and why; elsewhere only the demo says
/// so (scripts read stderr). Nothing with -q.
pub(in crate::commands) fn model_notice(settings: &Settings, global: &GlobalArgs) {
    if global.quiet {
        return;
    }
    let color = crate::commands::use_color(global);
    if std::io::stderr().is_terminal() {
        dim_line(&provider_line(settings), color);
    } else if settings.provider.value == ProviderKind::Demo {
        demo_notice(settings, color);
    }
}

/// Says the demo model answers, dimmed when `color` (the one colour decision: `--color`,
/// `NO_COLOR`, a terminal).
pub(super) fn demo_notice(settings: &Settings, color: bool) {
    let line = match &settings.provider.origin {
        Origin::Default(_) => {
            "agent: offline demo model (set OPENAI_API_KEY or ANTHROPIC_API_KEY for a real one)"
        }
        _ => "agent: offline demo model",
    };
    dim_line(line, color);
}

/// One dim line on stderr (plain without colour).
fn dim_line(line: &str, color: bool) {
    let mut stderr = std::io::stderr().lock();
    if color {
        let _ = writeln!(stderr, "\x1b[2m{line}\x1b[0m");
    } else {
        let _ = writeln!(stderr, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_of_its_own_is_named_by_its_host_never_its_credentials() {
        let own = ProviderKind::OpenAi.default_base_url();
        assert_eq!(other_server(ProviderKind::OpenAi, own), None);
        assert_eq!(other_server(ProviderKind::OpenAi, &format!("{own}/")), None);
        let anthropic = ProviderKind::Anthropic.default_base_url();
        assert_eq!(other_server(ProviderKind::Anthropic, anthropic), None);
        for (url, host) in [
            ("http://localhost:8080/v1", "localhost:8080"),
            ("http://127.0.0.1:11434", "127.0.0.1:11434"),
            (
                "https://user:sk-secret@proxy.example:8443/v1?x=1",
                "proxy.example:8443",
            ),
            ("https://gw.example/openai#frag", "gw.example"),
            ("http://[::1]:9000/v1", "[::1]:9000"),
        ] {
            for provider in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
                let shown = other_server(provider, url);
                assert_eq!(shown.as_deref(), Some(host), "{url}");
            }
        }
        assert_eq!(
            other_server(
                ProviderKind::Anthropic,
                ProviderKind::OpenAi.default_base_url()
            ),
            Some("api.openai.com".to_owned())
        );
    }
}
