//! A fake model server for tests: HTTP/1.1 on 127.0.0.1, on its own thread and runtime (so
//! plain `#[test]`s can use it too), scripted as a queue of [`Reply`]s consumed one per
//! request, recording every request so a test can assert what the client sent. Event
//! builders speak both wire formats ([`openai`], [`anthropic`]); [`Turn`] describes a whole
//! model turn independently of the provider. It knows nothing of the agent's internals.
//!
//! ```ignore
//! let server = FakeModel::openai_turns([turn_tool_call("ls -la", "list"), turn_text("done")]);
//! // … run the agent with base_url = server.openai_url() …
//! assert!(server.request(1).tool_results()[0].1.contains("Cargo.toml"));
//! ```
//!
//! An empty queue answers 500 `fake server: no scripted reply left`, so a test that makes
//! one request too many fails visibly (the client retries it, so expect it up to 3 times).

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the fake server"
)]
#![allow(
    clippy::expect_used,
    reason = "a fake server that cannot start must fail the test"
)]

mod events;

pub use events::{Events, Turn, anthropic, openai, turn_text, turn_tool_call};

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What the queue answers when it is empty.
pub const NO_REPLY_LEFT: &str = "fake server: no scripted reply left";

/// How long a stalled reply holds the connection — longer than any test waits.
const STALL: Duration = Duration::from_secs(3600);

/// A running fake server; stops when dropped.
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Replies for a path, given to every request there (`GET /props`), the queue untouched.
    routes: Mutex<Vec<(String, Reply)>>,
}

impl FakeModel {
    /// A server that answers `replies` in order, one per request.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into_iter().collect()),
            requests: Mutex::default(),
            routes: Mutex::default(),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("listener address");
        let (shutdown, stop) = tokio::sync::oneshot::channel();
        let state = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("fake-model".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("fake server runtime");
                runtime.block_on(serve(listener, state, stop));
            })
            .expect("spawn the fake server thread");
        Self {
            addr,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// A server with nothing scripted yet (see [`FakeModel::push`]).
    pub fn start() -> Self {
        Self::new([])
    }

    /// A server playing `turns` in the OpenAI Chat Completions format.
    pub fn openai_turns(turns: impl IntoIterator<Item = Turn>) -> Self {
        Self::new(turns.into_iter().map(|turn| turn.openai()))
    }

    /// A server playing `turns` in the Anthropic Messages format.
    pub fn anthropic_turns(turns: impl IntoIterator<Item = Turn>) -> Self {
        Self::new(turns.into_iter().map(|turn| turn.anthropic()))
    }

    /// Adds a reply at the end of the queue.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.replies).push_back(reply);
    }

    /// Answers every request for `path` (`/props`, `/v1/models`) with `reply`, leaving the
    /// queue alone. A GET of a path without a route is answered 404, also leaving it alone.
    #[must_use]
    pub fn route(self, path: &str, reply: Reply) -> Self {
        lock(&self.shared.routes).push((path.to_owned(), reply));
        self
    }

    /// `http://127.0.0.1:PORT` (the Anthropic base URL).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1` (the OpenAI-compatible base URL).
    pub fn openai_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Every request for a model turn so far (GETs of `/props`, `/v1/models` left out), in
    /// arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests)
            .iter()
            .filter(|request| request.method != "GET")
            .cloned()
            .collect()
    }

    /// The paths of the GET requests so far (`/props`, `/v1/models`), in arrival order.
    pub fn gets(&self) -> Vec<String> {
        lock(&self.shared.requests)
            .iter()
            .filter(|request| request.method == "GET")
            .map(|request| request.path.clone())
            .collect()
    }

    /// The GET requests so far with their headers, in arrival order.
    pub fn get_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests)
            .iter()
            .filter(|request| request.method == "GET")
            .cloned()
            .collect()
    }

    /// Request number `index` (0-based); panics saying how many there were.
    pub fn request(&self, index: usize) -> RecordedRequest {
        let requests = self.requests();
        match requests.get(index) {
            Some(request) => request.clone(),
            None => panic!(
                "fake server: no request #{index}, only {} arrived",
                requests.len()
            ),
        }
    }

    /// How many replies are still queued.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.replies).len()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`.
    pub method: String,
    /// `/v1/chat/completions`.
    pub path: String,
    /// Names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Null` if it is not JSON).
    pub body: Value,
    /// The body as text.
    pub body_text: String,
}

