//! A loopback Kubernetes API server for tests.
//!
//! It speaks enough of the real REST protocol (JSON, plus protobuf bodies for a few built-in
//! kinds) for kube-rs clients and runtimes, `kubectl` and the unmodified controller binary:
//! plain and aggregated discovery; built-in kinds (Namespace, Secret, ConfigMap,
//! ServiceAccount with TokenRequest, TokenReview, SubjectAccessReview from stored RBAC, Event,
//! Lease, webhook configurations);
//! CustomResourceDefinitions with schema validation, defaulting and pruning; list/watch with
//! selectors, pagination, bookmarks and 410 expiry; create/update/patch (merge, JSON,
//! strategic-as-merge, server-side apply approximated); deletion with finalizers,
//! propagation policies, garbage collection and namespace termination; RBAC enforced for
//! requests made with the ServiceAccount tokens it issues.
//!
//! It is test-only: it keeps everything in memory and is never linked into the shipped
//! binary. See each module for what it approximates.
//!
//! ```no_run
//! # async fn example() -> anyhow::Result<()> {
//! let server = loopback_apiserver::LoopbackServer::start(loopback_apiserver::Options::default()).await?;
//! let client = server.client().await?;
//! # Ok(()) }
//! ```

mod access;
mod apply;
mod authz;
mod bootstrap;
mod builtin;
mod counters;
mod crd;
mod discovery;
mod errors;
mod gc;
mod kubeconfig;
mod meta;
mod openapi;
mod patch;
mod protobuf;
mod query;
mod read;
mod resources;
mod routes;
mod schema;
mod selectors;
mod server;
mod state;
mod store;
mod tls;
mod tokens;
mod validation;
mod watch;
mod write;

pub use counters::RequestKey;
pub use tokens::TokenIssuer;

use anyhow::Context;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How to run the server.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to listen; port 0 picks a free port.
    pub address: SocketAddr,
    /// Serve HTTPS with a generated certificate (otherwise plain HTTP).
    pub tls: bool,
    /// Bearer token clients must present (it is cluster-admin; ServiceAccount tokens this
    /// server issues are accepted too and authorized by RBAC); `None` disables authentication.
    pub token: Option<String>,
    /// Where to write the kubeconfig; a fresh temporary directory when `None`.
    pub kubeconfig: Option<PathBuf>,
    /// Watch events kept per resource; watches from older resourceVersions get 410.
    pub watch_history: usize,
    /// How often watches that allow bookmarks receive one.
    pub bookmark_interval: Duration,
    /// `iss` of ServiceAccount tokens.
    pub issuer: String,
    /// Default audience of ServiceAccount tokens.
    pub audience: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            address: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: true,
            token: Some(format!("loopback-{:016x}", fastrand::u64(..))),
            kubeconfig: None,
            watch_history: 50_000,
            bookmark_interval: Duration::from_secs(5),
            issuer: "https://kubernetes.default.svc.cluster.local".into(),
            audience: "https://kubernetes.default.svc.cluster.local".into(),
        }
    }
}

/// A running server; dropping it shuts it down (and removes its temporary kubeconfig).
pub struct LoopbackServer {
    server: Arc<server::Server>,
    /// The bound address, kept to serve on the same port again after [`Self::restart`].
    local: SocketAddr,
    tls: Option<tokio_rustls::TlsAcceptor>,
    kubeconfig: PathBuf,
    temporary_directory: Option<PathBuf>,
    ca_pem: Option<String>,
    shutdown: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for LoopbackServer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("LoopbackServer")
            .field("base_url", &self.server.base_url)
            .field("kubeconfig", &self.kubeconfig)
            .finish()
    }
}

