//! Why syncing an ExternalSecret failed, classified for the status condition and the error
//! policy. Messages name the field or object at fault and never carry secret values.

use external_secrets_providers::ProviderError;

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The spec is unusable as written; waits for a change.
    #[error("{0}")]
    InvalidSpec(String),
    /// A store cannot be used: missing, not Ready, not allowed from the namespace, write-only.
    #[error(transparent)]
    Store(#[from] crate::stores::Error),
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
    /// A bounded PascalCase reason for logs and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::InvalidSpec(_) => "InvalidSpec",
            Error::Store(error) => error.reason(),
            Error::Provider { source, .. } => source.reason(),
            Error::Generator(_) => "GeneratorFailed",
            Error::TemplateSource(_) => "TemplateSourceUnavailable",
            Error::Kube(_) => "KubernetesAPIError",
        }
    }

    /// Whether retrying with backoff may help; permanent errors wait for a change.
    pub fn is_temporary(&self) -> bool {
        match self {
            Error::InvalidSpec(_) => false,
            Error::Store(error) => error.is_temporary(),
            Error::Provider { source, .. } => source.is_temporary(),
            Error::TemplateSource(_) | Error::Generator(_) | Error::Kube(_) => true,
        }
    }
}
