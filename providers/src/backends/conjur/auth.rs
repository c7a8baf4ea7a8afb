//! How a store authenticates, as upstream's `GetConjurClient`: the first of `auth.apikey`,
//! `auth.jwt` and `auth.cert` that is set.
//!
//! * API key: login and API key read from their Secrets, the key sent as the body of
//!   `POST /authn/{account}/{login}/authenticate` (the login query-escaped).
//! * JWT: a token from `secretRef` (key `token` when none is named) or a TokenRequest for
//!   `serviceAccountRef` (its audiences, 10 minutes), sent as the form `jwt=<token>` to
//!   `POST /authn-jwt/{serviceID}/{account}[/{hostId}]/authenticate`. Both are fetched again at
//!   every authentication, so a rotated or expired token is replaced.
//! * Cert: the client certificate and key (PEM) from their Secrets are presented in the TLS
//!   handshake of `POST /authn-cert/{serviceID}/{account}[/host/{hostId}]/authenticate`.

use std::time::Duration;

use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::{ConjurCert, ConjurProvider};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::api::{Api, Authenticate, path_escape, query_escape};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, tls_builder};
use crate::value::SecretValue;

/// Lifetime asked of TokenRequests (upstream's `JwtLifespan`).
const JWT_LIFETIME: Duration = Duration::from_secs(600);

/// How the client gets an access token.
pub enum Method {
    /// `authn` with a host or user login and its API key.
    ApiKey {
        /// The login (`host/...` or a user name).
        login: String,
        /// Its API key.
        api_key: SecretValue,
    },
    /// `authn-jwt` of a service.
    Jwt {
        /// The authenticator's service id.
        service_id: String,
        /// The host to log in as, when the URL names it.
        host_id: Option<String>,
        /// Where the JWT comes from.
        source: JwtSource,
    },
    /// `authn-cert` of a service (the certificate is in the TLS configuration).
    Cert {
        /// The authenticator's service id.
        service_id: String,
        /// The host to log in as, when the URL names it.
        host_id: Option<String>,
    },
}

/// Where a JWT comes from.
pub enum JwtSource {
    /// A key of a Secret.
    Secret(SecretKeySelector),
    /// A TokenRequest for a ServiceAccount.
    ServiceAccount(ServiceAccountSelector),
}

/// The configured method, its account, and the TLS configuration (with the client certificate
/// for cert auth).
pub struct Configured {
    /// The Conjur account.
    pub account: String,
    /// The method.
    pub method: Method,
    /// TLS trusting the store's roots.
    pub tls: rustls::ClientConfig,
}

/// Reads what the spec's auth method needs.
pub async fn configure(
    spec: &ConjurProvider,
    credentials: &CredentialResolver,
    roots: Roots<'_>,
) -> Result<Configured> {
    let auth = &spec.auth;
    if let Some(apikey) = &auth.apikey {
        let login = read(
            credentials,
            &apikey.user_ref,
            "could not get Auth.Apikey.UserRef",
        )
        .await?;
        let api_key = read(
            credentials,
            &apikey.api_key_ref,
            "could not get Auth.Apikey.ApiKeyRef",
        )
        .await?;
        let login = text(&login, "Auth.Apikey.UserRef")?;
        return Ok(Configured {
            account: apikey.account.clone(),
            method: Method::ApiKey { login, api_key },
            tls: tls_builder(roots)?.with_no_client_auth(),
        });
    }
    if let Some(jwt) = &auth.jwt {
        let source = match (&jwt.service_account_ref, &jwt.secret_ref) {
            (Some(account), _) => JwtSource::ServiceAccount(account.clone()),
            (None, Some(secret)) => {
                let mut secret = secret.clone();
                if secret.key.as_deref().unwrap_or_default().is_empty() {
                    secret.key = Some("token".to_owned());
                }
                JwtSource::Secret(secret)
            }
            (None, None) => {
                return Err(ProviderError::invalid_config(
                    "missing ServiceAccountRef or SecretRef",
                ));
            }
        };
        return Ok(Configured {
            account: jwt.account.clone(),
            method: Method::Jwt {
                service_id: jwt.service_id.clone(),
                host_id: jwt.host_id.clone().filter(|host| !host.is_empty()),
                source,
            },
            tls: tls_builder(roots)?.with_no_client_auth(),
        });
    }
    if let Some(cert) = &auth.cert {
        return Ok(Configured {
            account: cert.account.clone(),
            method: Method::Cert {
                service_id: cert.service_id.clone(),
                host_id: cert.host_id.clone().filter(|host| !host.is_empty()),
            },
            tls: client_certificate_tls(cert, credentials, roots).await?,
        });
    }
    // The store validation refuses this first.
    Err(ProviderError::invalid_config(
        "no authentication method provided",
    ))
}

/// The authenticator request of `method` (JWTs fetched now).
pub async fn request(
    method: &Method,
    api: &Api,
    credentials: &CredentialResolver,
) -> Result<Authenticate> {
    match method {
        Method::ApiKey { login, api_key } => {
            let mut path = api.authenticator("authn", None);
            path.extend([query_escape(login), "authenticate".to_owned()]);
            Ok(Authenticate {
                path,
                body: Some((api_key.clone(), "text/plain")),
            })
        }
        Method::Jwt {
            service_id,
            host_id,
            source,
        } => {
            let token = jwt(source, credentials).await?;
            let mut path = api.authenticator("authn-jwt", Some(service_id));
            path.extend(host_id.as_deref().map(path_escape));
            path.push("authenticate".to_owned());
            let body = format!("jwt={}", token.trim());
            Ok(Authenticate {
                path,
                body: Some((SecretValue::new(body), "application/x-www-form-urlencoded")),
            })
        }
        Method::Cert {
            service_id,
            host_id,
        } => {
            let mut path = api.authenticator("authn-cert", Some(service_id));
            path.extend(host_id.as_deref().map(|host| {
                if host.starts_with("host/") {
                    path_escape(host)
                } else {
                    path_escape(&format!("host/{host}"))
                }
            }));
            path.push("authenticate".to_owned());
            Ok(Authenticate { path, body: None })
        }
    }
}

