//! The `conjur` backend against the Conjur contract fake: API key auth (the request upstream's
//! client sends, refused and missing credentials), JWT auth from a Secret (host in the URL or
//! from a claim, bad signatures refused) and from a TokenRequest of the loopback API server
//! (audiences), variable ids escaped and qualified as upstream, find by name over several
//! pages and by annotations, error kinds and secret-free messages.

#![cfg(feature = "conjur")]

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use contract_fakes::conjur::{ConjurFake, JwtService};
use external_secrets_providers::credentials::KubeSecretSource;
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRequest, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use loopback_apiserver::TokenIssuer;
use serde_json::{Value, json};
use support::conjur::{
    ACCOUNT, API_KEY_CREDENTIALS, LOGIN, api_key_auth, credentials, spec, start, try_client,
};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

/// JWT auth of service `k8s` with `extra` merged into `auth.jwt`.
fn jwt_auth(extra: Value) -> Value {
    let mut jwt = json!({"account": ACCOUNT, "serviceID": "k8s"});
    if let (Some(jwt), Some(extra)) = (jwt.as_object_mut(), extra.as_object()) {
        jwt.extend(extra.clone());
    }
    json!({ "jwt": jwt })
}

/// Enables `authn-jwt/k8s` trusting `issuer`'s keys, for hosts `host/eso/jwt` and (through the
/// `app` claim, below `eso`) `host/eso/claimed`.
fn trust(fake: &ConjurFake, jwks: Value, issuer: &str) {
    fake.add_jwt_service(
        "k8s",
        JwtService {
            jwks,
            issuer: issuer.to_owned(),
            audience: Some("conjur".into()),
            token_app_property: Some("app".into()),
            identity_path: "eso".into(),
            hosts: BTreeSet::from(["host/eso/jwt".to_owned(), "host/eso/claimed".to_owned()]),
        },
    );
}

fn signed(issuer: &TokenIssuer, audience: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    issuer.sign(
        &json!({"iss": issuer.issuer(), "aud": audience, "app": "claimed",
        "sub": "system:serviceaccount:behaviour:reader", "iat": now, "exp": now + 600}),
    )
}

#[tokio::test]
async fn api_key_auth_sends_what_upstreams_client_sends() {
    let fake = start().await;
    fake.set_variable("app/db password", Some("s3cret"), &[]);
    let client = try_client(
        &spec(&fake, api_key_auth()),
        credentials(API_KEY_CREDENTIALS),
    )
    .await
    .unwrap();
    for key in [
        "app/db password",
        "variable:app/db password",
        "acme:variable:app/db password",
    ] {
        let value = client.get_secret(&RemoteRef::new(key)).await.unwrap();
        assert_eq!(text(value), "s3cret", "{key}");
    }
    let requests = fake.server.requests();
    assert_eq!(
        requests[0].path,
        "/authn/acme/host%2Feso%2Freader/authenticate"
    );
    assert_eq!(
        requests[0].headers["content-type"].to_str().unwrap(),
        "text/plain"
    );
    // One login serves every read; ids are path-escaped as Go's url.PathEscape does.
    assert_eq!(requests.len(), 4, "{requests:?}");
    for read in &requests[1..] {
        assert_eq!(read.path, "/secrets/acme/variable/app%2Fdb%20password");
        let authorization = read.headers["authorization"].to_str().unwrap();
        assert!(
            authorization.starts_with("Token token=\""),
            "{authorization}"
        );
    }
    // Any other prefix is part of the id.
    fake.set_variable("other:variable:x", Some("prefixed"), &[]);
    let value = client.get_secret(&RemoteRef::new("other:variable:x")).await;
    assert_eq!(text(value.unwrap()), "prefixed");
}

#[tokio::test]
async fn refused_or_missing_api_keys_fail_the_client_without_showing_them() {
    let fake = start().await;
    let provider = spec(&fake, api_key_auth());
    let wrong = credentials(&[("user", LOGIN), ("apikey", "wrong-api-key")]);
    let error = try_client(&provider, wrong).await.err().unwrap();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(error.message().contains("401"), "{error}");
    assert!(!error.message().contains("wrong-api-key"), "{error}");

    let missing = credentials(&[("user", LOGIN)]);
    let error = try_client(&provider, missing).await.err().unwrap();
    assert!(
        error
            .message()
            .starts_with("could not get Auth.Apikey.ApiKeyRef: "),
        "{error}"
    );
    assert!(error.is_temporary(), "a Secret may appear later: {error}");
}

