//! The `ibm` provider: secrets of IBM Cloud Secrets Manager, read through its v2 REST API with
//! IAM access tokens.
//!
//! Behaviour follows upstream's `providers/v1/ibm`:
//!
//! * Stores are read-only (upstream's capabilities): find, PushSecret and delete are not
//!   implemented.
//! * A key is `<id-or-name>` (an `arbitrary` secret), `<type>/<id-or-name>` or
//!   `<group>/<type>/<id-or-name>`. A UUID is read by id (the type then only picks how the value
//!   is extracted); a name needs the secret group (`failed to fetch the secret, secret group
//!   name is missing`) and is read by name, type and group.
//! * The value per type: `arbitrary` its payload; `iam_credentials` its API key;
//!   `service_credentials` its credentials as JSON; `username_password`, `imported_cert`,
//!   `public_cert` and `private_cert` need `property` (a field of the secret, such as
//!   `password` or `certificate`; an imported certificate without intermediate or private key
//!   gives an empty value for them); `kv` (and `custom_credentials`) their data as JSON, or one
//!   member by gjson path (`a.b` tried first as the key `a.b`).
//! * `dataFrom.extract` gives `arbitrary` (payload), `username`/`password`, `apikey`,
//!   `credentials`, `certificate`/`intermediate`/`private_key` per certificate type, or the
//!   members of a `kv` secret; with `metadataPolicy: Fetch` every field of the secret (name,
//!   id, labels, dates...) is added.
//! * Auth: an API key from a Secret (`auth.secretRef.secretApiKeySecretRef`), or container auth
//!   (`auth.containerAuth`: a trusted profile and the compute-resource token the kubelet
//!   projects at `tokenLocation`, default `/var/run/secrets/tokens/vault-token`), both exchanged
//!   for an IAM token at `iamEndpoint` (default `https://iam.cloud.ibm.com`). Container auth is
//!   the operator pod's own identity, so `--deny-operator-identity` refuses it for SecretStores.
//! * `validate` answers Ready without calling IBM, as upstream.
//!
//! Differences from upstream: `secret_exists` says whether the secret a key names exists
//! (upstream answers "not implemented"); the container token file is checked when the client is built,
//! not by `ValidateStore` (which runs in the admission webhook, where that pod's files say
//! nothing about the controller's); non-string fields (labels, nested credentials) are given as
//! JSON rather than Go's `%v` text; a missing field is `NotFound`.

mod api;
mod auth;
mod client;
mod error;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::IbmProvider;

use self::api::Api;
use self::auth::{DEFAULT_TOKEN_LOCATION, Grant, Iam};
use self::client::IbmClient;
use crate::client::{Capabilities, SharedClient};
use crate::credentials::{Referent, check_selector_namespace};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;

/// The `ibm` backend.
#[derive(Debug, Clone, Copy)]
pub struct Ibm;

#[async_trait]
impl Provider for Ibm {
    type Spec = IbmProvider;
    const NAME: &'static str = "ibm";

    fn capabilities(&self, _spec: &IbmProvider) -> Capabilities {
        Capabilities::ReadOnly
    }

    fn validate_store(&self, spec: &IbmProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &IbmProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let container = spec
            .auth
            .container_auth
            .as_ref()
            .filter(|container| !container.profile.is_empty());
        let iam = match (container, &spec.auth.secret_ref) {
            (Some(container), _) => {
                context
                    .credentials
                    .use_operator_identity("ibm containerAuth")?;
                let location = container
                    .token_location
                    .as_deref()
                    .filter(|location| !location.is_empty())
                    .unwrap_or(DEFAULT_TOKEN_LOCATION);
                std::fs::File::open(location).map_err(|failure| {
                    ProviderError::invalid_config(format!(
                        "cannot read container auth token {location}. {failure}"
                    ))
                    .with_temporary(true)
                })?;
                let grant = Grant::Container {
                    profile: container.profile.clone(),
                    token_file: PathBuf::from(location),
                };
                Iam::new(container.iam_endpoint.as_deref(), grant)
            }
            (None, secret_ref) => {
                let secret_ref = secret_ref.clone().unwrap_or_default();
                let selector = secret_ref.secret_api_key_secret_ref.unwrap_or_default();
                let key = context
                    .credentials
                    .secret_key(
                        selector.name.as_deref().unwrap_or_default(),
                        selector.key.as_deref().unwrap_or_default(),
                        selector.namespace.as_deref(),
                        Referent::Allowed,
                    )
                    .await?;
                Iam::new(secret_ref.iam_endpoint.as_deref(), Grant::ApiKey(key))
            }
        };
        let api = Api::new(spec.service_url.as_deref().unwrap_or_default(), iam)?;
        Ok(Arc::new(IbmClient::new(api)))
    }
}

/// Upstream's `ValidateStore` (less its token file check), returning its message.
fn validate_store(spec: &IbmProvider, store: &StoreId) -> std::result::Result<(), String> {
    if spec.service_url.is_none() {
        return Err("serviceURL is required".into());
    }
    match (&spec.auth.container_auth, &spec.auth.secret_ref) {
        (None, None) => Err("missing auth method".into()),
        (Some(_), Some(_)) => Err("too many auth methods defined".into()),
        (Some(container), None) => {
            if container.profile.is_empty() {
                return Err("container auth profile cannot be empty".into());
            }
            Ok(())
        }
        (None, Some(secret_ref)) => {
            let selector = secret_ref
                .secret_api_key_secret_ref
                .clone()
                .unwrap_or_default();
            check_selector_namespace(store, selector.namespace.as_deref(), Referent::Forbidden)?;
            if selector.name.as_deref().unwrap_or_default().is_empty() {
                return Err("secretAPIKey.name cannot be empty".into());
            }
            if selector.key.as_deref().unwrap_or_default().is_empty() {
                return Err("secretAPIKey.key cannot be empty".into());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests;
