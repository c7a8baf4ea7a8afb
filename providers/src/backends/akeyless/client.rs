//! The Akeyless client: items read by type (static, dynamic, rotated, certificate), `property`
//! as a gjson path, find by name or tags, and push/delete of JSON members (see the backend's
//! module doc for the rules).

use std::collections::BTreeMap;

use async_trait::async_trait;
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::api::Api;
use super::auth::Login;
use super::error;
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::{json_property, raw_to_bytes};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The tag upstream puts on the items it creates, and requires before deleting one.
pub const MANAGED_TAG: &str = "k8s-external-secrets";

/// How long `validate` waits for a TCP connection (upstream's 15 s).
const VALIDATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// A client of one store.
pub struct AkeylessClient {
    api: Api,
    login: Login,
    ignore_cache: bool,
}

/// What `describe-item` tells about an item.
#[derive(Debug, Default, Deserialize)]
struct Item {
    #[serde(default)]
    item_name: Option<String>,
    #[serde(default)]
    item_type: String,
    #[serde(default)]
    item_tags: Option<Vec<String>>,
}

impl AkeylessClient {
    /// A client calling `api`, authenticating with `login` for every operation.
    pub fn new(api: Api, login: Login, ignore_cache: bool) -> Self {
        Self {
            api,
            login,
            ignore_cache,
        }
    }

    async fn token(&self) -> Result<String> {
        self.login.token(&self.api).await
    }

    /// The item `name`; `NotFound` when the API answers 404.
    async fn describe(&self, token: &str, name: &str) -> Result<Item> {
        let body = object(json!({ "name": name }));
        let (status, bytes) = self.api.call("describe-item", body, Some(token)).await?;
        if status == StatusCode::NOT_FOUND {
            return Err(error::item_not_exists());
        }
        if !status.is_success() {
            let action = format!("can't describe item: {name}, error");
            return Err(error::status(&action, status, &bytes));
        }
        serde_json::from_slice(&bytes)
            .map_err(|_| ProviderError::invalid_data(format!("can't describe item: {name}")))
    }

    /// The value of item `name` as upstream's `GetSecretByType` renders it.
    async fn value(&self, token: &str, name: &str, version: i32) -> Result<String> {
        let item = self.describe(token, name).await?;
        if item.item_name.is_none() {
            return Err(error::item_not_exists());
        }
        let cache = self.ignore_cache.then_some("true");
        match item.item_type.as_str() {
            "STATIC_SECRET" => {
                let body = json!({"names": [name], "version": version, "ignore-cache": cache});
                let out: Map<String, Value> = self
                    .api
                    .json(
                        "get-secret-value",
                        object(body),
                        Some(token),
                        "can't get secret value",
                    )
                    .await?;
                match out.get(name) {
                    Some(Value::String(value)) => Ok(value.clone()),
                    Some(_) => Err(ProviderError::invalid_data(format!(
                        "can't convert secret value to string: {name}"
                    ))),
                    None => Err(ProviderError::invalid_data(format!(
                        "can't get secret: {name}"
                    ))),
                }
            }
            "DYNAMIC_SECRET" => {
                let action = "can't get dynamic secret value";
                let body = object(json!({ "name": name }));
                let out: Value = self
                    .api
                    .json("get-dynamic-secret-value", body, Some(token), action)
                    .await?;
                Ok(out.to_string())
            }
            "ROTATED_SECRET" => {
                let action = "can't get rotated secret value";
                let body = json!({"names": name, "version": version, "ignore-cache": cache});
                let out: Map<String, Value> = self
                    .api
                    .json(
                        "get-rotated-secret-value",
                        object(body),
                        Some(token),
                        action,
                    )
                    .await?;
                rotated(out)
            }
            "CERTIFICATE" => {
                let action = "can't get certificate value";
                let body = json!({"name": name, "version": version, "ignore-cache": cache});
                let out: Value = self
                    .api
                    .json("get-certificate-value", object(body), Some(token), action)
                    .await?;
                Ok(out.to_string())
            }
            other => Err(ProviderError::invalid_data(format!(
                "invalid item type: {other}"
            ))),
        }
    }