#[tokio::test]
async fn jwt_from_a_secret_logs_in_as_the_url_host_or_the_claimed_one() {
    let fake = start().await;
    fake.set_variable("db", Some("from-jwt"), &[]);
    let issuer = TokenIssuer::new("https://issuer.test", "conjur").unwrap();
    trust(&fake, issuer.jwks(), issuer.issuer());
    let token = signed(&issuer, "conjur");
    // No key named: upstream reads `token`.
    let in_secret = json!({"secretRef": {"name": support::conjur::CREDENTIALS}});
    let with_host = jwt_auth(json!({"hostId": "host/eso/jwt",
        "secretRef": {"name": support::conjur::CREDENTIALS}}));
    let client = try_client(&spec(&fake, with_host), credentials(&[("token", &token)]))
        .await
        .unwrap();
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("db")).await.unwrap()),
        "from-jwt"
    );
    let login = &fake.server.requests()[0];
    assert_eq!(
        login.path,
        "/authn-jwt/k8s/acme/host%2Feso%2Fjwt/authenticate"
    );
    assert_eq!(
        login.headers["content-type"].to_str().unwrap(),
        "application/x-www-form-urlencoded"
    );

    let claimed = try_client(
        &spec(&fake, jwt_auth(in_secret.clone())),
        credentials(&[("token", &token)]),
    )
    .await
    .unwrap();
    assert_eq!(
        text(claimed.get_secret(&RemoteRef::new("db")).await.unwrap()),
        "from-jwt"
    );
    assert!(
        fake.server
            .requests()
            .iter()
            .any(|request| request.path == "/authn-jwt/k8s/acme/authenticate")
    );

    // A token another key signed, or for another audience, is refused.
    let stranger = TokenIssuer::new("https://issuer.test", "conjur").unwrap();
    for token in [signed(&stranger, "conjur"), signed(&issuer, "elsewhere")] {
        let error = try_client(
            &spec(&fake, jwt_auth(in_secret.clone())),
            credentials(&[("token", &token)]),
        )
        .await
        .err()
        .unwrap();
        assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
        assert!(!error.message().contains(&token), "{error}");
    }
}

#[tokio::test]
async fn jwt_from_a_token_request_carries_the_service_account_audiences() {
    let fake = start().await;
    fake.set_variable("db", Some("from-service-account"), &[]);
    let (loopback, admin) = support::cluster_with_service_account("reader", &[]).await;
    let issuer = loopback.token_issuer();
    trust(&fake, issuer.jwks(), issuer.issuer());
    let source = Arc::new(KubeSecretSource::new(admin));
    let account = |audience: &str| {
        jwt_auth(json!({"hostId": "host/eso/jwt",
            "serviceAccountRef": {"name": "reader", "audiences": [audience]}}))
    };
    let client = try_client(&spec(&fake, account("conjur")), source.clone())
        .await
        .unwrap();
    let value = client.get_secret(&RemoteRef::new("db")).await.unwrap();
    assert_eq!(text(value), "from-service-account");

    let error = try_client(&spec(&fake, account("vault")), source)
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
}

#[tokio::test]
async fn find_by_name_reads_every_page_and_batches_the_values() {
    let fake = start().await;
    for index in 0..150 {
        fake.set_variable(
            &format!("apps/key-{index:03}"),
            Some(&format!("v{index}")),
            &[],
        );
    }
    fake.set_variable("other/key", Some("no"), &[]);
    let client = try_client(
        &spec(&fake, api_key_auth()),
        credentials(API_KEY_CREDENTIALS),
    )
    .await
    .unwrap();
    let found = client
        .get_all_secrets(&Find::by_name("^apps/key-"))
        .await
        .unwrap();
    assert_eq!(found.len(), 150);
    assert_eq!(text(found["apps/key-149"].clone()), "v149");
    let requests = fake.server.requests();
    let queries: Vec<&str> = requests
        .iter()
        .filter(|request| request.path == "/resources/acme")
        .filter_map(|request| request.query.as_deref())
        .collect();
    assert_eq!(
        queries,
        [
            "kind=variable&limit=100",
            "kind=variable&limit=100&offset=100"
        ]
    );
    let batches: Vec<&str> = requests
        .iter()
        .filter(|request| request.path == "/secrets")
        .filter_map(|request| request.query.as_deref())
        .collect();
    assert_eq!(batches.len(), 2, "at most 100 variables a batch");
    assert!(
        batches[0].starts_with("variable_ids=acme%3Avariable%3Aapps%2Fkey-000%2Cacme"),
        "{}",
        batches[0]
    );

    let nothing = client.get_all_secrets(&Find::by_name("^absent")).await;
    assert!(nothing.unwrap().is_empty());
    let bad = client
        .get_all_secrets(&Find::by_name("["))
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidRequest);
}

