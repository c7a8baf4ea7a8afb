//! The `bitwardensecretsmanager` provider: secrets of a Bitwarden Secrets Manager organization
//! and project, through `bitwarden-sdk-server` (the REST wrapper around Bitwarden's SDK that
//! upstream's chart deploys beside the operator) over HTTPS.
//!
//! Behaviour follows upstream's `providers/v1/bitwarden`:
//!
//! * A key that is a UUID reads that secret; any other key is a secret name, looked up among
//!   the organization's secrets and matched within the store's `projectID` (two of that name in
//!   the project are an error).
//! * `dataFrom.extract` reads the value as a YAML mapping or JSON object.
//! * `dataFrom.find` returns secrets keyed by their UUID (names may repeat in Bitwarden).
//! * PushSecret writes to the store's project: an identical secret (name, value, note, project)
//!   is left alone, one differing only in value is updated, anything else makes a new secret.
//!   The note comes from the metadata key `note`. Delete takes a UUID or a name.
//! * The machine account's access token is read from `auth.secretRef.credentials`; the SDK
//!   server is trusted through `caBundle` or `caProvider`; `apiURL` and `identityURL` are passed
//!   on to the SDK server (empty: Bitwarden's cloud).
//!
//! Differences from upstream: `find.name.regexp` selects secrets by name (upstream ignores the
//! find criteria and returns every secret of the organization, its issue 6550; a find without a
//! name still returns all of them), `find.tags` and `find.path` are refused (Bitwarden secrets
//! have neither); `remoteRef.property` selects a gjson path of a JSON value (upstream ignores
//! it); deleting a name that no longer exists succeeds, and `secret_exists` answers false for a
//! missing UUID (upstream: errors); `validate` lists the organization's secrets (upstream
//! answers ready without a call); without `caBundle`/`caProvider` the system roots are trusted
//! (which honour `SSL_CERT_FILE`; upstream then fails to build the client). As upstream, such a
//! store is admitted with the warning that a certificate is expected from a volume mount.

mod api;
mod client;
mod error;
mod map;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::BitwardenSecretsManagerProvider;
use k8s_openapi::ByteString;

use self::api::{Config, SdkServer};
use self::client::BitwardenClient;
use crate::client::{Capabilities, SharedClient};
use crate::credentials::Referent;
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;

/// The `bitwardensecretsmanager` backend.
#[derive(Debug, Clone, Copy)]
pub struct BitwardenSecretsManager;

#[async_trait]
impl Provider for BitwardenSecretsManager {
    type Spec = BitwardenSecretsManagerProvider;
    const NAME: &'static str = "bitwardensecretsmanager";

    fn capabilities(&self, _spec: &BitwardenSecretsManagerProvider) -> Capabilities {
        Capabilities::ReadWrite
    }

    /// Upstream's `ValidateStore` warning, given (as there) only once the SDK server's URL is
    /// set.
    fn admission_warnings(&self, spec: &BitwardenSecretsManagerProvider) -> Vec<String> {
        let url = spec.bitwarden_server_sdkurl.as_deref().unwrap_or_default();
        let bundle = spec.ca_bundle.as_deref().unwrap_or_default();
        if !url.is_empty() && spec.ca_provider.is_none() && bundle.is_empty() {
            return vec![
                "Neither CA nor CA bundle is configured; user is expected to provide \
                 certificate information via volume mount."
                    .to_owned(),
            ];
        }
        Vec::new()
    }

    fn validate_store(
        &self,
        spec: &BitwardenSecretsManagerProvider,
        _store: &StoreId,
    ) -> Result<()> {
        if spec
            .bitwarden_server_sdkurl
            .as_deref()
            .unwrap_or_default()
            .is_empty()
        {
            return Err(ProviderError::invalid_config(
                "bitwardenServerSDKURL not configured",
            ));
        }
        Ok(())
    }

