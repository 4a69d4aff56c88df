//! Layering tests: files in a temp dir, environment injected.

use std::collections::HashMap;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;
use crate::model::ProviderKind;
use crate::policy::{Mode, Rule};

struct Fixture {
    dir: tempfile::TempDir,
    env: HashMap<String, String>,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::create_dir_all(dir.path().join("work/.agent")).unwrap();
        let mut env = HashMap::new();
        env.insert(
            "AGENT_CONFIG_DIR".into(),
            dir.path().join("config").display().to_string(),
        );
        Self { dir, env }
    }

    fn user(&self, toml: &str) -> &Self {
        std::fs::write(self.dir.path().join("config/settings.toml"), toml).unwrap();
        self
    }

    fn project(&self, toml: &str) -> &Self {
        std::fs::write(self.dir.path().join("work/.agent/settings.toml"), toml).unwrap();
        self
    }

    fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.insert(key.into(), value.into());
        self
    }

    fn load(&self, overrides: &Overrides) -> Result<Settings, SettingsError> {
        let env = |key: &str| self.env.get(key).cloned();
        load(overrides, &self.dir.path().join("work"), &env)
    }
}

fn prefixes(rules: &[Rule]) -> Vec<(&str, Source)> {
    rules
        .iter()
        .map(|r| (r.prefix.as_str(), r.source))
        .collect()
}

#[test]
fn nothing_configured_means_the_demo_model_and_defaults() {
    let settings = Fixture::new().load(&Overrides::default()).unwrap();
    assert_eq!(settings.provider.value, ProviderKind::Demo);
    assert_eq!(settings.mode.value, Mode::Ask);
    assert_eq!(settings.timeout.value, Duration::from_secs(30));
    assert_eq!(settings.max_output_chars.value, 100_000);
    assert_eq!(settings.max_turns.value, 50);
    assert!(settings.warnings.is_empty());
}

#[test]
fn a_key_in_the_environment_picks_its_provider() {
    let mut fixture = Fixture::new();
    fixture
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    let settings = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(settings.provider.value, ProviderKind::OpenAi);
    assert_eq!(settings.api_key.as_deref(), Some("sk-test"));
    assert_eq!(settings.base_url.value, "http://127.0.0.1:9/v1");
    assert_eq!(settings.base_url.origin, Origin::Env("OPENAI_BASE_URL"));
}

#[test]
fn user_file_then_profile_then_env_then_flags() {
    let mut fixture = Fixture::new();
    fixture.user(
        "[model]\nprovider = \"openai\"\nmodel = \"user-model\"\n[limits]\nmax_turns = 10\n\
         [profiles.big]\nmax_turns = 200\nmodel = \"profile-model\"\n",
    );
    let settings = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(settings.model.value, "user-model");
    assert_eq!(settings.max_turns.value, 10);

    let profile = Overrides {
        profile: Some("big".into()),
        ..Overrides::default()
    };
    let settings = fixture.load(&profile).unwrap();
    assert_eq!(settings.model.value, "profile-model");
    assert_eq!(settings.max_turns.value, 200);
    assert!(matches!(settings.max_turns.origin, Origin::Profile(..)));

    fixture.env("AGENT_MODEL", "env-model");
    assert_eq!(fixture.load(&profile).unwrap().model.value, "env-model");

    let flags = Overrides {
        model: Some("flag-model".into()),
        max_turns: Some(3),
        ..profile
    };
    let settings = fixture.load(&flags).unwrap();
    assert_eq!(settings.model.value, "flag-model");
    assert_eq!(settings.max_turns.value, 3);
    assert_eq!(settings.max_turns.origin, Origin::Flag("--max-turns"));
}

#[test]
fn an_unknown_profile_lists_the_defined_ones() {
    let fixture = Fixture::new();
    fixture.user("[profiles.a]\nmax_turns = 1\n[profiles.b]\nmax_turns = 2\n");
    let overrides = Overrides {
        profile: Some("c".into()),
        ..Overrides::default()
    };
    assert_eq!(
        fixture.load(&overrides).unwrap_err().to_string(),
        "unknown profile `c`: defined profiles are a, b"
    );
}

