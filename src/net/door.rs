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

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;
    use crate::net::proxy::{Proxy, SOCKET_NAME};
    use crate::net::rules::Rules;

    /// A one-answer web server on 127.0.0.1: "hello" to every connection.
    async fn origin() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut head = [0u8; 1024];
                let _ = stream.read(&mut head).await;
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                    )
                    .await;
            }
        });
        port
    }

    async fn through_door(door: u16, request: String) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", door))
            .await
            .unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[tokio::test]
    async fn the_door_leads_to_the_proxy_which_decides_by_name() {
        let port = origin().await;
        let mut rules = Rules::default();
        rules.add(false, "allowed.test", "user").unwrap();
        let answer = format!("127.0.0.1:{port}");
        rules.add_host("allowed.test", &answer).unwrap();
        rules.add_host("blocked.test", &answer).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let proxy = Proxy::start(rules, parent.path()).unwrap();
        let (door, task) = open(&proxy.dir().join(SOCKET_NAME)).unwrap();
        let allowed = through_door(
            door,
            format!("GET http://allowed.test:{port}/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"),
        )
        .await;
        assert!(allowed.ends_with("hello"), "{allowed}");
        let refused = through_door(
            door,
            format!("CONNECT blocked.test:{port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
        task.abort();
        let _ = task.await;
        assert!(
            tokio::net::TcpStream::connect(("127.0.0.1", door))
                .await
                .is_err(),
            "an aborted door stays shut"
        );
    }
}
