//! The Keeper Secrets Manager wire protocol (`POST https://<host>/api/rest/sm/v1/<command>`),
//! as the KSM SDKs speak it.
//!
//! Every request: a fresh 32-byte transmission key, ECIES-encrypted to the server's public key
//! (header `TransmissionKey`, base64, with `PublicKeyId`); the JSON payload (with `clientVersion`
//! and `clientId`) AES-GCM-encrypted under the transmission key as the body; and
//! `Authorization: Signature <base64 DER ECDSA of TransmissionKey bytes ‖ body>` by the client's
//! key. A 200 answer's body is AES-GCM under the same transmission key (empty for updates).
//!
//! `get_secret` answers records shared with the application (key: AES-GCM under the app key)
//! and shared folders (folder key under the app key; each record's key under the folder key);
//! record data and file metadata are AES-GCM JSON under the record (file) key, file contents
//! are downloaded from the file's `url` and decrypted with the file key.
//!
//! Binding a one-time token: the first `get_secret` of an unbound configuration carries the
//! client's `publicKey`; the answer's `encryptedAppKey` (AES-GCM under the token) and
//! `appOwnerPublicKey` are kept in memory, and the request is made again bound.

use std::sync::RwLock;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::config::ClientConfig;
use super::crypto;
use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{self, Roots};

/// The client version the server registers (upstream runs the KSM Go SDK 16.6.4).
const CLIENT_VERSION: &str = "mg16.6.4";

/// Largest answer read: every record and folder the application can see.
const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// Largest attached file read.
const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// One decrypted record.
pub struct Record {
    /// The record uid.
    pub uid: String,
    /// The server's revision, sent back with updates.
    pub revision: i64,
    /// The record key its data is encrypted with.
    pub key: Vec<u8>,
    /// The record's JSON object (`title`, `type`, `fields`, `custom`, ...).
    pub data: Value,
    /// Attached files.
    pub files: Vec<FileRef>,
}

