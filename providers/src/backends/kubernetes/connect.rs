//! From the store's `server` and `auth` (or `authRef`) to a kube-rs client of the remote API
//! server (upstream's `BuildRESTConfigFromKubernetesConnection`).
//!
//! Inline auth is turned into an in-memory kubeconfig so kube-rs does the PEM and TLS work the
//! same way for both paths:
//!
//! * `auth.token.bearerToken`: the token read from the Secret (surrounding whitespace trimmed).
//! * `auth.serviceAccount`: a token requested (TokenRequest, one hour, the selector's audiences)
//!   from the operator's own cluster; the session renews it after four fifths of its lifetime.
//! * `auth.cert`: client certificate and key read from Secrets.
//! * `authRef`: a kubeconfig read from a Secret; its current context is used. Unlike upstream,
//!   a kubeconfig that would make the operator run a command (`exec`), use an auth-provider
//!   plugin or read local files (`tokenFile`, `client-certificate`, `client-key`,
//!   `certificate-authority`) is refused: whoever may write a store could otherwise run code
//!   in, or borrow the identity of, the operator's pod.
//!
//! A server URL without a scheme gets `https://` when a CA bundle or client certificate is
//! configured and `http://` otherwise, as client-go does for the default `kubernetes.default`.

use std::time::Duration;

use base64::Engine as _;
use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::KubernetesProvider;
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Map, Value, json};

use super::config::AuthMethod;
use super::error::map_error;
use crate::ca::ca_bundle;
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::value::SecretValue;

/// How long a requested ServiceAccount token is valid (upstream's value).
pub(super) const TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// How long one API response may take.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// A client of the remote API server, and when its credentials must be renewed.
pub(super) struct Connection {
    /// The client.
    pub client: kube::Client,
    /// After how long the credentials should be renewed (`None`: they do not expire here).
    pub renew_after: Option<Duration>,
}

/// Connects as `spec` says, reading credentials through `credentials`.
pub(super) async fn connect(
    spec: &KubernetesProvider,
    credentials: &CredentialResolver,
) -> Result<Connection> {
    let (kubeconfig, renew_after) = match AuthMethod::of(spec)? {
        AuthMethod::Kubeconfig(selector) => {
            (kubeconfig_from_secret(selector, credentials).await?, None)
        }
        method => inline_kubeconfig(spec, method, credentials).await?,
    };
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|error| {
                ProviderError::invalid_config(format!("failed to prepare auth: {error}"))
            })?;
    // Retries follow the store's retrySettings (see `resilient`), not kube-rs' own policy.
    config.default_retry = false;
    config.read_timeout = Some(READ_TIMEOUT);
    let client = kube::Client::try_from(config)
        .map_err(|error| map_error(error, "error configuring client"))?;
    Ok(Connection {
        client,
        renew_after,
    })
}

/// The kubeconfig of `authRef`, refused if it refers to anything outside itself.
async fn kubeconfig_from_secret(
    selector: &SecretKeySelector,
    credentials: &CredentialResolver,
) -> Result<Kubeconfig> {
    let bytes = secret_key(credentials, selector, "authRef").await?;
    let text = std::str::from_utf8(bytes.expose()).map_err(|_| {
        ProviderError::invalid_config("the kubeconfig of authRef is not valid UTF-8")
    })?;
    // The parser's message may quote the document: keep it out of the error.
    let kubeconfig = Kubeconfig::from_yaml(text)
        .map_err(|_| ProviderError::invalid_config("could not parse the kubeconfig of authRef"))?;
    refuse_local_references(&kubeconfig)?;
    Ok(kubeconfig)
}

/// Refuses kubeconfig fields that run commands or read the operator's files.
fn refuse_local_references(kubeconfig: &Kubeconfig) -> Result<()> {
    let refused = |field: &str| {
        ProviderError::invalid_config(format!(
            "the kubeconfig of authRef uses {field:?}, which is not allowed: credentials must be \
             inline"
        ))
    };
    for user in kubeconfig
        .auth_infos
        .iter()
        .filter_map(|named| named.auth_info.as_ref())
    {
        let fields = [
            ("exec", user.exec.is_some()),
            ("auth-provider", user.auth_provider.is_some()),
            ("tokenFile", user.token_file.is_some()),
            ("client-certificate", user.client_certificate.is_some()),
            ("client-key", user.client_key.is_some()),
        ];
        if let Some((field, _)) = fields.into_iter().find(|(_, set)| *set) {
            return Err(refused(field));
        }
    }
    for cluster in kubeconfig
        .clusters
        .iter()
        .filter_map(|named| named.cluster.as_ref())
    {
        if cluster.certificate_authority.is_some() {
            return Err(refused("certificate-authority"));
        }
    }
    Ok(())
}

