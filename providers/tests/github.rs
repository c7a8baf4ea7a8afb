//! The `github` backend against the GitHub contract fake: GitHub App auth (JWT, installation
//! token reuse, a key GitHub does not know), the three scopes, organization-secret visibility and
//! selected repositories, whole-Secret pushes, the write-only refusals, and validation.

#![cfg(feature = "github")]

mod support;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use contract_fakes::github::{GithubFake, Scope};
use external_secrets_crds::v1::{
    ClusterSecretStore, ClusterSecretStoreSpec, GithubOrgSecretVisibility, SecretStoreSpec,
};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use external_secrets_providers::{Registry, StoreRef, ValidationResult};
use support::github::{APP_ID, APP_KEY, INSTALLATION_ID, ORG, client, fake, store_provider};
use support::{NAMESPACE, start_fake, unique_name};

fn data() -> SecretMap {
    [
        ("password".to_owned(), SecretValue::from("hunter2")),
        ("user".to_owned(), SecretValue::from("admin")),
    ]
    .into()
}

fn push(remote_key: &str, secret_key: Option<&str>) -> PushRequest {
    PushRequest {
        secret_key: secret_key.map(str::to_owned),
        ..PushRequest::single(data(), "", remote_key)
    }
}

/// A fresh repository scope on the shared fake; its name.
fn repository() -> (Scope, String) {
    let name = unique_name("repo");
    let scope = Scope::Repository(ORG.into(), name.clone());
    fake().add_scope(&scope);
    (scope, name)
}

