//! `agent config path|show|init`. `init` writes the commented settings file: at a terminal
//! with the provider, model, base URL and key variable the person gives (and says whether that
//! variable is set), elsewhere the example as it is.

use std::process::ExitCode;

use crate::cli::{ConfigCommand, GlobalArgs};
use crate::error::{Error, Result, Status};
use crate::model::ProviderKind;
use crate::sandbox::State;
use crate::settings;

/// Runs `agent config …`.
pub(crate) fn run(global: &GlobalArgs, command: &ConfigCommand) -> Result<ExitCode> {
    match command {
        ConfigCommand::Path => {
            let path = match &global.config {
                Some(path) => path.clone(),
                None => settings::user_settings_path(&super::env_var)?,
            };
            super::print_stdout(&format!("{}\n", path.display()))?;
        }
        ConfigCommand::Init => {
            let path = match &global.config {
                Some(path) => path.clone(),
                None => settings::user_settings_path(&super::env_var)?,
            };
            if path.exists() {
                return Err(Error::Runtime(format!(
                    "`{}` already exists and was left unchanged: edit it, or move it away first",
                    path.display()
                )));
            }
            let text = if crate::approve::terminal_reachable(false).is_ok() {
                ask_model_settings(super::use_color(global))?
            } else {
                EXAMPLE.to_owned()
            };
            write_new(&path, &text).map_err(|error| {
                Error::Runtime(format!("cannot write `{}`: {error}", path.display()))
            })?;
            super::print_stdout(&format!("wrote {}\n", path.display()))?;
        }
        ConfigCommand::Show => {
            let workspace = super::workspace(global.cwd.as_deref())?;
            let settings = super::load_settings(global, &super::overrides(global), &workspace)?;
            let sandbox = super::sandbox(&settings, &workspace);
            let active = match &sandbox.limitation {
                Some(limitation) => format!("{} (but {limitation})", sandbox_how(&sandbox)),
                None => sandbox_how(&sandbox),
            };
            let inactive = match &sandbox.state {
                State::Active(_) => None,
                State::Unavailable(why) => Some(why.as_str()),
                State::Off => Some("mode off"),
            };
            let refused = inactive.zip(sandbox.refused.as_deref());
            let refused = refused.map(|(why, refused)| format!("{why}; {refused}"));
            let state = match (refused.as_deref(), inactive) {
                (Some(refused), _) => Err(refused),
                (None, Some(why)) => Err(why),
                (None, None) => Ok(active.as_str()),
            };
            let config = super::run::agent_config(
                &settings,
                &workspace,
                &crate::cli::RunArgs::default(),
                sandbox.clone(),
            )?;
            let prompt = crate::agent::fixed_prompt_tokens(&config);
            super::print_stdout(&settings::render(&settings, state, prompt, global.json))?;
        }
    }
    Ok(Status::Success.into())
}

/// The commented example settings file.
pub(crate) const EXAMPLE: &str = include_str!("../../assets/settings.example.toml");

/// The model's settings a person gives in a form.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ModelAnswers {
    provider: ProviderKind,
    model: String,
    /// Empty: the provider's own.
    base_url: String,
    /// Empty: no key.
    api_key_env: String,
}

/// Asks for the model's settings (saying whether the key's variable is set here) and
/// returns the example file with them filled in.
fn ask_model_settings(color: bool) -> Result<String> {
    use crate::ui::pick;
    use std::io::Write as _;
    let failed = super::resume::picker_error;
    let labels: Vec<String> = ProviderKind::ALL
        .iter()
        .map(|kind| match kind {
            ProviderKind::OpenAi => "openai     OpenAI, or any OpenAI-compatible server".to_owned(),
            ProviderKind::Anthropic => "anthropic  Anthropic Messages".to_owned(),
            ProviderKind::Ollama => "ollama     a local Ollama server".to_owned(),
            ProviderKind::Demo => {
                "demo       the offline demo model (no key, no network)".to_owned()
            }
        })
        .collect();
    let provider = ProviderKind::ALL[pick::one("Provider:", &labels, color).map_err(failed)?];
    if provider == ProviderKind::Demo {
        return filled(&ModelAnswers {
            provider,
            model: String::new(),
            base_url: String::new(),
            api_key_env: String::new(),
        });
    }
    let model =
        pick::text("Model:", provider.default_model(), "", not_empty, color).map_err(failed)?;
    let base_url = pick::text(
        "Base URL:",
        "",
        &format!("Enter for {}", provider.default_base_url()),
        base_url_problem,
        color,
    )
    .map_err(failed)?;
    let api_key_env = pick::text(
        "Environment variable holding the API key:",
        provider.default_key_env(),
        "the key itself never goes in the file; `-` for a server without a key",
        key_env_problem,
        color,
    )
    .map_err(failed)?;
    let api_key_env = if api_key_env == "-" {
        String::new()
    } else {
        api_key_env
    };
    if !api_key_env.is_empty() {
        let set = std::env::var_os(&api_key_env).is_some_and(|value| !value.is_empty());
        let said = if set {
            format!("{api_key_env} is set")
        } else {
            format!(
                "note: {api_key_env} is not set here: export it (e.g. in your shell profile) before `agent run`"
            )
        };
        let _ = writeln!(std::io::stderr(), "agent: {said}");
    }
    filled(&ModelAnswers {
        provider,
        model,
        base_url,
        api_key_env,
    })
}

