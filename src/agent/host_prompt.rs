//! Answering the proxy's questions about new hosts while a command runs: the command's
//! future is driven all along, and when the proxy asks (a host no rule decides, at a
//! terminal), the person is asked while the command goes on — its output is kept off the
//! screen meanwhile ([`Hold`]) and shown after the answer, its timeout holds, and when it ends
//! the question ends with it (refused, for that connection only). A question is only ever
//! shown under the command that made it: one whose connection is gone already is dropped
//! unasked, one made by another command (or by none) is refused unasked, and whatever is still
//! waiting when the command ends is refused, so a late connection of one command can never be
//! answered — or saved for good — under the next command's text. A `web_fetch` question names
//! the URL of the hop that asks (after a redirect, not only the first).

use std::sync::{Arc, Mutex, PoisonError};

use super::Event;
use crate::approve::{Approve, HostRequest};
use crate::net::ask::{HostAnswer, HostQuestion, MAX_WAIT, Questions};

/// Most bytes of a command's output kept off the screen while a question is shown; the rest
/// is counted and said (the result has what the command printed, within its cap).
const MAX_HELD_BYTES: usize = 1024 * 1024;

/// Drives `run` to its end, answering `questions` through `approver`; `id` is the running
/// call's id (questions made by any other are refused) and `command` the text shown in the
/// question. `hold`, when given, keeps the command's output off the screen while a question
/// is shown.
pub(super) async fn answering<T, A: Approve>(
    run: impl Future<Output = T>,
    questions: &Questions,
    approver: &mut A,
    (id, command): (&str, &str),
    hold: Option<&Hold>,
) -> T {
    let mut questions = questions.lock().await;
    tokio::pin!(run);
    let done = loop {
        let question = tokio::select! {
            done = &mut run => break done,
            Some(question) = questions.recv() => question,
        };
        if question.reply.is_closed() || !made_by(&question, id) {
            // Refused unasked (dropped: not remembered for the run).
            continue;
        }
        let request = HostRequest {
            host: question.host.clone(),
            port: question.port,
            command: label(command, question.url.as_deref()),
        };
        hold.inspect(|hold| hold.set(true));
        let asked = tokio::time::timeout(MAX_WAIT, approver.ask_host(&request));
        tokio::pin!(asked);
        let answer = tokio::select! {
            // The command ended first: the question ends with it (the prompt is put away).
            done = &mut run => break done,
            answer = &mut asked => answer.unwrap_or(HostAnswer::NoAnswer),
        };
        hold.inspect(|hold| hold.set(false));
        if answer != HostAnswer::NoAnswer {
            let _ = question.reply.send(answer);
        }
    };
    hold.inspect(|hold| hold.set(false));
    // Left unanswered: refused, this connection only.
    while questions.try_recv().is_ok() {}
    done
}

/// The command shown in a question: `fetch URL` with the hop's URL added when a redirect led
/// there.
fn label(command: &str, url: Option<&str>) -> String {
    match url {
        Some(url) if command != format!("fetch {url}") => {
            format!("{command} (redirected to {url})")
        }
        _ => command.to_owned(),
    }
}

/// Whether `question` came from the command whose call id is `id`.
fn made_by(question: &HostQuestion, id: &str) -> bool {
    question.command.as_deref() == Some(id)
}

/// Output a command printed while a question was on the screen, passed on after the answer.
#[derive(Debug, Default, Clone)]
pub(super) struct Hold(Arc<Mutex<Held>>);

#[derive(Debug, Default)]
struct Held {
    on: bool,
    events: Vec<Event>,
    bytes: usize,
    dropped: usize,
}

impl Hold {
    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, on: bool) {
        self.held().on = on;
    }

    /// Passes `event` on through `emit`, after what was kept; while a question is shown it is
    /// kept instead (at most [`MAX_HELD_BYTES`] of text, the rest counted).
    pub(super) fn pass(&self, event: Event, emit: &mut (dyn FnMut(Event) + Send)) {
        let mut held = self.held();
        if held.on {
            let size = match &event {
                Event::OutputDelta { text, .. } => text.len(),
                _ => 0,
            };
            if held.bytes + size > MAX_HELD_BYTES {
                held.dropped += size;
            } else {
                held.bytes += size;
                held.events.push(event);
            }
            return;
        }
        let kept = take(&mut held);
        drop(held);
        kept.into_iter().for_each(&mut *emit);
        emit(event);
    }

    /// Passes on what is still kept.
    pub(super) fn release(&self, emit: &mut (dyn FnMut(Event) + Send)) {
        let kept = take(&mut self.held());
        kept.into_iter().for_each(emit);
    }
}

