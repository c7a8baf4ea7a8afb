//! The 1Password client: item lookup over the store's vaults in order, reads of fields and
//! files, find, and push/delete of fields (see the module doc of the backend for the rules).

use std::collections::BTreeMap;

use async_trait::async_trait;
use regex::Regex;
use serde::Deserialize;

use super::connect::Connect;
use super::error;
use super::model::{Field, Item, ItemVault};
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// The label of the field a property-less ref means.
const PASSWORD: &str = "password";
/// Items of this category hold files, so their properties default to files.
const DOCUMENT: &str = "DOCUMENT";

/// A client of one store: its Connect server and its vaults in search order.
pub struct OnePasswordClient {
    connect: Connect,
    vaults: Vec<String>,
}

/// What a property names: a field by label or a file by name.
enum Target<'a> {
    Field(&'a str),
    File(&'a str),
}

impl OnePasswordClient {
    /// A client searching `vaults` (name or id to order) in ascending order.
    pub fn new(connect: Connect, vaults: &BTreeMap<String, i64>) -> Self {
        let mut ordered: Vec<(&String, &i64)> = vaults.iter().collect();
        ordered.sort_by_key(|(_, order)| **order);
        Self {
            connect,
            vaults: ordered.into_iter().map(|(name, _)| name.clone()).collect(),
        }
    }

    /// The full item titled `title` in the first vault holding one.
    async fn find_item(&self, title: &str) -> Result<Item> {
        for name in &self.vaults {
            let vault = self.connect.vault(name).await?;
            let items = self.connect.items_titled(&vault.id, title).await?;
            match items.as_slice() {
                [] => continue,
                [item] => return self.connect.item(&item.vault.id, &item.id).await,
                _ => {
                    return Err(ProviderError::invalid_data(format!(
                        "expected one 1Password Item matching: '{title}', got {}",
                        items.len()
                    )));
                }
            }
        }
        Err(error::key_not_found(title, &self.vaults))
    }

    /// The value a field or file of `item` holds.
    async fn value(&self, item: &Item, target: Target<'_>) -> Result<SecretValue> {
        match target {
            Target::Field(label) => field_value(item, label),
            Target::File(name) => {
                let file = item
                    .files
                    .iter()
                    .find(|file| name.is_empty() || file.name == name)
                    .ok_or_else(|| error::document_not_found(&item.title, name))?;
                self.connect.file_content(file).await
            }
        }
    }

    /// Adds the fields and files of `item` matching `name` to `found` (earlier values win).
    async fn collect(
        &self,
        item: &Item,
        name: Option<&Regex>,
        found: &mut SecretMap,
    ) -> Result<()> {
        let item = self.connect.item(&item.vault.id, &item.id).await?;
        let matches = |label: &str| name.is_none_or(|regex| regex.is_match(label));
        for file in &item.files {
            if matches(&file.name) && !found.contains_key(&file.name) {
                let content = self.connect.file_content(file).await?;
                found.insert(file.name.clone(), content);
            }
        }
        for field in &item.fields {
            let count = item.count_label(&field.label);
            if count != 1 {
                return Err(error::field_count(&field.label, &item.title, count));
            }
            if matches(&field.label) && !found.contains_key(&field.label) {
                found.insert(field.label.clone(), SecretValue::new(field.value.clone()));
            }
        }
        Ok(())
    }
}

/// What `property` names in `item`: the `field/` and `file/` prefixes choose, otherwise the
/// item's category does.
fn target<'a>(item: &Item, property: &'a str) -> Target<'a> {
    if let Some(label) = property.strip_prefix("field/") {
        Target::Field(label)
    } else if let Some(name) = property.strip_prefix("file/") {
        Target::File(name)
    } else if item.category == DOCUMENT {
        Target::File(property)
    } else {
        Target::Field(property)
    }
}

/// The value of the one field labelled `label` (default `password`).
fn field_value(item: &Item, label: &str) -> Result<SecretValue> {
    let label = if label.is_empty() { PASSWORD } else { label };
    let count = item.count_label(label);
    let field = item
        .fields
        .iter()
        .find(|field| field.label == label)
        .filter(|_| count == 1)
        .ok_or_else(|| error::field_count(label, &item.title, count))?;
    Ok(SecretValue::new(field.value.clone()))
}

/// The label of the field a push location names (default `password`).
fn push_label(remote_ref: &PushRemoteRef) -> &str {
    remote_ref
        .property
        .as_deref()
        .filter(|label| !label.is_empty())
        .unwrap_or(PASSWORD)
}

/// Upstream refuses versioned refs (1Password Connect serves the current item only).
fn refuse_version(remote_ref: &RemoteRef) -> Result<()> {
    match remote_ref.version {
        Some(_) => Err(ProviderError::invalid_request(
            "'remoteRef.version' is not implemented in the 1Password provider",
        )),
        None => Ok(()),
    }
}

/// The `spec` of upstream's PushSecretMetadata for 1Password.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PushMetadata {
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    vault: Option<String>,
}

/// The `spec` of the push's metadata (`kind: PushSecretMetadata`), default without one.
fn push_metadata(metadata: Option<&serde_json::Value>) -> Result<PushMetadata> {
    let Some(spec) = metadata
        .filter(|value| !value.is_null())
        .map(|value| value.get("spec"))
    else {
        return Ok(PushMetadata::default());
    };
    let spec = spec.cloned().unwrap_or(serde_json::Value::Null);
    if spec.is_null() {
        return Ok(PushMetadata::default());
    }
    PushMetadata::deserialize(spec).map_err(|failure| {
        ProviderError::invalid_request(format!("failed to parse push secret metadata: {failure}"))
    })
}

