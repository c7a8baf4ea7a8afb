//! Why syncing an ExternalSecret failed, classified for the status condition and the error
//! policy. Every variant names the field, entry or object at fault and never carries secret
//! values; the message is the status condition's (upstream's wording).

use external_secrets_crds::v1::ExternalSecretCreationPolicy;
use external_secrets_providers::ProviderError;

use external_secrets_providers::duration::DurationError;
use external_secrets_providers::request::{ConversionStrategy, DecodingStrategy};

use super::generic::GenericError;
use super::target::RenderError;
use crate::controllers::rewrite::{MergeError, RewriteError};
use crate::controllers::template::DecodeError;

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `spec.refreshInterval` is not a duration.
    #[error("spec.refreshInterval: {0}")]
    RefreshInterval(#[source] DurationError),
    /// No `spec.secretStoreRef` for an entry that names no store of its own.
    #[error("spec.secretStoreRef: required unless every entry names its sourceRef")]
    MissingStoreRef,
    /// A `spec.dataFrom` entry sets none or several of its sources.
    #[error(
        "spec.dataFrom[{index}]: exactly one of extract, find or sourceRef.generatorRef must be set"
    )]
    DataFromSource {
        /// The entry's index.
        index: usize,
    },
    /// What an entry read cannot be used as written (keys, decoding, conversion, merges);
    /// `what` names the entry or field, `problem` says why.
    #[error("{what}: {problem}")]
    InvalidEntry {
        /// E.g. `spec.dataFrom[0].rewrite[1]`.
        what: String,
        /// Why.
        problem: EntryProblem,
    },
    /// A `rewrite` rule is unusable (the message names its field).
    #[error(transparent)]
    Rewrite(#[from] RewriteError),
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
    #[error("{field}.sourceRef.generatorRef: {source}")]
    Generator {
        /// The `spec.dataFrom` entry.
        field: String,
        /// The generator's error.
        source: crate::generators::Error,
    },
    /// A ConfigMap or Secret a `templateFrom` entry names cannot be read (yet); retried.
    #[error("could not execute template: {0}")]
    TemplateSource(#[source] crate::controllers::template::SourcesError),
    /// The target Secret could not be built (template, metadata).
    #[error(transparent)]
    Target(#[from] RenderError),
    /// A generic target (`spec.target.manifest`) is not allowed or cannot be built.
    #[error(transparent)]
    GenericTarget(#[from] GenericError),
    /// `deletionPolicy: Delete` with nothing to sync needs `creationPolicy: Owner`; `what`
    /// names the target.
    #[error("unable to delete {what}: creationPolicy={policy:?} is not Owner")]
    DeleteNotOwner {
        /// `secret <name>` or `resource`.
        what: String,
        /// The creation policy in the spec.
        policy: ExternalSecretCreationPolicy,
    },
    /// The target Secret belongs to another ExternalSecret.
    #[error(
        "target is owned by another ExternalSecret: secret is owned by another ExternalSecret: {0}"
    )]
    OwnedByAnother(String),
    /// The target Secret is immutable and differs.
    #[error("could not update secret, target is immutable")]
    ImmutableTarget,
    /// The target could not be encoded for the API.
    #[error("{0}")]
    Encode(#[source] serde_json::Error),
    /// The ExternalSecret as the watch cache holds it did not decode (never expected: the
    /// cache encoded it).
    #[error("cached object: {0}")]
    Decode(#[source] serde_json::Error),
    /// Reading from or writing to the Kubernetes API failed.
    #[error("kubernetes API: {0}")]
    Kube(#[source] kube::Error),
    /// The reconcile ran past its deadline.
    #[error(transparent)]
    Deadline(#[from] crate::controllers::deadline::DeadlineExceeded),
}

/// Why what an entry read cannot be used as written (keys and values are named by key only).
#[derive(Debug, thiserror::Error)]
pub enum EntryProblem {
    /// `conversionStrategy` could not convert the keys.
    #[error("error applying conversion strategy {strategy:?} to keys: {source}")]
    Conversion {
        /// The strategy.
        strategy: ConversionStrategy,
        /// Why.
        source: ProviderError,
    },
    /// `decodingStrategy` could not decode a value.
    #[error("error applying decoding strategy {strategy:?} to data: {source}")]
    Decoding {
        /// The strategy.
        strategy: DecodingStrategy,
        /// Why.
        source: DecodeError,
    },
    /// A key is not a valid Secret key.
    #[error(
        "invalid secret keys (TIP: use rewrite or conversionStrategy to change keys): key {0:?}"
    )]
    InvalidKey(String),
    /// A value holds null bytes under `nullBytePolicy: Fail`.
    #[error(
        "fetched secret value for key {0:?} contains null bytes; use a text-safe format such as PEM/base64 or leave nullBytePolicy unset for intentional binary data"
    )]
    NullBytes(String),
    /// A `merge` rewrite failed.
    #[error(transparent)]
    Merge(#[from] MergeError),
}

impl Error {
    /// A bounded PascalCase reason for logs and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::RefreshInterval(_) => "InvalidRefreshInterval",
            Error::MissingStoreRef => "MissingStoreRef",
            Error::DataFromSource { .. } => "InvalidDataFrom",
            Error::InvalidEntry { .. } => "InvalidEntry",
            Error::Rewrite(_) => "InvalidRewrite",
            Error::Store(error) => error.reason(),
            Error::Provider { source, .. } => source.reason(),
            Error::Generator { source, .. } => source.reason(),
            Error::TemplateSource(_) => "TemplateSourceUnavailable",
            Error::Target(_) => "InvalidTarget",
            Error::GenericTarget(_) => "InvalidGenericTarget",
            Error::DeleteNotOwner { .. } => "DeleteNotOwner",
            Error::OwnedByAnother(_) => "OwnedByAnotherExternalSecret",
            Error::ImmutableTarget => "ImmutableTarget",
            Error::Encode(_) => "EncodeFailed",
            Error::Decode(_) => "DecodeFailed",
            Error::Kube(_) => "KubernetesAPIError",
            Error::Deadline(_) => "ReconcileDeadlineExceeded",
        }
    }

    /// Whether retrying with backoff may help; permanent errors wait for a change. Every
    /// provider error backs off, whatever its kind: a provider's answer (a revoked token, a
    /// 403, a garbled body) changes without any object changing, so waiting for a change
    /// would leave the ExternalSecret failed after the provider recovered (upstream requeues
    /// every error with controller-runtime's backoff).
    pub fn is_temporary(&self) -> bool {
        match self {
            Error::RefreshInterval(_)
            | Error::MissingStoreRef
            | Error::DataFromSource { .. }
            | Error::InvalidEntry { .. }
            | Error::Rewrite(_)
            | Error::Target(_)
            | Error::GenericTarget(_)
            | Error::DeleteNotOwner { .. }
            | Error::OwnedByAnother(_)
            | Error::ImmutableTarget
            | Error::Encode(_)
            | Error::Decode(_) => false,
            Error::Store(error) => error.is_temporary(),
            Error::Provider { .. }
            | Error::TemplateSource(_)
            | Error::Generator { .. }
            | Error::Kube(_)
            | Error::Deadline(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_providers::ErrorKind;

    /// A provider that refused (401/403), answered garbage or said "no such request" today
    /// may answer tomorrow without the ExternalSecret changing: every kind backs off.
    #[test]
    fn provider_errors_of_every_kind_back_off() {
        for kind in [
            ErrorKind::PermissionDenied,
            ErrorKind::InvalidData,
            ErrorKind::InvalidConfig,
            ErrorKind::InvalidRequest,
            ErrorKind::NotFound,
            ErrorKind::Unavailable,
        ] {
            let error = Error::Provider {
                what: "spec.data[0]".into(),
                source: ProviderError::new(kind, "refused"),
            };
            assert!(error.is_temporary(), "{kind}");
        }
        assert!(!Error::MissingStoreRef.is_temporary());
    }
}
