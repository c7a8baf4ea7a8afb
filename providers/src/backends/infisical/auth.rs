//! How a store authenticates: upstream's `perform*Login` functions, one per member of
//! `spec.provider.infisical.auth`, checked in upstream's order (the first one set wins).
//!
//! Universal auth (client id and secret), JWT, LDAP and Kubernetes auth log a machine identity
//! in with credentials read from Secrets; token auth uses a pre-issued access token as it is.
//! Kubernetes auth sends the service-account token found at the path the optional
//! `serviceAccountTokenPath` Secret key names (default: the controller's own projected token),
//! re-read at every login, as the SDK does. Azure, GCP (ID token and IAM), AWS IAM and OCI
//! auth are refused with a message naming what they need and this build lacks.

use std::path::PathBuf;

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::InfisicalProvider;
use serde_json::{Map, Value};

use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::value::SecretValue;

/// Where the kubelet mounts the controller's own service-account token.
const DEFAULT_TOKEN_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/// What a client authenticates with.
pub enum Login {
    /// A pre-issued access token (token auth): never renewed nor revoked.
    Token(SecretValue),
    /// A machine-identity login, repeated when the access token expires.
    Identity(Identity),
}

/// A machine-identity login request.
pub struct Identity {
    /// The auth method's path segment (`universal-auth`, `jwt-auth`, ...).
    pub method: &'static str,
    /// Body members (name, value); values may be credentials.
    fields: Vec<(&'static str, SecretValue)>,
    /// A file whose content is sent as `jwt` (Kubernetes auth).
    token_file: Option<PathBuf>,
}

impl Identity {
    /// The login body, with `organizationSlug` when the scope names one.
    pub fn body(&self, organization: Option<&str>) -> Result<Value> {
        let mut body = Map::new();
        for (name, value) in &self.fields {
            let text = value.expose_str().ok_or_else(|| {
                ProviderError::invalid_config(format!("{name} must be UTF-8 text"))
            })?;
            body.insert((*name).to_owned(), text.trim_end_matches('\n').into());
        }
        if let Some(path) = &self.token_file {
            body.insert(
                "jwt".to_owned(),
                crate::token_file::read_token_file(path, "service account token")?.into(),
            );
        }
        if let Some(organization) = organization.filter(|slug| !slug.is_empty()) {
            body.insert("organizationSlug".to_owned(), organization.into());
        }
        Ok(Value::Object(body))
    }
}

/// The login the spec configures, its credentials read from their Secrets.
pub async fn login(spec: &InfisicalProvider, credentials: &CredentialResolver) -> Result<Login> {
    let auth = &spec.auth;
    if let Some(universal) = &auth.universal_auth_credentials {
        let client_id = read(credentials, &universal.client_id, "clientId").await?;
        let client_secret = read(credentials, &universal.client_secret, "clientSecret").await?;
        return Ok(identity(
            "universal-auth",
            vec![("clientId", client_id), ("clientSecret", client_secret)],
        ));
    }
    if auth.azure_auth_credentials.is_some() {
        return Err(refused(
            "azureAuthCredentials",
            "Azure's instance metadata service",
        ));
    }
    if auth.gcp_id_token_auth_credentials.is_some() {
        return Err(refused(
            "gcpIdTokenAuthCredentials",
            "Google's metadata server",
        ));
    }
    if auth.gcp_iam_auth_credentials.is_some() {
        return Err(refused("gcpIamAuthCredentials", "Google IAM JWT signing"));
    }
    if let Some(jwt) = &auth.jwt_auth_credentials {
        let identity_id = read(credentials, &jwt.identity_id, "identityId").await?;
        let token = read(credentials, &jwt.jwt, "jwt").await?;
        return Ok(identity(
            "jwt-auth",
            vec![("identityId", identity_id), ("jwt", token)],
        ));
    }
    if let Some(ldap) = &auth.ldap_auth_credentials {
        let identity_id = read(credentials, &ldap.identity_id, "identityId").await?;
        let password = read(credentials, &ldap.ldap_password, "ldapPassword").await?;
        let username = read(credentials, &ldap.ldap_username, "ldapUsername").await?;
        return Ok(identity(
            "ldap-auth",
            vec![
                ("identityId", identity_id),
                ("username", username),
                ("password", password),
            ],
        ));
    }
    if auth.oci_auth_credentials.is_some() {
        return Err(refused("ociAuthCredentials", "OCI request signing"));
    }
    if let Some(kubernetes) = &auth.kubernetes_auth_credentials {
        let identity_id = read(credentials, &kubernetes.identity_id, "identityId").await?;
        let path = match kubernetes
            .service_account_token_path
            .as_ref()
            .filter(|selector| !selector.name.as_deref().unwrap_or_default().is_empty())
        {
            Some(selector) => read(credentials, selector, "serviceAccountTokenPath").await?,
            None => SecretValue::new(DEFAULT_TOKEN_PATH),
        };
        let path = path.expose_str().map(str::trim).unwrap_or_default();
        return Ok(Login::Identity(Identity {
            method: "kubernetes-auth",
            fields: vec![("identityId", identity_id)],
            token_file: Some(PathBuf::from(path)),
        }));
    }
    if auth.aws_auth_credentials.is_some() {
        return Err(refused("awsAuthCredentials", "AWS SigV4 request signing"));
    }
    if let Some(token) = &auth.token_auth_credentials {
        return Ok(Login::Token(
            read(credentials, &token.access_token, "identityId").await?,
        ));
    }
    Err(ProviderError::invalid_config(
        "authentication method not found",
    ))
}

fn identity(method: &'static str, fields: Vec<(&'static str, SecretValue)>) -> Login {
    Login::Identity(Identity {
        method,
        fields,
        token_file: None,
    })
}

/// One credential, with upstream's context (`failed to get secret data identityId: ...`).
async fn read(
    credentials: &CredentialResolver,
    selector: &SecretKeySelector,
    what: &'static str,
) -> Result<SecretValue> {
    credentials
        .selected_key(selector, Referent::Allowed)
        .await
        .map_err(|error| error.context(format!("failed to get secret data {what}")))
}

/// An auth method this build does not implement.
fn refused(member: &str, needs: &str) -> ProviderError {
    ProviderError::unsupported(format!(
        "infisical auth.{member} is not supported by this build: it needs {needs}, which this \
         provider does not implement"
    ))
}
