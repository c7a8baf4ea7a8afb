//! The keepersecurity provider against the Keeper Secrets Manager contract fake
//! (`contract-fakes::keeper`, which decrypts and verifies every request): reads by uid and by
//! title, standard and custom fields and files, the whole-record JSON, find, push (create and
//! update) and delete, the protocol envelope, the auth failures (wrong key, wrong server key),
//! and binding a one-time token.

#![cfg(feature = "keepersecurity")]

mod support;

use base64::Engine as _;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::{ErrorKind, SecretMap, SecretValue};
use serde_json::{Value, json};

use support::keepersecurity::{client, fake, store_provider};
use support::unique_name;

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

/// The configuration JSON inside a base64 configuration.
fn decoded(config: &str) -> Value {
    let json = base64::engine::general_purpose::STANDARD
        .decode(config)
        .unwrap();
    serde_json::from_slice(&json).unwrap()
}

/// A folder shared with a fresh application, and that application's configuration.
fn application() -> (String, String) {
    let folder = unique_name("folder");
    let config = fake().add_application(&folder);
    (folder, config)
}

fn login_record(title: &str) -> Value {
    json!({
        "type": "login",
        "title": title,
        "fields": [
            {"type": "login", "value": ["admin"]},
            {"type": "password", "value": ["hunter2"]},
            {"type": "url", "label": "endpoint", "value": ["https://db"]},
            {"type": "fileRef", "value": []},
        ],
        "custom": [{"type": "text", "label": "region", "value": ["eu"]}],
    })
}

fn push(remote_key: &str, key: &str, value: &str) -> PushRequest {
    let data = SecretMap::from([(key.to_owned(), SecretValue::new(value))]);
    PushRequest::single(data, key, remote_key)
}

#[tokio::test]
async fn records_read_by_uid_with_fields_custom_fields_and_files() {
    let (folder, config) = application();
    let uid = fake().add_record(&folder, login_record("db"));
    fake().add_file(&uid, "ca.pem", b"-----BEGIN CERTIFICATE-----");
    let reader = client(store_provider(&folder, false), &config).await;
    let read = |property: &str| RemoteRef::new(&uid).with_property(property);
    assert_eq!(
        text(reader.get_secret(&read("password")).await.unwrap()),
        "hunter2"
    );
    assert_eq!(
        text(reader.get_secret(&read("endpoint")).await.unwrap()),
        "https://db"
    );
    assert_eq!(
        text(reader.get_secret(&read("region")).await.unwrap()),
        "eu"
    );
    assert_eq!(
        text(reader.get_secret(&read("ca.pem")).await.unwrap()),
        "-----BEGIN CERTIFICATE-----"
    );
    let missing = reader.get_secret(&read("absent")).await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);

    let whole: Value = serde_json::from_slice(
        &reader
            .get_secret(&RemoteRef::new(&uid))
            .await
            .unwrap()
            .into_bytes(),
    )
    .unwrap();
    assert_eq!(whole["title"], "db");
    assert_eq!(whole["type"], "login");
    assert_eq!(whole["custom"][0]["label"], "region");
    assert_eq!(
        whole["files"],
        json!([{"type": "ca.pem", "content": "-----BEGIN CERTIFICATE-----"}])
    );

    let map = reader.get_secret_map(&RemoteRef::new(&uid)).await.unwrap();
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    assert_eq!(keys, ["ca.pem", "endpoint", "login", "password", "region"]);

    // Without getByTitleFallback a title is no key.
    let by_title = reader.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(by_title.kind(), ErrorKind::NotFound);
    assert_eq!(by_title.to_string(), "no secrets found");
}

