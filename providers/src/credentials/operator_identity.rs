//! Whether a namespaced `SecretStore` may authenticate as the operator itself: the
//! ServiceAccount token mounted in its pod (Vault Kubernetes auth without a `serviceAccountRef`
//! or `secretRef`), or its pod's cloud identity (the AWS default credentials chain). Upstream
//! allows both, so a tenant who may create SecretStores in one namespace acts with whatever
//! rights the operator's identity was given, in every namespace. `--deny-operator-identity`
//! (chart value `denyOperatorIdentity`) refuses that fallback for SecretStores; a
//! ClusterSecretStore is configured by the cluster's administrator and keeps it.

use super::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::store::StoreKind;

/// Who may authenticate as the operator's own identity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OperatorIdentity {
    /// Every store, as upstream.
    #[default]
    Allowed,
    /// ClusterSecretStores only: a SecretStore must name its credentials.
    DeniedToSecretStores,
}

impl CredentialResolver {
    /// The same resolver under `policy`.
    pub fn with_operator_identity(mut self, policy: OperatorIdentity) -> Self {
        self.operator_identity = policy;
        self
    }

    /// Called by a backend before it falls back to the operator's own identity for `method`
    /// (upstream's name of the auth method, for the message): refused for a SecretStore when the
    /// policy denies it, as a configuration error that waits for the store to name credentials.
    pub fn use_operator_identity(&self, method: &str) -> Result<()> {
        match (self.operator_identity, self.store().kind) {
            (OperatorIdentity::DeniedToSecretStores, StoreKind::SecretStore) => {
                Err(ProviderError::invalid_config(format!(
                    "{method}: a SecretStore may not authenticate as the operator's own identity \
                     (--deny-operator-identity); reference credentials in the store"
                )))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::credentials::MemorySecretSource;
    use crate::error::ErrorKind;
    use crate::store::StoreId;

    fn resolver(kind: StoreKind, policy: OperatorIdentity) -> CredentialResolver {
        let namespace = (kind == StoreKind::SecretStore).then(|| "team".to_owned());
        let store = StoreId {
            kind,
            namespace,
            name: "store".into(),
        };
        CredentialResolver::new(Arc::new(MemorySecretSource::default()), store, None)
            .with_operator_identity(policy)
    }

    #[test]
    fn upstream_default_allows_every_store() {
        for kind in [StoreKind::SecretStore, StoreKind::ClusterSecretStore] {
            let credentials = resolver(kind, OperatorIdentity::default());
            assert!(credentials.use_operator_identity("kubernetes auth").is_ok());
        }
    }

    #[test]
    fn denial_refuses_secret_stores_only() {
        let denied = resolver(
            StoreKind::SecretStore,
            OperatorIdentity::DeniedToSecretStores,
        );
        let error = denied.use_operator_identity("kubernetes auth").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
        assert!(
            error
                .message()
                .starts_with("kubernetes auth: a SecretStore may not")
        );
        let cluster = resolver(
            StoreKind::ClusterSecretStore,
            OperatorIdentity::DeniedToSecretStores,
        );
        assert!(cluster.use_operator_identity("kubernetes auth").is_ok());
    }
}
