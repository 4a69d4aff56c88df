//! `agent config show`: the merged settings, one key per line with its origin,
//! or as JSON. The API key itself is never shown, only whether it is set.

use serde_json::{Value, json};

use super::{Origin, RuleKind, Settings};

fn mode_name(mode: crate::policy::Mode) -> &'static str {
    mode.name()
}

/// Rows of (key, value as TOML/JSON, origin text).
#[allow(clippy::too_many_lines)] // one row per setting: a table, not logic
fn rows(settings: &Settings) -> Vec<(String, Value, String)> {
    let row =
        |key: &str, value: Value, origin: &Origin| (key.to_owned(), value, origin.to_string());
    let key_state = if settings.api_key.is_some() {
        "set"
    } else {
        "not set"
    };
    let mut rows = vec![
        row(
            "model.provider",
            json!(settings.provider.value.to_string()),
            &settings.provider.origin,
        ),
        row(
            "model.model",
            json!(settings.model.value),
            &settings.model.origin,
        ),
        row(
            "model.base_url",
            json!(settings.base_url.value),
            &settings.base_url.origin,
        ),
        row(
            "model.api_key_env",
            json!(settings.api_key_env.value),
            &settings.api_key_env.origin,
        ),
        (
            "model.api_key".to_owned(),
            json!(format!("<{key_state}>")),
            if settings.api_key_env.value.is_empty() {
                "none needed".to_owned()
            } else {
                format!("env {}", settings.api_key_env.value)
            },
        ),
        row(
            "permissions.mode",
            json!(mode_name(settings.mode.value)),
            &settings.mode.origin,
        ),
        row(
            "permissions.read_only",
            json!(settings.read_only.value.name()),
            &settings.read_only.origin,
        ),
    ];
    if let Some(limit) = &settings.max_output_tokens {
        rows.insert(
            5,
            row("model.max_output_tokens", json!(limit.value), &limit.origin),
        );
    }
    // Before `permissions.mode`: the key's header, then the extra headers, secret values
    // never shown.
    let mut model_rows = Vec::new();
    if let Some(idle) = &settings.idle_timeout {
        model_rows.push(row(
            "model.idle_timeout_secs",
            json!(idle.value.as_secs()),
            &idle.origin,
        ));
    }
    if let Some(window) = &settings.facts.context_window {
        model_rows.push(row(
            "model.context_window",
            json!(window.value),
            &window.origin,
        ));
    }
    for (key, price) in [
        ("model.price_in", &settings.facts.price_in),
        ("model.price_out", &settings.facts.price_out),
    ] {
        if let Some(price) = price {
            model_rows.push(row(key, json!(price.value), &price.origin));
        }
    }
    if let Some(header) = &settings.api_key_header {
        model_rows.push(row(
            "model.api_key_header",
            json!(header.value),
            &header.origin,
        ));
    }
    for header in &settings.headers {
        let (name, value) = &header.value;
        model_rows.push(row(
            &format!("model.headers.{name}"),
            json!(crate::model::shown_header_value(name, value)),
            &header.origin,
        ));
    }
    let at = rows
        .iter()
        .position(|(key, ..)| key == "permissions.mode")
        .unwrap_or(rows.len());
    rows.splice(at..at, model_rows);
    for kind in [RuleKind::Allow, RuleKind::Deny] {
        let name = match kind {
            RuleKind::Allow => "permissions.commands.allow",
            RuleKind::Deny => "permissions.commands.deny",
        };
        rows.extend(
            settings
                .rules
                .iter()
                .filter(|rule| rule.kind == kind)
                .map(|rule| row(name, json!(rule.prefix), &rule.origin)),
        );
    }
    rows.push(row(
        "permissions.files.edits",
        json!(match settings.files.edits.value {
            crate::policy::files::Edits::Ask => "ask",
            crate::policy::files::Edits::Allow => "allow",
            crate::policy::files::Edits::Deny => "deny",
        }),
        &settings.files.edits.origin,
    ));
    for rule in &settings.files.deny {
        rows.push((
            "permissions.files.deny".to_owned(),
            json!(rule.pattern),
            format!("{:?}", rule.source).to_lowercase(),
        ));
    }
    for pattern in &settings.files.ask_read {
        rows.push((
            "permissions.files.ask_read".to_owned(),
            json!(pattern),
            "settings".to_owned(),
        ));
    }
    let timeout = settings.timeout.value;
    let secs = if timeout.subsec_nanos() == 0 {
        json!(timeout.as_secs())
    } else {
        json!(timeout.as_secs_f64())
    };
    rows.extend([
        row("limits.timeout_secs", secs, &settings.timeout.origin),
        row(
            "limits.max_output_chars",
            json!(settings.max_output_chars.value),
            &settings.max_output_chars.origin,
        ),
        row(
            "limits.max_turns",
            json!(settings.max_turns.value),
            &settings.max_turns.origin,
        ),
        row(
            "limits.inspect_cpu_secs",
            json!(settings.inspect_cpu_secs.value),
            &settings.inspect_cpu_secs.origin,
        ),
        row(
            "limits.inspect_memory_mb",
            json!(settings.inspect_memory_mb.value),
            &settings.inspect_memory_mb.origin,
        ),
        row(
            "exec.shell",
            json!(settings.shell.value),
            &settings.shell.origin,
        ),
        row(
            "sandbox.mode",
            json!(settings.sandbox_mode.value.name()),
            &settings.sandbox_mode.origin,
        ),
        row(
            "sandbox.network",
            json!(settings.network.value),
            &settings.network.origin,
        ),
        row(
            "sandbox.required",
            json!(settings.sandbox_required.value),
            &settings.sandbox_required.origin,
        ),
        row(
            "ci.fail_on_deny",
            json!(settings.fail_on_deny.value),
            &settings.fail_on_deny.origin,
        ),
        row(
            "ui.notify",
            json!(settings.notify.value.name()),
            &settings.notify.origin,
        ),
        row(
            "snapshots.enabled",
            json!(settings.snapshots.enabled.value),
            &settings.snapshots.enabled.origin,
        ),
        row(
            "snapshots.keep_days",
            json!(settings.snapshots.keep_days.value),
            &settings.snapshots.keep_days.origin,
        ),
        row(
            "snapshots.max_file_mb",
            json!(settings.snapshots.max_file_mb.value),
            &settings.snapshots.max_file_mb.origin,
        ),
        row(
            "snapshots.time_budget_ms",
            json!(settings.snapshots.time_budget_ms.value),
            &settings.snapshots.time_budget_ms.origin,
        ),
    ]);
    rows.extend(
        settings
            .writable
            .iter()
            .map(|entry| row("sandbox.writable", json!(entry.value), &entry.origin)),
    );
    rows.extend(network_rows(&settings.net));
    rows
}

