//! A bound on what a server may send unasked, around any transport (stdio or HTTP). The
//! SDK handles every server→client message in a task of its own and writes every answer to
//! a server's request in another: a server that sends requests (`ping`) and never reads the
//! answers, or a notification storm, would grow the agent's memory without end. Here a server
//! may send at most [`MAX_UNASKED`] requests and notifications between two of the client's
//! requests (or within a minute), and have at most [`MAX_UNANSWERED`] of its requests waiting for their answer
//! to be written; past either the connection ends, with the reason in one line, and the
//! answers still waiting are dropped at once.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// Requests and notifications a server may send between two requests of the client (or
/// within one [`WINDOW`]: a server that logs now and then through a long idle session is not a
/// flood).
pub const MAX_UNASKED: usize = 10_000;

/// How long a count of unasked messages lasts at most.
const WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

/// A server's requests whose answers may wait to be written (it does not read them).
pub const MAX_UNANSWERED: usize = 256;

/// Why a connection was ended by the agent, shared with whoever reports it.
pub type Broken = Arc<Mutex<Option<String>>>;

/// `inner`, with the bounds of this module.
pub struct Metered<T> {
    inner: T,
    unasked: usize,
    /// Since when `unasked` counts, and for how long at most.
    counting_since: std::time::Instant,
    window: std::time::Duration,
    unanswered: Arc<AtomicUsize>,
    broken: Broken,
    ended: tokio::sync::watch::Sender<bool>,
}

impl<T> Metered<T> {
    /// Wraps `inner`; a bound broken is written to `broken` (first reason kept).
    pub fn new(inner: T, broken: Broken) -> Self {
        Self {
            inner,
            unasked: 0,
            counting_since: std::time::Instant::now(),
            window: WINDOW,
            unanswered: Arc::new(AtomicUsize::new(0)),
            broken,
            ended: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Counts one message from the server; the reason to end the connection, if any.
    fn count(&mut self, message: &RxJsonRpcMessage<RoleClient>) -> Option<String> {
        match message {
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => return None,
            JsonRpcMessage::Request(_) => {
                let waiting = self.unanswered.fetch_add(1, Ordering::Relaxed) + 1;
                if waiting > MAX_UNANSWERED {
                    return Some(format!(
                        "it sent more than {MAX_UNANSWERED} requests without reading the \
                         answers (a flood)"
                    ));
                }
            }
            JsonRpcMessage::Notification(_) => {}
        }
        if self.counting_since.elapsed() > self.window {
            self.unasked = 0;
            self.counting_since = std::time::Instant::now();
        }
        self.unasked += 1;
        (self.unasked > MAX_UNASKED).then(|| {
            format!("it sent more than {MAX_UNASKED} messages without being asked (a flood)")
        })
    }
}

impl<T> Transport<RoleClient> for Metered<T>
where
    T: Transport<RoleClient>,
{
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        if matches!(item, JsonRpcMessage::Request(_)) {
            self.unasked = 0;
            self.counting_since = std::time::Instant::now();
        }
        let unanswered = Arc::clone(&self.unanswered);
        let mut ended = self.ended.subscribe();
        let send = self.inner.send(item);
        async move {
            let result = tokio::select! {
                result = send => result.map_err(std::io::Error::other),
                _ = ended.wait_for(|ended| *ended) => {
                    Err(std::io::Error::other("the connection was ended"))
                }
            };
            if answer {
                // Saturating: an answer to a request that was not counted (none should be).
                let _ = unanswered.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                    Some(n.saturating_sub(1))
                });
            }
            result
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if *self.ended.borrow() {
            return None;
        }
        let message = self.inner.receive().await?;
        if let Some(why) = self.count(&message) {
            if let Ok(mut broken) = self.broken.lock() {
                broken.get_or_insert(why);
            }
            self.ended.send_replace(true);
            return None;
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.ended.send_replace(true);
        let close = self.inner.close();
        async move { close.await.map_err(std::io::Error::other) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        ClientRequest, ClientResult, NumberOrString, PingRequest, ServerNotification,
        ServerRequest, ServerResult, ToolListChangedNotification,
    };

    /// A transport whose server sends `script` (then nothing), and whose writes never
    /// finish (a server that does not read) unless `reads`.
    struct Script {
        script: std::collections::VecDeque<RxJsonRpcMessage<RoleClient>>,
        reads: bool,
    }

    impl Transport<RoleClient> for Script {
        type Error = std::io::Error;
        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            let reads = self.reads;
            async move {
                if !reads {
                    std::future::pending::<()>().await;
                }
                Ok(())
            }
        }
        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            self.script.pop_front()
        }
        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn ping(n: i64) -> RxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::request(
            ServerRequest::PingRequest(PingRequest::default()),
            NumberOrString::Number(n),
        )
    }

