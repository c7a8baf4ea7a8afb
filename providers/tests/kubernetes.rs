//! The kubernetes provider against a real (loopback) Kubernetes API server: each test starts its
//! own. Authentication by token, ServiceAccount (TokenRequest), client certificate and
//! kubeconfig; remoteNamespace; push and delete touching only what was pushed; PushSecret
//! metadata; find; and how API errors map to error kinds.

#![cfg(feature = "kubernetes")]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::{
    CertAuth, ClusterSecretStore, ClusterSecretStoreSpec, KubernetesAuth, KubernetesProvider,
    SecretStoreProvider, SecretStoreSpec,
};
use external_secrets_providers::credentials::{
    KubeSecret, KubeSecretSource, MemorySecretSource, SecretSource, ServiceAccountToken,
};
use external_secrets_providers::request::{
    Find, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef, SourceMetadata,
};
use external_secrets_providers::{
    ErrorKind, ProviderError, Registry, SecretValue, SharedClient, StoreRef, ValidationResult,
};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use support::kubernetes::{KubernetesHarness, TOKEN_SECRET};
use support::{NAMESPACE, secret_store, unique_name};

const CERTIFICATE: &str = include_str!("data/server.crt");
const KEY: &str = include_str!("data/server.key");

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

/// A SecretStore (in [`NAMESPACE`]) with `provider`.
fn store_of(provider: KubernetesProvider) -> external_secrets_crds::v1::SecretStore {
    secret_store(
        &unique_name("kubernetes"),
        SecretStoreProvider {
            kubernetes: Some(Box::new(provider)),
            ..SecretStoreProvider::default()
        },
    )
}

/// A ClusterSecretStore with `provider`.
fn cluster_store_of(provider: KubernetesProvider) -> ClusterSecretStore {
    let mut store = ClusterSecretStore::new(
        &unique_name("cluster-kubernetes"),
        ClusterSecretStoreSpec(SecretStoreSpec {
            provider: SecretStoreProvider {
                kubernetes: Some(Box::new(provider)),
                ..SecretStoreProvider::default()
            },
            ..SecretStoreSpec::default()
        }),
    );
    store.metadata.uid = Some("uid".into());
    store.metadata.generation = Some(1);
    store
}

/// A bare client (no retries, no cache) of a SecretStore with `provider`.
async fn client(
    provider: KubernetesProvider,
    source: impl SecretSource + 'static,
) -> Result<SharedClient, ProviderError> {
    let store = store_of(provider);
    Registry::new(Arc::new(source))
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
}

/// A token-authenticated client reading `namespace`.
async fn token_client(harness: &KubernetesHarness, namespace: &str) -> SharedClient {
    let provider = harness.provider(namespace, KubernetesHarness::token_auth());
    client(provider, harness.token_source()).await.unwrap()
}

fn push_property(remote_key: &str, property: &str, value: &str) -> PushRequest {
    PushRequest {
        remote_ref: PushRemoteRef {
            remote_key: remote_key.to_owned(),
            property: Some(property.to_owned()),
        },
        ..PushRequest::single(
            [("source".to_owned(), SecretValue::from(value))].into(),
            "source",
            remote_key,
        )
    }
}

fn data_keys(secret: &k8s_openapi::api::core::v1::Secret) -> Vec<String> {
    secret
        .data
        .iter()
        .flatten()
        .map(|(key, _)| key.clone())
        .collect()
}

