//! From a SecretStore or ClusterSecretStore to a client of its backend.
//!
//! [`Backend::of`] destructures `spec.provider` exhaustively: a provider added to the API does not
//! compile until it is listed here. Exactly one provider must be set ("secret stores must only
//! have exactly one backend specified, found N", upstream's message). A provider whose module is
//! left out of the build by its cargo feature fails with `provider "webhook" is not compiled in`;
//! one this crate does not implement yet fails with `provider "gcpsm" is not supported by this
//! build`. Both are permanent `Unsupported` errors.
//!
//! There is no global registration: a [`Registry`] value owns what backends keep between clients
//! (the fake provider's memory) and the [`SecretSource`] used to read referenced Secrets.

use std::sync::Arc;

use external_secrets_crds::v1::{
    AwsProvider, ClusterSecretStore, FakeProvider, KubernetesProvider, OpenBaoProvider,
    SecretStore, SecretStoreProvider, SecretStoreSpec, VaultProvider, WebhookProvider,
};

use crate::client::{Capabilities, SharedClient};
use crate::credentials::{CredentialResolver, SecretSource};
use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

/// A store as the provider layer sees it: identity, spec and version.
#[derive(Debug, Clone)]
pub struct StoreRef<'a> {
    /// Kind, namespace and name.
    pub id: StoreId,
    /// The spec.
    pub spec: &'a SecretStoreSpec,
    /// Changes whenever the spec does (uid and generation): keys the client cache.
    pub version: String,
}

impl<'a> From<&'a SecretStore> for StoreRef<'a> {
    fn from(store: &'a SecretStore) -> Self {
        let metadata = &store.metadata;
        Self {
            id: StoreId::secret_store(
                metadata.namespace.clone().unwrap_or_default(),
                metadata.name.clone().unwrap_or_default(),
            ),
            spec: &store.spec,
            version: version_of(metadata),
        }
    }
}

impl<'a> From<&'a ClusterSecretStore> for StoreRef<'a> {
    fn from(store: &'a ClusterSecretStore) -> Self {
        let metadata = &store.metadata;
        Self {
            id: StoreId::cluster_secret_store(metadata.name.clone().unwrap_or_default()),
            spec: &store.spec.0,
            version: version_of(metadata),
        }
    }
}

fn version_of(metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        metadata.uid.as_deref().unwrap_or_default(),
        metadata.generation.unwrap_or_default()
    )
}

