//! The KeeperSecurity client: upstream's reads (by uid, then by title when
//! `getByTitleFallback` is set), find by title regexp, and pushes into records of type
//! `externalSecrets` in the store's folder.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::api::{Api, Record};
use super::secret::Secret;
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The record type pushes create and are allowed to change or delete.
const PUSHED_TYPE: &str = "externalSecrets";

/// Which record field a pushed key lands in (upstream's regular expressions on the lower-cased
/// key, tried in this order).
enum Target {
    /// A standard field of this type.
    Standard(&'static str),
    /// A custom `secret` field labelled with the key.
    Custom,
}

impl Target {
    fn of(key: &str) -> Self {
        let key = key.to_lowercase();
        if key.contains("login") || key.contains("username") {
            Target::Standard("login")
        } else if key.contains("password") {
            Target::Standard("password")
        } else if key.contains("url") {
            // "baseurl" contains "url": upstream's `url|baseurl` is this one test.
            Target::Standard("url")
        } else {
            Target::Custom
        }
    }
}

/// A client of one application, pushing into one folder.
pub struct KeeperClient {
    api: Api,
    folder_id: String,
    title_fallback: bool,
}

impl KeeperClient {
    /// A client of `api` pushing into `folder_id`.
    pub fn new(api: Api, folder_id: String, title_fallback: bool) -> Self {
        Self {
            api,
            folder_id,
            title_fallback,
        }
    }

    /// The record `key` names: its uid, else (when enabled) its unique title.
    async fn find_record(&self, key: &str) -> Result<Secret> {
        let by_uid =
            self.api.get_secrets(&[key]).await.map_err(|error| {
                error.context(format_args!("unable to find secret {key}. Error"))
            })?;
        let mut found = by_uid.records.into_iter().find(|record| record.uid == key);
        if found.is_none() && self.title_fallback {
            let mut titled = self.titled(key, None).await?;
            if titled.len() > 1 {
                return Err(not_unique(key));
            }
            found = titled.pop();
        }
        let record = found.ok_or_else(|| ProviderError::not_found("no secrets found"))?;
        self.secret(&record).await
    }

    /// Records titled `title` (of `record_type` when given).
    async fn titled(&self, title: &str, record_type: Option<&str>) -> Result<Vec<Record>> {
        let all = self.api.get_secrets(&[]).await?;
        Ok(all
            .records
            .into_iter()
            .filter(|record| record.title() == title)
            .filter(|record| record_type.is_none_or(|kind| record.record_type() == kind))
            .collect())
    }

    /// The one pushed record titled `title`, if any.
    async fn pushed_record(&self, title: &str) -> Result<Option<Record>> {
        let mut records = self.titled(title, Some(PUSHED_TYPE)).await?;
        if records.len() > 1 {
            return Err(not_unique(title));
        }
        Ok(records.pop())
    }

    /// Upstream's secret view of `record`, with its files downloaded.
    async fn secret(&self, record: &Record) -> Result<Secret> {
        let mut files = Vec::with_capacity(record.files.len());
        for file in &record.files {
            files.push((file.title.clone(), self.api.download(file).await?));
        }
        Secret::new(&record.data, files)
    }

    async fn create(&self, title: &str, key: &str, value: &str) -> Result<()> {
        let field = |field_type: &str| json!({"type": field_type, "value": [value]});
        let (fields, custom) = match Target::of(key) {
            Target::Standard(field_type) => (vec![field(field_type)], Vec::new()),
            Target::Custom => (
                Vec::new(),
                vec![json!({"type": "secret", "label": key, "value": [value]})],
            ),
        };
        let data = json!({"type": PUSHED_TYPE, "title": title, "fields": fields, "custom": custom});
        let secrets = self.api.get_secrets(&[]).await?;
        let folder = secrets
            .folders
            .iter()
            .find(|folder| folder.uid == self.folder_id)
            .ok_or_else(|| {
                ProviderError::invalid_config(format!(
                    "folder uid='{}' was not retrieved. If you are creating a record in a shared \
                     folder that you know exists, make sure that at least one record is present \
                     in the folder prior to adding a new record",
                    self.folder_id
                ))
            })?;
        self.api.create(folder, &data).await.map(drop)
    }