#[tokio::test]
async fn token_auth_reads_only_the_remote_namespace() {
    let harness = KubernetesHarness::start().await;
    let remote = harness
        .seeded_namespace(&[("db", r#"{"user":"remote"}"#)])
        .await;
    let elsewhere = harness.seeded_namespace(&[("only-here", "x")]).await;
    let client = token_client(&harness, &remote).await;

    let user = client
        .get_secret(&RemoteRef::new("db").with_property("user"))
        .await
        .unwrap();
    assert_eq!(text(user), "remote");
    let whole = client.get_secret(&RemoteRef::new("db")).await.unwrap();
    assert_eq!(text(whole), r#"{"user":"remote"}"#);
    // A Secret of another namespace does not exist for this store.
    let error = client
        .get_secret(&RemoteRef::new("only-here"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    assert!(error.message().contains(&remote), "{error}");
    let _ = elsewhere;
}

#[tokio::test]
async fn the_remote_namespace_defaults_to_default() {
    let harness = KubernetesHarness::start().await;
    harness.create_namespace("default").await;
    harness
        .create_secret("default", "in-default", &[], &[("k", "v")])
        .await;
    let mut provider = harness.provider("unused", KubernetesHarness::token_auth());
    provider.remote_namespace = KubernetesProvider::default().remote_namespace;
    let client = client(provider, harness.token_source()).await.unwrap();
    let value = client
        .get_secret(&RemoteRef::new("in-default").with_property("k"))
        .await
        .unwrap();
    assert_eq!(text(value), "v");
}

fn service_account_auth(name: &str) -> KubernetesAuth {
    KubernetesAuth {
        service_account: Some(ServiceAccountSelector {
            name: name.to_owned(),
            namespace: None,
            audiences: Vec::new(),
        }),
        ..KubernetesAuth::default()
    }
}

#[tokio::test]
async fn service_account_auth_uses_a_token_request_of_the_operators_cluster() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[("db", "from-sa")]).await;
    harness
        .reader_account("reader", &remote, "", &["secrets"])
        .await;
    let provider = harness.provider(&remote, service_account_auth("reader"));
    let client = client(provider, KubeSecretSource::new(harness.admin.clone()))
        .await
        .unwrap();
    let value = client
        .get_secret(&RemoteRef::new("db").with_property("value"))
        .await
        .unwrap();
    assert_eq!(text(value), "from-sa");
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);

    let missing = harness.provider(&remote, service_account_auth("nobody"));
    let error = client_error(missing, KubeSecretSource::new(harness.admin.clone())).await;
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(
        error.is_temporary(),
        "the ServiceAccount may be created later"
    );
    assert!(
        error
            .message()
            .starts_with("could not fetch Auth.ServiceAccount"),
        "{error}"
    );
}

async fn client_error(
    provider: KubernetesProvider,
    source: impl SecretSource + 'static,
) -> ProviderError {
    client(provider, source).await.err().expect("client fails")
}

/// Issues real tokens but says they expire at once, counting requests.
struct ShortLivedTokens {
    inner: KubeSecretSource,
    requests: Arc<AtomicU32>,
}

#[async_trait]
impl SecretSource for ShortLivedTokens {
    async fn secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<KubeSecret>, ProviderError> {
        self.inner.secret(namespace, name).await
    }

    async fn config_map(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, ProviderError> {
        self.inner.config_map(namespace, name).await
    }

    async fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
        audiences: &[String],
        lifetime: Duration,
    ) -> Result<ServiceAccountToken, ProviderError> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let issued = self
            .inner
            .service_account_token(namespace, name, audiences, lifetime)
            .await?;
        Ok(ServiceAccountToken {
            lifetime: Duration::ZERO,
            ..issued
        })
    }
}

#[tokio::test]
async fn service_account_tokens_are_renewed_before_they_expire() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[("db", "v")]).await;
    harness
        .reader_account("reader", &remote, "", &["secrets"])
        .await;
    let requests = Arc::new(AtomicU32::new(0));
    let source = ShortLivedTokens {
        inner: KubeSecretSource::new(harness.admin.clone()),
        requests: requests.clone(),
    };
    let provider = harness.provider(&remote, service_account_auth("reader"));
    let client = client(provider, source).await.unwrap();
    assert_eq!(requests.load(Ordering::SeqCst), 1);
    for _ in 0..2 {
        client.get_secret(&RemoteRef::new("db")).await.unwrap();
    }
    assert_eq!(requests.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn cert_auth_presents_the_client_certificate() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[("db", "v")]).await;
    let selector = |key: &str| SecretKeySelector {
        name: Some("client-tls".into()),
        namespace: None,
        key: Some(key.into()),
    };
    let auth = KubernetesAuth {
        cert: Some(CertAuth {
            client_cert: selector("tls.crt"),
            client_key: selector("tls.key"),
        }),
        ..KubernetesAuth::default()
    };
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "client-tls",
        &[],
        &[("tls.crt", CERTIFICATE), ("tls.key", KEY)],
    );
    // The certificate and key are valid, so the client builds and connects; the loopback
    // server authenticates bearer tokens only, so the request itself is unauthorized.
    let client = client(harness.provider(&remote, auth.clone()), source)
        .await
        .unwrap();
    let error = client.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");

    let broken = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "client-tls",
        &[],
        &[("tls.crt", "not a certificate"), ("tls.key", "not a key")],
    );
    let error = client_error(harness.provider(&remote, auth), broken).await;
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(!error.message().contains("not a key"), "{error}");
}