/// The backend a store configures.
#[derive(Debug, Clone, Copy)]
pub enum Backend<'a> {
    /// `spec.provider.fake`.
    Fake(&'a FakeProvider),
    /// `spec.provider.webhook`.
    Webhook(&'a WebhookProvider),
    /// `spec.provider.kubernetes`.
    Kubernetes(&'a KubernetesProvider),
    /// `spec.provider.vault`.
    Vault(&'a VaultProvider),
    /// `spec.provider.aws`.
    Aws(&'a AwsProvider),
    /// `spec.provider.openBao` (served by the vault client, read-only as upstream).
    OpenBao(&'a OpenBaoProvider),
    /// Any provider this crate does not implement, by its name in `spec.provider`.
    Unimplemented(&'static str),
}

impl<'a> Backend<'a> {
    /// The one backend `provider` configures.
    pub fn of(provider: &'a SecretStoreProvider) -> Result<Self> {
        // No `..`: a provider added to the API must be added here to compile.
        let SecretStoreProvider {
            aws,
            azurekv,
            akeyless,
            bitwardensecretsmanager,
            vault,
            ovh,
            gcpsm,
            oracle,
            ibm,
            yandexcertificatemanager,
            yandexlockbox,
            github,
            gitlab,
            onepassword,
            onepassword_sdk,
            webhook,
            kubernetes,
            crd,
            fake,
            senhasegura,
            scaleway,
            doppler,
            previder,
            onboardbase,
            keepersecurity,
            conjur,
            delinea,
            secretserver,
            chef,
            pulumi,
            fortanix,
            passworddepot,
            passbolt,
            dvls,
            infisical,
            beyondtrust,
            beyondtrustworkloadcredentials,
            cloudrusm,
            volcengine,
            ngrok,
            barbican,
            nebiusmysterybox,
            open_bao,
        } = provider;
        let mut found: Vec<Backend<'a>> = Vec::new();
        found.extend(fake.as_deref().map(Backend::Fake));
        found.extend(webhook.as_deref().map(Backend::Webhook));
        found.extend(kubernetes.as_deref().map(Backend::Kubernetes));
        found.extend(vault.as_deref().map(Backend::Vault));
        found.extend(aws.as_deref().map(Backend::Aws));
        found.extend(open_bao.as_deref().map(Backend::OpenBao));
        let unimplemented = [
            ("azurekv", azurekv.is_some()),
            ("akeyless", akeyless.is_some()),
            ("bitwardensecretsmanager", bitwardensecretsmanager.is_some()),
            ("ovh", ovh.is_some()),
            ("gcpsm", gcpsm.is_some()),
            ("oracle", oracle.is_some()),
            ("ibm", ibm.is_some()),
            (
                "yandexcertificatemanager",
                yandexcertificatemanager.is_some(),
            ),
            ("yandexlockbox", yandexlockbox.is_some()),
            ("github", github.is_some()),
            ("gitlab", gitlab.is_some()),
            ("onepassword", onepassword.is_some()),
            ("onepasswordSDK", onepassword_sdk.is_some()),
            ("crd", crd.is_some()),
            ("senhasegura", senhasegura.is_some()),
            ("scaleway", scaleway.is_some()),
            ("doppler", doppler.is_some()),
            ("previder", previder.is_some()),
            ("onboardbase", onboardbase.is_some()),
            ("keepersecurity", keepersecurity.is_some()),
            ("conjur", conjur.is_some()),
            ("delinea", delinea.is_some()),
            ("secretserver", secretserver.is_some()),
            ("chef", chef.is_some()),
            ("pulumi", pulumi.is_some()),
            ("fortanix", fortanix.is_some()),
            ("passworddepot", passworddepot.is_some()),
            ("passbolt", passbolt.is_some()),
            ("dvls", dvls.is_some()),
            ("infisical", infisical.is_some()),
            ("beyondtrust", beyondtrust.is_some()),
            (
                "beyondtrustworkloadcredentials",
                beyondtrustworkloadcredentials.is_some(),
            ),
            ("cloudrusm", cloudrusm.is_some()),
            ("volcengine", volcengine.is_some()),
            ("ngrok", ngrok.is_some()),
            ("barbican", barbican.is_some()),
            ("nebiusmysterybox", nebiusmysterybox.is_some()),
        ];
        found.extend(
            unimplemented
                .into_iter()
                .filter(|(_, set)| *set)
                .map(|(name, _)| Backend::Unimplemented(name)),
        );
        match found.as_slice() {
            [backend] => Ok(*backend),
            _ => Err(ProviderError::invalid_config(format!(
                "secret stores must only have exactly one backend specified, found {}",
                found.len()
            ))),
        }
    }

    /// The provider's name in `spec.provider` (a bounded label).
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Fake(_) => "fake",
            Backend::Webhook(_) => "webhook",
            Backend::Kubernetes(_) => "kubernetes",
            Backend::Vault(_) => "vault",
            Backend::Aws(_) => "aws",
            Backend::OpenBao(_) => "openBao",
            Backend::Unimplemented(name) => name,
        }
    }

    /// What stores of this backend can do (upstream's `Provider.Capabilities`).
    pub fn capabilities(&self) -> Result<Capabilities> {
        match self {
            Backend::Fake(_)
            | Backend::Webhook(_)
            | Backend::Kubernetes(_)
            | Backend::Vault(_)
            | Backend::Aws(_) => self.available().map(|()| Capabilities::ReadWrite),
            Backend::OpenBao(_) => self.available().map(|()| Capabilities::ReadOnly),
            Backend::Unimplemented(_) => Err(self.unavailable()),
        }
    }

    /// Whether a ClusterSecretStore's client depends on the namespace of the object using it
    /// (referent auth, or the webhook's `.remoteRef.namespace`), so the cache keeps one client
    /// per such namespace.
    pub fn depends_on_caller(&self) -> bool {
        !matches!(self, Backend::Fake(_))
    }

    /// Static checks of the backend's configuration (upstream's `ValidateStore`).
    pub fn validate(&self, store: &StoreId) -> Result<()> {
        let _ = store;
        match self {
            #[cfg(feature = "fake")]
            Backend::Fake(spec) => crate::fake::validate_store(spec),
            #[cfg(feature = "webhook")]
            Backend::Webhook(spec) => crate::webhook::validate_store(spec, store),
            #[cfg(feature = "kubernetes")]
            Backend::Kubernetes(spec) => crate::kubernetes::validate_store(spec, store),
            #[cfg(feature = "vault")]
            Backend::Vault(spec) => crate::vault::validate_store(spec, store),
            #[cfg(feature = "aws")]
            Backend::Aws(spec) => crate::aws::validate_store(spec, store),
            #[cfg(feature = "vault")]
            Backend::OpenBao(spec) => crate::openbao::validate_store(spec, store),
            _ => Err(self.unavailable()),
        }
    }

    fn available(&self) -> Result<()> {
        match self {
            #[cfg(feature = "fake")]
            Backend::Fake(_) => Ok(()),
            #[cfg(feature = "webhook")]
            Backend::Webhook(_) => Ok(()),
            #[cfg(feature = "kubernetes")]
            Backend::Kubernetes(_) => Ok(()),
            #[cfg(feature = "vault")]
            Backend::Vault(_) => Ok(()),
            #[cfg(feature = "aws")]
            Backend::Aws(_) => Ok(()),
            #[cfg(feature = "vault")]
            Backend::OpenBao(_) => Ok(()),
            _ => Err(self.unavailable()),
        }
    }

    /// Why this build cannot serve the backend.
    fn unavailable(&self) -> ProviderError {
        let compiled_in = match self {
            Backend::Fake(_) => cfg!(feature = "fake"),
            Backend::Webhook(_) => cfg!(feature = "webhook"),
            Backend::Kubernetes(_) => cfg!(feature = "kubernetes"),
            Backend::Vault(_) => cfg!(feature = "vault"),
            Backend::Aws(_) => cfg!(feature = "aws"),
            Backend::OpenBao(_) => cfg!(feature = "vault"),
            Backend::Unimplemented(_) => true,
        };
        let implemented = !matches!(self, Backend::Unimplemented(_));
        let name = self.name();
        if implemented && !compiled_in {
            ProviderError::unsupported(format!("provider {name:?} is not compiled in"))
        } else {
            ProviderError::unsupported(format!("provider {name:?} is not supported by this build"))
        }
    }
}

/// Builds backend clients; owns the state backends share between clients.
pub struct Registry {
    source: Arc<dyn SecretSource>,
    #[cfg(feature = "fake")]
    fake: crate::fake::FakeBackend,
}

impl Registry {
    /// A registry reading referenced Secrets through `source`.
    pub fn new(source: Arc<dyn SecretSource>) -> Self {
        Self {
            source,
            #[cfg(feature = "fake")]
            fake: crate::fake::FakeBackend::new(),
        }
    }

    /// Checks a store statically: one backend, available in this build, valid configuration.
    pub fn validate_store<'a>(&self, store: &StoreRef<'a>) -> Result<Backend<'a>> {
        let backend = Backend::of(&store.spec.provider)?;
        backend.validate(&store.id)?;
        Ok(backend)
    }

    /// A new client of `store`, acting for an object in `caller_namespace` (`None` when the
    /// store itself is being validated). Not rate limited nor cached: see `ClientManager`.
    pub async fn new_client(
        &self,
        store: &StoreRef<'_>,
        caller_namespace: Option<&str>,
    ) -> Result<SharedClient> {
        let backend = Backend::of(&store.spec.provider)?;
        let caller_namespace = match store.id.kind {
            StoreKind::SecretStore => store.id.namespace.clone(),
            StoreKind::ClusterSecretStore => caller_namespace.map(str::to_owned),
        };
        let credentials =
            CredentialResolver::new(self.source.clone(), store.id.clone(), caller_namespace);
        let _ = &credentials;
        match backend {
            #[cfg(feature = "fake")]
            Backend::Fake(spec) => Ok(Arc::new(self.fake.new_client(&store.id, spec)?)),
            #[cfg(feature = "webhook")]
            Backend::Webhook(spec) => Ok(Arc::new(
                crate::webhook::WebhookClient::new(spec, credentials).await?,
            )),
            #[cfg(feature = "kubernetes")]
            Backend::Kubernetes(spec) => Ok(Arc::new(
                crate::kubernetes::KubernetesClient::new(spec, credentials).await?,
            )),
            #[cfg(feature = "vault")]
            Backend::Vault(spec) => Ok(Arc::new(
                crate::vault::VaultClient::new(spec, credentials).await?,
            )),
            #[cfg(feature = "aws")]
            Backend::Aws(spec) => Ok(Arc::new(
                crate::aws::AwsClient::new(spec, credentials).await?,
            )),
            #[cfg(feature = "vault")]
            Backend::OpenBao(spec) => Ok(Arc::new(
                crate::openbao::OpenBaoClient::new(spec, credentials).await?,
            )),
            other => Err(other.unavailable()),
        }
    }

    /// Forgets what backends kept for a deleted store.
    pub fn remove_store(&self, store: &StoreId) {
        let _ = store;
        #[cfg(feature = "fake")]
        self.fake.remove_store(store);
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
