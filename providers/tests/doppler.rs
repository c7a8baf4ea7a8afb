//! The doppler provider against the Doppler contract fake (`contract-fakes::doppler`): the
//! auth methods (service token, personal token with project and config, OIDC with a loopback
//! API server's ServiceAccount token), what each request carries, the name transformer, the
//! download format, find by path, push and delete, the ETag cache and its size setting.

#![cfg(feature = "doppler")]

mod support;

use std::sync::Arc;

use external_secrets_crds::meta::ServiceAccountSelector;
use external_secrets_crds::v1::{
    DopplerAuth, DopplerFormat, DopplerNameTransformer, DopplerOidcAuth, DopplerProvider,
    SecretStoreProvider,
};
use external_secrets_providers::backends::doppler::EtagCache;
use external_secrets_providers::credentials::{KubeSecretSource, MemorySecretSource};
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::{
    ClientManager, ErrorKind, ManagerSettings, SecretValue, StoreRef, ValidationResult,
};

use support::doppler::{client, fake, store_provider};
use support::{NAMESPACE, cluster_with_service_account, secret_store, unique_name};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

/// A fresh config `project/prd` holding `secrets`, and a service token bound to it.
fn seeded(secrets: &[(&str, &str)]) -> (String, String) {
    let project = unique_name("project");
    let token = format!("dp.st.{project}");
    fake().add_service_token(&token, &project, "prd");
    for (name, value) in secrets {
        fake().set_secret(&project, "prd", name, value);
    }
    (project, token)
}

/// The requests the fake received with `token` as Basic user, as (path, query, if-none-match).
fn requests_with(token: &str) -> Vec<(String, String, Option<String>)> {
    use base64::Engine as _;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{token}:"))
    );
    fake()
        .server
        .requests()
        .into_iter()
        .filter(|request| {
            request
                .headers
                .get("authorization")
                .is_some_and(|value| value == basic.as_str())
        })
        .map(|request| {
            let etag = request
                .headers
                .get("if-none-match")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            (request.path, request.query.unwrap_or_default(), etag)
        })
        .collect()
}

