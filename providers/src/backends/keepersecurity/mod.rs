//! The `keepersecurity` provider: records of a Keeper Secrets Manager application, over the KSM
//! wire protocol (encrypted, signed commands; see `api.rs`).
//!
//! Behaviour follows upstream's `providers/v1/keepersecurity` (which runs the KSM Go SDK):
//!
//! * auth is the Secrets Manager configuration (`ksm init` output: JSON, usually base64) in the
//!   Secret `authRef` names; a configuration holding only a one-time token (`clientKey`) is
//!   bound by the client's first request and kept bound in memory, as the SDK does with memory
//!   storage (a token binds once: a later client with the same Secret is refused);
//! * a server answer asking for another of its keys (`key_id`) switches the key and resends;
//! * a key is a record uid; with `getByTitleFallback` a key that is no uid is looked up as a
//!   title (two records with it are an error);
//! * `property` is a standard field (label, else type; not `fileRef` nor `oneTimeCode`), a
//!   custom field (label) or a file (title, downloaded and decrypted); without one, the whole
//!   record as upstream's JSON; `dataFrom.extract` returns every field and file;
//! * `dataFrom.find` matches `find.name` against record titles and returns whole records keyed
//!   by title; `find.tags` and `find.path` are refused as upstream;
//! * PushSecret's `remoteKey` is `title/key`: the `externalSecrets` record with that title gets
//!   the value in its `login` (key matching `login|username`), `password` or `url` field, or
//!   its custom field labelled `key`; without such a record one is created in `folderID`.
//!   Delete removes that record;
//! * `validate` answers Ready without calling the server.
//!
//! Differences from upstream: `secret_exists` says whether the pushed record has the field
//! (upstream: "not implemented", which fails `updatePolicy: IfNotExists`); pushing a
//! login/password/url value into a record without that field adds it (upstream saves the record
//! unchanged and reports success); the configured hostname keeps its port (the Go SDK drops
//! it); the configuration may carry the server's public key as `serverPublicKey` (the Python
//! SDK's option) besides the built-in keys by `serverPublicKeyId`; files are downloaded only
//! for the records returned (upstream downloads those of every record a find reads).

mod api;
mod client;
mod config;
mod crypto;
mod error;
mod secret;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::KeeperSecurityProvider;

use self::api::Api;
use self::client::KeeperClient;
use self::config::ClientConfig;
use crate::client::SharedClient;
use crate::credentials::{Referent, check_selector_namespace};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;

/// The `keepersecurity` backend.
#[derive(Debug, Clone, Copy)]
pub struct KeeperSecurity;

#[async_trait]
impl Provider for KeeperSecurity {
    type Spec = KeeperSecurityProvider;
    const NAME: &'static str = "keepersecurity";

    fn depends_on_caller(&self, spec: &KeeperSecurityProvider) -> bool {
        // A ClusterSecretStore's auth Secret must name its namespace.
        spec.auth_ref.namespace.is_none()
    }

    fn validate_store(&self, spec: &KeeperSecurityProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &KeeperSecurityProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let text = context
            .credentials
            .selected_key(&spec.auth_ref, Referent::Allowed)
            .await?;
        let text = text.expose_str().unwrap_or_default();
        let config = ClientConfig::parse(text).map_err(|detail| {
            ProviderError::invalid_config(format!(
                "unable to create valid KeeperSecurity config: {detail}"
            ))
        })?;
        let client = KeeperClient::new(
            Api::new(config)?,
            spec.folder_id.clone(),
            spec.get_by_title_fallback.unwrap_or(false),
        );
        Ok(Arc::new(client))
    }
}

/// Upstream's `ValidateStore`.
fn validate_store(
    spec: &KeeperSecurityProvider,
    store: &StoreId,
) -> std::result::Result<(), String> {
    check_selector_namespace(
        store,
        spec.auth_ref.namespace.as_deref(),
        Referent::Forbidden,
    )
    .map_err(|detail| format!("error validating secret selector: {detail}"))?;
    if spec.folder_id.is_empty() {
        return Err("missing: spec.provider.keepersecurity.folderID".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::meta::SecretKeySelector;

    fn spec(namespace: Option<&str>, folder: &str) -> KeeperSecurityProvider {
        KeeperSecurityProvider {
            auth_ref: SecretKeySelector {
                name: Some("ksm".into()),
                key: Some("config".into()),
                namespace: namespace.map(str::to_owned),
            },
            folder_id: folder.into(),
            get_by_title_fallback: None,
        }
    }

    fn message(spec: &KeeperSecurityProvider, store: &StoreId) -> Option<String> {
        KeeperSecurity
            .validate_store(spec, store)
            .err()
            .map(|error| error.to_string())
    }

    #[test]
    fn stores_are_validated_with_upstreams_messages() {
        let namespaced = StoreId::secret_store("team", "keeper");
        let cluster = StoreId::cluster_secret_store("keeper");
        assert_eq!(message(&spec(None, "folder"), &namespaced), None);
        assert_eq!(message(&spec(Some("team"), "folder"), &namespaced), None);
        assert_eq!(message(&spec(Some("ops"), "folder"), &cluster), None);
        assert_eq!(
            message(&spec(None, ""), &namespaced).as_deref(),
            Some("missing: spec.provider.keepersecurity.folderID")
        );
        assert_eq!(
            message(&spec(None, "folder"), &cluster).as_deref(),
            Some("error validating secret selector: cluster scope requires namespace")
        );
        assert_eq!(
            message(&spec(Some("other"), "folder"), &namespaced).as_deref(),
            Some(
                "error validating secret selector: namespace should either be empty or match \
                 the namespace of the SecretStore for a namespaced SecretStore"
            )
        );
        let error = KeeperSecurity
            .validate_store(&spec(None, ""), &namespaced)
            .unwrap_err();
        assert!(!error.is_temporary());
    }
}
