//! A contract fake of the Keeper Secrets Manager API — a fake, not Keeper.
//!
//! It serves the server side of the KSM wire protocol as the KSM SDKs speak it (Keeper's
//! developer documentation, <https://docs.keeper.io/secrets-manager/secrets-manager/developer-sdk-library>,
//! and the published SDK sources, e.g. the Python `keeper-secrets-manager-core` and the Go
//! `secrets-manager-go`): `POST /api/rest/sm/v1/<command>` where
//!
//! * header `PublicKeyId` must name the fake's server key ([`SERVER_KEY_ID`]; otherwise 401
//!   `{"error":"key","key_id":...}`, the SDKs' key rotation answer), `TransmissionKey` is base64
//!   of a 32-byte key ECIES-encrypted to that key, the body is the JSON payload AES-GCM under
//!   the transmission key, and `Authorization: Signature <base64 DER ECDSA-SHA256>` signs
//!   `TransmissionKey bytes ‖ body` with the client's key (bad ones: 400/401
//!   `{"result_code":...,"message":...}`);
//! * the payload carries `clientVersion` and `clientId` (an unknown client is 403
//!   `access_denied`); an unbound client (a one-time token) signs with, and sends, `publicKey`
//!   in its first `get_secret`, which answers `encryptedAppKey` (AES-GCM of the app key under
//!   the token) and `appOwnerPublicKey`, and is the token's only use;
//! * `get_secret` (`requestedRecords` filters) answers the application's shared folders:
//!   `folderKey` under the app key, each record's `recordKey` under the folder key, `data` and
//!   file metadata under the record (file) key, file `url`s served at `GET /files/<uid>`
//!   (contents AES-GCM under the file key);
//! * `create_secret` (`recordUid`, `recordKey` ECIES to the owner, `folderUid`, `folderKey` =
//!   the record key under the folder key, `data`): every part must decrypt and agree;
//! * `update_secret` (`recordUid`, `revision`, `data`): the revision must be current (400
//!   `out_of_sync` otherwise); `delete_secret` (`recordUids`): per-record `responseCode`.
//!
//! Every answer body is AES-GCM under the request's transmission key.

mod crypto;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use p256::SecretKey;
use p256::pkcs8::EncodePrivateKey as _;
use serde_json::{Value, json};

use crate::server::{FakeServer, header, reject};

/// The id of the fake's transmission key (one of the ids Keeper publishes, so that a client
/// ignoring the configured `serverPublicKey` encrypts to Keeper's key and is refused).
pub const SERVER_KEY_ID: &str = "10";

struct App {
    /// The client's public key; `None` until a one-time token is bound.
    public_key: Option<Vec<u8>>,
    one_time_token: Option<Vec<u8>>,
    app_key: [u8; 32],
    owner: SecretKey,
    folders: Vec<String>,
}

struct Folder {
    key: [u8; 32],
    records: Vec<StoredRecord>,
}

struct StoredRecord {
    uid: String,
    key: [u8; 32],
    revision: i64,
    data: Value,
    files: Vec<StoredFile>,
}

struct StoredFile {
    uid: String,
    key: [u8; 32],
    title: String,
}

struct Data {
    server_key: SecretKey,
    apps: HashMap<String, App>,
    folders: HashMap<String, Folder>,
    /// Sealed file contents by file uid.
    contents: HashMap<String, Vec<u8>>,
    url: OnceLock<String>,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake KSM API and handles to seed and inspect it.
pub struct KeeperFake {
    /// The HTTPS server (URL, CA, request log).
    pub server: FakeServer,
    data: Shared,
}

impl KeeperFake {
    /// Starts an empty fake with a fresh server key.
    pub async fn start() -> std::io::Result<Self> {
        let data: Shared = Arc::new(Mutex::new(Data {
            server_key: crypto::new_key(),
            apps: HashMap::new(),
            folders: HashMap::new(),
            contents: HashMap::new(),
            url: OnceLock::new(),
        }));
        let router = Router::new()
            .route("/api/rest/sm/v1/{command}", post(command))
            .route("/files/{uid}", get(file))
            .with_state(data.clone());
        let server = FakeServer::https(router).await?;
        let _ = lock(&data).url.set(server.url.clone());
        Ok(Self { server, data })
    }