fn not_empty(answer: &str) -> Option<String> {
    answer
        .is_empty()
        .then(|| "a model name, e.g. the one shown".to_owned())
}

fn base_url_problem(answer: &str) -> Option<String> {
    (!answer.is_empty() && !answer.starts_with("http://") && !answer.starts_with("https://"))
        .then(|| "a URL starting with http:// or https:// (or nothing for the default)".to_owned())
}

fn key_env_problem(answer: &str) -> Option<String> {
    let valid = answer == "-"
        || (answer.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && answer
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'));
    (!valid).then(|| "a variable name (letters, digits, `_`), or `-` for none".to_owned())
}

/// The example file with the `[model]` keys set from `answers`: each commented-out key line
/// of the example becomes the chosen value; left-out answers stay commented (the default).
fn filled(answers: &ModelAnswers) -> Result<String> {
    let quoted = |value: &str| toml_edit::Value::from(value).to_string();
    let mut keys = vec![("provider", answers.provider.name().to_owned())];
    if !answers.model.is_empty() {
        keys.push(("model", answers.model.clone()));
    }
    if !answers.base_url.is_empty() {
        keys.push(("base_url", answers.base_url.clone()));
    }
    // An explicit empty variable: no key is sent (a local server).
    if answers.provider != ProviderKind::Demo {
        keys.push(("api_key_env", answers.api_key_env.clone()));
    }
    let mut text = String::with_capacity(EXAMPLE.len());
    let mut missing: Vec<&str> = keys.iter().map(|(key, _)| *key).collect();
    for line in EXAMPLE.split_inclusive('\n') {
        let set = keys.iter().find(|(key, _)| {
            line.strip_prefix("# ")
                .and_then(|rest| rest.strip_prefix(key))
                .is_some_and(|rest| rest.starts_with(" = "))
                && missing.contains(key)
        });
        match set {
            Some((key, value)) => {
                text.push_str(&format!("{key} = {}\n", quoted(value)));
                missing.retain(|k| k != key);
            }
            None => text.push_str(line),
        }
    }
    if !missing.is_empty() {
        return Err(Error::Runtime(format!(
            "the example settings lack the line for {}: this is a bug in agent",
            missing.join(", ")
        )));
    }
    Ok(text)
}

/// Creates `path` with `text`, failing if it exists (no race with another writer).
fn write_new(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(text.as_bytes())
}

/// What enforces an active sandbox (empty otherwise).
fn sandbox_how(sandbox: &crate::sandbox::Sandbox) -> String {
    match &sandbox.state {
        State::Active(how) => how.clone(),
        State::Unavailable(_) | State::Off => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn answers(provider: ProviderKind, model: &str, base_url: &str, key: &str) -> ModelAnswers {
        ModelAnswers {
            provider,
            model: model.into(),
            base_url: base_url.into(),
            api_key_env: key.into(),
        }
    }

    #[test]
    fn answers_replace_the_commented_keys_and_keep_every_comment() {
        let text = filled(&answers(
            ProviderKind::OpenAi,
            "gpt-5 \"mini\"",
            "http://127.0.0.1:8000/v1",
            "MY_KEY",
        ))
        .unwrap();
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(parsed["model"]["provider"].as_str(), Some("openai"));
        assert_eq!(parsed["model"]["model"].as_str(), Some("gpt-5 \"mini\""));
        assert_eq!(
            parsed["model"]["base_url"].as_str(),
            Some("http://127.0.0.1:8000/v1")
        );
        assert_eq!(parsed["model"]["api_key_env"].as_str(), Some("MY_KEY"));
        let comments = |t: &str| t.lines().filter(|l| l.starts_with('#')).count();
        assert_eq!(comments(&text), comments(EXAMPLE) - 4);
        assert_eq!(text.lines().count(), EXAMPLE.lines().count());
    }

    #[test]
    fn left_out_answers_stay_commented() {
        let text = filled(&answers(ProviderKind::Demo, "", "", "")).unwrap();
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(parsed["model"]["provider"].as_str(), Some("demo"));
        assert!(parsed["model"].get("model").is_none());
        assert!(text.contains("# base_url = "), "{text}");
        let local = filled(&answers(ProviderKind::Ollama, "llama3.2", "", "")).unwrap();
        let parsed: toml::Table = toml::from_str(&local).unwrap();
        assert_eq!(parsed["model"]["api_key_env"].as_str(), Some(""));
    }

    #[test]
    fn answers_are_checked() {
        assert_eq!(base_url_problem(""), None);
        assert_eq!(base_url_problem("https://x/v1"), None);
        assert!(base_url_problem("api.openai.com").is_some());
        assert_eq!(key_env_problem("OPENAI_API_KEY"), None);
        assert_eq!(key_env_problem("-"), None);
        for bad in ["", "1KEY", "MY-KEY", "$KEY", "A B"] {
            assert!(key_env_problem(bad).is_some(), "{bad}");
        }
        assert!(not_empty("").is_some());
    }
}