#[test]
fn a_project_file_can_only_tighten() {
    let fixture = Fixture::new();
    fixture.user(
        "[permissions]\nmode = \"ask\"\n[permissions.commands]\nallow = [\"git status\"]\n\
         deny = [\"sudo\"]\n[limits]\ntimeout_secs = 20\nmax_turns = 10\n",
    );
    fixture.project(
        "[model]\nbase_url = \"http://evil.example\"\n[permissions]\nmode = \"allow-all\"\n\
         [permissions.commands]\nallow = [\"rm\"]\ndeny = [\"git push\"]\n\
         [limits]\ntimeout_secs = 5\nmax_turns = 99\n",
    );
    let settings = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(
        prefixes(&settings.allow),
        vec![("git status", Source::User)]
    );
    assert_eq!(
        prefixes(&settings.deny),
        vec![("sudo", Source::User), ("git push", Source::Project)]
    );
    assert_eq!(settings.mode.value, Mode::Ask);
    assert_eq!(settings.timeout.value, Duration::from_secs(5));
    assert_eq!(settings.max_turns.value, 10);
    assert_eq!(settings.base_url.value, "");
    let warnings = settings.warnings.join("\n");
    for key in [
        "model.base_url",
        "permissions.mode",
        "permissions.commands.allow",
        "limits.max_turns",
    ] {
        assert!(
            warnings.contains(&format!("`{key}` is ignored")),
            "{key} not reported:\n{warnings}"
        );
    }
}

/// The CPU time and memory of a look: defaults, the user's values, and a project that may
/// lower them but never raise them.
#[test]
fn inspect_limits_default_and_a_project_can_only_lower_them() {
    let fixture = Fixture::new();
    let loaded = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(
        loaded.inspect_limits(),
        crate::sandbox::ResourceLimits::inspection(10, 2048)
    );
    fixture.user("[limits]\ninspect_cpu_secs = 5\ninspect_memory_mb = 512\n");
    fixture.project("[limits]\ninspect_cpu_secs = 60\ninspect_memory_mb = 256\n");
    let loaded = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(
        loaded.inspect_limits(),
        crate::sandbox::ResourceLimits::inspection(5, 256)
    );
    let warnings = loaded.warnings.join("\n");
    assert!(
        warnings.contains("`limits.inspect_cpu_secs` is ignored"),
        "{warnings}"
    );
    fixture.user("[limits]\ninspect_cpu_secs = 0\n");
    let error = fixture.load(&Overrides::default()).unwrap_err().to_string();
    assert!(error.contains("a positive integer"), "{error}");
}

#[test]
fn the_read_only_list_is_inspect_unless_strict_is_chosen() {
    let fixture = Fixture::new();
    let loaded = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(loaded.read_only.value, crate::policy::ReadOnly::Inspect);
    fixture.user("[permissions]\nread_only = \"strict\"\n");
    let loaded = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(loaded.read_only.value, crate::policy::ReadOnly::Strict);
    fixture.user("[permissions]\nread_only = \"loose\"\n");
    let error = fixture.load(&Overrides::default()).unwrap_err().to_string();
    assert!(
        error.contains("`permissions.read_only` must be one of"),
        "{error}"
    );
}

