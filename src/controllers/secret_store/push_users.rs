//! Which PushSecrets still need a store to delete what they pushed: those with
//! `deletionPolicy: Delete` that pushed through it (`status.syncedPushSecrets` has its
//! `Kind/name` key) or list it in `secretStoreRefs` (by name or label selector) and may not have
//! synced yet, as upstream's `hasPushSecretsWithDeletePolicy`. While one does, the store keeps
//! upstream's finalizer, so deleting the store cannot strand values at the provider.

use std::collections::BTreeMap;

use external_secrets_crds::v1::SecretStoreRefKind;
use external_secrets_crds::v1alpha1::{PushSecret, PushSecretDeletionPolicy, PushSecretStoreRef};
use kube::ResourceExt;

use crate::labels::selector_matches;

/// Upstream's store finalizer (`secretStoreFinalizer`).
pub const FINALIZER: &str = "secretstore.externalsecrets.io/finalizer";

/// The store a PushSecret may use, as the check sees it.
pub struct StoreIdentity<'a> {
    /// SecretStore or ClusterSecretStore.
    pub kind: SecretStoreRefKind,
    /// Its name.
    pub name: &'a str,
    /// Its namespace; `None` for a ClusterSecretStore.
    pub namespace: Option<&'a str>,
    /// Its labels, for `secretStoreRefs[].labelSelector`.
    pub labels: &'a BTreeMap<String, String>,
}

impl StoreIdentity<'_> {
    fn kind_name(&self) -> &'static str {
        match self.kind {
            SecretStoreRefKind::SecretStore => "SecretStore",
            SecretStoreRefKind::ClusterSecretStore => "ClusterSecretStore",
        }
    }

    /// Whether `push_secret` can reach this store at all: a SecretStore only from its own
    /// namespace.
    fn reachable_from(&self, push_secret: &PushSecret) -> bool {
        match self.namespace {
            Some(namespace) => push_secret.namespace().as_deref() == Some(namespace),
            None => true,
        }
    }

    fn matches(&self, reference: &PushSecretStoreRef) -> bool {
        reference.kind == self.kind
            && (reference.name.as_deref() == Some(self.name)
                || reference
                    .label_selector
                    .as_ref()
                    .is_some_and(|selector| selector_matches(selector, self.labels)))
    }
}

/// Whether `push_secret` still needs `store` to delete what it pushed.
pub fn needs_store(store: &StoreIdentity<'_>, push_secret: &PushSecret) -> bool {
    push_secret.spec.deletion_policy == PushSecretDeletionPolicy::Delete
        && mentions_store(store, push_secret)
}

/// Whether `push_secret` pushed through the store or lists it (any deletion policy), so a
/// change to the PushSecret may change whether the store keeps its finalizer.
pub fn mentions_store(store: &StoreIdentity<'_>, push_secret: &PushSecret) -> bool {
    if !store.reachable_from(push_secret) {
        return false;
    }
    let key = format!("{}/{}", store.kind_name(), store.name);
    let pushed = push_secret
        .status
        .as_ref()
        .is_some_and(|status| status.synced_push_secrets.contains_key(&key));
    pushed
        || push_secret
            .spec
            .secret_store_refs
            .iter()
            .any(|reference| store.matches(reference))
}

#[cfg(test)]
#[path = "push_users_tests.rs"]
mod tests;
