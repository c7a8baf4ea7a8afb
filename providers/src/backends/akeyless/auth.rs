//! How a client gets its Akeyless token: upstream's `TokenFromSecretRef` and `GetToken`, asked
//! again for every operation as upstream does (`POST /auth`).
//!
//! * `authSecretRef.secretRef`: `accessID`, `accessType` and (for `access_key`/`api_key`)
//!   `accessTypeParam`, the access key, read from Secrets.
//! * `authSecretRef.kubernetesAuth`: `accessID` and `k8sConfName` with a service-account JWT
//!   (base64) from a TokenRequest for `serviceAccountRef` (600 s, its audiences), a Secret's
//!   key (`token` by default), or the controller's own token file.
//! * Cloud-identity access types (`azure_ad`, `aws_iam`, `gcp`) are refused with a message
//!   naming what they need and this build lacks.

use std::time::Duration;

use base64::Engine as _;
use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::AkeylessProvider;
use serde::Deserialize;
use serde_json::Map;

use super::api::Api;
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::value::SecretValue;

/// Where the kubelet mounts the controller's own service-account token.
const DEFAULT_TOKEN_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// Lifetime asked for service-account tokens (upstream's 600 s).
const TOKEN_LIFETIME: Duration = Duration::from_secs(600);

/// How a client authenticates.
pub enum Login {
    /// An access id with an access key.
    AccessKey {
        /// The access id.
        id: SecretValue,
        /// `access_key` or `api_key`.
        kind: String,
        /// The access key.
        key: SecretValue,
    },
    /// Kubernetes auth: access id, auth config name and where the JWT comes from.
    Kubernetes {
        /// The access id.
        id: String,
        /// The gateway's Kubernetes auth config name.
        config: String,
        /// The JWT's source.
        jwt: JwtSource,
        /// Resolves the Secret or ServiceAccount the JWT comes from.
        credentials: CredentialResolver,
    },
}

/// Where a Kubernetes-auth JWT comes from.
pub enum JwtSource {
    /// A TokenRequest for a ServiceAccount.
    ServiceAccount(ServiceAccountSelector),
    /// A key of a Secret.
    Secret(SecretKeySelector),
    /// The controller's own token file.
    File,
}

/// The login the spec configures, its Secrets read now.
pub async fn login(spec: &AkeylessProvider, credentials: &CredentialResolver) -> Result<Login> {
    let auth = &spec.auth_secret_ref;
    if let Some(kubernetes) = &auth.kubernetes_auth {
        let jwt = match (&kubernetes.service_account_ref, &kubernetes.secret_ref) {
            (Some(account), _) => JwtSource::ServiceAccount(account.clone()),
            (None, Some(secret)) => JwtSource::Secret(secret.clone()),
            (None, None) => JwtSource::File,
        };
        return Ok(Login::Kubernetes {
            id: kubernetes.access_id.clone(),
            config: kubernetes.k8s_conf_name.clone(),
            jwt,
            credentials: credentials.clone(),
        });
    }
    let secret_ref = auth.secret_ref.clone().unwrap_or_default();
    let id = read(credentials, secret_ref.access_id.as_ref(), "accessID").await?;
    let kind = read(credentials, secret_ref.access_type.as_ref(), "AccessType").await?;
    let key = match secret_ref
        .access_type_param
        .as_ref()
        .filter(|selector| !selector.name.as_deref().unwrap_or_default().is_empty())
    {
        Some(selector) => read(credentials, Some(selector), "AccessTypeParam").await?,
        None => SecretValue::default(),
    };
    let kind = kind.expose_str().unwrap_or_default().trim().to_owned();
    if id.is_empty() {
        return Err(ProviderError::invalid_config("missing SecretAccessKey"));
    }
    if kind.is_empty() {
        return Err(ProviderError::invalid_config("missing AccessKeyID"));
    }
    match kind.as_str() {
        "api_key" | "access_key" if key.is_empty() => Err(ProviderError::invalid_config(
            "missing AccessTypeParam for Akeyless access key auth",
        )),
        "api_key" | "access_key" => Ok(Login::AccessKey { id, kind, key }),
        "azure_ad" | "aws_iam" | "gcp" => Err(ProviderError::unsupported(format!(
            "akeyless access type {kind:?} is not supported by this build: it needs the \
             {kind} cloud identity, which this provider does not implement"
        ))),
        other => Err(ProviderError::invalid_config(format!(
            "Require Cloud ID unable to determine provider: {other}"
        ))),
    }
}

impl Login {
    /// A fresh token (`POST /auth`).
    pub async fn token(&self, api: &Api) -> Result<String> {
        #[derive(Deserialize)]
        struct AuthOutput {
            token: String,
        }
        let mut body = Map::new();
        match self {
            Login::AccessKey { id, kind, key } => {
                body.insert("access-id".into(), text(id)?.into());
                body.insert("access-type".into(), kind.clone().into());
                body.insert("access-key".into(), text(key)?.into());
            }
            Login::Kubernetes {
                id,
                config,
                jwt,
                credentials,
            } => {
                let jwt = jwt.read(credentials).await.map_err(|error| {
                    error.context(format!(
                        "failed to read JWT with Kubernetes Auth from {DEFAULT_TOKEN_FILE}"
                    ))
                })?;
                let encoded = base64::engine::general_purpose::STANDARD.encode(jwt.trim());
                body.insert("access-id".into(), id.clone().into());
                body.insert("access-type".into(), "k8s".into());
                body.insert("k8s-service-account-token".into(), encoded.into());
                body.insert("k8s-auth-config-name".into(), config.clone().into());
            }
        }
        let output: AuthOutput = api
            .json("auth", body, None, "authentication failed")
            .await?;
        Ok(output.token)
    }
}

impl JwtSource {
    async fn read(&self, credentials: &CredentialResolver) -> Result<String> {
        match self {
            JwtSource::ServiceAccount(account) => {
                let token = credentials
                    .service_account_token(
                        &account.name,
                        account.namespace.as_deref(),
                        &account.audiences,
                        TOKEN_LIFETIME,
                        Referent::Allowed,
                    )
                    .await
                    .map_err(|error| {
                        error.context(format!(
                            "cannot request Kubernetes service account token for service \
                             account {:?}",
                            account.name
                        ))
                    })?;
                text(&token.token).map(str::to_owned)
            }
            JwtSource::Secret(selector) => {
                let key = selector.key.as_deref().filter(|key| !key.is_empty());
                let value = credentials
                    .secret_key(
                        selector.name.as_deref().unwrap_or_default(),
                        key.unwrap_or("token"),
                        selector.namespace.as_deref(),
                        Referent::Allowed,
                    )
                    .await?;
                text(&value).map(str::to_owned)
            }
            JwtSource::File => crate::token_file::read_token_file(
                std::path::Path::new(DEFAULT_TOKEN_FILE),
                "service account token",
            ),
        }
    }
}

/// One credential, with upstream's context (`could not fetch accessID secret: ...`).
async fn read(
    credentials: &CredentialResolver,
    selector: Option<&SecretKeySelector>,
    what: &str,
) -> Result<SecretValue> {
    let selector = selector.cloned().unwrap_or_default();
    credentials
        .selected_key(&selector, Referent::Allowed)
        .await
        .map_err(|error| error.context(format!("could not fetch {what} secret")))
}

fn text(value: &SecretValue) -> Result<&str> {
    value
        .expose_str()
        .map(str::trim)
        .ok_or_else(|| ProviderError::invalid_config("akeyless credentials must be UTF-8 text"))
}
