//! Upstream's webhook test cases, against a real HTTP server on 127.0.0.1.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Request as AxumRequest, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{WebhookResult, WebhookSecret};

use super::*;
use crate::credentials::MemorySecretSource;

/// What the server saw of the last request.
#[derive(Debug, Clone, Default)]
struct Seen {
    method: String,
    path_and_query: String,
    headers: Vec<(String, String)>,
    body: String,
}

#[derive(Clone)]
struct Canned {
    status: u16,
    body: String,
    delay: std::time::Duration,
    seen: Arc<Mutex<Vec<Seen>>>,
}

async fn answer(State(canned): State<Canned>, request: AxumRequest) -> impl IntoResponse {
    let method = request.method().to_string();
    let path_and_query = request
        .uri()
        .path_and_query()
        .map(ToString::to_string)
        .unwrap_or_default();
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.to_string(),
                value.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let body: Bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap();
    canned.seen.lock().unwrap().push(Seen {
        method,
        path_and_query,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    tokio::time::sleep(canned.delay).await;
    (StatusCode::from_u16(canned.status).unwrap(), canned.body)
}

/// A server answering every request with `status` and `body`; returns its base URL and log.
async fn server(status: u16, body: &str) -> (String, Arc<Mutex<Vec<Seen>>>) {
    server_with_delay(status, body, std::time::Duration::ZERO).await
}

async fn server_with_delay(
    status: u16,
    body: &str,
    delay: std::time::Duration,
) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let canned = Canned {
        status,
        body: body.to_owned(),
        delay,
        seen: seen.clone(),
    };
    let app = axum::Router::new().fallback(answer).with_state(canned);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}"), seen)
}

fn source() -> Arc<MemorySecretSource> {
    Arc::new(
        MemorySecretSource::default()
            .with_secret(
                "testnamespace",
                "creds",
                &[(SECRET_TYPE_LABEL, "webhook")],
                &[("token", "t0k3n")],
            )
            .with_secret("testnamespace", "unlabelled", &[], &[("token", "x")])
            .with_secret(
                "testnamespace",
                "mislabelled",
                &[(SECRET_TYPE_LABEL, "other")],
                &[("token", "x")],
            ),
    )
}

async fn build(spec: &WebhookProvider) -> Result<WebhookClient> {
    let store = StoreId::cluster_secret_store("webhook");
    let credentials = CredentialResolver::new(source(), store, Some("testnamespace".into()));
    WebhookClient::new(spec, credentials).await
}

fn spec(base: &str, url: &str, json_path: Option<&str>) -> WebhookProvider {
    WebhookProvider {
        url: format!("{base}{url}"),
        result: json_path.map(|path| WebhookResult {
            json_path: Some(path.to_owned()),
        }),
        ..WebhookProvider::default()
    }
}

const GET_URL: &str = "/api/getsecret?id={{ .remoteRef.key }}&version={{ .remoteRef.version }}";

fn test_ref() -> RemoteRef {
    RemoteRef::new("testkey").with_version("1")
}

async fn get(status: u16, response: &str, json_path: Option<&str>) -> (Result<String>, Vec<Seen>) {
    let (base, seen) = server(status, response).await;
    let client = build(&spec(&base, GET_URL, json_path)).await.unwrap();
    let result = client
        .get_secret(&test_ref())
        .await
        .map(|value| String::from_utf8(value.into_bytes()).unwrap());
    let seen = seen.lock().unwrap().clone();
    (result, seen)
}

/// Name, status, response body, jsonPath, expected value or error substring.
type GetCase<'a> = (
    &'a str,
    u16,
    &'a str,
    Option<&'a str>,
    std::result::Result<&'a str, &'a str>,
);

