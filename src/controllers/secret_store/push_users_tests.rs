//! Cases from upstream's `pkg/controllers/secretstore/common_test.go` finalizer entries ("should
//! add finalizer when PushSecret with DeletionPolicy=Delete is created", "should remove
//! finalizer when DeletionPolicy changes to None") and `util.go`'s `storeMatchesRef`.

use std::collections::BTreeMap;

use external_secrets_crds::meta::LabelSelector;
use external_secrets_crds::v1alpha1::{PushSecretSpec, PushSecretStatus};

use super::*;

fn push_secret(namespace: &str, policy: PushSecretDeletionPolicy) -> PushSecret {
    let mut push_secret = PushSecret::new("ps", PushSecretSpec::default());
    push_secret.metadata.namespace = Some(namespace.to_owned());
    push_secret.spec.deletion_policy = policy;
    push_secret
}

fn by_name(kind: SecretStoreRefKind, name: &str) -> PushSecretStoreRef {
    PushSecretStoreRef {
        name: Some(name.to_owned()),
        label_selector: None,
        kind,
    }
}

fn store<'a>(
    kind: SecretStoreRefKind,
    namespace: Option<&'a str>,
    labels: &'a BTreeMap<String, String>,
) -> StoreIdentity<'a> {
    StoreIdentity {
        kind,
        name: "store",
        namespace,
        labels,
    }
}

#[test]
fn a_delete_policy_push_secret_listing_the_store_needs_it() {
    let labels = BTreeMap::new();
    let mut user = push_secret("team", PushSecretDeletionPolicy::Delete);
    user.spec.secret_store_refs = vec![by_name(SecretStoreRefKind::SecretStore, "store")];
    let namespaced = store(SecretStoreRefKind::SecretStore, Some("team"), &labels);
    assert!(needs_store(&namespaced, &user));

    user.spec.deletion_policy = PushSecretDeletionPolicy::None;
    assert!(!needs_store(&namespaced, &user));
    assert!(mentions_store(&namespaced, &user));
}

#[test]
fn a_secret_store_is_never_needed_from_another_namespace() {
    let labels = BTreeMap::new();
    let mut user = push_secret("other", PushSecretDeletionPolicy::Delete);
    user.spec.secret_store_refs = vec![by_name(SecretStoreRefKind::SecretStore, "store")];
    let namespaced = store(SecretStoreRefKind::SecretStore, Some("team"), &labels);
    assert!(!needs_store(&namespaced, &user));
    assert!(!mentions_store(&namespaced, &user));
}

#[test]
fn a_cluster_store_is_needed_from_any_namespace_but_only_for_its_kind() {
    let labels = BTreeMap::new();
    let mut user = push_secret("anywhere", PushSecretDeletionPolicy::Delete);
    user.spec.secret_store_refs = vec![by_name(SecretStoreRefKind::ClusterSecretStore, "store")];
    let cluster = store(SecretStoreRefKind::ClusterSecretStore, None, &labels);
    assert!(needs_store(&cluster, &user));
    let same_name_namespaced = store(SecretStoreRefKind::SecretStore, Some("anywhere"), &labels);
    assert!(!needs_store(&same_name_namespaced, &user));
}

#[test]
fn label_selectors_select_stores_by_their_labels() {
    let labels = BTreeMap::from([("team".to_owned(), "a".to_owned())]);
    let mut user = push_secret("team", PushSecretDeletionPolicy::Delete);
    user.spec.secret_store_refs = vec![PushSecretStoreRef {
        name: None,
        label_selector: Some(LabelSelector {
            match_labels: BTreeMap::from([("team".to_owned(), "a".to_owned())]),
            match_expressions: Vec::new(),
        }),
        kind: SecretStoreRefKind::SecretStore,
    }];
    assert!(needs_store(
        &store(SecretStoreRefKind::SecretStore, Some("team"), &labels),
        &user
    ));
    let other_labels = BTreeMap::from([("team".to_owned(), "b".to_owned())]);
    assert!(!needs_store(
        &store(SecretStoreRefKind::SecretStore, Some("team"), &other_labels),
        &user
    ));
}

#[test]
fn a_store_pushed_through_is_needed_after_it_left_the_refs() {
    // Upstream's `status.syncedPushSecrets` index: keys are `Kind/name`.
    let labels = BTreeMap::new();
    let mut user = push_secret("team", PushSecretDeletionPolicy::Delete);
    user.status = Some(PushSecretStatus {
        synced_push_secrets: BTreeMap::from([("SecretStore/store".to_owned(), BTreeMap::new())]),
        ..PushSecretStatus::default()
    });
    assert!(needs_store(
        &store(SecretStoreRefKind::SecretStore, Some("team"), &labels),
        &user
    ));
    assert!(!needs_store(
        &store(SecretStoreRefKind::ClusterSecretStore, None, &labels),
        &user
    ));
}
