//! What a session's tokens cost, for `/usage`: each request priced as it comes, at the
//! `[model] price_in` / `price_out` settings when set, else at the dated table's price of the
//! model that answered it (an estimate, said so with the table's date); tokens of a model
//! with no price are counted apart and said.

use crate::model::{Usage, prices};
use crate::ui::sanitize;

/// Where a request's price came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Priced {
    /// `[model] price_in` / `price_out`.
    Settings(prices::Price),
    /// The table, under this name.
    Table(&'static str, prices::Price),
    /// No price known.
    Unknown,
}

/// The price of a request to `model` (`provider/name`), `settings` first.
pub(super) fn price_of(settings: Option<(f64, f64)>, model: &str) -> Priced {
    if let Some((input, output)) = settings {
        return Priced::Settings(prices::Price {
            input,
            output,
            cached: None,
            cache_write: None,
        });
    }
    prices::known(model).map_or(Priced::Unknown, |(name, price)| Priced::Table(name, price))
}

/// The session's spending so far.
#[derive(Debug, Default)]
pub(super) struct Spent {
    dollars: f64,
    /// Some of it priced by the settings.
    by_settings: bool,
    /// The table's names it was priced by, in first use order.
    by_table: Vec<&'static str>,
    /// Tokens of models without a price, and the first such model.
    unpriced: Option<(Usage, String)>,
}

impl Spent {
    /// Adds a request's `usage` to `model`, priced as `priced`.
    pub(super) fn add(&mut self, usage: Usage, priced: Priced, model: &str) {
        match priced {
            Priced::Settings(price) => {
                self.dollars += price.cost(&usage);
                self.by_settings = true;
            }
            Priced::Table(name, price) => {
                self.dollars += price.cost(&usage);
                if !self.by_table.contains(&name) {
                    self.by_table.push(name);
                }
            }
            Priced::Unknown => match &mut self.unpriced {
                Some((tokens, _)) => *tokens += usage,
                None => self.unpriced = Some((usage, model.to_owned())),
            },
        }
    }

    /// `/usage`'s cost part: ` · about $0.0123 (…)`, or why there is none; `current` is
    /// the model now talked to (`provider/name`), priced as `now`.
    pub(super) fn text(&self, current: &str, now: Priced) -> String {
        let (mut by_settings, mut by_table) = (self.by_settings, self.by_table.clone());
        if !by_settings && by_table.is_empty() {
            // Nothing priced spent yet: $0, at the price the next request will have.
            match now {
                Priced::Settings(_) => by_settings = true,
                Priced::Table(name, _) => by_table.push(name),
                Priced::Unknown => {}
            }
        }
        let priced = by_settings || !by_table.is_empty();
        let mut out = String::new();
        if priced {
            out.push_str(&format!(" · about ${:.4}", self.dollars));
            let mut sources = Vec::new();
            if by_settings {
                sources.push("at your [model] price_in/price_out".to_owned());
            }
            if !by_table.is_empty() {
                sources.push(format!(
                    "estimate, prices of {} for {}; [model] price_in/price_out override them",
                    prices::as_of(),
                    by_table.join(", ")
                ));
            }
            out.push_str(&format!(" ({})", sources.join("; ")));
        }
        if let Some((tokens, model)) = &self.unpriced {
            let model = sanitize::escape(model);
            out.push_str(&format!(
                "\nno price known for {model}: its {tokens} are not in the cost; set [model] \
                 price_in and price_out (per million tokens) to count them"
            ));
        } else if !priced {
            let current = sanitize::escape(current);
            out.push_str(&format!(
                " · no price known for {current}: set [model] price_in and price_out (per \
                 million tokens) to see the cost"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input,
            output,
            ..Usage::default()
        }
    }

    #[test]
    fn settings_win_over_the_table_and_unknown_models_have_no_price() {
        assert_eq!(
            price_of(Some((1.0, 2.0)), "openai/gpt-4.1"),
            Priced::Settings(prices::Price {
                input: 1.0,
                output: 2.0,
                cached: None,
                cache_write: None,
            })
        );
        assert!(matches!(
            price_of(None, "openai/gpt-4.1-2025-04-14"),
            Priced::Table("gpt-4.1", _)
        ));
        assert_eq!(price_of(None, "openai/qwen2.5-coder"), Priced::Unknown);
    }

    #[test]
    fn a_table_price_is_an_estimate_with_its_date() {
        let mut spent = Spent::default();
        let model = "openai/gpt-4.1";
        spent.add(usage(1_000_000, 100_000), price_of(None, model), model);
        let text = spent.text(model, price_of(None, model));
        // 1M in at $2 + 0.1M out at $8.
        assert!(
            text.starts_with(" · about $2.8000 (estimate, prices of 20"),
            "{text}"
        );
        assert!(text.contains("for gpt-4.1;"), "{text}");
        assert!(!text.contains("no price"), "{text}");
    }

    #[test]
    fn each_request_is_priced_at_the_model_that_answered_it() {
        let mut spent = Spent::default();
        spent.add(
            usage(1_000_000, 0),
            price_of(None, "openai/gpt-4.1"),
            "openai/gpt-4.1",
        );
        spent.add(
            usage(1_000_000, 0),
            price_of(None, "openai/gpt-4.1-mini"),
            "openai/gpt-4.1-mini",
        );
        spent.add(usage(500, 7), Priced::Unknown, "openai/local\u{1b}[2J");
        let text = spent.text("openai/gpt-4.1-mini", price_of(None, "openai/gpt-4.1-mini"));
        assert!(text.starts_with(" · about $2.4000 ("), "{text}");
        assert!(text.contains("for gpt-4.1, gpt-4.1-mini;"), "{text}");
        assert!(
            text.contains("no price known for openai/local\\u{1b}[2J: its 500 in · 7 out"),
            "{text}"
        );
    }

    #[test]
    fn nothing_priced_says_how_to_see_the_cost() {
        let spent = Spent::default();
        let text = spent.text("openai/mystery", Priced::Unknown);
        assert_eq!(
            text,
            " · no price known for openai/mystery: set [model] price_in and price_out (per \
             million tokens) to see the cost"
        );
        // Nothing spent yet on a priced model: $0, with where the price comes from.
        let text = spent.text("openai/gpt-4.1", price_of(None, "openai/gpt-4.1"));
        assert!(
            text.starts_with(" · about $0.0000 (estimate, prices of 20")
                && text.contains("gpt-4.1"),
            "{text}"
        );
        let text = spent.text(
            "openai/mystery",
            price_of(Some((1.0, 1.0)), "openai/mystery"),
        );
        assert_eq!(
            text,
            " · about $0.0000 (at your [model] price_in/price_out)"
        );
    }
}
