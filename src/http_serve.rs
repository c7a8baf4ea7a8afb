//! Serving a router on a listener with the HTTP versions `--enable-http2` allows.
//!
//! Upstream (controller-runtime with `--enable-http2=false`, its default) restricts its TLS
//! servers to HTTP/1.1 because of the HTTP/2 rapid-reset and stream-cancellation CVEs
//! (CVE-2023-44487, CVE-2023-39325), and offers HTTP/2 only when the flag is set. `axum::serve`
//! cannot be told which versions to speak: it detects an HTTP/2 preface on every connection
//! whenever hyper is built with HTTP/2 (the Kubernetes client needs it), so a client speaking
//! HTTP/2 with prior knowledge would get it even with the flag off. Here every connection is
//! served by hyper-util's version-detecting builder, limited to HTTP/1 unless `http2` is on:
//! an HTTP/2 preface is then refused as an unsupported version. [`alpn`] is what the TLS
//! servers advertise to match.

use std::future::Future;

use axum::Router;
use axum::serve::Listener;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::sync::watch;

/// The ALPN protocols a TLS server advertises: `h2` only when HTTP/2 is enabled.
pub fn alpn(http2: bool) -> Vec<Vec<u8>> {
    match http2 {
        true => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        false => vec![b"http/1.1".to_vec()],
    }
}

/// Serves `router` on every connection `listener` accepts, speaking HTTP/2 too only when
/// `http2` is true, until `shutdown` completes; then asks the open connections to close once
/// their requests are answered, and waits for them.
pub async fn serve<L>(
    mut listener: L,
    router: Router,
    http2: bool,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    L: Listener,
{
    // Dropping `stop` tells the connections to finish; `done` closes when the last is gone.
    let (stop, _) = watch::channel(());
    let (done, connections) = watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let (io, _peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let service = TowerToHyperService::new(router.clone());
        let mut stopping = stop.subscribe();
        let connection_open = connections.clone();
        tokio::spawn(async move {
            let builder = match http2 {
                true => Builder::new(TokioExecutor::new()),
                false => Builder::new(TokioExecutor::new()).http1_only(),
            };
            let connection = builder.serve_connection(TokioIo::new(io), service);
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                _ = stopping.changed() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%error, "HTTP connection ended with an error");
            }
            drop(connection_open);
        });
    }
    drop(connections);
    drop(stop);
    done.closed().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// The client preface every HTTP/2 connection starts with (RFC 9113, section 3.4).
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    /// Sends the HTTP/2 preface and an empty SETTINGS frame over plain TCP to a server with
    /// `http2`, and returns the first bytes it answers.
    async fn answer_to_preface(http2: bool) -> Vec<u8> {
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = tcp.local_addr().unwrap();
        let router = Router::new().route("/", axum::routing::get(|| async { "ok" }));
        let server = tokio::spawn(serve(tcp, router, http2, std::future::pending()));
        let mut client = tokio::net::TcpStream::connect(address).await.unwrap();
        client.write_all(PREFACE).await.unwrap();
        // SETTINGS frame: length 0, type 4, no flags, stream 0.
        client
            .write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0])
            .await
            .unwrap();
        let mut answer = vec![0; 9];
        let read = client.read(&mut answer).await.unwrap();
        answer.truncate(read);
        server.abort();
        answer
    }

    #[tokio::test]
    async fn an_http2_preface_is_answered_only_with_http2_enabled() {
        // On: the server's first frame is its SETTINGS frame (type 4 at byte 3).
        let on = answer_to_preface(true).await;
        assert_eq!(on.get(3), Some(&4), "{on:?}");
        // Off: HTTP/1.1 answers (or closes) but never with an HTTP/2 frame.
        let off = answer_to_preface(false).await;
        assert!(
            off.is_empty() || off.starts_with(b"HTTP/1.1"),
            "{:?}",
            String::from_utf8_lossy(&off)
        );
    }

    #[test]
    fn h2_is_advertised_only_when_enabled() {
        assert_eq!(alpn(false), [b"http/1.1".to_vec()]);
        assert_eq!(alpn(true), [b"h2".to_vec(), b"http/1.1".to_vec()]);
    }
}
