//! The signed JWT of Vault's `gcp` auth method (IAM login, `auth/<path>/login` with
//! `{"role", "jwt"}`), for the vault provider's `auth.gcp`, from the same Google credentials as
//! a store's (upstream's vault provider hands its `secretRef` or `workloadIdentity` to the gcpsm
//! token source, then signs with Vault's GCP IAM login helper):
//!
//! * a service-account key signs the JWT itself (RS256, its key id as `kid`), as Vault's gcp
//!   auth accepts for keys it can fetch from Google;
//! * with workload identity, the access token of the ServiceAccount's Google service account
//!   (its `iam.gke.io/gcp-service-account` annotation) asks IAM Credentials `signJwt` to sign.
//!
//! Claims as Vault's login helper writes them: `aud` `vault/<role>`, `sub` the service account,
//! `exp` ten minutes ahead (Vault refuses more than fifteen); and `iat`, which validators of
//! `nbf` fall back on.

use external_secrets_crds::v1::{
    GcpWorkloadIdentity, GcpsmAuth, GcpsmAuthSecretRef, GcpsmProvider,
};
use serde::Deserialize;
use serde_json::json;

use super::api;
use super::auth::{TokenSource, now_seconds, read_answer, read_key};
use super::config::{Endpoints, Parent};
use super::workload_identity::GCP_SA_ANNOTATION;
use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::value::SecretValue;

/// Life of the JWT (Vault's login helper uses ten minutes; Vault allows at most fifteen).
const JWT_LIFETIME_SECONDS: u64 = 600;

/// Google credentials the vault provider's `auth.gcp` may name.
pub enum VaultGcpCredentials<'a> {
    /// A service-account key from a Secret.
    Key(&'a GcpsmAuthSecretRef),
    /// GKE workload identity.
    WorkloadIdentity(&'a GcpWorkloadIdentity),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Signed {
    signed_jwt: String,
}

/// A JWT for Vault role `role` signed for the service account `credentials` give
/// (`project_id`: upstream's `projectID`, for workload identity's project).
pub async fn vault_login_jwt(
    credentials_of: VaultGcpCredentials<'_>,
    project_id: Option<&str>,
    role: &str,
    credentials: &CredentialResolver,
    endpoints: &Endpoints,
) -> Result<SecretValue> {
    let claims = |subject: &str| {
        let now = now_seconds();
        json!({
            "aud": format!("vault/{role}"),
            "sub": subject,
            "iat": now,
            "exp": now.saturating_add(JWT_LIFETIME_SECONDS),
        })
    };
    match credentials_of {
        VaultGcpCredentials::Key(secret_ref) => {
            let key = read_key(secret_ref, credentials).await?;
            Ok(SecretValue::new(key.sign(&claims(key.email()))?))
        }
        VaultGcpCredentials::WorkloadIdentity(identity) => {
            let annotations = credentials
                .service_account_annotations(
                    &identity.service_account_ref.name,
                    identity.service_account_ref.namespace.as_deref(),
                    Referent::Allowed,
                )
                .await?;
            let account = annotations.get(GCP_SA_ANNOTATION).ok_or_else(|| {
                ProviderError::invalid_config(format!(
                    "vault gcp auth with workload identity: the ServiceAccount needs the \
                     {GCP_SA_ANNOTATION} annotation naming the Google service account"
                ))
            })?;
            let spec = GcpsmProvider {
                auth: Some(GcpsmAuth {
                    workload_identity: Some(identity.clone()),
                    ..GcpsmAuth::default()
                }),
                project_id: project_id.map(str::to_owned),
                ..GcpsmProvider::default()
            };
            let http = api::http_client()?;
            let tokens = TokenSource::new(
                &spec,
                &Parent::of(&spec)?,
                credentials,
                endpoints,
                http.clone(),
            )
            .await?;
            let mut url = endpoints.iam_credentials.clone();
            url.set_path(&format!("v1/projects/-/serviceAccounts/{account}:signJwt"));
            let body = json!({"payload": claims(account).to_string()});
            let request = http
                .post(url)
                .header(
                    reqwest::header::AUTHORIZATION,
                    tokens.authorization().await?,
                )
                .header("content-type", "application/json")
                .body(body.to_string());
            let signed: Signed = read_answer(request, "unable to sign the vault login JWT").await?;
            Ok(SecretValue::new(signed.signed_jwt))
        }
    }
}
