//! The `onepassword` provider: items of 1Password vaults through a 1Password Connect server.
//!
//! Behaviour follows upstream's `providers/v1/onepassword`:
//!
//! * `vaults` maps vault names (or ids) to a search order; a key is an item title looked up in
//!   each vault in ascending order, the first vault holding it wins; two items with the title
//!   in one vault are an error. Vault order numbers must be unique.
//! * `property` names a field by label (default `password`); `file/<name>` names a file and
//!   `field/<label>` a field explicitly; items of category `DOCUMENT` default to files (the first
//!   file without a property). A label carried by two fields is an error. `remoteRef.version` is
//!   refused.
//! * `dataFrom.extract` returns every field (or every file of a `DOCUMENT`), labels as keys.
//! * `dataFrom.find` walks the vaults in order and returns the fields and files of every item
//!   (whose title equals `find.path` when set) whose label or name matches `find.name`; the first
//!   vault's value wins on a clash. With `find.tags` only items carrying every tag key are read,
//!   and only in the first vault (upstream returns after it).
//! * PushSecret sets the field labelled `property` (default `password`) of the item titled
//!   `remoteKey`, creating a `SERVER` item with a concealed field in the first vault (or the
//!   metadata's `vault`, which must be one of the store's) when none exists; the metadata's
//!   `tags` replace the item's tags. Delete removes that field, and the item when nothing is left.
//! * `validate` fetches every vault.
//!
//! Differences from upstream: `secret_exists` says whether the push location's field exists
//! (upstream answers "not implemented", which fails `updatePolicy: IfNotExists`); a push does not poll afterwards for the item to appear (Connect
//! answers after the write); deleting without a property removes the `password` field (the
//! one a push without a property wrote) where upstream looks for an empty label; a key shaped
//! like an RFC 4122 UUID is looked up by title like any other key, as the Connect SDK ends up
//! doing for upstream.

mod client;
mod connect;
mod error;
mod model;

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::OnePasswordProvider;

use self::client::OnePasswordClient;
use self::connect::Connect;
use crate::client::SharedClient;
use crate::credentials::{Referent, check_selector_namespace};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;

/// The `onepassword` backend.
#[derive(Debug, Clone, Copy)]
pub struct OnePassword;

#[async_trait]
impl Provider for OnePassword {
    type Spec = OnePasswordProvider;
    const NAME: &'static str = "onepassword";

    fn validate_store(&self, spec: &OnePasswordProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(|detail| {
            ProviderError::invalid_config(format!(
                "received invalid 1Password SecretStore resource: {detail}"
            ))
        })
    }

    async fn new_client(
        &self,
        spec: &OnePasswordProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let selector = &spec.auth.secret_ref.connect_token_secret_ref;
        let token = context
            .credentials
            .selected_key(selector, Referent::Allowed)
            .await?;
        let connect = Connect::new(&spec.connect_host, token)?;
        Ok(Arc::new(OnePasswordClient::new(connect, &spec.vaults)))
    }
}

/// Upstream's `validateStore`, returning the detail its messages wrap.
fn validate_store(spec: &OnePasswordProvider, store: &StoreId) -> std::result::Result<(), String> {
    let selector = &spec.auth.secret_ref.connect_token_secret_ref;
    if selector.name.as_deref().unwrap_or_default().is_empty() {
        return Err(
            "missing: spec.provider.onepassword.auth.secretRef.connectTokenSecretRef.name".into(),
        );
    }
    if selector.key.as_deref().unwrap_or_default().is_empty() {
        return Err(
            "missing: spec.provider.onepassword.auth.secretRef.connectTokenSecretRef.key".into(),
        );
    }
    check_selector_namespace(store, selector.namespace.as_deref(), Referent::Forbidden)?;
    if spec.vaults.is_empty() {
        return Err("must be at least one vault: spec.provider.onepassword.vaults".into());
    }
    let orders: BTreeSet<i64> = spec.vaults.values().copied().collect();
    if orders.len() != spec.vaults.len() {
        return Err("vault order numbers must be unique".into());
    }
    if let Err(error) = reqwest::Url::parse(&spec.connect_host) {
        return Err(format!(
            "unable to parse URL: spec.provider.onepassword.connectHost: {error}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