impl Record {
    /// The record's title.
    pub fn title(&self) -> &str {
        self.data
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The record's type.
    pub fn record_type(&self) -> &str {
        self.data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// A file attached to a record, not yet downloaded.
pub struct FileRef {
    /// The file's title (from its encrypted metadata).
    pub title: String,
    key: Vec<u8>,
    url: String,
}

/// A shared folder's key, for creating records in it.
pub struct FolderKey {
    /// The folder uid.
    pub uid: String,
    /// Its key.
    pub key: Vec<u8>,
}

/// What `get_secret` answered, decrypted.
pub struct Secrets {
    /// Every readable record.
    pub records: Vec<Record>,
    /// Every shared folder's key.
    pub folders: Vec<FolderKey>,
}

/// An authenticated connection to the Secrets Manager API.
pub struct Api {
    http: reqwest::Client,
    config: ClientConfig,
    keys: RwLock<AppKeys>,
    /// The server key in use (id, key): the configured one until the server asks for another.
    server_key: RwLock<(String, Vec<u8>)>,
}

/// The application's keys: from the configuration, or learnt when binding.
#[derive(Clone, Default)]
struct AppKeys {
    app_key: Option<Vec<u8>>,
    owner_public_key: Option<Vec<u8>>,
}

impl Api {
    /// A client of `config`'s host, trusting the system roots (`SSL_CERT_FILE` honoured).
    pub fn new(config: ClientConfig) -> Result<Self> {
        let tls = transport::tls_config(Roots::System)?;
        let http = transport::https_client(
            tls,
            TIMEOUT,
            None,
            "unable to create valid KeeperSecurity config",
        )?;
        let keys = RwLock::new(AppKeys {
            app_key: config.app_key.clone(),
            owner_public_key: config.owner_public_key.clone(),
        });
        let server_key = RwLock::new((
            config.server_key_id.clone(),
            config.server_public_key.clone(),
        ));
        Ok(Self {
            http,
            config,
            keys,
            server_key,
        })
    }

    /// Records (only `uids` when not empty) and folders shared with the application.
    pub async fn get_secrets(&self, uids: &[&str]) -> Result<Secrets> {
        let (secrets, just_bound) = self.fetch(uids).await?;
        if just_bound {
            // As the SDKs: the binding answer is followed by a bound request.
            return Ok(self.fetch(uids).await?.0);
        }
        Ok(secrets)
    }

    /// One `get_secret`, binding the configuration first when needed; whether it just bound.
    async fn fetch(&self, uids: &[&str]) -> Result<(Secrets, bool)> {
        let mut payload = self.payload();
        let known = self.keys().app_key;
        if known.is_none() {
            let public = crypto::public_key_bytes(&self.config.private_key);
            payload["publicKey"] = json!(crypto::to_base64(&public));
        }
        if !uids.is_empty() {
            payload["requestedRecords"] = json!(uids);
        }
        let body = self.post("get_secret", payload).await?;
        let answer: SecretsAnswer =
            serde_json::from_slice(&body).map_err(|_| error::bad_answer("get_secret"))?;
        let sealed_app_key = answer.encrypted_app_key.as_deref();
        let (app_key, just_bound) = match (sealed_app_key, &self.config.client_key, known) {
            (Some(sealed), Some(token), None) => (self.bind(sealed, token, &answer)?, true),
            (_, _, Some(app_key)) => (app_key, false),
            (_, _, None) => return Err(error::not_bound()),
        };
        Ok((self.decrypt_secrets(answer, &app_key), just_bound))
    }

    /// Keeps the app key (and owner key) a binding answer carries.
    fn bind(&self, sealed: &str, token: &[u8], answer: &SecretsAnswer) -> Result<Vec<u8>> {
        let app_key = unseal(sealed, token)
            .filter(|key| key.len() == 32)
            .ok_or_else(|| error::crypto("application key"))?;
        let owner = match answer.app_owner_public_key.as_deref() {
            Some(owner) => {
                Some(crypto::from_base64(owner).map_err(|_| error::bad_answer("get_secret"))?)
            }
            None => None,
        };
        let mut keys = self
            .keys
            .write()
            .unwrap_or_else(|poison| poison.into_inner());
        keys.app_key = Some(app_key.clone());
        keys.owner_public_key = owner.or(keys.owner_public_key.take());
        Ok(app_key)
    }

    fn keys(&self) -> AppKeys {
        self.keys
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    /// Creates a record with `data` (a record JSON object) in folder `folder`; returns its uid.
    pub async fn create(&self, folder: &FolderKey, data: &Value) -> Result<String> {
        let owner = self.keys().owner_public_key;
        let owner = owner.as_deref().ok_or_else(|| {
            ProviderError::invalid_config(
                "Unable to create record - owner key is missing. Looks like application was \
                 created using out of date client (Web Vault or Commander)",
            )
        })?;
        let record_key = crypto::random::<32>().map_err(|_| error::crypto("record key"))?;
        let uid = crypto::to_url_safe(&record_uid()?);
        let sealed_data = crypto::encrypt(data.to_string().as_bytes(), &record_key)
            .map_err(|_| error::crypto("record data"))?;
        let key_to_owner =
            crypto::public_encrypt(&record_key, owner).map_err(|_| error::crypto("record key"))?;
        let key_to_folder =
            crypto::encrypt(&record_key, &folder.key).map_err(|_| error::crypto("folder key"))?;
        let mut payload = self.payload();
        payload["recordUid"] = json!(uid);
        payload["recordKey"] = json!(crypto::to_base64(&key_to_owner));
        payload["folderUid"] = json!(folder.uid);
        payload["folderKey"] = json!(crypto::to_base64(&key_to_folder));
        payload["data"] = json!(crypto::to_base64(&sealed_data));
        self.post("create_secret", payload).await?;
        Ok(uid)
    }

    /// Replaces `record`'s data with `data` at the revision it was read at.
    pub async fn update(&self, record: &Record, data: &Value) -> Result<()> {
        let sealed = crypto::encrypt(data.to_string().as_bytes(), &record.key)
            .map_err(|_| error::crypto("record data"))?;
        let mut payload = self.payload();
        payload["recordUid"] = json!(record.uid);
        payload["revision"] = json!(record.revision);
        payload["data"] = json!(crypto::to_base64(&sealed));
        self.post("update_secret", payload).await.map(drop)
    }

    /// Deletes record `uid`; the server's per-record status must be `ok`.
    pub async fn delete(&self, uid: &str) -> Result<()> {
        let mut payload = self.payload();
        payload["recordUids"] = json!([uid]);
        let body = self.post("delete_secret", payload).await?;
        let answer: DeleteAnswer =
            serde_json::from_slice(&body).map_err(|_| error::bad_answer("delete_secret"))?;
        match answer.records.unwrap_or_default().into_iter().next() {
            Some(status) if status.response_code == "ok" => Ok(()),
            Some(status) => Err(error::delete_refused(
                uid,
                &status.response_code,
                status.error_message.as_deref(),
            )),
            None => Err(error::bad_answer("delete_secret")),
        }
    }

    /// The decrypted contents of `file`.
    pub async fn download(&self, file: &FileRef) -> Result<Vec<u8>> {
        let action = "unable to download KeeperSecurity file";
        let response = self
            .http
            .get(&file.url)
            .send()
            .await
            .map_err(|error| transport::transport_error(action, error))?;
        let status = response.status();
        let body = transport::read_body(response, MAX_FILE_BYTES, action).await?;
        if !status.is_success() {
            return Err(error::status(status, &body));
        }
        crypto::decrypt(&body, &file.key).map_err(|_| error::crypto("file data"))
    }

    /// The fields every payload starts with.
    fn payload(&self) -> Value {
        json!({"clientVersion": CLIENT_VERSION, "clientId": self.config.client_id})
    }

    /// One signed, encrypted command; the decrypted answer. When the server asks for another
    /// of its keys (`{"error":"key","key_id":N}`), the command is sent once more with that key,
    /// as the SDKs do.
    async fn post(&self, command: &str, payload: Value) -> Result<Vec<u8>> {
        let payload = payload.to_string();
        let (key_id, server_key) = self.server_key();
        let (status, body) = match self.send(command, &payload, &key_id, &server_key).await? {
            Ok(answer) => return Ok(answer),
            Err(refusal) => refusal,
        };
        let rotated = rotation(&body).and_then(|id| {
            let key = if self.config.custom_server_key {
                Some(server_key.clone())
            } else {
                super::config::builtin_server_key(&id)
            };
            key.map(|key| (id, key))
        });
        let Some((id, key)) = rotated.filter(|(id, _)| *id != key_id) else {
            return Err(error::status(status, &body));
        };
        *self
            .server_key
            .write()
            .unwrap_or_else(|poison| poison.into_inner()) = (id.clone(), key.clone());
        self.send(command, &payload, &id, &key)
            .await?
            .map_err(|(status, body)| error::status(status, &body))
    }

    fn server_key(&self) -> (String, Vec<u8>) {
        self.server_key
            .read()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    /// Sends `payload` once with server key `key_id`: the decrypted answer, or the refusal's
    /// status and body.
    async fn send(
        &self,
        command: &str,
        payload: &str,
        key_id: &str,
        server_key: &[u8],
    ) -> Result<std::result::Result<Vec<u8>, (reqwest::StatusCode, Vec<u8>)>> {
        let transmission_key = crypto::random::<32>().map_err(|_| error::crypto("transmission"))?;
        let sealed_key = crypto::public_encrypt(&transmission_key, server_key)
            .map_err(|_| error::crypto("transmission key"))?;
        let body = crypto::encrypt(payload.as_bytes(), &transmission_key)
            .map_err(|_| error::crypto("payload"))?;
        let mut signed = sealed_key.clone();
        signed.extend_from_slice(&body);
        let signature = crypto::sign(&signed, &self.config.private_key);
        let action = "unable to call KeeperSecurity";
        let response = self
            .http
            .post(format!("{}/api/rest/sm/v1/{command}", self.config.base_url))
            .header("Content-Type", "application/octet-stream")
            .header("PublicKeyId", key_id)
            .header("TransmissionKey", crypto::to_base64(&sealed_key))
            .header(
                "Authorization",
                format!("Signature {}", crypto::to_base64(&signature)),
            )
            .body(body)
            .send()
            .await
            .map_err(|error| transport::transport_error(action, error))?;
        let status = response.status();
        let answer = transport::read_body(response, MAX_RESPONSE_BYTES, action).await?;
        if status != reqwest::StatusCode::OK {
            return Ok(Err((status, answer)));
        }
        if answer.is_empty() {
            return Ok(Ok(answer));
        }
        crypto::decrypt(&answer, &transmission_key)
            .map(Ok)
            .map_err(|_| error::crypto("response"))
    }

    /// Decrypts an answer; records and folders that do not decrypt are skipped (as the SDKs'
    /// "bad records"), named by uid in the log.
    fn decrypt_secrets(&self, answer: SecretsAnswer, app_key: &[u8]) -> Secrets {
        let mut secrets = Secrets {
            records: Vec::new(),
            folders: Vec::new(),
        };
        for raw in answer.records.unwrap_or_default() {
            let key = match raw.record_key.as_deref().filter(|key| !key.is_empty()) {
                Some(sealed) => unseal(sealed, app_key),
                None => Some(app_key.to_vec()),
            };
            push_record(&mut secrets.records, raw, key);
        }
        for folder in answer.folders.unwrap_or_default() {
            let Some(folder_key) = unseal(&folder.folder_key, app_key) else {
                tracing::warn!(folder = %folder.folder_uid, "KeeperSecurity folder skipped: its key does not decrypt");
                continue;
            };
            for raw in folder.records.unwrap_or_default() {
                let key = raw
                    .record_key
                    .as_deref()
                    .and_then(|sealed| unseal(sealed, &folder_key));
                push_record(&mut secrets.records, raw, key);
            }
            secrets.folders.push(FolderKey {
                uid: folder.folder_uid,
                key: folder_key,
            });
        }
        secrets
    }
}

/// Adds `raw` decrypted with `key`, or logs its uid when it does not decrypt.
fn push_record(records: &mut Vec<Record>, raw: RawRecord, key: Option<Vec<u8>>) {
    let uid = raw.record_uid.clone();
    match key.and_then(|key| decrypt_record(raw, key)) {
        Some(record) => records.push(record),
        None => tracing::warn!(record = %uid, "KeeperSecurity record skipped: it does not decrypt"),
    }
}

fn decrypt_record(raw: RawRecord, key: Vec<u8>) -> Option<Record> {
    let data: Value = serde_json::from_slice(&unseal(&raw.data, &key)?).ok()?;
    if !data.is_object() {
        return None;
    }
    let mut files = Vec::new();
    for file in raw.files.unwrap_or_default() {
        let file_key = unseal(&file.file_key, &key)?;
        let meta: Value = serde_json::from_slice(&unseal(&file.data, &file_key)?).ok()?;
        files.push(FileRef {
            title: meta
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            key: file_key,
            url: file.url,
        });
    }
    Some(Record {
        uid: raw.record_uid,
        revision: raw.revision.unwrap_or_default(),
        key,
        data,
        files,
    })
}

/// The key id a key rotation answer (`{"error":"key","key_id":N}`) asks for.
fn rotation(body: &[u8]) -> Option<String> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    let code = answer.get("result_code").or_else(|| answer.get("error"))?;
    if code.as_str() != Some("key") {
        return None;
    }
    match answer.get("key_id")? {
        Value::Number(id) => Some(id.to_string()),
        Value::String(id) => Some(id.clone()),
        _ => None,
    }
}

/// AES-GCM plaintext of base64 `sealed` under `key`.
fn unseal(sealed: &str, key: &[u8]) -> Option<Vec<u8>> {
    crypto::decrypt(&crypto::from_base64(sealed).ok()?, key).ok()
}

/// 16 random bytes whose first six bits are not all set (the SDKs' record uids never start
/// with `-`).
fn record_uid() -> Result<[u8; 16]> {
    let mut uid = crypto::random::<16>().map_err(|_| error::crypto("record uid"))?;
    if uid[0] & 0xf8 == 0xf8 {
        uid[0] &= 0x7f;
    }
    Ok(uid)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SecretsAnswer {
    encrypted_app_key: Option<String>,
    app_owner_public_key: Option<String>,
    records: Option<Vec<RawRecord>>,
    folders: Option<Vec<RawFolder>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFolder {
    folder_uid: String,
    folder_key: String,
    records: Option<Vec<RawRecord>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRecord {
    record_uid: String,
    record_key: Option<String>,
    data: String,
    revision: Option<i64>,
    files: Option<Vec<RawFile>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFile {
    file_key: String,
    data: String,
    url: String,
}

#[derive(Deserialize)]
struct DeleteAnswer {
    records: Option<Vec<DeleteStatus>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeleteStatus {
    response_code: String,
    error_message: Option<String>,
}
