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
