//! `--metrics-secure`: `/metrics` of the controller, the webhook and the cert controller (and
//! the controller's probes on the same port) over HTTPS,
//! as controller-runtime's secure serving does. The certificate is `--metrics-cert-name` and
//! `--metrics-key-name` in `--metrics-cert-dir`, reloaded when the files change (polled every
//! 10 seconds; a half-written pair is refused and the previous one kept), like
//! controller-runtime's certificate watcher. Without `--metrics-cert-dir` a self-signed
//! certificate for `localhost` is generated into a temporary directory, as controller-runtime
//! does.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use tokio_rustls::TlsAcceptor;

use crate::certcontroller::{bundle, verify};
use crate::webhook::certs::{CertStore, Reload};
use crate::webhook::listener::TlsListener;
use crate::webhook::tls;

/// How often the certificate files are looked at.
const POLL_INTERVAL: Duration = Duration::from_secs(10);

/// Where the metrics server's certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsTls {
    /// The directory holding the files; `None` generates a self-signed certificate.
    pub cert_dir: Option<PathBuf>,
    /// The certificate file's name in `cert_dir`.
    pub cert_name: String,
    /// The key file's name in `cert_dir`.
    pub key_name: String,
}

impl MetricsTls {
    /// The certificate store, loaded once; the directory of a generated certificate is
    /// created here.
    pub fn store(&self) -> anyhow::Result<Arc<CertStore>> {
        let directory = match &self.cert_dir {
            Some(directory) => directory.clone(),
            None => self_signed(&self.cert_name, &self.key_name)?,
        };
        let store = Arc::new(CertStore::with_names(
            directory,
            &self.cert_name,
            &self.key_name,
            verify::crypto_provider(),
        ));
        reload(&store);
        Ok(store)
    }
}

/// An HTTPS listener on `tcp` serving `store`'s current certificate (TLS 1.2+), advertising
/// HTTP/2 only with `http2`.
pub fn listener(
    tcp: tokio::net::TcpListener,
    store: Arc<CertStore>,
    http2: bool,
) -> anyhow::Result<TlsListener> {
    let config = tls::server_config(&verify::crypto_provider(), ("", ""), store, http2)?;
    Ok(TlsListener::new(tcp, TlsAcceptor::from(Arc::new(config)))?)
}

/// Reloads changed certificate files every [`POLL_INTERVAL`] until `shutdown` completes.
pub async fn watch(store: Arc<CertStore>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(POLL_INTERVAL) => reload(&store),
        }
    }
}

fn reload(store: &CertStore) {
    match store.reload() {
        Ok(Reload::Loaded) => tracing::info!("metrics serving certificate loaded"),
        Ok(Reload::Unchanged) => {}
        Err(error) => tracing::warn!(
            %error,
            "metrics serving certificate not loaded; keeping the previous one, if any"
        ),
    }
}

/// Writes a new self-signed certificate for `localhost` into a fresh temporary directory.
fn self_signed(cert_name: &str, key_name: &str) -> anyhow::Result<PathBuf> {
    let directory = std::env::temp_dir().join(format!(
        "eso-metrics-serving-certs-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    std::fs::create_dir_all(&directory).context("creating the metrics certificate directory")?;
    let names = ["localhost".to_owned(), "localhost.localdomain".to_owned()];
    let generated = bundle::generate(&names, SystemTime::now())
        .context("generating the metrics serving certificate")?;
    std::fs::write(directory.join(cert_name), &generated.cert)?;
    std::fs::write(directory.join(key_name), &generated.key)?;
    Ok(directory)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::TlsConnector;

    use super::*;
    use crate::metrics::Metrics;

    fn generate() -> bundle::Bundle {
        let names = ["localhost".to_owned(), "metrics.eso.svc".to_owned()];
        bundle::generate(&names, SystemTime::now()).unwrap()
    }

    /// GET /metrics over TLS trusting only `ca`; the response, or the handshake error.
    async fn scrape(address: std::net::SocketAddr, ca: &str) -> std::io::Result<String> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
            .unwrap();
        let config = rustls::ClientConfig::builder_with_provider(verify::crypto_provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(address).await?;
        let name = ServerName::try_from("localhost").unwrap();
        let mut tls = TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await?;
        tls.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await?;
        let mut response = String::new();
        tls.read_to_string(&mut response).await?;
        Ok(response)
    }

    #[tokio::test]
    async fn serves_metrics_over_tls_and_picks_up_a_rotated_certificate() {
        let directory = std::env::temp_dir().join(format!(
            "eso-metrics-tls-test-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        std::fs::create_dir_all(&directory).unwrap();
        let first = generate();
        std::fs::write(directory.join("server.pem"), &first.cert).unwrap();
        std::fs::write(directory.join("server-key.pem"), &first.key).unwrap();
        let settings = MetricsTls {
            cert_dir: Some(directory.clone()),
            cert_name: "server.pem".to_owned(),
            key_name: "server-key.pem".to_owned(),
        };
        let store = settings.store().unwrap();
        let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = tcp.local_addr().unwrap();
        let metrics = Arc::new(Metrics::default());
        metrics.controller_started("externalsecret", 1);
        let server = crate::http_serve::serve(
            listener(tcp, store.clone(), false).unwrap(),
            crate::server::router(metrics, None),
            false,
            std::future::pending(),
        );
        let server = tokio::spawn(server);

        let response = scrape(address, &first.ca_cert).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.contains("controller_runtime_max_concurrent_reconciles"));

        // A rotated pair from another CA is served after the reload; the old CA no longer
        // verifies it.
        let second = generate();
        std::fs::write(directory.join("server.pem"), &second.cert).unwrap();
        std::fs::write(directory.join("server-key.pem"), &second.key).unwrap();
        assert_eq!(store.reload().unwrap(), Reload::Loaded);
        let response = scrape(address, &second.ca_cert).await.unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(scrape(address, &first.ca_cert).await.is_err());
        server.abort();
    }

    #[test]
    fn without_a_directory_a_self_signed_certificate_is_generated() {
        let settings = MetricsTls {
            cert_dir: None,
            cert_name: "tls.crt".to_owned(),
            key_name: "tls.key".to_owned(),
        };
        let store = settings.store().unwrap();
        // Loaded at creation: a second reload finds the same files.
        assert_eq!(store.reload().unwrap(), Reload::Unchanged);
    }
}