    /// The names of the static, dynamic and rotated secrets under `path` (with `tag`).
    async fn list(&self, token: &str, path: &str, tag: &str) -> Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Listed {
            #[serde(default)]
            items: Option<Vec<Item>>,
        }
        let body = json!({
            "filter": path,
            "type": ["static-secret", "dynamic-secret", "rotated-secret"],
            "minimal-view": tag.is_empty(),
            "tag": tag,
        });
        let listed: Listed = self
            .api
            .json(
                "list-items",
                object(body),
                Some(token),
                "can't get secrets list",
            )
            .await?;
        Ok(listed
            .items
            .unwrap_or_default()
            .into_iter()
            .filter_map(|item| item.item_name)
            .filter(|name| path.is_empty() || name.starts_with(path))
            .collect())
    }

    /// The values of `names` (empty values left out), as upstream's find.
    async fn values(&self, token: &str, names: Vec<String>) -> Result<SecretMap> {
        let mut found = SecretMap::new();
        for name in names {
            let value = self.value(token, &name, 0).await?;
            if !value.is_empty() {
                found.insert(name, SecretValue::new(value));
            }
        }
        Ok(found)
    }

    /// The current value of `name` as a JSON object; `None` when the item does not exist.
    async fn current_object(
        &self,
        token: &str,
        name: &str,
        invalid: &'static str,
    ) -> Result<Option<(String, Map<String, Value>)>> {
        match self.value(token, name, 0).await {
            Ok(text) => serde_json::from_str(&text)
                .map(|object| Some((text, object)))
                .map_err(|_| ProviderError::invalid_request(invalid)),
            Err(missing) if missing.is_not_found() => Ok(None),
            Err(failure) => Err(failure),
        }
    }

    async fn write(&self, token: &str, command: &str, body: Value) -> Result<()> {
        let action = format!("akeyless {command}");
        let _: Value = self
            .api
            .json(command, object(body), Some(token), &action)
            .await?;
        Ok(())
    }
}

/// A JSON object literal as the body map.
fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map.into_iter().filter(|(_, v)| !v.is_null()).collect(),
        _ => Map::new(),
    }
}

/// Upstream's rendering of `get-rotated-secret-value`: `value.payload` as text, else
/// `value.target_value` or `value` as JSON, else the whole answer.
fn rotated(out: Map<String, Value>) -> Result<String> {
    let Some(value) = out.get("value") else {
        return Ok(Value::Object(out).to_string());
    };
    let Value::Object(value) = value else {
        return Err(ProviderError::invalid_data(
            "failure converting key from gsvOut",
        ));
    };
    Ok(match (value.get("payload"), value.get("target_value")) {
        (Some(Value::String(payload)), _) => payload.clone(),
        (Some(payload), _) => payload.to_string(),
        (None, Some(target)) => target.to_string(),
        (None, None) => Value::Object(value.clone()).to_string(),
    })
}

/// `property` of `value` (gjson; a dotted name is first tried as one key, as upstream).
fn select(value: &str, property: &str, key: &str) -> Result<SecretValue> {
    if property.contains('.')
        && let Some(found) = json_property(value.as_bytes(), &property.replace('.', "\\."))
    {
        return Ok(SecretValue::new(found));
    }
    json_property(value.as_bytes(), property)
        .map(SecretValue::new)
        .ok_or_else(|| {
            ProviderError::not_found(format!("key {property} does not exist in value {key}"))
        })
}

/// A find path as upstream normalises it: leading and trailing `/`.
fn search_path(path: Option<&str>) -> String {
    let Some(path) = path else {
        return String::new();
    };
    let mut path = path.to_owned();
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    if !path.ends_with('/') {
        path.push('/');
    }
    path
}

