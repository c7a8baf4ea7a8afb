//! The Secret Server client: upstream's key forms, `property` handling, maps, and PushSecret's
//! update-or-create.
//!
//! Keys resolve as upstream's `lookupSecret`: `folderId:<id>/<name>` is a name searched within
//! folder `<id>`; `/...` a secret path; a number an id, falling back to a name search when no
//! such id exists; anything else a name search taking the first match. Delete, exists and a
//! push without a folder refuse a plain name that several folders share (upstream's
//! `lookupSecretStrict`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Deserialize;

use super::SecretServer;
use super::api::Api;
use super::error;
use super::secret::{Secret, SecretField};
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::provider::Provider as _;
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The search text `validate` uses: it matches nothing real, and proves the credentials work.
const VALIDATE_SEARCH_TEXT: &str = "external-secrets-validation-check";

/// The prefix of a folder-scoped key.
const FOLDER_PREFIX: &str = "folderId:";

/// Upstream's refusal of a create without the metadata it needs.
const CREATE_NEEDS_METADATA: &str =
    "folderId and secretTemplateId must be provided in metadata to create a new secret";

/// The spec of a PushSecret's `PushSecretMetadata` (upstream's `PushSecretMetadataSpec`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PushMetadata {
    #[serde(default)]
    folder_id: i64,
    #[serde(default)]
    secret_template_id: i64,
}

/// The whole metadata document.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MetadataDocument {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    spec: Option<PushMetadata>,
}

/// A client of one server with one identity.
pub struct SecretServerClient {
    api: Api,
}

impl SecretServerClient {
    /// A client calling `api`.
    pub fn new(api: Api) -> Self {
        Self { api }
    }

    /// The secret `key` names; a name search is limited to `folder` when it is not 0 and,
    /// when `strict`, refuses a name several secrets share.
    async fn lookup(&self, key: &str, folder: i64, strict: bool) -> Result<Secret> {
        if let Some((folder, name)) = folder_prefix(key) {
            return self.by_name(name, folder, false).await;
        }
        if key.starts_with('/') {
            return self.api.secret_by_path(key).await;
        }
        if let Ok(id) = key.parse::<i64>() {
            match self.api.secret(id).await {
                Ok(secret) => return Ok(secret),
                Err(missing) if missing.is_not_found() => {}
                Err(failure) => return Err(failure),
            }
        }
        self.by_name(key, folder, strict).await
    }

    /// The secret named `name` (upstream's `getSecretByName` and `getSecretByNameStrict`).
    async fn by_name(&self, name: &str, folder: i64, strict: bool) -> Result<Secret> {
        let records = self.api.search(name).await?;
        if strict && records.len() > 1 {
            return Err(error::ambiguous_name());
        }
        let chosen = match folder {
            0 => records.first().ok_or_else(error::no_matching_secrets)?,
            _ if records.is_empty() => return Err(error::no_matching_secrets()),
            _ => records
                .iter()
                .find(|record| record.folder_id == folder)
                .ok_or_else(|| ProviderError::not_found("not found"))?,
        };
        self.api.secret(chosen.id).await
    }

    /// The secret a read names; versions are refused as upstream.
    async fn read(&self, remote_ref: &RemoteRef) -> Result<Secret> {
        if remote_ref.version.as_deref().is_some_and(|v| !v.is_empty()) {
            return Err(ProviderError::invalid_request(
                "specifying a version is not supported",
            ));
        }
        let secret = self.lookup(&remote_ref.key, 0, false).await?;
        if secret.fields.is_empty() {
            return Err(ProviderError::invalid_data("secret contains no fields"));
        }
        Ok(secret)
    }