/// An in-memory kubeconfig for `server` and inline `method`.
async fn inline_kubeconfig(
    spec: &KubernetesProvider,
    method: AuthMethod<'_>,
    credentials: &CredentialResolver,
) -> Result<(Kubeconfig, Option<Duration>)> {
    let server = spec
        .server
        .as_ref()
        .filter(|server| !server.url.is_empty())
        .ok_or_else(|| ProviderError::invalid_config("no server URL provided"))?;
    let ca = ca_bundle(
        server.ca_bundle.as_ref(),
        server.ca_provider.as_ref(),
        credentials,
    )
    .await?;
    let mut user = Map::new();
    let mut renew_after = None;
    match method {
        AuthMethod::Token(selector) => {
            let token = secret_key(credentials, selector, "bearerToken")
                .await
                .map_err(|error| error.context("could not fetch Auth.Token.BearerToken"))?;
            user.insert("token".into(), Value::String(token_text(&token)?));
        }
        AuthMethod::ServiceAccount(account) => {
            let issued = credentials
                .service_account_token(
                    &account.name,
                    account.namespace.as_deref(),
                    &account.audiences,
                    TOKEN_LIFETIME,
                    Referent::Allowed,
                )
                .await
                .map_err(|error| error.context("could not fetch Auth.ServiceAccount"))?;
            renew_after = Some(issued.lifetime * 4 / 5);
            user.insert("token".into(), Value::String(token_text(&issued.token)?));
        }
        AuthMethod::Cert(cert) => {
            let certificate = secret_key(credentials, &cert.client_cert, "clientCert")
                .await
                .map_err(|error| {
                    error.context(
                        "could not fetch client key and cert: unable to fetch client certificate",
                    )
                })?;
            let key = secret_key(credentials, &cert.client_key, "clientKey")
                .await
                .map_err(|error| {
                    error.context("could not fetch client key and cert: unable to fetch client key")
                })?;
            user.insert(
                "client-certificate-data".into(),
                base64_value(certificate.expose()),
            );
            user.insert("client-key-data".into(), base64_value(key.expose()));
        }
        AuthMethod::Kubeconfig(_) => {
            return Err(ProviderError::invalid_config("authRef is not inline auth"));
        }
    }
    let tls = ca.is_some() || matches!(method, AuthMethod::Cert(_));
    let mut cluster = Map::new();
    cluster.insert("server".into(), Value::String(server_url(&server.url, tls)));
    if let Some(ca) = &ca {
        cluster.insert("certificate-authority-data".into(), base64_value(ca));
    }
    let document = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "remote", "cluster": cluster}],
        "users": [{"name": "remote", "user": user}],
        "contexts": [{"name": "remote", "context": {"cluster": "remote", "user": "remote"}}],
        "current-context": "remote",
    });
    let kubeconfig = serde_json::from_value(document)
        .map_err(|_| ProviderError::invalid_config("could not build a kubeconfig for the store"))?;
    Ok((kubeconfig, renew_after))
}

/// One key of a credential Secret; referent auth applies (a ClusterSecretStore's selector
/// without namespace resolves in the caller's namespace).
async fn secret_key(
    credentials: &CredentialResolver,
    selector: &SecretKeySelector,
    what: &str,
) -> Result<SecretValue> {
    let name = selector
        .name
        .as_deref()
        .filter(|name| !name.is_empty())
        .ok_or_else(|| ProviderError::invalid_config(format!("{what}.name must be set")))?;
    let key = selector.key.as_deref().unwrap_or_default();
    credentials
        .secret_key(name, key, selector.namespace.as_deref(), Referent::Allowed)
        .await
}

fn token_text(token: &SecretValue) -> Result<String> {
    token
        .expose_str()
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .ok_or_else(|| ProviderError::invalid_config("the bearer token is empty or not valid text"))
}

fn base64_value(bytes: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// `url` with a scheme: client-go's default is HTTPS when TLS material is configured.
fn server_url(url: &str, tls: bool) -> String {
    if url.contains("://") {
        url.to_owned()
    } else if tls {
        format!("https://{url}")
    } else {
        format!("http://{url}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_without_scheme_default_like_client_go() {
        assert_eq!(
            server_url("kubernetes.default", true),
            "https://kubernetes.default"
        );
        assert_eq!(
            server_url("kubernetes.default", false),
            "http://kubernetes.default"
        );
        assert_eq!(
            server_url("https://10.0.0.1:6443", false),
            "https://10.0.0.1:6443"
        );
    }

    #[test]
    fn kubeconfigs_referring_to_local_files_or_commands_are_refused() {
        let with_user = |user: &str| {
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://x\n\
                 users:\n- name: u\n  user:\n    {user}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
            )
        };
        let cases = [
            (
                "exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}",
                "exec",
            ),
            (
                "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token",
                "tokenFile",
            ),
            ("client-key: /etc/key.pem", "client-key"),
        ];
        for (user, field) in cases {
            let kubeconfig = Kubeconfig::from_yaml(&with_user(user)).unwrap();
            let error = refuse_local_references(&kubeconfig).unwrap_err();
            assert!(error.message().contains(&format!("{field:?}")), "{error}");
        }
        let inline = Kubeconfig::from_yaml(&with_user("token: abc")).unwrap();
        assert!(refuse_local_references(&inline).is_ok());
    }
}
