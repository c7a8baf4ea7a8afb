//! `spec.provider.kubernetes` checked statically: which auth method, and whether its references
//! follow the store kind's namespace rules (upstream's `ValidateKubernetesConnection`, plus the
//! auth-shape checks upstream makes when building the client).

use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::{CertAuth, KubernetesProvider};

use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

/// How the provider authenticates to the remote API server.
#[derive(Debug, Clone, Copy)]
pub(super) enum AuthMethod<'a> {
    /// `auth.token.bearerToken`: a static bearer token from a Secret.
    Token(&'a SecretKeySelector),
    /// `auth.serviceAccount`: a TokenRequest for a ServiceAccount of the operator's cluster.
    ServiceAccount(&'a ServiceAccountSelector),
    /// `auth.cert`: a client certificate and key from Secrets.
    Cert(&'a CertAuth),
    /// `authRef`: a whole kubeconfig from a Secret.
    Kubeconfig(&'a SecretKeySelector),
}

impl<'a> AuthMethod<'a> {
    /// The one auth method `spec` configures, with upstream's messages when there is not
    /// exactly one.
    pub(super) fn of(spec: &'a KubernetesProvider) -> Result<Self> {
        if let Some(auth_ref) = &spec.auth_ref {
            if spec.auth.is_some() {
                return Err(ProviderError::invalid_config(
                    "authRef and inline auth cannot both be set",
                ));
            }
            return Ok(AuthMethod::Kubeconfig(auth_ref));
        }
        let Some(auth) = &spec.auth else {
            return Err(ProviderError::invalid_config("no auth provider given"));
        };
        let mut methods = Vec::with_capacity(1);
        methods.extend(
            auth.token
                .as_ref()
                .map(|token| AuthMethod::Token(&token.bearer_token)),
        );
        methods.extend(
            auth.service_account
                .as_ref()
                .map(AuthMethod::ServiceAccount),
        );
        methods.extend(auth.cert.as_ref().map(AuthMethod::Cert));
        match methods.as_slice() {
            [method] => Ok(*method),
            [] => Err(ProviderError::invalid_config("no auth provider given")),
            _ => Err(ProviderError::invalid_config(
                "multiple auth methods provided: set exactly one of Token, ServiceAccount, or Cert",
            )),
        }
    }
}

/// Whether a ClusterSecretStore's credentials resolve in the namespace of the object using it
/// (upstream's `IsReferentKubernetesAuth`): some inline credential names no namespace.
pub(crate) fn is_referent(spec: &KubernetesProvider) -> bool {
    let Some(auth) = &spec.auth else {
        return false;
    };
    let cert = auth.cert.as_ref().is_some_and(|cert| {
        cert.client_cert.namespace.is_none() || cert.client_key.namespace.is_none()
    });
    let service_account = auth
        .service_account
        .as_ref()
        .is_some_and(|account| account.namespace.is_none());
    let token = auth
        .token
        .as_ref()
        .is_some_and(|token| token.bearer_token.namespace.is_none());
    cert || service_account || token
}

/// Checks `spec` statically, with upstream's messages.
pub fn validate_store(spec: &KubernetesProvider, store: &StoreId) -> Result<()> {
    let cluster = store.kind == StoreKind::ClusterSecretStore;
    if let Some(ca_provider) = spec.server.as_ref().and_then(|s| s.ca_provider.as_ref()) {
        match (cluster, &ca_provider.namespace) {
            (true, None) => {
                return Err(ProviderError::invalid_config(
                    "CAProvider.namespace must not be empty with ClusterSecretStore",
                ));
            }
            (false, Some(_)) => {
                return Err(ProviderError::invalid_config(
                    "CAProvider.namespace must be empty with SecretStore",
                ));
            }
            _ => {}
        }
    }
    match AuthMethod::of(spec)? {
        AuthMethod::Cert(cert) => check_selector("ClientCert", &cert.client_cert, store),
        AuthMethod::Token(token) => check_selector("BearerToken", token, store),
        AuthMethod::ServiceAccount(account) => {
            check_own_namespace(account.namespace.as_deref(), store)
        }
        AuthMethod::Kubeconfig(_) => Ok(()),
    }
}

/// Upstream's checks of a credential selector: name and key set; a ClusterSecretStore names
/// the namespace, a SecretStore names none or its own.
fn check_selector(what: &str, selector: &SecretKeySelector, store: &StoreId) -> Result<()> {
    if selector.name.as_deref().unwrap_or_default().is_empty() {
        return Err(ProviderError::invalid_config(format!(
            "{what}.Name cannot be empty"
        )));
    }
    if selector.key.as_deref().unwrap_or_default().is_empty() {
        return Err(ProviderError::invalid_config(format!(
            "{what}.Key cannot be empty"
        )));
    }
    if store.kind == StoreKind::ClusterSecretStore && selector.namespace.is_none() {
        return Err(ProviderError::invalid_config(
            "cluster scope requires namespace",
        ));
    }
    check_own_namespace(selector.namespace.as_deref(), store)
}

/// A SecretStore may only name its own namespace.
fn check_own_namespace(namespace: Option<&str>, store: &StoreId) -> Result<()> {
    match (store.kind, namespace) {
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(ProviderError::invalid_config(
                "namespace should either be empty or match the namespace of the SecretStore for \
                 a namespaced SecretStore",
            ))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::{
        CaProvider, CaProviderType, KubernetesAuth, KubernetesServer, TokenAuth,
    };

    fn selector(name: &str, key: &str, namespace: Option<&str>) -> SecretKeySelector {
        SecretKeySelector {
            name: Some(name.to_owned()),
            key: Some(key.to_owned()),
            namespace: namespace.map(str::to_owned),
        }
    }

    fn with_auth(auth: KubernetesAuth) -> KubernetesProvider {
        KubernetesProvider {
            auth: Some(auth),
            ..KubernetesProvider::default()
        }
    }

    fn token(namespace: Option<&str>) -> KubernetesProvider {
        with_auth(KubernetesAuth {
            token: Some(TokenAuth {
                bearer_token: selector("creds", "token", namespace),
            }),
            ..KubernetesAuth::default()
        })
    }

    fn namespaced() -> StoreId {
        StoreId::secret_store("ns", "store")
    }

    fn message(result: Result<()>) -> String {
        result.unwrap_err().message().to_owned()
    }

    #[test]
    fn exactly_one_auth_method_is_required() {
        let none = KubernetesProvider::default();
        assert_eq!(
            message(validate_store(&none, &namespaced())),
            "no auth provider given"
        );
        let empty = with_auth(KubernetesAuth::default());
        assert_eq!(
            message(validate_store(&empty, &namespaced())),
            "no auth provider given"
        );
        let mut two = token(None);
        two.auth.as_mut().unwrap().service_account = Some(ServiceAccountSelector {
            name: "sa".into(),
            ..ServiceAccountSelector::default()
        });
        assert!(message(validate_store(&two, &namespaced())).starts_with("multiple auth methods"));
        let mut both = token(None);
        both.auth_ref = Some(selector("kubeconfig", "config", None));
        assert_eq!(
            message(validate_store(&both, &namespaced())),
            "authRef and inline auth cannot both be set"
        );
        assert!(validate_store(&token(None), &namespaced()).is_ok());
    }

    #[test]
    fn selectors_follow_the_store_kind() {
        let cluster = StoreId::cluster_secret_store("store");
        assert_eq!(
            message(validate_store(&token(None), &cluster)),
            "cluster scope requires namespace"
        );
        assert!(validate_store(&token(Some("any")), &cluster).is_ok());
        assert!(validate_store(&token(Some("ns")), &namespaced()).is_ok());
        assert!(
            message(validate_store(&token(Some("other")), &namespaced()))
                .starts_with("namespace should either be empty")
        );
        let mut nameless = token(None);
        nameless
            .auth
            .as_mut()
            .unwrap()
            .token
            .as_mut()
            .unwrap()
            .bearer_token
            .name = None;
        assert_eq!(
            message(validate_store(&nameless, &namespaced())),
            "BearerToken.Name cannot be empty"
        );
        let service_account = |namespace: Option<&str>| {
            with_auth(KubernetesAuth {
                service_account: Some(ServiceAccountSelector {
                    name: "sa".into(),
                    namespace: namespace.map(str::to_owned),
                    audiences: Vec::new(),
                }),
                ..KubernetesAuth::default()
            })
        };
        // Referent auth: a ClusterSecretStore's ServiceAccount may omit its namespace.
        assert!(validate_store(&service_account(None), &cluster).is_ok());
        assert!(validate_store(&service_account(Some("other")), &namespaced()).is_err());
    }

    #[test]
    fn ca_provider_namespace_follows_the_store_kind() {
        let with_ca = |namespace: Option<&str>| {
            let mut spec = token(Some("ns"));
            spec.server = Some(KubernetesServer {
                ca_provider: Some(CaProvider {
                    r#type: CaProviderType::ConfigMap,
                    name: "ca".into(),
                    key: Some("ca.crt".into()),
                    namespace: namespace.map(str::to_owned),
                }),
                ..KubernetesServer::default()
            });
            spec
        };
        assert_eq!(
            message(validate_store(&with_ca(Some("ns")), &namespaced())),
            "CAProvider.namespace must be empty with SecretStore"
        );
        assert!(validate_store(&with_ca(None), &namespaced()).is_ok());
        let cluster = StoreId::cluster_secret_store("store");
        assert_eq!(
            message(validate_store(&with_ca(None), &cluster)),
            "CAProvider.namespace must not be empty with ClusterSecretStore"
        );
    }

    #[test]
    fn referent_auth_is_any_inline_credential_without_namespace() {
        assert!(is_referent(&token(None)));
        assert!(!is_referent(&token(Some("ns"))));
        assert!(!is_referent(&KubernetesProvider::default()));
    }
}