    /// A bound application sharing folder `folder` (created when new): its client
    /// configuration, base64 JSON as `ksm init` writes it.
    pub fn add_application(&self, folder: &str) -> String {
        let client_key = crypto::new_key();
        let token = crypto::random::<32>();
        let client_id = crypto::client_id(&token);
        let mut data = self.lock();
        let app = new_app(&mut data, folder, Some(crypto::public_bytes(&client_key)));
        let der = client_key.to_pkcs8_der().expect("PKCS#8 of a fresh key");
        let config = json!({
            "hostname": self.server.url,
            "clientId": client_id,
            "privateKey": crypto::b64(der.as_bytes()),
            "appKey": crypto::b64(&app.app_key),
            "appOwnerPublicKey": crypto::b64(&crypto::public_bytes(&app.owner)),
            "serverPublicKeyId": SERVER_KEY_ID,
            "serverPublicKey": crypto::url_safe(&crypto::public_bytes(&data.server_key)),
        });
        data.apps.insert(client_id, app);
        crypto::b64(config.to_string().as_bytes())
    }

    /// An application not bound yet, sharing `folder`: a configuration holding only its
    /// one-time token (`clientKey`), host and server key, as JSON.
    pub fn add_one_time_token(&self, folder: &str) -> String {
        let token = crypto::random::<32>();
        let mut data = self.lock();
        let mut app = new_app(&mut data, folder, None);
        app.one_time_token = Some(token.to_vec());
        let config = json!({
            "hostname": self.server.url,
            "clientKey": crypto::url_safe(&token),
            "serverPublicKeyId": SERVER_KEY_ID,
            "serverPublicKey": crypto::url_safe(&crypto::public_bytes(&data.server_key)),
        });
        data.apps.insert(crypto::client_id(&token), app);
        config.to_string()
    }

    /// Adds a record with `data` (a record JSON object) to `folder`; returns its uid.
    pub fn add_record(&self, folder: &str, data: Value) -> String {
        let uid = crypto::url_safe(&crypto::random::<16>());
        let mut state = self.lock();
        let folder = state
            .folders
            .get_mut(folder)
            .expect("a folder of an application");
        folder.records.push(StoredRecord {
            uid: uid.clone(),
            key: crypto::random::<32>(),
            revision: 1,
            data,
            files: Vec::new(),
        });
        uid
    }

    /// Attaches a file titled `title` holding `content` to record `uid`.
    pub fn add_file(&self, uid: &str, title: &str, content: &[u8]) {
        let file_uid = crypto::url_safe(&crypto::random::<16>());
        let key = crypto::random::<32>();
        let mut state = self.lock();
        state
            .contents
            .insert(file_uid.clone(), crypto::seal(content, &key));
        let record = state
            .folders
            .values_mut()
            .flat_map(|folder| folder.records.iter_mut())
            .find(|record| record.uid == uid)
            .expect("a record of the fake");
        record.files.push(StoredFile {
            uid: file_uid,
            key,
            title: title.to_owned(),
        });
    }

    /// The data of every record titled `title`, with its uid.
    pub fn records_titled(&self, title: &str) -> Vec<(String, Value)> {
        self.lock()
            .folders
            .values()
            .flat_map(|folder| folder.records.iter())
            .filter(|record| record.data.get("title").and_then(Value::as_str) == Some(title))
            .map(|record| (record.uid.clone(), record.data.clone()))
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, Data> {
        lock(&self.data)
    }
}

/// An application sharing `folder` (created when new), with fresh app and owner keys.
fn new_app(data: &mut Data, folder: &str, public_key: Option<Vec<u8>>) -> App {
    data.folders
        .entry(folder.to_owned())
        .or_insert_with(|| Folder {
            key: crypto::random::<32>(),
            records: Vec::new(),
        });
    App {
        public_key,
        one_time_token: None,
        app_key: crypto::random::<32>(),
        owner: crypto::new_key(),
        folders: vec![folder.to_owned()],
    }
}

fn lock(data: &Shared) -> MutexGuard<'_, Data> {
    data.lock().unwrap_or_else(|poison| poison.into_inner())
}

fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    reject(status, json!({"result_code": code, "message": message}))
}