#[tokio::test]
async fn auth_ref_uses_an_inline_kubeconfig_and_refuses_commands() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[("db", "via-kubeconfig")]).await;
    let kubeconfig = std::fs::read_to_string(harness.server.kubeconfig_path()).unwrap();
    let provider = KubernetesProvider {
        auth_ref: Some(SecretKeySelector {
            name: Some("remote-kubeconfig".into()),
            namespace: None,
            key: Some("config".into()),
        }),
        remote_namespace: remote.clone(),
        ..KubernetesProvider::default()
    };
    let source = |config: &str| {
        MemorySecretSource::default().with_secret(
            NAMESPACE,
            "remote-kubeconfig",
            &[],
            &[("config", config)],
        )
    };
    let client = client(provider.clone(), source(&kubeconfig)).await.unwrap();
    let value = client
        .get_secret(&RemoteRef::new("db").with_property("value"))
        .await
        .unwrap();
    assert_eq!(text(value), "via-kubeconfig");

    let with_exec = format!("{kubeconfig}\n",).replace(
        "    token:",
        "    exec: {command: /bin/true, apiVersion: client.authentication.k8s.io/v1}\n    token:",
    );
    assert!(
        with_exec.contains("exec:"),
        "the loopback kubeconfig has a token user"
    );
    let error = client_error(provider, source(&with_exec)).await;
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.message().contains("\"exec\""), "{error}");
}

#[tokio::test]
async fn push_and_delete_touch_only_what_was_pushed() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[]).await;
    harness
        .create_secret(&remote, "shared", &[], &[("other", "kept")])
        .await;
    let client = token_client(&harness, &remote).await;

    client
        .push_secret(&push_property("shared", "pushed", "p"))
        .await
        .unwrap();
    let shared = harness.read_secret(&remote, "shared").await.unwrap();
    assert_eq!(data_keys(&shared), ["other", "pushed"]);
    let version = shared.metadata.resource_version.clone();
    // Pushing the same again writes nothing.
    client
        .push_secret(&push_property("shared", "pushed", "p"))
        .await
        .unwrap();
    let again = harness.read_secret(&remote, "shared").await.unwrap();
    assert_eq!(again.metadata.resource_version, version);

    let pushed = PushRemoteRef {
        remote_key: "shared".into(),
        property: Some("pushed".into()),
    };
    assert!(client.secret_exists(&pushed).await.unwrap());
    client.delete_secret(&pushed).await.unwrap();
    let shared = harness.read_secret(&remote, "shared").await.unwrap();
    assert_eq!(data_keys(&shared), ["other"]);
    assert!(!client.secret_exists(&pushed).await.unwrap());
    // Deleting a property that is gone changes nothing.
    client.delete_secret(&pushed).await.unwrap();
    assert!(harness.read_secret(&remote, "shared").await.is_some());

    // The last pushed key takes the Secret with it.
    client
        .push_secret(&push_property("single", "only", "v"))
        .await
        .unwrap();
    client
        .delete_secret(&PushRemoteRef {
            remote_key: "single".into(),
            property: Some("only".into()),
        })
        .await
        .unwrap();
    assert!(harness.read_secret(&remote, "single").await.is_none());
}

