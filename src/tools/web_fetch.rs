//! `web_fetch`: its schema, the validation of a call, and the page made text for the model —
//! HTML to Markdown (`htmd`; scripts and styles left out), JSON and other text as it is,
//! anything binary refused — cut at the limit (and saying so), with the final URL and status.
//! The request itself is `net::fetch`'s (the host rules, redirects, bounded reading).

use serde::Deserialize;
use serde_json::json;

use crate::model::ToolSpec;
use crate::net::fetch::Page;
use crate::tool_error::{ToolError, ToolErrorCode};

/// The tool's name.
pub const WEB_FETCH: &str = "web_fetch";

/// Bytes of the body read (and of text returned) when the call names no limit.
pub const DEFAULT_MAX_BYTES: usize = 100_000;

/// The most a call may ask for.
pub const MAX_MAX_BYTES: usize = 1_000_000;

/// How many leading bytes are looked at to tell text from binary.
const SNIFF_BYTES: usize = 8_192;

/// Deeper nesting than this (counted from the tags, an upper bound) is not converted: the
/// converter's parser recurses per level and scans the open elements per tag, so a small page
/// of nested `<div>`s would overflow the stack or take minutes. Such a page is returned as
/// its text, the tags dropped.
const MAX_NESTING: usize = 1_000;

/// The converting thread's stack: room for [`MAX_NESTING`] levels many times over.
const CONVERT_STACK_BYTES: usize = 64 << 20;

/// Longest a conversion may take before the call fails (the thread is left to finish).
const CONVERT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(20);

/// The tool's schema.
#[must_use]
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: WEB_FETCH.to_owned(),
        description: "Fetch an http(s) URL and return the page as text (HTML as Markdown), with \
                      the final URL and status. Only hosts the network settings allow (or the \
                      user approves)."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "http:// or https:// URL."},
                "max_bytes": {
                    "type": "integer",
                    "description": "Most bytes read and returned (default 100000, at most 1000000)."
                }
            },
            "required": ["url"],
            "additionalProperties": false
        }),
    }
}

/// A validated `web_fetch` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// The URL.
    pub url: String,
    /// The limit asked for.
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

impl FetchArgs {
    /// Validates raw JSON `arguments`.
    ///
    /// # Errors
    /// `EINVAL` with a message the model can act on.
    pub fn parse(arguments: &str) -> Result<FetchArgs, ToolError> {
        let invalid = |message: String| ToolError::new(ToolErrorCode::InvalidArguments, message);
        let args: FetchArgs = serde_json::from_str(arguments).map_err(|error| {
            invalid(format!(
                "invalid arguments: {error}; expected {{\"url\": string, \"max_bytes\"?: integer}}"
            ))
        })?;
        if args.url.trim().is_empty() {
            return Err(invalid("`url` is empty".to_owned()));
        }
        if args.max_bytes == Some(0) {
            return Err(invalid("`max_bytes` must be at least 1".to_owned()));
        }
        Ok(args)
    }

    /// The limit: the one asked for, at most [`MAX_MAX_BYTES`].
    #[must_use]
    pub fn limit(&self) -> usize {
        self.max_bytes.map_or(DEFAULT_MAX_BYTES, |asked| {
            usize::try_from(asked).map_or(MAX_MAX_BYTES, |asked| asked.min(MAX_MAX_BYTES))
        })
    }
}

/// What the page is, as far as turning it into text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

fn kind(content_type: Option<&str>, body: &[u8]) -> Kind {
    let sniffed = &body[..body.len().min(SNIFF_BYTES)];
    if sniffed.contains(&0) {
        return Kind::Binary;
    }
    let Some(content_type) = content_type else {
        let start = String::from_utf8_lossy(&sniffed[..sniffed.len().min(256)])
            .trim_start()
            .to_ascii_lowercase();
        if start.starts_with("<!doctype html") || start.starts_with("<html") {
            return Kind::Html;
        }
        return match std::str::from_utf8(sniffed) {
            Ok(_) => Kind::Text,
            // A cut in the middle of a character is still text.
            Err(error) if error.error_len().is_none() => Kind::Text,
            Err(_) => Kind::Binary,
        };
    };
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        _ if mime.starts_with("text/") => Kind::Text,
        "application/json"
        | "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh" => Kind::Text,
        _ if mime.ends_with("+json") || mime.ends_with("+xml") => Kind::Text,
        _ => Kind::Binary,
    }
}

