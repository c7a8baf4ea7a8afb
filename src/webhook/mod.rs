//! The `webhook` subcommand: validating admission webhooks for ExternalSecrets, SecretStores,
//! ClusterSecretStores (upstream's three) and ClusterExternalSecrets and PushSecrets, served
//! over HTTPS on `--port` with the certificate in `--cert-dir`.
//!
//! Unlike upstream, which waits for certificates before serving anything and restarts to pick
//! up new ones, the server starts at once (readiness reports the missing certificate) and
//! swaps certificates in place when the files change. The files are polled every
//! `--check-interval` (at least every 10 seconds); at every `--check-interval` the served
//! certificate must still be valid `--lookahead-interval` ahead, else an error is logged.
//! `/readyz` on `--healthz-addr` is ready while the certificate chains to `ca.crt` and is
//! valid for `--dns-name` for the next hour, upstream's readiness check.
//!
//! The webhook and `--metrics-secure` metrics speak HTTP/1.1 only unless `--enable-http2`
//! (upstream's default, see `crate::http_serve`); metrics take the controller's flags.

mod admission;
pub(crate) mod certs;
pub(crate) mod listener;
pub(crate) mod metrics;
pub mod probes;
pub(crate) mod tls;
mod validate;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::certcontroller::verify;
use crate::cli::WebhookArgs;
use crate::http_serve;
use certs::{CertStore, Reload};
use metrics::WebhookMetrics;

/// The certificate files are looked at least this often, whatever `--check-interval` says.
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(10);
/// Ready while the certificate stays valid this long (upstream's readiness check).
const READY_HORIZON: Duration = Duration::from_secs(3600);

/// Runs the webhook server until SIGINT or SIGTERM.
pub async fn run(args: WebhookArgs) -> anyhow::Result<()> {
    let provider = verify::crypto_provider();
    let store = Arc::new(CertStore::new(args.cert_dir.clone(), provider.clone()));
    load(&store);
    let metrics_tls = &args.probes.metrics_tls;
    let config = tls::server_config(
        &provider,
        (&args.tls_ciphers, &args.tls_min_version),
        store.clone(),
        metrics_tls.enable_http2,
    )?;
    let metrics = Arc::new(WebhookMetrics::default());
    // The webhook talks to the API server only to check metrics readers (`--metrics-auth`).
    let serving = metrics_tls.serving(None).await?;
    let (stop, stopped) = watch::channel(false);
    let shutdown = move || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        }
    };
    let tcp = bind_all_interfaces(args.port).await?;
    let address = tcp.local_addr()?;
    let https = http_serve::serve(
        listener::TlsListener::new(tcp, TlsAcceptor::from(Arc::new(config)))?,
        admission::router(metrics.clone()),
        metrics_tls.enable_http2,
        shutdown(),
    );
    tracing::info!(%address, cert_dir = %args.cert_dir.display(), "serving admission webhooks");

    let readiness: probes::Readiness = {
        let store = store.clone();
        let dns_name = args.dns_name.clone();
        Arc::new(move || {
            store
                .check(&dns_name, SystemTime::now() + READY_HORIZON)
                .map_err(Into::into)
        })
    };
    let probe_server = probes::serve(
        args.probes.healthz_addr,
        probes::router(readiness),
        shutdown(),
    );
    let metrics_router = crate::metrics_auth::protect(
        probes::metrics_router(Arc::new(move || metrics.encode())),
        serving.auth.clone(),
    );
    let metrics_server =
        crate::server::serve_metrics(args.probes.metrics_addr, metrics_router, serving, &shutdown)
            .await?;
    let watcher = watch_certificates(store, &args, shutdown());
    let servers = async {
        tokio::try_join!(
            async { https.await.context("serving webhooks") },
            async { probe_server.await.context("serving probes") },
            async { metrics_server.await.context("serving metrics") },
        )
    };
    tokio::pin!(servers);
    tokio::select! {
        result = &mut servers => { result?; }
        () = probes::termination() => {
            tracing::info!("termination signal received, shutting down");
            let _ = stop.send(true);
            servers.await?;
        }
    }
    let _ = stop.send(true);
    watcher.await.context("certificate watcher task")?;
    Ok(())
}

/// Listens on `port` of every interface, as upstream (`:port`): dual-stack where the host has
/// IPv6, IPv4 only where it does not.
async fn bind_all_interfaces(port: u16) -> anyhow::Result<tokio::net::TcpListener> {
    let any_v6 = std::net::SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port));
    match tokio::net::TcpListener::bind(any_v6).await {
        Ok(listener) => Ok(listener),
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => {
            Err(error).with_context(|| format!("binding the webhook port {any_v6}"))
        }
        Err(error) => {
            tracing::debug!(%error, "no IPv6 listener, listening on IPv4 only");
            let any_v4 = std::net::SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, port));
            tokio::net::TcpListener::bind(any_v4)
                .await
                .with_context(|| format!("binding the webhook port {any_v4}"))
        }
    }
}

/// Loads the certificate files, logging what happened.
fn load(store: &CertStore) {
    match store.reload() {
        Ok(Reload::Loaded) => tracing::info!("serving certificate loaded"),
        Ok(Reload::Unchanged) => {}
        Err(error) => {
            tracing::warn!(%error, "serving certificate not loaded; keeping the previous one, if any")
        }
    }
}

/// Reloads changed certificate files and checks the lookahead, until `shutdown`.
fn watch_certificates(
    store: Arc<CertStore>,
    args: &WebhookArgs,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let poll = args
        .check_interval
        .min(MAX_POLL_INTERVAL)
        .max(Duration::from_millis(100));
    let check_interval = args.check_interval;
    let lookahead = args.lookahead_interval;
    let dns_name = args.dns_name.clone();
    tokio::spawn(async move {
        tokio::pin!(shutdown);
        let mut last_check = Instant::now();
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(poll) => {}
            }
            load(&store);
            if last_check.elapsed() >= check_interval {
                last_check = Instant::now();
                match store.check(&dns_name, SystemTime::now() + lookahead) {
                    Ok(()) => tracing::info!("certs are valid"),
                    Err(error) => tracing::error!(
                        %error,
                        lookahead = ?lookahead,
                        "certs are not valid at now + lookahead"
                    ),
                }
            }
        }
    })
}
