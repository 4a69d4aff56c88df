//! The streamable-HTTP transport of a remote server: the SDK's client transport on our own
//! reqwest client (rustls with ring, the same stack as the model's), the settings' `headers`,
//! a bearer token read from the environment variable the settings name (never from the
//! file), redirects followed only to the same host (a token must not travel elsewhere), and
//! bounded message sizes (a 50 MB answer is an error, not memory).

use std::collections::HashMap;
use std::sync::Once;
use std::time::Duration;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::stdio::MAX_MESSAGE_BYTES;

/// How long connecting to a remote server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;

/// The transport for `url` with `headers` and, when given, `token` as a bearer token.
///
/// # Errors
/// A header that cannot be sent, or the HTTP client cannot be built.
pub fn transport(
    url: &str,
    headers: &[(String, String)],
    token: Option<String>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    static INSTALL_RING: Once = Once::new();
    INSTALL_RING.call_once(|| {
        // Err means some provider is installed already, which is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(same_host))
        .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| format!("cannot build the HTTP client: {error}"))?;
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("`{name}` is not a header name"))?;
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("the value of `{name}` cannot be sent"))?;
        custom.insert(name, value);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .custom_headers(custom)
        .max_sse_event_size(MAX_MESSAGE_BYTES)
        .max_json_response_size(MAX_MESSAGE_BYTES);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// Follows a redirect only to the same scheme, host and port, a few times.
fn same_host(attempt: reqwest::redirect::Attempt<'_>) -> reqwest::redirect::Action {
    let previous = attempt.previous();
    let same = previous.first().is_some_and(|first| {
        let next = attempt.url();
        first.scheme() == next.scheme()
            && first.host_str() == next.host_str()
            && first.port_or_known_default() == next.port_or_known_default()
    });
    if same && previous.len() <= MAX_REDIRECTS {
        attempt.follow()
    } else {
        attempt.stop()
    }
}

/// One readable line for why a remote server did not start, from the SDK's error text
/// (which names the transport's types and the request): `HTTP 401 Unauthorized — check
/// bearer_token_env`, `an HTML page, not MCP — …`. `None`: nothing better to say.
#[must_use]
pub fn failure(error: &str) -> Option<String> {
    let lower = error.to_ascii_lowercase();
    let status = lower.split("http ").skip(1).find_map(|rest| {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        (digits.len() == 3)
            .then(|| digits.parse::<u16>().ok())
            .flatten()
    });
    let status = status.or_else(|| {
        if lower.contains("authorization required") || lower.contains("auth required") {
            Some(401)
        } else if lower.contains("insufficient scope") {
            Some(403)
        } else {
            None
        }
    });
    if let Some(status) = status {
        let what = match status {
            401 => "Unauthorized — check bearer_token_env (the token is missing, wrong or expired)",
            403 => "Forbidden — the token does not give access to this server",
            404 => "Not Found — check the url (the MCP endpoint's path)",
            405 => "Method Not Allowed — check the url (not a streamable-HTTP MCP endpoint)",
            429 => "Too Many Requests — the server is rate-limiting",
            500..=599 => "a server error — try again later",
            _ => "an unexpected answer — check the url",
        };
        return Some(format!("HTTP {status} {what}"));
    }
    if lower.contains("unexpected content type") {
        let html = lower.contains("html");
        return Some(if html {
            "it answered with an HTML page, not MCP — check the url (a sign-in page or a \
             website?)"
                .to_owned()
        } else {
            "it answered with something that is not MCP (JSON or an event stream) — check \
             the url"
                .to_owned()
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::failure;

    #[test]
    fn the_sdks_errors_become_one_readable_line() {
        let sdk = |inner: &str| {
            format!(
                "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::\
                 transport::streamable_http_client::StreamableHttpClientWorker<reqwest::\
                 async_impl::client::Client>>] error: {inner}, when send initialize request"
            )
        };
        let cases = [
            (
                "unexpected server response: HTTP 401 Unauthorized: ",
                "HTTP 401 Unauthorized — check bearer_token_env",
            ),
            (
                "authorization required: Bearer realm=x",
                "HTTP 401 Unauthorized",
            ),
            ("Auth required", "HTTP 401 Unauthorized"),
            (
                "unexpected server response: HTTP 403 Forbidden: no",
                "HTTP 403 Forbidden",
            ),
            ("insufficient scope: Bearer", "HTTP 403 Forbidden"),
            (
                "Session expired (HTTP 404)",
                "HTTP 404 Not Found — check the url",
            ),
            (
                "unexpected server response: HTTP 404 Not Found: ",
                "HTTP 404 Not Found",
            ),
            (
                "unexpected server response: HTTP 502 Bad Gateway",
                "HTTP 502 a server error",
            ),
            (
                "Unexpected content type: Some(\"text/html; charset=utf-8\")",
                "an HTML page, not MCP",
            ),
            (
                "Unexpected content type: Some(\"text/plain\")",
                "not MCP (JSON or an event stream)",
            ),
        ];
        for (inner, expected) in cases {
            let line = failure(&sdk(inner)).unwrap();
            assert!(
                line.starts_with(expected) || line.contains(expected),
                "{inner}: {line}"
            );
            assert!(!line.contains("rmcp::"), "{line}");
        }
        assert_eq!(failure(&sdk("connection refused")), None);
    }
}