/// The text of a body that may have been cut inside a character: that character dropped.
fn text_of(body: &[u8]) -> String {
    match std::str::from_utf8(body) {
        Ok(text) => text.to_owned(),
        Err(error) if error.error_len().is_none() => {
            String::from_utf8_lossy(&body[..error.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    }
}

/// Cuts `text` at `limit` bytes (on a character boundary); whether it did.
fn cut_at(text: &mut String, limit: usize) -> bool {
    if text.len() <= limit {
        return false;
    }
    let mut at = limit;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    true
}

/// The page as the model gets it (JSON: `url`, `status`, `content_type`, `content`, and `cut`
/// when the page went on), and the one-line summary for the person; `limit` bounds the
/// content too.
///
/// # Errors
/// `EINVAL` for a binary body (its type named).
pub fn page_content(page: &Page, limit: usize) -> Result<(String, String), ToolError> {
    let content_type = page.content_type.as_deref();
    let kind = kind(content_type, &page.body);
    let mut text = match kind {
        Kind::Binary => {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                format!(
                    "{} is not text ({}): web_fetch returns only HTML, JSON and other text",
                    page.url,
                    content_type.unwrap_or("no Content-Type, binary bytes")
                ),
            ));
        }
        Kind::Html => html_to_markdown(&text_of(&page.body)),
        Kind::Text => text_of(&page.body),
    };
    let converted_cut = cut_at(&mut text, limit);
    let mut value = json!({
        "url": page.url,
        "status": page.status,
        "content_type": content_type,
        "content": text,
    });
    let mut summary = format!("{} · {} bytes", page.status, page.body.len());
    if kind == Kind::Html {
        summary.push_str(&format!(" → {} bytes of Markdown", text.len()));
    }
    if page.cut || converted_cut {
        value["cut"] = json!(format!(
            "the page goes on past {limit} bytes and was cut there; ask with a larger \
             `max_bytes` (at most {MAX_MAX_BYTES}) for more"
        ));
        summary.push_str(&format!(" · cut at {limit} bytes"));
    }
    Ok((value.to_string(), summary))
}

/// [`page_content`] on a thread of its own with a large stack, so that converting a hostile
/// page neither blocks the run (signals, the terminal) nor overflows its stack, bounded by
/// [`CONVERT_DEADLINE`].
///
/// # Errors
/// As [`page_content`]; `EIO` when the conversion could not start or took too long.
pub async fn page_content_apart(page: Page, limit: usize) -> Result<(String, String), ToolError> {
    let (send, receive) = tokio::sync::oneshot::channel();
    let url = page.url.clone();
    let started = std::thread::Builder::new()
        .name("web_fetch".to_owned())
        .stack_size(CONVERT_STACK_BYTES)
        .spawn(move || {
            let _ = send.send(page_content(&page, limit));
        });
    let failed = |why: String| {
        ToolError::new(
            ToolErrorCode::Exec(crate::exec::ErrorCode::Io),
            format!("{url}: {why}"),
        )
    };
    if let Err(error) = started {
        return Err(failed(format!("cannot convert the page: {error}")));
    }
    match tokio::time::timeout(CONVERT_DEADLINE, receive).await {
        Ok(Ok(result)) => result,
        Ok(Err(_)) => Err(failed("converting the page failed".to_owned())),
        Err(_) => Err(failed(format!(
            "converting the page took longer than {} s",
            CONVERT_DEADLINE.as_secs()
        ))),
    }
}

/// An upper bound of how deep `html`'s elements nest: each start tag opens one (but void
/// elements, `<…/>` and comments), each end tag closes one. Elements a browser closes without
/// an end tag (`<p>`, `<li>`) only make it larger.
fn nesting(html: &str) -> usize {
    const VOID: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr",
    ];
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if let Some(comment) = rest.strip_prefix("!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        if rest.starts_with('/') {
            depth = depth.saturating_sub(1);
            continue;
        }
        let name_len = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if name_len == 0 || !rest.as_bytes()[0].is_ascii_alphabetic() {
            continue;
        }
        let name = rest[..name_len].to_ascii_lowercase();
        let end = rest.find('>').unwrap_or(rest.len());
        if VOID.contains(&name.as_str()) || rest[..end].ends_with('/') {
            continue;
        }
        depth += 1;
        deepest = deepest.max(depth);
    }
    deepest
}

