//! The `VaultDynamicSecret` generator: one call to a Vault (or OpenBao) path, authenticated as
//! `spec.provider` says; the provider's vault client does the work (see
//! `external_secrets_providers::backends::vault::generate_dynamic_secret` for the call and the result
//! types).

use async_trait::async_trait;
use external_secrets_crds::generators::{VaultDynamicSecret, VaultDynamicSecretSpec};
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator, provided};

/// Calls Vault paths that mint secrets.
pub struct VaultDynamicSecretGenerator;

#[async_trait]
impl Generator for VaultDynamicSecretGenerator {
    type Object = VaultDynamicSecret;
    type Spec = VaultDynamicSecretSpec;
    const CLUSTER_FIELD: &'static str = "vaultDynamicSecretSpec";

    /// Makes the call `spec` describes, reading the Secrets its `provider.auth` names through
    /// `credentials`.
    async fn generate(
        &self,
        spec: VaultDynamicSecretSpec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        if spec.path.is_empty() {
            return Err(Error::VaultPathRequired);
        }
        provided(
            external_secrets_providers::backends::vault::generate_dynamic_secret(
                &spec,
                credentials,
            )
            .await,
        )
    }
}