    fn note() -> RxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::notification(ServerNotification::ToolListChangedNotification(
            ToolListChangedNotification::default(),
        ))
    }

    fn answer(n: i64) -> RxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::response(ServerResult::empty(()), NumberOrString::Number(n))
    }

    /// A metered [`Script`] of `script`, and where it says why it ended.
    fn metered(
        script: std::collections::VecDeque<RxJsonRpcMessage<RoleClient>>,
        reads: bool,
    ) -> (Metered<Script>, Broken) {
        let broken = Broken::default();
        let metered = Metered::new(Script { script, reads }, Arc::clone(&broken));
        (metered, broken)
    }

    /// Receives until the transport ends; how many messages came through.
    async fn drain(metered: &mut Metered<Script>) -> usize {
        let mut through = 0;
        while metered.receive().await.is_some() {
            through += 1;
        }
        through
    }

    #[tokio::test]
    async fn a_server_may_send_so_much_unasked_and_no_more() {
        for (kind, make) in [
            ("notes", note as fn() -> RxJsonRpcMessage<RoleClient>),
            ("pings", || ping(1)),
        ] {
            for extra in [0, 1, 5] {
                let script = (0..MAX_UNASKED + extra).map(|_| make()).collect();
                let (mut metered, broken) = metered(script, true);
                // Each request is answered (and the answer written) at once.
                let mut through = 0;
                while let Some(message) = metered.receive().await {
                    through += 1;
                    if let JsonRpcMessage::Request(request) = message {
                        metered
                            .send(JsonRpcMessage::response(
                                ClientResult::empty(()),
                                request.id,
                            ))
                            .await
                            .unwrap();
                    }
                }
                let ended = broken.lock().unwrap().clone();
                if extra == 0 {
                    assert_eq!(through, MAX_UNASKED, "{kind}");
                    assert_eq!(ended, None, "{kind}");
                } else {
                    assert_eq!(through, MAX_UNASKED, "{kind} +{extra}");
                    assert!(ended.unwrap().contains("without being asked"), "{kind}");
                }
            }
        }
    }

    #[tokio::test]
    async fn the_count_starts_again_after_its_window() {
        let script = (0..MAX_UNASKED + 5).map(|_| note()).collect();
        let (mut metered, broken) = metered(script, true);
        // Every message comes after the window: each count starts again.
        metered.window = std::time::Duration::ZERO;
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(drain(&mut metered).await, MAX_UNASKED + 5);
        assert_eq!(*broken.lock().unwrap(), None);
    }

    #[tokio::test]
    async fn each_request_of_the_client_allows_as_many_again_and_answers_are_free() {
        let mut script = std::collections::VecDeque::new();
        for round in 0..3 {
            script.extend((0..MAX_UNASKED).map(|_| note()));
            script.push_back(answer(round));
        }
        let (mut metered, broken) = metered(script, true);
        let mut through = 0;
        while let Some(message) = metered.receive().await {
            through += 1;
            if matches!(message, JsonRpcMessage::Response(_)) {
                metered
                    .send(JsonRpcMessage::request(
                        ClientRequest::PingRequest(PingRequest::default()),
                        NumberOrString::Number(i64::try_from(through).unwrap()),
                    ))
                    .await
                    .unwrap();
            }
        }
        assert_eq!(through, 3 * (MAX_UNASKED + 1));
        assert_eq!(*broken.lock().unwrap(), None);
    }

    #[tokio::test]
    async fn requests_whose_answers_are_not_read_are_bounded_and_their_writes_dropped() {
        let script = (0..1000).map(ping).collect();
        let (mut metered, broken) = metered(script, false);
        let mut waiting = Vec::new();
        while let Some(message) = metered.receive().await {
            if let JsonRpcMessage::Request(request) = message {
                waiting.push(tokio::spawn(metered.send(JsonRpcMessage::response(
                    ClientResult::empty(()),
                    request.id,
                ))));
            }
        }
        assert_eq!(waiting.len(), MAX_UNANSWERED);
        let why = broken.lock().unwrap().clone().unwrap();
        assert!(why.contains("without reading the answers"), "{why}");
        // The writes that waited end now, with an error.
        for write in waiting {
            assert!(write.await.unwrap().is_err());
        }
        assert_eq!(drain(&mut metered).await, 0);
    }
}
