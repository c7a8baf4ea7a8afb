//! The `akeyless` provider: items of an Akeyless vault, through the public API or a gateway,
//! over the V2 REST API as upstream's `providers/v1/akeyless` (through `akeyless-go`) calls it.
//!
//! * A key is an item name; its type (`describe-item`) decides how it is read: static secrets
//!   (`remoteRef.version`, `ignoreCache`), dynamic secrets (the generated credentials as
//!   JSON), rotated secrets (the payload, or the target value as JSON) and certificates (as
//!   JSON). `property` is a gjson path (a dotted name is first tried as one key);
//!   `dataFrom.extract` returns the members of a JSON value.
//! * `dataFrom.find` lists static, dynamic and rotated secrets under `find.path` and reads
//!   those whose name matches `find.name`, or those carrying any of `find.tags`' values.
//! * PushSecret keeps a JSON object per item: without `property` every key of the source
//!   Secret is merged in, with one the selected key is set as that member; new items are
//!   created tagged `k8s-external-secrets`. Delete removes the member (the item when nothing is
//!   left), and only from items carrying that tag.
//! * Auth: see [`auth`]; a token is asked for every operation, as upstream. `caBundle` or
//!   `caProvider` is trusted for the gateway; `validate` checks a TCP connection to it.
//!
//! Differences from upstream: deleting a missing item succeeds (upstream fails); Kubernetes
//! auth with a `serviceAccountRef` always uses a TokenRequest (upstream first looks for a
//! legacy token Secret bound to the ServiceAccount); cloud-identity auth is refused.

mod api;
mod auth;
mod client;
mod error;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::AkeylessProvider;

use self::client::AkeylessClient;
use crate::client::SharedClient;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::{StoreId, StoreKind};

/// The `akeyless` backend.
#[derive(Debug, Clone, Copy)]
pub struct Akeyless;

#[async_trait]
impl Provider for Akeyless {
    type Spec = AkeylessProvider;
    const NAME: &'static str = "akeyless";

    fn validate_store(&self, spec: &AkeylessProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &AkeylessProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let ca = crate::ca::ca_bundle(
            spec.ca_bundle.as_ref(),
            spec.ca_provider.as_ref(),
            &context.credentials,
        )
        .await?;
        let api = api::Api::new(&spec.akeyless_gw_api_url, ca.as_deref()).await?;
        let login = auth::login(spec, &context.credentials).await?;
        let ignore_cache = spec.ignore_cache.unwrap_or(false);
        Ok(Arc::new(AkeylessClient::new(api, login, ignore_cache)))
    }
}

/// Upstream's error for a namespace a SecretStore may not name.
const NAMESPACE_NOT_ALLOWED: &str = "namespace should either be empty or match the namespace of \
                                     the SecretStore for a namespaced SecretStore";

/// Upstream's `ValidateStore`.
fn validate_store(spec: &AkeylessProvider, store: &StoreId) -> std::result::Result<(), String> {
    let url = &spec.akeyless_gw_api_url;
    if !url.is_empty() {
        let parsed = reqwest::Url::parse(url).map_err(|_| error::INVALID_URL.to_owned())?;
        if parsed.host_str().unwrap_or_default().is_empty() {
            return Err(error::INVALID_URL.into());
        }
    }
    let auth = &spec.auth_secret_ref;
    if let Some(kubernetes) = &auth.kubernetes_auth {
        if let Some(account) = &kubernetes.service_account_ref {
            own_namespace(account.namespace.as_deref(), store)
                .map_err(|error| format!("invalid Auth.Kubernetes.ServiceAccountRef: {error}"))?;
        }
        if let Some(secret) = &kubernetes.secret_ref {
            secret_selector(secret, store)?;
        }
        if kubernetes.access_id.is_empty() {
            return Err("missing kubernetes auth-method access-id".into());
        }
        if kubernetes.k8s_conf_name.is_empty() {
            return Err("missing kubernetes config name".into());
        }
        return Ok(());
    }
    let secret_ref = auth.secret_ref.clone().unwrap_or_default();
    let access_id = secret_ref.access_id.unwrap_or_default();
    secret_selector(&access_id, store)?;
    if access_id.name.as_deref().unwrap_or_default().is_empty() {
        return Err("missing akeyless accessID name".into());
    }
    if access_id.key.as_deref().unwrap_or_default().is_empty() {
        return Err("missing akeyless accessID key".into());
    }
    secret_selector(&secret_ref.access_type.unwrap_or_default(), store)?;
    if let Some(param) = secret_ref
        .access_type_param
        .filter(|param| !param.name.as_deref().unwrap_or_default().is_empty())
    {
        secret_selector(&param, store)?;
    }
    if let Some(account) = &auth.service_account_ref {
        own_namespace(account.namespace.as_deref(), store)
            .map_err(|error| format!("invalid Auth.ServiceAccountRef: {error}"))?;
    }
    Ok(())
}

/// Upstream's `ValidateSecretSelector`: a ClusterSecretStore must name the namespace, a
/// SecretStore may only name its own.
fn secret_selector(
    selector: &SecretKeySelector,
    store: &StoreId,
) -> std::result::Result<(), String> {
    if store.kind == StoreKind::ClusterSecretStore && selector.namespace.is_none() {
        return Err("cluster scope requires namespace".into());
    }
    own_namespace(selector.namespace.as_deref(), store)
}

/// A SecretStore may only name its own namespace.
fn own_namespace(namespace: Option<&str>, store: &StoreId) -> std::result::Result<(), String> {
    match (store.kind, namespace) {
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(NAMESPACE_NOT_ALLOWED.into())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