#[async_trait]
impl SecretsClient for AkeylessClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let token = self.token().await?;
        let version = remote_ref
            .version
            .as_deref()
            .and_then(|version| version.parse::<i32>().ok())
            .unwrap_or(0);
        let value = self.value(&token, &remote_ref.key, version).await?;
        match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
            Some(property) => select(&value, property, &remote_ref.key),
            None if value.is_empty() => Err(ProviderError::invalid_data(format!(
                "invalid value received, found no value string : {}",
                remote_ref.key
            ))),
            None => Ok(SecretValue::new(value)),
        }
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let value = self.get_secret(remote_ref).await?;
        let members: BTreeMap<String, &serde_json::value::RawValue> =
            serde_json::from_slice(value.expose()).map_err(|_| {
                ProviderError::invalid_data(
                    "unable to unmarshal secret from JSON: not a JSON object",
                )
            })?;
        Ok(members
            .into_iter()
            .map(|(key, raw)| (key, SecretValue::new(raw_to_bytes(raw))))
            .collect())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let path = search_path(find.path.as_deref());
        if let Some(name) = &find.name {
            let regex = name.matcher()?;
            let token = self.token().await?;
            let names = self.list(&token, &path, "").await?;
            let names = names.into_iter().filter(|n| regex.is_match(n)).collect();
            return self.values(&token, names).await;
        }
        if !find.tags.is_empty() {
            let token = self.token().await?;
            let mut names = Vec::new();
            for tag in find.tags.values() {
                names.extend(self.list(&token, &path, tag).await?);
            }
            return self.values(&token, names).await;
        }
        Err(ProviderError::invalid_request("unexpected find operator"))
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let token = self.token().await?;
        let key = &request.remote_ref.remote_key;
        let invalid = "failed to unmarshal remote secret: invalid JSON format";
        let current = self.current_object(&token, key, invalid).await?;
        let mut data = current.as_ref().map(|(_, o)| o.clone()).unwrap_or_default();
        let as_text = |value: &SecretValue| String::from_utf8_lossy(value.expose()).into_owned();
        match request
            .remote_ref
            .property
            .as_deref()
            .filter(|p| !p.is_empty())
        {
            None => {
                for (name, value) in &request.secret_data {
                    data.insert(name.clone(), as_text(value).into());
                }
            }
            Some(property) => {
                let source = request.secret_key.as_deref().unwrap_or_default();
                if let Some(value) = request.secret_data.get(source) {
                    data.insert(property.to_owned(), as_text(value).into());
                }
            }
        }
        let text = Value::Object(data).to_string();
        match current {
            Some((existing, _)) if existing == text => Ok(()),
            Some(_) => {
                let body = json!({"name": key, "value": text});
                self.write(&token, "update-secret-val", body).await
            }
            None => {
                let body = json!({"name": key, "value": text, "tags": [MANAGED_TAG]});
                self.write(&token, "create-secret", body).await
            }
        }
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let token = self.token().await?;
        let key = &remote_ref.remote_key;
        let item = match self.describe(&token, key).await {
            Ok(item) => item,
            Err(missing) if missing.is_not_found() => return Ok(()),
            Err(failure) => return Err(failure),
        };
        let managed = item
            .item_tags
            .as_ref()
            .is_some_and(|tags| tags.iter().any(|tag| tag == MANAGED_TAG));
        if !managed {
            return Ok(());
        }
        let delete = json!({ "name": key });
        let Some(property) = remote_ref.property.as_deref().filter(|p| !p.is_empty()) else {
            return self.write(&token, "delete-item", delete).await;
        };
        let invalid = "failed to unmarshal secret for deletion: invalid JSON format";
        let Some((_, mut data)) = self.current_object(&token, key, invalid).await? else {
            return Ok(());
        };
        data.remove(property);
        if data.is_empty() {
            return self.write(&token, "delete-item", delete).await;
        }
        let body = json!({"name": key, "value": Value::Object(data).to_string()});
        self.write(&token, "update-secret-val", body).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let token = self.token().await?;
        let invalid = "failed to unmarshal secret: invalid JSON format";
        let key = &remote_ref.remote_key;
        match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
            None => match self.value(&token, key, 0).await {
                Ok(_) => Ok(true),
                Err(missing) if missing.is_not_found() => Ok(false),
                Err(failure) => Err(failure),
            },
            Some(property) => Ok(self
                .current_object(&token, key, invalid)
                .await?
                .is_some_and(|(_, data)| data.contains_key(property))),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        let url = self.api.url();
        let host = url.host_str().unwrap_or_default().trim_matches(['[', ']']);
        let port = url.port_or_known_default().unwrap_or(443);
        let connect = tokio::net::TcpStream::connect((host.to_owned(), port));
        match tokio::time::timeout(VALIDATE_TIMEOUT, connect).await {
            Ok(Ok(_)) => Ok(ValidationResult::Ready),
            Ok(Err(failure)) => Err(ProviderError::unavailable(format!(
                "error accessing external store: {failure}"
            ))),
            Err(_) => Err(ProviderError::unavailable(
                "error accessing external store: connection timed out",
            )),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_values_render_as_upstream() {
        let out = |value: Value| rotated(object(value)).unwrap();
        assert_eq!(out(json!({"value": {"payload": "p"}})), "p");
        assert_eq!(
            out(json!({"value": {"target_value": {"u": "a"}}})),
            r#"{"u":"a"}"#
        );
        assert_eq!(out(json!({"value": {"u": "a"}})), r#"{"u":"a"}"#);
        assert_eq!(out(json!({"x": 1})), r#"{"x":1}"#);
    }

    #[test]
    fn properties_and_paths_follow_upstream() {
        let value = r#"{"a.b":"dotted","a":{"b":"nested"},"c":"x"}"#;
        assert_eq!(select(value, "a.b", "k").unwrap().expose(), b"dotted");
        assert_eq!(select(value, "c", "k").unwrap().expose(), b"x");
        let missing = select(value, "d", "k").unwrap_err();
        assert_eq!(missing.message(), "key d does not exist in value k");
        assert_eq!(search_path(Some("team")), "/team/");
        assert_eq!(search_path(None), "");
    }
}
