//! The per-host question: when a command reaches a host no rule allows or denies and a person
//! can answer, the proxy asks (through [`Asking`], answered by whoever holds the
//! [`Questions`] — the run's loop, which shows the prompt) and the command's connection waits,
//! at most [`MAX_WAIT`]; then it is refused. One question at a time; connections to a host
//! while a question about it waits join that question and get its answer (even "once"), and
//! an answer for the run (allow or deny) holds for every later connection to that host, so two
//! connections to the same host ask once. "This project" and "always" hold for the run too
//! (the asker saves them in the settings). A question nobody answered — the wait ran out, or
//! the command ended first — refuses its connections only, not the host for the run.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::host::Host;

/// How long a connection waits for a person's answer before it is refused.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// A person's answer about one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAnswer {
    /// This connection only.
    Once,
    /// Every connection to the host for the rest of the run.
    Run,
    /// From now on in this project (saved in the user settings).
    Project,
    /// From now on everywhere (saved in the user settings).
    Always,
    /// Refused, for the rest of the run.
    Deny,
    /// Nobody answered (the wait ran out, or the command ended while it was asked): these
    /// connections are refused, and the host is asked about again next time.
    NoAnswer,
}

/// One question: the host, the port and the command (tool call id) that reached it.
#[derive(Debug)]
pub struct HostQuestion {
    /// The host, normalised.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The command's tool call id, when known.
    pub command: Option<String>,
    /// The URL asked for, when known (`web_fetch`'s hop, after a redirect not the first).
    pub url: Option<String>,
    /// Where the answer goes; dropped unanswered means refused.
    pub reply: oneshot::Sender<HostAnswer>,
}

/// The receiving end: the run's loop takes questions while a command runs.
pub type Questions = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<HostQuestion>>>;

/// The proxy's side: asks, remembers answers for the run.
#[derive(Debug)]
pub struct Asking {
    to_person: mpsc::UnboundedSender<HostQuestion>,
    /// Hosts answered for the run: allowed (`true`) or refused.
    run: Mutex<BTreeMap<Host, bool>>,
    /// Hosts a question is waiting about, and the connections that joined it.
    waiting: Mutex<BTreeMap<Host, Vec<oneshot::Sender<HostAnswer>>>>,
    /// One question at a time.
    turn: tokio::sync::Mutex<()>,
}

impl Asking {
    /// A new asker and the questions it will send.
    #[must_use]
    pub fn new() -> (Self, Questions) {
        let (to_person, questions) = mpsc::unbounded_channel();
        let asking = Self {
            to_person,
            run: Mutex::default(),
            waiting: Mutex::default(),
            turn: tokio::sync::Mutex::new(()),
        };
        (asking, Arc::new(tokio::sync::Mutex::new(questions)))
    }

    fn remembered(&self, host: &Host) -> Option<bool> {
        self.run
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(host)
            .copied()
    }

    /// Whether `host:port` may be connected to, asking a person unless the run already has
    /// an answer for the host or a question about it is waiting (then its answer is this
    /// one's too); refused when nobody answers within [`MAX_WAIT`]. `url`: what is fetched,
    /// when known. The answer and whether it came from a person now (`false`: remembered).
    pub async fn ask(
        &self,
        host: &Host,
        port: u16,
        command: Option<String>,
        url: Option<String>,
    ) -> (HostAnswer, bool) {
        let joined = {
            let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
            match waiting.get_mut(host) {
                Some(joined) => {
                    let (send, answer) = oneshot::channel();
                    joined.push(send);
                    Some(answer)
                }
                None => {
                    waiting.insert(host.clone(), Vec::new());
                    None
                }
            }
        };
        if let Some(answer) = joined {
            let answer = tokio::time::timeout(MAX_WAIT, answer).await;
            return (
                answer
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or(HostAnswer::NoAnswer),
                true,
            );
        }
        let mut leading = Leading {
            asking: self,
            host,
            answer: HostAnswer::NoAnswer,
        };
        let asked = tokio::time::timeout(MAX_WAIT, async {
            let _turn = self.turn.lock().await;
            // Another connection's question may have answered this one meanwhile.
            if let Some(allowed) = self.remembered(host) {
                return (
                    if allowed {
                        HostAnswer::Run
                    } else {
                        HostAnswer::Deny
                    },
                    false,
                );
            }
            let (reply, answer) = oneshot::channel();
            let question = HostQuestion {
                host: host.display(),
                port,
                command,
                url,
                reply,
            };
            if self.to_person.send(question).is_err() {
                return (HostAnswer::Deny, true);
            }
            (answer.await.unwrap_or(HostAnswer::NoAnswer), true)
        })
        .await;
        let (answer, fresh) = asked.unwrap_or((HostAnswer::NoAnswer, true));
        let for_run = match answer {
            HostAnswer::Once | HostAnswer::NoAnswer => None,
            HostAnswer::Run | HostAnswer::Project | HostAnswer::Always => Some(true),
            HostAnswer::Deny => Some(false),
        };
        if let Some(allowed) = for_run {
            self.run
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(host.clone(), allowed);
        }
        leading.answer = answer;
        (answer, fresh)
    }
}

