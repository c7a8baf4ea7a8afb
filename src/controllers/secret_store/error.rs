//! Errors of the store reconciler, classified for the error policy.

use external_secrets_providers::{ProviderError, StoreId};

/// Why reconciling a store failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The provider client could not be built (upstream's "could not get provider client").
    #[error("could not get provider client for {store}: {source}")]
    Client {
        /// The store.
        store: StoreId,
        /// The provider's error (never carries secret values).
        source: ProviderError,
    },
    /// The provider rejected the validation call (upstream's "could not validate provider").
    #[error("could not validate provider of {store}: {source}")]
    Validation {
        /// The store.
        store: StoreId,
        /// The provider's error.
        source: ProviderError,
    },
    /// Writing the status failed (upstream's "unable to patch status").
    #[error("unable to patch status of {store}: {source}")]
    PatchStatus {
        /// The store.
        store: StoreId,
        /// The API error.
        source: kube::Error,
    },
    /// Adding or removing the finalizer PushSecrets rely on failed.
    #[error("unable to update the finalizer of {store}: {source}")]
    Finalizer {
        /// The store.
        store: StoreId,
        /// The API error.
        source: kube::Error,
    },
    /// The reconcile ran past its deadline.
    #[error(transparent)]
    Deadline(#[from] crate::controllers::deadline::DeadlineExceeded),
}

impl Error {
    /// A bounded PascalCase reason for logs and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Client { .. } => "InvalidProviderConfig",
            Error::Validation { .. } => "ValidationFailed",
            Error::PatchStatus { .. } => "PatchStatusFailed",
            Error::Finalizer { .. } => "FinalizerFailed",
            Error::Deadline(_) => "ReconcileDeadlineExceeded",
        }
    }

    /// Whether retrying with backoff may help; permanent errors wait for a change of the store.
    /// A client that cannot be built from the store is as temporary as its cause says; a
    /// validation call the provider refused is always retried, since the provider's answer (a
    /// 401 or 403 while a token is revoked, an outage reported as a bad answer) changes without
    /// the store changing, and the store must not stay not-Ready after the provider recovered.
    pub fn is_temporary(&self) -> bool {
        match self {
            Error::Client { source, .. } => source.is_temporary(),
            Error::Validation { .. }
            | Error::PatchStatus { .. }
            | Error::Finalizer { .. }
            | Error::Deadline(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_providers::ErrorKind;

    #[test]
    fn refused_validations_are_retried_and_unbuildable_clients_wait() {
        let store = StoreId::secret_store("default", "store");
        let denied = ProviderError::new(ErrorKind::PermissionDenied, "permission denied");
        let validation = Error::Validation {
            store: store.clone(),
            source: denied,
        };
        assert!(validation.is_temporary());
        let client = Error::Client {
            store,
            source: ProviderError::invalid_config("unsupported"),
        };
        assert!(!client.is_temporary());
    }
}
