//! The types read manifests the way the API server stores them: upstream's defaults fill absent
//! fields, and what we write back never contains `null`.

use external_secrets_crds::v1::{
    ClusterSecretStore, ExternalSecret, ExternalSecretCreationPolicy, ExternalSecretDeletionPolicy,
    VaultKvStoreVersion,
};

fn contains_null(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null => true,
        serde_json::Value::Array(items) => items.iter().any(contains_null),
        serde_json::Value::Object(fields) => fields.values().any(contains_null),
        _ => false,
    }
}

#[test]
fn external_secret_gets_upstream_defaults() {
    let external_secret: ExternalSecret = serde_yaml::from_str(
        "
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata: {name: db, namespace: app}
spec:
  secretStoreRef: {name: vault}
  data:
  - secretKey: password
    remoteRef: {key: db/password}
",
    )
    .expect("a minimal ExternalSecret");
    let spec = &external_secret.spec;
    assert_eq!(spec.refresh_interval, "1h0m0s");
    assert_eq!(
        spec.target.creation_policy,
        ExternalSecretCreationPolicy::Owner
    );
    assert_eq!(
        spec.target.deletion_policy,
        ExternalSecretDeletionPolicy::Retain
    );

    let json = serde_json::to_value(&external_secret).expect("serializes");
    assert!(!contains_null(&json), "{json}");
    assert_eq!(json["spec"]["data"][0]["remoteRef"]["key"], "db/password");
    assert!(
        json["spec"].get("dataFrom").is_none(),
        "empty lists are omitted"
    );
}

#[test]
fn cluster_secret_store_shares_the_secret_store_spec() {
    let store: ClusterSecretStore = serde_yaml::from_str(
        "
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: vault}
spec:
  provider:
    vault:
      server: https://vault.example:8200
      auth:
        kubernetes: {role: eso}
",
    )
    .expect("a minimal ClusterSecretStore");
    let vault = store
        .spec
        .provider
        .vault
        .as_ref()
        .expect("the vault provider");
    assert_eq!(vault.version, VaultKvStoreVersion::V2);
    let kubernetes = vault
        .auth
        .as_ref()
        .and_then(|auth| auth.kubernetes.as_ref());
    assert_eq!(
        kubernetes.map(|auth| auth.mount_path.as_str()),
        Some("kubernetes")
    );

    let json = serde_json::to_value(&store).expect("serializes");
    assert!(!contains_null(&json), "{json}");
    assert_eq!(
        json["spec"]["provider"]["vault"]["server"],
        "https://vault.example:8200"
    );
}
