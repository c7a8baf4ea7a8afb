//! The HTTP endpoints Kubernetes and Prometheus poll: `/metrics`, `/healthz`, `/readyz`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::http_serve;
use crate::metrics::Metrics;
use crate::metrics_auth::{self, MetricsAuth};
use crate::secure_metrics;
use crate::webhook::certs::CertStore;

/// The router serving the metrics (behind `auth`, with `--metrics-auth`) and the probes.
pub fn router(metrics: Arc<Metrics>, auth: Option<Arc<MetricsAuth>>) -> Router {
    let metrics = Router::new()
        .route("/metrics", get(metrics_handler))
        .with_state(metrics);
    probes().merge(metrics_auth::protect(metrics, auth))
}

/// The liveness and readiness probes alone (upstream's `--live-addr` endpoint).
fn probes() -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
}

async fn metrics_handler(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.encode(),
    )
}

/// How the metrics port is served: the certificate for HTTPS (`--metrics-secure`), the reader
/// check (`--metrics-auth`), and whether HTTPS offers HTTP/2 (`--enable-http2`).
pub struct MetricsServing {
    /// The serving certificate; plain HTTP without one.
    pub tls: Option<Arc<CertStore>>,
    /// Who may read `/metrics`; anyone without one.
    pub auth: Option<Arc<MetricsAuth>>,
    /// Offer HTTP/2 over HTTPS (plain HTTP always speaks HTTP/1.1, as upstream's servers).
    pub http2: bool,
}

/// Serves the controller's metrics and probes on `metrics_address` as `serving` says, and the
/// probes on `live_address` too (upstream serves them there), until `shutdown` completes.
pub async fn serve<F>(
    (metrics_address, live_address): (SocketAddr, SocketAddr),
    metrics: Arc<Metrics>,
    serving: MetricsServing,
    shutdown: impl Fn() -> F,
) -> anyhow::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let router = router(metrics, serving.auth.clone());
    let metrics_server = serve_metrics(metrics_address, router, serving, &shutdown).await?;
    if live_address == metrics_address {
        return Ok(metrics_server.await?);
    }
    let live_listener = tokio::net::TcpListener::bind(live_address).await?;
    tracing::info!(address = %live_address, "serving /healthz and /readyz");
    let live_server = http_serve::serve(live_listener, probes(), false, shutdown());
    futures::future::try_join(metrics_server, live_server).await?;
    Ok(())
}

/// Binds `address` and returns the server of `router` there (over HTTPS with `serving.tls`,
/// the certificate reloaded while it runs) until `shutdown` completes. `serving.auth` must
/// already protect `router`; it is not applied here.
pub async fn serve_metrics<F>(
    address: SocketAddr,
    router: Router,
    serving: MetricsServing,
    shutdown: &impl Fn() -> F,
) -> anyhow::Result<BoxFuture<'static, std::io::Result<()>>>
where
    F: Future<Output = ()> + Send + 'static,
{
    let tcp = tokio::net::TcpListener::bind(address).await?;
    Ok(match serving.tls {
        Some(store) => {
            tracing::info!(%address, http2 = serving.http2, "serving metrics over HTTPS");
            let listener = secure_metrics::listener(tcp, store.clone(), serving.http2)?;
            let watcher = secure_metrics::watch(store, shutdown());
            let server = http_serve::serve(listener, router, serving.http2, shutdown());
            async move { futures::future::join(server, watcher).await.0 }.boxed()
        }
        None => {
            tracing::info!(%address, "serving metrics");
            http_serve::serve(tcp, router, false, shutdown()).boxed()
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::router;
    use crate::metrics::Metrics;

    async fn get(path: &str) -> (StatusCode, String) {
        let metrics = Arc::new(Metrics::default());
        metrics.reconcile_finished("secretstore", "success");
        let response = router(metrics, None)
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn serves_metrics_and_probes() {
        let (status, body) = get("/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("controller_runtime_reconcile_total"));
        assert_eq!(get("/healthz").await, (StatusCode::OK, "ok".to_owned()));
        assert_eq!(get("/readyz").await, (StatusCode::OK, "ok".to_owned()));
        assert_eq!(get("/nope").await.0, StatusCode::NOT_FOUND);
    }
}
