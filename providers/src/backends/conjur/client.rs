//! The Conjur client: variables by id (`property` inside JSON values), `dataFrom.extract` of a
//! JSON object of strings, and find over the account's variables by name or annotations, read
//! in pages of 100 and fetched in batches. Read-only, as upstream.

use std::collections::BTreeMap;
use std::time::Instant;

use async_trait::async_trait;
use tokio::sync::Mutex;

use super::api::Api;
use super::auth::{self, Method};
use super::error;
use super::token::AccessToken;
use crate::client::{Capabilities, SecretsClient, ValidationResult, not_implemented};
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// Variables per `/resources` page (upstream's).
const PAGE: usize = 100;

/// Most pages a find reads (a server that never ends its listing is refused).
const MAX_PAGES: usize = 10_000;

/// Variables per batch request, so that the query stays a reasonable length.
const BATCH: usize = 100;

/// The backend's name in errors.
const NAME: &str = "conjur";

/// A client of one store.
pub struct ConjurClient {
    api: Api,
    method: Method,
    credentials: CredentialResolver,
    token: Mutex<Option<AccessToken>>,
}

impl ConjurClient {
    /// A client that authenticates at once (so refused credentials fail the store).
    pub async fn connect(
        api: Api,
        method: Method,
        credentials: CredentialResolver,
    ) -> Result<Self> {
        let client = Self {
            api,
            method,
            credentials,
            token: Mutex::new(None),
        };
        client.token().await?;
        Ok(client)
    }

    /// The `Authorization` token, authenticating again when the current one is due.
    async fn token(&self) -> Result<String> {
        let mut guard = self.token.lock().await;
        let now = Instant::now();
        if let Some(token) = guard.as_ref().filter(|token| token.fresh(now)) {
            return Ok(header_text(token));
        }
        let request = auth::request(&self.method, &self.api, &self.credentials).await?;
        let raw = self
            .api
            .authenticate(request)
            .await
            .map_err(|failure| failure.context("cannot setup new Conjur client"))?;
        let token = AccessToken::parse(&raw, now)?;
        let text = header_text(&token);
        *guard = Some(token);
        Ok(text)
    }

    /// The variable `key` names, whole.
    async fn variable(&self, key: &str) -> Result<SecretValue> {
        let id = variable_id(self.api.account(), key)?;
        let token = self.token().await?;
        self.api.secret(&token, &id).await?.ok_or_else(|| {
            ProviderError::not_found(format!(
                "variable {id:?} not found in account {:?}",
                self.api.account()
            ))
        })
    }

    /// The values of the account's variables `keep` picks (by trimmed id and resource), keyed
    /// by the last part of their ids.
    async fn find(&self, keep: impl Fn(&str, &super::api::Resource) -> bool) -> Result<SecretMap> {
        let token = self.token().await?;
        let mut ids = Vec::new();
        for page in 0..MAX_PAGES {
            let resources = self.api.variables(&token, PAGE, page * PAGE).await?;
            let last = resources.len() < PAGE;
            ids.extend(
                resources
                    .into_iter()
                    .filter(|resource| keep(trim_id(&resource.id), resource))
                    .map(|resource| resource.id),
            );
            if last {
                return self.batches(&ids).await;
            }
        }
        Err(ProviderError::invalid_data(format!(
            "failed to list variables: more than {} variables",
            MAX_PAGES * PAGE
        )))
    }

    async fn batches(&self, ids: &[String]) -> Result<SecretMap> {
        let mut found = SecretMap::new();
        for chunk in ids.chunks(BATCH) {
            let token = self.token().await?;
            for (id, value) in self.api.batch(&token, chunk).await? {
                found.insert(trim_id(&id).to_owned(), value);
            }
        }
        Ok(found)
    }
}

fn header_text(token: &AccessToken) -> String {
    String::from_utf8_lossy(token.header_value.expose()).into_owned()
}

