//! The `ACRAccessToken` generator's work, as upstream's `acr` generator: an Entra ID access token
//! for Azure Resource Manager, obtained with this backend's credentials ([`TokenSource`]),
//! exchanged at the registry's `POST /oauth2/exchange` for an ACR refresh token; with `scope`,
//! that refresh token is exchanged at `POST /oauth2/token` for an access token limited to the
//! scope (Azure's "ACR AAD-OAuth" protocol, form-encoded bodies).
//!
//! Keys: `username` (always `00000000-0000-0000-0000-000000000000`, the user ACR expects with a
//! token) and `password` (the refresh or access token).
//!
//! Auth as upstream: `servicePrincipal` (client id and secret from a Secret, `tenantId`),
//! `managedIdentity` (an `identityId` containing `/` is a resource id, `msi_res_id`, else a
//! client id), `workloadIdentity` (a TokenRequest for `serviceAccountRef` in the caller's
//! namespace, client and tenant from its annotations, or the webhook's environment).
//! `environmentType` selects the authority and the Resource Manager audience; `AzureStackCloud`
//! has none and is refused, where upstream sends an empty audience.
//!
//! Difference from upstream: workload identity asks for the `management.core.windows.net`
//! audience with one slash before `.default` (upstream's scope has two; Entra ID treats both
//! as the same resource).

use external_secrets_crds::generators::AcrAccessTokenSpec;
use external_secrets_crds::v1::{
    AzureAuthType, AzureEnvironmentType, AzureKvAuth, AzureKvProvider,
};
use std::collections::HashMap;

use super::auth::{ANNOTATION_CLIENT_ID, ANNOTATION_TENANT_ID, encode_form};
use super::error::read_body;
use super::{Endpoints, token_source};
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ErrorKind, ProviderError, Result};
use crate::transport::transport_error;
use crate::value::{SecretMap, SecretValue};

/// The user name ACR expects with a token.
pub const ACR_USERNAME: &str = "00000000-0000-0000-0000-000000000000";

/// A registry token as `spec` says, with the Secrets and ServiceAccounts it names read through
/// `credentials` (in the caller's namespace), Entra ID and IMDS reached as `endpoints` say.
pub async fn generate(
    spec: &AcrAccessTokenSpec,
    credentials: CredentialResolver,
    endpoints: Endpoints,
) -> Result<SecretMap> {
    let (kv_spec, resource) = token_spec(spec)?;
    if let Some(account) = &kv_spec.service_account_ref {
        // Upstream's generator takes both ids from the annotations only.
        let annotations = credentials
            .service_account_annotations(&account.name, None, Referent::Allowed)
            .await?;
        for annotation in [ANNOTATION_CLIENT_ID, ANNOTATION_TENANT_ID] {
            if !annotations.contains_key(annotation) {
                return Err(ProviderError::invalid_config(format!(
                    "service account is missing annotation: {annotation}"
                )));
            }
        }
    }
    let (http, tokens) = token_source(&kv_spec, credentials, endpoints).await?;
    let aad_token = tokens.token(resource).await?;
    let registry = Registry {
        http,
        name: spec.registry.trim().to_owned(),
    };
    let tenant = spec.tenant_id.clone().unwrap_or_default();
    let mut token = registry.refresh_token(&aad_token, &tenant).await?;
    if let Some(scope) = spec.scope.as_deref().filter(|scope| !scope.is_empty()) {
        token = registry.access_token(&token, scope).await?;
    }
    Ok([
        ("username".to_owned(), SecretValue::from(ACR_USERNAME)),
        ("password".to_owned(), token),
    ]
    .into_iter()
    .collect())
}

/// The generator's auth as an `azurekv` store's (so [`TokenSource`] resolves it) and the
/// resource its Entra ID token is for.
fn token_spec(spec: &AcrAccessTokenSpec) -> Result<(AzureKvProvider, &'static str)> {
    if spec.registry.trim().is_empty() {
        return Err(ProviderError::invalid_config(
            "registry: must name the registry",
        ));
    }
    let environment = spec.environment_type;
    let (resource_manager, service_management) = match environment {
        AzureEnvironmentType::PublicCloud => (
            "https://management.azure.com",
            "https://management.core.windows.net",
        ),
        AzureEnvironmentType::ChinaCloud => (
            "https://management.chinacloudapi.cn",
            "https://management.core.chinacloudapi.cn",
        ),
        AzureEnvironmentType::UsGovernmentCloud => (
            "https://management.usgovcloudapi.net",
            "https://management.core.usgovcloudapi.net",
        ),
        AzureEnvironmentType::GermanCloud => (
            "https://management.microsoftazure.de",
            "https://management.core.cloudapi.de",
        ),
        AzureEnvironmentType::AzureStackCloud => {
            return Err(ProviderError::unsupported(
                "environmentType AzureStackCloud is not supported by the ACRAccessToken generator",
            ));
        }
    };
    let mut kv = AzureKvProvider {
        environment_type: environment,
        ..AzureKvProvider::default()
    };
    let auth = &spec.auth;
    let resource = if let Some(principal) = &auth.service_principal {
        kv.auth_type = AzureAuthType::ServicePrincipal;
        kv.tenant_id = spec.tenant_id.clone();
        kv.auth_secret_ref = Some(AzureKvAuth {
            client_id: principal.secret_ref.client_id.clone(),
            client_secret: principal.secret_ref.client_secret.clone(),
            ..AzureKvAuth::default()
        });
        resource_manager
    } else if let Some(identity) = &auth.managed_identity {
        kv.auth_type = AzureAuthType::ManagedIdentity;
        kv.identity_id = identity.identity_id.clone();
        resource_manager
    } else if let Some(workload) = &auth.workload_identity {
        kv.auth_type = AzureAuthType::WorkloadIdentity;
        kv.service_account_ref = workload.service_account_ref.clone().map(|mut account| {
            // The ServiceAccount is always the caller's.
            account.namespace = None;
            account
        });
        service_management
    } else {
        return Err(ProviderError::invalid_config("unexpeted configuration"));
    };
    Ok((kv, resource))
}

