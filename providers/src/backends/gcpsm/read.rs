//! Reads as upstream's gcpsm client does them.
//!
//! * A value is version `version` (default `latest`) of secret `key`. With
//!   `secretVersionSelectionPolicy: LatestOrFetch` and no version asked, a `latest` that is
//!   disabled or destroyed falls back to the newest enabled version; with `LatestOrFail` (the
//!   default) that is an error. A missing secret or version is `NotFound`.
//! * `property` selects from a JSON payload with our gjson path rules; a property with dots is
//!   first tried as one literal key (upstream's rule). A missing property is `NotFound`.
//! * `metadataPolicy: Fetch` reads the secret's labels and annotations instead: `annotations` or
//!   `labels` as a JSON object, `annotations.KEY` / `labels.KEY` one value, no property both.
//! * Find: by `name.regexp` (all secrets listed, matched client-side) or by `tags` (labels, as a
//!   server-side filter `labels.K=V ...`), either narrowed by `path` (a `name:` filter plus a
//!   prefix check, as upstream); found keys are converted as asked.

use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;

use super::GcpsmClient;
use crate::error::{ProviderError, Result};
use crate::property::{json_property, raw_to_bytes};
use crate::request::{Find, RemoteRef, convert_keys};
use crate::value::{SecretMap, SecretValue};

/// Upstream's policy value that falls back to the newest enabled version.
const LATEST_OR_FETCH: &str = "LatestOrFetch";

/// Most secrets one find reads.
const MAX_FOUND: usize = 10_000;

impl GcpsmClient {
    /// The payload `remote_ref` names, before any property.
    pub(super) async fn payload(&self, remote_ref: &RemoteRef) -> Result<Vec<u8>> {
        let api = self.api()?;
        let version = remote_ref.version.as_deref().unwrap_or("latest");
        let name = self.parent.version(&remote_ref.key, version);
        match api.access(&name).await {
            Ok(data) => Ok(data),
            Err(failure)
                if failure.is_disabled_or_destroyed()
                    && remote_ref.version.is_none()
                    && self.selection_policy == LATEST_OR_FETCH =>
            {
                let secret = self.parent.secret(&remote_ref.key);
                let enabled = api
                    .latest_enabled_version(&secret)
                    .await
                    .map_err(super::error::Failure::into_error)?;
                // No enabled version: accessing `latest` again gives the service's own error.
                let version = enabled.unwrap_or(name);
                api.access(&version).await.map_err(|f| f.into_error())
            }
            Err(failure) => Err(failure.into_error()),
        }
    }

    /// Upstream's `GetSecret`.
    pub(super) async fn read(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        if remote_ref.metadata_policy == crate::request::MetadataPolicy::Fetch {
            return self.read_metadata(remote_ref).await;
        }
        let data = self.payload(remote_ref).await?;
        let Some(property) = remote_ref.property.as_deref() else {
            if data.is_empty() {
                return Err(ProviderError::invalid_data(format!(
                    "invalid secret received. no secret string for key: {}",
                    remote_ref.key
                )));
            }
            return Ok(SecretValue::new(data));
        };
        select(&data, property, &remote_ref.key).map(SecretValue::new)
    }

    async fn read_metadata(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let secret = self
            .api()?
            .get_secret(&self.parent.secret(&remote_ref.key))
            .await
            .map_err(|failure| failure.into_error())?;
        let key = &remote_ref.key;
        let property = remote_ref.property.as_deref().unwrap_or("");
        for (field, values) in [
            ("annotations", &secret.annotations),
            ("labels", &secret.labels),
        ] {
            if let Some(name) = property
                .strip_prefix(field)
                .and_then(|p| p.strip_prefix('.'))
            {
                let singular = field.trim_end_matches('s');
                return values
                    .get(name)
                    .map(|v| SecretValue::from(v.as_str()))
                    .ok_or_else(|| {
                        ProviderError::not_found(format!(
                            "{singular} with key {name} does not exist in secret {key}"
                        ))
                    });
            }
            if property == field {
                return to_json(values);
            }
        }
        if !property.is_empty() {
            return Err(ProviderError::invalid_request(format!(
                "invalid property {property}: metadata property should start with either \
                 annotations or labels"
            )));
        }
        let both: BTreeMap<&str, &BTreeMap<String, String>> = BTreeMap::from([
            ("annotations", &secret.annotations),
            ("labels", &secret.labels),
        ]);
        to_json(&both)
    }