impl RecordedRequest {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `body.messages`.
    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// `(call id, content)` of every tool result sent, in either wire format.
    pub fn tool_results(&self) -> Vec<(String, String)> {
        let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        let mut results = Vec::new();
        for message in self.messages() {
            if message["role"] == "tool" {
                results.push((text(&message["tool_call_id"]), text(&message["content"])));
            }
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    results.push((text(&block["tool_use_id"]), text(&block["content"])));
                }
            }
        }
        results
    }

    /// The text of the last user message, in either wire format.
    pub fn last_user_text(&self) -> Option<String> {
        let message = self.messages().into_iter().rev().find(|m| {
            m["role"] == "user"
                && (m["content"].is_string()
                    || m["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|b| b["type"] == "text"))
        })?;
        if let Some(text) = message["content"].as_str() {
            return Some(text.to_owned());
        }
        let blocks = message["content"].as_array()?;
        Some(
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// The system prompt, in either wire format.
    pub fn system(&self) -> Option<String> {
        if let Some(system) = self.body["system"].as_str() {
            return Some(system.to_owned());
        }
        if let Some(blocks) = self.body["system"].as_array() {
            return Some(
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        let first = self.messages().into_iter().next()?;
        (first["role"] == "system").then(|| first["content"].as_str().unwrap_or("").to_owned())
    }

    /// The names of the tools offered, in either wire format.
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.body["tools"].as_array().cloned().unwrap_or_default();
        tools
            .iter()
            .filter_map(|t| {
                t["function"]["name"]
                    .as_str()
                    .or_else(|| t["name"].as_str())
            })
            .map(str::to_owned)
            .collect()
    }
}

/// A scripted answer to one request.
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Body,
    cut: Option<Cut>,
    stall_after: Option<usize>,
    delay: Duration,
    piece_bytes: Option<usize>,
    /// Events held back until their gate opens: (event number, gate).
    holds: Vec<(usize, Gate)>,
}

/// A point a reply waits at until the test opens it (after it saw what came before on screen),
/// so a test observes a stream's pauses without sleeping.
#[derive(Debug, Clone)]
pub struct Gate(Arc<tokio::sync::Semaphore>);

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self(Arc::new(tokio::sync::Semaphore::new(0)))
    }

    /// Lets the reply go on.
    pub fn open(&self) {
        self.0.add_permits(1);
    }

    async fn pass(&self) {
        if let Ok(permit) = self.0.acquire().await {
            permit.forget();
        }
    }
}

#[derive(Debug, Clone)]
enum Body {
    Sse(Vec<String>),
    Fixed { content_type: String, text: String },
}

#[derive(Debug, Clone, Copy)]
enum Cut {
    Events(usize),
    Bytes(usize),
}

impl Reply {
    /// 200 with an event stream made of `events`, in order.
    pub fn sse(events: impl IntoIterator<Item = Events>) -> Self {
        let frames = events.into_iter().flat_map(|e| e.0).collect();
        Self::with_body(200, Body::Sse(frames))
    }

    /// 200 with an event stream of exactly `bytes`, as a real server sent them (a recorded
    /// replay: comments, `error:` fields, CR line ends and all). Cuts and pieces apply.
    pub fn raw_sse(bytes: impl Into<String>) -> Self {
        Self::with_body(200, Body::Sse(vec![bytes.into()]))
    }

    /// `code` with exactly `text` under `content_type` (an HTML page from a proxy, …).
    pub fn body(code: u16, content_type: &str, text: impl Into<String>) -> Self {
        Self::with_body(
            code,
            Body::Fixed {
                content_type: content_type.to_owned(),
                text: text.into(),
            },
        )
    }

    /// `code` with `body` (JSON content type if it parses as JSON, text otherwise).
    pub fn status(code: u16, body: impl Into<String>) -> Self {
        let text = body.into();
        let content_type = if serde_json::from_str::<Value>(&text).is_ok() {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        };
        Self::with_body(
            code,
            Body::Fixed {
                content_type: content_type.into(),
                text,
            },
        )
    }

    /// `code` with an OpenAI/Anthropic-style `{"error": {"message": …}}` body.
    pub fn error(code: u16, message: &str) -> Self {
        Self::status(
            code,
            json!({"error": {"message": message, "type": "error"}}).to_string(),
        )
    }

    fn with_body(status: u16, body: Body) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body,
            cut: None,
            stall_after: None,
            delay: Duration::ZERO,
            piece_bytes: None,
            holds: Vec::new(),
        }
    }

    /// Sends events up to `event` (exclusive), then waits until `gate` opens.
    #[must_use]
    pub fn hold_before(mut self, event: usize, gate: &Gate) -> Self {
        self.holds.push((event, gate.clone()));
        self
    }

    /// Another status line for the same body.
    #[must_use]
    pub fn with_status(mut self, code: u16) -> Self {
        self.status = code;
        self
    }

    /// An extra response header (`Retry-After`, …).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Closes the connection after `events` events, mid-stream (no final chunk).
    #[must_use]
    pub fn cut_after(mut self, events: usize) -> Self {
        self.cut = Some(Cut::Events(events));
        self
    }

    /// Closes the connection after `bytes` bytes of the body, even mid-line.
    #[must_use]
    pub fn cut_after_bytes(mut self, bytes: usize) -> Self {
        self.cut = Some(Cut::Bytes(bytes));
        self
    }

    /// Sends `events` events, then keeps the connection open without sending anything.
    #[must_use]
    pub fn stall_after(mut self, events: usize) -> Self {
        self.stall_after = Some(events);
        self
    }

    /// Waits `delay` before each event (and before a fixed body).
    #[must_use]
    pub fn slow(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sends the stream in HTTP chunks of at most `bytes`, so lines arrive split.
    #[must_use]
    pub fn in_pieces_of(mut self, bytes: usize) -> Self {
        self.piece_bytes = Some(bytes.max(1));
        self
    }
}

