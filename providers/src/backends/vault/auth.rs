//! Obtaining, renewing, checking and revoking the Vault token (upstream's `auth_*.go`).
//!
//! * `tokenSecretRef`: the token read from the Secret, surrounding whitespace trimmed (it becomes
//!   a header). It belongs to the store's user: never renewed nor revoked.
//! * `appRole`: `roleId` (trimmed) or the `roleRef` Secret, and the `secretRef` Secret, posted to
//!   `auth/<path>/login`.
//! * `kubernetes`: a ServiceAccount token posted with `role` to `auth/<mountPath>/login`. The
//!   token comes from a TokenRequest for `serviceAccountRef` (its audiences, 10 minutes), the
//!   `secretRef` Secret (key `token` by default), or else the operator's own mounted token.
//! * `ldap`, `userPass`: the `secretRef` password posted to `auth/<path>/login/<username>`.
//! * `jwt`: `role` (trimmed) and a JWT from `secretRef` or a TokenRequest for
//!   `kubernetesServiceAccountToken.serviceAccountRef` (its audiences plus `audiences`, `vault`
//!   when none; `expirationSeconds`, 10 minutes by default), posted to `auth/<path>/login`.
//! * `cert`: the TLS client certificate (set on the transport) posted to `auth/<path>/login`,
//!   with `name: <vaultRole>` when set.
//! * `gcp` (with the gcpsm backend compiled in): `role` and a JWT signed for the Google service
//!   account of `secretRef` (the key signs) or `workloadIdentity` (IAM Credentials `signJwt`),
//!   see `gcpsm::vault_login_jwt`, posted to `auth/<path>/login` (`gcp` by default). Upstream's
//!   GCE login (`serviceAccountRef` or neither: the pod's metadata identity) is refused.
//!
//! Logins are sent in `auth.namespace` when set, otherwise in the store's namespace. A login the
//! server refuses as a bad request (wrong password, unknown role) is `PermissionDenied`.
//! Credentials read from Secrets are referent: a ClusterSecretStore reference without a
//! namespace resolves in the namespace of the object using the store, as upstream.

use std::time::Duration;

use external_secrets_crds::meta::SecretKeySelector;
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::config::{self, AuthMethod};
use super::http::{Call, Reply, Transport};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ErrorKind, ProviderError, Result};
use crate::value::SecretValue;

/// Lifetime of the ServiceAccount tokens requested for logins (upstream's 600 seconds).
const SERVICE_ACCOUNT_TOKEN_LIFETIME: Duration = Duration::from_secs(600);

/// Where the operator's own ServiceAccount token is mounted in its pod.
const MOUNTED_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// A Vault token and what the server said about it.
#[derive(Debug, Clone)]
pub(super) struct Token {
    /// The token (redacted when formatted).
    pub value: SecretValue,
    /// Its lease as granted; zero when it does not expire (or, for a static token, is unknown).
    pub lease: Duration,
    /// Whether `renew-self` can extend it.
    pub renewable: bool,
    /// Whether the client obtained it and so must revoke it (a login's service token).
    pub revocable: bool,
}

/// What a login needs besides the method.
pub(super) struct Login<'a> {
    /// The connection.
    pub transport: &'a Transport,
    /// Reads the referenced Secrets and requests ServiceAccount tokens.
    pub credentials: &'a CredentialResolver,
    /// The namespace logins and token operations are sent in.
    pub namespace: Option<&'a str>,
}

