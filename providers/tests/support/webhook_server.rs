//! The webhook provider against a small key/value HTTP API on 127.0.0.1.
//!
//! API: `GET|POST|PUT|DELETE /buckets/{bucket}/secrets/{key}`; the body is the value. Every
//! request must carry `Authorization: Bearer <token>` (the token reaches the store through a
//! labelled Secret, as in real use). Each harness client gets its own bucket.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::routing::any;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{
    SecretStoreProvider, WebhookProvider, WebhookResult, WebhookSecret,
};
use external_secrets_providers::SharedClient;
use external_secrets_providers::credentials::MemorySecretSource;

use super::{Features, Harness, NAMESPACE, client_for, secret_store, unique_name};

const TOKEN: &str = "behaviour-token";

type Buckets = Arc<Mutex<HashMap<String, HashMap<String, Vec<u8>>>>>;

async fn handle(
    State(buckets): State<Buckets>,
    Path((bucket, key)): Path<(String, String)>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, Vec<u8>) {
    let authorized = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        == Some(&format!("Bearer {TOKEN}"));
    if !authorized {
        return (StatusCode::UNAUTHORIZED, Vec::new());
    }
    let mut buckets = buckets.lock().unwrap();
    let bucket = buckets.entry(bucket).or_default();
    match method {
        Method::GET => match bucket.get(&key) {
            Some(value) => (StatusCode::OK, value.clone()),
            None => (StatusCode::NOT_FOUND, Vec::new()),
        },
        Method::POST | Method::PUT => {
            bucket.insert(key, body.to_vec());
            (StatusCode::NO_CONTENT, Vec::new())
        }
        Method::DELETE => match bucket.remove(&key) {
            Some(_) => (StatusCode::NO_CONTENT, Vec::new()),
            None => (StatusCode::NOT_FOUND, Vec::new()),
        },
        _ => (StatusCode::METHOD_NOT_ALLOWED, Vec::new()),
    }
}

/// A running key/value server and stores pointing at it.
pub struct WebhookHarness {
    base_url: String,
    buckets: Buckets,
}

impl WebhookHarness {
    /// Starts the server on an ephemeral port of 127.0.0.1.
    pub async fn start() -> Self {
        let buckets = Buckets::default();
        let app = Router::new()
            .route("/buckets/{bucket}/secrets/{key}", any(handle))
            .with_state(buckets.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self {
            base_url: format!("http://{address}"),
            buckets,
        }
    }
}

#[async_trait]
impl Harness for WebhookHarness {
    fn name(&self) -> &'static str {
        "webhook"
    }

    fn features(&self) -> Features {
        Features {
            find_by_name: false,
            delete_removes: true,
        }
    }

    async fn client(&self, seed: &[(&str, &str)]) -> SharedClient {
        let bucket = unique_name("bucket");
        self.buckets.lock().unwrap().insert(
            bucket.clone(),
            seed.iter()
                .map(|(key, value)| ((*key).to_owned(), value.as_bytes().to_vec()))
                .collect(),
        );
        let key = "{{ if .remoteRef.remoteKey }}{{ .remoteRef.remoteKey }}\
                   {{ else }}{{ .remoteRef.key }}{{ end }}";
        let provider = WebhookProvider {
            url: format!("{}/buckets/{bucket}/secrets/{key}", self.base_url),
            headers: [(
                "Authorization".to_owned(),
                "Bearer {{ .auth.token }}".to_owned(),
            )]
            .into(),
            result: Some(WebhookResult {
                json_path: Some(
                    "{{ if .remoteRef.property }}$.{{ .remoteRef.property }}{{ end }}".into(),
                ),
            }),
            secrets: vec![WebhookSecret {
                name: "auth".into(),
                secret_ref: SecretKeySelector {
                    name: Some("webhook-auth".into()),
                    namespace: None,
                    key: None,
                },
            }],
            timeout: Some("5s".into()),
            ..WebhookProvider::default()
        };
        let source = MemorySecretSource::default().with_secret(
            NAMESPACE,
            "webhook-auth",
            &[("external-secrets.io/type", "webhook")],
            &[("token", TOKEN)],
        );
        let store = secret_store(
            &unique_name("webhook"),
            SecretStoreProvider {
                webhook: Some(Box::new(provider)),
                ..SecretStoreProvider::default()
            },
        );
        client_for(&store, Arc::new(source)).await
    }
}
