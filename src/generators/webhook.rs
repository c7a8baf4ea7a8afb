//! The `Webhook` generator: one HTTP request whose JSON answer is the generated data; the
//! webhook provider's client does the work (see `external_secrets_providers::backends::webhook::generate`
//! for the spec and the label its Secrets need).

use async_trait::async_trait;
use external_secrets_crds::generators::{Webhook, WebhookSpec};
use external_secrets_providers::credentials::CredentialResolver;

use super::{Error, Generated, Generator, provided};

/// Calls webhooks.
pub struct WebhookGenerator;

#[async_trait]
impl Generator for WebhookGenerator {
    type Object = Webhook;
    type Spec = WebhookSpec;
    const CLUSTER_FIELD: &'static str = "webhookSpec";

    /// Sends the request `spec` describes, reading the Secrets its `secrets` name through
    /// `credentials`.
    async fn generate(
        &self,
        spec: WebhookSpec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        provided(external_secrets_providers::backends::webhook::generate(&spec, credentials).await)
    }
}