impl Login<'_> {
    /// A token by `method`; `None` for anonymous access.
    pub(super) async fn token(&self, method: AuthMethod<'_>) -> Result<Option<Token>> {
        let (name, path, body) = match method {
            AuthMethod::Anonymous => return Ok(None),
            AuthMethod::Token(selector) => {
                let value = self.secret(selector, None).await?;
                let trimmed = String::from_utf8_lossy(value.expose()).trim().to_owned();
                return Ok(Some(Token {
                    value: SecretValue::from(trimmed),
                    lease: Duration::ZERO,
                    renewable: false,
                    revocable: false,
                }));
            }
            AuthMethod::AppRole(app_role) => {
                let role_id = match (app_role.role_id.as_deref(), &app_role.role_ref) {
                    (Some(id), _) if !id.trim().is_empty() => id.trim().to_owned(),
                    (_, Some(role_ref)) => text(&self.secret(role_ref, None).await?),
                    _ => return Err(config::no_role_id()),
                };
                let secret_id = text(&self.secret(&app_role.secret_ref, None).await?);
                let body = json!({"role_id": role_id, "secret_id": secret_id});
                ("approle", format!("auth/{}/login", app_role.path), body)
            }
            AuthMethod::Kubernetes(kubernetes) => {
                let jwt = match (&kubernetes.service_account_ref, &kubernetes.secret_ref) {
                    (Some(account), _) => {
                        let token = self
                            .credentials
                            .service_account_token(
                                &account.name,
                                account.namespace.as_deref(),
                                &account.audiences,
                                SERVICE_ACCOUNT_TOKEN_LIFETIME,
                                Referent::Allowed,
                            )
                            .await?;
                        text(&token.token)
                    }
                    (None, Some(secret)) => text(&self.secret(secret, Some("token")).await?),
                    (None, None) => {
                        self.credentials.use_operator_identity("kubernetes auth")?;
                        mounted_token().await?
                    }
                };
                let body = json!({"role": kubernetes.role, "jwt": jwt});
                (
                    "kubernetes",
                    format!("auth/{}/login", kubernetes.mount_path),
                    body,
                )
            }
            AuthMethod::Ldap(ldap) => {
                let password = self
                    .required(&ldap.secret_ref, "Auth.Ldap.SecretRef")
                    .await?;
                let path = format!("auth/{}/login/{}", ldap.path, ldap.username.trim());
                ("ldap", path, json!({"password": password}))
            }
            AuthMethod::UserPass(user_pass) => {
                let password = self
                    .required(&user_pass.secret_ref, "Auth.UserPass.SecretRef")
                    .await?;
                let path = format!(
                    "auth/{}/login/{}",
                    user_pass.path,
                    user_pass.username.trim()
                );
                ("userpass", path, json!({"password": password}))
            }
            AuthMethod::Jwt(jwt) => {
                let token = match (&jwt.secret_ref, &jwt.kubernetes_service_account_token) {
                    (Some(secret), _) => text(&self.secret(secret, None).await?),
                    (None, Some(request)) => {
                        let account = &request.service_account_ref;
                        let mut audiences = account.audiences.clone();
                        if request.audiences.is_empty() {
                            audiences.push("vault".to_owned());
                        } else {
                            audiences.extend(request.audiences.iter().cloned());
                        }
                        let lifetime = request
                            .expiration_seconds
                            .and_then(|seconds| u64::try_from(seconds).ok())
                            .map_or(SERVICE_ACCOUNT_TOKEN_LIFETIME, Duration::from_secs);
                        let token = self
                            .credentials
                            .service_account_token(
                                &account.name,
                                account.namespace.as_deref(),
                                &audiences,
                                lifetime,
                                Referent::Allowed,
                            )
                            .await?;
                        text(&token.token)
                    }
                    (None, None) => return Err(config::no_jwt_source()),
                };
                let role = jwt.role.as_deref().unwrap_or_default().trim();
                let body = json!({"role": role, "jwt": token});
                ("jwt", format!("auth/{}/login", jwt.path), body)
            }
            AuthMethod::Cert(cert) => {
                let body = match cert.vault_role.as_deref().filter(|role| !role.is_empty()) {
                    Some(role) => json!({ "name": role }),
                    None => json!({}),
                };
                let path = if cert.path.is_empty() {
                    "cert"
                } else {
                    &cert.path
                };
                ("cert", format!("auth/{path}/login"), body)
            }
            AuthMethod::Gcp(gcp) => self.gcp(gcp).await?,
        };
        let action = format!("cannot log in to vault with {name} auth at {path}");
        let mut call = Call::new(Method::POST, &path);
        call.body = Some(body);
        call.namespace = self.namespace;
        let answer = self.transport.send(call, &action).await.map_err(|error| {
            // A refused login is answered 400 by most methods.
            if error.kind() == ErrorKind::InvalidRequest {
                ProviderError::permission_denied(error.message())
            } else {
                error
            }
        })?;
        auth_info(answer, &action).map(Some)
    }

    /// The login of `auth.gcp`: method name, path and body.
    #[cfg(feature = "gcpsm")]
    async fn gcp(
        &self,
        gcp: &external_secrets_crds::v1::VaultGcpAuth,
    ) -> Result<(&'static str, String, serde_json::Value)> {
        use crate::backends::gcpsm::{Endpoints, VaultGcpCredentials, vault_login_jwt};
        let source = match (&gcp.secret_ref, &gcp.workload_identity) {
            (Some(key), _) => VaultGcpCredentials::Key(key),
            (None, Some(identity)) => VaultGcpCredentials::WorkloadIdentity(identity),
            (None, None) => {
                return Err(ProviderError::unsupported(
                    "vault gcp auth without secretRef or workloadIdentity (a GCE login with the                      pod's own credentials) is not supported by this build",
                ));
            }
        };
        let endpoints = Endpoints::from_env(None)?;
        let role = gcp.role.trim();
        let jwt = vault_login_jwt(
            source,
            gcp.project_id.as_deref(),
            role,
            self.credentials,
            &endpoints,
        )
        .await
        .map_err(|error| error.context("failed to set up GCP authentication"))?;
        let path = if gcp.path.is_empty() {
            "gcp"
        } else {
            &gcp.path
        };
        let body = json!({"role": role, "jwt": text(&jwt)});
        Ok(("gcp", format!("auth/{path}/login"), body))
    }

    /// Unreachable without the gcpsm backend: `AuthMethod::of` refuses `gcp` then.
    #[cfg(not(feature = "gcpsm"))]
    async fn gcp(
        &self,
        _gcp: &external_secrets_crds::v1::VaultGcpAuth,
    ) -> Result<(&'static str, String, serde_json::Value)> {
        Err(ProviderError::unsupported(
            "vault auth method \"gcp\" is not supported by this build",
        ))
    }

    /// Extends `token`'s lease (`auth/token/renew-self`).
    pub(super) async fn renew(&self, token: &SecretValue) -> Result<Token> {
        let action = "cannot renew the vault token";
        let answer = self
            .self_call(Method::POST, "auth/token/renew-self", token, action)
            .await?;
        auth_info(answer, action)
    }

    /// Checks `token` is valid (`auth/token/lookup-self`).
    pub(super) async fn look_up(&self, token: Option<&SecretValue>) -> Result<()> {
        let action = "invalid vault credentials";
        let mut call = Call::new(Method::GET, "auth/token/lookup-self");
        call.namespace = self.namespace;
        call.token = token;
        match self.transport.send(call, action).await? {
            Reply::Body(_) => Ok(()),
            Reply::Missing => Err(ProviderError::permission_denied(format!(
                "{action}: token lookup is not served"
            ))),
        }
    }

    /// Revokes `token` (`auth/token/revoke-self`).
    pub(super) async fn revoke(&self, token: &SecretValue) -> Result<()> {
        let action = "error while revoking token";
        self.self_call(Method::POST, "auth/token/revoke-self", token, action)
            .await
            .map(drop)
    }

    async fn self_call(
        &self,
        method: Method,
        path: &str,
        token: &SecretValue,
        action: &str,
    ) -> Result<Reply> {
        let mut call = Call::new(method, path);
        call.namespace = self.namespace;
        call.token = Some(token);
        call.body = Some(json!({}));
        self.transport.send(call, action).await
    }

    async fn secret(
        &self,
        selector: &SecretKeySelector,
        default_key: Option<&str>,
    ) -> Result<SecretValue> {
        selected_secret(self.credentials, selector, default_key).await
    }

    /// A password from a selector the method requires.
    async fn required(&self, selector: &Option<SecretKeySelector>, field: &str) -> Result<String> {
        let selector = selector
            .as_ref()
            .ok_or_else(|| config::missing_field(field))?;
        Ok(text(&self.secret(selector, None).await?))
    }
}