/// The connection whose question about `host` is waiting: when it is done (or dropped, its
/// connection gone), the connections that joined get its answer (dropped: not answered).
struct Leading<'a> {
    asking: &'a Asking,
    host: &'a Host,
    answer: HostAnswer,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        let joined = self
            .asking
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(self.host)
            .unwrap_or_default();
        for send in joined {
            let _ = send.send(self.answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_answer_for_the_run_is_asked_once() {
        let (asking, questions) = Asking::new();
        let asking = Arc::new(asking);
        let host = Host::parse("new.test").unwrap();
        let answered = tokio::spawn({
            let questions = Arc::clone(&questions);
            async move {
                let mut questions = questions.lock().await;
                let question = questions.recv().await.unwrap();
                assert_eq!((question.host.as_str(), question.port), ("new.test", 443));
                question.reply.send(HostAnswer::Run).unwrap();
            }
        });
        let two = (
            asking.ask(&host, 443, None, None),
            asking.ask(&host, 80, Some("call_1".to_owned()), None),
        );
        let (first, second) = tokio::join!(two.0, two.1);
        answered.await.unwrap();
        // The second joined the first's question.
        assert_eq!([first, second], [(HostAnswer::Run, true); 2]);
        // Nobody is asked again.
        assert!(questions.lock().await.try_recv().is_err());
        assert_eq!(
            asking.ask(&host, 443, None, None).await,
            (HostAnswer::Run, false)
        );
    }

    /// Generated over every answer and 2–5 connections at once: one question, the same
    /// answer for each (even "once"); an unanswered question is remembered for nobody.
    #[tokio::test]
    async fn connections_waiting_on_one_host_share_its_question() {
        for given in [
            HostAnswer::Once,
            HostAnswer::Run,
            HostAnswer::Project,
            HostAnswer::Always,
            HostAnswer::Deny,
            HostAnswer::NoAnswer,
        ] {
            for connections in 2..=5_u16 {
                let (asking, questions) = Asking::new();
                let host = Host::parse("new.test").unwrap();
                let answered = {
                    let questions = Arc::clone(&questions);
                    tokio::spawn(async move {
                        let question = questions.lock().await.recv().await.unwrap();
                        // Not answering is dropping the reply.
                        if given != HostAnswer::NoAnswer {
                            question.reply.send(given).unwrap();
                        }
                    })
                };
                let asks = (0..connections).map(|n| asking.ask(&host, 8000 + n, None, None));
                let answers = futures_util::future::join_all(asks).await;
                answered.await.unwrap();
                assert!(
                    answers.iter().all(|(answer, _)| *answer == given),
                    "{given:?} × {connections}: {answers:?}"
                );
                assert!(
                    questions.lock().await.try_recv().is_err(),
                    "{given:?} × {connections}: asked twice"
                );
                let remembered = asking.remembered(&host);
                match given {
                    HostAnswer::Once | HostAnswer::NoAnswer => assert_eq!(remembered, None),
                    HostAnswer::Deny => assert_eq!(remembered, Some(false)),
                    _ => assert_eq!(remembered, Some(true)),
                }
            }
        }
    }

    #[tokio::test]
    async fn once_is_this_connection_and_deny_holds_for_the_run() {
        let (asking, questions) = Asking::new();
        let host = Host::parse("new.test").unwrap();
        for (given, then) in [(HostAnswer::Once, None), (HostAnswer::Deny, Some(false))] {
            let reply = {
                let questions = Arc::clone(&questions);
                tokio::spawn(async move {
                    let question = questions.lock().await.recv().await.unwrap();
                    question.reply.send(given).unwrap();
                })
            };
            assert_eq!(asking.ask(&host, 443, None, None).await, (given, true));
            reply.await.unwrap();
            assert_eq!(asking.remembered(&host), then);
        }
        assert_eq!(
            asking.ask(&host, 443, None, None).await,
            (HostAnswer::Deny, false)
        );
    }

    #[tokio::test]
    async fn a_question_nobody_takes_is_refused() {
        let (asking, questions) = Asking::new();
        drop(questions);
        let host = Host::parse("new.test").unwrap();
        assert_eq!(asking.ask(&host, 443, None, None).await.0, HostAnswer::Deny);
    }
}
