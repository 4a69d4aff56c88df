//! The proxy's door on this machine's loopback, for systems where no network namespace keeps a
//! command's connections apart (macOS): a listener on `127.0.0.1` at a port the system picks,
//! whose every connection is spliced to the proxy's Unix socket, where the proxy decides it
//! like any other. The command's Seatbelt profile lets it connect to that one port and
//! nowhere else (`sandbox/macos.rs`), and the proxy variables name it (`env.rs`).
//!
//! The door is on the machine's shared loopback, so other processes of this machine can knock
//! too; they were never inside the sandbox, and the proxy gives them nothing they could not
//! reach themselves. Memory is bounded by the proxy: past its connection limit it answers
//! `503` and closes, which ends the splice.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::{TcpListener, UnixStream};

/// Opens the door to the proxy listening on `socket`: returns its port and the task that
/// serves it (abort it to close the door). Must be called inside a Tokio runtime.
///
/// # Errors
/// No loopback port can be bound.
pub fn open(socket: &Path) -> std::io::Result<(u16, tokio::task::JoinHandle<()>)> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    let listener = TcpListener::from_std(listener)?;
    let task = tokio::spawn(serve(listener, socket.to_path_buf()));
    Ok((port, task))
}

async fn serve(listener: TcpListener, socket: PathBuf) {
    loop {
        let Ok((mut client, _)) = listener.accept().await else {
            // Out of descriptors, say: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let socket = socket.clone();
        tokio::spawn(async move {
            if let Ok(mut proxy) = UnixStream::connect(&socket).await {
                let _ = tokio::io::copy_bidirectional(&mut client, &mut proxy).await;
            }
        });
    }
}
