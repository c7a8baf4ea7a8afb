//! The `doppler` provider: secrets of a Doppler project config through the Doppler REST API.
//!
//! Behaviour follows upstream's `providers/v1/doppler`:
//!
//! * auth is a service or personal token from a Secret (`auth.secretRef.dopplerToken`, key
//!   `dopplerToken` by default), or `auth.oidcConfig`: a token of the named ServiceAccount (for
//!   the selector's audiences, or the API address, plus `secretStore:<namespace>:<name>` or
//!   `clusterSecretStore:<name>`) exchanged at `/v3/auth/oidc` for the service account
//!   identity's API token, renewed a minute before it expires;
//! * `project` and `config` are sent when set (a service token implies them);
//! * a key is a secret name read through the secrets download; `dataFrom.extract` parses the
//!   value as a JSON object (strings unquoted, anything else as JSON text);
//! * `dataFrom.find` downloads the whole config with the store's `nameTransformer` and
//!   `format`, then keeps names matching `find.name` and starting with `find.path`; with a
//!   `format` the only key is `DOPPLER_SECRETS_FILE`, holding the downloaded file;
//! * every download is cached with its `ETag` in the registry's [`EtagCache`]
//!   (`--doppler-etag-cache-size`, 0 disables) and asked again with `If-None-Match`; pushes and
//!   deletes forget the store's cached downloads;
//! * PushSecret sets secret `remoteKey` (`secrets` update); delete sends a change request with
//!   `shouldDelete`;
//! * `validate` calls the projects list with the token.
//!
//! Differences from upstream: a `property` selects a member of a JSON value (gjson path, as
//! other providers; upstream ignores it and returns the whole value); `secret_exists` answers
//! whether the secret is in the config (upstream answers "not implemented", which fails
//! `updatePolicy: IfNotExists`); deleting a secret that is already gone succeeds without a
//! change request; the store reports `ReadWrite` (upstream reports `ReadOnly` although it
//! pushes); `DOPPLER_VERIFY_TLS=false` (skipping certificate checks) is not honoured — trust a
//! private CA through `SSL_CERT_FILE` instead. The OIDC client cache flags have no counterpart:
//! the client manager always keeps one client (and its exchanged token) per store version.

mod api;
mod cache;
mod client;
mod error;

pub use self::cache::{DEFAULT_CAPACITY, EtagCache};

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use external_secrets_crds::v1::{DopplerFormat, DopplerNameTransformer, DopplerProvider};

use self::api::{Api, Credential, Oidc, base_url};
use self::client::{DopplerClient, Scope};
use crate::client::SharedClient;
use crate::credentials::Referent;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::{StoreId, StoreKind};

/// The key of the token in its Secret when the selector names none (upstream's default).
const DEFAULT_TOKEN_KEY: &str = "dopplerToken";

/// The `doppler` backend.
#[derive(Debug, Clone, Copy)]
pub struct Doppler;

#[async_trait]
impl Provider for Doppler {
    type Spec = DopplerProvider;
    const NAME: &'static str = "doppler";

