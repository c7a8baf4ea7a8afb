//! The `Webhook` generator: one request of the webhook provider, read as a map, as upstream's
//! `webhook` generator (which runs the provider's `GetSecretMap`).
//!
//! The spec is the provider's (`url`, `method`, `headers`, `body`, `timeout`, `result.jsonPath`,
//! `secrets`, `caBundle`/`caProvider`); referenced Secrets must carry the label
//! `external-secrets.io/type: webhook`, as the provider requires, and resolve in the namespace
//! of the object using the generator. The (selected) response must be a JSON object; its
//! members are the generated keys.
//!
//! Difference from upstream: templates see `.remoteRef` with empty members (upstream: no
//! `.remoteRef` at all, which prints `<no value>`).

use external_secrets_crds::generators::WebhookSpec;
use external_secrets_crds::v1::WebhookProvider;

use super::WebhookClient;
use crate::client::SecretsClient as _;
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::request::RemoteRef;
use crate::value::SecretMap;

/// Sends the request `spec` describes (Secrets read through `credentials`) and returns the
/// members of the JSON object it answers.
pub async fn generate(spec: &WebhookSpec, credentials: CredentialResolver) -> Result<SecretMap> {
    // The generator's spec is the provider's, field for field.
    let provider: WebhookProvider = serde_json::to_value(spec)
        .and_then(serde_json::from_value)
        .map_err(|error| {
            ProviderError::invalid_config(format!("failed to parse provider spec: {error}"))
        })?;
    WebhookClient::new(&provider, credentials)
        .await?
        .get_secret_map(&RemoteRef::new(""))
        .await
}