    async fn new_client(
        &self,
        spec: &BitwardenSecretsManagerProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let selector = &spec.auth.secret_ref.credentials;
        let token = context
            .credentials
            .selected_key(selector, Referent::Allowed)
            .await
            .map_err(|failure| failure.context("could not resolve auth credentials"))?;
        let bundle = spec
            .ca_bundle
            .as_ref()
            .map(|bundle| ByteString(bundle.clone().into_bytes()));
        let ca = crate::ca::ca_bundle(
            bundle.as_ref(),
            spec.ca_provider.as_ref(),
            &context.credentials,
        )
        .await
        .map_err(|failure| failure.context("could not create SdkClient"))?;
        let trimmed = |url: &Option<String>| {
            url.as_deref()
                .unwrap_or_default()
                .trim_end_matches('/')
                .to_owned()
        };
        let config = Config {
            server_url: spec.bitwarden_server_sdkurl.clone().unwrap_or_default(),
            api_url: trimmed(&spec.api_url),
            identity_url: trimmed(&spec.identity_url),
            token,
        };
        let server = SdkServer::new(config, ca.as_deref())
            .map_err(|failure| failure.context("could not create SdkClient"))?;
        Ok(Arc::new(BitwardenClient::new(
            server,
            spec.organization_id.clone(),
            spec.project_id.clone(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use external_secrets_crds::v1::{CaProvider, CaProviderType};

    use super::*;

    #[test]
    fn the_sdk_server_url_is_required_with_upstreams_message() {
        let store = StoreId::secret_store("team", "bitwarden");
        let spec = BitwardenSecretsManagerProvider {
            organization_id: "org".into(),
            project_id: "project".into(),
            ..BitwardenSecretsManagerProvider::default()
        };
        let error = BitwardenSecretsManager
            .validate_store(&spec, &store)
            .unwrap_err();
        assert_eq!(error.message(), "bitwardenServerSDKURL not configured");
        let configured = BitwardenSecretsManagerProvider {
            bitwarden_server_sdkurl: Some("https://bitwarden-sdk-server:9998".into()),
            ..spec
        };
        BitwardenSecretsManager
            .validate_store(&configured, &store)
            .unwrap();
        assert_eq!(
            BitwardenSecretsManager.capabilities(&configured),
            Capabilities::ReadWrite
        );
    }

    /// Upstream's `ValidateStore`: the warning only for a store with the SDK server's URL but
    /// neither `caBundle` nor `caProvider` (an empty bundle counts as none).
    #[test]
    fn a_store_without_a_ca_is_admitted_with_upstreams_warning() {
        const WARNING: &str = "Neither CA nor CA bundle is configured; user is expected to \
                               provide certificate information via volume mount.";
        let unset = BitwardenSecretsManagerProvider {
            ca_bundle: Some(String::new()),
            ..BitwardenSecretsManagerProvider::default()
        };
        assert!(
            BitwardenSecretsManager
                .admission_warnings(&unset)
                .is_empty()
        );
        let without_ca = BitwardenSecretsManagerProvider {
            bitwarden_server_sdkurl: Some("https://bitwarden-sdk-server:9998".into()),
            ..unset
        };
        assert_eq!(
            BitwardenSecretsManager.admission_warnings(&without_ca),
            vec![WARNING.to_owned()]
        );
        let with_bundle = BitwardenSecretsManagerProvider {
            ca_bundle: Some("-----BEGIN CERTIFICATE-----".into()),
            ..without_ca.clone()
        };
        assert!(
            BitwardenSecretsManager
                .admission_warnings(&with_bundle)
                .is_empty()
        );
        let with_provider = BitwardenSecretsManagerProvider {
            ca_provider: Some(CaProvider {
                r#type: CaProviderType::Secret,
                name: "ca".into(),
                key: Some("ca.crt".into()),
                namespace: None,
            }),
            ..without_ca
        };
        assert!(
            BitwardenSecretsManager
                .admission_warnings(&with_provider)
                .is_empty()
        );
    }
}
