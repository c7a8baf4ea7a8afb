//! Why syncing an ExternalSecret failed, classified for the status condition and the error
//! policy. Messages name the field or object at fault and never carry secret values.

use external_secrets_providers::ProviderError;

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is unusable as written; waits for a change.
    #[error("{0}")]
    InvalidSpec(String),
    /// The referenced store does not exist (yet).
    #[error("could not get {0}: not found")]
    StoreNotFound(String),
    /// The referenced store exists but is not Ready (upstream's flood gate).
    #[error("the desired {0} is not ready")]
    StoreNotReady(String),
    /// A ClusterSecretStore's `spec.conditions` exclude the ExternalSecret's namespace.
    #[error(
        "using cluster store {store:?} is not allowed from namespace {namespace:?}: denied by spec.condition"
    )]
    StoreNotAllowed {
        /// The ClusterSecretStore.
        store: String,
        /// The ExternalSecret's namespace.
        namespace: String,
    },
    /// The store only accepts writes.
    #[error("{0} is write-only: ExternalSecrets cannot read from it")]
    StoreWriteOnly(String),
    /// The provider failed; `what` names the entry.
    #[error("{what}: {source}")]
    Provider {
        /// Which entry, e.g. `spec.data[0]`.
        what: String,
        /// The provider's error (never carries secret values).
        source: ProviderError,
    },
    /// A generator could not generate (its object missing, its spec unusable); retried.
    #[error("{0}")]
    Generator(String),
    /// A ConfigMap or Secret a `templateFrom` entry names cannot be read (yet); retried.
    #[error("could not execute template: {0}")]
    TemplateSource(String),
    /// Reading from or writing to the Kubernetes API failed.
    #[error("kubernetes API: {0}")]
    Kube(#[source] kube::Error),
}

impl Error {
    /// Whether retrying with backoff may help; permanent errors wait for a change.
    pub fn is_temporary(&self) -> bool {
        match self {
            Error::InvalidSpec(_) | Error::StoreNotAllowed { .. } | Error::StoreWriteOnly(_) => {
                false
            }
            Error::Provider { source, .. } => source.is_temporary(),
            Error::StoreNotFound(_)
            | Error::StoreNotReady(_)
            | Error::TemplateSource(_)
            | Error::Generator(_)
            | Error::Kube(_) => true,
        }
    }
}
