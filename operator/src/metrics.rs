//! The operator's metrics (`/metrics`, Prometheus text format) and probes (`/healthz`,
//! `/readyz`), on the same ports and paths as the operand's (`:8080`, and `:8081` for probes).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// The result of a reconcile, as label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// `success` or `error` (controller-runtime's values).
    pub result: &'static str,
}

/// Reconcile counts, as controller-runtime names them for the operand's controllers.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<ResultLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let reconciles = Family::<ResultLabels, Counter>::default();
        // Both series exist from the start, at zero, so rates work before the first error.
        for result in ["success", "error"] {
            let _ = reconciles.get_or_create(&ResultLabels { result });
        }
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations of ExternalSecretsConfig",
            reconciles.clone(),
        );
        Self {
            registry,
            reconciles,
        }
    }
}

impl Metrics {
    /// Counts one reconcile.
    pub fn count(&self, success: bool) {
        let result = if success { "success" } else { "error" };
        self.reconciles
            .get_or_create(&ResultLabels { result })
            .inc();
    }

    /// The Prometheus text exposition.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}

fn probes() -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
}

/// Serves `/metrics` and the probes on `metrics_address`, the probes on `probe_address`.
pub async fn serve(
    metrics_address: SocketAddr,
    probe_address: SocketAddr,
    metrics: Arc<Metrics>,
) -> std::io::Result<()> {
    let router = probes().route(
        "/metrics",
        get(move || {
            let metrics = metrics.clone();
            async move { metrics.encode() }
        }),
    );
    let metrics_listener = tokio::net::TcpListener::bind(metrics_address).await?;
    let probe_listener = tokio::net::TcpListener::bind(probe_address).await?;
    tracing::info!(%metrics_address, %probe_address, "serving /metrics, /healthz and /readyz");
    let metrics_server = axum::serve(metrics_listener, router).into_future();
    let probe_server = axum::serve(probe_listener, probes()).into_future();
    futures::future::try_join(metrics_server, probe_server)
        .await
        .map(|_| ())
}