/// The key `selector` names of a referenced Secret (`default_key` when it names none), read under
/// the referent rules.
pub(super) async fn selected_secret(
    credentials: &CredentialResolver,
    selector: &SecretKeySelector,
    default_key: Option<&str>,
) -> Result<SecretValue> {
    let key = selector
        .key
        .as_deref()
        .filter(|key| !key.is_empty())
        .or(default_key)
        .unwrap_or_default();
    credentials
        .secret_key(
            selector.name.as_deref().unwrap_or_default(),
            key,
            selector.namespace.as_deref(),
            Referent::Allowed,
        )
        .await
}

/// The operator's own ServiceAccount token, for Kubernetes auth without a selector (a small file
/// on a memory filesystem: read directly).
async fn mounted_token() -> Result<String> {
    std::fs::read_to_string(MOUNTED_TOKEN).map_err(|error| {
        ProviderError::invalid_config(format!(
            "cannot read Kubernetes service account token from file system: {error}"
        ))
    })
}

fn text(value: &SecretValue) -> String {
    String::from_utf8_lossy(value.expose()).into_owned()
}

#[derive(Deserialize)]
struct Answer {
    auth: Option<AuthInfo>,
}

#[derive(Deserialize)]
struct AuthInfo {
    client_token: String,
    #[serde(default)]
    lease_duration: u64,
    #[serde(default)]
    renewable: bool,
    #[serde(default)]
    token_type: Option<String>,
}

