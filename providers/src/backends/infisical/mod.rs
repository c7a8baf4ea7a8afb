//! The `infisical` provider: secrets of an Infisical project environment, over Infisical's
//! REST API as upstream's `providers/v1/infisical` (through `infisical/go-sdk`) calls it.
//!
//! * `secretsScope` names the project and environment by slug and the default folder
//!   (`secretsPath`, default `/`); a key containing `/` names its folder (absolute, or below the
//!   default folder) and ends with the secret's name. Reads include imported secrets and expand
//!   references when `expandSecretReferences` (default true) says so.
//! * `property` selects a member of a JSON value (gjson paths); `dataFrom.extract` returns the
//!   members of a JSON object. `remoteRef.version` is ignored, as upstream.
//! * `dataFrom.find` lists the default folder (and below it when `recursive`), imports
//!   included, filtered by `find.name` on the secret name and by `find.path` as a prefix of
//!   the secret's folder; `find.tags` is refused ("find by tags not supported").
//! * PushSecret writes the whole value, or with `property` sets that member of the JSON value
//!   (creating `{}`), creating or updating the secret (the write needs the project id, looked
//!   up by slug and kept by the client); an unchanged value is not written. Delete removes the
//!   member (the secret when no member is left) or the secret.
//! * Auth: see [`auth`]. The access token is renewed before it expires and revoked when the
//!   client is closed (not with token auth).
//! * `validate` lists the scope's secrets.
//!
//! Differences from upstream: azure, GCP, AWS and OCI auth are refused (see [`auth`]); the
//! project-id cache is per client rather than process-wide.

mod api;
mod auth;
mod client;
mod document;
mod error;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::InfisicalProvider;

use self::client::{InfisicalClient, Settings};
use crate::client::SharedClient;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::{StoreId, StoreKind};

/// The `infisical` backend.
#[derive(Debug, Clone, Copy)]
pub struct Infisical;

#[async_trait]
impl Provider for Infisical {
    type Spec = InfisicalProvider;
    const NAME: &'static str = "infisical";

    fn validate_store(&self, spec: &InfisicalProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &InfisicalProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let ca = crate::ca::ca_bundle(
            spec.ca_bundle.as_ref(),
            spec.ca_provider.as_ref(),
            &context.credentials,
        )
        .await
        .map_err(|error| error.context("failed to get CA certificate"))?;
        // An empty hostAPI means Infisical Cloud, as the SDK's default site URL.
        let host = match spec.host_api.as_str() {
            "" => "https://app.infisical.com",
            host => host,
        };
        let api = api::Api::new(host, ca.as_deref())?;
        let login = auth::login(spec, &context.credentials).await?;
        let scope = &spec.secrets_scope;
        let path = if scope.secrets_path.is_empty() {
            "/".to_owned()
        } else {
            scope.secrets_path.clone()
        };
        let settings = Settings {
            project: scope.project_slug.clone(),
            environment: scope.environment_slug.clone(),
            path,
            recursive: scope.recursive,
            expand: scope.expand_secret_references,
            organization: scope.organization_slug.clone(),
        };
        Ok(Arc::new(
            InfisicalClient::connect(api, login, settings).await?,
        ))
    }
}

/// Upstream's `ValidateStore`: scope, `caProvider` namespace, universal-auth selectors.
fn validate_store(spec: &InfisicalProvider, store: &StoreId) -> std::result::Result<(), String> {
    let scope = &spec.secrets_scope;
    if scope.environment_slug.is_empty() || scope.project_slug.is_empty() {
        return Err(
            "secretsScope.projectSlug and secretsScope.environmentSlug cannot be empty".into(),
        );
    }
    if let Some(provider) = &spec.ca_provider {
        match (store.kind, &provider.namespace) {
            (StoreKind::ClusterSecretStore, None) => {
                return Err("caProvider.namespace is required for ClusterSecretStore".into());
            }
            (StoreKind::SecretStore, Some(_)) => {
                return Err("caProvider.namespace must be empty with SecretStore".into());
            }
            _ => {}
        }
    }
    if let Some(universal) = &spec.auth.universal_auth_credentials {
        referent_namespace(&universal.client_id, store)?;
        referent_namespace(&universal.client_secret, store)?;
        let empty =
            |selector: &SecretKeySelector| selector.key.as_deref().unwrap_or_default().is_empty();
        if empty(&universal.client_id) || empty(&universal.client_secret) {
            return Err("universalAuthCredentials.clientId and universalAuthCredentials.clientSecret cannot be empty".into());
        }
    }
    Ok(())
}

/// Upstream's `ValidateReferentSecretSelector`: a SecretStore may only name its own namespace.
fn referent_namespace(
    selector: &SecretKeySelector,
    store: &StoreId,
) -> std::result::Result<(), String> {
    match (store.kind, selector.namespace.as_deref()) {
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(
                "namespace should either be empty or match the namespace of the SecretStore for a \
             namespaced SecretStore"
                    .into(),
            )
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