    async fn update(&self, record: &Record, key: &str, value: &str) -> Result<()> {
        let mut data = record.data.clone();
        match Target::of(key) {
            Target::Standard(field_type) => set_standard(&mut data, field_type, value),
            Target::Custom => {
                let field = fields_mut(&mut data, "custom").and_then(|fields| {
                    fields.iter_mut().find(|field| {
                        field.get("label").and_then(Value::as_str) == Some(key) && has_value(field)
                    })
                });
                let Some(field) = field else {
                    return Err(ProviderError::invalid_request(format!(
                        "secret {} does not contain any custom field with label {key}",
                        record.title()
                    )));
                };
                set_single(field, value);
            }
        }
        self.api.update(record, &data).await
    }
}

#[async_trait]
impl SecretsClient for KeeperClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        self.find_record(&remote_ref.key)
            .await?
            .item(remote_ref.property.as_deref())
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        self.find_record(&remote_ref.key)
            .await?
            .items(remote_ref.property.as_deref())
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        if !find.tags.is_empty() {
            return Err(ProviderError::unsupported(
                "'find.tags' is not implemented in the KeeperSecurity provider",
            ));
        }
        if find.path.is_some() {
            return Err(ProviderError::unsupported(
                "'find.path' is not implemented in the KeeperSecurity provider",
            ));
        }
        let matcher = find.name.as_ref().map(|name| name.matcher()).transpose()?;
        let all = self
            .api
            .get_secrets(&[])
            .await
            .map_err(|error| error.context("unable to find secrets"))?;
        let mut found = SecretMap::new();
        for record in &all.records {
            if matcher
                .as_ref()
                .is_some_and(|matcher| !matcher.is_match(record.title()))
            {
                continue;
            }
            let value = self.secret(record).await?.item(None)?;
            found.insert(record.title().to_owned(), value);
        }
        Ok(found)
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        if request.secret_key.as_deref().is_none_or(str::is_empty) {
            return Err(ProviderError::unsupported(
                "pushing the whole secret is not yet implemented",
            ));
        }
        let value = request.value()?;
        let value = value.expose_str().ok_or_else(|| {
            ProviderError::invalid_request("KeeperSecurity field values are text: not UTF-8")
        })?;
        let (title, key) = split_remote_key(&request.remote_ref)?;
        match self.pushed_record(title).await? {
            Some(record) => self.update(&record, key, value).await,
            None => self.create(title, key, value).await,
        }
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let (title, _) = split_remote_key(remote_ref)?;
        match self.pushed_record(title).await? {
            Some(record) => self.api.delete(&record.uid).await,
            None => Ok(()),
        }
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let (title, key) = split_remote_key(remote_ref)?;
        let Some(record) = self.pushed_record(title).await? else {
            return Ok(false);
        };
        let (list, wanted) = match Target::of(key) {
            Target::Standard(field_type) => ("fields", ("type", field_type)),
            Target::Custom => ("custom", ("label", key)),
        };
        Ok(record
            .data
            .get(list)
            .and_then(Value::as_array)
            .is_some_and(|fields| {
                fields.iter().any(|field| {
                    field.get(wanted.0).and_then(Value::as_str) == Some(wanted.1)
                        && has_value(field)
                })
            }))
    }

    async fn validate(&self) -> Result<ValidationResult> {
        // Upstream answers Ready without calling the server.
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// Upstream's `secretName/key` push location.
fn split_remote_key(remote_ref: &PushRemoteRef) -> Result<(&str, &str)> {
    let key = remote_ref.remote_key.as_str();
    match key.split('/').collect::<Vec<_>>().as_slice() {
        [title, field] => Ok((title, field)),
        _ => Err(ProviderError::invalid_request(format!(
            "match.remoteRef.remoteKey. Invalid format. Format should match secretName/key got \
             {key}"
        ))),
    }
}

fn not_unique(key: &str) -> ProviderError {
    ProviderError::invalid_request(format!("more than 1 secret {key} found"))
}

fn fields_mut<'a>(data: &'a mut Value, list: &str) -> Option<&'a mut Vec<Value>> {
    data.get_mut(list).and_then(Value::as_array_mut)
}

fn has_value(field: &Value) -> bool {
    field
        .get("value")
        .and_then(Value::as_array)
        .is_some_and(|values| !values.is_empty())
}

/// Sets the first value of `field` (the SDKs' `Set...ValueSingle`).
fn set_single(field: &mut Value, value: &str) {
    match field
        .get_mut("value")
        .and_then(Value::as_array_mut)
        .and_then(|values| values.first_mut())
    {
        Some(first) => *first = Value::from(value),
        None => field["value"] = json!([value]),
    }
}

/// Sets the first standard field of `field_type`, adding it when the record has none (upstream
/// logs and saves the record unchanged).
fn set_standard(data: &mut Value, field_type: &str, value: &str) {
    if !data.get("fields").is_some_and(Value::is_array) {
        data["fields"] = json!([]);
    }
    let Some(fields) = fields_mut(data, "fields") else {
        return;
    };
    match fields
        .iter_mut()
        .find(|field| field.get("type").and_then(Value::as_str) == Some(field_type))
    {
        Some(field) => set_single(field, value),
        None => fields.push(json!({"type": field_type, "value": [value]})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_pick_fields_as_upstreams_expressions() {
        let standard = |key| match Target::of(key) {
            Target::Standard(field) => Some(field),
            Target::Custom => None,
        };
        assert_eq!(standard("DB_Username"), Some("login"));
        assert_eq!(standard("login-password"), Some("login"));
        assert_eq!(standard("admin-password"), Some("password"));
        assert_eq!(standard("baseURL"), Some("url"));
        assert_eq!(standard("token"), None);
    }

    #[test]
    fn remote_keys_are_title_slash_field() {
        let ok = PushRemoteRef::new("db/password");
        assert_eq!(split_remote_key(&ok).unwrap(), ("db", "password"));
        for bad in ["db", "a/b/c"] {
            let error = split_remote_key(&PushRemoteRef::new(bad)).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "match.remoteRef.remoteKey. Invalid format. Format should match \
                     secretName/key got {bad}"
                )
            );
        }
    }

    #[test]
    fn updates_set_the_first_value_or_add_the_field() {
        let mut data = json!({"fields": [{"type": "password", "value": ["old", "x"]}]});
        set_standard(&mut data, "password", "new");
        set_standard(&mut data, "login", "admin");
        assert_eq!(
            data,
            json!({"fields": [
                {"type": "password", "value": ["new", "x"]},
                {"type": "login", "value": ["admin"]},
            ]})
        );
        let mut bare = json!({"title": "t"});
        set_standard(&mut bare, "url", "https://x");
        assert_eq!(
            bare["fields"],
            json!([{"type": "url", "value": ["https://x"]}])
        );
    }
}
