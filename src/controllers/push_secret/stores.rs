//! The stores a PushSecret pushes to: `spec.secretStoreRefs` by name or label selector, read
//! from the API through the shared store resolution, this controller's class only, each
//! ClusterSecretStore admitted for the PushSecret's namespace.

use std::collections::BTreeMap;

use external_secrets_crds::v1::SecretStoreRefKind;
use external_secrets_crds::v1alpha1::PushSecret;
use kube::{Api, ResourceExt};

use super::context::PsContext;
use super::error::Error;
use crate::stores::admission::check_admitted;
use crate::stores::{FoundStore, NamespaceLabels, lookup};

/// The stores to push to, keyed as upstream keys them (`Kind/name`).
pub async fn resolve(
    push_secret: &PushSecret,
    context: &PsContext,
) -> Result<BTreeMap<String, FoundStore>, Error> {
    let client = &context.shared.client;
    let namespace = push_secret.namespace().unwrap_or_default();
    let class = &context.shared.settings.controller_class;
    let namespaces = NamespaceLabels::Cluster(Box::new(Api::all(client.clone())));
    let mut found = Vec::new();
    for (index, reference) in push_secret.spec.secret_store_refs.iter().enumerate() {
        let kind = reference.kind;
        if kind == SecretStoreRefKind::ClusterSecretStore && !context.cluster_stores_enabled {
            continue;
        }
        match (&reference.name, &reference.label_selector) {
            (Some(name), _) => {
                let store = lookup::get(client, kind, name, &namespace)
                    .await
                    .map_err(Error::StoreLookup)?;
                found.push(store.ok_or_else(|| Error::StoreNotFound {
                    kind,
                    name: name.clone(),
                })?);
            }
            (None, Some(selector)) => found.extend(
                lookup::list(client, kind, selector, &namespace)
                    .await
                    .map_err(Error::StoreLookup)?,
            ),
            (None, None) => return Err(Error::StoreRef { index }),
        }
    }
    let mut stores = BTreeMap::new();
    for store in found {
        if !store.is_processed_by(class) {
            continue;
        }
        check_admitted(&store, &namespace, &namespaces).await?;
        let id = store.store_ref().id;
        stores.insert(format!("{}/{}", id.kind, id.name), store);
    }
    Ok(stores)
}
