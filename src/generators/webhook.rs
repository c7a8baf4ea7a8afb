//! The `Webhook` generator: one HTTP request whose JSON answer is the generated data; the
//! webhook provider's client does the work (see `external_secrets_providers::backends::webhook::generate`
//! for the spec and the label its Secrets need).

use external_secrets_crds::generators::WebhookSpec;
use external_secrets_providers::credentials::CredentialResolver;

use super::Generated;

/// Sends the request `spec` describes, reading the Secrets its `secrets` name through
/// `credentials`.
pub async fn generate(
    spec: &WebhookSpec,
    credentials: CredentialResolver,
) -> Result<Generated, String> {
    super::provided(
        external_secrets_providers::backends::webhook::generate(spec, credentials).await,
    )
}