/// The token of a login or renewal answer.
fn auth_info(reply: Reply, action: &str) -> Result<Token> {
    let body = match reply {
        Reply::Body(body) => body,
        Reply::Missing => {
            return Err(ProviderError::invalid_config(format!(
                "{action}: no such auth method (404 Not Found)"
            )));
        }
    };
    let info = serde_json::from_slice::<Answer>(&body)
        .ok()
        .and_then(|answer| answer.auth)
        .filter(|info| !info.client_token.is_empty())
        .ok_or_else(|| {
            ProviderError::invalid_data(format!(
                "cannot parse Vault authentication token: {action}: the answer has no token"
            ))
        })?;
    Ok(Token {
        value: SecretValue::from(info.client_token),
        lease: Duration::from_secs(info.lease_duration),
        renewable: info.renewable,
        revocable: info.token_type.as_deref() != Some("batch"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_answers_give_the_token_and_its_lease() {
        let body = br#"{"auth":{"client_token":"s.abc","lease_duration":3600,"renewable":true,
            "token_type":"service"}}"#;
        let token = auth_info(Reply::Body(body.to_vec()), "login").unwrap();
        assert_eq!(token.value.expose(), b"s.abc");
        assert_eq!(token.lease, Duration::from_secs(3600));
        assert!(token.renewable && token.revocable);
        let batch = br#"{"auth":{"client_token":"b.x","token_type":"batch"}}"#;
        let token = auth_info(Reply::Body(batch.to_vec()), "login").unwrap();
        assert!(!token.revocable && !token.renewable);
        assert_eq!(token.lease, Duration::ZERO);
        let error = auth_info(Reply::Body(br#"{"auth":null}"#.to_vec()), "login").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidData);
        let error = auth_info(Reply::Missing, "login").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    }
}