    /// Sets the field `property` names (the first without one) and writes the secret back.
    async fn update(
        &self,
        mut secret: Secret,
        property: Option<&str>,
        value: Vec<u8>,
    ) -> Result<()> {
        let target = match property {
            None => secret
                .fields
                .first_mut()
                .ok_or_else(|| ProviderError::invalid_request("secret has no fields to update"))?,
            Some(property) => secret
                .fields
                .iter_mut()
                .find(|field| field.is_named(property))
                .ok_or_else(|| {
                    ProviderError::invalid_request(format!("field {property} not found in secret"))
                })?,
        };
        target.item_value = value;
        let file = target.is_file.then(|| target.clone());
        // Files are not part of the update body; the SDK writes them separately.
        secret.fields.retain(|field| !field.is_file);
        self.api
            .update(&secret)
            .await
            .map_err(|failure| failure.context("failed to update secret"))?;
        if let Some(file) = file {
            self.api.write_file(secret.id, &file).await?;
        }
        Ok(())
    }

    /// Creates secret `key` in `folder` from template `template` with the field `property`
    /// names (the template's first without one) set to `value`.
    async fn create(
        &self,
        key: &str,
        property: Option<&str>,
        value: Vec<u8>,
        folder: i64,
        template_id: i64,
    ) -> Result<()> {
        let template = self.api.template(template_id).await?;
        if key.ends_with('/') {
            return Err(ProviderError::invalid_request(format!(
                "invalid secret name {key:?}: name must not be empty or end with a trailing slash"
            )));
        }
        let mut name = key;
        if let Some((_, stripped)) = folder_prefix(key) {
            if stripped.contains('/') {
                return Err(ProviderError::invalid_request(format!(
                    "invalid secret name {stripped:?} in folderId prefix: name must not contain \
                     path separators"
                )));
            }
            name = stripped;
        }
        let name = name.strip_prefix('/').unwrap_or(name);
        let name = name.rsplit('/').next().unwrap_or(name).to_owned();
        let field = template.field(property).ok_or_else(|| match property {
            None => ProviderError::invalid_request("secret template has no fields"),
            Some(property) => ProviderError::invalid_request(format!(
                "field {property} not found in secret template"
            )),
        })?;
        let filled = SecretField::with_value(field.id, field.slug.clone(), value);
        if field.is_file {
            let id = self
                .api
                .create(&Secret::new(name, folder, template_id, Vec::new()))
                .await?;
            return self.api.write_file(id, &filled).await;
        }
        self.api
            .create(&Secret::new(name, folder, template_id, vec![filled]))
            .await
            .map(drop)
    }
}

/// `folderId:<id>/<name>` split into a positive folder id and a non-empty name.
fn folder_prefix(key: &str) -> Option<(i64, &str)> {
    let (id, name) = key.strip_prefix(FOLDER_PREFIX)?.split_once('/')?;
    let id = id.parse::<i64>().ok().filter(|id| *id > 0)?;
    (!name.is_empty()).then_some((id, name))
}

/// PushSecret metadata (upstream's `ParseMetadataParameters`): `None` without any.
fn push_metadata(metadata: Option<&serde_json::Value>) -> Result<Option<PushMetadata>> {
    let Some(metadata) = metadata.filter(|value| !value.is_null()) else {
        return Ok(None);
    };
    let invalid = |message: String| {
        ProviderError::invalid_request(format!("failed to parse metadata: {message}"))
    };
    let document = MetadataDocument::deserialize(metadata).map_err(|failure| {
        invalid(format!(
            "failed to parse kubernetes.external-secrets.io/v1alpha1 PushSecretMetadata: {}",
            crate::redact::json_error(&failure)
        ))
    })?;
    if document.api_version != "kubernetes.external-secrets.io/v1alpha1" {
        return Err(invalid(format!(
            "unexpected apiVersion {:?}, expected \"kubernetes.external-secrets.io/v1alpha1\"",
            document.api_version
        )));
    }
    if document.kind != "PushSecretMetadata" {
        return Err(invalid(format!(
            "unexpected kind {:?}, expected \"PushSecretMetadata\"",
            document.kind
        )));
    }
    Ok(Some(document.spec.unwrap_or_default()))
}

