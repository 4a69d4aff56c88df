//! One call of `web_fetch`: arguments checked, the page fetched by the agent itself under the
//! run's host rules (`net::fetch`) — at a terminal a host no rule decides is asked about while
//! the fetch waits, as for a command's connection — each hop's decision a `network` event, the
//! page made text (`tools::web_fetch`) and reported like a file tool's result (`tool_call`,
//! `tool_result`; the terminal shows the escaped summary line).

use super::{Denial, Event, Loop, Stats};
use crate::approve::Approve;
use crate::exec::ErrorCode;
use crate::model::ToolCall;
use crate::net::fetch::FetchError;
use crate::tool_error::{ToolError, ToolErrorCode};
use crate::tools::Output;
use crate::tools::web_fetch::{self, FetchArgs};

impl Loop<'_> {
    /// Handles a `web_fetch` call (only offered with a fetcher).
    pub(super) async fn handle_web_fetch<A: Approve>(
        &mut self,
        call: &ToolCall,
        approver: &mut A,
        stats: &mut Stats,
        emit: &mut (dyn FnMut(Event) + Send),
    ) -> String {
        let parsed = FetchArgs::parse(&call.arguments);
        let label = match &parsed {
            Ok(args) => format!("fetch {}", args.url.trim()),
            Err(_) => "fetch <invalid call>".to_owned(),
        };
        emit(Event::FileCall {
            id: call.id.clone(),
            tool: call.name.clone(),
            input: parsed
                .as_ref()
                .ok()
                .map(|args| serde_json::json!({"url": args.url, "max_bytes": args.max_bytes})),
            label: label.clone(),
            arguments: parsed.is_err().then(|| call.arguments.clone()),
        });
        let result = match (parsed, &self.config.web_fetch) {
            (Err(error), _) => Err(error),
            (Ok(_), None) => Err(ToolError::new(
                ToolErrorCode::ToolDisabled,
                "web_fetch is not offered in this run ([network] mode is \"off\")",
            )),
            (Ok(args), Some(fetcher)) => {
                let limit = args.limit();
                let fetch = Box::pin(fetcher.fetch(&args.url, limit, &call.id));
                let fetched = match &self.config.network_questions {
                    Some(questions) => {
                        let asking = (call.id.as_str(), label.as_str());
                        super::host_prompt::answering(fetch, questions, approver, asking, None)
                            .await
                    }
                    None => fetch.await,
                };
                for decision in fetcher.log().take().0 {
                    emit(Event::Network(decision));
                }
                match fetched {
                    Ok(page) => web_fetch::page_content_apart(page, limit).await,
                    Err(error) => Err(failed(&label, error, stats)),
                }
            }
        };
        if result.is_ok() {
            stats.commands_run += 1;
        }
        let result = result.map(|(content, summary)| Output {
            content,
            summary,
            diff: None,
        });
        super::file_call::report(call, &label, result, emit)
    }
}

/// The tool error for a fetch that failed; a refusal is a denial of the run too.
fn failed(label: &str, error: FetchError, stats: &mut Stats) -> ToolError {
    match error {
        FetchError::Invalid(why) => ToolError::new(ToolErrorCode::InvalidArguments, why),
        FetchError::Failed(why) => ToolError::new(ToolErrorCode::Exec(ErrorCode::Io), why),
        FetchError::Refused(url, refusal) => {
            let mut reason = format!("{url} is refused: {}", refusal.why);
            if let Some(setting) = &refusal.allow_with {
                reason.push_str(&format!("; to allow it, add `{setting}` to the settings"));
            }
            stats.commands_denied += 1;
            stats.denials.push(Denial {
                command: label.to_owned(),
                reason: reason.clone(),
                allow: None,
            });
            ToolError::new(
                ToolErrorCode::Denied,
                format!(
                    "{reason}. Do not retry it or work around it; tell the user which \
                         setting would allow it."
                ),
            )
        }
    }
}