/// One KSM command: checks the envelope, runs the command, seals the answer.
async fn command(
    State(data): State<Shared>,
    Path(command): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut state = lock(&data);
    if header(&headers, "publickeyid") != Some(SERVER_KEY_ID) {
        return reject(
            StatusCode::UNAUTHORIZED,
            json!({"error": "key", "key_id": 10}),
        );
    }
    if header(&headers, "content-type") != Some("application/octet-stream") {
        return refuse(StatusCode::BAD_REQUEST, "bad_request", "content type");
    }
    let sealed_key = header(&headers, "transmissionkey").and_then(crypto::unb64);
    let Some(sealed_key) = sealed_key else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "no transmission key",
        );
    };
    let Some(transmission_key) =
        crypto::ecies_open(&sealed_key, &state.server_key).filter(|key| key.len() == 32)
    else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "key",
            "transmission key does not decrypt",
        );
    };
    let payload = crypto::open(&body, &transmission_key)
        .and_then(|plain| serde_json::from_slice::<Value>(&plain).ok());
    let Some(payload) = payload else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "payload does not decrypt",
        );
    };
    let text = |name: &str| {
        payload
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    if !text("clientVersion").starts_with("m") {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid_client_version",
            "unknown client",
        );
    }
    let client_id = text("clientId").to_owned();
    let Some(app) = state.apps.get_mut(&client_id) else {
        return refuse(StatusCode::FORBIDDEN, "access_denied", "unknown client");
    };
    let binding = app.public_key.is_none();
    let signer = match &app.public_key {
        Some(key) => Some(key.clone()),
        None if command == "get_secret" => crypto::unb64(text("publicKey")),
        None => None,
    };
    let signature = header(&headers, "authorization")
        .and_then(|value| value.strip_prefix("Signature "))
        .and_then(crypto::unb64)
        .unwrap_or_default();
    let signed = [sealed_key.as_slice(), &body].concat();
    let verified = signer
        .as_deref()
        .is_some_and(|key| crypto::verify(key, &signed, &signature));
    if !verified {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "invalid_signature",
            "signature is invalid",
        );
    }
    let answer = match command.as_str() {
        "get_secret" if binding => bind(&mut state, &client_id, &payload),
        "get_secret" => get_secret(&state, &client_id, &payload),
        "create_secret" => create_secret(&mut state, &client_id, &payload),
        "update_secret" => update_secret(&mut state, &client_id, &payload),
        "delete_secret" => delete_secret(&mut state, &client_id, &payload),
        _ => return refuse(StatusCode::NOT_FOUND, "not_found", "unknown command"),
    };
    match answer {
        Ok(Some(answer)) => {
            let sealed = crypto::seal(answer.to_string().as_bytes(), &transmission_key);
            (StatusCode::OK, sealed).into_response()
        }
        Ok(None) => StatusCode::OK.into_response(),
        Err((code, message)) => refuse(StatusCode::BAD_REQUEST, code, message),
    }
}

type Answer = Result<Option<Value>, (&'static str, &'static str)>;

/// A one-time token's first `get_secret`: registers the client key, answers the app key.
fn bind(state: &mut Data, client_id: &str, payload: &Value) -> Answer {
    let public_key = payload
        .get("publicKey")
        .and_then(Value::as_str)
        .and_then(crypto::unb64);
    let app = state
        .apps
        .get_mut(client_id)
        .ok_or(("access_denied", "unknown client"))?;
    let token = app
        .one_time_token
        .take()
        .ok_or(("access_denied", "token used"))?;
    app.public_key = public_key;
    let mut answer = get_secret(&*state, client_id, payload)?.unwrap_or_default();
    let app = state
        .apps
        .get(client_id)
        .ok_or(("access_denied", "unknown client"))?;
    answer["encryptedAppKey"] = json!(crypto::url_safe(&crypto::seal(&app.app_key, &token)));
    answer["appOwnerPublicKey"] = json!(crypto::url_safe(&crypto::public_bytes(&app.owner)));
    Ok(Some(answer))
}

fn get_secret(state: &Data, client_id: &str, payload: &Value) -> Answer {
    let app = state
        .apps
        .get(client_id)
        .ok_or(("access_denied", "unknown client"))?;
    let requested: Vec<&str> = payload
        .get("requestedRecords")
        .and_then(Value::as_array)
        .map(|uids| uids.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let url = state.url.get().cloned().unwrap_or_default();
    let mut folders = Vec::new();
    for uid in &app.folders {
        let Some(folder) = state.folders.get(uid) else {
            continue;
        };
        let records: Vec<Value> = folder
            .records
            .iter()
            .filter(|record| requested.is_empty() || requested.contains(&record.uid.as_str()))
            .map(|record| sealed_record(record, &folder.key, &url))
            .collect();
        folders.push(json!({
            "folderUid": uid,
            "folderKey": crypto::b64(&crypto::seal(&folder.key, &app.app_key)),
            "records": records,
        }));
    }
    Ok(Some(
        json!({"records": null, "folders": folders, "warnings": null}),
    ))
}

fn sealed_record(record: &StoredRecord, folder_key: &[u8], url: &str) -> Value {
    let files: Vec<Value> = record
        .files
        .iter()
        .map(|file| {
            let meta = json!({"name": file.title, "title": file.title, "type": "text/plain"});
            json!({
                "fileUid": file.uid,
                "fileKey": crypto::b64(&crypto::seal(&file.key, &record.key)),
                "data": crypto::b64(&crypto::seal(meta.to_string().as_bytes(), &file.key)),
                "url": format!("{url}/files/{}", file.uid),
            })
        })
        .collect();
    json!({
        "recordUid": record.uid,
        "recordKey": crypto::b64(&crypto::seal(&record.key, folder_key)),
        "data": crypto::b64(&crypto::seal(record.data.to_string().as_bytes(), &record.key)),
        "revision": record.revision,
        "isEditable": true,
        "files": files,
    })
}

fn field<'a>(payload: &'a Value, name: &str) -> Result<&'a str, (&'static str, &'static str)> {
    payload
        .get(name)
        .and_then(Value::as_str)
        .ok_or(("bad_request", "a required payload field is missing"))
}