#[tokio::test]
async fn every_request_is_an_encrypted_signed_command() {
    let (folder, config) = application();
    let uid = fake().add_record(&folder, login_record("envelope"));
    let reader = client(store_provider(&folder, false), &config).await;
    reader
        .get_secret(&RemoteRef::new(&uid).with_property("login"))
        .await
        .unwrap();
    let sent = fake()
        .server
        .requests()
        .into_iter()
        .filter(|request| request.path == "/api/rest/sm/v1/get_secret")
        .last()
        .expect("a get_secret command");
    let header = |name: &str| sent.headers.get(name).unwrap().to_str().unwrap().to_owned();
    assert_eq!(sent.method, "POST");
    assert_eq!(header("publickeyid"), "10");
    assert_eq!(header("content-type"), "application/octet-stream");
    assert!(header("authorization").starts_with("Signature "));
    // An ECIES envelope: 65-byte point, 12-byte nonce, 32-byte key, 16-byte tag.
    let sealed_key = base64::engine::general_purpose::STANDARD
        .decode(header("transmissionkey"))
        .unwrap();
    assert_eq!(sealed_key.len(), 65 + 12 + 32 + 16);
}

#[tokio::test]
async fn a_key_of_another_client_or_the_wrong_server_key_is_refused() {
    let (folder, config) = application();
    let (_, other) = application();
    fake().add_record(&folder, login_record("guarded"));
    let mut forged = decoded(&config);
    forged["privateKey"] = decoded(&other)["privateKey"].clone();
    let reader = client(store_provider(&folder, true), &forged.to_string()).await;
    let error = reader
        .get_secret(&RemoteRef::new("guarded").with_property("password"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.to_string().contains("hunter2"));

    // Without the configured server key the built-in key 10 is used, which the fake cannot
    // open: the transmission key is refused.
    let mut builtin = decoded(&config);
    builtin.as_object_mut().unwrap().remove("serverPublicKey");
    let reader = client(store_provider(&folder, true), &builtin.to_string()).await;
    let error = reader
        .get_secret(&RemoteRef::new("guarded").with_property("password"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert_eq!(
        error.to_string(),
        "unable to find secret guarded. Error: POST Error: Error: key, message=transmission key \
         does not decrypt"
    );
}

#[tokio::test]
async fn a_key_rotation_answer_switches_the_server_key_id() {
    let (folder, config) = application();
    fake().add_record(&folder, login_record("rotated"));
    let mut stale = decoded(&config);
    stale["serverPublicKeyId"] = json!("11");
    let reader = client(store_provider(&folder, true), &stale.to_string()).await;
    let read = RemoteRef::new("rotated").with_property("password");
    assert_eq!(text(reader.get_secret(&read).await.unwrap()), "hunter2");
    let ids: Vec<String> = fake()
        .server
        .requests()
        .iter()
        .filter_map(|request| request.headers.get("publickeyid"))
        .map(|id| id.to_str().unwrap().to_owned())
        .collect();
    assert!(ids.iter().any(|id| id == "11"), "{ids:?}");
    // The client keeps the key id the server asked for (other tests of this process share the
    // fake, but none of them sends key id 11).
    let before = fake().server.requests().len();
    reader.get_secret(&read).await.unwrap();
    let stale_ids = fake()
        .server
        .requests()
        .iter()
        .skip(before)
        .filter(|request| {
            request
                .headers
                .get("publickeyid")
                .is_some_and(|id| id == "11")
        })
        .count();
    assert_eq!(stale_ids, 0);
}

#[tokio::test]
async fn a_one_time_token_binds_once() {
    let folder = unique_name("folder");
    let token_config = fake().add_one_time_token(&folder);
    fake().add_record(&folder, login_record("bound"));
    let reader = client(store_provider(&folder, true), &token_config).await;
    let read = RemoteRef::new("bound").with_property("password");
    assert_eq!(text(reader.get_secret(&read).await.unwrap()), "hunter2");
    // Bound: later commands are signed with the registered key, pushes have the owner key.
    assert_eq!(text(reader.get_secret(&read).await.unwrap()), "hunter2");
    reader
        .push_secret(&push("after-binding/password", "password", "p"))
        .await
        .unwrap();
    assert_eq!(fake().records_titled("after-binding").len(), 1);
    // The token is spent: another client with it has an unknown key.
    let again = client(store_provider(&folder, true), &token_config).await;
    let error = again.get_secret(&read).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
}

#[tokio::test]
async fn titles_with_fallback_and_find_by_title() {
    let (folder, config) = application();
    fake().add_record(&folder, login_record("app-db"));
    fake().add_record(&folder, login_record("app-cache"));
    fake().add_record(&folder, login_record("twice"));
    fake().add_record(&folder, login_record("twice"));
    let reader = client(store_provider(&folder, true), &config).await;
    let value = reader
        .get_secret(&RemoteRef::new("app-db").with_property("login"))
        .await
        .unwrap();
    assert_eq!(text(value), "admin");
    let error = reader
        .get_secret(&RemoteRef::new("twice"))
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), "more than 1 secret twice found");

    let found = reader
        .get_all_secrets(&Find::by_name("^app-"))
        .await
        .unwrap();
    let titles: Vec<&str> = found.keys().map(String::as_str).collect();
    assert_eq!(titles, ["app-cache", "app-db"]);
    let record: Value = serde_json::from_slice(found["app-db"].expose()).unwrap();
    assert_eq!(
        record["fields"][1],
        json!({"type": "password", "value": ["hunter2"]})
    );

    let mut tagged = Find::by_name(".*");
    tagged.tags.insert("env".into(), "prod".into());
    let error = reader.get_all_secrets(&tagged).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "'find.tags' is not implemented in the KeeperSecurity provider"
    );
    let mut pathed = Find::by_name(".*");
    pathed.path = Some("x".into());
    let error = reader.get_all_secrets(&pathed).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
}

