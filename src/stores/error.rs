//! Why a store cannot be used: each variant names the store (or the reference) at fault, has a
//! bounded reason for conditions and metrics, and says whether waiting helps.

use external_secrets_crds::v1::SecretStoreRefKind;

/// Why resolving or admitting a store failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The reference names no store (`spec.secretStoreRef.name` is empty).
    #[error("spec.secretStoreRef.name: a store name is required")]
    MissingName,
    /// The referenced store does not exist (yet).
    #[error("could not get {kind:?} {name:?}: not found")]
    NotFound {
        /// SecretStore or ClusterSecretStore.
        kind: SecretStoreRefKind,
        /// The store's name.
        name: String,
    },
    /// A ClusterSecretStore condition's `namespaceRegexes` entry does not compile.
    #[error("spec.conditions.namespaceRegexes: invalid regular expression {pattern:?}: {message}")]
    InvalidCondition {
        /// The pattern as written.
        pattern: String,
        /// Why it does not compile.
        message: String,
    },
    /// The labels of the namespace could not be read for a `namespaceSelector` condition.
    #[error("kubernetes API: {0}")]
    NamespaceLabels(#[source] kube::Error),
    /// A ClusterSecretStore's `spec.conditions` exclude the namespace.
    #[error(
        "using cluster store {store:?} is not allowed from namespace {namespace:?}: denied by spec.condition"
    )]
    NotAllowed {
        /// The ClusterSecretStore.
        store: String,
        /// The namespace of the object using it.
        namespace: String,
    },
    /// The store exists but is not Ready (upstream's flood gate, `errSecretStoreNotReady`);
    /// `0` is `kind "name"`.
    #[error("{0} is not ready")]
    NotReady(String),
    /// The store only accepts writes; `0` is `kind "name"`.
    #[error("{0} is write-only: ExternalSecrets cannot read from it")]
    WriteOnly(String),
}

impl Error {
    /// A bounded PascalCase reason for logs and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::MissingName => "StoreNameMissing",
            Error::NotFound { .. } => "StoreNotFound",
            Error::InvalidCondition { .. } => "InvalidStoreCondition",
            Error::NamespaceLabels(_) => "NamespaceLookupFailed",
            Error::NotAllowed { .. } => "StoreNotAllowed",
            Error::NotReady(_) => "StoreNotReady",
            Error::WriteOnly(_) => "StoreWriteOnly",
        }
    }

    /// Whether waiting (with backoff) may help: a store may appear or become Ready, the API
    /// may answer; a bad reference, condition or a write-only store waits for a change.
    pub fn is_temporary(&self) -> bool {
        match self {
            Error::MissingName
            | Error::InvalidCondition { .. }
            | Error::NotAllowed { .. }
            | Error::WriteOnly(_) => false,
            Error::NotFound { .. } | Error::NamespaceLabels(_) | Error::NotReady(_) => true,
        }
    }
}