    /// Upstream's `GetAllSecrets`.
    pub(super) async fn find(&self, find: &Find) -> Result<SecretMap> {
        let mut terms: Vec<String> = find
            .tags
            .iter()
            .map(|(key, value)| format!("labels.{key}={value}"))
            .collect();
        let matcher = match &find.name {
            Some(name) => Some(name.matcher()?),
            None if find.tags.is_empty() => {
                return Err(ProviderError::invalid_request("unexpected find operator"));
            }
            None => None,
        };
        if matcher.is_some() {
            // Upstream filters by name only; tags are ignored when a name is given.
            terms.clear();
        }
        if let Some(path) = &find.path {
            terms.push(format!("name:{path}"));
        }
        let listed = self
            .api()?
            .list_secrets(&self.parent.name(), &terms.join(" "))
            .await?;
        let mut found = SecretMap::new();
        for secret in listed {
            let key = self.parent.short_name(&secret.name).to_owned();
            let wanted = matcher.as_ref().is_none_or(|m| m.is_match(&key))
                && find
                    .path
                    .as_ref()
                    .is_none_or(|path| key.starts_with(path.as_str()));
            if !wanted {
                continue;
            }
            if found.len() >= MAX_FOUND {
                return Err(ProviderError::invalid_request(format!(
                    "find matches more than {MAX_FOUND} secrets"
                )));
            }
            let value = self.read(&RemoteRef::new(key.clone())).await?;
            found.insert(key, value);
        }
        convert_keys(find.conversion_strategy, found)
    }
}

/// A property of a JSON payload, upstream's `getDataByProperty`.
pub(super) fn select(data: &[u8], property: &str, key: &str) -> Result<Vec<u8>> {
    if serde_json::from_slice::<&RawValue>(data).is_err() {
        return Err(ProviderError::invalid_data(
            "unable to unmarshal secret from JSON",
        ));
    }
    let literal = property
        .contains('.')
        .then(|| json_property(data, &property.replace('.', "\\.")))
        .flatten();
    literal
        .or_else(|| json_property(data, property))
        .ok_or_else(|| {
            ProviderError::not_found(format!("key {property} does not exist in secret {key}"))
        })
}

/// Upstream's `GetSecretMap`: a JSON object's members, strings unquoted.
pub(super) fn to_map(data: &[u8]) -> Result<SecretMap> {
    let members: HashMap<String, &RawValue> = serde_json::from_slice(data).map_err(|error| {
        ProviderError::invalid_data(format!("unable to unmarshal secret from JSON: {error}"))
    })?;
    Ok(members
        .into_iter()
        .map(|(key, raw)| (key, SecretValue::new(raw_to_bytes(raw))))
        .collect())
}

fn to_json(value: &impl serde::Serialize) -> Result<SecretValue> {
    serde_json::to_vec(value)
        .map(SecretValue::new)
        .map_err(|error| {
            ProviderError::invalid_data(format!("failed marshaling metadata: {error}"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn properties_follow_upstream_rules() {
        let data = br#"{"a.b": "literal", "a": {"b": "nested", "c": 1}, "n": [1, 2]}"#;
        assert_eq!(select(data, "a.b", "k").unwrap(), b"literal");
        assert_eq!(select(data, "a.c", "k").unwrap(), b"1");
        assert_eq!(select(data, "n.1", "k").unwrap(), b"2");
        let missing = select(data, "zz", "k").unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert_eq!(missing.message(), "key zz does not exist in secret k");
        assert_eq!(
            select(b"plain", "a", "k").unwrap_err().kind(),
            ErrorKind::InvalidData
        );
    }

    #[test]
    fn maps_unquote_strings_only() {
        let map = to_map(br#"{"s": "v", "o": {"x": 1}}"#).unwrap();
        assert_eq!(map["s"].expose(), b"v");
        assert_eq!(map["o"].expose(), br#"{"x": 1}"#);
        assert!(to_map(b"[1]").is_err());
    }
}
