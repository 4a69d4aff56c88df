//! One model turn's ends: the request with its text streamed as events, the `turn_end`
//! that counts it, and the events that close the run — a reply cut at the output limit or
//! stopped by a content filter, a provider's error, and `done`.

use super::model_text::ModelText;
use super::reply::cut_note;
use super::{Config, Event, Outcome, Stats, budget};
use crate::model::{Model, ModelError, Request, StopReason};

/// One request to the model, its text and reasoning streamed as (redacted) events; `None`
/// when `--max-time` ran out first.
pub(super) async fn ask<M: Model>(
    model: &mut M,
    request: &Request<'_>,
    config: &Config,
    clock: &budget::Clock,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Option<Result<crate::model::Reply, ModelError>> {
    let mut deltas = ModelText::new(&config.secrets);
    let completed = clock
        .within(model.complete(request, &mut |delta| deltas.push(delta, emit)))
        .await;
    deltas.finish(emit);
    completed
}

/// Reports a provider's `error` (an `error` event, then `done`) and returns it.
pub(super) fn failed(
    error: ModelError,
    stats: &Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) -> ModelError {
    emit(Event::Error {
        code: error.code().to_owned(),
        message: error.to_string(),
    });
    emit(done(Outcome::Error, stats, None, None));
    error
}

/// Counts a finished turn's tokens and records the turn (with what a continued run needs:
/// the calls as they may be sent back, and how many were cut off); checks what background
/// processes planted meanwhile (the turn may be the last: the person's git comes next).
pub(super) fn end_turn(
    reply: &crate::model::Reply,
    cut: usize,
    stats: &mut Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) {
    if let Some(usage) = reply.usage {
        *stats.usage.get_or_insert_default() += usage;
    }
    emit(Event::TurnEnd {
        turn: stats.turns,
        usage: reply.usage,
        tool_calls: crate::model::repair::sendable_calls(&reply.tool_calls).0,
        replay: reply.reasoning.replay.clone(),
        cut_calls: u32::try_from(cut).unwrap_or(u32::MAX),
    });
    super::check_background(emit);
}

/// Ends the run when the reply was cut at the output limit (the text is the answer, with a
/// note; tool calls in a cut reply are not run, their arguments may be cut too) or stopped by
/// a content filter (an error). `None`: the reply is whole.
pub(super) fn cut_or_filtered(
    reply: &crate::model::Reply,
    (cut, limit): (usize, Option<u32>),
    stats: &Stats,
    emit: &mut (dyn FnMut(Event) + Send),
) -> Option<Result<Outcome, ModelError>> {
    match reply.stop {
        StopReason::MaxTokens => {
            let note = cut_note(reply.tool_calls.len(), cut, limit, reply.usage);
            emit(done(
                Outcome::Truncated,
                stats,
                Some(reply.text.clone()),
                Some(&note),
            ));
            Some(Ok(Outcome::Truncated))
        }
        StopReason::ContentFilter => {
            let error = ModelError::ContentFilter;
            emit(Event::Error {
                code: error.code().to_owned(),
                message: error.to_string(),
            });
            let note = "the provider's content filter stopped the reply";
            emit(done(Outcome::ContentFilter, stats, None, Some(note)));
            Some(Err(error))
        }
        StopReason::EndTurn | StopReason::ToolUse | StopReason::Other => None,
    }
}

pub(super) fn done(
    outcome: Outcome,
    stats: &Stats,
    answer: Option<String>,
    note: Option<&str>,
) -> Event {
    Event::Done {
        outcome,
        turns: stats.turns,
        commands_run: stats.commands_run,
        commands_denied: stats.commands_denied,
        denials: stats.denials.clone(),
        usage: stats.usage,
        answer,
        note: note.map(str::to_owned),
        changes: None,
    }
}
