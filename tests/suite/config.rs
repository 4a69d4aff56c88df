//! `agent config show`: the layers of DESIGN.md, in order: defaults < user file < project file
//! < environment < flags. One test per environment variable of the layer table.

use super::harness::{Sandbox, json};
use pretty_assertions::assert_eq;
use serde_json::json;

/// `config show --json` with `env` set, after writing `settings` as the user file.
fn shown(settings: &str, env: &[(&str, &str)], args: &[&str]) -> serde_json::Value {
    let sandbox = Sandbox::new();
    sandbox.settings(settings);
    let mut cmd = sandbox.agent();
    cmd.args(["config", "show", "--json"]).args(args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    let output = cmd.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    json(&output)
}

const USER_FILE: &str = "[model]\nprovider = \"openai\"\nmodel = \"file-model\"\n\
                         base_url = \"http://file.example/v1\"\n";

#[test]
fn openai_base_url_beats_the_settings_file_and_loses_to_the_flag() {
    let env = [("OPENAI_BASE_URL", "http://env.example/v1")];
    let show = shown(USER_FILE, &env, &[]);
    assert_eq!(
        show["model.base_url"],
        json!({"source": "env OPENAI_BASE_URL", "value": "http://env.example/v1"})
    );
    // `config show` has no --base-url; `run` does, and it wins there (unit-tested in
    // settings); the file's URL stays when the variable is unset.
    let show = shown(USER_FILE, &[], &[]);
    assert_eq!(show["model.base_url"]["value"], "http://file.example/v1");
}

#[test]
fn openai_base_url_does_not_change_another_provider() {
    let env = [("OPENAI_BASE_URL", "http://env.example/v1")];
    let show = shown("[model]\nprovider = \"anthropic\"\n", &env, &[]);
    assert_eq!(show["model.base_url"]["source"], "default");
}

#[test]
fn agent_model_beats_the_settings_file() {
    let show = shown(USER_FILE, &[("AGENT_MODEL", "env-model")], &[]);
    assert_eq!(
        show["model.model"],
        json!({"source": "env AGENT_MODEL", "value": "env-model"})
    );
}

#[test]
fn openai_api_key_is_read_from_the_environment_and_picks_the_provider() {
    let show = shown("", &[("OPENAI_API_KEY", "sk-test-0123")], &[]);
    assert_eq!(show["model.provider"]["value"], "openai");
    assert_eq!(show["model.api_key"]["source"], "env OPENAI_API_KEY");
    assert_ne!(
        show["model.api_key"]["value"], "sk-test-0123",
        "a key is never printed"
    );
    assert_ne!(show["model.api_key"]["value"], "<not set>");
}

#[test]
fn anthropic_api_key_is_read_from_the_environment_and_picks_the_provider() {
    let show = shown("", &[("ANTHROPIC_API_KEY", "sk-ant-0123")], &[]);
    assert_eq!(show["model.provider"]["value"], "anthropic");
    assert_eq!(show["model.api_key"]["source"], "env ANTHROPIC_API_KEY");
    assert_ne!(show["model.api_key"]["value"], "<not set>");
}

/// The fixed prompt's size is shown, so a person can size a local server's context: it
/// grows with the project's instructions and is far smaller with no tools (mode `off`).
#[test]
fn config_show_estimates_the_fixed_prompt() {
    let tokens = |show: &serde_json::Value| show["model.prompt_tokens"]["value"].as_u64().unwrap();
    let plain = shown("", &[], &[]);
    let with_tools = tokens(&plain);
    assert!(with_tools > 500, "{plain}");
    assert!(
        plain["model.prompt_tokens"]["source"]
            .as_str()
            .unwrap()
            .contains("estimate"),
        "{plain}"
    );
    let off = tokens(&shown("[permissions]\nmode = \"off\"\n", &[], &[]));
    assert!(off * 4 < with_tools, "off {off}, with tools {with_tools}");

    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.work().join("AGENTS.md"),
        "Always run the tests. ".repeat(200),
    )
    .unwrap();
    let output = sandbox
        .agent()
        .args(["config", "show", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let with_instructions = tokens(&json(&output));
    assert!(
        with_instructions >= with_tools + 900,
        "{with_instructions} vs {with_tools}"
    );

    let text = sandbox.agent().args(["config", "show"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("model.prompt_tokens = "), "{text}");
}

/// A cloned repository's `.agent/settings.toml` cannot send the conversation, or a key of its
/// choosing, to a server of its choosing: with `[model] base_url` and `api_key_env` (each alone
/// and both), the user's server gets the run with the user's key and the project's gets
/// nothing.
#[test]
fn a_project_file_cannot_point_the_model_at_another_server() {
    use super::fake_model::{FakeModel, turn_text};
    use super::harness::KEY;
    for keys in [
        &["base_url"][..],
        &["api_key_env"],
        &["base_url", "api_key_env"],
    ] {
        let users = FakeModel::openai_turns([turn_text("from the user's server")]);
        let projects = FakeModel::openai_turns([turn_text("from the project's server")]);
        let sandbox = Sandbox::new();
        sandbox.settings(&format!(
            "[model]\nprovider = \"openai\"\nbase_url = \"{}\"\n",
            users.openai_url()
        ));
        let mut project = String::from("[model]\n");
        for key in keys {
            let value = match *key {
                "base_url" => projects.openai_url(),
                _ => "PROJECT_KEY".to_owned(),
            };
            project.push_str(&format!("{key} = \"{value}\"\n"));
        }
        std::fs::create_dir_all(sandbox.work().join(".agent")).unwrap();
        std::fs::write(sandbox.work().join(".agent/settings.toml"), &project).unwrap();
        let output = sandbox
            .agent()
            .env("OPENAI_API_KEY", KEY)
            .env("PROJECT_KEY", "sk-project-chosen-key")
            .args(["run", "hello"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{keys:?}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "from the user's server\n",
            "{keys:?}"
        );
        assert!(projects.requests().is_empty(), "{keys:?}: {stderr}");
        let sent = users.request(0);
        assert_eq!(
            sent.header("authorization"),
            Some(format!("Bearer {KEY}").as_str()),
            "{keys:?}"
        );
        for key in keys {
            assert!(
                stderr.contains(&format!("`model.{key}` is ignored")),
                "{keys:?}: {key} not reported: {stderr}"
            );
        }
    }
}
