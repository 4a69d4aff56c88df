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

/// HTML as Markdown; scripts, styles and other non-content left out. Malformed HTML is parsed
/// as browsers do; should the converter fail, the text is returned as it is.
fn html_to_markdown(html: &str) -> String {
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
