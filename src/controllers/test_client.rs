//! Test support: a controller context whose Kubernetes client answers from memory and
//! records every request, for reconcile scenarios without a server.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::{ClientManager, ManagerSettings};
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use kube::client::Body;
use serde_json::Value;

use crate::context::{Context, Settings};
use crate::metrics::Metrics;

/// One request the controller made: method, path and JSON body.
pub type Recorded = (String, String, Value);

/// A context of controller class `class` whose client answers each request with
/// `respond(method, path, body)`, and the requests it received.
pub fn recording_context(
    class: &str,
    respond: fn(&str, &str, &Value) -> (StatusCode, Value),
) -> (Arc<Context>, Arc<Mutex<Vec<Recorded>>>) {
    let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
    let seen = requests.clone();
    let service = tower::service_fn(move |request: Request<Body>| {
        let seen = seen.clone();
        async move {
            let method = request.method().to_string();
            let path = request.uri().path().to_owned();
            let bytes = request.into_body().collect().await?.to_bytes();
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            seen.lock()
                .unwrap()
                .push((method.clone(), path.clone(), body.clone()));
            let (status, reply) = respond(&method, &path, &body);
            let response = Response::builder()
                .status(status)
                .body(Body::from(serde_json::to_vec(&reply).unwrap()))
                .unwrap();
            Ok::<_, tower::BoxError>(response)
        }
    });
    let client = kube::Client::new(service, "default");
    let clients = Arc::new(ClientManager::new(
        Arc::new(MemorySecretSource::default()),
        ManagerSettings::default(),
    ));
    let settings = Settings {
        controller_class: class.to_owned(),
        store_requeue_interval: Duration::from_secs(300),
        namespace: None,
        flood_gate: true,
        provider_read_dedup_window: std::time::Duration::ZERO,
        allow_generic_targets: false,
    };
    let context = Context::new(client, clients, Arc::new(Metrics::default()), settings);
    (Arc::new(context), requests)
}