/// What was kept, and a line saying how much was not, in order.
fn take(held: &mut Held) -> Vec<Event> {
    let mut kept = std::mem::take(&mut held.events);
    held.bytes = 0;
    let dropped = std::mem::take(&mut held.dropped);
    if dropped > 0
        && let Some(Event::OutputDelta { id, stream, .. }) = kept.last().cloned()
    {
        kept.push(Event::OutputDelta {
            id,
            stream,
            text: format!(
                "\n[agent: {dropped} more bytes of output came while a question was shown and \
                 are not shown; the result has what the command printed]\n"
            ),
        });
    }
    kept
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::sync::{mpsc, oneshot};

    use super::*;
    use crate::approve::Approval;

    /// An approver that records whether it was asked and answers `Always` — or, `silent`,
    /// never answers.
    #[derive(Default)]
    struct Recording {
        asked: Vec<String>,
        silent: bool,
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
            if self.silent {
                std::future::pending::<()>().await;
            }
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
            url: None,
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
            // The command goes on until its own question is answered (the loop takes the
            // two before it first)…
            let answer = own_answer.await;
            // …then ends with a question still waiting.
            send.send(later).unwrap();
            answer
        };
        let own_answer =
            answering(run, &questions, &mut approver, ("call_2", "npm test"), None).await;
        assert_eq!(approver.asked, ["own.test"]);
        assert_eq!(own_answer.unwrap(), HostAnswer::Always);
        // Refused unasked: dropped, so the asker remembers nothing for the run.
        assert!(other_answer.await.is_err());
        assert!(nobody_answer.await.is_err());
        assert!(later_answer.await.is_err());
    }

    fn output(text: &str) -> Event {
        Event::OutputDelta {
            id: "call_2".to_owned(),
            stream: crate::exec::Stream::Stdout,
            text: text.to_owned(),
        }
    }

    /// While a question is shown the command goes on: its output is kept off the screen and
    /// passed on after, and when it ends the question ends with it, never answered, so that
    /// connection alone is refused (a question the command had to outwait was refused for the
    /// run after [`MAX_WAIT`]).
    #[tokio::test]
    async fn the_command_goes_on_while_a_question_is_shown_and_ends_it() {
        let (send, receive) = mpsc::unbounded_channel();
        let questions: Questions = Arc::new(tokio::sync::Mutex::new(receive));
        let (own, own_answer) = question("own.test", Some("call_2"));
        let hold = Hold::default();
        let shown = Arc::new(Mutex::new(Vec::new()));
        let mut screen = {
            let shown = Arc::clone(&shown);
            move |event: Event| shown.lock().unwrap().push(event)
        };
        let run = {
            let hold = hold.clone();
            let shown = Arc::clone(&shown);
            async move {
                let mut screen = move |event: Event| shown.lock().unwrap().push(event);
                hold.pass(output("before\n"), &mut screen);
                send.send(own).unwrap();
                while !hold.held().on {
                    tokio::task::yield_now().await;
                }
                hold.pass(output("during\n"), &mut screen);
                "done"
            }
        };
        let mut silent = Recording {
            silent: true,
            ..Recording::default()
        };
        let done = answering(
            run,
            &questions,
            &mut silent,
            ("call_2", "npm test"),
            Some(&hold),
        )
        .await;
        assert_eq!(done, "done");
        assert!(own_answer.await.is_err(), "unanswered is not an answer");
        let texts = |shown: &[Event]| -> Vec<String> {
            shown
                .iter()
                .filter_map(|event| match event {
                    Event::OutputDelta { text, .. } => Some(text.clone()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(texts(&shown.lock().unwrap()), ["before\n"]);
        hold.release(&mut screen);
        assert_eq!(texts(&shown.lock().unwrap()), ["before\n", "during\n"]);
    }

    /// What is kept while a question is shown is bounded; the rest is counted and said.
    #[test]
    fn held_output_is_bounded() {
        let hold = Hold::default();
        let mut shown = Vec::new();
        let mut screen = |event: Event| shown.push(event);
        hold.set(true);
        let chunk = "x".repeat(64 * 1024);
        for _ in 0..40 {
            hold.pass(output(&chunk), &mut screen);
        }
        assert!(hold.held().bytes <= MAX_HELD_BYTES);
        hold.set(false);
        hold.release(&mut screen);
        let last = match shown.last() {
            Some(Event::OutputDelta { text, .. }) => text.clone(),
            other => panic!("{other:?}"),
        };
        assert!(
            last.contains(&format!("{} more bytes", 24 * 64 * 1024)),
            "{last}"
        );
        assert_eq!(shown.len(), 17);
    }

    #[test]
    fn a_redirected_fetch_names_the_hop() {
        assert_eq!(
            label("fetch https://docs.test/x", Some("https://docs.test/x")),
            "fetch https://docs.test/x"
        );
        assert_eq!(
            label("fetch https://docs.test/x", Some("https://evil.test/y")),
            "fetch https://docs.test/x (redirected to https://evil.test/y)"
        );
        assert_eq!(label("npm test", None), "npm test");
    }
}
