//! The KV engine's operations over an authenticated session: read data (optionally one
//! version), read metadata, write, delete and list, with KV v1 and v2 told apart here only.
//!
//! A secret's data is kept as the JSON text the server sent (a [`Document`]): upstream
//! re-encodes the decoded map with Go's `encoding/json`, which yields the same text the server
//! (also Go) wrote, so passing it through keeps key order, number spelling and escaping
//! identical.

use std::collections::BTreeMap;

use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::http::{Call, Reply};
use super::paths::Kv;
use super::session::Session;
use crate::error::{ProviderError, Result};

/// A secret's data: a JSON object as the server sent it.
pub(super) type Document = Box<RawValue>;

/// The KV v2 metadata keys upstream copies next to `custom_metadata`.
const SYSTEM_METADATA_KEYS: [&str; 3] = ["created_time", "current_version", "delete_version_after"];

/// What upstream's `readSecretMetadata` returns, plus the current version for check-and-set.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Metadata {
    /// System keys (KV v2) and `custom_metadata`, values as text.
    pub entries: BTreeMap<String, String>,
    /// `current_version` (KV v2).
    pub current_version: Option<u64>,
}

/// A KV engine reached through a session.
pub(super) struct Engine {
    /// The authenticated connection.
    pub session: Session,
    /// Mount and version.
    pub kv: Kv,
}

#[derive(Deserialize)]
struct Envelope {
    data: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Versioned {
    data: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Listing {
    #[serde(default)]
    keys: Vec<String>,
}

impl Engine {
    /// The data of `key` (at `version`, KV v2), `None` if there is none (missing, deleted or
    /// destroyed).
    pub(super) async fn read(&self, key: &str, version: Option<&str>) -> Result<Option<Document>> {
        let path = self.kv.data_path(key);
        let mut call = Call::new(Method::GET, &path);
        if let Some(version) = version {
            call.query.push(("version".to_owned(), version.to_owned()));
        }
        let action = format!("cannot read secret data from Vault: {key}");
        let Some(data) = self.data(call, &action).await? else {
            return Ok(None);
        };
        if !self.kv.is_v2() {
            return Ok(Some(data));
        }
        let versioned: Versioned = parse(&data, &action)?;
        Ok(versioned.data.filter(|data| data.get() != "null"))
    }

    /// The metadata of `key`, `None` if it has none. KV v1 keeps upstream's ownership marker
    /// inside the data, under `custom_metadata`.
    pub(super) async fn metadata(&self, key: &str) -> Result<Option<Metadata>> {
        let path = self.kv.metadata_path(key)?;
        let action = format!("cannot read secret metadata from Vault: {key}");
        let Some(data) = self.data(Call::new(Method::GET, &path), &action).await? else {
            return Ok(None);
        };
        let fields: BTreeMap<String, Box<RawValue>> = parse(&data, &action)?;
        let mut metadata = Metadata::default();
        if self.kv.is_v2() {
            for key in SYSTEM_METADATA_KEYS {
                if let Some(value) = fields.get(key).filter(|value| value.get() != "null") {
                    metadata.entries.insert(key.to_owned(), text(value));
                }
            }
            metadata.current_version = fields
                .get("current_version")
                .and_then(|value| value.get().parse().ok());
        }
        if let Some(custom) = fields.get("custom_metadata")
            && let Ok(custom) =
                serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(custom.get())
        {
            metadata
                .entries
                .extend(custom.iter().map(|(key, value)| (key.clone(), text(value))));
        }
        Ok(Some(metadata))
    }

    /// Writes `body` to `path`.
    pub(super) async fn write(&self, path: &str, body: Value, action: &str) -> Result<()> {
        let mut call = Call::new(Method::POST, path);
        call.body = Some(body);
        match self.session.send(call, action).await? {
            Reply::Body(_) => Ok(()),
            Reply::Missing => Err(ProviderError::invalid_request(format!(
                "{action}: no such path (404 Not Found)"
            ))),
        }
    }

    /// Deletes `path`; already gone is fine.
    pub(super) async fn delete(&self, path: &str, action: &str) -> Result<()> {
        self.session
            .send(Call::new(Method::DELETE, path), action)
            .await
            .map(drop)
    }

    /// The entries directly under `prefix` (names ending in `/` are folders), `None` if there
    /// are none.
    pub(super) async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        let path = self.kv.metadata_path(prefix)?;
        let mut call = Call::new(Method::GET, &path);
        call.query.push(("list".to_owned(), "true".to_owned()));
        let action = format!("cannot list secrets in Vault under {prefix:?}");
        let Some(data) = self.data(call, &action).await? else {
            return Ok(None);
        };
        let listing: Listing = parse(&data, &action)?;
        Ok(Some(listing.keys))
    }

    /// The `data` of an answer, `None` for a 404 or an answer without data.
    async fn data(&self, call: Call<'_>, action: &str) -> Result<Option<Box<RawValue>>> {
        let body = match self.session.send(call, action).await? {
            Reply::Body(body) => body,
            Reply::Missing => return Ok(None),
        };
        if body.is_empty() {
            return Ok(None);
        }
        let envelope: Envelope = serde_json::from_slice(&body).map_err(|_| {
            ProviderError::invalid_data(format!("{action}: the answer is not Vault's JSON"))
        })?;
        Ok(envelope.data.filter(|data| data.get() != "null"))
    }
}

fn parse<'a, T: Deserialize<'a>>(data: &'a RawValue, action: &str) -> Result<T> {
    serde_json::from_str(data.get()).map_err(|_| {
        ProviderError::invalid_data(format!(
            "{action}: unexpected answer: failed to unmarshall JSON"
        ))
    })
}

/// A metadata value as upstream prints it (`%v`): strings unquoted, anything else as JSON.
fn text(value: &RawValue) -> String {
    serde_json::from_str::<String>(value.get()).unwrap_or_else(|_| value.get().to_owned())
}
