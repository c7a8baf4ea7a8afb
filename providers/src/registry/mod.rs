//! From a SecretStore or ClusterSecretStore to a client of its backend.
//!
//! [`Backend::of`] (in [`backend`]) is the one exhaustive `match` over `spec.provider`;
//! everything else dispatches through [`crate::provider::Provider`]. There is no global
//! registration: a [`Registry`] value owns what backends keep between clients
//! ([`BackendStates`]) and the [`SecretSource`] used to read referenced Secrets.

mod backend;

pub use backend::Backend;

use std::sync::Arc;

use external_secrets_crds::v1::{ClusterSecretStore, SecretStore, SecretStoreSpec};

use crate::client::SharedClient;
use crate::credentials::{CredentialResolver, OperatorIdentity, SecretSource};
use crate::error::Result;
use crate::provider::{BackendStates, ClientContext};
use crate::store::{StoreId, StoreKind};

/// A store as the provider layer sees it: identity, spec and version.
#[derive(Debug, Clone)]
pub struct StoreRef<'a> {
    /// Kind, namespace and name.
    pub id: StoreId,
    /// The spec.
    pub spec: &'a SecretStoreSpec,
    /// Changes whenever the spec does (uid and generation): keys the client cache.
    pub version: String,
}

impl<'a> From<&'a SecretStore> for StoreRef<'a> {
    fn from(store: &'a SecretStore) -> Self {
        let metadata = &store.metadata;
        Self {
            id: StoreId::secret_store(
                metadata.namespace.clone().unwrap_or_default(),
                metadata.name.clone().unwrap_or_default(),
            ),
            spec: &store.spec,
            version: version_of(metadata),
        }
    }
}

impl<'a> From<&'a ClusterSecretStore> for StoreRef<'a> {
    fn from(store: &'a ClusterSecretStore) -> Self {
        let metadata = &store.metadata;
        Self {
            id: StoreId::cluster_secret_store(metadata.name.clone().unwrap_or_default()),
            spec: &store.spec.0,
            version: version_of(metadata),
        }
    }
}

fn version_of(metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        metadata.uid.as_deref().unwrap_or_default(),
        metadata.generation.unwrap_or_default()
    )
}

/// Builds backend clients; owns the state backends share between clients.
pub struct Registry {
    source: Arc<dyn SecretSource>,
    states: BackendStates,
    operator_identity: OperatorIdentity,
}

impl Registry {
    /// A registry reading referenced Secrets through `source`.
    pub fn new(source: Arc<dyn SecretSource>) -> Self {
        Self {
            source,
            states: BackendStates::default(),
            operator_identity: OperatorIdentity::default(),
        }
    }

    /// The same registry, its clients' credentials under `policy`.
    pub fn with_operator_identity(mut self, policy: OperatorIdentity) -> Self {
        self.operator_identity = policy;
        self
    }

    /// The policy its clients' credentials are under (generators follow it too).
    pub fn operator_identity(&self) -> OperatorIdentity {
        self.operator_identity
    }

    /// Checks a store statically: one backend, available in this build, valid configuration.
    pub fn validate_store<'a>(&self, store: &StoreRef<'a>) -> Result<Backend<'a>> {
        let backend = Backend::of(&store.spec.provider)?;
        backend.validate(&store.id)?;
        Ok(backend)
    }

    /// A new client of `store`, acting for an object in `caller_namespace` (`None` when the
    /// store itself is being validated). Not rate limited nor cached: see `ClientManager`.
    pub async fn new_client(
        &self,
        store: &StoreRef<'_>,
        caller_namespace: Option<&str>,
    ) -> Result<SharedClient> {
        let backend = Backend::of(&store.spec.provider)?;
        let caller_namespace = match store.id.kind {
            StoreKind::SecretStore => store.id.namespace.clone(),
            StoreKind::ClusterSecretStore => caller_namespace.map(str::to_owned),
        };
        let credentials =
            CredentialResolver::new(self.source.clone(), store.id.clone(), caller_namespace)
                .with_operator_identity(self.operator_identity);
        backend
            .new_client(ClientContext {
                store: &store.id,
                credentials,
                states: &self.states,
            })
            .await
    }

    /// Sets what a backend keeps between clients before any client is built (startup
    /// configuration of a backend, such as Doppler's download cache size).
    pub fn configure<State: crate::provider::BackendState>(&self, state: State) {
        self.states.insert(state);
    }

    /// Forgets what backends kept for a deleted store.
    pub fn remove_store(&self, store: &StoreId) {
        self.states.remove_store(store);
    }
}

#[cfg(test)]
mod tests;
