//! The one place that knows every backend: `spec.provider` to the [`Provider`] serving it.
//!
//! [`Backend::of`] destructures `spec.provider` exhaustively, so a provider added to the API
//! does not compile until it gets a line here. Exactly one provider must be set ("secret stores
//! must only have exactly one backend specified, found N", upstream's message). A backend whose
//! cargo feature is off fails with `provider "webhook" is not compiled in`; one this crate does
//! not implement fails with `provider "ovh" is not supported by this build`. Both are
//! permanent `Unsupported` errors.

use async_trait::async_trait;
use external_secrets_crds::v1::SecretStoreProvider;

use crate::client::{Capabilities, SharedClient};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;

/// The backend a store configures: its provider paired with its section of the spec, or the
/// reason this build cannot serve it.
pub struct Backend<'a> {
    name: &'static str,
    served: Served<'a>,
}

enum Served<'a> {
    Compiled(Box<dyn Configured + 'a>),
    /// Why not, as the end of "provider NAME ...".
    Refused(&'static str),
}

const NOT_SUPPORTED: &str = "is not supported by this build";

/// Why `onepasswordSDK` is refused (issue 20): upstream drives 1Password service accounts
/// through the official SDK, whose core is closed source and shipped only as compiled artifacts
/// (a WebAssembly module the Go SDK runs under Extism, a native library in the Python wheel, a
/// wasm-bindgen build for JavaScript) with an internal, undocumented invocation interface; there
/// is no Rust SDK, the service-account protocol it speaks to 1Password.com is not published
/// (so no contract fake can check it) and no server can be run locally to test against.
const ONEPASSWORD_SDK_REFUSED: &str = "is not supported by this build: 1Password publishes no \
    Rust SDK and its SDK core (closed source, shipped as WebAssembly or native libraries for \
    Go, Python and JavaScript) has no documented interface or protocol to build and test a \
    client on; use the onepassword provider with a 1Password Connect server";

/// Served by this backend: a backend line of [`Backend::of`]. The provider's cargo feature
/// decides whether the provider value is there at all.
macro_rules! served {
    ($found:ident, $field:ident, $name:literal, $feature:literal, $provider:expr) => {
        if let Some(spec) = $field.as_deref() {
            #[cfg(feature = $feature)]
            $found.push(Backend::compiled($provider, spec));
            #[cfg(not(feature = $feature))]
            {
                let _ = spec;
                $found.push(Backend::without(
                    $name,
                    Served::Refused("is not compiled in"),
                ));
            }
        }
    };
}

/// Not implemented by this crate: a backend line of [`Backend::of`].
macro_rules! not_supported {
    ($found:ident, $($field:ident => $name:literal),+ $(,)?) => {
        $(if $field.is_some() {
            $found.push(Backend::without($name, Served::Refused(NOT_SUPPORTED)));
        })+
    };
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
        served!(found, aws, "aws", "aws", crate::backends::aws::Aws);
        served!(found, crd, "crd", "crd", crate::backends::crd::Crd);
        served!(
            found,
            azurekv,
            "azurekv",
            "azurekv",
            crate::backends::azurekv::AzureKv
        );
        served!(
            found,
            delinea,
            "delinea",
            "delinea",
            crate::backends::delinea::Delinea
        );
        served!(found, fake, "fake", "fake", crate::backends::fake::Fake);
        served!(
            found,
            doppler,
            "doppler",
            "doppler",
            crate::backends::doppler::Doppler
        );
        served!(
            found,
            gcpsm,
            "gcpsm",
            "gcpsm",
            crate::backends::gcpsm::Gcpsm
        );
        served!(
            found,
            github,
            "github",
            "github",
            crate::backends::github::Github
        );
        served!(
            found,
            gitlab,
            "gitlab",
            "gitlab",
            crate::backends::gitlab::Gitlab
        );
        served!(
            found,
            kubernetes,
            "kubernetes",
            "kubernetes",
            crate::backends::kubernetes::Kubernetes
        );
        served!(
            found,
            onepassword,
            "onepassword",
            "onepassword",
            crate::backends::onepassword::OnePassword
        );
        served!(
            found,
            open_bao,
            "openBao",
            "vault",
            crate::backends::openbao::OpenBao
        );
        served!(
            found,
            vault,
            "vault",
            "vault",
            crate::backends::vault::Vault
        );
        served!(
            found,
            webhook,
            "webhook",
            "webhook",
            crate::backends::webhook::Webhook
        );
        served!(
            found,
            infisical,
            "infisical",
            "infisical",
            crate::backends::infisical::Infisical
        );
        served!(
            found,
            akeyless,
            "akeyless",
            "akeyless",
            crate::backends::akeyless::Akeyless
        );
        served!(
            found,
            bitwardensecretsmanager,
            "bitwardensecretsmanager",
            "bitwardensecretsmanager",
            crate::backends::bitwardensecretsmanager::BitwardenSecretsManager
        );
        served!(found, ibm, "ibm", "ibm", crate::backends::ibm::Ibm);
        served!(
            found,
            oracle,
            "oracle",
            "oracle",
            crate::backends::oracle::Oracle
        );
        served!(
            found,
            keepersecurity,
            "keepersecurity",
            "keepersecurity",
            crate::backends::keepersecurity::KeeperSecurity
        );
        served!(
            found,
            secretserver,
            "secretserver",
            "secretserver",
            crate::backends::secretserver::SecretServer
        );
        served!(
            found,
            conjur,
            "conjur",
            "conjur",
            crate::backends::conjur::Conjur
        );
        if onepassword_sdk.is_some() {
            let refused = Served::Refused(ONEPASSWORD_SDK_REFUSED);
            found.push(Backend::without("onepasswordSDK", refused));
        }
        not_supported!(found,
            ovh => "ovh",
            yandexcertificatemanager => "yandexcertificatemanager",
            yandexlockbox => "yandexlockbox",
            senhasegura => "senhasegura",
            scaleway => "scaleway",
            previder => "previder",
            onboardbase => "onboardbase",
            chef => "chef",
            pulumi => "pulumi",
            fortanix => "fortanix",
            passworddepot => "passworddepot",
            passbolt => "passbolt",
            dvls => "dvls",
            beyondtrust => "beyondtrust",
            beyondtrustworkloadcredentials => "beyondtrustworkloadcredentials",
            cloudrusm => "cloudrusm",
            volcengine => "volcengine",
            ngrok => "ngrok",
            barbican => "barbican",
            nebiusmysterybox => "nebiusmysterybox",
        );
        if found.len() == 1
            && let Some(backend) = found.pop()
        {
            return Ok(backend);
        }
        Err(ProviderError::invalid_config(format!(
            "secret stores must only have exactly one backend specified, found {}",
            found.len()
        )))
    }

    #[cfg_attr(
        not(any(
            feature = "aws",
            feature = "fake",
            feature = "kubernetes",
            feature = "vault",
            feature = "webhook"
        )),
        allow(dead_code)
    )]
    fn compiled<P: Provider>(provider: P, spec: &'a P::Spec) -> Self {
        Self {
            name: P::NAME,
            served: Served::Compiled(Box::new(WithSpec { provider, spec })),
        }
    }

    fn without(name: &'static str, served: Served<'a>) -> Self {
        Self { name, served }
    }

    /// The provider's name in `spec.provider` (a bounded label).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What stores of this backend can do (upstream's `Provider.Capabilities`).
    pub fn capabilities(&self) -> Result<Capabilities> {
        self.configured()
            .map(|configured| configured.capabilities())
    }

    /// Whether a ClusterSecretStore's client depends on the namespace of the object using it,
    /// so the cache keeps one client per such namespace (see [`Provider::depends_on_caller`]).
    pub fn depends_on_caller(&self) -> bool {
        self.configured()
            .map_or(true, |configured| configured.depends_on_caller())
    }

    /// Whether upstream marks the provider maintained (see [`Provider::maintained`]); a
    /// provider this build does not serve gets no maintenance warning (it fails anyway).
    pub fn maintained(&self) -> bool {
        self.configured()
            .map_or(true, |configured| configured.maintained())
    }

    /// The provider's admission warnings for this configuration (see
    /// [`Provider::admission_warnings`]); none for a provider this build does not serve.
    pub fn admission_warnings(&self) -> Vec<String> {
        self.configured()
            .map_or_else(|_| Vec::new(), |configured| configured.admission_warnings())
    }

    /// Static checks of the backend's configuration (upstream's `ValidateStore`).
    pub fn validate(&self, store: &StoreId) -> Result<()> {
        self.configured()?.validate(store)
    }

    /// A new client of the backend (see [`Provider::new_client`]).
    pub(super) async fn new_client(&self, context: ClientContext<'_>) -> Result<SharedClient> {
        self.configured()?.new_client(context).await
    }

    fn configured(&self) -> Result<&(dyn Configured + 'a)> {
        let name = self.name;
        match &self.served {
            Served::Compiled(configured) => Ok(configured.as_ref()),
            Served::Refused(why) => Err(ProviderError::unsupported(format!(
                "provider {name:?} {why}"
            ))),
        }
    }
}

