//! Registry rules: one provider per store, clear errors for what this build cannot serve.

use super::*;
use crate::credentials::MemorySecretSource;
use crate::error::ErrorKind;
use external_secrets_crds::v1::{
    FakeProvider, FakeProviderData, GcpsmProvider, OvhProvider, SecretStoreProvider,
};

fn gcpsm() -> GcpsmProvider {
    serde_json::from_str(r#"{"projectID":"my-project"}"#).unwrap()
}

/// A provider this crate does not implement.
fn ovh() -> OvhProvider {
    serde_json::from_str(r#"{"server":"https://okms.example","okmsid":"id","auth":{}}"#).unwrap()
}
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn registry() -> Registry {
    Registry::new(Arc::new(MemorySecretSource::default()))
}

fn fake_provider() -> SecretStoreProvider {
    SecretStoreProvider {
        fake: Some(Box::new(FakeProvider {
            data: vec![FakeProviderData {
                key: "k".into(),
                value: "v".into(),
                version: None,
            }],
            validation_result: None,
        })),
        ..SecretStoreProvider::default()
    }
}

fn secret_store(provider: SecretStoreProvider) -> SecretStore {
    SecretStore {
        metadata: ObjectMeta {
            name: Some("store".into()),
            namespace: Some("team".into()),
            uid: Some("uid-1".into()),
            generation: Some(3),
            ..ObjectMeta::default()
        },
        spec: SecretStoreSpec {
            provider,
            ..SecretStoreSpec::default()
        },
        status: None,
    }
}

#[test]
fn store_refs_carry_identity_and_version() {
    let store = secret_store(fake_provider());
    let store_ref = StoreRef::from(&store);
    assert_eq!(store_ref.id, StoreId::secret_store("team", "store"));
    assert_eq!(store_ref.version, "uid-1/3");

    let cluster = ClusterSecretStore {
        metadata: ObjectMeta {
            name: Some("global".into()),
            ..ObjectMeta::default()
        },
        spec: external_secrets_crds::v1::ClusterSecretStoreSpec(SecretStoreSpec::default()),
        status: None,
    };
    assert_eq!(
        StoreRef::from(&cluster).id,
        StoreId::cluster_secret_store("global")
    );
}

#[test]
fn exactly_one_provider_must_be_set() {
    let error = Backend::of(&SecretStoreProvider::default()).unwrap_err();
    assert_eq!(
        error.message(),
        "secret stores must only have exactly one backend specified, found 0"
    );
    let mut two = fake_provider();
    two.gcpsm = Some(Box::new(gcpsm()));
    let error = Backend::of(&two).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(error.message().ends_with("found 2"));
    assert_eq!(Backend::of(&fake_provider()).unwrap().name(), "fake");
}

#[tokio::test]
async fn unimplemented_providers_are_permanently_unsupported() {
    let ovh = secret_store(SecretStoreProvider {
        ovh: Some(Box::new(ovh())),
        ..SecretStoreProvider::default()
    });
    let error = registry()
        .new_client(&StoreRef::from(&ovh), None)
        .await
        .err()
        .unwrap();
    assert_eq!(
        error.message(),
        r#"provider "ovh" is not supported by this build"#
    );
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert!(!error.is_temporary());
    let error = registry()
        .validate_store(&StoreRef::from(&ovh))
        .unwrap_err();
    assert_eq!(error.reason(), "Unsupported");
    assert!(
        Backend::of(&ovh.spec.provider)
            .unwrap()
            .capabilities()
            .is_err()
    );
}

#[tokio::test]
async fn a_kubernetes_store_without_auth_is_a_configuration_error_or_not_compiled_in() {
    let kubernetes = secret_store(SecretStoreProvider {
        kubernetes: Some(Box::default()),
        ..SecretStoreProvider::default()
    });
    let error = registry()
        .new_client(&StoreRef::from(&kubernetes), None)
        .await
        .err()
        .unwrap();
    if cfg!(feature = "kubernetes") {
        assert_eq!(error.message(), "no auth provider given");
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    } else {
        assert_eq!(
            error.message(),
            r#"provider "kubernetes" is not compiled in"#
        );
    }
}

#[cfg(feature = "fake")]
#[tokio::test]
async fn a_fake_store_builds_a_working_client() {
    use crate::client::Capabilities;
    use crate::request::RemoteRef;
    let store = secret_store(fake_provider());
    let registry = registry();
    let backend = registry.validate_store(&StoreRef::from(&store)).unwrap();
    assert_eq!(backend.capabilities().unwrap(), Capabilities::ReadWrite);
    assert!(!backend.depends_on_caller());
    let client = registry
        .new_client(&StoreRef::from(&store), None)
        .await
        .unwrap();
    let value = client.get_secret(&RemoteRef::new("k")).await.unwrap();
    assert_eq!(value.expose(), b"v");

    let mut broken = fake_provider();
    broken.fake.as_mut().unwrap().data[0].key.clear();
    let error = registry
        .validate_store(&StoreRef::from(&secret_store(broken)))
        .unwrap_err();
    assert_eq!(error.message(), "key must be set in data 0");
}

#[cfg(not(feature = "fake"))]
#[tokio::test]
async fn a_provider_left_out_of_the_build_says_so() {
    let store = secret_store(fake_provider());
    let error = registry()
        .new_client(&StoreRef::from(&store), None)
        .await
        .err()
        .unwrap();
    assert_eq!(error.message(), r#"provider "fake" is not compiled in"#);
    assert_eq!(error.kind(), ErrorKind::Unsupported);
}

#[cfg(feature = "webhook")]
#[test]
fn webhook_stores_are_validated_statically() {
    use external_secrets_crds::v1::WebhookProvider;
    let store = secret_store(SecretStoreProvider {
        webhook: Some(Box::new(WebhookProvider {
            url: "http://x/{{ .remoteRef.key".into(),
            ..WebhookProvider::default()
        })),
        ..SecretStoreProvider::default()
    });
    let error = registry()
        .validate_store(&StoreRef::from(&store))
        .unwrap_err();
    assert_eq!(error.message(), "failed to parse url: unclosed action");
    assert!(
        Backend::of(&store.spec.provider)
            .unwrap()
            .depends_on_caller()
    );
}

/// Upstream v2.9 registers every provider `MaintenanceStatusMaintained` except the fake
/// (providers/v1/fake/fake.go `MaintenanceStatus()` returns `MaintenanceStatusNotMaintained`).
#[cfg(all(feature = "fake", feature = "gcpsm"))]
#[test]
fn only_the_fake_provider_is_unmaintained() {
    assert!(!Backend::of(&fake_provider()).unwrap().maintained());
    let gcp = SecretStoreProvider {
        gcpsm: Some(Box::new(gcpsm())),
        ..SecretStoreProvider::default()
    };
    assert!(Backend::of(&gcp).unwrap().maintained());
    let ovh = SecretStoreProvider {
        ovh: Some(Box::new(ovh())),
        ..SecretStoreProvider::default()
    };
    assert!(
        Backend::of(&ovh).unwrap().maintained(),
        "not served: no warning"
    );
}

#[tokio::test]
async fn onepassword_sdk_stores_are_refused_with_the_reason() {
    let store = secret_store(SecretStoreProvider {
        onepassword_sdk: Some(Box::default()),
        ..SecretStoreProvider::default()
    });
    let error = registry()
        .validate_store(&StoreRef::from(&store))
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert!(!error.is_temporary());
    assert!(
        error
            .message()
            .starts_with(r#"provider "onepasswordSDK" is not supported by this build: 1Password publishes no Rust SDK"#),
        "{error}"
    );
    assert!(
        error
            .message()
            .ends_with("use the onepassword provider with a 1Password Connect server")
    );
    let error = registry()
        .new_client(&StoreRef::from(&store), None)
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
}
