//! The probe and metrics endpoints of the webhook and the cert controller: `/healthz` always
//! answers `ok` while the process serves; `/readyz` answers `ok` only while the component's
//! readiness check passes, and 503 with the reason otherwise (upstream's `--healthz-addr`
//! endpoint). Unlike the controllers' static probes (`crate::server`), readiness here depends
//! on state: a loaded certificate, a written Secret.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;

/// Why a component is not ready: the component's own error (the webhook's certificate check,
/// the cert controller's wait), answered as the `/readyz` body.
pub type NotReady = Box<dyn std::error::Error + Send + Sync>;

/// A readiness check: `Err` carries why the component is not ready.
pub type Readiness = Arc<dyn Fn() -> Result<(), NotReady> + Send + Sync>;

/// `/healthz` and `/readyz` answering from `ready`.
pub fn router(ready: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || {
                let ready = ready.clone();
                async move {
                    match ready() {
                        Ok(()) => (StatusCode::OK, "ok".to_owned()),
                        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, reason.to_string()),
                    }
                }
            }),
        )
}

/// `/metrics` answering with the text `encode` produces.
pub fn metrics_router(encode: Arc<dyn Fn() -> String + Send + Sync>) -> Router {
    Router::new().route(
        "/metrics",
        get(move || {
            let text = encode();
            async move {
                (
                    [(
                        CONTENT_TYPE,
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )],
                    text,
                )
                    .into_response()
            }
        }),
    )
}

/// Serves `router` over plain HTTP/1.1 on `address` until `shutdown` completes.
pub async fn serve(
    address: SocketAddr,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    crate::http_serve::serve(listener, router, false, shutdown).await
}

/// Completes on SIGINT or SIGTERM.
pub async fn termination() {
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(error) => {
                tracing::warn!(%error, "cannot handle SIGTERM; stopping on SIGINT only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    async fn get(router: &Router, path: &str) -> (StatusCode, String) {
        let response = router
            .clone()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn readiness_follows_the_check() {
        let ready = Arc::new(AtomicBool::new(false));
        let check: Readiness = {
            let ready = ready.clone();
            Arc::new(move || {
                if ready.load(Ordering::SeqCst) {
                    Ok(())
                } else {
                    Err("no certificate loaded".into())
                }
            })
        };
        let router = router(check);
        assert_eq!(
            get(&router, "/healthz").await,
            (StatusCode::OK, "ok".into())
        );
        assert_eq!(
            get(&router, "/readyz").await,
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "no certificate loaded".into()
            )
        );
        ready.store(true, Ordering::SeqCst);
        assert_eq!(get(&router, "/readyz").await, (StatusCode::OK, "ok".into()));
    }

    #[tokio::test]
    async fn metrics_are_encoded_per_request() {
        let router = metrics_router(Arc::new(|| "up 1\n".to_owned()));
        assert_eq!(
            get(&router, "/metrics").await,
            (StatusCode::OK, "up 1\n".into())
        );
    }
}