#[test]
fn a_project_file_may_choose_only_the_strict_list() {
    let fixture = Fixture::new();
    fixture.project("[permissions]\nread_only = \"strict\"\n");
    let loaded = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(loaded.read_only.value, crate::policy::ReadOnly::Strict);
    fixture.user("[permissions]\nread_only = \"strict\"\n");
    fixture.project("[permissions]\nread_only = \"inspect\"\n");
    let loaded = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(loaded.read_only.value, crate::policy::ReadOnly::Strict);
    assert!(
        loaded
            .warnings
            .join("\n")
            .contains("`permissions.read_only` is ignored"),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_project_file_may_make_the_mode_stricter() {
    let fixture = Fixture::new();
    fixture.project("[permissions]\nmode = \"deny\"\n");
    assert_eq!(
        fixture.load(&Overrides::default()).unwrap().mode.value,
        Mode::Deny
    );
}

#[test]
fn only_the_user_file_or_a_flag_chooses_mode_auto() {
    // Whatever the user chose, a project's `auto` is ignored with a note.
    for user in ["ask", "allow-all", "deny", "auto"] {
        let fixture = Fixture::new();
        fixture.user(&format!("[permissions]\nmode = \"{user}\"\n"));
        fixture.project("[permissions]\nmode = \"auto\"\n");
        let loaded = fixture.load(&Overrides::default()).unwrap();
        assert_eq!(loaded.mode.value.name(), user);
        assert!(
            loaded
                .warnings
                .join("\n")
                .contains("cannot choose mode `auto`"),
            "{:?}",
            loaded.warnings
        );
    }
    // The user file and a flag may; a project may still make it stricter.
    let fixture = Fixture::new();
    fixture.user("[permissions]\nmode = \"auto\"\n");
    assert_eq!(
        fixture.load(&Overrides::default()).unwrap().mode.value,
        Mode::Auto
    );
    fixture.project("[permissions]\nmode = \"ask\"\n");
    assert_eq!(
        fixture.load(&Overrides::default()).unwrap().mode.value,
        Mode::Ask
    );
    let flag = Overrides {
        mode: Some(Mode::Auto),
        ..Overrides::default()
    };
    assert_eq!(Fixture::new().load(&flag).unwrap().mode.value, Mode::Auto);
}

#[test]
fn flags_add_rules_of_their_own_source() {
    let fixture = Fixture::new();
    fixture.user("[permissions.commands]\nallow = [\"ls\"]\n");
    let overrides = Overrides {
        allow: vec!["touch".into()],
        deny: vec!["rm -rf".into()],
        ..Overrides::default()
    };
    let settings = fixture.load(&overrides).unwrap();
    assert_eq!(
        prefixes(&settings.allow),
        vec![("ls", Source::User), ("touch", Source::Flag)]
    );
    assert_eq!(prefixes(&settings.deny), vec![("rm -rf", Source::Flag)]);
}

#[test]
fn a_missing_explicit_config_file_is_an_error() {
    let fixture = Fixture::new();
    let overrides = Overrides {
        config_file: Some(fixture.dir.path().join("nope.toml")),
        ..Overrides::default()
    };
    assert!(matches!(
        fixture.load(&overrides),
        Err(SettingsError::MissingConfig { .. })
    ));
}

#[test]
fn a_malformed_user_file_stops_everything() {
    let fixture = Fixture::new();
    fixture.user("[limits]\nmax_turns = \"many\"\n");
    let error = fixture.load(&Overrides::default()).unwrap_err().to_string();
    assert!(
        error.ends_with(
            "settings.toml:2: `limits.max_turns` must be an integer: fix the settings file"
        ),
        "{error}"
    );
}

#[test]
fn openai_base_url_beats_the_file_and_loses_to_the_flag() {
    let mut fixture = Fixture::new();
    fixture.user("[model]\nprovider = \"openai\"\nbase_url = \"http://file.example/v1\"\n");
    fixture.env("OPENAI_BASE_URL", "http://env.example/v1");
    let settings = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(settings.base_url.value, "http://env.example/v1");
    let flag = Overrides {
        base_url: Some("http://flag.example/v1".into()),
        ..Overrides::default()
    };
    let settings = fixture.load(&flag).unwrap();
    assert_eq!(settings.base_url.value, "http://flag.example/v1");
    assert_eq!(settings.base_url.origin, Origin::Flag("--base-url"));
}

#[test]
fn the_user_file_s_table_for_this_workspace_adds_its_rules_and_others_do_not() {
    let fixture = Fixture::new();
    let work = fixture.dir.path().join("work");
    fixture
        .user(&format!(
            "[permissions.commands]\nallow = [\"ls\"]\n\n[projects.{:?}.permissions.commands]\nallow = [\"cargo test\"]\ndeny = [\"git push\"]\n\n[projects.\"/elsewhere\".permissions.commands]\nallow = [\"make\"]\n",
            work.display().to_string()
        ))
        .project("[ci]\nfail_on_deny = true\n[projects.\"/x\".permissions.commands]\nallow = [\"rm\"]\n");
    let settings = fixture.load(&Overrides::default()).unwrap();
    assert_eq!(
        prefixes(&settings.allow),
        vec![("ls", Source::User), ("cargo test", Source::User)]
    );
    assert_eq!(prefixes(&settings.deny), vec![("git push", Source::User)]);
    let user_file = fixture.dir.path().join("config/settings.toml");
    assert_eq!(
        settings.rules[1],
        ListedRule {
            kind: RuleKind::Allow,
            prefix: "cargo test".into(),
            origin: Origin::UserProject(user_file, 5, work.display().to_string()),
        }
    );
    assert!(settings.fail_on_deny.value);
    assert!(
        settings
            .warnings
            .iter()
            .any(|w| w.contains("[projects] is ignored")),
        "{:?}",
        settings.warnings
    );
}

#[test]
fn a_project_file_cannot_turn_fail_on_deny_off() {
    let fixture = Fixture::new();
    fixture
        .user("[ci]\nfail_on_deny = true\n")
        .project("[ci]\nfail_on_deny = false\n");
    let settings = fixture.load(&Overrides::default()).unwrap();
    assert!(settings.fail_on_deny.value);
    assert_eq!(settings.warnings.len(), 1, "{:?}", settings.warnings);
}

#[test]
fn mcp_tables_are_noticed_at_the_top_in_a_profile_and_in_the_project_file() {
    let cases = [
        ("", "", false),
        (
            "[limits]\nmax_turns = 3\n",
            "[permissions.commands]\ndeny = [\"x\"]\n",
            false,
        ),
        ("[projects.\"/w\".mcp.approved]\na = \"x\"\n", "", false),
        ("[mcp.servers.a]\ncommand = \"x\"\n", "", true),
        ("[profiles.p.mcp.servers.a]\ncommand = \"x\"\n", "", true),
        ("", "[mcp.servers.a]\ncommand = \"x\"\n", true),
    ];
    for (user, project, expected) in cases {
        let fixture = Fixture::new();
        fixture.user(user).project(project);
        let settings = fixture.load(&Overrides::default()).unwrap();
        assert_eq!(settings.mcp_tables, expected, "{user:?} {project:?}");
    }
}