#[tokio::test]
async fn find_by_tags_matches_every_annotation() {
    let fake = start().await;
    fake.set_variable(
        "pay/db",
        Some("1"),
        &[("team", "payments"), ("env", "prod")],
    );
    fake.set_variable(
        "pay/cache",
        Some("2"),
        &[("team", "payments"), ("env", "dev")],
    );
    fake.set_variable("web/db", Some("3"), &[("team", "web"), ("env", "prod")]);
    fake.set_variable("bare", Some("4"), &[]);
    let client = try_client(
        &spec(&fake, api_key_auth()),
        credentials(API_KEY_CREDENTIALS),
    )
    .await
    .unwrap();
    let tags = |pairs: &[(&str, &str)]| Find {
        tags: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Find::default()
    };
    let found = client
        .get_all_secrets(&tags(&[("team", "payments"), ("env", "prod")]))
        .await
        .unwrap();
    assert_eq!(texts(found), [("pay/db".to_owned(), "1".to_owned())]);
    let found = client
        .get_all_secrets(&tags(&[("team", "payments")]))
        .await
        .unwrap();
    assert_eq!(
        texts(found),
        [
            ("pay/cache".to_owned(), "2".to_owned()),
            ("pay/db".to_owned(), "1".to_owned())
        ]
    );
}

#[tokio::test]
async fn errors_have_their_kinds_and_never_carry_values() {
    let fake = start().await;
    fake.set_variable("plain", Some("not-json-s3cret"), &[]);
    fake.set_variable("json", Some(r#"{"user":"admin","port":5432}"#), &[]);
    fake.set_variable("locked", Some("x"), &[]);
    fake.set_variable("empty", None, &[]);
    fake.deny("locked");
    let client = try_client(
        &spec(&fake, api_key_auth()),
        credentials(API_KEY_CREDENTIALS),
    )
    .await
    .unwrap();

    let denied = client
        .get_secret(&RemoteRef::new("locked"))
        .await
        .unwrap_err();
    assert_eq!(denied.kind(), ErrorKind::PermissionDenied, "{denied}");
    let empty = client
        .get_secret(&RemoteRef::new("empty"))
        .await
        .unwrap_err();
    assert_eq!(empty.kind(), ErrorKind::NotFound, "{empty}");
    let property = RemoteRef::new("json").with_property("password");
    let missing = client.get_secret(&property).await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(
        missing.message(),
        r#"cannot find secret data for key: "password""#
    );
    let port = client
        .get_secret(&RemoteRef::new("json").with_property("port"))
        .await;
    assert_eq!(text(port.unwrap()), "5432");

    let map = client
        .get_secret_map(&RemoteRef::new("plain"))
        .await
        .unwrap_err();
    assert_eq!(map.kind(), ErrorKind::InvalidData);
    assert!(
        map.message()
            .starts_with("unable to unmarshal secret plain: "),
        "{map}"
    );
    assert!(!map.message().contains("s3cret"), "{map}");
    // Upstream unmarshals into strings only.
    let numbers = client.get_secret_map(&RemoteRef::new("json")).await;
    assert_eq!(numbers.unwrap_err().kind(), ErrorKind::InvalidData);

    let push = PushRequest::single(
        [("k".to_owned(), SecretValue::from("v"))].into(),
        "k",
        "plain",
    );
    let refused = client.push_secret(&push).await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Unsupported);

    // Conjur refusing the access token (expired on its side) is a permission error.
    fake.expire_tokens();
    let expired = client
        .get_secret(&RemoteRef::new("plain"))
        .await
        .unwrap_err();
    assert_eq!(expired.kind(), ErrorKind::PermissionDenied);
}
