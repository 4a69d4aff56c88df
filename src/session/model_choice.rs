//! `/model` without a name: the models the server says it serves (`GET /models`), or, when
//! it does not say, the well-known ones of its provider, in a picker; the one chosen is
//! switched to as `/model NAME` does. Where no one can pick, the list is printed. The names
//! come from the server: they are escaped wherever they are shown.

use crate::approve::{Approve as _, Screen as _};
use crate::model::{Model as _, ProviderKind, prices};
use crate::ui::composer::Action;
use crate::ui::{pick, sanitize};

use super::screen::{lock, stops_a_wait};
use super::{Session, Stopped};

/// How the wait for the server's list ended.
enum Asked {
    /// The server answered (or did not, within the transport's wait): its list, if any.
    Answered(Option<Vec<String>>),
    /// The person stopped waiting (Esc, Ctrl+C, SIGINT).
    Stopped,
    /// A signal ends the session.
    Ended(Stopped),
}

/// Most names offered (a gateway may serve hundreds; the picker filters as one types).
const MOST_OFFERED: usize = 1_000;

/// The names `/model` offers and where they come from.
#[derive(Debug, PartialEq)]
struct Offer {
    names: Vec<String>,
    /// The server listed them (else they are the well-known ones).
    served: bool,
}

/// What `/model` offers: the server's list when it gave a non-empty one, else the
/// provider's well-known models with its default; the current model is always there.
fn offer(served: Option<Vec<String>>, provider: ProviderKind, current: &str) -> Offer {
    let (mut names, served) = match served.filter(|names| !names.is_empty()) {
        Some(names) => (names, true),
        None => {
            let mut names = prices::models_of(provider);
            names.push(provider.default_model().to_owned());
            (names, false)
        }
    };
    names.retain(|name| !name.trim().is_empty());
    if !names.iter().any(|name| name == current) {
        names.insert(0, current.to_owned());
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    names.truncate(MOST_OFFERED);
    Offer { names, served }
}

/// The picker's rows: each name, the current one marked (the picker escapes them).
fn labels(names: &[String], current: &str) -> Vec<String> {
    names
        .iter()
        .map(|name| {
            if name == current {
                format!("{name}   (current)")
            } else {
                name.clone()
            }
        })
        .collect()
}

/// The list printed where no one can pick: one escaped name a line.
fn printed(offer: &Offer, current: &str) -> String {
    let mut out = String::from(if offer.served {
        "models the server serves:"
    } else {
        "the server does not list its models; well-known ones:"
    });
    for name in &offer.names {
        let shown = sanitize::escape_command(name).replace('\n', "⏎");
        let mark = if name == current { "   (current)" } else { "" };
        out.push_str(&format!("\n  {shown}{mark}"));
    }
    out.push_str("\n/model NAME switches to one");
    out
}

impl Session {
    /// `/model` alone: offers the server's models and switches to the one picked. Esc or
    /// Ctrl+C stops the wait for the server's list (nothing changes); a signal that ends the
    /// session is handed back.
    pub(super) async fn choose_model(&mut self) -> Result<(), Stopped> {
        let current = self.provider.model.clone();
        let described = sanitize::escape(&self.model.describe()).into_owned();
        self.say(&format!(
            "model: {described} · asking the server which models it serves… (Esc stops)"
        ));
        let served = match self.served_models_or_stop().await {
            Asked::Answered(served) => served,
            Asked::Stopped => {
                self.say(&format!(
                    "agent: stopped asking the server; the model stays {described}"
                ));
                return Ok(());
            }
            Asked::Ended(stopped) => return Err(stopped),
        };
        let offer = offer(served, self.provider.provider, &current);
        if self.approver.can_ask().is_err() {
            self.say(&printed(&offer, &current));
            return Ok(());
        }
        let question = if offer.served {
            "Talk to which model? (the server's list)"
        } else {
            "Talk to which model? (the server does not list its models: well-known ones)"
        };
        let rows = labels(&offer.names, &current);
        let color = self.color;
        self.lock_composer().hide();
        self.approver.screen.pause();
        let picked = tokio::task::spawn_blocking(move || pick::one(question, &rows, color)).await;
        self.approver.screen.resume();
        match picked {
            Ok(Ok(index)) => {
                let name = offer.names[index].clone();
                self.switch_model(name);
            }
            Ok(Err(pick::PickError::Cancelled)) => {
                self.say(&format!("agent: the model stays {described}"));
            }
            Ok(Err(pick::PickError::Failed(why))) => {
                let why = sanitize::escape_prose(&why).into_owned();
                self.say(&format!("agent: cannot show the list: {why}"));
                self.say(&printed(&offer, &current));
            }
            Err(_) => self.say(&printed(&offer, &current)),
        }
        Ok(())
    }

    /// Asks the server for its models while the person may stop the wait: Esc or Ctrl+C (or
    /// SIGINT) stops it at once; other keys go to the composer, a message sent meanwhile is
    /// queued.
    async fn served_models_or_stop(&mut self) -> Asked {
        let served = self.model.served_models();
        tokio::pin!(served);
        loop {
            tokio::select! {
                served = &mut served => return Asked::Answered(served),
                event = self.keys.next() => match event {
                    None => return Asked::Stopped,
                    Some(event) if stops_a_wait(&event) => return Asked::Stopped,
                    Some(event) => {
                        if let Action::Submit(line) = lock(&self.composer).handle(&event) {
                            self.pending.push_back(line);
                        }
                    }
                },
                stopped = self.stops.recv() => match stopped {
                    Some(stopped) if stopped.interrupt => return Asked::Stopped,
                    Some(stopped) => return Asked::Ended(stopped),
                    None => {}
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn the_servers_list_comes_first_with_the_current_model_in_it() {
        let served = offer(
            Some(names(&["b", "a", "b", " "])),
            ProviderKind::OpenAi,
            "a",
        );
        assert_eq!(
            served,
            Offer {
                names: names(&["b", "a"]),
                served: true
            }
        );
        let without = offer(Some(names(&["b"])), ProviderKind::OpenAi, "mine");
        assert_eq!(without.names, names(&["mine", "b"]));
    }

    #[test]
    fn no_list_or_an_empty_one_offers_the_well_known_models() {
        for served in [None, Some(Vec::new())] {
            let known = offer(served, ProviderKind::Anthropic, "claude-x");
            assert!(!known.served);
            assert_eq!(known.names[0], "claude-x");
            assert!(known.names.contains(&"claude-sonnet-4-5".to_owned()));
            assert!(known.names.iter().all(|name| name.starts_with("claude")));
        }
        // A provider the table does not know still offers its default.
        let ollama = offer(None, ProviderKind::Ollama, "qwen");
        assert_eq!(ollama.names, names(&["qwen", "llama3.2"]));
    }

    #[test]
    fn a_long_list_is_cut_and_names_are_escaped_when_printed() {
        let many: Vec<String> = (0..MOST_OFFERED * 2).map(|n| format!("m{n}")).collect();
        assert_eq!(
            offer(Some(many), ProviderKind::OpenAi, "m0").names.len(),
            MOST_OFFERED
        );
        let hostile = offer(
            Some(names(&["ok", "evil\u{1b}]0;owned\u{7}\nnext"])),
            ProviderKind::OpenAi,
            "ok",
        );
        let shown = printed(&hostile, "ok");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown:?}"
        );
        assert_eq!(shown.lines().count(), 4, "{shown}");
        assert!(shown.contains("  ok   (current)"), "{shown}");
        assert_eq!(labels(&names(&["ok", "b"]), "ok")[0], "ok   (current)");
    }
}