/// One registry's token endpoints.
struct Registry {
    http: reqwest::Client,
    /// The login server, `NAME.azurecr.io`.
    name: String,
}

impl Registry {
    /// Exchanges an Entra ID token for an ACR refresh token.
    async fn refresh_token(&self, aad_token: &SecretValue, tenant: &str) -> Result<SecretValue> {
        let form = [
            ("grant_type", "access_token"),
            ("service", &self.name),
            ("tenant", tenant),
            ("access_token", aad_token.expose_str().unwrap_or_default()),
        ];
        self.exchange("exchange", &form, "refresh_token", |status| {
            format!(
                "count not generate refresh token, unexpected status code {status}, expected 200"
            )
        })
        .await
    }

    /// Exchanges an ACR refresh token for an access token limited to `scope`.
    async fn access_token(&self, refresh_token: &SecretValue, scope: &str) -> Result<SecretValue> {
        let form = [
            ("grant_type", "refresh_token"),
            ("service", &self.name),
            ("scope", scope),
            (
                "refresh_token",
                refresh_token.expose_str().unwrap_or_default(),
            ),
        ];
        self.exchange("token", &form, "access_token", |status| {
            format!("could not generate access token, unexpected status code: {status}")
        })
        .await
    }

    /// Posts `form` to `/oauth2/<endpoint>` and returns the answer's `field`; a status other
    /// than 200 is refused with `refused(status)` (upstream's messages).
    async fn exchange(
        &self,
        endpoint: &str,
        form: &[(&str, &str)],
        field: &str,
        refused: impl Fn(u16) -> String,
    ) -> Result<SecretValue> {
        let pairs: Vec<(String, String)> = form
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect();
        let response = self
            .http
            .post(format!("https://{}/oauth2/{endpoint}", self.name))
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(encode_form(&pairs))
            .send()
            .await
            .map_err(|error| transport_error("unable to get authorization token", error))?;
        let status = response.status();
        let body = read_body(response).await?;
        if status != reqwest::StatusCode::OK {
            return Err(status_error(status, refused(status.as_u16())));
        }
        let answer: HashMap<String, serde_json::Value> = serde_json::from_slice(&body)
            .map_err(|_| ProviderError::invalid_data("unable to get token: unreadable answer"))?;
        answer
            .get(field)
            .and_then(serde_json::Value::as_str)
            .map(SecretValue::from)
            .ok_or_else(|| ProviderError::invalid_data("unable to get token"))
    }
}

/// A registry refusal: 401/403 permission, 429 and 5xx temporary, the rest a bad request.
fn status_error(status: reqwest::StatusCode, message: String) -> ProviderError {
    let kind = ErrorKind::of_http_status(status.as_u16(), ErrorKind::InvalidRequest);
    ProviderError::new(kind, message)
}

#[cfg(test)]
mod tests {
    use super::super::config::Cloud;
    use super::*;

    fn spec(json: serde_json::Value) -> AcrAccessTokenSpec {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn each_auth_maps_to_a_store_auth_and_its_audience() {
        let principal = spec(serde_json::json!({
            "registry": "r.azurecr.io", "tenantId": "t", "environmentType": "ChinaCloud",
            "auth": {"servicePrincipal": {"secretRef": {
                "clientId": {"name": "s", "key": "id"},
                "clientSecret": {"name": "s", "key": "secret"}}}}
        }));
        let (kv, resource) = token_spec(&principal).unwrap();
        assert_eq!(kv.auth_type, AzureAuthType::ServicePrincipal);
        assert_eq!(kv.tenant_id.as_deref(), Some("t"));
        assert_eq!(resource, "https://management.chinacloudapi.cn");
        assert_eq!(Cloud::of(&kv).authority, "https://login.chinacloudapi.cn");
        let workload = spec(serde_json::json!({
            "registry": "r.azurecr.io", "tenantId": "t",
            "auth": {"workloadIdentity": {"serviceAccountRef": {"name": "sa", "namespace": "x"}}}
        }));
        let (kv, resource) = token_spec(&workload).unwrap();
        assert_eq!(kv.tenant_id, None, "the annotations name the tenant");
        assert_eq!(kv.service_account_ref.unwrap().namespace, None);
        assert_eq!(resource, "https://management.core.windows.net");
        let none = spec(serde_json::json!({"registry": "r", "auth": {}}));
        assert_eq!(
            token_spec(&none).unwrap_err().message(),
            "unexpeted configuration"
        );
        let stack = spec(serde_json::json!({
            "registry": "r", "environmentType": "AzureStackCloud",
            "auth": {"managedIdentity": {}}
        }));
        assert_eq!(
            token_spec(&stack).unwrap_err().kind(),
            ErrorKind::Unsupported
        );
    }
}