async fn serve(
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(answer(stream, Arc::clone(&shared)));
                }
            }
        }
    }
}

/// Reads one request, records it, writes the next scripted reply, closes.
async fn answer(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let routed = lock(&shared.routes)
        .iter()
        .find(|(path, _)| *path == request.path)
        .map(|(_, reply)| reply.clone());
    let get = request.method == "GET";
    lock(&shared.requests).push(request);
    let reply = match routed {
        Some(reply) => Some(reply),
        None if get => Some(Reply::error(404, "fake server: no route for this GET")),
        None => lock(&shared.replies).pop_front(),
    };
    let reply = reply.unwrap_or_else(|| Reply::status(500, NO_REPLY_LEFT));
    let _ = write_reply(&mut stream, &reply).await;
}

async fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buffer = Vec::new();
    let mut piece = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let read = stream.read(&mut piece).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&piece[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let read = stream.read(&mut piece).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&piece[..read]);
    }
    let body_text = String::from_utf8_lossy(&buffer[head_end..head_end + length]).into_owned();
    let body = serde_json::from_str(&body_text).unwrap_or(Value::Null);
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        body_text,
    })
}

async fn write_reply(stream: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nconnection: close\r\n",
        reply.status,
        reason(reply.status)
    );
    for (name, value) in &reply.headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let frames = match &reply.body {
        Body::Fixed { content_type, text } => {
            let _ = write!(
                head,
                "content-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
                text.len()
            );
            tokio::time::sleep(reply.delay).await;
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(text.as_bytes()).await?;
            return stream.shutdown().await;
        }
        Body::Sse(frames) => frames,
    };
    head.push_str("content-type: text/event-stream\r\ncache-control: no-cache\r\n");
    head.push_str("transfer-encoding: chunked\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await?;
    let mut budget = match reply.cut {
        Some(Cut::Bytes(bytes)) => Some(bytes),
        Some(Cut::Events(_)) | None => None,
    };
    for (number, frame) in frames.iter().enumerate() {
        if matches!(reply.cut, Some(Cut::Events(n)) if n == number) {
            return Ok(()); // dropped without the last chunk: the client sees a cut
        }
        if reply.stall_after == Some(number) {
            tokio::time::sleep(STALL).await;
        }
        for (_, gate) in reply.holds.iter().filter(|(at, _)| *at == number) {
            gate.pass().await;
        }
        tokio::time::sleep(reply.delay).await;
        let size = reply.piece_bytes.unwrap_or(frame.len()).max(1);
        for piece in frame.as_bytes().chunks(size) {
            let piece = match &mut budget {
                Some(0) => return Ok(()),
                Some(left) => {
                    let take = piece.len().min(*left);
                    *left -= take;
                    &piece[..take]
                }
                None => piece,
            };
            stream
                .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                .await?;
            stream.write_all(piece).await?;
            stream.write_all(b"\r\n").await?;
            stream.flush().await?;
            if reply.piece_bytes.is_some() {
                tokio::time::sleep(Duration::from_millis(1)).await; // let the piece travel alone
            }
        }
    }
    if reply.stall_after == Some(frames.len()) {
        tokio::time::sleep(STALL).await;
    }
    if matches!(reply.cut, Some(Cut::Events(_) | Cut::Bytes(_))) {
        return Ok(()); // cut after everything: still no last chunk
    }
    stream.write_all(b"0\r\n\r\n").await?;
    stream.shutdown().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