#[tokio::test]
async fn pushes_create_and_update_external_secrets_records_and_delete_removes_them() {
    let (folder, config) = application();
    // A record of another type with the title is left alone.
    fake().add_record(&folder, login_record("pushed"));
    let writer = client(store_provider(&folder, true), &config).await;
    writer
        .push_secret(&push("pushed/api-token", "api-token", "t1"))
        .await
        .unwrap();
    let records = fake().records_titled("pushed");
    let created: Vec<&Value> = records
        .iter()
        .map(|(_, data)| data)
        .filter(|data| data["type"] == "externalSecrets")
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(
        created[0]["custom"],
        json!([{"type": "secret", "label": "api-token", "value": ["t1"]}])
    );
    writer
        .push_secret(&push("pushed/api-token", "api-token", "t2"))
        .await
        .unwrap();
    writer
        .push_secret(&push("pushed/DB_USERNAME", "DB_USERNAME", "root"))
        .await
        .unwrap();
    let (uid, data) = fake()
        .records_titled("pushed")
        .into_iter()
        .find(|(_, data)| data["type"] == "externalSecrets")
        .unwrap();
    assert_eq!(data["custom"][0]["value"], json!(["t2"]));
    assert_eq!(
        data["fields"],
        json!([{"type": "login", "value": ["root"]}])
    );
    for (key, expected) in [
        ("pushed/api-token", true),
        ("pushed/username", true),
        ("pushed/password", false),
    ] {
        let exists = writer
            .secret_exists(&PushRemoteRef::new(key))
            .await
            .unwrap();
        assert_eq!(exists, expected, "{key}");
    }

    let error = writer
        .push_secret(&push("pushed/other", "other", "v"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "secret pushed does not contain any custom field with label other"
    );
    let error = writer
        .push_secret(&push("no-slash", "k", "v"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "match.remoteRef.remoteKey. Invalid format. Format should match secretName/key got \
         no-slash"
    );

    writer
        .delete_secret(&PushRemoteRef::new("pushed/api-token"))
        .await
        .unwrap();
    let left = fake().records_titled("pushed");
    assert_eq!(left.len(), 1);
    assert!(left.iter().all(|(left_uid, _)| *left_uid != uid));
    writer
        .delete_secret(&PushRemoteRef::new("pushed/api-token"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_push_into_a_folder_the_application_does_not_share_is_refused() {
    let (_, config) = application();
    let writer = client(store_provider("not-shared", true), &config).await;
    let error = writer
        .push_secret(&push("new/password", "password", "v"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(
        error
            .to_string()
            .starts_with("folder uid='not-shared' was not retrieved")
    );
}
