//! What goes over the wire, checked against a small recording HTTP server standing in for Vault
//! (OpenBao does not send replication states): the headers of every request (token, namespace,
//! custom headers, `readYourWrites` / `forwardInconsistent`), path escaping, and how throttling
//! and server failures map to temporary errors.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use base64::Engine as _;
use external_secrets_crds::v1::VaultProvider;
use external_secrets_providers::ErrorKind;
use external_secrets_providers::request::RemoteRef;

use super::support::vault::{token_auth, token_source};
use super::{client, text};

/// What the recording server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    path_and_query: String,
    headers: HeaderMap,
}

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Seen>>,
}

/// A replication state as Vault Enterprise encodes it, with local index `index`.
fn state(index: u64) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("v1:cluster:{index}:0:abcd"))
}

async fn answer(
    State(recorder): State<Arc<Recorder>>,
    uri: Uri,
    headers: HeaderMap,
) -> (StatusCode, [(&'static str, String); 1], String) {
    let path_and_query = uri
        .path_and_query()
        .map(ToString::to_string)
        .unwrap_or_default();
    let index = {
        let mut seen = recorder.seen.lock().unwrap();
        seen.push(Seen {
            path_and_query: path_and_query.clone(),
            headers,
        });
        seen.len() as u64
    };
    let index_header = ("X-Vault-Index", state(index));
    let (status, body) = match uri.path() {
        "/v1/kv/data/limited" => (StatusCode::TOO_MANY_REQUESTS, r#"{"errors":["slow down"]}"#),
        "/v1/kv/data/sealed" => (
            StatusCode::SERVICE_UNAVAILABLE,
            r#"{"errors":["Vault is sealed"]}"#,
        ),
        _ => (
            StatusCode::OK,
            r#"{"data":{"data":{"k":"v"},"metadata":{"version":1}}}"#,
        ),
    };
    (status, [index_header], body.to_owned())
}

/// Starts the recording server; its base URL and what it records.
async fn recording_server() -> (String, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let app = Router::new().fallback(answer).with_state(recorder.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, recorder)
}

fn provider(url: &str) -> VaultProvider {
    VaultProvider {
        server: url.to_owned(),
        path: Some("kv".into()),
        namespace: Some("team-a".into()),
        auth: Some(token_auth()),
        headers: [("X-Team".to_owned(), "payments".to_owned())].into(),
        ..VaultProvider::default()
    }
}

fn header<'a>(seen: &'a Seen, name: &str) -> Vec<&'a str> {
    seen.headers
        .get_all(name)
        .iter()
        .map(|value| value.to_str().unwrap())
        .collect()
}

#[tokio::test]
async fn requests_carry_token_namespace_custom_headers_and_replication_states() {
    let (url, recorder) = recording_server().await;
    let mut spec = provider(&url);
    spec.read_your_writes = Some(true);
    spec.forward_inconsistent = Some(true);
    let client = client(spec, token_source("s.token\n")).await.unwrap();
    for _ in 0..2 {
        let value = client
            .get_secret(&RemoteRef::new("a b/c?d").with_property("k"))
            .await;
        assert_eq!(text(value.unwrap()), "v");
    }
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].path_and_query, "/v1/kv/data/a%20b/c%3Fd");
    for request in &seen {
        assert_eq!(header(request, "X-Vault-Token"), ["s.token"]);
        assert_eq!(header(request, "X-Vault-Namespace"), ["team-a"]);
        assert_eq!(header(request, "X-Vault-Request"), ["true"]);
        assert_eq!(header(request, "X-Team"), ["payments"]);
        assert_eq!(
            header(request, "X-Vault-Inconsistent"),
            ["forward-active-node"]
        );
    }
    // The state the first answer carried is required by the second request.
    assert!(header(&seen[0], "X-Vault-Index").is_empty());
    assert_eq!(header(&seen[1], "X-Vault-Index"), [state(1).as_str()]);
}

#[tokio::test]
async fn read_your_writes_alone_does_not_forward() {
    let (url, recorder) = recording_server().await;
    let mut spec = provider(&url);
    spec.read_your_writes = Some(true);
    let remembering = client(spec, token_source("s.token")).await.unwrap();
    for _ in 0..2 {
        remembering.get_secret(&RemoteRef::new("db")).await.unwrap();
    }
    let seen = recorder.seen.lock().unwrap().clone();
    assert!(header(&seen[1], "X-Vault-Inconsistent").is_empty());
    assert_eq!(header(&seen[1], "X-Vault-Index"), [state(1).as_str()]);

    let (url, recorder) = recording_server().await;
    let forgetting = client(provider(&url), token_source("s.token"))
        .await
        .unwrap();
    for _ in 0..2 {
        forgetting.get_secret(&RemoteRef::new("db")).await.unwrap();
    }
    let seen = recorder.seen.lock().unwrap().clone();
    assert!(header(&seen[1], "X-Vault-Index").is_empty());
}

#[tokio::test]
async fn throttling_and_server_failures_are_temporary() {
    let (url, _recorder) = recording_server().await;
    let client = client(provider(&url), token_source("s.token"))
        .await
        .unwrap();
    let limited = client
        .get_secret(&RemoteRef::new("limited"))
        .await
        .unwrap_err();
    assert_eq!(limited.kind(), ErrorKind::RateLimited);
    assert!(limited.is_temporary());
    assert!(limited.message().contains("slow down"), "{limited}");
    let sealed = client
        .get_secret(&RemoteRef::new("sealed"))
        .await
        .unwrap_err();
    assert_eq!(sealed.kind(), ErrorKind::Unavailable);
    assert!(sealed.is_temporary());
    assert!(sealed.message().contains("Vault is sealed"), "{sealed}");
}