#[tokio::test]
async fn get_secret_cases() {
    let cases: &[GetCase] = &[
        (
            "good plaintext",
            200,
            "secret-value",
            None,
            Ok("secret-value"),
        ),
        (
            "good json",
            200,
            r#"{"result":{"thesecret":"secret-value"}}"#,
            Some("$.result.thesecret"),
            Ok("secret-value"),
        ),
        (
            "pull data out of map",
            200,
            r#"{"result":{"thesecret":{"one":"secret-value"}}}"#,
            Some("$.result.thesecret"),
            Ok(r#"{"one":"secret-value"}"#),
        ),
        (
            "error no secret",
            404,
            "not found",
            None,
            Err("secret does not exist"),
        ),
        (
            "error server error",
            500,
            "server error",
            None,
            Err("endpoint gave error 500"),
        ),
        (
            "error bad json",
            200,
            r#"{"result":{"thesecret":"secret-value"}"#,
            Some("$.result.thesecret"),
            Err("failed to parse response json"),
        ),
        (
            "error bad jsonpath",
            200,
            r#"{"result":{"nosecret":"secret-value"}}"#,
            Some("$.result.thesecret"),
            Err("failed to get response path"),
        ),
        (
            "jsonpath filter",
            200,
            r#"{"secrets": [{"name": "thesecret", "value": "secret-value"}, {"name": "alsosecret", "value": "another-value"}]}"#,
            Some(r#"$.secrets[?@.name=="thesecret"].value"#),
            Ok("secret-value"),
        ),
        (
            "jsonpath filter empty results",
            200,
            r#"{"secrets": [{"name": "thesecret", "value": "secret-value"}]}"#,
            Some(r#"$.secrets[?@.name=="thebadsecret"].value"#),
            Err("failed to get response path"),
        ),
        (
            "result array",
            200,
            r#"{"secrets": [{"name": "thesecret", "value": "v"}, {"name": "alsosecret", "value": "w"}]}"#,
            Some("$..name"),
            Ok("thesecret"),
        ),
        (
            "result array of ints",
            200,
            r#"{"secrets": [{"name": 123, "value": "v"}, {"name": 456, "value": "w"}]}"#,
            Some("$..name"),
            Ok("123"),
        ),
        (
            "support backslash",
            200,
            r#"{"access_token":"REDACTED","refresh_token":"RE\/DACTED=="}"#,
            Some("$.refresh_token"),
            Ok("RE/DACTED=="),
        ),
        (
            "mixed fields",
            200,
            r#"{"result":{"thesecret":"secret-value","alsosecret":"another-value", "id": 1234, "weight": 1.5}}"#,
            Some("$.result.thesecret"),
            Ok("secret-value"),
        ),
    ];
    for (name, status, response, json_path, expected) in cases {
        let (result, seen) = get(*status, response, *json_path).await;
        assert_eq!(
            seen[0].path_and_query, "/api/getsecret?id=testkey&version=1",
            "{name}"
        );
        assert_eq!(seen[0].method, "GET", "{name}");
        match (expected, result) {
            (Ok(want), Ok(got)) => assert_eq!(&got, want, "{name}"),
            (Err(want), Err(error)) => assert!(error.message().contains(want), "{name}: {error}"),
            (expected, got) => panic!("{name}: expected {expected:?}, got {got:?}"),
        }
    }
}

#[tokio::test]
async fn statuses_map_to_error_kinds() {
    let (result, _) = get(404, "", None).await;
    assert!(result.unwrap_err().is_not_found());
    let (result, _) = get(304, "", None).await;
    assert_eq!(result.unwrap_err().kind(), ErrorKind::NotModified);
    let (result, _) = get(503, "", None).await;
    assert!(result.unwrap_err().is_temporary());
}

#[tokio::test]
async fn templated_json_path_uses_the_property() {
    let (base, _) = server(200, r#"{"result":{"thesecret":"secret-value"}}"#).await;
    let client = build(&spec(
        &base,
        GET_URL,
        Some("$.result.{{ .remoteRef.property }}"),
    ))
    .await
    .unwrap();
    let value = client
        .get_secret(&test_ref().with_property("thesecret"))
        .await
        .unwrap();
    assert_eq!(value.expose(), b"secret-value");

    let broken = spec(&base, GET_URL, Some("$.result.{{ .remoteRef.property }"));
    let error = client_error(&broken).await;
    assert!(
        error
            .message()
            .starts_with("failed to parse result.jsonPath: "),
        "{error}"
    );
}

async fn client_error(spec: &WebhookProvider) -> ProviderError {
    match build(spec).await {
        Ok(_) => panic!("client built"),
        Err(error) => error,
    }
}

async fn get_map(response: &str, json_path: Option<&str>) -> Result<Vec<(String, String)>> {
    let (base, _) = server(200, response).await;
    let client = build(&spec(&base, GET_URL, json_path)).await.unwrap();
    Ok(client
        .get_secret_map(&test_ref())
        .await?
        .into_iter()
        .map(|(key, value)| (key, String::from_utf8(value.into_bytes()).unwrap()))
        .collect())
}

#[tokio::test]
async fn get_secret_map_cases() {
    let both = r#"{"result":{"thesecret":"secret-value","alsosecret":"another-value"}}"#;
    let expected = vec![
        ("alsosecret".to_owned(), "another-value".to_owned()),
        ("thesecret".to_owned(), "secret-value".to_owned()),
    ];
    assert_eq!(get_map(both, Some("$.result")).await.unwrap(), expected);
    assert_eq!(
        get_map(both, Some(r#"$.{{ printf "result" }}"#))
            .await
            .unwrap(),
        expected
    );
    let flat = r#"{"thesecret":"secret-value","alsosecret":"another-value"}"#;
    assert_eq!(get_map(flat, None).await.unwrap(), expected);
    let error = get_map("some simple string", None).await.unwrap_err();
    assert!(
        error
            .message()
            .starts_with("failed to parse response json: "),
        "{error}"
    );
    let error = get_map(both, Some("$.result.thesecret")).await.unwrap_err();
    assert!(
        error
            .message()
            .starts_with("failed to parse response json from jsonpath"),
        "{error}"
    );
    let mixed = r#"{"result":{"thesecret":"secret-value","id": 1234, "weight": 1.5}}"#;
    assert_eq!(
        get_map(mixed, Some("$.result")).await.unwrap(),
        [
            ("id".to_owned(), "1234".to_owned()),
            ("thesecret".to_owned(), "secret-value".to_owned()),
            ("weight".to_owned(), "1.5".to_owned())
        ]
    );
}

#[tokio::test]
async fn only_the_url_is_query_escaped_and_the_namespace_is_the_callers() {
    let (base, seen) = server(200, "ok").await;
    let mut provider = spec(
        &base,
        "/api/getsecrets?folder={{ .remoteRef.key }}&namespace={{ .remoteRef.namespace }}",
        None,
    );
    provider.body = Some(r#"{"folder": "{{ .remoteRef.key }}"}"#.into());
    provider
        .headers
        .insert("X-Namespace".into(), "{{ .remoteRef.namespace }}".into());
    let client = build(&provider).await.unwrap();
    client
        .get_secret(&RemoteRef::new("/myapp/secrets"))
        .await
        .unwrap();
    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(
        seen.path_and_query,
        "/api/getsecrets?folder=%2Fmyapp%2Fsecrets&namespace=testnamespace"
    );
    assert_eq!(seen.body, r#"{"folder": "/myapp/secrets"}"#);
    assert!(
        seen.headers
            .contains(&("x-namespace".into(), "testnamespace".into()))
    );
}

#[tokio::test]
async fn a_slow_endpoint_times_out_as_a_temporary_error() {
    let (base, _) = server_with_delay(200, "late", std::time::Duration::from_secs(5)).await;
    let mut provider = spec(&base, GET_URL, None);
    provider.timeout = Some("50ms".into());
    let error = build(&provider)
        .await
        .unwrap()
        .get_secret(&test_ref())
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "failed to call endpoint: request timed out"
    );
    assert!(error.is_temporary());
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_temporary_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let client = build(&spec(&base, GET_URL, None)).await.unwrap();
    let error = client.get_secret(&test_ref()).await.unwrap_err();
    assert!(
        error.message().starts_with("failed to call endpoint: "),
        "{error}"
    );
    assert!(!error.message().contains("127.0.0.1"), "{error}");
    assert!(error.is_temporary());
    assert!(client.validate().await.is_err());
}

fn push_request(secret_key: Option<&str>) -> PushRequest {
    PushRequest {
        secret_data: [("secretkey".to_owned(), SecretValue::from("value"))].into(),
        secret_key: secret_key.map(str::to_owned),
        remote_ref: PushRemoteRef::new("testkey"),
        metadata: None,
        ..PushRequest::default()
    }
}

async fn push(body: Option<&str>, secret_key: Option<&str>) -> (Result<()>, Option<Seen>) {
    let (base, seen) = server(200, "").await;
    let mut provider = spec(
        &base,
        "/api/pushsecret?id={{ .remoteRef.remoteKey }}&secret={{ .remoteRef.secretKey }}",
        None,
    );
    provider.body = body.map(str::to_owned);
    let result = build(&provider)
        .await
        .unwrap()
        .push_secret(&push_request(secret_key))
        .await;
    let seen = seen.lock().unwrap().first().cloned();
    (result, seen)
}

#[tokio::test]
async fn push_secret_cases() {
    let (result, seen) = push(None, Some("not-found")).await;
    assert_eq!(
        result.unwrap_err().message(),
        "failed to find secret key in secret with key: not-found"
    );
    assert!(seen.is_none());

    let (result, seen) = push(None, Some("secretkey")).await;
    result.unwrap();
    let seen = seen.unwrap();
    assert_eq!(seen.method, "POST");
    assert_eq!(
        seen.path_and_query,
        "/api/pushsecret?id=testkey&secret=secretkey"
    );
    assert_eq!(seen.body, "value");

    let (result, seen) = push(
        Some("pre {{ .remoteRef.remoteKey }} {{ .remoteRef.testkey }} post"),
        Some("secretkey"),
    )
    .await;
    result.unwrap();
    assert_eq!(seen.unwrap().body, "pre testkey value post");

    let (result, seen) = push(Some(r#"{{ "" }}"#), None).await;
    result.unwrap();
    let seen = seen.unwrap();
    assert_eq!(seen.body, "");
    assert_eq!(
        seen.path_and_query,
        "/api/pushsecret?id=testkey&secret=%3Cno%20value%3E"
    );

    let (result, seen) = push(None, None).await;
    result.unwrap();
    assert_eq!(seen.unwrap().body, r#"{"secretkey":"value"}"#);

    let templated = r#"pre {{ .remoteRef.remoteKey }} {{ index (.remoteRef.testkey | fromJson) "secretkey" }} post"#;
    let (result, seen) = push(Some(templated), None).await;
    result.unwrap();
    assert_eq!(seen.unwrap().body, "pre testkey value post");

    let dynamic = r#"pre {{ .remoteRef.remoteKey }} {{ index (index .remoteRef .remoteRef.remoteKey | fromJson) "secretkey" }} post"#;
    let (result, seen) = push(Some(dynamic), None).await;
    result.unwrap();
    assert_eq!(seen.unwrap().body, "pre testkey value post");
}

#[tokio::test]
async fn push_requires_a_remote_key_and_reports_endpoint_errors() {
    let (base, _) = server(500, "").await;
    let client = build(&spec(&base, "/push", None)).await.unwrap();
    let mut request = push_request(Some("secretkey"));
    request.remote_ref.remote_key.clear();
    let error = client.push_secret(&request).await.unwrap_err();
    assert_eq!(error.message(), "remote key must be defined");
    let error = client
        .push_secret(&push_request(Some("secretkey")))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "failed to push webhook data: endpoint gave error 500 Internal Server Error"
    );
}

#[tokio::test]
async fn delete_and_exists() {
    let (base, seen) = server(404, "").await;
    let client = build(&spec(&base, "/s/{{ .remoteRef.remoteKey }}", None))
        .await
        .unwrap();
    client
        .delete_secret(&PushRemoteRef::new("a/b"))
        .await
        .unwrap();
    assert_eq!(seen.lock().unwrap()[0].method, "DELETE");
    assert_eq!(seen.lock().unwrap()[0].path_and_query, "/s/a%2Fb");
    // The exists check reads the push location as a key: `.remoteRef.remoteKey` is missing there.
    let reads = build(&spec(&base, "/s/{{ .remoteRef.key }}", None))
        .await
        .unwrap();
    assert!(!reads.secret_exists(&PushRemoteRef::new("k")).await.unwrap());

    let (base, _) = server(200, "v").await;
    let client = build(&spec(&base, "/s/{{ .remoteRef.key }}", None))
        .await
        .unwrap();
    assert!(
        client
            .secret_exists(&PushRemoteRef::new("k"))
            .await
            .unwrap()
    );
    let (base, _) = server(500, "").await;
    let client = build(&spec(&base, "/s/{{ .remoteRef.remoteKey }}", None))
        .await
        .unwrap();
    let error = client
        .delete_secret(&PushRemoteRef::new("k"))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "delete endpoint gave error 500 Internal Server Error"
    );
}

fn with_secret(base: &str, name: &str, namespace: &str) -> WebhookProvider {
    let mut provider = spec(base, "/get?token={{ .auth.token }}", None);
    provider
        .headers
        .insert("Authorization".into(), "Bearer {{ .auth.token }}".into());
    provider.secrets = vec![WebhookSecret {
        name: "auth".into(),
        secret_ref: SecretKeySelector {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            key: None,
        },
    }];
    provider
}

#[tokio::test]
async fn labelled_secrets_fill_templates_and_others_are_refused() {
    let (base, seen) = server(200, "value").await;
    let client = build(&with_secret(&base, "creds", "testnamespace"))
        .await
        .unwrap();
    client.get_secret(&test_ref()).await.unwrap();
    let seen = seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path_and_query, "/get?token=t0k3n");
    assert!(
        seen.headers
            .contains(&("authorization".into(), "Bearer t0k3n".into()))
    );

    for (name, message) in [
        (
            "unlabelled",
            "secret does not contain needed label 'external-secrets.io/type: webhook'",
        ),
        ("mislabelled", "secret type is not 'webhook'"),
        ("absent", "cannot get Kubernetes secret \"absent\""),
    ] {
        let client = build(&with_secret(&base, name, "testnamespace"))
            .await
            .unwrap();
        let error = client.get_secret(&test_ref()).await.unwrap_err();
        assert!(error.message().starts_with(message), "{name}: {error}");
        assert!(!error.is_not_found());
    }
}

#[tokio::test]
async fn validate_checks_reachability() {
    let (base, _) = server(200, "").await;
    let client = build(&spec(&base, GET_URL, None)).await.unwrap();
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);
    let templated = build(&spec("http://{{ .remoteRef.key }}", "/x", None))
        .await
        .unwrap();
    assert_eq!(
        templated.validate().await.unwrap(),
        ValidationResult::Unknown
    );
    assert!(
        client
            .get_all_secrets(&Find::by_name(".*"))
            .await
            .unwrap_err()
            .reason()
            == "Unsupported"
    );
}

/// Resolves generator references in `testnamespace`, as for an object there.
fn generator_credentials() -> CredentialResolver {
    CredentialResolver::new(
        source(),
        StoreId::secret_store("testnamespace", "generator"),
        Some("testnamespace".into()),
    )
}

#[tokio::test]
async fn the_generator_posts_the_templated_request_and_returns_the_selected_object() {
    let (base, seen) = server(
        200,
        r#"{"issued": {"user": "svc", "password": "p4ss", "ttl": 60}, "other": 1}"#,
    )
    .await;
    let spec: external_secrets_crds::generators::WebhookSpec =
        serde_json::from_value(serde_json::json!({
            "url": format!("{base}/credentials"),
            "method": "POST",
            "headers": {"Authorization": "Bearer {{ .creds.token }}"},
            "body": r#"{"for": "app"}"#,
            "result": {"jsonPath": "$.issued"},
            "secrets": [{"name": "creds", "secretRef": {"name": "creds"}}],
        }))
        .unwrap();
    let generated = generate(&spec, generator_credentials()).await.unwrap();
    assert_eq!(generated["user"].expose(), b"svc");
    assert_eq!(generated["password"].expose(), b"p4ss");
    assert_eq!(generated["ttl"].expose(), b"60");
    assert_eq!(generated.len(), 3);
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path_and_query, "/credentials");
    assert_eq!(seen[0].body, r#"{"for": "app"}"#);
    assert!(
        seen[0]
            .headers
            .contains(&("authorization".to_owned(), "Bearer t0k3n".to_owned())),
        "{:?}",
        seen[0].headers
    );
}

#[tokio::test]
async fn the_generator_refuses_unlabelled_secrets_and_non_object_answers() {
    let (base, _) = server(200, r#""just text""#).await;
    let spec = |secret: &str| -> external_secrets_crds::generators::WebhookSpec {
        serde_json::from_value(serde_json::json!({
            "url": format!("{base}/x?t={{{{ .s.token }}}}"),
            "result": {},
            "secrets": [{"name": "s", "secretRef": {"name": secret}}],
        }))
        .unwrap()
    };
    let unlabelled = generate(&spec("unlabelled"), generator_credentials())
        .await
        .unwrap_err();
    assert!(
        unlabelled.message().starts_with(
            "secret does not contain needed label 'external-secrets.io/type: webhook'"
        ),
        "{unlabelled}"
    );
    let text = generate(&spec("creds"), generator_credentials())
        .await
        .unwrap_err();
    assert_eq!(text.kind(), ErrorKind::InvalidData, "{text}");
    assert!(!text.message().contains("t0k3n"), "{text}");
}