/// A member of a JSON object as bytes (upstream's `GetByteValue`): strings as they are, null
/// as nothing, numbers in their shortest decimal form, anything else as JSON.
fn member_bytes(value: &serde_json::Value) -> Vec<u8> {
    match value {
        serde_json::Value::String(text) => text.clone().into_bytes(),
        serde_json::Value::Null => Vec::new(),
        serde_json::Value::Number(number) => match number.as_f64() {
            Some(float) => float.to_string().into_bytes(),
            None => number.to_string().into_bytes(),
        },
        other => other.to_string().into_bytes(),
    }
}

/// The members of `value` when it is a JSON object.
fn object_members(value: &[u8]) -> Option<SecretMap> {
    let trimmed = value.trim_ascii_start();
    if !trimmed.starts_with(b"{") {
        return None;
    }
    let object: BTreeMap<String, serde_json::Value> = serde_json::from_slice(value).ok()?;
    Some(
        object
            .iter()
            .map(|(key, member)| (key.clone(), SecretValue::new(member_bytes(member))))
            .collect(),
    )
}

/// Every field by slug (else name, else id), as upstream's `fieldsToByteMap`.
fn fields_map(fields: &[SecretField]) -> Result<SecretMap> {
    let mut map = SecretMap::new();
    for field in fields {
        let key = match (field.slug.as_str(), field.field_name.as_str()) {
            ("", "") if field.field_id > 0 => field.field_id.to_string(),
            ("", "") => {
                return Err(ProviderError::invalid_data(
                    "secret field has no slug, field name, or field ID",
                ));
            }
            ("", name) => name.to_owned(),
            (slug, _) => slug.to_owned(),
        };
        map.insert(key, SecretValue::new(field.item_value.clone()));
    }
    Ok(map)
}

/// A non-empty `property`.
fn property(property: Option<&str>) -> Option<&str> {
    property.filter(|property| !property.is_empty())
}