impl std::fmt::Debug for Backend<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Backend")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A [`Provider`] with its spec, behind one object-safe face.
#[async_trait]
trait Configured: Send + Sync {
    fn capabilities(&self) -> Capabilities;
    fn depends_on_caller(&self) -> bool;
    fn maintained(&self) -> bool;
    fn admission_warnings(&self) -> Vec<String>;
    fn validate(&self, store: &StoreId) -> Result<()>;
    async fn new_client(&self, context: ClientContext<'_>) -> Result<SharedClient>;
}

struct WithSpec<'a, P: Provider> {
    provider: P,
    spec: &'a P::Spec,
}

#[async_trait]
impl<P: Provider> Configured for WithSpec<'_, P> {
    fn capabilities(&self) -> Capabilities {
        self.provider.capabilities(self.spec)
    }

    fn depends_on_caller(&self) -> bool {
        self.provider.depends_on_caller(self.spec)
    }

    fn maintained(&self) -> bool {
        self.provider.maintained()
    }

    fn admission_warnings(&self) -> Vec<String> {
        self.provider.admission_warnings(self.spec)
    }

    fn validate(&self, store: &StoreId) -> Result<()> {
        self.provider.validate_store(self.spec, store)
    }

    async fn new_client(&self, context: ClientContext<'_>) -> Result<SharedClient> {
        self.provider.new_client(self.spec, context).await
    }
}
