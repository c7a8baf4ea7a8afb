//! The `secretserver` provider: secrets of a Delinea Secret Server (on premises or cloud),
//! over its REST API as upstream's `providers/v1/secretserver` (through `tss-sdk-go` v3) calls
//! it. Not the `delinea` provider, which serves DevOps Secrets Vault.
//!
//! * Auth: `token` (an access token used as it is, taking precedence), or `username` and
//!   `password` (each a `value` or a `secretRef`) with an optional `domain`: the server is
//!   probed (`/api/v1/healthcheck`, then the Delinea Platform's `/health`) and a token fetched
//!   from `/oauth2/token` (password grant) or, on the Platform, from its identity service
//!   (client-credentials grant) with the API calls sent to the default vault it names. See
//!   [`api`].
//! * `caBundle`/`caProvider` replace the system roots, as upstream.
//! * Keys: a numeric id (falling back to a search by name), `/folder/path/name` (by path),
//!   `folderId:<id>/<name>` (a name within a folder), or a plain name (exact-name search; the
//!   first match). Without `property` the value is the whole secret as JSON (upstream's Go
//!   encoding of the SDK's `Secret`); with it, a gjson path into the first field's value when
//!   that is JSON, else the field whose slug or name it is. `dataFrom.extract` gives the first
//!   field's JSON object members, else every field by slug. `remoteRef.version` is refused;
//!   find is unsupported (upstream's message).
//! * PushSecret updates the secret the key names (the field `property` names, else the first)
//!   or creates one from PushSecret metadata `folderId` and `secretTemplateId`; delete and
//!   exists refuse a plain name several folders share. See [`client`].
//!
//! Differences from upstream: the token is kept per client (the SDK keeps one per process in
//! an environment variable) and the server probed once per client (the SDK probes before every
//! call); search text and paths are percent-encoded (the SDK sends names with spaces raw);
//! a name search fetches only the secret it uses (the SDK fetches every match); an update
//! re-sends only the field it changes when that is a file (the SDK re-uploads every file); the
//! whole-secret JSON leaves `<`, `>` and `&` unescaped (Go escapes them as `\u003c`...).

mod api;
mod client;
mod error;
mod secret;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::{SecretServerProvider, SecretServerProviderRef};

use self::api::{Api, Credentials};
use self::client::SecretServerClient;
use crate::client::SharedClient;
use crate::credentials::{CredentialResolver, check_value_or_ref};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::{StoreId, StoreKind};
use crate::value::SecretValue;

/// The `secretserver` backend.
#[derive(Debug, Clone, Copy)]
pub struct SecretServer;

#[async_trait]
impl Provider for SecretServer {
    type Spec = SecretServerProvider;
    const NAME: &'static str = "secretserver";

    fn depends_on_caller(&self, _spec: &SecretServerProvider) -> bool {
        // References of a ClusterSecretStore must name their namespace.
        false
    }

    fn validate_store(&self, spec: &SecretServerProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &SecretServerProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        validate_store(spec, context.store).map_err(ProviderError::invalid_config)?;
        if context.store.kind == StoreKind::ClusterSecretStore && depends_on_namespace(spec) {
            return Err(ProviderError::invalid_config(
                "when using a ClusterSecretStore, namespaces must be explicitly set",
            ));
        }
        let credentials = match (&spec.token, &spec.username, &spec.password) {
            (Some(token), _, _) => {
                Credentials::Token(credential(token, &context.credentials).await?)
            }
            (None, Some(username), Some(password)) => Credentials::Password {
                username: credential(username, &context.credentials).await?,
                password: credential(password, &context.credentials).await?,
                domain: spec.domain.clone().unwrap_or_default(),
            },
            // validate_store refused these.
            _ => return Err(ProviderError::invalid_config("username must not be empty")),
        };
        let ca = crate::ca::ca_bundle(
            spec.ca_bundle.as_ref(),
            spec.ca_provider.as_ref(),
            &context.credentials,
        )
        .await?;
        let api = Api::new(&spec.server_url, ca.as_deref(), credentials)?;
        Ok(Arc::new(SecretServerClient::new(api)))
    }
}

/// The fields whose value is read, in upstream's precedence: the token alone when set.
fn used_fields(spec: &SecretServerProvider) -> Vec<&SecretServerProviderRef> {
    match &spec.token {
        Some(token) => vec![token],
        None => [&spec.username, &spec.password]
            .into_iter()
            .flatten()
            .collect(),
    }
}

/// Upstream's `doesConfigDependOnNamespace`: a used reference without a namespace.
fn depends_on_namespace(spec: &SecretServerProvider) -> bool {
    used_fields(spec).iter().any(|field| {
        field
            .secret_ref
            .as_ref()
            .is_some_and(|selector| selector.namespace.is_none())
    })
}

/// A credential given inline or by a Secret key.
async fn credential(
    field: &SecretServerProviderRef,
    credentials: &CredentialResolver,
) -> Result<SecretValue> {
    credentials
        .value_or_ref(field.value.as_deref(), field.secret_ref.as_ref())
        .await
}

/// Upstream's `getConfig` checks, returning its messages.
fn validate_store(spec: &SecretServerProvider, store: &StoreId) -> std::result::Result<(), String> {
    if spec.server_url.is_empty() {
        return Err("serverURL must be set".into());
    }
    if spec.token.is_none() {
        if spec.username.is_none() {
            return Err("username must not be empty".into());
        }
        if spec.password.is_none() {
            return Err("password must be set".into());
        }
    }
    for field in used_fields(spec) {
        validate_credential(field, store)?;
    }
    Ok(())
}

/// Upstream's value-or-reference policy for one credential.
fn validate_credential(
    field: &SecretServerProviderRef,
    store: &StoreId,
) -> std::result::Result<(), String> {
    check_value_or_ref(field.value.as_deref(), field.secret_ref.as_ref(), store)
}

#[cfg(test)]
mod tests;
