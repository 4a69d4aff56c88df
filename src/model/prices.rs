//! What well-known models cost: the dated table in `assets/prices.toml` (dollars per million
//! tokens), the [`Price`] of a model named there, what a [`Usage`] costs at a price, and the
//! table's models of one provider (the list `/model` offers when a server does not say).
//! Settings that override a price are the caller's.

use std::sync::OnceLock;

use serde::Deserialize;

use super::{ProviderKind, Usage};

const PRICES_TOML: &str = include_str!("../../assets/prices.toml");

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Price {
    /// An input token not read from the cache.
    pub input: f64,
    /// An output token.
    pub output: f64,
    /// An input token read from the prompt cache (`None`: as `input`).
    #[serde(default)]
    pub cached: Option<f64>,
    /// An input token written to the prompt cache (`None`: as `input`).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// The dollars `usage` costs at this price.
    #[must_use]
    pub fn cost(&self, usage: &Usage) -> f64 {
        let plain = usage
            .input
            .saturating_sub(usage.cache_read)
            .saturating_sub(usage.cache_write);
        #[expect(clippy::cast_precision_loss, reason = "token counts far below 2^52")]
        let per_million = |tokens: u64, price: f64| tokens as f64 / 1e6 * price;
        per_million(plain, self.input)
            + per_million(usage.cache_read, self.cached.unwrap_or(self.input))
            + per_million(usage.cache_write, self.cache_write.unwrap_or(self.input))
            + per_million(usage.output, self.output)
    }
}

/// One model of the table.
#[derive(Debug, Deserialize)]
struct Entry {
    name: String,
    #[serde(default)]
    also: Vec<String>,
    provider: ProviderKind,
    #[serde(flatten)]
    price: Price,
}

/// The whole table.
#[derive(Debug, Deserialize)]
struct Table {
    as_of: String,
    model: Vec<Entry>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    // The file is part of the binary and a test reads it: it parses.
    TABLE.get_or_init(|| {
        toml::from_str(PRICES_TOML).unwrap_or_else(|_| Table {
            as_of: String::new(),
            model: Vec::new(),
        })
    })
}

/// The day the table's prices were read (`2026-10-01`).
#[must_use]
pub fn as_of() -> &'static str {
    &table().as_of
}

/// Whether `model` (lower case) is `name`, or `name` followed by a date
/// (`-20250929`, `-2025-04-14`) or by `-latest`.
fn names(model: &str, name: &str) -> bool {
    let Some(rest) = model.strip_prefix(name) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix('-') else {
        return rest.is_empty();
    };
    let digits = rest.chars().filter(char::is_ascii_digit).count();
    rest == "latest" || (digits >= 6 && rest.chars().all(|c| c.is_ascii_digit() || c == '-'))
}

/// The price the table lists for `model` (`provider/name` or a bare name; the part after
/// the last `/` counts, so a gateway's `openai/gpt-4.1` is found too), with the table's
/// name for it; `None` for a model it does not list.
#[must_use]
pub fn known(model: &str) -> Option<(&'static str, Price)> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .trim()
        .to_ascii_lowercase();
    table()
        .model
        .iter()
        .find(|entry| {
            std::iter::once(&entry.name)
                .chain(&entry.also)
                .any(|known| names(&name, known))
        })
        .map(|entry| (entry.name.as_str(), entry.price))
}

/// The table's models of `provider`, in its order.
#[must_use]
pub fn models_of(provider: ProviderKind) -> Vec<String> {
    table()
        .model
        .iter()
        .filter(|entry| entry.provider == provider)
        .map(|entry| entry.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_table_parses_and_every_price_is_sane() {
        let table: Table = toml::from_str(PRICES_TOML).unwrap();
        assert!(
            table.as_of.len() == 10 && table.as_of.starts_with("20"),
            "{}",
            table.as_of
        );
        assert!(table.model.len() >= 10);
        for entry in &table.model {
            let price = entry.price;
            assert!(
                price.input > 0.0 && price.output >= price.input,
                "{entry:?}"
            );
            for part in [price.cached, price.cache_write].into_iter().flatten() {
                assert!(part > 0.0 && part < price.output, "{entry:?}");
            }
            // Every name finds its own entry (no earlier one shadows it).
            for name in std::iter::once(&entry.name).chain(&entry.also) {
                assert_eq!(
                    known(name).map(|(found, _)| found),
                    Some(entry.name.as_str())
                );
            }
        }
    }

    #[test]
    fn a_name_matches_itself_a_dated_version_or_latest_and_nothing_else() {
        for (model, listed) in [
            ("gpt-4.1", Some("gpt-4.1")),
            ("openai/gpt-4.1", Some("gpt-4.1")),
            ("openai/openai/GPT-4.1", Some("gpt-4.1")),
            ("gpt-4.1-2025-04-14", Some("gpt-4.1")),
            ("gpt-4.1-mini", Some("gpt-4.1-mini")),
            ("gpt-4.1-mini-2025-04-14", Some("gpt-4.1-mini")),
            (
                "anthropic/claude-sonnet-4-5-20250929",
                Some("claude-sonnet-4-5"),
            ),
            ("claude-sonnet-4-20250514", Some("claude-sonnet-4")),
            ("claude-sonnet-4-0", Some("claude-sonnet-4")),
            ("claude-3-5-haiku-latest", Some("claude-3-5-haiku")),
            ("claude-opus-4-1", Some("claude-opus-4-1")),
            // Variants the table does not list have no price, never a cousin's.
            ("gpt-4.1-turbo", None),
            ("gpt-5-pro", None),
            ("gpt-5-codex", None),
            ("gpt-4o-audio-preview", None),
            ("claude-sonnet-4-7", None),
            ("claude-opus-4", None),
            ("o3-pro", None),
            ("o3-mini", None),
            ("gpt-4.1-1", None),
            ("gpt-4.1x", None),
            ("llama3.2", None),
            ("", None),
        ] {
            assert_eq!(known(model).map(|(name, _)| name), listed, "{model}");
        }
    }

    #[test]
    fn cached_and_written_tokens_cost_their_own_price() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cached: Some(0.3),
            cache_write: Some(3.75),
        };
        let usage = Usage {
            input: 2_000_000,
            output: 100_000,
            cache_read: 1_000_000,
            cache_write: 500_000,
        };
        // 0.5M plain · 3 + 1M cached · 0.3 + 0.5M written · 3.75 + 0.1M out · 15
        let expected = 1.5 + 0.3 + 1.875 + 1.5;
        assert!((price.cost(&usage) - expected).abs() < 1e-9);
        let plain = Price {
            cached: None,
            cache_write: None,
            ..price
        };
        assert!((plain.cost(&usage) - (6.0 + 1.5)).abs() < 1e-9);
    }

    #[test]
    fn each_provider_lists_its_own_models() {
        let openai = models_of(ProviderKind::OpenAi);
        assert!(openai.contains(&"gpt-4.1-mini".to_owned()), "{openai:?}");
        assert!(openai.iter().all(|name| !name.starts_with("claude")));
        let anthropic = models_of(ProviderKind::Anthropic);
        assert!(anthropic.iter().all(|name| name.starts_with("claude")));
        assert!(models_of(ProviderKind::Demo).is_empty());
    }
}
