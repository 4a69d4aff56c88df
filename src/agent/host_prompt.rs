//! Answering the proxy's questions about new hosts while a command runs: the command's
//! future is driven, and when the proxy asks (a host no rule decides, at a terminal), the
//! person is asked — the command's output waits meanwhile, as its connection does — and the
//! answer goes back. A question whose connection is gone already (its command ended) is
//! dropped unasked.

use crate::approve::{Approve, HostRequest};
use crate::net::ask::{HostAnswer, MAX_WAIT, Questions};

/// Drives `run` to its end, answering `questions` through `approver`; `command` is the text
/// shown in the question.
pub(super) async fn answering<T, A: Approve>(
    run: impl Future<Output = T>,
    questions: &Questions,
    approver: &mut A,
    command: &str,
) -> T {
    let mut questions = questions.lock().await;
    tokio::pin!(run);
    loop {
        tokio::select! {
            done = &mut run => return done,
            Some(question) = questions.recv() => {
                if question.reply.is_closed() {
                    continue;
                }
                let request = HostRequest {
                    host: question.host.clone(),
                    port: question.port,
                    command: command.to_owned(),
                };
                let answer = tokio::time::timeout(MAX_WAIT, approver.ask_host(&request))
                    .await
                    .unwrap_or(HostAnswer::Deny);
                let _ = question.reply.send(answer);
            }
        }
    }
}
