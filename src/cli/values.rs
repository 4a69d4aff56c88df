//! The library's own types on the command line: each value with its help text.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::model::ProviderKind;
use crate::policy::{Mode, OsFamily};
use crate::sandbox::SandboxMode;

impl ValueEnum for OsFamily {
    fn value_variants<'a>() -> &'a [Self] {
        &[OsFamily::Unix, OsFamily::Windows]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            OsFamily::Unix => {
                PossibleValue::new("unix").help("POSIX sh rules and the Unix read-only list")
            }
            OsFamily::Windows => {
                PossibleValue::new("windows").help("cmd.exe rules and the Windows read-only list")
            }
        })
    }
}

impl ValueEnum for ProviderKind {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            ProviderKind::OpenAi,
            ProviderKind::Anthropic,
            ProviderKind::Ollama,
            ProviderKind::Demo,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            ProviderKind::OpenAi => PossibleValue::new("openai")
                .help("OpenAI Chat Completions, or any compatible server with --base-url"),
            ProviderKind::Anthropic => PossibleValue::new("anthropic").help("Anthropic Messages"),
            ProviderKind::Ollama => PossibleValue::new("ollama")
                .help("A local Ollama server (http://127.0.0.1:11434/v1, no key)"),
            ProviderKind::Demo => {
                PossibleValue::new("demo").help("The offline demo model: no key, no network")
            }
        })
    }
}

impl ValueEnum for Mode {
    fn value_variants<'a>() -> &'a [Self] {
        &[Mode::Ask, Mode::Auto, Mode::Deny, Mode::Off, Mode::AllowAll]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Mode::Ask => {
                PossibleValue::new("ask").help("Prompt for commands the policy is unsure about")
            }
            Mode::Auto => PossibleValue::new("auto").help(
                "Run them in the sandbox without prompting (ask where the sandbox is not fully \
                 active; protected programs still ask)",
            ),
            Mode::Deny => PossibleValue::new("deny").help("Deny them instead of prompting"),
            Mode::Off => PossibleValue::new("off").help("Offer the model no shell tool at all"),
            Mode::AllowAll => PossibleValue::new("allow-all")
                .help("Allow them, except destructive programs, which still ask"),
        })
    }
}

impl ValueEnum for SandboxMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            SandboxMode::WorkspaceWrite,
            SandboxMode::ReadOnly,
            SandboxMode::Off,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            SandboxMode::WorkspaceWrite => PossibleValue::new(self.name())
                .help("Write only inside the workspace, the temp dir and the `writable` paths"),
            SandboxMode::ReadOnly => {
                PossibleValue::new(self.name()).help("Write nothing (but /dev/null and the like)")
            }
            SandboxMode::Off => {
                PossibleValue::new(self.name()).help("No sandbox: commands may do what you may")
            }
        })
    }
}
