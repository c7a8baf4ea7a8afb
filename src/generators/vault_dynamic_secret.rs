//! The `VaultDynamicSecret` generator: one call to a Vault (or OpenBao) path, authenticated as
//! `spec.provider` says; the provider's vault client does the work (see
//! `external_secrets_providers::backends::vault::generate_dynamic_secret` for the call and the result
//! types).

use external_secrets_crds::generators::VaultDynamicSecretSpec;
use external_secrets_providers::credentials::CredentialResolver;

use super::Generated;

/// Makes the call `spec` describes, reading the Secrets its `provider.auth` names through
/// `credentials`.
pub async fn generate(
    spec: &VaultDynamicSecretSpec,
    credentials: CredentialResolver,
) -> Result<Generated, String> {
    if spec.path.is_empty() {
        return Err("path: must name the Vault path to call".to_owned());
    }
    super::provided(
        external_secrets_providers::backends::vault::generate_dynamic_secret(spec, credentials)
            .await,
    )
}
