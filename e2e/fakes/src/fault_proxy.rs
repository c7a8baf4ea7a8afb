//! A fault-injecting HTTP proxy in front of a real provider (OpenBao, moto): it forwards every
//! request unchanged to the upstream server until a test turns a [`Fault`] on, then answers
//! with that fault instead (error statuses, a reset connection, a hang, a slow or truncated
//! answer) until the test heals it. Not a fake of any vendor API: the provider behind it is
//! real, and the proxy only breaks the road to it, as a failing network or an overloaded
//! service would.
//!
//! The proxy listens on plain HTTP on 127.0.0.1 (stores point `server`/endpoint at it) and
//! reaches an HTTPS upstream trusting the CA it is given.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rustls::pki_types::pem::PemObject as _;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Largest request or upstream answer body the proxy relays.
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// What the proxy does with the next requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forward to the upstream server (healthy).
    None,
    /// Answer with this HTTP status and a Vault-style `{"errors": [...]}` body (500, 503, 429,
    /// 401, 403, ...).
    Status(u16),
    /// Reset the connection (TCP RST) instead of answering.
    Reset,
    /// Accept the request and never answer while the fault lasts; once healed, forward it.
    Hang,
    /// Forward, but only after this delay.
    Slow(Duration),
    /// Answer 200 with a JSON body cut off in the middle.
    Truncated,
}

/// A running proxy; its task stops with the test's runtime.
pub struct FaultProxy {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub url: String,
    fault: watch::Sender<Fault>,
    requests: Arc<AtomicUsize>,
}

#[derive(Clone)]
struct Relay {
    upstream: String,
    http: reqwest::Client,
    fault: watch::Receiver<Fault>,
    requests: Arc<AtomicUsize>,
}

impl FaultProxy {
    /// Starts a healthy proxy to `upstream` (`https://host:port`), trusting `upstream_ca_pem`.
    pub async fn start(upstream: &str, upstream_ca_pem: &str) -> std::io::Result<Self> {
        let http = upstream_client(upstream_ca_pem).map_err(std::io::Error::other)?;
        let (fault, receiver) = watch::channel(Fault::None);
        let requests = Arc::new(AtomicUsize::new(0));
        let relay = Relay {
            upstream: upstream.trim_end_matches('/').to_owned(),
            http,
            fault: receiver.clone(),
            requests: requests.clone(),
        };
        let listener = FaultyListener {
            tcp: TcpListener::bind("127.0.0.1:0").await?,
            fault: receiver,
        };
        let port = listener.tcp.local_addr()?.port();
        let router = Router::new().fallback(forward).with_state(relay);
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(Self {
            url: format!("http://127.0.0.1:{port}"),
            fault,
            requests,
        })
    }

    /// Turns `fault` on for every request from now on (and for connections already open).
    pub fn set(&self, fault: Fault) {
        self.fault.send_replace(fault);
    }

    /// Back to forwarding; requests held by [`Fault::Hang`] are forwarded now.
    pub fn heal(&self) {
        self.set(Fault::None);
    }

    /// How many requests the proxy read so far (faulted or forwarded; a request on a reset
    /// connection is never read).
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
}

fn upstream_client(
    ca_pem: &str,
) -> Result<reqwest::Client, Box<dyn std::error::Error + Send + Sync>> {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate?)?;
    }
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()?)
}