    fn validate_store(&self, spec: &DopplerProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store)
            .map_err(|detail| ProviderError::invalid_config(format!("invalid store: {detail}")))
    }

    async fn new_client(
        &self,
        spec: &DopplerProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let base = base_url();
        let credential = match (&spec.auth.secret_ref, &spec.auth.oidc_config) {
            (Some(secret_ref), _) => {
                let selector = &secret_ref.doppler_token;
                let key = selector
                    .key
                    .as_deref()
                    .filter(|key| !key.is_empty())
                    .unwrap_or(DEFAULT_TOKEN_KEY);
                let token = context
                    .credentials
                    .secret_key(
                        selector.name.as_deref().unwrap_or_default(),
                        key,
                        selector.namespace.as_deref(),
                        Referent::Allowed,
                    )
                    .await?;
                Credential::Token(token)
            }
            (None, Some(oidc)) => {
                let mut audiences = oidc.service_account_ref.audiences.clone();
                if audiences.is_empty() {
                    audiences.push(base.clone());
                }
                audiences.push(resource_audience(context.store));
                let seconds = u64::try_from(oidc.expiration_seconds)
                    .ok()
                    .filter(|seconds| *seconds > 0)
                    .unwrap_or(600);
                Credential::Oidc(Box::new(Oidc {
                    identity: oidc.identity.clone(),
                    service_account: oidc.service_account_ref.clone(),
                    lifetime: Duration::from_secs(seconds),
                    audiences,
                    credentials: context.credentials.clone(),
                    current: tokio::sync::Mutex::new(None),
                }))
            }
            (None, None) => {
                return Err(ProviderError::invalid_config(
                    "no authentication method configured: either secretRef or oidcConfig must \
                     be specified",
                ));
            }
        };
        let scope = Scope {
            project: spec.project.clone().unwrap_or_default(),
            config: spec.config.clone().unwrap_or_default(),
            name_transformer: spec.name_transformer.map(transformer_name),
            format: spec.format.map(format_name),
        };
        let caller = context.credentials.caller_namespace().map(str::to_owned);
        let client = DopplerClient::new(
            Api::new(base, credential)?,
            scope,
            context.states.get::<EtagCache>(),
            context.store.clone(),
            caller,
        );
        Ok(Arc::new(client))
    }
}

/// The audience naming the store, which upstream adds to every ServiceAccount token.
fn resource_audience(store: &StoreId) -> String {
    match store.kind {
        StoreKind::ClusterSecretStore => format!("clusterSecretStore:{}", store.name),
        StoreKind::SecretStore => format!(
            "secretStore:{}:{}",
            store.namespace.as_deref().unwrap_or_default(),
            store.name
        ),
    }
}

/// The wire name of a name transformer.
fn transformer_name(transformer: DopplerNameTransformer) -> &'static str {
    match transformer {
        DopplerNameTransformer::UpperCamel => "upper-camel",
        DopplerNameTransformer::Camel => "camel",
        DopplerNameTransformer::LowerSnake => "lower-snake",
        DopplerNameTransformer::TfVar => "tf-var",
        DopplerNameTransformer::DotnetEnv => "dotnet-env",
        DopplerNameTransformer::LowerKebab => "lower-kebab",
    }
}

/// The wire name of a download format.
fn format_name(format: DopplerFormat) -> &'static str {
    match format {
        DopplerFormat::Json => "json",
        DopplerFormat::DotnetJson => "dotnet-json",
        DopplerFormat::Env => "env",
        DopplerFormat::Yaml => "yaml",
        DopplerFormat::Docker => "docker",
    }
}

/// Upstream's `ValidateStore`, returning the detail its messages wrap.
fn validate_store(spec: &DopplerProvider, store: &StoreId) -> std::result::Result<(), String> {
    let cluster = store.kind == StoreKind::ClusterSecretStore;
    let namespace_rule = |namespace: Option<&str>| match (cluster, namespace) {
        (true, None) => Err("cluster scope requires namespace".to_owned()),
        (false, Some(namespace)) if Some(namespace) != store.namespace.as_deref() => Err(
            "namespace should either be empty or match the namespace of the SecretStore for a \
             namespaced SecretStore"
                .to_owned(),
        ),
        _ => Ok(()),
    };
    if let Some(secret_ref) = &spec.auth.secret_ref {
        let selector = &secret_ref.doppler_token;
        namespace_rule(selector.namespace.as_deref())?;
        if selector.name.as_deref().unwrap_or_default().is_empty() {
            return Err("dopplerToken.name cannot be empty".into());
        }
    } else if let Some(oidc) = &spec.auth.oidc_config {
        if oidc.identity.is_empty() {
            return Err("oidcConfig.identity cannot be empty".into());
        }
        if oidc.service_account_ref.name.is_empty() {
            return Err("oidcConfig.serviceAccountRef.name cannot be empty".into());
        }
        namespace_rule(oidc.service_account_ref.namespace.as_deref())?;
    } else {
        return Err("either auth.secretRef or auth.oidcConfig must be specified".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