#[tokio::test]
async fn service_token_reads_with_basic_auth_and_a_wrong_token_is_refused() {
    let (_, token) = seeded(&[("DB_URL", "postgres://db")]);
    let reader = client(store_provider(None, None, None), &token).await;
    let value = reader.get_secret(&RemoteRef::new("DB_URL")).await.unwrap();
    assert_eq!(text(value), "postgres://db");
    assert_eq!(reader.validate().await.unwrap(), ValidationResult::Ready);
    let sent = requests_with(&token);
    assert!(sent.iter().any(|(path, query, _)| {
        path == "/v3/configs/config/secrets/download" && query == "secrets=DB_URL"
    }));
    assert!(sent.iter().any(|(path, _, _)| path == "/v3/projects"));

    let wrong = client(store_provider(None, None, None), "dp.st.wrong-secret-token").await;
    let error = wrong
        .get_secret(&RemoteRef::new("DB_URL"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.is_temporary());
    assert_eq!(
        error.to_string(),
        "could not get secret DB_URL: Doppler API Client Error (HTTP 401): Invalid Auth token"
    );
    assert!(!error.to_string().contains("wrong-secret-token"));
    assert_eq!(
        wrong.validate().await.unwrap_err().kind(),
        ErrorKind::PermissionDenied
    );
}

#[tokio::test]
async fn personal_tokens_need_project_and_config() {
    let (project, _) = seeded(&[("API_KEY", "k")]);
    let token = format!("dp.pt.{project}");
    fake().add_personal_token(&token);
    let scoped = client(store_provider(Some(&project), Some("prd"), None), &token).await;
    let value = scoped.get_secret(&RemoteRef::new("API_KEY")).await.unwrap();
    assert_eq!(text(value), "k");
    assert!(
        requests_with(&token)
            .iter()
            .any(|(_, query, _)| *query == format!("project={project}&config=prd&secrets=API_KEY"))
    );

    let unscoped = client(store_provider(None, None, None), &token).await;
    let error = unscoped
        .get_secret(&RemoteRef::new("API_KEY"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error}");

    let missing = client(store_provider(Some(&project), Some("dev"), None), &token).await;
    let error = missing
        .get_secret(&RemoteRef::new("API_KEY"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(!error.is_not_found());
}

#[tokio::test]
async fn oidc_exchanges_a_service_account_token_for_the_store_audience() {
    let (project, _) = seeded(&[("FROM_OIDC", "yes")]);
    let store_name = unique_name("doppler-oidc");
    let identity = unique_name("identity");
    fake().add_oidc_identity(&identity, &format!("secretStore:{NAMESPACE}:{store_name}"));
    let (_loopback, admin) = cluster_with_service_account("doppler-reader", &[]).await;
    let provider = |identity: &str| SecretStoreProvider {
        doppler: Some(Box::new(DopplerProvider {
            auth: DopplerAuth {
                secret_ref: None,
                oidc_config: Some(DopplerOidcAuth {
                    identity: identity.to_owned(),
                    service_account_ref: ServiceAccountSelector {
                        name: "doppler-reader".into(),
                        namespace: None,
                        audiences: Vec::new(),
                    },
                    expiration_seconds: 600,
                }),
            },
            project: Some(project.clone()),
            config: Some("prd".into()),
            ..DopplerProvider::default()
        })),
        ..SecretStoreProvider::default()
    };
    let source = Arc::new(KubeSecretSource::new(admin));
    let store = secret_store(&store_name, provider(&identity));
    let reader = support::client_with_source(&store, source.clone()).await;
    let value = reader.get_secret(&RemoteRef::new("FROM_OIDC")).await;
    assert_eq!(text(value.unwrap()), "yes");
    // The exchanged token is kept: a second read exchanges nothing.
    reader
        .get_secret(&RemoteRef::new("FROM_OIDC"))
        .await
        .unwrap();
    let exchanges = |fake_requests: Vec<contract_fakes::server::Recorded>| {
        fake_requests
            .iter()
            .filter(|request| request.path == "/v3/auth/oidc")
            .count()
    };
    let before = exchanges(fake().server.requests());

    let stranger = secret_store(&unique_name("doppler-oidc"), provider(&identity));
    let refused = support::client_with_source(&stranger, source).await;
    let error = refused
        .get_secret(&RemoteRef::new("FROM_OIDC"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error.to_string().contains("failed to get OIDC token"),
        "{error}"
    );
    assert_eq!(exchanges(fake().server.requests()), before + 1);
}

#[tokio::test]
async fn find_uses_the_transformer_the_path_and_the_format() {
    let (project, token) = seeded(&[
        ("DB_HOST", "db"),
        ("DB_PASSWORD", "pw"),
        ("CACHE_URL", "redis"),
    ]);
    let camel = client(
        store_provider(None, None, Some(DopplerNameTransformer::Camel)),
        &token,
    )
    .await;
    let found = camel
        .get_all_secrets(&Find {
            path: Some("db".into()),
            ..Find::by_name("Pass|Host")
        })
        .await
        .unwrap();
    let found: Vec<(String, String)> = found.into_iter().map(|(k, v)| (k, text(v))).collect();
    assert_eq!(
        found,
        [
            ("dbHost".into(), "db".into()),
            ("dbPassword".into(), "pw".into())
        ]
    );
    assert!(
        requests_with(&token)
            .iter()
            .any(|(_, query, _)| query == "name_transformer=camel")
    );

    let mut provider = store_provider(None, None, None);
    if let Some(doppler) = provider.doppler.as_mut() {
        doppler.format = Some(DopplerFormat::Env);
    }
    let env = client(provider, &token).await;
    let file = env.get_all_secrets(&Find::default()).await.unwrap();
    let file: Vec<(String, String)> = file.into_iter().map(|(k, v)| (k, text(v))).collect();
    assert_eq!(
        file,
        [(
            "DOPPLER_SECRETS_FILE".into(),
            "CACHE_URL=\"redis\"\nDB_HOST=\"db\"\nDB_PASSWORD=\"pw\"\n".into()
        )]
    );
    let accept = fake()
        .server
        .requests()
        .into_iter()
        .find(|request| request.query.as_deref() == Some("format=env"))
        .and_then(|request| request.headers.get("accept").cloned());
    assert_eq!(accept.unwrap(), "text/plain");
    assert_eq!(fake().secrets(&project, "prd").len(), 3);
}

#[tokio::test]
async fn extract_parses_json_values_and_refuses_others() {
    let (_, token) = seeded(&[
        ("CONFIG", r#"{"port":5432,"host":"db","tls":{"on":true}}"#),
        ("PLAIN", "not json"),
    ]);
    let reader = client(store_provider(None, None, None), &token).await;
    let map = reader
        .get_secret_map(&RemoteRef::new("CONFIG"))
        .await
        .unwrap();
    let map: Vec<(String, String)> = map.into_iter().map(|(k, v)| (k, text(v))).collect();
    assert_eq!(
        map,
        [
            ("host".into(), "db".into()),
            ("port".into(), "5432".into()),
            ("tls".into(), r#"{"on":true}"#.into())
        ]
    );
    let error = reader
        .get_secret_map(&RemoteRef::new("PLAIN"))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("unable to unmarshal secret PLAIN")
    );
    assert!(!error.to_string().contains("not json"));
}

#[tokio::test]
async fn push_sets_and_delete_removes_with_change_requests() {
    let (project, token) = seeded(&[]);
    let writer = client(store_provider(None, None, None), &token).await;
    let request = PushRequest::single(
        [("source".to_owned(), SecretValue::from("v1"))].into(),
        "source",
        "PUSHED_KEY",
    );
    writer.push_secret(&request).await.unwrap();
    assert_eq!(fake().secrets(&project, "prd")["PUSHED_KEY"], "v1");
    let location = PushRemoteRef::new("PUSHED_KEY");
    assert!(writer.secret_exists(&location).await.unwrap());
    writer.delete_secret(&location).await.unwrap();
    assert!(fake().secrets(&project, "prd").is_empty());
    assert!(!writer.secret_exists(&location).await.unwrap());
    writer.delete_secret(&location).await.unwrap();

    // Doppler refuses names that are not upper snake case; the error names the key only.
    let lower = PushRequest::single(
        [("source".to_owned(), SecretValue::from("hidden-value"))].into(),
        "source",
        "lower-case",
    );
    let error = writer.push_secret(&lower).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    assert!(
        error
            .to_string()
            .starts_with("could not push secrets lower-case: ")
    );
    assert!(!error.to_string().contains("hidden-value"));
}

#[tokio::test]
async fn downloads_are_conditional_on_the_cached_etag_and_pushes_invalidate() {
    let (project, token) = seeded(&[("ROTATED", "one")]);
    let reader = client(store_provider(None, None, None), &token).await;
    let read = || async { text(reader.get_secret(&RemoteRef::new("ROTATED")).await.unwrap()) };
    assert_eq!(read().await, "one");
    assert_eq!(read().await, "one");
    let etags: Vec<Option<String>> = requests_with(&token)
        .into_iter()
        .map(|(_, _, etag)| etag)
        .collect();
    assert_eq!(etags.len(), 2);
    assert!(etags[0].is_none());
    assert!(
        etags[1]
            .as_deref()
            .is_some_and(|etag| etag.starts_with("W/\""))
    );

    fake().set_secret(&project, "prd", "ROTATED", "two");
    assert_eq!(read().await, "two");
    let request = PushRequest::single(
        [("source".to_owned(), SecretValue::from("three"))].into(),
        "source",
        "OTHER",
    );
    reader.push_secret(&request).await.unwrap();
    read().await;
    let last = requests_with(&token).pop().unwrap();
    assert_eq!(last.2, None, "a push forgets the store's cached downloads");
}

#[tokio::test]
async fn a_zero_cache_size_sends_no_etag() {
    let (_, token) = seeded(&[("UNCACHED", "v")]);
    fake();
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "doppler",
        &[],
        &[("dopplerToken", token.as_str())],
    );
    let manager = ClientManager::new(Arc::new(source), ManagerSettings::default());
    manager.registry().configure(EtagCache::with_capacity(0));
    let store = secret_store(&unique_name("doppler"), store_provider(None, None, None));
    let reader = manager
        .client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
        .unwrap();
    for _ in 0..2 {
        let value = reader.get_secret(&RemoteRef::new("UNCACHED")).await;
        assert_eq!(text(value.unwrap()), "v");
    }
    let sent = requests_with(&token);
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|(_, _, etag)| etag.is_none()));
}