#[tokio::test]
async fn a_push_without_property_replaces_the_whole_secret() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[]).await;
    harness
        .create_secret(&remote, "whole", &[], &[("stale", "x")])
        .await;
    let client = token_client(&harness, &remote).await;
    let request = PushRequest {
        secret_data: [
            ("user".to_owned(), SecretValue::from("admin")),
            ("pass".to_owned(), SecretValue::from("s3cret")),
        ]
        .into(),
        source_metadata: SourceMetadata {
            secret_type: Some("Opaque".into()),
            ..SourceMetadata::default()
        },
        secret_key: None,
        remote_ref: PushRemoteRef::new("whole"),
        metadata: None,
    };
    client.push_secret(&request).await.unwrap();
    let whole = harness.read_secret(&remote, "whole").await.unwrap();
    assert_eq!(data_keys(&whole), ["pass", "user"]);
    let map = client
        .get_secret_map(&RemoteRef::new("whole"))
        .await
        .unwrap();
    assert_eq!(text(map["pass"].clone()), "s3cret");

    // A secret key needs a property.
    let keyed = PushRequest::single(request.secret_data.clone(), "user", "whole");
    let error = client.push_secret(&keyed).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);

    client
        .delete_secret(&PushRemoteRef::new("whole"))
        .await
        .unwrap();
    assert!(harness.read_secret(&remote, "whole").await.is_none());
}

fn metadata(spec: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
        "kind": "PushSecretMetadata",
        "spec": spec,
    })
}

#[tokio::test]
async fn push_metadata_sets_labels_and_annotations() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[]).await;
    harness
        .create_secret(&remote, "labelled", &[("existing", "1")], &[])
        .await;
    let client = token_client(&harness, &remote).await;
    let mut request = push_property("labelled", "k", "v").with_source_metadata(SourceMetadata {
        labels: [("from-source".to_owned(), "s".to_owned())].into(),
        ..SourceMetadata::default()
    });
    request.metadata = Some(metadata(serde_json::json!({
        "labels": {"color": "red"},
        "annotations": {"yes": "please"},
    })));
    client.push_secret(&request).await.unwrap();
    let secret = harness.read_secret(&remote, "labelled").await.unwrap();
    let labels = secret.metadata.labels.unwrap();
    assert_eq!(
        labels.keys().collect::<Vec<_>>(),
        ["color", "existing", "from-source"]
    );
    assert_eq!(
        secret
            .metadata
            .annotations
            .unwrap()
            .get("yes")
            .map(String::as_str),
        Some("please")
    );

    request.metadata = Some(metadata(serde_json::json!({
        "sourceMergePolicy": "Replace",
        "targetMergePolicy": "Replace",
        "labels": {"only": "this"},
    })));
    client.push_secret(&request).await.unwrap();
    let secret = harness.read_secret(&remote, "labelled").await.unwrap();
    assert_eq!(
        secret.metadata.labels.unwrap().keys().collect::<Vec<_>>(),
        ["only"]
    );

    let fetched = client
        .get_secret(&RemoteRef {
            metadata_policy: MetadataPolicy::Fetch,
            ..RemoteRef::new("labelled").with_property("labels.only")
        })
        .await
        .unwrap();
    assert_eq!(text(fetched), "this");

    request.metadata = Some(serde_json::json!({"kind": "Something"}));
    let error = client.push_secret(&request).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error}");
}

#[tokio::test]
async fn remote_namespace_override_is_for_cluster_stores_only() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[]).await;
    let other = harness.seeded_namespace(&[]).await;
    let mut request = push_property("moved", "k", "v");
    request.metadata = Some(metadata(serde_json::json!({"remoteNamespace": other})));

    let namespaced = token_client(&harness, &remote).await;
    let error = namespaced.push_secret(&request).await.unwrap_err();
    assert_eq!(
        error.message(),
        "remoteNamespace override is only supported with ClusterSecretStore"
    );

    let mut auth = KubernetesHarness::token_auth();
    if let Some(token) = auth.token.as_mut() {
        token.bearer_token.namespace = Some(NAMESPACE.to_owned());
    }
    let store = cluster_store_of(harness.provider(&remote, auth));
    let registry = Registry::new(Arc::new(harness.token_source()));
    let cluster = registry
        .new_client(&StoreRef::from(&store), Some("team"))
        .await
        .unwrap();
    cluster.push_secret(&request).await.unwrap();
    assert!(harness.read_secret(&other, "moved").await.is_some());
    assert!(harness.read_secret(&remote, "moved").await.is_none());
}

