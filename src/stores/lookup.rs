//! Stores read straight from the API (PushSecret, which must see a store the moment it is
//! named and selects stores by label), with the same class and condition rules as the caches.

use std::sync::Arc;

use external_secrets_crds::meta::LabelSelector;
use external_secrets_crds::v1::{ClusterSecretStore, SecretStore, SecretStoreRefKind};
use kube::api::ListParams;
use kube::{Api, Client};

use super::FoundStore;
use crate::labels::selector_query;

/// The store of `kind` named `name` (a SecretStore in `namespace`), if it exists.
pub async fn get(
    client: &Client,
    kind: SecretStoreRefKind,
    name: &str,
    namespace: &str,
) -> Result<Option<FoundStore>, kube::Error> {
    Ok(match kind {
        SecretStoreRefKind::SecretStore => {
            Api::<SecretStore>::namespaced(client.clone(), namespace)
                .get_opt(name)
                .await?
                .map(|store| FoundStore::Namespaced(Arc::new(store)))
        }
        SecretStoreRefKind::ClusterSecretStore => Api::<ClusterSecretStore>::all(client.clone())
            .get_opt(name)
            .await?
            .map(|store| FoundStore::Cluster(Arc::new(store))),
    })
}

/// The stores of `kind` (SecretStores of `namespace`) whose labels match `selector`.
pub async fn list(
    client: &Client,
    kind: SecretStoreRefKind,
    selector: &LabelSelector,
    namespace: &str,
) -> Result<Vec<FoundStore>, kube::Error> {
    let params = ListParams::default().labels(&selector_query(selector));
    Ok(match kind {
        SecretStoreRefKind::SecretStore => {
            Api::<SecretStore>::namespaced(client.clone(), namespace)
                .list(&params)
                .await?
                .items
                .into_iter()
                .map(|store| FoundStore::Namespaced(Arc::new(store)))
                .collect()
        }
        SecretStoreRefKind::ClusterSecretStore => Api::<ClusterSecretStore>::all(client.clone())
            .list(&params)
            .await?
            .items
            .into_iter()
            .map(|store| FoundStore::Cluster(Arc::new(store)))
            .collect(),
    })
}
