//! One integration-test binary: every feature's tests drive the real `agent`
//! executable (see `suite/`).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