/// A new concealed field.
fn concealed(label: &str, value: String) -> Field {
    Field {
        label: label.to_owned(),
        value,
        kind: Some("CONCEALED".to_owned()),
        ..Field::default()
    }
}

#[async_trait]
impl SecretsClient for OnePasswordClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        refuse_version(remote_ref)?;
        let item = self.find_item(&remote_ref.key).await?;
        let property = remote_ref.property.as_deref().unwrap_or_default();
        self.value(&item, target(&item, property)).await
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        refuse_version(remote_ref)?;
        let item = self.find_item(&remote_ref.key).await?;
        let property = remote_ref.property.as_deref().unwrap_or_default();
        let mut map = SecretMap::new();
        match target(&item, property) {
            Target::File(name) => {
                for file in item
                    .files
                    .iter()
                    .filter(|f| name.is_empty() || f.name == name)
                {
                    map.insert(file.name.clone(), self.connect.file_content(file).await?);
                }
            }
            Target::Field(label) => {
                for field in item
                    .fields
                    .iter()
                    .filter(|f| label.is_empty() || f.label == label)
                {
                    let count = item.count_label(&field.label);
                    if count != 1 {
                        return Err(error::field_count(&field.label, &item.title, count));
                    }
                    map.insert(field.label.clone(), SecretValue::new(field.value.clone()));
                }
            }
        }
        Ok(map)
    }

    async fn get_all_secrets(&self, find: &Find) -> Result<SecretMap> {
        let name = find.name.as_ref().map(|name| name.matcher()).transpose()?;
        let mut found = SecretMap::new();
        for vault_name in &self.vaults {
            let vault = self.connect.vault(vault_name).await?;
            let items = self.connect.items(&vault.id).await?;
            if !find.tags.is_empty() {
                for item in &items {
                    if find.tags.keys().all(|tag| item.tags.contains(tag)) {
                        self.collect(item, name.as_ref(), &mut found).await?;
                    }
                }
                return Ok(found);
            }
            for item in &items {
                if find.path.as_deref().is_none_or(|path| path == item.title) {
                    self.collect(item, name.as_ref(), &mut found).await?;
                }
            }
        }
        Ok(found)
    }

    async fn push_secret(&self, request: &PushRequest) -> Result<()> {
        let value = request.value()?;
        let value = String::from_utf8(value.into_bytes()).map_err(|_| {
            ProviderError::invalid_request("1Password field values must be UTF-8 text")
        })?;
        let metadata = push_metadata(request.metadata.as_ref())?;
        let title = &request.remote_ref.remote_key;
        let label = push_label(&request.remote_ref);
        let mut item = match self.find_item(title).await {
            Ok(item) => item,
            Err(missing) if missing.is_not_found() => {
                let vault = match metadata.vault {
                    Some(vault) if !self.vaults.contains(&vault) => {
                        return Err(ProviderError::invalid_request(format!(
                            "error creating 1Password Item: metadata vault '{vault}' not in \
                             provider vaults"
                        )));
                    }
                    Some(vault) => vault,
                    None => self.vaults.first().cloned().ok_or_else(|| {
                        ProviderError::invalid_config(
                            "error creating 1Password Item: no vaults found",
                        )
                    })?,
                };
                let vault = self.connect.vault(&vault).await?;
                let item = Item {
                    title: title.clone(),
                    category: "SERVER".to_owned(),
                    vault: ItemVault {
                        id: vault.id.clone(),
                    },
                    fields: vec![concealed(label, value)],
                    tags: metadata.tags.unwrap_or_default(),
                    ..Item::default()
                };
                self.connect.create(&vault.id, &item).await?;
                return Ok(());
            }
            Err(failure) => return Err(failure),
        };
        if let Some(tags) = metadata.tags {
            item.tags = tags;
        }
        match item.count_label(label) {
            0 => item.fields.push(concealed(label, value)),
            1 => {
                if let Some(field) = item.fields.iter_mut().find(|field| field.label == label) {
                    field.value = value;
                }
            }
            count => {
                return Err(error::field_count(label, &item.title, count)
                    .context("error updating 1Password Item"));
            }
        }
        self.connect.update(&item).await?;
        Ok(())
    }

    async fn delete_secret(&self, remote_ref: &PushRemoteRef) -> Result<()> {
        let mut item = match self.find_item(&remote_ref.remote_key).await {
            Ok(item) => item,
            Err(missing) if missing.is_not_found() => return Ok(()),
            Err(failure) => return Err(failure),
        };
        let label = push_label(remote_ref);
        let count = item.count_label(label);
        if count > 1 {
            return Err(error::field_count(label, &item.title, count)
                .context("error updating 1Password Item"));
        }
        item.fields.retain(|field| field.label != label);
        if item.fields.is_empty() && item.files.is_empty() && !item.has_real_sections() {
            return self.connect.delete(&item).await;
        }
        self.connect.update(&item).await.map(|_| ())
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        let item = match self.find_item(&remote_ref.remote_key).await {
            Ok(item) => item,
            Err(missing) if missing.is_not_found() => return Ok(false),
            Err(failure) => return Err(failure),
        };
        Ok(item.count_label(push_label(remote_ref)) > 0)
    }

    async fn validate(&self) -> Result<ValidationResult> {
        for vault in &self.vaults {
            self.connect.vault(vault).await?;
        }
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadWrite
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