/// The JWT `source` gives now.
async fn jwt(source: &JwtSource, credentials: &CredentialResolver) -> Result<String> {
    match source {
        JwtSource::Secret(selector) => {
            let token = read(credentials, selector, "could not get JWT token from secret").await?;
            text(&token, "Auth.Jwt.SecretRef")
        }
        JwtSource::ServiceAccount(account) => {
            let token = credentials
                .service_account_token(
                    &account.name,
                    account.namespace.as_deref(),
                    &account.audiences,
                    JWT_LIFETIME,
                    Referent::Allowed,
                )
                .await
                .map_err(|error| {
                    error.context(format!(
                        "cannot request Kubernetes service account token for service account {:?}",
                        account.name
                    ))
                })?;
            text(&token.token, "the service account token")
        }
    }
}

/// TLS presenting the client certificate and key of `cert`'s Secrets.
async fn client_certificate_tls(
    cert: &ConjurCert,
    credentials: &CredentialResolver,
    roots: Roots<'_>,
) -> Result<rustls::ClientConfig> {
    let chain = read(
        credentials,
        &cert.client_cert_ref,
        "could not get Auth.Cert.ClientCertRef",
    )
    .await?;
    let key = read(
        credentials,
        &cert.client_key_ref,
        "could not get Auth.Cert.ClientKeyRef",
    )
    .await?;
    let unusable = |what: &str| {
        ProviderError::invalid_config(format!(
            "cannot setup new Conjur client: cannot load client certificate: {what}"
        ))
    };
    let chain = CertificateDer::pem_slice_iter(chain.expose())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| unusable("the certificate is not PEM"))?;
    if chain.is_empty() {
        return Err(unusable("no certificate found"));
    }
    let key = PrivateKeyDer::from_pem_slice(key.expose())
        .map_err(|_| unusable("the private key is not PEM"))?;
    tls_builder(roots)?
        .with_client_auth_cert(chain, key)
        .map_err(|_| unusable("the private key does not match the certificate"))
}

/// One Secret key, with upstream's context.
async fn read(
    credentials: &CredentialResolver,
    selector: &SecretKeySelector,
    context: &str,
) -> Result<SecretValue> {
    credentials
        .selected_key(selector, Referent::Allowed)
        .await
        .map_err(|error| error.context(context))
}

/// A credential as text (logins and JWTs are).
fn text(value: &SecretValue, what: &str) -> Result<String> {
    value
        .expose_str()
        .map(|text| text.trim_end_matches(['\r', '\n']).to_owned())
        .ok_or_else(|| ProviderError::invalid_config(format!("{what} must be UTF-8 text")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::credentials::MemorySecretSource;
    use crate::store::StoreId;

    fn api() -> Api {
        let tls = tls_builder(Roots::System).unwrap().with_no_client_auth();
        Api::new("https://conjur.example.com/", "acme", tls).unwrap()
    }

    fn resolver() -> CredentialResolver {
        let source = MemorySecretSource::default().with_secret(
            "team",
            "jwt",
            &[],
            &[("token", "header.claims.signature\n")],
        );
        CredentialResolver::new(Arc::new(source), StoreId::secret_store("team", "s"), None)
    }

    async fn path_and_body(method: Method) -> (String, Option<(String, &'static str)>) {
        let request = request(&method, &api(), &resolver()).await.unwrap();
        let body = request
            .body
            .map(|(body, kind)| (String::from_utf8(body.into_bytes()).unwrap(), kind));
        (request.path.join("/"), body)
    }

    #[tokio::test]
    async fn authenticator_requests_are_upstreams() {
        let api_key = Method::ApiKey {
            login: "host/app one".into(),
            api_key: SecretValue::from("key"),
        };
        assert_eq!(
            path_and_body(api_key).await,
            (
                "authn/acme/host%2Fapp+one/authenticate".into(),
                Some(("key".into(), "text/plain"))
            )
        );
        let selector = SecretKeySelector {
            name: Some("jwt".into()),
            key: Some("token".into()),
            namespace: None,
        };
        let jwt = Method::Jwt {
            service_id: "k8s".into(),
            host_id: Some("host/app".into()),
            source: JwtSource::Secret(selector),
        };
        assert_eq!(
            path_and_body(jwt).await,
            (
                "authn-jwt/k8s/acme/host%2Fapp/authenticate".into(),
                Some((
                    "jwt=header.claims.signature".into(),
                    "application/x-www-form-urlencoded"
                ))
            )
        );
        // Cert auth adds the `host/` prefix the client wants, and sends no body.
        for host in ["app", "host/app"] {
            let cert = Method::Cert {
                service_id: "certs".into(),
                host_id: Some(host.into()),
            };
            let expected = "authn-cert/certs/acme/host%2Fapp/authenticate".to_owned();
            assert_eq!(path_and_body(cert).await, (expected, None));
        }
        let spiffe = Method::Cert {
            service_id: "certs".into(),
            host_id: None,
        };
        let expected = "authn-cert/certs/acme/authenticate".to_owned();
        assert_eq!(path_and_body(spiffe).await, (expected, None));
    }
}