/// The text of `html` with its tags dropped and blank runs made one space (for pages nested
/// too deeply to convert).
fn tags_dropped(html: &str) -> String {
    let mut text = String::with_capacity(html.len() / 2);
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// HTML as Markdown; scripts, styles and other non-content left out. Malformed HTML is parsed
/// as browsers do; should the converter fail, the text is returned as it is. A page nested
/// deeper than [`MAX_NESTING`] is returned as its text.
fn html_to_markdown(html: &str) -> String {
    if nesting(html) > MAX_NESTING {
        return tags_dropped(html);
    }
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "head", "svg", "iframe",
        ])
        .build();
    converter.convert(html).unwrap_or_else(|_| html.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn page(content_type: Option<&str>, body: &[u8]) -> Page {
        Page {
            url: "http://a.test/".to_owned(),
            status: 200,
            content_type: content_type.map(str::to_owned),
            body: body.to_vec(),
            cut: false,
        }
    }

    fn content(page: &Page, limit: usize) -> serde_json::Value {
        serde_json::from_str(&page_content(page, limit).unwrap().0).unwrap()
    }

    #[test]
    fn nesting_counts_open_elements_but_void_self_closed_and_comments() {
        assert_eq!(nesting("<p>a</p><p>b</p>"), 1);
        assert_eq!(
            nesting("<div><div><br><img src=x/><!-- <b> --></div></div>"),
            2
        );
        assert_eq!(nesting("a < b and c<3"), 0);
        assert_eq!(nesting(&"<div>".repeat(5000)), 5000);
    }

    #[test]
    fn a_page_nested_too_deeply_is_returned_as_its_text() {
        let html = format!(
            "<html><body>{}deep text{}",
            "<div>".repeat(20_000),
            "</div>"
        );
        let page = page(Some("text/html"), html.as_bytes());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let (content, _) = runtime
            .block_on(page_content_apart(page, 1_000_000))
            .unwrap();
        let content: serde_json::Value = serde_json::from_str(&content).unwrap();
        assert_eq!(content["content"], "deep text");
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let html = b"<html><head><title>T</title><script>evil()</script></head><body>\
            <h1>Hello</h1><p>A <a href=\"/x\">link</a>.</p><style>p{}</style></body></html>";
        for content_type in [Some("text/html; charset=utf-8"), None] {
            let value = content(&page(content_type, html), 1000);
            assert_eq!(
                value["content"], "# Hello\n\nA [link](/x).",
                "{content_type:?}"
            );
            assert_eq!(value["status"], 200);
            assert!(value.get("cut").is_none());
        }
    }

    #[test]
    fn json_and_text_come_as_they_are_and_binary_is_refused() {
        for (content_type, body, text) in [
            (Some("application/json"), &b"{\"a\": 1}"[..], true),
            (Some("application/vnd.api+json"), b"{}", true),
            (Some("text/plain"), b"<b>not html</b>", true),
            (None, b"plain words", true),
            (Some("image/png"), b"\x89PNG", false),
            (Some("application/octet-stream"), b"abc", false),
            (Some("text/plain"), b"a\0b", false),
            (None, b"\xff\xfe\xfd", false),
        ] {
            let result = page_content(&page(content_type, body), 1000);
            assert_eq!(result.is_ok(), text, "{content_type:?} {body:?}");
            if let Ok((json, _)) = result {
                let value: serde_json::Value = serde_json::from_str(&json).unwrap();
                assert_eq!(value["content"], String::from_utf8_lossy(body).as_ref());
            }
        }
    }

    /// Generated over limits and multi-byte text: the content never passes the limit, ends on
    /// a character, and says it was cut exactly when it was.
    #[test]
    fn content_is_cut_at_the_limit_on_a_character_and_says_so() {
        let body = "é∑😀a".repeat(50);
        for limit in 1..body.len() + 3 {
            let value = content(&page(Some("text/plain"), body.as_bytes()), limit);
            let text = value["content"].as_str().unwrap();
            assert!(text.len() <= limit && body.starts_with(text), "{limit}");
            assert_eq!(value.get("cut").is_some(), limit < body.len(), "{limit}");
        }
        let mut cut = page(Some("text/plain"), "ab€".as_bytes().split_at(3).0);
        cut.cut = true;
        let value = content(&cut, 3);
        assert_eq!(value["content"], "ab");
        assert!(value["cut"].as_str().unwrap().contains("max_bytes"));
    }

    #[test]
    fn arguments_are_checked_and_the_limit_bounded() {
        let limit = |raw: &str| FetchArgs::parse(raw).map(|args| args.limit());
        assert_eq!(
            limit(r#"{"url":"http://a.test"}"#).unwrap(),
            DEFAULT_MAX_BYTES
        );
        assert_eq!(limit(r#"{"url":"u","max_bytes":10}"#).unwrap(), 10);
        assert_eq!(
            limit(r#"{"url":"u","max_bytes":99999999999}"#).unwrap(),
            MAX_MAX_BYTES
        );
        for bad in [
            r#"{"url":""}"#,
            r#"{"url":"u","max_bytes":0}"#,
            "{}",
            r#"{"url":"u","x":1}"#,
        ] {
            assert!(FetchArgs::parse(bad).is_err(), "{bad}");
        }
    }
}
