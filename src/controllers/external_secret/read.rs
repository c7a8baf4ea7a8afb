//! From an ExternalSecret to its data: find every store it references, check each may be used
//! from the ExternalSecret's namespace, then fetch. Shared by the controller and `render`, so
//! both fail with the same messages.

use std::collections::{BTreeMap, HashMap};

use external_secrets_crds::v1::{ExternalSecret, SecretStoreRef, SecretStoreRefKind};
use external_secrets_providers::ClientManager;
use k8s_openapi::api::core::v1::Namespace;
use kube::{Api, ResourceExt};

use super::error::Error;
use super::fetch::{Fetched, Fetcher, SharedReads};
use super::status;
use super::stores::{FoundStore, Stores, cluster_store_admits, kind_and_name};
use crate::generators::GeneratorSource;
use crate::metrics::Metrics;

/// Where namespace labels come from, for ClusterSecretStore `namespaceSelector` conditions.
pub enum NamespaceLabels {
    /// The cluster's Namespaces.
    Cluster(Box<Api<Namespace>>),
    /// Namespaces known up front (`render`); an unknown namespace has no labels.
    Known(BTreeMap<String, BTreeMap<String, String>>),
}

impl NamespaceLabels {
    /// The labels of `namespace`.
    pub async fn of(&self, namespace: &str) -> Result<BTreeMap<String, String>, Error> {
        match self {
            NamespaceLabels::Cluster(api) => {
                let found = api.get(namespace).await.map_err(Error::Kube)?;
                Ok(found.metadata.labels.unwrap_or_default())
            }
            NamespaceLabels::Known(known) => Ok(known.get(namespace).cloned().unwrap_or_default()),
        }
    }
}

/// What reading needs: the stores, provider clients, metrics and namespace labels.
pub struct Reader<'a> {
    /// Stores of both kinds.
    pub stores: &'a Stores,
    /// Cached provider clients.
    pub clients: &'a ClientManager,
    /// Provider call counters.
    pub metrics: &'a Metrics,
    /// Labels for `namespaceSelector` conditions.
    pub namespaces: &'a NamespaceLabels,
    /// Refuse stores that are not Ready (`--enable-flood-gate`).
    pub flood_gate: bool,
    /// Reads shared across ExternalSecrets.
    pub shared: &'a SharedReads,
    /// Where generator objects are found.
    pub generators: &'a dyn GeneratorSource,
}

/// A failed read: the error, and upstream's message of the step that failed (none for store
/// checks, whose errors speak for themselves).
pub type ReadFailure = (Error, Option<&'static str>);

impl Reader<'_> {
    /// Checks the stores `es` uses and reads its data.
    pub async fn read(&self, es: &ExternalSecret) -> Result<Fetched, ReadFailure> {
        let references = store_references(es);
        let stores = self
            .check_stores(es, &references)
            .await
            .map_err(|error| (error, None))?;
        let default_ref = es.spec.secret_store_ref.clone();
        let resolve = move |reference: Option<&SecretStoreRef>| -> Result<FoundStore, Error> {
            let reference = reference.or(default_ref.as_ref()).ok_or_else(|| {
                Error::InvalidSpec(
                    "spec.secretStoreRef: required unless every entry names its sourceRef".into(),
                )
            })?;
            let (kind, name) = kind_and_name(reference);
            stores
                .get(&(kind, name.to_owned()))
                .cloned()
                .ok_or_else(|| Error::StoreNotFound(format!("{kind:?} {name:?}")))
        };
        let fetcher = Fetcher {
            clients: self.clients,
            metrics: self.metrics,
            shared: self.shared,
            es,
            resolve: &resolve,
            generators: self.generators,
        };
        fetcher
            .fetch()
            .await
            .map_err(|error| (error, Some(status::MESSAGE_GET_DATA_FAILED)))
    }

    /// Finds every referenced store and checks it may be used from this namespace now.
    async fn check_stores(
        &self,
        es: &ExternalSecret,
        references: &[SecretStoreRef],
    ) -> Result<HashMap<(SecretStoreRefKind, String), FoundStore>, Error> {
        let namespace = es.namespace().unwrap_or_default();
        let mut checked = HashMap::new();
        for reference in references {
            let store = self.stores.find(reference, &namespace)?;
            if let FoundStore::Cluster(cluster) = &store
                && !cluster_store_admits(cluster, &namespace, self.namespaces).await?
            {
                return Err(Error::StoreNotAllowed {
                    store: cluster.name_any(),
                    namespace,
                });
            }
            if self.flood_gate && !store.usable() {
                return Err(Error::StoreNotReady(store.describe()));
            }
            if store.status_capabilities() == Some("WriteOnly") {
                return Err(Error::StoreWriteOnly(store.describe()));
            }
            let (kind, name) = kind_and_name(reference);
            checked.insert((kind, name.to_owned()), store);
        }
        Ok(checked)
    }
}

/// The distinct stores an ExternalSecret reads from: its default and every entry's own.
pub fn store_references(es: &ExternalSecret) -> Vec<SecretStoreRef> {
    let entries = es
        .spec
        .data
        .iter()
        .filter_map(|d| d.source_ref.as_ref()?.store_ref.clone());
    let from = es
        .spec
        .data_from
        .iter()
        .filter_map(|d| d.source_ref.as_ref()?.store_ref.clone());
    let mut references: Vec<SecretStoreRef> = es.spec.secret_store_ref.iter().cloned().collect();
    for reference in entries.chain(from) {
        if !references.contains(&reference) {
            references.push(reference);
        }
    }
    references
}
