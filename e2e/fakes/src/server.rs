//! The frame every contract fake runs on: an axum router served over HTTPS on 127.0.0.1 with a
//! certificate from a CA made for the occasion (one per process, shared by every fake, so one
//! `SSL_CERT_FILE` trusts them all), plus a log of every request (method, path, query, headers)
//! for assertions on what a client sent.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The HTTP method.
    pub method: Method,
    /// The path, percent-encoded as sent.
    pub path: String,
    /// The raw query string, if any.
    pub query: Option<String>,
    /// The request headers.
    pub headers: HeaderMap,
}

/// A running fake: where to reach it, which CA to trust, and what it was sent. The server task
/// stops when the test's runtime does.
pub struct FakeServer {
    /// `https://127.0.0.1:PORT` (no trailing slash).
    pub url: String,
    /// PEM of the CA that signed the server certificate (for `caBundle` fields or
    /// `SSL_CERT_FILE`).
    pub ca_pem: String,
    log: Arc<Mutex<Vec<Recorded>>>,
}

impl FakeServer {
    /// Serves `router` over HTTPS for the names `127.0.0.1` and `localhost`.
    pub async fn https(router: Router) -> std::io::Result<Self> {
        let (acceptor, ca_pem) = tls_acceptor().map_err(std::io::Error::other)?;
        let listener = TlsListener {
            tcp: TcpListener::bind("127.0.0.1:0").await?,
            acceptor,
        };
        let port = listener.tcp.local_addr()?.port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let router = router.layer(middleware::from_fn_with_state(log.clone(), record));
        spawn(axum::serve(listener, router).into_future());
        Ok(Self {
            url: format!("https://127.0.0.1:{port}"),
            ca_pem,
            log,
        })
    }

    /// Serves `router` over plain HTTP (`ca_pem` empty): for endpoints a client is told about
    /// without any way to give it a CA, such as a service-account key file's `token_uri`.
    pub async fn http(router: Router) -> std::io::Result<Self> {
        let tcp = TcpListener::bind("127.0.0.1:0").await?;
        let port = tcp.local_addr()?.port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let router = router.layer(middleware::from_fn_with_state(log.clone(), record));
        spawn(axum::serve(tcp, router).into_future());
        Ok(Self {
            url: format!("http://127.0.0.1:{port}"),
            ca_pem: String::new(),
            log,
        })
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }
}

fn spawn(server: impl Future<Output = std::io::Result<()>> + Send + 'static) {
    tokio::spawn(async move {
        let _ = server.await;
    });
}

async fn record(
    axum::extract::State(log): axum::extract::State<Arc<Mutex<Vec<Recorded>>>>,
    request: Request,
    next: Next,
) -> Response {
    log.lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .push(Recorded {
            method: request.method().clone(),
            path: request.uri().path().to_owned(),
            query: request.uri().query().map(str::to_owned),
            headers: request.headers().clone(),
        });
    next.run(request).await
}

/// A JSON error answer, as most vendor APIs give one.
pub fn reject(status: StatusCode, body: serde_json::Value) -> Response {
    (status, axum::Json(body)).into_response()
}

/// The value of header `name`, if it is present and text.
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The bearer token of an `Authorization: Bearer ...` header.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    header(headers, "authorization").and_then(|value| value.strip_prefix("Bearer "))
}

/// The CA every fake of this process presents certificates of: one per process, so that
/// backends without a CA field (trusting the system roots through `SSL_CERT_FILE`, one file per
/// process) can talk to several fakes at once.
struct ProcessCa {
    params: rcgen::CertificateParams,
    key_pem: String,
    pem: String,
}

fn process_ca() -> Result<&'static ProcessCa, Box<dyn std::error::Error + Send + Sync>> {
    static CA: std::sync::OnceLock<Result<ProcessCa, String>> = std::sync::OnceLock::new();
    let made = CA.get_or_init(|| {
        let make = || -> Result<ProcessCa, rcgen::Error> {
            let key = rcgen::KeyPair::generate()?;
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new())?;
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, "contract-fakes CA");
            let certificate = params.self_signed(&key)?;
            Ok(ProcessCa {
                params,
                key_pem: key.serialize_pem(),
                pem: certificate.pem(),
            })
        };
        make().map_err(|error| error.to_string())
    });
    made.as_ref().map_err(|error| error.clone().into())
}

/// A server certificate for 127.0.0.1 and localhost, signed by the process's CA.
fn tls_acceptor() -> Result<(TlsAcceptor, String), Box<dyn std::error::Error + Send + Sync>> {
    let ca = process_ca()?;
    let issuer = rcgen::Issuer::new(ca.params.clone(), rcgen::KeyPair::from_pem(&ca.key_pem)?);
    let server_key = rcgen::KeyPair::generate()?;
    let mut server_params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])?;
    server_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "127.0.0.1");
    let server = server_params.signed_by(&server_key, &issuer)?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(
        vec![CertificateDer::from(server.der().to_vec())],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
    )?;
    Ok((TlsAcceptor::from(Arc::new(config)), ca.pem.clone()))
}

/// TCP connections after a TLS handshake; failed handshakes are dropped.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, address)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(tcp).await {
                return (tls, address);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use rustls::pki_types::pem::PemObject as _;

    #[tokio::test]
    async fn serves_https_with_its_ca_and_records_requests() {
        let router = Router::new().route(
            "/v1/thing",
            get(|headers: HeaderMap| async move {
                match bearer(&headers) {
                    Some("token") => (StatusCode::OK, "ok").into_response(),
                    _ => reject(
                        StatusCode::UNAUTHORIZED,
                        serde_json::json!({"error": "unauthorized"}),
                    ),
                }
            }),
        );
        let server = FakeServer::https(router).await.unwrap();
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates({
            let mut roots = rustls::RootCertStore::empty();
            let der = rustls::pki_types::CertificateDer::from_pem_slice(server.ca_pem.as_bytes());
            roots.add(der.unwrap()).unwrap();
            roots
        })
        .with_no_client_auth();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .build()
            .unwrap();
        let url = format!("{}/v1/thing?x=1", server.url);
        let denied = client.get(&url).send().await.unwrap();
        assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
        let allowed = client.get(&url).bearer_auth("token").send().await.unwrap();
        assert_eq!(allowed.text().await.unwrap(), "ok");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[1].path, "/v1/thing");
        assert_eq!(requests[1].query.as_deref(), Some("x=1"));
        assert_eq!(bearer(&requests[1].headers), Some("token"));
    }
}
