//! The `delinea` provider: secrets of a Delinea DevOps Secrets Vault (DSV) tenant, read over
//! its REST API with client credentials.
//!
//! Behaviour follows upstream's `providers/v1/delinea` (on `dsv-sdk-go`):
//!
//! * Stores are read-only; find, PushSecret and delete are not supported (upstream's
//!   messages), `remoteRef.version` is refused.
//! * A key is a secret path. Without `property` the value is the secret's `data` as JSON
//!   (compact, keys sorted, as Go encodes it; nothing for null data); `property` is a gjson
//!   path into it. `dataFrom.extract` returns the data's members (strings as they are, other
//!   values as JSON).
//! * `clientId` and `clientSecret` are each a `value` or a `secretRef`; a ClusterSecretStore's
//!   references must name their namespace.
//! * URLs come from `urlTemplate` (default `https://%s.secretsvaultcloud.%s/v1/%s%s`) with
//!   `tenant` and `tld` (default `com`).
//!
//! Differences from upstream: the token is kept per client until 90% of its lifetime (the SDK
//! keeps one per process in an environment variable, shared by every tenant); `validate`
//! fetches a token (upstream answers ready without a call); `secret_exists` says whether the
//! path holds a secret (upstream: "not implemented"); path segments are percent-encoded; a
//! `urlTemplate` without exactly four `%s` is refused when the client is built.

mod api;
mod client;
mod error;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::meta::ValueOrSecretRef;
use external_secrets_crds::v1::DelineaProvider;

use self::api::{Config, DEFAULT_TLD, DEFAULT_URL_TEMPLATE, Dsv};
use self::client::DelineaClient;
use crate::client::{Capabilities, SharedClient};
use crate::credentials::{CredentialResolver, check_value_or_ref};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::{StoreId, StoreKind};
use crate::value::SecretValue;

/// The `delinea` backend.
#[derive(Debug, Clone, Copy)]
pub struct Delinea;

#[async_trait]
impl Provider for Delinea {
    type Spec = DelineaProvider;
    const NAME: &'static str = "delinea";

    fn capabilities(&self, _spec: &DelineaProvider) -> Capabilities {
        Capabilities::ReadOnly
    }

    fn depends_on_caller(&self, _spec: &DelineaProvider) -> bool {
        // References of a ClusterSecretStore must name their namespace.
        false
    }

    fn validate_store(&self, spec: &DelineaProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &DelineaProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let depends_on_namespace = [&spec.client_id, &spec.client_secret].iter().any(|field| {
            field
                .secret_ref
                .as_ref()
                .is_some_and(|selector| selector.namespace.is_none())
        });
        if context.store.kind == StoreKind::ClusterSecretStore && depends_on_namespace {
            return Err(ProviderError::invalid_config(
                "when using a ClusterSecretStore, namespaces must be explicitly set",
            ));
        }
        let client_id = credential(&spec.client_id, &context.credentials).await?;
        let client_secret = credential(&spec.client_secret, &context.credentials).await?;
        let dsv = Dsv::new(Config {
            url_template: spec
                .url_template
                .clone()
                .filter(|template| !template.is_empty())
                .unwrap_or_else(|| DEFAULT_URL_TEMPLATE.to_owned()),
            tenant: spec.tenant.clone(),
            tld: spec
                .tld
                .clone()
                .filter(|tld| !tld.is_empty())
                .unwrap_or_else(|| DEFAULT_TLD.to_owned()),
            client_id,
            client_secret,
        })?;
        Ok(Arc::new(DelineaClient::new(dsv)))
    }
}

/// A credential given inline or by a Secret key.
async fn credential(
    field: &ValueOrSecretRef,
    credentials: &CredentialResolver,
) -> Result<SecretValue> {
    credentials
        .value_or_ref(field.value.as_deref(), field.secret_ref.as_ref())
        .await
}

/// Upstream's `getConfig` checks, returning its message.
fn validate_store(spec: &DelineaProvider, store: &StoreId) -> std::result::Result<(), String> {
    if spec.tenant.is_empty() {
        return Err("tenant must not be empty".into());
    }
    for field in [&spec.client_id, &spec.client_secret] {
        validate_credential(field, store)?;
    }
    Ok(())
}

/// Upstream's value-or-reference policy for one credential.
fn validate_credential(
    field: &ValueOrSecretRef,
    store: &StoreId,
) -> std::result::Result<(), String> {
    check_value_or_ref(field.value.as_deref(), field.secret_ref.as_ref(), store)
}

#[cfg(test)]
mod tests;
