//! Google access tokens handed out as data, for the `GCRAccessToken` generator: the same token
//! sources as a store's (`auth.secretRef`, `auth.workloadIdentity`, federation, or the default
//! chain when `auth` is empty), asked once, answered as upstream's generator answers — a
//! `docker login` pair and the token's expiry in Unix seconds.

use external_secrets_crds::v1::{GcpsmAuth, GcpsmProvider};

use super::api;
use super::auth::TokenSource;
use super::config::{Endpoints, Parent};
use crate::credentials::CredentialResolver;
use crate::error::Result;
use crate::value::{SecretMap, SecretValue};

/// The registry user name that goes with a Google access token (upstream's
/// `defaultLoginUsername`).
pub const REGISTRY_USERNAME: &str = "oauth2accesstoken";

/// A fresh access token for `project_id` authenticated as `auth` says (Secrets and
/// ServiceAccounts read through `credentials`), as the keys `username` (always
/// [`REGISTRY_USERNAME`]), `password` (the token) and `expiry` (Unix seconds, UTC).
pub async fn generate_access_token(
    auth: Option<GcpsmAuth>,
    project_id: &str,
    credentials: CredentialResolver,
    endpoints: &Endpoints,
) -> Result<SecretMap> {
    let spec = GcpsmProvider {
        auth,
        project_id: Some(project_id.to_owned()),
        ..GcpsmProvider::default()
    };
    let parent = Parent::of(&spec)?;
    let tokens =
        TokenSource::new(&spec, &parent, &credentials, endpoints, api::http_client()?).await?;
    let (token, expiry) = tokens.fetch().await?;
    Ok(SecretMap::from([
        ("username".to_owned(), SecretValue::from(REGISTRY_USERNAME)),
        ("password".to_owned(), token),
        ("expiry".to_owned(), SecretValue::from(expiry.to_string())),
    ]))
}
