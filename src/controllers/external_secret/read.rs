//! From an ExternalSecret to its data: find every store it references, check each may be used
//! from the ExternalSecret's namespace, then fetch. Shared by the controller and `render`, so
//! both fail with the same messages.

use std::collections::HashMap;

use external_secrets_crds::v1::{ExternalSecret, SecretStoreRef, SecretStoreRefKind};
use external_secrets_providers::ClientManager;
use kube::ResourceExt;

use super::error::Error;
use super::fetch::{Fetched, Fetcher, SharedReads};
use super::status;
use crate::generators::GeneratorSource;
use crate::metrics::Metrics;
use crate::stores::{FoundStore, NamespaceLabels, Stores, kind_and_name};

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
            let reference = reference
                .or(default_ref.as_ref())
                .ok_or(Error::MissingStoreRef)?;
            let (kind, name) = kind_and_name(reference);
            let found = stores.get(&(kind, name.to_owned())).cloned();
            found.ok_or_else(|| {
                Error::Store(crate::stores::Error::NotFound {
                    kind,
                    name: name.to_owned(),
                })
            })
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
            let store = self
                .stores
                .find_readable(reference, &namespace, self.namespaces, self.flood_gate)
                .await?;
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
