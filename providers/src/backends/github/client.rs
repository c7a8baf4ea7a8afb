//! The GitHub client: PushSecret, delete and exists on one scope's Actions secrets; reads are
//! refused as upstream (see the module doc of the backend for the rules).

use std::collections::BTreeMap;

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::api::{Api, RemoteSecret, Scope};
use super::{error, seal};
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The visibility of organization secrets that restricts them to listed repositories.
const SELECTED: &str = "selected";

/// A client of one store's scope.
pub struct GithubClient {
    api: Api,
    scope: Scope,
    visibility: Option<&'static str>,
    cluster_store: bool,
}

impl GithubClient {
    /// A client writing to `scope`; `visibility` is the store's `orgSecretVisibility`;
    /// ClusterSecretStores are not validated (as upstream).
    pub fn new(
        api: Api,
        scope: Scope,
        visibility: Option<&'static str>,
        cluster_store: bool,
    ) -> Self {
        Self {
            api,
            scope,
            visibility,
            cluster_store,
        }
    }

    /// The sealed-value body of a PUT of `request`'s value over `existing`.
    async fn body(
        &self,
        request: &PushRequest,
        existing: Option<&RemoteSecret>,
    ) -> Result<serde_json::Value> {
        let public_key = self.api.public_key(&self.scope).await?;
        let value = value_of(request)?;
        let sealed = seal::seal(&public_key.key, value.expose())?;
        let mut body = serde_json::json!({
            "encrypted_value": sealed,
            "key_id": public_key.key_id,
        });
        let Scope::Organization(org) = &self.scope else {
            return Ok(body);
        };
        let visibility = visibility(self.visibility, existing);
        body["visibility"] = visibility.clone().into();
        // GitHub reads an update without `selected_repository_ids` as "no repositories": keep
        // the ones a `selected` secret has.
        if visibility == SELECTED
            && let Some(existing) = existing
        {
            let ids = self.api.selected_repositories(org, &existing.name).await?;
            body["selected_repository_ids"] = ids.into();
        }
        Ok(body)
    }
}

/// The visibility of a pushed organization secret: the store's, else the existing secret's,
/// else `all`.
fn visibility(configured: Option<&str>, existing: Option<&RemoteSecret>) -> String {
    configured
        .or_else(|| existing.and_then(|secret| secret.visibility.as_deref()))
        .filter(|visibility| !visibility.is_empty())
        .unwrap_or("all")
        .to_owned()
}

/// The bytes pushed: the `secretKey`'s value, or the whole Secret as Go's `json.Marshal` writes
/// a `map[string][]byte` (keys sorted, values base64).
fn value_of(request: &PushRequest) -> Result<SecretValue> {
    if let Some(key) = &request.secret_key {
        return request.secret_data.get(key).cloned().ok_or_else(|| {
            ProviderError::invalid_request(format!("key {key} not found in secret"))
        });
    }
    let object: BTreeMap<&str, String> = request
        .secret_data
        .iter()
        .map(|(key, value)| (key.as_str(), STANDARD.encode(value.expose())))
        .collect();
    serde_json::to_vec(&object)
        .map(SecretValue::new)
        .map_err(|failure| {
            ProviderError::invalid_request(format!("json.Marshal failed with error {failure}"))
        })
}

#[async_trait]
impl SecretsClient for GithubClient {
    async fn get_secret(&self, _remote_ref: &RemoteRef) -> Result<SecretValue> {
        Err(error::write_only())
    }

    async fn get_secret_map(&self, _remote_ref: &RemoteRef) -> Result<SecretMap> {
        Err(error::write_only())
    }

    async fn get_all_secrets(&self, _find: &Find) -> Result<SecretMap> {
        Err(error::write_only())
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let name = &request.remote_ref.remote_key;
        let existing = self.api.secret(&self.scope, name).await?;
        let body = self.body(request, existing.as_ref()).await?;
        // An existing secret is updated under the name GitHub spells it with.
        let name = existing
            .as_ref()
            .map_or(name.as_str(), |secret| secret.name.as_str());
        self.api.put_secret(&self.scope, name, &body).await
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        self.api
            .delete_secret(&self.scope, &remote_ref.remote_key)
            .await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let found = self.api.secret(&self.scope, &remote_ref.remote_key).await?;
        Ok(found.is_some())
    }

    async fn validate(&self) -> Result<ValidationResult> {
        if self.cluster_store {
            return Ok(ValidationResult::Unknown);
        }
        self.api.list_secrets(&self.scope).await?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::WriteOnly
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn existing(visibility: Option<&str>) -> RemoteSecret {
        RemoteSecret {
            name: "X".into(),
            visibility: visibility.map(str::to_owned),
        }
    }

    #[test]
    fn visibility_is_the_stores_then_the_existing_then_all() {
        assert_eq!(
            visibility(Some("private"), Some(&existing(Some("selected")))),
            "private"
        );
        assert_eq!(
            visibility(None, Some(&existing(Some("selected")))),
            "selected"
        );
        assert_eq!(visibility(None, Some(&existing(None))), "all");
        assert_eq!(visibility(None, None), "all");
    }

    #[test]
    fn whole_secrets_are_json_of_base64_values() {
        let data: SecretMap = [
            ("b".to_owned(), SecretValue::from("2")),
            ("a".to_owned(), SecretValue::new(vec![0xff])),
        ]
        .into();
        let whole = PushRequest {
            secret_key: None,
            ..PushRequest::single(data.clone(), "a", "REMOTE")
        };
        assert_eq!(
            value_of(&whole).unwrap().expose(),
            br#"{"a":"/w==","b":"Mg=="}"#
        );
        let one = PushRequest::single(data.clone(), "b", "REMOTE");
        assert_eq!(value_of(&one).unwrap().expose(), b"2");
        let missing = PushRequest::single(data, "c", "REMOTE");
        assert_eq!(
            value_of(&missing).unwrap_err().message(),
            "key c not found in secret"
        );
    }
}
