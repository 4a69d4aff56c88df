//! Waiting for an event the test can observe (a file, a process, a count), never for a time.

/// Waits until `ready` holds, failing the test after `limit` with `what`.
pub fn wait_for(limit: std::time::Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
