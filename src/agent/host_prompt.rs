//! Answering the proxy's questions about new hosts while a command runs: the command's
//! future is driven, and when the proxy asks (a host no rule decides, at a terminal), the
//! person is asked — the command's output waits meanwhile, as its connection does — and the
//! answer goes back. A question is only ever shown under the command that made it: one whose
//! connection is gone already is dropped unasked, one made by another command (or by none) is
//! refused unasked, and whatever is still waiting when the command ends is refused, so a late
//! connection of one command can never be answered — or saved for good — under the next
//! command's text.

use crate::approve::{Approve, HostRequest};
use crate::net::ask::{HostAnswer, HostQuestion, MAX_WAIT, Questions};

/// Drives `run` to its end, answering `questions` through `approver`; `id` is the running
/// call's id (questions made by any other are refused) and `command` the text shown in the
/// question.
pub(super) async fn answering<T, A: Approve>(
    run: impl Future<Output = T>,
    questions: &Questions,
    approver: &mut A,
    id: &str,
    command: &str,
) -> T {
    let mut questions = questions.lock().await;
    tokio::pin!(run);
    let done = loop {
        tokio::select! {
            done = &mut run => break done,
            Some(question) = questions.recv() => {
                if question.reply.is_closed() {
                    continue;
                }
                if !made_by(&question, id) {
                    let _ = question.reply.send(HostAnswer::Deny);
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
    };
    while let Ok(question) = questions.try_recv() {
        let _ = question.reply.send(HostAnswer::Deny);
    }
    done
}

/// Whether `question` came from the command whose call id is `id`.
fn made_by(question: &HostQuestion, id: &str) -> bool {
    question.command.as_deref() == Some(id)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::sync::{mpsc, oneshot};

    use super::*;
    use crate::approve::Approval;

    /// An approver that records whether it was asked and answers `Always`.
    #[derive(Default)]
    struct Recording {
        asked: Vec<String>,
    }

    impl Approve for Recording {
        fn can_ask(&self) -> Result<(), &'static str> {
            Ok(())
        }

        async fn ask(&mut self, _request: &crate::approve::ApprovalRequest) -> Approval {
            unreachable!("no command is approved here")
        }

        async fn ask_file(&mut self, _request: &crate::approve::FileApprovalRequest) -> Approval {
            unreachable!("no file is approved here")
        }

        async fn ask_host(&mut self, request: &HostRequest) -> HostAnswer {
            self.asked.push(request.host.clone());
            HostAnswer::Always
        }
    }

    fn question(
        host: &str,
        command: Option<&str>,
    ) -> (HostQuestion, oneshot::Receiver<HostAnswer>) {
        let (reply, answer) = oneshot::channel();
        let question = HostQuestion {
            host: host.to_owned(),
            port: 443,
            command: command.map(str::to_owned),
            reply,
        };
        (question, answer)
    }

    #[tokio::test]
    async fn only_the_running_commands_questions_are_asked_and_the_rest_refused() {
        let (send, receive) = mpsc::unbounded_channel();
        let questions: Questions = Arc::new(tokio::sync::Mutex::new(receive));
        let (own, own_answer) = question("own.test", Some("call_2"));
        let (other, other_answer) = question("evil.test", Some("call_1"));
        let (nobody, nobody_answer) = question("nobody.test", None);
        send.send(other).unwrap();
        send.send(nobody).unwrap();
        send.send(own).unwrap();
        let (later, later_answer) = question("late.test", Some("call_2"));
        let mut approver = Recording::default();
        let run = async {
            // Let the loop take the three questions first.
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            // A question still waiting when the command ends.
            send.send(later).unwrap();
        };
        answering(run, &questions, &mut approver, "call_2", "npm test").await;
        assert_eq!(approver.asked, ["own.test"]);
        assert_eq!(own_answer.await.unwrap(), HostAnswer::Always);
        assert_eq!(other_answer.await.unwrap(), HostAnswer::Deny);
        assert_eq!(nobody_answer.await.unwrap(), HostAnswer::Deny);
        assert_eq!(later_answer.await.unwrap(), HostAnswer::Deny);
    }
}
