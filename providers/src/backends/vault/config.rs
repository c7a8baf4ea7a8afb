//! `spec.provider.vault` checked statically: which auth method, whether its references follow
//! the store kind's namespace rules, and the settings that need no I/O (upstream's
//! `ValidateStore`, plus the checks upstream only makes when it builds the client).

use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::{
    VaultAppRole, VaultAuth, VaultCertAuth, VaultGcpAuth, VaultJwtAuth, VaultKubernetesAuth,
    VaultKvStoreVersion, VaultLdapAuth, VaultProvider, VaultUserPassAuth,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

/// Upstream's message when `auth` names no method this provider knows.
pub(super) const NO_AUTH_METHOD: &str =
    "cannot initialize Vault client: no valid auth method specified";

/// Upstream's message for an AppRole without a role id.
const NO_ROLE_ID: &str = "invalid Auth.AppRole: neither `roleId` nor `roleRef` was supplied";

/// Upstream's message for a JWT auth without a token source.
const NO_JWT_SOURCE: &str = "neither `secretRef` nor `kubernetesServiceAccountToken` was supplied \
                             as token source for jwt authentication";

/// How the client obtains its Vault token.
#[derive(Debug, Clone, Copy)]
pub(super) enum AuthMethod<'a> {
    /// No `auth`: requests carry no token (a Vault agent or proxy adds one).
    Anonymous,
    /// `tokenSecretRef`: a static token read from a Secret.
    Token(&'a SecretKeySelector),
    /// `appRole`.
    AppRole(&'a VaultAppRole),
    /// `kubernetes`: a ServiceAccount token Vault checks with a TokenReview.
    Kubernetes(&'a VaultKubernetesAuth),
    /// `ldap`.
    Ldap(&'a VaultLdapAuth),
    /// `userPass`.
    UserPass(&'a VaultUserPassAuth),
    /// `jwt`: a JWT from a Secret or a ServiceAccount TokenRequest.
    Jwt(&'a VaultJwtAuth),
    /// `cert`: the TLS client certificate itself.
    Cert(&'a VaultCertAuth),
    /// `gcp`: a JWT signed for a Google service account (needs the gcpsm backend's code).
    Gcp(&'a VaultGcpAuth),
}

impl<'a> AuthMethod<'a> {
    /// The method `auth` configures. Like upstream, when several are set the first in upstream's
    /// order wins (token, appRole, kubernetes, ldap, userPass, jwt, cert, iam, gcp).
    pub(super) fn of(auth: Option<&'a VaultAuth>) -> Result<Self> {
        let Some(auth) = auth else {
            return Ok(AuthMethod::Anonymous);
        };
        let method = if let Some(token) = &auth.token_secret_ref {
            AuthMethod::Token(token)
        } else if let Some(app_role) = &auth.app_role {
            AuthMethod::AppRole(app_role)
        } else if let Some(kubernetes) = &auth.kubernetes {
            AuthMethod::Kubernetes(kubernetes)
        } else if let Some(ldap) = &auth.ldap {
            AuthMethod::Ldap(ldap)
        } else if let Some(user_pass) = &auth.user_pass {
            AuthMethod::UserPass(user_pass)
        } else if let Some(jwt) = &auth.jwt {
            AuthMethod::Jwt(jwt)
        } else if let Some(cert) = &auth.cert {
            AuthMethod::Cert(cert)
        } else if auth.iam.is_some() || (auth.gcp.is_some() && !cfg!(feature = "gcpsm")) {
            let name = if auth.iam.is_some() { "iam" } else { "gcp" };
            return Err(ProviderError::unsupported(format!(
                "vault auth method {name:?} is not supported by this build"
            )));
        } else if let Some(gcp) = &auth.gcp {
            AuthMethod::Gcp(gcp)
        } else {
            return Err(ProviderError::invalid_config(NO_AUTH_METHOD));
        };
        Ok(method)
    }

    /// Whether the token comes from a login (and so is renewed and revoked by the client),
    /// rather than from the store's user.
    pub(super) fn logs_in(&self) -> bool {
        !matches!(self, AuthMethod::Anonymous | AuthMethod::Token(_))
    }
}

/// Whether a ClusterSecretStore's credentials resolve in the namespace of the object using it
/// (upstream's `isReferentSpec`): the selected credential names no namespace.
pub(super) fn is_referent(spec: &VaultProvider) -> bool {
    let Some(auth) = &spec.auth else {
        return false;
    };
    let secret = |selector: Option<&SecretKeySelector>| {
        selector.is_some_and(|selector| selector.namespace.is_none())
    };
    let account = |selector: Option<&ServiceAccountSelector>| {
        selector.is_some_and(|selector| selector.namespace.is_none())
    };
    secret(auth.token_secret_ref.as_ref())
        || auth
            .app_role
            .as_ref()
            .is_some_and(|role| role.secret_ref.namespace.is_none())
        || auth.kubernetes.as_ref().is_some_and(|kubernetes| {
            secret(kubernetes.secret_ref.as_ref())
                || account(kubernetes.service_account_ref.as_ref())
        })
        || auth
            .ldap
            .as_ref()
            .is_some_and(|ldap| secret(ldap.secret_ref.as_ref()))
        || auth
            .user_pass
            .as_ref()
            .is_some_and(|user_pass| secret(user_pass.secret_ref.as_ref()))
        || auth.jwt.as_ref().is_some_and(|jwt| {
            secret(jwt.secret_ref.as_ref())
                || account(
                    jwt.kubernetes_service_account_token
                        .as_ref()
                        .map(|token| &token.service_account_ref),
                )
        })
        || auth.gcp.as_ref().is_some_and(|gcp| {
            gcp.secret_ref
                .as_ref()
                .is_some_and(|key| secret(key.secret_access_key_secret_ref.as_ref()))
                || account(
                    gcp.workload_identity
                        .as_ref()
                        .map(|identity| &identity.service_account_ref),
                )
        })
        || auth
            .cert
            .as_ref()
            .is_some_and(|cert| secret(cert.secret_ref.as_ref()))
}

/// The server address: an absolute `http` or `https` URL.
pub(super) fn server_url(spec: &VaultProvider) -> Result<reqwest::Url> {
    let url = reqwest::Url::parse(spec.server.trim()).map_err(|error| {
        ProviderError::invalid_config(format!("invalid server {:?}: {error}", spec.server))
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ProviderError::invalid_config(format!(
            "invalid server {:?}: scheme {other:?} is not http or https",
            spec.server
        ))),
    }
}

/// `headers` as HTTP headers, naming the bad header (never its value).
pub(super) fn headers(spec: &VaultProvider) -> Result<HeaderMap> {
    let mut map = HeaderMap::new();
    for (name, value) in &spec.headers {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ProviderError::invalid_config(format!("invalid header name in headers: {name:?}"))
        })?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            ProviderError::invalid_config(format!("invalid value of header {name:?} in headers"))
        })?;
        map.insert(header, value);
    }
    Ok(map)
}

/// Whether pushes must carry a check-and-set version.
pub(super) fn check_and_set(spec: &VaultProvider) -> bool {
    spec.check_and_set
        .as_ref()
        .and_then(|cas| cas.required)
        .unwrap_or(false)
}

/// Checks `spec` statically, with upstream's messages.
pub fn validate_store(spec: &VaultProvider, store: &StoreId) -> Result<()> {
    server_url(spec)?;
    headers(spec)?;
    if check_and_set(spec) && spec.version == VaultKvStoreVersion::V1 {
        return Err(ProviderError::invalid_config(
            "checkAndSet is not supported with Vault KV version v1",
        ));
    }
    if let Some(tls) = &spec.tls {
        match (&tls.cert_secret_ref, &tls.key_secret_ref) {
            (Some(cert), Some(key)) => {
                check_secret("ClientTLS.ClientCert", Some(cert), store)?;
                check_secret("ClientTLS.SecretRef", Some(key), store)?;
            }
            (None, None) => {}
            _ => {
                return Err(ProviderError::invalid_config(
                    "when provided, both ClientTLS.ClientCert and ClientTLS.SecretRef should be \
                     provided",
                ));
            }
        }
    }
    match AuthMethod::of(spec.auth.as_ref())? {
        AuthMethod::Anonymous => Ok(()),
        AuthMethod::Token(token) => check_secret("Auth.TokenSecretRef", Some(token), store),
        AuthMethod::AppRole(app_role) => {
            check_secret("Auth.AppRole.SecretRef", Some(&app_role.secret_ref), store)?;
            if app_role.role_id.as_deref().is_some_and(|id| !id.is_empty()) {
                return Ok(());
            }
            match &app_role.role_ref {
                Some(role_ref) => check_secret("Auth.AppRole.RoleRef", Some(role_ref), store),
                None => Err(ProviderError::invalid_config(NO_ROLE_ID)),
            }
        }
        AuthMethod::Kubernetes(kubernetes) => {
            check_account(
                "Auth.Kubernetes.ServiceAccountRef",
                kubernetes.service_account_ref.as_ref(),
                store,
            )?;
            check_secret(
                "Auth.Kubernetes.SecretRef",
                kubernetes.secret_ref.as_ref(),
                store,
            )
        }
        AuthMethod::Ldap(ldap) => required_secret("Auth.Ldap.SecretRef", &ldap.secret_ref, store),
        AuthMethod::UserPass(user_pass) => {
            required_secret("Auth.UserPass.SecretRef", &user_pass.secret_ref, store)
        }
        AuthMethod::Jwt(jwt) => match (&jwt.secret_ref, &jwt.kubernetes_service_account_token) {
            (Some(secret), _) => check_secret("Auth.Jwt.SecretRef", Some(secret), store),
            (None, Some(token)) => check_account(
                "Auth.Jwt.KubernetesServiceAccountToken.ServiceAccountRef",
                Some(&token.service_account_ref),
                store,
            ),
            (None, None) => Err(ProviderError::invalid_config(NO_JWT_SOURCE)),
        },
        AuthMethod::Cert(cert) => {
            required_secret("Auth.Cert.ClientCert", &cert.client_cert, store)?;
            required_secret("Auth.Cert.SecretRef", &cert.secret_ref, store)
        }
        AuthMethod::Gcp(gcp) => {
            let key = gcp.secret_ref.as_ref();
            check_secret(
                "Auth.GCP.SecretRef",
                key.and_then(|key| key.secret_access_key_secret_ref.as_ref()),
                store,
            )?;
            check_account(
                "Auth.GCP.WorkloadIdentity.ServiceAccountRef",
                gcp.workload_identity
                    .as_ref()
                    .map(|identity| &identity.service_account_ref),
                store,
            )
        }
    }
}

/// The error of a JWT auth without a token source, for the login path.
pub(super) fn no_jwt_source() -> ProviderError {
    ProviderError::invalid_config(NO_JWT_SOURCE)
}

/// The error of an AppRole without a role id, for the login path.
pub(super) fn no_role_id() -> ProviderError {
    ProviderError::invalid_config(NO_ROLE_ID)
}

/// A selector the method cannot work without.
fn required_secret(
    field: &str,
    selector: &Option<SecretKeySelector>,
    store: &StoreId,
) -> Result<()> {
    match selector {
        Some(selector) => check_secret(field, Some(selector), store),
        None => Err(missing_field(field)),
    }
}

/// The error of a required selector that is not set.
pub(super) fn missing_field(field: &str) -> ProviderError {
    ProviderError::invalid_config(format!("invalid {field}: it must be set"))
}

/// Upstream's `ValidateReferentSecretSelector`: a SecretStore may only name its own namespace; a
/// ClusterSecretStore may omit it (referent auth).
fn check_secret(field: &str, selector: Option<&SecretKeySelector>, store: &StoreId) -> Result<()> {
    check_namespace(field, selector.and_then(|s| s.namespace.as_deref()), store)
}

/// The same rule for ServiceAccount selectors.
fn check_account(
    field: &str,
    selector: Option<&ServiceAccountSelector>,
    store: &StoreId,
) -> Result<()> {
    check_namespace(field, selector.and_then(|s| s.namespace.as_deref()), store)
}

fn check_namespace(field: &str, namespace: Option<&str>, store: &StoreId) -> Result<()> {
    match (store.kind, namespace) {
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(ProviderError::invalid_config(format!(
                "invalid {field}: namespace should either be empty or match the namespace of \
                 the SecretStore for a namespaced SecretStore"
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::{
        VaultCheckAndSet, VaultClientTls, VaultIamAuth, VaultKubernetesServiceAccountTokenAuth,
    };

    fn selector(namespace: Option<&str>) -> SecretKeySelector {
        SecretKeySelector {
            name: Some("creds".into()),
            key: Some("value".into()),
            namespace: namespace.map(str::to_owned),
        }
    }

    fn with_auth(auth: VaultAuth) -> VaultProvider {
        VaultProvider {
            server: "http://127.0.0.1:8200".into(),
            auth: Some(auth),
            ..VaultProvider::default()
        }
    }

    fn token(namespace: Option<&str>) -> VaultProvider {
        with_auth(VaultAuth {
            token_secret_ref: Some(selector(namespace)),
            ..VaultAuth::default()
        })
    }

    fn namespaced() -> StoreId {
        StoreId::secret_store("ns", "store")
    }

    fn message(result: Result<()>) -> String {
        result.unwrap_err().message().to_owned()
    }

    #[test]
    fn the_first_method_in_upstreams_order_wins() {
        let mut spec = token(None);
        spec.auth.as_mut().unwrap().user_pass = Some(VaultUserPassAuth {
            username: "me".into(),
            ..VaultUserPassAuth::default()
        });
        let method = AuthMethod::of(spec.auth.as_ref()).unwrap();
        assert!(matches!(method, AuthMethod::Token(_)));
        assert!(!method.logs_in());
        let anonymous = AuthMethod::of(None).unwrap();
        assert!(matches!(anonymous, AuthMethod::Anonymous));
        let empty = with_auth(VaultAuth {
            namespace: Some("ns1".into()),
            ..VaultAuth::default()
        });
        assert_eq!(
            message(validate_store(&empty, &namespaced())),
            NO_AUTH_METHOD
        );
        let iam = with_auth(VaultAuth {
            iam: Some(VaultIamAuth::default()),
            ..VaultAuth::default()
        });
        let error = validate_store(&iam, &namespaced()).unwrap_err();
        assert_eq!(error.kind(), crate::ErrorKind::Unsupported);
        assert_eq!(
            error.message(),
            r#"vault auth method "iam" is not supported by this build"#
        );
    }

    #[test]
    fn selectors_follow_the_store_kind() {
        assert!(validate_store(&token(Some("ns")), &namespaced()).is_ok());
        assert_eq!(
            message(validate_store(&token(Some("other")), &namespaced())),
            "invalid Auth.TokenSecretRef: namespace should either be empty or match the \
             namespace of the SecretStore for a namespaced SecretStore"
        );
        let cluster = StoreId::cluster_secret_store("store");
        assert!(validate_store(&token(None), &cluster).is_ok());
        assert!(validate_store(&token(Some("other")), &cluster).is_ok());
    }

    #[test]
    fn method_specific_requirements() {
        let app_role = |role_id: Option<&str>, role_ref: Option<SecretKeySelector>| {
            with_auth(VaultAuth {
                app_role: Some(VaultAppRole {
                    role_id: role_id.map(str::to_owned),
                    role_ref,
                    secret_ref: selector(None),
                    ..VaultAppRole::default()
                }),
                ..VaultAuth::default()
            })
        };
        assert_eq!(
            message(validate_store(&app_role(None, None), &namespaced())),
            NO_ROLE_ID
        );
        assert!(validate_store(&app_role(Some("id"), None), &namespaced()).is_ok());
        assert!(
            message(validate_store(
                &app_role(None, Some(selector(Some("x")))),
                &namespaced()
            ))
            .starts_with("invalid Auth.AppRole.RoleRef: namespace")
        );

        let jwt = |jwt: VaultJwtAuth| {
            with_auth(VaultAuth {
                jwt: Some(jwt),
                ..VaultAuth::default()
            })
        };
        assert_eq!(
            message(validate_store(&jwt(VaultJwtAuth::default()), &namespaced())),
            NO_JWT_SOURCE
        );
        let service_account = VaultJwtAuth {
            kubernetes_service_account_token: Some(VaultKubernetesServiceAccountTokenAuth {
                service_account_ref: ServiceAccountSelector {
                    name: "sa".into(),
                    namespace: Some("elsewhere".into()),
                    audiences: Vec::new(),
                },
                ..VaultKubernetesServiceAccountTokenAuth::default()
            }),
            ..VaultJwtAuth::default()
        };
        assert!(
            message(validate_store(&jwt(service_account), &namespaced()))
                .starts_with("invalid Auth.Jwt.KubernetesServiceAccountToken.ServiceAccountRef")
        );

        let user_pass = with_auth(VaultAuth {
            user_pass: Some(VaultUserPassAuth {
                username: "me".into(),
                ..VaultUserPassAuth::default()
            }),
            ..VaultAuth::default()
        });
        assert_eq!(
            message(validate_store(&user_pass, &namespaced())),
            "invalid Auth.UserPass.SecretRef: it must be set"
        );
    }

    #[test]
    fn store_level_settings() {
        let mut spec = token(None);
        spec.version = VaultKvStoreVersion::V1;
        spec.check_and_set = Some(VaultCheckAndSet {
            required: Some(true),
        });
        assert_eq!(
            message(validate_store(&spec, &namespaced())),
            "checkAndSet is not supported with Vault KV version v1"
        );

        let mut half_tls = token(None);
        half_tls.tls = Some(VaultClientTls {
            cert_secret_ref: Some(selector(None)),
            key_secret_ref: None,
        });
        assert!(message(validate_store(&half_tls, &namespaced())).starts_with("when provided"));

        let mut bad_server = token(None);
        bad_server.server = "vault:8200".into();
        assert!(message(validate_store(&bad_server, &namespaced())).starts_with("invalid server"));
        bad_server.server = "not a url".into();
        assert!(message(validate_store(&bad_server, &namespaced())).starts_with("invalid server"));

        let mut bad_header = token(None);
        bad_header
            .headers
            .insert("X-Secret".into(), "line\nbreak".into());
        let error = message(validate_store(&bad_header, &namespaced()));
        assert_eq!(error, r#"invalid value of header "X-Secret" in headers"#);
    }

    #[test]
    fn referent_auth_is_a_selected_credential_without_namespace() {
        assert!(is_referent(&token(None)));
        assert!(!is_referent(&token(Some("ns"))));
        assert!(!is_referent(&VaultProvider::default()));
        let kubernetes = with_auth(VaultAuth {
            kubernetes: Some(VaultKubernetesAuth {
                role: "r".into(),
                ..VaultKubernetesAuth::default()
            }),
            ..VaultAuth::default()
        });
        // Neither selector set: the operator's own token file is used, nothing is referent.
        assert!(!is_referent(&kubernetes));
    }
}