fn bytes(payload: &Value, name: &str) -> Result<Vec<u8>, (&'static str, &'static str)> {
    crypto::unb64(field(payload, name)?).ok_or(("bad_request", "a payload field is not base64"))
}

/// The record data JSON object `sealed` holds under `key`.
fn record_data(sealed: &[u8], key: &[u8]) -> Result<Value, (&'static str, &'static str)> {
    crypto::open(sealed, key)
        .and_then(|plain| serde_json::from_slice::<Value>(&plain).ok())
        .filter(|data| data.get("type").is_some_and(Value::is_string))
        .filter(|data| data.get("title").is_some_and(Value::is_string))
        .ok_or((
            "bad_request",
            "record data does not decrypt to a typed record",
        ))
}

fn create_secret(state: &mut Data, client_id: &str, payload: &Value) -> Answer {
    let app = state
        .apps
        .get(client_id)
        .ok_or(("access_denied", "unknown client"))?;
    let folder_uid = field(payload, "folderUid")?;
    if !app.folders.iter().any(|folder| folder == folder_uid) {
        return Err(("access_denied", "folder not shared with the application"));
    }
    let record_key = crypto::ecies_open(&bytes(payload, "recordKey")?, &app.owner)
        .filter(|key| key.len() == 32)
        .ok_or((
            "bad_request",
            "record key does not decrypt with the owner key",
        ))?;
    let folder = state
        .folders
        .get_mut(folder_uid)
        .ok_or(("not_found", "no such folder"))?;
    if crypto::open(&bytes(payload, "folderKey")?, &folder.key).as_deref() != Some(&record_key[..])
    {
        return Err(("bad_request", "folder key does not hold the record key"));
    }
    let data = record_data(&bytes(payload, "data")?, &record_key)?;
    let uid = field(payload, "recordUid")?;
    let valid_uid = base64_url_bytes(uid).is_some_and(|bytes| bytes.len() == 16);
    if !valid_uid || folder.records.iter().any(|record| record.uid == uid) {
        return Err(("bad_request", "record uid is invalid or taken"));
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(&record_key);
    folder.records.push(StoredRecord {
        uid: uid.to_owned(),
        key,
        revision: 1,
        data,
        files: Vec::new(),
    });
    Ok(None)
}

fn base64_url_bytes(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()
}

/// The application's record `uid`, mutable.
fn app_record<'a>(
    state: &'a mut Data,
    client_id: &str,
    uid: &str,
) -> Option<(&'a mut Vec<StoredRecord>, usize)> {
    let folders = state.apps.get(client_id)?.folders.clone();
    for (uid_of_folder, folder) in state.folders.iter_mut() {
        if !folders.contains(uid_of_folder) {
            continue;
        }
        if let Some(index) = folder.records.iter().position(|record| record.uid == uid) {
            return Some((&mut folder.records, index));
        }
    }
    None
}

fn update_secret(state: &mut Data, client_id: &str, payload: &Value) -> Answer {
    let uid = field(payload, "recordUid")?.to_owned();
    let revision = payload.get("revision").and_then(Value::as_i64);
    let sealed = bytes(payload, "data")?;
    let (records, index) =
        app_record(state, client_id, &uid).ok_or(("not_found", "no such record"))?;
    let record = records
        .get_mut(index)
        .ok_or(("not_found", "no such record"))?;
    if revision != Some(record.revision) {
        return Err(("out_of_sync", "record revision is not current"));
    }
    record.data = record_data(&sealed, &record.key)?;
    record.revision += 1;
    Ok(None)
}

fn delete_secret(state: &mut Data, client_id: &str, payload: &Value) -> Answer {
    let uids: Vec<String> = payload
        .get("recordUids")
        .and_then(Value::as_array)
        .map(|uids| {
            uids.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut statuses = Vec::new();
    for uid in uids {
        let code = match app_record(state, client_id, &uid) {
            Some((records, index)) => {
                records.remove(index);
                "ok"
            }
            None => "not_found",
        };
        statuses.push(json!({"recordUid": uid, "responseCode": code, "errorMessage": ""}));
    }
    Ok(Some(json!({"records": statuses})))
}

/// A file's sealed contents, as the storage URL the server hands out serves them.
async fn file(State(data): State<Shared>, Path(uid): Path<String>) -> Response {
    match lock(&data).contents.get(&uid) {
        Some(sealed) => (StatusCode::OK, sealed.clone()).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