async fn forward(State(mut relay): State<Relay>, request: Request) -> Response {
    relay.requests.fetch_add(1, Ordering::Relaxed);
    let fault = *relay.fault.borrow_and_update();
    match fault {
        Fault::None | Fault::Reset => {}
        Fault::Status(code) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = serde_json::json!({"errors": [format!("fault injected: {status}")]});
            return (status, axum::Json(body)).into_response();
        }
        Fault::Hang => {
            let _ = relay.fault.wait_for(|fault| *fault != Fault::Hang).await;
        }
        Fault::Slow(delay) => tokio::time::sleep(delay).await,
        Fault::Truncated => {
            return (
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"request_id":"0","data":{"data":{"key":"val"#,
            )
                .into_response();
        }
    }
    relay_upstream(&relay, request)
        .await
        .unwrap_or_else(|error| (StatusCode::BAD_GATEWAY, error).into_response())
}

/// Headers that describe one hop, not the message.
fn hop_by_hop(name: &HeaderName) -> bool {
    [
        header::HOST,
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::CONTENT_LENGTH,
    ]
    .contains(name)
}

async fn relay_upstream(relay: &Relay, request: Request) -> Result<Response, String> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |path| path.as_str());
    let body = to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|error| format!("reading the request: {error}"))?;
    let mut upstream = relay
        .http
        .request(parts.method, format!("{}{path}", relay.upstream))
        .body(body);
    for (name, value) in parts.headers.iter().filter(|(name, _)| !hop_by_hop(name)) {
        upstream = upstream.header(name, value);
    }
    let answer = upstream
        .send()
        .await
        .map_err(|error| format!("upstream: {error}"))?;
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer
        .headers()
        .iter()
        .filter(|(name, _)| !hop_by_hop(name))
    {
        response = response.header(name, value);
    }
    let bytes = answer
        .bytes()
        .await
        .map_err(|error| format!("upstream body: {error}"))?;
    response
        .body(Body::from(bytes))
        .map_err(|error| error.to_string())
}

/// Accepts connections whose reads and writes fail with a reset while [`Fault::Reset`] is on.
struct FaultyListener {
    tcp: TcpListener,
    fault: watch::Receiver<Fault>,
}

impl axum::serve::Listener for FaultyListener {
    type Io = FaultyStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, address)) = self.tcp.accept().await else {
                continue;
            };
            // Closing with a zero linger sends RST, as a crashed or overloaded peer does.
            let _ = tcp.set_zero_linger();
            let stream = FaultyStream {
                tcp,
                fault: self.fault.clone(),
            };
            return (stream, address);
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// One accepted connection, checked for [`Fault::Reset`] on every read and write.
struct FaultyStream {
    tcp: TcpStream,
    fault: watch::Receiver<Fault>,
}

impl FaultyStream {
    fn reset(&self) -> Option<std::io::Error> {
        (*self.fault.borrow() == Fault::Reset)
            .then(|| std::io::Error::from(std::io::ErrorKind::ConnectionReset))
    }
}

impl AsyncRead for FaultyStream {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if let Some(error) = this.reset() {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut this.tcp).poll_read(context, buffer)
    }
}

impl AsyncWrite for FaultyStream {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if let Some(error) = this.reset() {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut this.tcp).poll_write(context, data)
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::FakeServer;
    use axum::routing::post;

    #[tokio::test]
    async fn forwards_until_a_fault_is_set_and_after_it_is_healed() {
        let upstream = FakeServer::https(Router::new().route(
            "/v1/echo",
            post(|body: String| async move { format!("echo {body}") }),
        ))
        .await
        .unwrap();
        let proxy = FaultProxy::start(&upstream.url, &upstream.ca_pem)
            .await
            .unwrap();
        let client = upstream_client(&upstream.ca_pem).unwrap();
        let url = format!("{}/v1/echo?x=1", proxy.url);
        let call = || client.post(&url).body("hello").send();
        assert_eq!(call().await.unwrap().text().await.unwrap(), "echo hello");
        assert_eq!(upstream.requests()[0].query.as_deref(), Some("x=1"));

        for code in [500, 503, 429, 401, 403] {
            proxy.set(Fault::Status(code));
            assert_eq!(call().await.unwrap().status().as_u16(), code);
        }
        proxy.set(Fault::Reset);
        assert!(call().await.is_err(), "a reset connection answers nothing");
        proxy.set(Fault::Truncated);
        let truncated = call().await.unwrap().bytes().await.unwrap();
        assert!(serde_json::from_slice::<serde_json::Value>(&truncated).is_err());
        proxy.set(Fault::Slow(Duration::from_millis(200)));
        assert_eq!(call().await.unwrap().text().await.unwrap(), "echo hello");

        proxy.set(Fault::Hang);
        let hanging = tokio::spawn(call());
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!hanging.is_finished(), "a hung request is not answered");
        proxy.heal();
        let answer = hanging.await.unwrap().unwrap();
        assert_eq!(answer.text().await.unwrap(), "echo hello");
        assert_eq!(
            upstream.requests().len(),
            3,
            "faulted requests never reach upstream"
        );
        // Nine answered requests: a reset connection's request is never read.
        assert_eq!(proxy.requests(), 9);
    }
}