impl LoopbackServer {
    /// Binds, writes the kubeconfig and starts serving on the current tokio runtime.
    pub async fn start(options: Options) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(options.address)
            .await
            .with_context(|| format!("binding {}", options.address))?;
        let local = listener.local_addr()?;
        let host = if local.ip().is_unspecified() {
            "127.0.0.1".to_owned()
        } else {
            local.ip().to_string()
        };
        let address = if local.is_ipv6() {
            format!("[{host}]:{}", local.port())
        } else {
            format!("{host}:{}", local.port())
        };
        // Generated over plain HTTP too: every namespace's `kube-root-ca.crt` publishes the CA.
        let certificates = tls::generate().context("generating the serving certificate")?;
        let (base_url, acceptor, ca_pem) = if options.tls {
            let acceptor = tokio_rustls::TlsAcceptor::from(certificates.server_config);
            (
                format!("https://{address}"),
                Some(acceptor),
                Some(certificates.ca_pem.clone()),
            )
        } else {
            (format!("http://{address}"), None, None)
        };
        let (temporary_directory, kubeconfig) = match &options.kubeconfig {
            Some(path) => (None, path.clone()),
            None => {
                let directory = std::env::temp_dir().join(format!(
                    "loopback-apiserver-{}-{:08x}",
                    std::process::id(),
                    fastrand::u32(..)
                ));
                (Some(directory.clone()), directory.join("kubeconfig"))
            }
        };
        kubeconfig::write(
            &kubeconfig,
            &base_url,
            ca_pem.as_deref(),
            options.token.as_deref(),
        )
        .with_context(|| format!("writing {}", kubeconfig.display()))?;
        let issuer = TokenIssuer::new(&options.issuer, &options.audience)?;
        let (shutdown, shutdown_receiver) = tokio::sync::watch::channel(false);
        let server = Arc::new(server::Server::new(
            state::State::new(options.watch_history, certificates.ca_pem),
            issuer,
            options.token.clone(),
            base_url,
            address,
            options.bookmark_interval,
            shutdown_receiver,
        ));
        let task = tokio::spawn(server::serve(listener, server.clone(), acceptor.clone()));
        tracing::info!(url = %server.base_url, kubeconfig = %kubeconfig.display(), "loopback API server started");
        Ok(Self {
            server,
            local,
            tls: acceptor,
            kubeconfig,
            temporary_directory,
            ca_pem,
            shutdown,
            task,
        })
    }

    /// The kubeconfig file pointing at this server.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// `https://127.0.0.1:<port>` (or `http://`).
    pub fn base_url(&self) -> &str {
        &self.server.base_url
    }

    /// The bearer token clients present, if authentication is on.
    pub fn token(&self) -> Option<&str> {
        self.server.token.as_deref()
    }

    /// PEM of the CA that signed the serving certificate (HTTPS only).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The ServiceAccount token issuer (for checking tokens, or the OIDC issuer name).
    pub fn token_issuer(&self) -> &TokenIssuer {
        &self.server.issuer
    }

    /// Requests answered so far, by client (User-Agent), verb and resource: what a process
    /// under test asked of the server.
    pub fn request_counts(&self) -> BTreeMap<RequestKey, u64> {
        self.server.counters.snapshot()
    }

    /// Makes every LIST of `plural` (e.g. `namespaces`) wait `delay` before it is answered, as
    /// a slow or overloaded API server does at a controller's start (watches and other verbs are
    /// not delayed); a zero `delay` ends it. For reproducing races on unsynced caches.
    pub fn delay_lists(&self, plural: &str, delay: Duration) {
        self.server.delay_lists(plural, delay);
    }

    /// A kube client for this server, built from its kubeconfig.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig)?;
        let config = kube::Config::from_custom_kubeconfig(
            kubeconfig,
            &kube::config::KubeConfigOptions::default(),
        )
        .await?;
        Ok(kube::Client::try_from(config)?)
    }

    /// Restarts the server as an API server restart looks to clients: every connection and
    /// watch ends and the port refuses connections for `down`, then it serves again on the
    /// same address with the same objects (resourceVersions continue).
    pub async fn restart(&mut self, down: Duration) -> anyhow::Result<()> {
        let _ = self.shutdown.send(true);
        self.task.abort();
        tokio::time::sleep(down).await;
        let listener = tokio::net::TcpListener::bind(self.local)
            .await
            .with_context(|| format!("binding {} again", self.local))?;
        let _ = self.shutdown.send(false);
        self.task = tokio::spawn(server::serve(
            listener,
            self.server.clone(),
            self.tls.clone(),
        ));
        Ok(())
    }

    /// Stops serving and ends every watch.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.task.abort();
        if let Some(directory) = &self.temporary_directory {
            let _ = std::fs::remove_dir_all(directory);
        }
    }
}
