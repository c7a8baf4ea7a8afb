//! The `delinea` backend against the DevOps Secrets Vault contract fake: client-credentials
//! auth (inline or from a Secret, refused credentials, one token for many reads), ClusterSecretStore
//! namespace rules, secrets whole, by property and as maps, `:` paths, and error kinds.

#![cfg(feature = "delinea")]

mod support;

use std::sync::Arc;

use external_secrets_crds::v1::{
    ClusterSecretStore, ClusterSecretStoreSpec, SecretStoreProvider, SecretStoreSpec,
};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use external_secrets_providers::{Registry, StoreRef};
use serde_json::json;
use support::delinea::{CLIENT_SECRET, client, fake, store_provider};
use support::{NAMESPACE, unique_name};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

/// A path no other test uses, holding `data`.
fn seeded(data: serde_json::Value) -> String {
    let path = format!("{}/db", unique_name("apps"));
    fake().set_secret(&path, data);
    path
}

#[tokio::test]
async fn client_credentials_are_exchanged_once_and_wrong_ones_refused() {
    let path = seeded(json!({"password": "s3cret"}));
    let denied = client("wrong-secret").await;
    let error = denied.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(error.message().contains("401"), "{error}");
    assert!(!error.message().contains("wrong-secret"), "{error}");
    let error = denied.get_secret(&RemoteRef::new(&path)).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");

    let allowed = client(CLIENT_SECRET).await;
    for _ in 0..3 {
        let value = allowed
            .get_secret(&RemoteRef::new(&path).with_property("password"))
            .await
            .unwrap();
        assert_eq!(text(value), "s3cret");
    }
    let reads = fake()
        .server
        .requests()
        .into_iter()
        .filter(|request| request.path == format!("/v1/secrets/{path}"))
        .collect::<Vec<_>>();
    assert_eq!(reads.len(), 3);
    let tokens: std::collections::BTreeSet<_> = reads
        .iter()
        .map(|request| contract_fakes::server::bearer(&request.headers).map(str::to_owned))
        .collect();
    assert_eq!(tokens.len(), 1, "one token for every read: {tokens:?}");
}

#[tokio::test]
async fn secrets_are_json_whole_properties_or_maps() {
    let path = seeded(json!({"user": "admin", "port": 5432, "nested": {"k": "v"}, "none": null}));
    let client = client(CLIENT_SECRET).await;
    let whole = client.get_secret(&RemoteRef::new(&path)).await.unwrap();
    assert_eq!(
        text(whole),
        r#"{"nested":{"k":"v"},"none":null,"port":5432,"user":"admin"}"#
    );
    let nested = client
        .get_secret(&RemoteRef::new(&path).with_property("nested.k"))
        .await
        .unwrap();
    assert_eq!(text(nested), "v");
    let map = client.get_secret_map(&RemoteRef::new(&path)).await.unwrap();
    assert_eq!(
        texts(map),
        [
            ("nested".into(), r#"{"k":"v"}"#.into()),
            ("none".into(), String::new()),
            ("port".into(), "5432".into()),
            ("user".into(), "admin".into())
        ]
    );
    let missing = client
        .get_secret(&RemoteRef::new(&path).with_property("absent"))
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    // DSV also separates paths with ':'.
    let colon = path.replace('/', ":");
    let value = client
        .get_secret(&RemoteRef::new(&colon).with_property("user"))
        .await
        .unwrap();
    assert_eq!(text(value), "admin");
    let versioned = client
        .get_secret(&RemoteRef::new(&path).with_version("2"))
        .await
        .unwrap_err();
    assert_eq!(
        versioned.message(),
        "specifying a version is not yet supported"
    );
}

#[tokio::test]
async fn find_and_writes_are_unsupported_and_missing_secrets_not_found() {
    let client = client(CLIENT_SECRET).await;
    let error = client
        .get_all_secrets(&Find::by_name(".*"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert_eq!(
        error.message(),
        "getting all secrets is not supported by Delinea DevOps Secrets Vault"
    );
    let missing = client
        .get_secret(&RemoteRef::new("no/such/secret"))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    assert!(!missing.is_temporary());
}

/// A ClusterSecretStore with the harness's delinea section.
fn cluster_store() -> ClusterSecretStore {
    let mut store = ClusterSecretStore::new(
        &unique_name("cluster-delinea"),
        ClusterSecretStoreSpec(SecretStoreSpec {
            provider: store_provider(),
            ..SecretStoreSpec::default()
        }),
    );
    store.metadata.uid = Some("uid".into());
    store.metadata.generation = Some(1);
    store
}

#[tokio::test]
async fn cluster_stores_need_namespaced_references() {
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        "dsv",
        &[],
        &[("secret", CLIENT_SECRET)],
    );
    let registry = Registry::new(Arc::new(source));
    let store = cluster_store();
    let error = match registry
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
    {
        Ok(_) => panic!("a reference without namespace is refused"),
        Err(error) => error,
    };
    assert_eq!(
        error.message(),
        "when using a ClusterSecretStore, namespaces must be explicitly set"
    );
    let mut named = cluster_store();
    let SecretStoreProvider {
        delinea: Some(delinea),
        ..
    } = &mut named.spec.0.provider
    else {
        unreachable!()
    };
    if let Some(selector) = delinea.client_secret.secret_ref.as_mut() {
        selector.namespace = Some(NAMESPACE.into());
    }
    let client = registry
        .new_client(&StoreRef::from(&named), None)
        .await
        .unwrap();
    client.validate().await.unwrap();
}
