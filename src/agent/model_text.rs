//! The model's text and reasoning of one turn as `text_delta` / `reasoning_delta` events,
//! with secrets redacted on the stream (a key the model writes in two deltas is found whole).
//! It does not decide what a secret is: the run's [`exec::Secrets`] say.

use super::Event;
use crate::exec;
use crate::model::Delta;

/// The model's text and reasoning of one turn as events, redacted on the stream: a secret the
/// model writes in two deltas is found whole. A change from one kind to the other ends the
/// piece of the former, so the events keep the model's order.
pub(super) struct ModelText {
    text: exec::RedactedStream,
    reasoning: exec::RedactedStream,
}

impl ModelText {
    pub(super) fn new(secrets: &exec::Secrets) -> Self {
        Self {
            text: secrets.stream(),
            reasoning: secrets.stream(),
        }
    }

    pub(super) fn push(&mut self, delta: Delta<'_>, emit: &mut (dyn FnMut(Event) + Send)) {
        let (reasoning, text) = match delta {
            Delta::Text(text) => (false, text),
            Delta::Reasoning(text) => (true, text),
            Delta::Retry { .. } | Delta::Warning { .. } => {
                // News about the request: what was held back goes out first.
                self.finish(emit);
                if let Some(event) = news_event(delta) {
                    emit(event);
                }
                return;
            }
        };
        self.end(!reasoning, emit);
        let mut out = String::new();
        self.stream(reasoning).push(text, &mut out);
        delta_event(reasoning, out, emit);
    }

    /// The turn's reply ended (or broke off): what was held back goes out.
    pub(super) fn finish(&mut self, emit: &mut (dyn FnMut(Event) + Send)) {
        self.end(true, emit);
        self.end(false, emit);
    }

    fn end(&mut self, reasoning: bool, emit: &mut (dyn FnMut(Event) + Send)) {
        let mut out = String::new();
        self.stream(reasoning).finish(&mut out);
        delta_event(reasoning, out, emit);
    }

    fn stream(&mut self, reasoning: bool) -> &mut exec::RedactedStream {
        if reasoning {
            &mut self.reasoning
        } else {
            &mut self.text
        }
    }
}

/// Emits a text or reasoning delta of `text`, unless it is empty.
fn delta_event(reasoning: bool, text: String, emit: &mut (dyn FnMut(Event) + Send)) {
    if text.is_empty() {
        return;
    }
    emit(if reasoning {
        Event::ReasoningDelta { text }
    } else {
        Event::TextDelta { text }
    });
}

/// The event for news about a request on its way (a retry, a warning about the server);
/// `None` for the reply's own text and reasoning.
fn news_event(delta: Delta<'_>) -> Option<Event> {
    match delta {
        Delta::Text(_) | Delta::Reasoning(_) => None,
        Delta::Retry {
            attempt,
            tries,
            delay,
            error,
        } => Some(Event::Retry {
            attempt,
            tries,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            code: error.code().to_owned(),
            reason: error.to_string(),
        }),
        Delta::Warning { code, message } => Some(Event::Warning {
            code: code.to_owned(),
            message: message.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Generated cases: the key cut into two text deltas at every place, with reasoning around
    /// it. The events never hold it whole or in pieces, and keep the model's order.
    #[test]
    fn a_key_in_two_text_deltas_is_redacted_and_the_order_kept() {
        const KEY: &str = "sk-model-said-0123456789";
        let secrets = exec::Secrets::new([KEY]);
        let text = format!("the key is {KEY}.");
        for cut in 1..text.len() {
            let mut events = Vec::new();
            let mut emit = |event: Event| events.push(event);
            let mut model = ModelText::new(&secrets);
            model.push(Delta::Reasoning("thinking sk-"), &mut emit);
            model.push(Delta::Text(&text[..cut]), &mut emit);
            model.push(Delta::Text(&text[cut..]), &mut emit);
            model.push(Delta::Reasoning("more"), &mut emit);
            model.finish(&mut emit);
            let (mut reasoning, mut said) = (String::new(), String::new());
            let mut kinds = Vec::new();
            for event in &events {
                match event {
                    Event::ReasoningDelta { text } => {
                        reasoning.push_str(text);
                        kinds.push("reasoning");
                    }
                    Event::TextDelta { text } => {
                        assert!(!text.contains("sk-model"), "cut {cut}: {events:?}");
                        said.push_str(text);
                        kinds.push("text");
                    }
                    other => panic!("{other:?}"),
                }
            }
            kinds.dedup();
            assert_eq!(kinds, ["reasoning", "text", "reasoning"], "cut {cut}");
            assert_eq!(said, "the key is [REDACTED].", "cut {cut}");
            assert_eq!(reasoning, "thinking sk-more", "cut {cut}");
        }
    }
}
