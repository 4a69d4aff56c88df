//! The redirect policy: which redirects the client follows itself (307 and 308 within the
//! same origin, a few at most), and what "the same origin" is.

/// Most redirects followed for one request — a base URL moved once or twice is normal; more
/// is a loop.
const MAX_REDIRECTS: usize = 5;

/// Whether two URLs share scheme, host and port (a redirect between them keeps the key home).
pub(super) fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// The redirect policy: 307 and 308 keep the method and the body, so they are followed
/// within the same origin (a few times at most); 301/302/303 would turn the POST into a GET
/// and a redirect to another host would take the key along — both stop, and the response
/// is reported (see `Transport::redirect_error`).
pub(super) fn follow_redirect(
    attempt: reqwest::redirect::Attempt<'_>,
) -> reqwest::redirect::Action {
    let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
    let same = attempt
        .previous()
        .last()
        .is_some_and(|previous| same_origin(previous, attempt.url()));
    if keeps_body && same && attempt.previous().len() <= MAX_REDIRECTS {
        attempt.follow()
    } else {
        attempt.stop()
    }
}