#[async_trait]
impl SecretsClient for SecretServerClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let secret = self.read(remote_ref).await?;
        let Some(property) = property(remote_ref.property.as_deref()) else {
            return secret.to_json().map(SecretValue::new);
        };
        let first = secret
            .fields
            .first()
            .map(|field| field.item_value.as_slice());
        if let Some(value) = first.and_then(|first| json_property(first, property)) {
            return Ok(SecretValue::new(value));
        }
        secret
            .fields
            .iter()
            .find(|field| field.is_named(property))
            .map(|field| SecretValue::new(field.item_value.clone()))
            .ok_or_else(|| ProviderError::not_found("Secret does not exist"))
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        if let Some(property) = property(remote_ref.property.as_deref()) {
            let value = self.get_secret(remote_ref).await?;
            return Ok(object_members(value.expose())
                .unwrap_or_else(|| [(property.to_owned(), value)].into()));
        }
        let secret = self.read(remote_ref).await?;
        let first = secret
            .fields
            .first()
            .map(|field| field.item_value.as_slice());
        match first.and_then(object_members) {
            Some(members) => Ok(members),
            None => fields_map(&secret.fields),
        }
    }

    async fn get_all_secrets(&self, _find: &Find) -> Result<SecretMap> {
        Err(ProviderError::unsupported(
            "getting all secrets is not supported by Delinea Secret Server",
        ))
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let key = request.remote_ref.remote_key.as_str();
        if key.is_empty() {
            return Err(ProviderError::invalid_request("remote key must be defined"));
        }
        let value = request
            .value()
            .map_err(|failure| failure.context("failed to extract secret data"))?
            .into_bytes();
        if std::str::from_utf8(&value).is_err() {
            return Err(ProviderError::invalid_request(
                "secret value is not valid UTF-8",
            ));
        }
        let metadata = push_metadata(request.metadata.as_ref())?;
        let folder = folder_prefix(key)
            .map(|(folder, _)| folder)
            .or_else(|| metadata.as_ref().map(|metadata| metadata.folder_id))
            .unwrap_or_default();
        let property = property(request.remote_ref.property.as_deref());
        let existing = match self.lookup(key, folder, folder <= 0).await {
            Ok(secret) => Some(secret),
            Err(missing) if missing.is_not_found() => None,
            Err(failure) => return Err(failure.context("failed to get secret")),
        };
        if let Some(secret) = existing {
            return self.update(secret, property, value).await;
        }
        let template = metadata.map(|metadata| metadata.secret_template_id);
        match template {
            Some(template) if template > 0 && folder > 0 => {
                self.create(key, property, value, folder, template).await
            }
            _ => Err(ProviderError::invalid_request(CREATE_NEEDS_METADATA)),
        }
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let secret = match self.lookup(&remote_ref.remote_key, 0, true).await {
            Ok(secret) => secret,
            Err(missing) if missing.is_not_found() => return Ok(()),
            Err(failure) => return Err(failure.context("failed to get secret for deletion")),
        };
        self.api.delete(secret.id).await
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self.lookup(&remote_ref.remote_key, 0, true).await {
            Ok(_) => Ok(true),
            Err(missing) if missing.is_not_found() => Ok(false),
            Err(failure) => Err(failure.context("failed to check if secret exists")),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        self.api
            .search(VALIDATE_SEARCH_TEXT)
            .await
            .map_err(|failure| failure.context("failed to validate Secret Server credentials"))?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        SecretServer.capabilities(&Default::default())
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_prefixes_parse_as_upstream() {
        assert_eq!(folder_prefix("folderId:73/db"), Some((73, "db")));
        assert_eq!(folder_prefix("folderId:73/a/b"), Some((73, "a/b")));
        assert_eq!(folder_prefix("folderId:73"), None);
        assert_eq!(folder_prefix("folderId:73/"), None);
        assert_eq!(folder_prefix("folderId:0/db"), None);
        assert_eq!(folder_prefix("folderId:x/db"), None);
        assert_eq!(folder_prefix("db"), None);
    }

    #[test]
    fn members_become_bytes_as_upstream() {
        let map =
            object_members(br#" {"s":"t","n":1.50,"b":true,"z":null,"o":{"b":1,"a":2}}"#).unwrap();
        let text = |key: &str| String::from_utf8(map[key].expose().to_vec()).unwrap();
        assert_eq!(text("s"), "t");
        assert_eq!(text("n"), "1.5");
        assert_eq!(text("b"), "true");
        assert_eq!(text("z"), "");
        assert_eq!(text("o"), r#"{"a":2,"b":1}"#);
        assert!(object_members(b"[1]").is_none());
        assert!(object_members(b"{broken").is_none());
    }

    #[test]
    fn metadata_is_checked_as_upstream() {
        let parse = |value: serde_json::Value| push_metadata(Some(&value));
        let spec = parse(serde_json::json!({
            "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
            "kind": "PushSecretMetadata",
            "spec": {"folderId": 4, "secretTemplateId": 6003},
        }))
        .unwrap()
        .unwrap();
        assert_eq!((spec.folder_id, spec.secret_template_id), (4, 6003));
        let wrong = parse(serde_json::json!({"apiVersion": "v1", "kind": "PushSecretMetadata"}));
        assert!(
            wrong
                .unwrap_err()
                .message()
                .contains("unexpected apiVersion")
        );
        let unknown = parse(serde_json::json!({
            "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
            "kind": "PushSecretMetadata",
            "spec": {"folder": 4},
        }));
        assert!(unknown.is_err());
        assert!(push_metadata(None).unwrap().is_none());
    }

    #[test]
    fn fields_are_keyed_by_slug_then_name_then_id() {
        let mut named = SecretField::with_value(3, String::new(), b"n".to_vec());
        named.field_name = "Name".into();
        let fields = [
            SecretField::with_value(1, "user".into(), b"u".to_vec()),
            named,
            SecretField::with_value(9, String::new(), b"i".to_vec()),
        ];
        let keys: Vec<String> = fields_map(&fields).unwrap().into_keys().collect();
        assert_eq!(keys, ["9", "Name", "user"]);
        let anonymous = [SecretField::with_value(0, String::new(), Vec::new())];
        assert!(fields_map(&anonymous).is_err());
    }
}
