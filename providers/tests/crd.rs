//! The crd provider against a real (loopback) Kubernetes API server, each test starting its own:
//! keys of SecretStores and ClusterSecretStores over namespaced and cluster-scoped kinds, core
//! kinds (ConfigMap), whitelist rules, auth methods (token, ServiceAccount, kubeconfig) and how
//! connection failures map to error kinds.

#![cfg(feature = "crd")]

mod support;

use std::sync::Arc;

use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::{
    ClusterSecretStore, ClusterSecretStoreSpec, CrdProvider, CrdProviderResource,
    CrdProviderWhitelist, CrdProviderWhitelistRule, KubernetesAuth, SecretStoreProvider,
    SecretStoreSpec, TokenAuth,
};
use external_secrets_providers::credentials::{KubeSecretSource, MemorySecretSource, SecretSource};
use external_secrets_providers::request::{Find, PushRemoteRef, RemoteRef};
use external_secrets_providers::{
    ErrorKind, ProviderError, Registry, SecretValue, SharedClient, StoreRef, ValidationResult,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use support::NAMESPACE;
use support::crd::CrdHarness;
use support::kubernetes::{KubernetesHarness, TOKEN_SECRET};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn value_of(key: &str) -> RemoteRef {
    RemoteRef::new(key).with_property("spec.value")
}

/// A bare client (no cache, no retries) of a ClusterSecretStore with `provider`, used from
/// `caller` (`None`: validating the store).
async fn cluster_client(
    provider: CrdProvider,
    source: impl SecretSource + 'static,
    caller: Option<&str>,
) -> Result<SharedClient, ProviderError> {
    let mut store = ClusterSecretStore::new(
        &support::unique_name("cluster-crd"),
        ClusterSecretStoreSpec(SecretStoreSpec {
            provider: SecretStoreProvider {
                crd: Some(Box::new(provider)),
                ..SecretStoreProvider::default()
            },
            ..SecretStoreSpec::default()
        }),
    );
    store.metadata.uid = Some("uid".into());
    store.metadata.generation = Some(1);
    Registry::new(Arc::new(source))
        .new_client(&StoreRef::from(&store), caller)
        .await
}

/// Why building a ClusterSecretStore client with `provider` fails.
async fn cluster_error(
    provider: CrdProvider,
    source: impl SecretSource + 'static,
) -> ProviderError {
    cluster_client(provider, source, Some(NAMESPACE))
        .await
        .err()
        .expect("the client fails")
}

/// Token auth through [`TOKEN_SECRET`] of [`NAMESPACE`], named explicitly (not referent).
fn cluster_token_auth() -> KubernetesAuth {
    KubernetesAuth {
        token: Some(TokenAuth {
            bearer_token: SecretKeySelector {
                name: Some(TOKEN_SECRET.into()),
                namespace: Some(NAMESPACE.into()),
                key: Some("token".into()),
            },
        }),
        ..KubernetesAuth::default()
    }
}

#[tokio::test]
async fn cluster_stores_address_namespaced_objects_as_namespace_slash_name() {
    let harness = CrdHarness::start().await;
    let first = harness.seeded_namespace(&[("db", "one")]).await;
    let second = harness.seeded_namespace(&[("db", "two")]).await;
    let source = harness.kubernetes.token_source();
    let provider = harness.provider("Thing", cluster_token_auth());
    let client = cluster_client(provider, source, Some(NAMESPACE))
        .await
        .unwrap();

    let value = client.get_secret(&value_of(&format!("{second}/db"))).await;
    assert_eq!(text(value.unwrap()), "two");
    let error = client.get_secret(&value_of("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error}");
    assert!(error.message().contains("namespace/objectName"), "{error}");
    let missing = client
        .get_secret(&value_of(&format!("{first}/nothing")))
        .await;
    assert_eq!(missing.unwrap_err().kind(), ErrorKind::NotFound);

    // Find lists every namespace and names results namespace/name.
    let found = client
        .get_all_secrets(&Find::by_name("/db$"))
        .await
        .unwrap();
    let keys: Vec<&String> = found.keys().collect();
    assert_eq!(
        keys,
        [&format!("{first}_db"), &format!("{second}_db")],
        "the default conversion replaces '/'"
    );
    let object: serde_json::Value =
        serde_json::from_slice(found[&format!("{first}_db")].expose()).unwrap();
    assert_eq!(object["spec"]["value"], "one");
    assert_eq!(object["metadata"]["namespace"], first.as_str());
}

#[tokio::test]
async fn cluster_scoped_kinds_are_addressed_by_name_only() {
    let harness = CrdHarness::start().await;
    harness
        .create(
            "ClusterThing",
            None,
            "global",
            json!({"value": "g", "port": 5432}),
        )
        .await;
    let provider = harness.provider("ClusterThing", cluster_token_auth());
    let client = cluster_client(provider, harness.kubernetes.token_source(), Some(NAMESPACE))
        .await
        .unwrap();
    assert_eq!(
        text(client.get_secret(&value_of("global")).await.unwrap()),
        "g"
    );
    let port = RemoteRef::new("global").with_property("spec.port");
    assert_eq!(text(client.get_secret(&port).await.unwrap()), "5432");
    let map = client
        .get_secret_map(&RemoteRef::new("global").with_property("spec"))
        .await
        .unwrap();
    assert_eq!(map.keys().collect::<Vec<_>>(), ["port", "value"]);
    let error = client.get_secret(&value_of("ns/global")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error}");
    let missing = client
        .get_secret(&RemoteRef::new("global").with_property("spec.absent"))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    assert!(
        client
            .secret_exists(&PushRemoteRef::new("global"))
            .await
            .unwrap()
    );
    assert!(
        !client
            .secret_exists(&PushRemoteRef::new("gone"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn secret_stores_read_their_own_namespace_only() {
    let harness = CrdHarness::start().await;
    let own = harness.seeded_namespace(&[("db", "mine")]).await;
    let other = harness.seeded_namespace(&[("theirs", "x")]).await;
    let client = harness
        .client_in(
            &own,
            harness.provider("Thing", KubernetesHarness::token_auth()),
        )
        .await;
    assert_eq!(
        text(client.get_secret(&value_of("db")).await.unwrap()),
        "mine"
    );
    let error = client
        .get_secret(&value_of(&format!("{other}/theirs")))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error}");
    let found = client.get_all_secrets(&Find::default()).await.unwrap();
    assert_eq!(found.keys().collect::<Vec<_>>(), ["db"]);
}

#[tokio::test]
async fn core_kinds_such_as_config_maps_are_read() {
    let harness = CrdHarness::start().await;
    let namespace = harness.seeded_namespace(&[]).await;
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some("settings".into()),
            ..ObjectMeta::default()
        },
        data: Some([("url".to_owned(), "https://db".to_owned())].into()),
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(harness.kubernetes.admin.clone(), &namespace)
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();
    let provider = CrdProvider {
        resource: CrdProviderResource {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
        },
        ..harness.provider("unused", KubernetesHarness::token_auth())
    };
    let client = harness.client_in(&namespace, provider).await;
    let value = client
        .get_secret(&RemoteRef::new("settings").with_property("data.url"))
        .await;
    assert_eq!(text(value.unwrap()), "https://db");
}

#[tokio::test]
async fn whitelist_rules_gate_reads_finds_and_existence() {
    let harness = CrdHarness::start().await;
    let namespace = harness
        .seeded_namespace(&[("app-db", "1"), ("app-cache", "2"), ("admin", "3")])
        .await;
    let provider = CrdProvider {
        whitelist: Some(CrdProviderWhitelist {
            rules: vec![
                CrdProviderWhitelistRule {
                    name: Some("^app-".into()),
                    ..CrdProviderWhitelistRule::default()
                },
                CrdProviderWhitelistRule {
                    name: Some("^admin$".into()),
                    properties: vec!["^spec\\.value$".into()],
                    ..CrdProviderWhitelistRule::default()
                },
            ],
        }),
        ..harness.provider("Thing", KubernetesHarness::token_auth())
    };
    let client = harness.client_in(&namespace, provider).await;
    assert_eq!(
        text(client.get_secret(&value_of("app-db")).await.unwrap()),
        "1"
    );
    assert_eq!(
        text(client.get_secret(&value_of("admin")).await.unwrap()),
        "3"
    );
    let whole = client
        .get_secret(&RemoteRef::new("admin"))
        .await
        .unwrap_err();
    assert_eq!(whole.kind(), ErrorKind::PermissionDenied, "{whole}");
    assert!(
        whole.message().contains("denied by whitelist rules"),
        "{whole}"
    );
    let found = client.get_all_secrets(&Find::default()).await.unwrap();
    assert_eq!(found.keys().collect::<Vec<_>>(), ["app-cache", "app-db"]);
    let error = client
        .secret_exists(&PushRemoteRef::new("admin"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
}

#[tokio::test]
async fn service_account_and_kubeconfig_auth() {
    let harness = CrdHarness::start().await;
    let namespace = harness.seeded_namespace(&[("db", "v")]).await;
    harness
        .kubernetes
        .reader_account(
            "reader",
            &namespace,
            "test.crd.external-secrets.io",
            &["things"],
        )
        .await;
    let by_account = KubernetesAuth {
        service_account: Some(ServiceAccountSelector {
            name: "reader".into(),
            namespace: Some(NAMESPACE.into()),
            audiences: Vec::new(),
        }),
        ..KubernetesAuth::default()
    };
    let source = KubeSecretSource::new(harness.kubernetes.admin.clone());
    let via_account = cluster_client(harness.provider("Thing", by_account), source, None);
    assert_reads_db(via_account.await, &namespace).await;

    let kubeconfig = std::fs::read_to_string(harness.kubernetes.server.kubeconfig_path()).unwrap();
    let by_kubeconfig = CrdProvider {
        server: None,
        auth: None,
        auth_ref: Some(SecretKeySelector {
            name: Some("remote-kubeconfig".into()),
            namespace: Some(NAMESPACE.into()),
            key: Some("config".into()),
        }),
        ..harness.provider("Thing", KubernetesAuth::default())
    };
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "remote-kubeconfig",
        &[],
        &[("config", &kubeconfig)],
    );
    let via_kubeconfig = cluster_client(by_kubeconfig, source, None);
    assert_reads_db(via_kubeconfig.await, &namespace).await;
}

/// Checks that `client` was built and reads `v` from `namespace/db`.
async fn assert_reads_db(client: Result<SharedClient, ProviderError>, namespace: &str) {
    let value = client
        .unwrap()
        .get_secret(&value_of(&format!("{namespace}/db")))
        .await;
    assert_eq!(text(value.unwrap()), "v");
}

#[tokio::test]
async fn connection_failures_fail_the_client() {
    let harness = CrdHarness::start().await;
    let wrong_token = MemorySecretSource::default().with_secret(
        NAMESPACE,
        TOKEN_SECRET,
        &[],
        &[("token", "not-the-token")],
    );
    let provider = harness.provider("Thing", cluster_token_auth());
    let error = cluster_error(provider.clone(), wrong_token).await;
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("not-the-token"), "{error}");

    let unregistered = CrdProvider {
        resource: CrdProviderResource {
            kind: "Nothing".into(),
            ..provider.resource.clone()
        },
        ..provider.clone()
    };
    let error = cluster_error(unregistered, harness.kubernetes.token_source()).await;
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    let message = error.message();
    assert!(
        message.contains("is not registered in the cluster"),
        "{error}"
    );

    let mut unreachable = provider;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    if let Some(server) = unreachable.server.as_mut() {
        server.url = format!("https://{closed}");
    }
    let error = cluster_error(unreachable, harness.kubernetes.token_source()).await;
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.is_temporary());
}

#[tokio::test]
async fn referent_cluster_stores_validate_as_unknown_without_a_caller() {
    let harness = CrdHarness::start().await;
    let provider = harness.provider("Thing", KubernetesHarness::token_auth());
    let client = cluster_client(provider, MemorySecretSource::default(), None)
        .await
        .unwrap();
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Unknown);
    let error = client.get_secret(&value_of("x")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
}