/// `[network]`: the mode, then each list as one row whose origin names every place its
/// entries came from.
fn network_rows(net: &super::NetworkSettings) -> Vec<(String, Value, String)> {
    fn list<T: Clone + serde::Serialize>(
        key: &str,
        entries: &[super::Sourced<T>],
    ) -> (String, Value, String) {
        let values: Vec<T> = entries.iter().map(|entry| entry.value.clone()).collect();
        let mut origins: Vec<String> = Vec::new();
        for entry in entries {
            let origin = entry.origin.to_string();
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        let origin = if origins.is_empty() {
            "default".to_owned()
        } else {
            origins.join("; ")
        };
        (key.to_owned(), json!(values), origin)
    }
    let hosts: serde_json::Map<String, Value> = net
        .hosts
        .iter()
        .map(|entry| (entry.value.0.clone(), json!(entry.value.1)))
        .collect();
    let mut hosts_row = list("network.hosts", &net.hosts);
    hosts_row.1 = Value::Object(hosts);
    vec![
        (
            "network.mode".to_owned(),
            json!(net.mode.value.name()),
            net.mode.origin.to_string(),
        ),
        list("network.allow", &net.allow),
        list("network.deny", &net.deny),
        {
            let mut row = list("network.presets", &net.presets);
            row.2 = format!(
                "{} (presets version {})",
                row.2,
                crate::net::rules::presets_version()
            );
            row
        },
        list("network.allow_local", &net.allow_local),
        hosts_row,
        list("network.rule_hosts", &net.rule_hosts),
        (
            "network.web_fetch".to_owned(),
            json!(net.offers_web_fetch()),
            net.web_fetch.as_ref().map_or_else(
                || "default (offered when network.mode is not off)".to_owned(),
                |set| set.origin.to_string(),
            ),
        ),
    ]
}

/// The merged settings as text (`key = value  # origin`) or JSON. `sandbox` is whether
/// the sandbox applies on this machine: `Ok(what enforces it)` or `Err(why not)`; it is
/// shown as `sandbox.active`.
#[must_use]
pub fn render(
    settings: &Settings,
    sandbox: Result<&str, &str>,
    prompt_tokens: u64,
    as_json: bool,
) -> String {
    let mut rows = rows(settings);
    let at = rows
        .iter()
        .position(|(key, ..)| key == "sandbox.required")
        .map_or(rows.len(), |at| at + 1);
    let (active, why) = match sandbox {
        Ok(how) => (true, how.to_owned()),
        Err(why) => (false, why.to_owned()),
    };
    rows.insert(at, ("sandbox.active".to_owned(), json!(active), why));
    // What every request carries before the conversation: a server's context must hold it.
    rows.push((
        "model.prompt_tokens".to_owned(),
        json!(prompt_tokens),
        "estimate: the system prompt and tool definitions, about 4 bytes a token".to_owned(),
    ));
    if as_json {
        let mut object = serde_json::Map::new();
        object.insert(
            "user_file".into(),
            json!(settings.user_file.display().to_string()),
        );
        object.insert(
            "project_file".into(),
            json!(
                settings
                    .project_file
                    .as_ref()
                    .map(|p| p.display().to_string())
            ),
        );
        let mut allow = Vec::new();
        let mut deny = Vec::new();
        let mut writable = Vec::new();
        for (key, value, origin) in rows {
            let entry = json!({ "value": value, "source": origin });
            match key.as_str() {
                "permissions.commands.allow" => allow.push(entry),
                "permissions.commands.deny" => deny.push(entry),
                "sandbox.writable" => writable.push(entry),
                _ => {
                    object.insert(key, entry);
                }
            }
        }
        object.insert("permissions.commands.allow".into(), Value::Array(allow));
        object.insert("permissions.commands.deny".into(), Value::Array(deny));
        object.insert("sandbox.writable".into(), Value::Array(writable));
        object.insert("warnings".into(), json!(settings.warnings));
        return format!("{}\n", Value::Object(object));
    }
    let lines: Vec<(String, String)> = rows
        .into_iter()
        .map(|(key, value, origin)| (format!("{key} = {value}"), origin))
        .collect();
    let width = lines
        .iter()
        .map(|(left, _)| left.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for (left, origin) in lines {
        text.push_str(&format!("{left:width$}  # {origin}\n"));
    }
    text
}
