//! A contract fake of the Compute Engine metadata server's token endpoint,
//! `GET /computeMetadata/v1/instance/service-accounts/default/token` (cloud.google.com/compute/
//! docs/access/authenticate-workloads, "Applications that use the metadata server"), which
//! Google's default credentials use when no key file is configured. It is a fake: no Google
//! service is involved.
//!
//! As the real server, it refuses (403) a request without the `Metadata-Flavor: Google` header
//! and answers `{"access_token", "expires_in", "token_type": "Bearer"}` otherwise; it counts the
//! tokens it issued.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::google::TOKEN_LIFETIME_SECONDS;
use crate::server::{FakeServer, header};

/// A running metadata server.
pub struct MetadataServer {
    /// The server (plain HTTP, as the real one).
    pub server: FakeServer,
    issued: Arc<AtomicUsize>,
}

impl MetadataServer {
    /// Serves tokens of the instance's default service account.
    pub async fn start() -> std::io::Result<Self> {
        let issued = Arc::new(AtomicUsize::new(0));
        let router = Router::new()
            .route(
                "/computeMetadata/v1/instance/service-accounts/default/token",
                get(token),
            )
            .with_state(issued.clone());
        let server = FakeServer::http(router).await?;
        Ok(Self { server, issued })
    }

    /// `host:port`, the form `GCE_METADATA_HOST` takes.
    pub fn host(&self) -> &str {
        self.server
            .url
            .strip_prefix("http://")
            .unwrap_or(&self.server.url)
    }

    /// How many tokens were issued.
    pub fn issued(&self) -> usize {
        self.issued.load(Ordering::SeqCst)
    }
}

async fn token(State(issued): State<Arc<AtomicUsize>>, headers: HeaderMap) -> Response {
    if header(&headers, "metadata-flavor") != Some("Google") {
        return (
            StatusCode::FORBIDDEN,
            "Missing required header: Metadata-Flavor",
        )
            .into_response();
    }
    let number = issued.fetch_add(1, Ordering::SeqCst) + 1;
    axum::Json(json!({
        "access_token": format!("ya29.metadata-{number}"),
        "expires_in": TOKEN_LIFETIME_SECONDS,
        "token_type": "Bearer",
    }))
    .into_response()
}
