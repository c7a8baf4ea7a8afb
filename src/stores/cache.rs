//! Stores found in the controller's watch caches (ExternalSecret reads, `render`), and the
//! checks that decide whether one may be read from a namespace now.

use external_secrets_crds::v1::{
    ClusterSecretStore, SecretStore, SecretStoreRef, SecretStoreRefKind,
};
use kube::runtime::reflector::{ObjectRef, Store};

use crate::caches::is_synced;

use super::admission::{NamespaceLabels, check_admitted};
use super::{Error, FoundStore, kind_and_name};

/// The watch caches of both store kinds.
#[derive(Clone)]
pub struct Stores {
    /// SecretStores of every namespace.
    pub secret_stores: Store<SecretStore>,
    /// ClusterSecretStores.
    pub cluster_secret_stores: Store<ClusterSecretStore>,
}

impl Stores {
    /// Whether both caches hold their watch's initial list.
    pub fn synced(&self) -> bool {
        is_synced(&self.secret_stores) && is_synced(&self.cluster_secret_stores)
    }

    /// The store `reference` names, seen from `namespace`.
    pub fn find(&self, reference: &SecretStoreRef, namespace: &str) -> Result<FoundStore, Error> {
        let (kind, name) = kind_and_name(reference);
        if name.is_empty() {
            return Err(Error::MissingName);
        }
        let found = match kind {
            SecretStoreRefKind::SecretStore => self
                .secret_stores
                .get(&ObjectRef::new(name).within(namespace))
                .map(FoundStore::Namespaced),
            SecretStoreRefKind::ClusterSecretStore => self
                .cluster_secret_stores
                .get(&ObjectRef::new(name))
                .map(FoundStore::Cluster),
        };
        found.ok_or_else(|| Error::NotFound {
            kind,
            name: name.to_owned(),
        })
    }

    /// The store `reference` names, checked to be readable from `namespace` now: a
    /// ClusterSecretStore's conditions admit the namespace, the store is Ready when the flood
    /// gate is on, and it is not write-only.
    pub async fn find_readable(
        &self,
        reference: &SecretStoreRef,
        namespace: &str,
        namespaces: &NamespaceLabels,
        flood_gate: bool,
    ) -> Result<FoundStore, Error> {
        let store = self.find(reference, namespace)?;
        check_admitted(&store, namespace, namespaces).await?;
        if flood_gate && !store.usable() {
            return Err(Error::NotReady(store.describe()));
        }
        if store.status_capabilities() == Some("WriteOnly") {
            return Err(Error::WriteOnly(store.describe()));
        }
        Ok(store)
    }
}
