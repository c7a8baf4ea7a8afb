//! The `conjur` provider: variables of a CyberArk Conjur (Secrets Manager) account, over the
//! Conjur REST API as upstream's `providers/v1/conjur` (through `cyberark/conjur-api-go`)
//! calls it. Read-only, as upstream.
//!
//! * `remoteRef.key` names a variable: `id`, `variable:id` or `<account>:variable:id`
//!   (upstream's client qualifies keys this way; any other prefix is part of the id).
//!   `property` selects a member of a JSON value (gjson paths); `dataFrom.extract` returns the
//!   members of a JSON object of strings. `remoteRef.version` is ignored, as upstream.
//! * `dataFrom.find` lists the account's variables 100 at a time and keeps those whose id (its
//!   last part) matches `find.name`, or else those annotated with every `find.tags` pair;
//!   their values are fetched in batches and keyed by that last part. `find.path` is ignored,
//!   as upstream.
//! * Auth: see [`auth`]. The access token is renewed before it expires (see [`token`]).
//! * `url` is the appliance URL; `caBundle`/`caProvider` replace the system roots.
//!
//! Differences from upstream: the client authenticates when it is built (upstream at the first
//! read), so refused credentials fail the store; a find matching nothing returns nothing
//! (upstream sends an empty batch request, which Conjur refuses); batches hold at most 100
//! variables; `SecretExists` says whether the variable has a value (upstream: not
//! implemented), as the behaviour suite asks of every backend.

mod api;
mod auth;
mod client;
mod error;
mod token;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{ConjurApiKey, ConjurCert, ConjurJwt, ConjurProvider};
use k8s_openapi::ByteString;

use self::client::ConjurClient;
use crate::client::{Capabilities, SharedClient};
use crate::credentials::{Referent, check_selector_namespace};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;
use crate::transport::Roots;

/// Upstream's message for a CA bundle without a usable certificate.
const INVALID_CA: &str =
    "cannot setup new Conjur client: Can't append Idira Secrets Manager SSL cert";

/// The `conjur` backend.
#[derive(Debug, Clone, Copy)]
pub struct Conjur;

#[async_trait]
impl Provider for Conjur {
    type Spec = ConjurProvider;
    const NAME: &'static str = "conjur";

    fn capabilities(&self, _spec: &ConjurProvider) -> Capabilities {
        Capabilities::ReadOnly
    }

    fn validate_store(&self, spec: &ConjurProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &ConjurProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let bundle = spec
            .ca_bundle
            .as_ref()
            .map(|bundle| ByteString(bundle.clone().into_bytes()));
        let ca = crate::ca::ca_bundle(
            bundle.as_ref(),
            spec.ca_provider.as_ref(),
            &context.credentials,
        )
        .await?;
        let roots = match &ca {
            Some(pem) => Roots::Bundle {
                pem,
                invalid: INVALID_CA,
            },
            None => Roots::System,
        };
        let configured = auth::configure(spec, &context.credentials, roots).await?;
        let api = api::Api::new(&spec.url, &configured.account, configured.tls)?;
        let client = ConjurClient::connect(api, configured.method, context.credentials).await?;
        Ok(Arc::new(client))
    }
}

/// Upstream's `ValidateStore`: the URL, exactly one auth method, and that method's fields.
fn validate_store(spec: &ConjurProvider, store: &StoreId) -> std::result::Result<(), String> {
    if spec.url.is_empty() {
        return Err("conjur URL cannot be empty".into());
    }
    let auth = &spec.auth;
    let methods = [
        auth.apikey.is_some(),
        auth.jwt.is_some(),
        auth.cert.is_some(),
    ];
    if methods.iter().filter(|set| **set).count() != 1 {
        return Err("must specify exactly one Auth.* method".into());
    }
    if let Some(apikey) = &auth.apikey {
        validate_api_key(apikey, store)?;
    }
    if let Some(jwt) = &auth.jwt {
        validate_jwt(jwt, store)?;
    }
    if let Some(cert) = &auth.cert {
        validate_cert(cert, store)?;
    }
    Ok(())
}

fn validate_api_key(auth: &ConjurApiKey, store: &StoreId) -> std::result::Result<(), String> {
    if auth.account.is_empty() {
        return Err("missing Auth.ApiKey.Account".into());
    }
    referent(store, &auth.user_ref, "Auth.Apikey.UserRef")?;
    referent(store, &auth.api_key_ref, "Auth.Apikey.ApiKeyRef")
}

fn validate_jwt(auth: &ConjurJwt, store: &StoreId) -> std::result::Result<(), String> {
    if auth.account.is_empty() {
        return Err("missing Auth.Jwt.Account".into());
    }
    if auth.service_id.is_empty() {
        return Err("missing Auth.Jwt.ServiceID".into());
    }
    if auth.service_account_ref.is_none() && auth.secret_ref.is_none() {
        return Err("must specify Auth.Jwt.SecretRef or Auth.Jwt.ServiceAccountRef".into());
    }
    if let Some(secret) = &auth.secret_ref {
        referent(store, secret, "Auth.Jwt.SecretRef")?;
    }
    if let Some(account) = &auth.service_account_ref {
        check_selector_namespace(store, account.namespace.as_deref(), Referent::Allowed)
            .map_err(|message| format!("invalid Auth.Jwt.ServiceAccountRef: {message}"))?;
    }
    Ok(())
}

fn validate_cert(auth: &ConjurCert, store: &StoreId) -> std::result::Result<(), String> {
    if auth.account.is_empty() {
        return Err("missing Auth.Cert.Account".into());
    }
    if auth.service_id.is_empty() {
        return Err("missing Auth.Cert.ServiceID".into());
    }
    if auth
        .client_cert_ref
        .name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return Err("missing Auth.Cert.ClientCertRef.Name".into());
    }
    referent(store, &auth.client_cert_ref, "Auth.Cert.ClientCertRef")?;
    if auth
        .client_key_ref
        .name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return Err("missing Auth.Cert.ClientKeyRef.Name".into());
    }
    referent(store, &auth.client_key_ref, "Auth.Cert.ClientKeyRef")
}

/// Upstream's `ValidateReferentSecretSelector`, with its `invalid <field>: ` prefix.
fn referent(
    store: &StoreId,
    selector: &SecretKeySelector,
    field: &str,
) -> std::result::Result<(), String> {
    check_selector_namespace(store, selector.namespace.as_deref(), Referent::Allowed)
        .map_err(|message| format!("invalid {field}: {message}"))
}

#[cfg(test)]
mod tests;