#[tokio::test]
async fn repository_secrets_are_sealed_to_the_repository_key() {
    let (scope, name) = repository();
    let client = client(APP_KEY, |github| github.repository = Some(name)).await;
    client
        .push_secret(&push("db_password", Some("password")))
        .await
        .unwrap();
    let stored = fake().secret(&scope, "DB_PASSWORD").unwrap();
    assert_eq!(stored.value, b"hunter2");
    assert_eq!(stored.visibility, None);
    assert!(
        client
            .secret_exists(&PushRemoteRef::new("db_password"))
            .await
            .unwrap()
    );
    // Without a secret key the whole Secret goes as Go marshals map[string][]byte.
    client.push_secret(&push("WHOLE", None)).await.unwrap();
    let whole: serde_json::Value =
        serde_json::from_slice(&fake().secret(&scope, "WHOLE").unwrap().value).unwrap();
    assert_eq!(whole["password"], STANDARD.encode("hunter2"));
    assert_eq!(whole["user"], STANDARD.encode("admin"));
    let missing = client
        .push_secret(&push("X", Some("absent")))
        .await
        .unwrap_err();
    assert_eq!(missing.message(), "key absent not found in secret");
    client
        .delete_secret(&PushRemoteRef::new("WHOLE"))
        .await
        .unwrap();
    assert!(fake().secret(&scope, "WHOLE").is_none());
    client
        .delete_secret(&PushRemoteRef::new("WHOLE"))
        .await
        .unwrap();
    assert!(
        !client
            .secret_exists(&PushRemoteRef::new("WHOLE"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn environment_secrets_are_addressed_by_repository_id() {
    let repo = unique_name("envrepo");
    let scope = Scope::Environment(ORG.into(), repo.clone(), "production".into());
    let id = fake().add_scope(&scope).unwrap();
    let client = client(APP_KEY, |github| {
        github.repository = Some(repo.clone());
        github.environment = Some("production".into());
    })
    .await;
    client
        .push_secret(&push("API_KEY", Some("user")))
        .await
        .unwrap();
    assert_eq!(fake().secret(&scope, "API_KEY").unwrap().value, b"admin");
    let paths: Vec<String> = fake()
        .server
        .requests()
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert!(
        paths.contains(&format!("/api/v3/repos/{ORG}/{repo}")),
        "{paths:?}"
    );
    assert!(paths.contains(&format!(
        "/api/v3/repositories/{id}/environments/production/secrets/API_KEY"
    )));
    // The repository scope itself was not written.
    let repo_scope = Scope::Repository(ORG.into(), repo);
    assert!(fake().secret(&repo_scope, "API_KEY").is_none());
}

#[tokio::test]
async fn organization_secrets_keep_their_visibility_and_repositories() {
    let org = unique_name("org");
    let scope = Scope::Organization(org.clone());
    fake().add_scope(&scope);
    let default = client(APP_KEY, |github| github.organization = org.clone()).await;
    default
        .push_secret(&push("NEW", Some("user")))
        .await
        .unwrap();
    assert_eq!(
        fake().secret(&scope, "NEW").unwrap().visibility.as_deref(),
        Some("all")
    );
    // An existing `selected` secret stays selected, with its repositories re-sent.
    fake().set_secret(&scope, "SHARED", b"old", Some("selected"));
    fake().select_repositories(&scope, "SHARED", &[11, 12]);
    default
        .push_secret(&push("shared", Some("password")))
        .await
        .unwrap();
    let shared = fake().secret(&scope, "SHARED").unwrap();
    assert_eq!(shared.value, b"hunter2");
    assert_eq!(shared.visibility.as_deref(), Some("selected"));
    assert_eq!(shared.selected_repository_ids, [11, 12]);
    // The store's orgSecretVisibility wins.
    let private = client(APP_KEY, |github| {
        github.organization = org.clone();
        github.org_secret_visibility = Some(GithubOrgSecretVisibility::Private);
    })
    .await;
    private
        .push_secret(&push("SHARED", Some("user")))
        .await
        .unwrap();
    assert_eq!(
        fake()
            .secret(&scope, "SHARED")
            .unwrap()
            .visibility
            .as_deref(),
        Some("private")
    );
    assert_eq!(default.validate().await.unwrap(), ValidationResult::Ready);
}

#[tokio::test]
async fn reads_are_refused_as_upstream() {
    let (_, name) = repository();
    let client = client(APP_KEY, |github| github.repository = Some(name)).await;
    let message = "not implemented - this provider supports write-only operations";
    let read = client.get_secret(&RemoteRef::new("A")).await.unwrap_err();
    assert_eq!(
        (read.kind(), read.message()),
        (ErrorKind::Unsupported, message)
    );
    let map = client
        .get_secret_map(&RemoteRef::new("A"))
        .await
        .unwrap_err();
    assert_eq!(map.message(), message);
    let find = client
        .get_all_secrets(&Find::by_name(".*"))
        .await
        .unwrap_err();
    assert_eq!(find.message(), message);
}

#[tokio::test]
async fn installation_tokens_are_reused_and_unknown_keys_refused() {
    let own: &'static GithubFake = Box::leak(Box::new(start_fake("GitHub", || {
        GithubFake::start(APP_ID, INSTALLATION_ID, APP_KEY)
    })));
    let scope = Scope::Repository(ORG.into(), "tokens".into());
    own.add_scope(&scope);
    let provider = |key: &str| {
        let mut section = store_provider(|github| github.repository = Some("tokens".into()));
        if let Some(github) = section.github.as_mut() {
            github.url = own.server.url.clone();
        }
        (section, key.to_owned())
    };
    let build = |(section, key): (_, String)| async move {
        let source = MemorySecretSource::default().with_secret(
            NAMESPACE,
            "github-app",
            &[],
            &[("private-key", &key)],
        );
        let store = support::secret_store(&unique_name("github"), section);
        support::client_for(&store, Arc::new(source)).await
    };
    let client = build(provider(APP_KEY)).await;
    client
        .push_secret(&push("ONE", Some("user")))
        .await
        .unwrap();
    client
        .push_secret(&push("TWO", Some("user")))
        .await
        .unwrap();
    assert_eq!(own.tokens_issued(), 1);
    let authorization = own
        .server
        .requests()
        .into_iter()
        .filter(|request| request.path.ends_with("/secrets/ONE"))
        .filter_map(|request| request.headers.get("authorization").cloned())
        .next()
        .unwrap();
    assert!(authorization.to_str().unwrap().starts_with("token ghs_"));
    // A key of another App: GitHub refuses its JWT.
    let stranger = include_str!("data/azure-sp-cert.pem");
    let refused = build(provider(stranger)).await;
    let error = refused
        .push_secret(&push("THREE", Some("user")))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("PRIVATE KEY"));
    assert_eq!(own.tokens_issued(), 1);
}

#[tokio::test]
async fn bad_keys_and_missing_scopes_are_configuration_errors() {
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "github-app",
        &[],
        &[("private-key", "not a key")],
    );
    let registry = Registry::new(Arc::new(source));
    let store = support::secret_store(&unique_name("github"), store_provider(|_| {}));
    let error = match registry
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
    {
        Ok(_) => panic!("a key that is not PEM is refused"),
        Err(error) => error,
    };
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(
        error.message().starts_with("could not get private key"),
        "{error}"
    );
    // An organization the installation cannot see.
    let client = client(APP_KEY, |github| github.organization = "nowhere".into()).await;
    let error = client.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(
        error
            .message()
            .starts_with("store is not allowed to list secrets"),
        "{error}"
    );
}

#[tokio::test]
async fn cluster_stores_are_not_validated() {
    let mut section = store_provider(|_| {});
    if let Some(github) = section.github.as_mut() {
        github.auth.private_key.namespace = Some(NAMESPACE.into());
    }
    let mut store = ClusterSecretStore::new(
        &unique_name("cluster-github"),
        ClusterSecretStoreSpec(SecretStoreSpec {
            provider: section,
            ..SecretStoreSpec::default()
        }),
    );
    store.metadata.uid = Some("uid".into());
    store.metadata.generation = Some(1);
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "github-app",
        &[],
        &[("private-key", APP_KEY)],
    );
    let registry = Registry::new(Arc::new(source));
    let client = registry
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
        .unwrap();
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Unknown);
}
