//! What each slash command does to the session: `/rules`, `/usage`, `/model`, `/mode`,
//! `/clear`, `/compact`, `/diff`, `/undo` (parsing the line is [`super::slash`]'s).

use crate::agent::{CompactReason, Event};
use crate::model::{AnyModel, Model as _, Tunable as _};
use crate::policy::Mode;
use crate::ui::sanitize;

use super::slash::{self, Slash};
use super::{Session, Stopped, compact};

impl Session {
    /// Carries out a slash command; `false` ends the session.
    pub(super) async fn slash(&mut self, command: Slash) -> Result<bool, Stopped> {
        match command {
            Slash::Help => self.say(&slash::help()),
            Slash::Exit => return Ok(false),
            Slash::Rules => self.say(&self.rules_text()),
            Slash::Usage => self.say(&self.usage_text()),
            Slash::Model(Some(name)) => self.switch_model(name),
            Slash::Model(None) => self.choose_model().await?,
            Slash::Mode(mode) => self.switch_mode(mode.as_deref()),
            Slash::Clear => {
                let replaced = std::mem::take(&mut self.conversation).len();
                self.size = None;
                self.event(Event::Compacted {
                    reason: CompactReason::Clear,
                    replaced,
                    summary: None,
                });
            }
            Slash::Compact => {
                self.compact(CompactReason::Asked).await;
            }
            Slash::Diff => self.show_diff(),
            Slash::Ps => self.say(&super::ps::text()),
            Slash::Mcp(words) => self.mcp_command(&words).await,
            Slash::Undo(argument) => match argument.as_deref() {
                None => self.undo(false).await?,
                Some("--force" | "-f") => self.undo(true).await?,
                Some(other) => {
                    let other = sanitize::escape(other).into_owned();
                    self.say(&format!(
                        "agent: /undo takes no argument but --force (not {other})"
                    ));
                }
            },
            Slash::Unknown(name) => {
                let name = sanitize::escape(&name).into_owned();
                self.say(&format!(
                    "agent: there is no session command {name}: /help lists them (// sends a \
                     line starting with /)"
                ));
            }
        }
        Ok(true)
    }

    fn rules_text(&self) -> String {
        if self.rules.is_empty() {
            return "no allow or deny rules: the built-in read-only list decides, everything \
                    else asks"
                .to_owned();
        }
        let mut out = String::new();
        for rule in &self.rules {
            let prefix = sanitize::escape_command(&rule.prefix).replace('\n', "⏎");
            let kind = match rule.kind {
                crate::settings::RuleKind::Allow => "allow",
                crate::settings::RuleKind::Deny => "deny",
            };
            out.push_str(&format!("  {kind:<5} {prefix}   ({})\n", rule.origin));
        }
        out.push_str(&format!("mode: {}", mode_name(self.config.mode)));
        out
    }

    fn usage_text(&self) -> String {
        let mut out = format!(
            "this session: {} ({} model request{})",
            self.usage,
            self.requests,
            if self.requests == 1 { "" } else { "s" }
        );
        let model = self.model.describe();
        out.push_str(
            &self
                .spent
                .text(&model, super::cost::price_of(self.prices, &model)),
        );
        if let (Some(size), Some(window)) = (self.size, self.context_window) {
            out.push_str(&format!(
                "\nconversation: about {} of a {} token window",
                crate::model::short_tokens(size),
                crate::model::short_tokens(window)
            ));
        }
        out
    }

    /// Talks to `name` (of the same provider) from the next message.
    pub(super) fn switch_model(&mut self, name: String) {
        let mut provider = self.provider.clone();
        provider.model = name;
        match AnyModel::new(&provider, cfg!(windows)) {
            Ok(model) => {
                self.model = match self.retry_notice {
                    Some(notice) => model.with_retry_notice(notice),
                    None => model,
                };
                self.provider = provider;
                self.context_window = compact::known_window(&self.model.describe());
                let shown = sanitize::escape(&self.model.describe()).into_owned();
                self.say(&format!("agent: model {shown} from the next message"));
            }
            Err(error) => {
                let error = sanitize::escape_prose(&error.to_string()).into_owned();
                self.say(&format!("agent: {error}"));
            }
        }
    }

    fn switch_mode(&mut self, mode: Option<&str>) {
        let wanted = match mode {
            Some("ask") => Mode::Ask,
            Some("auto") => Mode::Auto,
            Some("deny") => Mode::Deny,
            Some("allow-all") => Mode::AllowAll,
            _ => {
                self.say(&format!(
                    "mode: {} (/mode ask, /mode auto, /mode deny or /mode allow-all changes it)",
                    mode_name(self.config.mode)
                ));
                return;
            }
        };
        if let Some(floor) = self.mode_floor
            && wanted.strictness() < floor.strictness()
        {
            self.say(&format!(
                "agent: the project file sets mode {}: a session may not loosen it",
                mode_name(floor)
            ));
            return;
        }
        self.config.mode = wanted;
        self.say(&format!("agent: mode {} from now on", mode_name(wanted)));
        let snapshots = self.snapshots.store().is_some();
        if let Some(note) = crate::agent::auto_fallback(wanted, &self.config.sandbox, snapshots) {
            self.say(&format!("agent: {note}"));
        }
    }
}

fn mode_name(mode: Mode) -> &'static str {
    mode.name()
}