/// The unqualified id of the variable `key` names, as upstream's client qualifies it
/// (`makeFullID` with kind `variable`, then split): `id`, `variable:id` and
/// `<account>:variable:id` all name `id`; any other prefix is part of the id.
pub fn variable_id(account: &str, key: &str) -> Result<String> {
    let tokens: Vec<&str> = key.splitn(3, ':').collect();
    let (first, kind, rest) = match tokens.as_slice() {
        [id] => (account, "variable", *id),
        [kind, id] => (account, *kind, *id),
        [first, kind, id] => (*first, *kind, *id),
        _ => (account, "variable", key),
    };
    let id = if (!account.is_empty() && first != account) || kind != "variable" {
        key
    } else {
        rest
    };
    if id.is_empty() {
        return Err(ProviderError::invalid_request(format!(
            "Malformed ID '{account}:variable:': must be fully- or partially-qualified, of form \
             [<account>:]<kind>:<identifier>"
        )));
    }
    Ok(id.to_owned())
}

/// The last part of a resource id `account:kind:identifier` (upstream's
/// `trimConjurResourceName`).
fn trim_id(id: &str) -> &str {
    id.splitn(3, ':').last().unwrap_or(id)
}

/// Whether `resource` carries every tag as an annotation with that value; resources without
/// annotations never match (upstream).
fn annotated(resource: &super::api::Resource, tags: &BTreeMap<String, String>) -> bool {
    let Some(annotations) = &resource.annotations else {
        return false;
    };
    let values: BTreeMap<&str, &str> = annotations
        .iter()
        .map(|annotation| (annotation.name.as_str(), annotation.value.as_str()))
        .collect();
    tags.iter()
        .all(|(name, value)| values.get(name.as_str()) == Some(&value.as_str()))
}

#[async_trait]
impl SecretsClient for ConjurClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let value = self.variable(&remote_ref.key).await?;
        match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
            Some(property) => json_property(value.expose(), property)
                .map(SecretValue::new)
                .ok_or_else(|| error::no_property(property)),
            None => Ok(value),
        }
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let key = &remote_ref.key;
        let value = self
            .get_secret(remote_ref)
            .await
            .map_err(|failure| failure.context(format!("error getting secret {key}")))?;
        let members: BTreeMap<String, String> =
            serde_json::from_slice(value.expose()).map_err(|failure| {
                ProviderError::invalid_data(format!(
                    "unable to unmarshal secret {key}: {}",
                    crate::redact::json_error(&failure)
                ))
            })?;
        Ok(members
            .into_iter()
            .map(|(name, value)| (name, SecretValue::new(value)))
            .collect())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        if let Some(name) = &find.name {
            let matcher = name.matcher()?;
            return self.find(|id, _| matcher.is_match(id)).await;
        }
        self.find(|_, resource| annotated(resource, &find.tags))
            .await
    }

    async fn push_secret(&self, _request: &PushRequest) -> Result<()> {
        Err(not_implemented(NAME, "PushSecret"))
    }

    async fn delete_secret(&self, _remote_ref: &PushRemoteRef) -> Result<()> {
        Err(not_implemented(NAME, "DeleteSecret"))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self.variable(&remote_ref.remote_key).await {
            Ok(_) => Ok(true),
            Err(missing) if missing.is_not_found() => Ok(false),
            Err(failure) => Err(failure),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        self.token().await?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_qualified_as_upstreams_client_does() {
        let id = |key: &str| variable_id("acme", key).unwrap();
        assert_eq!(id("app/db"), "app/db");
        assert_eq!(id("variable:app/db"), "app/db");
        assert_eq!(id("acme:variable:app/db"), "app/db");
        assert_eq!(id("other:variable:app/db"), "other:variable:app/db");
        assert_eq!(id("acme:host:x"), "acme:host:x");
        assert_eq!(id("team:db"), "team:db");
        assert_eq!(id("a:b:c:d"), "a:b:c:d");
        assert!(variable_id("acme", "").is_err());
        assert!(variable_id("acme", "acme:variable:").is_err());
    }

    #[test]
    fn found_names_are_the_last_part_of_the_id() {
        assert_eq!(trim_id("acme:variable:app/db"), "app/db");
        assert_eq!(trim_id("acme:variable:a:b"), "a:b");
        assert_eq!(trim_id("plain"), "plain");
    }
}