#[tokio::test]
async fn cluster_stores_resolve_referent_credentials_in_the_callers_namespace() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[("db", "v")]).await;
    let source = MemorySecretSource::default().with_secret(
        "team-a",
        TOKEN_SECRET,
        &[],
        &[("token", harness.token())],
    );
    let store = cluster_store_of(harness.provider(&remote, KubernetesHarness::token_auth()));
    let registry = Registry::new(Arc::new(source));
    let store_ref = StoreRef::from(&store);

    let team_a = registry
        .new_client(&store_ref, Some("team-a"))
        .await
        .unwrap();
    assert!(team_a.get_secret(&RemoteRef::new("db")).await.is_ok());
    let error = registry
        .new_client(&store_ref, Some("team-b"))
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");

    // Validating the store itself: whose credentials is unknown.
    let validating = registry.new_client(&store_ref, None).await.unwrap();
    assert_eq!(
        validating.validate().await.unwrap(),
        ValidationResult::Unknown
    );
    let error = validating
        .get_secret(&RemoteRef::new("db"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
}

#[tokio::test]
async fn find_by_tags_and_by_name() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[]).await;
    harness
        .create_secret(&remote, "tls-web", &[("app", "nginx")], &[("crt", "a")])
        .await;
    harness
        .create_secret(&remote, "tls-db", &[("app", "db")], &[("crt", "b")])
        .await;
    harness
        .create_secret(&remote, "plain", &[("app", "nginx")], &[("k", "c")])
        .await;
    let client = token_client(&harness, &remote).await;

    let mut by_tags = Find::default();
    by_tags.tags.insert("app".into(), "nginx".into());
    let found = client.get_all_secrets(&by_tags).await.unwrap();
    assert_eq!(found.keys().collect::<Vec<_>>(), ["plain", "tls-web"]);
    assert_eq!(text(found["tls-web"].clone()), r#"{"crt":"a"}"#);

    let found = client
        .get_all_secrets(&Find::by_name("^tls-"))
        .await
        .unwrap();
    assert_eq!(found.keys().collect::<Vec<_>>(), ["tls-db", "tls-web"]);

    let by_path = Find {
        path: Some("tls".into()),
        ..Find::default()
    };
    let error = client.get_all_secrets(&by_path).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
}

#[tokio::test]
async fn a_wrong_token_is_permission_denied() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[("db", "v")]).await;
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        TOKEN_SECRET,
        &[],
        &[("token", "not-the-token")],
    );
    let client = client(
        harness.provider(&remote, KubernetesHarness::token_auth()),
        source,
    )
    .await
    .unwrap();
    let error = client.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.is_temporary());
    assert!(!error.message().contains("not-the-token"), "{error}");
    let error = client.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
}

#[tokio::test]
async fn a_forbidden_write_is_permission_denied() {
    let harness = KubernetesHarness::start().await;
    // A namespace held by a finalizer stays terminating; the API server forbids new content.
    let name = unique_name("terminating");
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            finalizers: Some(vec!["example.com/hold".into()]),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let namespaces: Api<Namespace> = Api::all(harness.admin.clone());
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    let client = token_client(&harness, &name).await;
    let error = client
        .push_secret(&push_property("new", "k", "v"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(error.message().contains("being terminated"), "{error}");
}

#[tokio::test]
async fn an_unreachable_server_is_temporarily_unavailable() {
    let harness = KubernetesHarness::start().await;
    let mut provider = harness.provider("default", KubernetesHarness::token_auth());
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    if let Some(server) = provider.server.as_mut() {
        server.url = format!("https://{closed}");
    }
    let client = client(provider, harness.token_source()).await.unwrap();
    let error = client.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.is_temporary());
}

#[tokio::test]
async fn validation_reads_when_review_apis_are_not_served() {
    let harness = KubernetesHarness::start().await;
    let remote = harness.seeded_namespace(&[]).await;
    let client = token_client(&harness, &remote).await;
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);

    let provider = KubernetesProvider {
        server: None,
        ..harness.provider(&remote, KubernetesHarness::token_auth())
    };
    let error = client_error(provider, harness.token_source()).await;
    assert_eq!(error.message(), "no server URL provided");
}
