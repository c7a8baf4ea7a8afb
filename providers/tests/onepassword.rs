//! The `onepassword` backend against the 1Password Connect contract fake: connect-token auth,
//! vault priority, fields and files, DOCUMENT items, find by path and tags, push metadata
//! (vault, tags), delete of the last field, and error kinds.

#![cfg(feature = "onepassword")]

mod support;

use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use serde_json::json;
use support::onepassword::{TOKEN, client, fake};
use support::unique_name;

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

/// Two fresh vaults on the fake, `first` searched before `second`.
fn vaults() -> (String, String) {
    let (first, second) = (unique_name("first"), unique_name("second"));
    fake().add_vault(&first);
    fake().add_vault(&second);
    (first, second)
}

#[tokio::test]
async fn the_connect_token_is_sent_and_a_wrong_one_is_refused() {
    let (first, _) = vaults();
    let denied = client(&[(&first, 1)], "wrong-token").await;
    let error = denied.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error.message().contains("Invalid token signature"),
        "{error}"
    );
    assert!(!error.message().contains("wrong-token"), "{error}");
    let allowed = client(&[(&first, 1)], TOKEN).await;
    allowed.validate().await.unwrap();
    // Other tests share the fake: this test's requests are those naming its vault.
    let requests = fake().server.requests();
    let last = requests
        .iter()
        .rev()
        .find(|request| {
            request
                .query
                .as_deref()
                .is_some_and(|query| query.contains(&format!("{first}%22")))
        })
        .unwrap();
    assert_eq!(
        contract_fakes::server::bearer(&last.headers),
        Some(TOKEN),
        "the connect token is a bearer token"
    );
    assert_eq!(
        contract_fakes::server::header(&last.headers, "user-agent"),
        Some("external-secrets")
    );
}

#[tokio::test]
async fn vaults_are_searched_in_order_and_the_first_holding_the_title_wins() {
    let (first, second) = vaults();
    fake().add_item(&second, "db", "LOGIN", &[("password", "second")], &[], &[]);
    fake().add_item(
        &second,
        "only-second",
        "LOGIN",
        &[("password", "b")],
        &[],
        &[],
    );
    fake().add_item(&first, "db", "LOGIN", &[("password", "first")], &[], &[]);
    let client = client(&[(&second, 2), (&first, 1)], TOKEN).await;
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("db")).await.unwrap()),
        "first"
    );
    assert_eq!(
        text(
            client
                .get_secret(&RemoteRef::new("only-second"))
                .await
                .unwrap()
        ),
        "b"
    );
    let missing = client
        .get_secret(&RemoteRef::new("absent"))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert!(
        missing
            .message()
            .starts_with("key not found in 1Password Vaults"),
        "{missing}"
    );
}

#[tokio::test]
async fn fields_files_and_documents() {
    let (vault, _) = vaults();
    fake().add_item(
        &vault,
        "app",
        "LOGIN",
        &[
            ("username", "admin"),
            ("password", "pw"),
            ("twice", "a"),
            ("twice", "b"),
        ],
        &[("cert.pem", b"PEM".as_slice())],
        &[],
    );
    fake().add_item(
        &vault,
        "doc",
        "DOCUMENT",
        &[],
        &[("key.json", b"{}".as_slice())],
        &[],
    );
    let client = client(&[(&vault, 1)], TOKEN).await;
    let get = |property: &str| RemoteRef::new("app").with_property(property);
    assert_eq!(
        text(client.get_secret(&get("username")).await.unwrap()),
        "admin"
    );
    assert_eq!(
        text(client.get_secret(&get("field/password")).await.unwrap()),
        "pw"
    );
    assert_eq!(
        text(client.get_secret(&get("file/cert.pem")).await.unwrap()),
        "PEM"
    );
    let twice = client.get_secret(&get("twice")).await.unwrap_err();
    assert_eq!(twice.kind(), ErrorKind::InvalidData);
    assert!(
        twice
            .message()
            .contains("expected one 1Password ItemField matching: 'twice' in 'app', got 2"),
        "{twice}"
    );
    let absent = client.get_secret(&get("absent")).await.unwrap_err();
    assert_eq!(absent.kind(), ErrorKind::NotFound);
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("doc")).await.unwrap()),
        "{}"
    );
    let documents = client.get_secret_map(&RemoteRef::new("doc")).await.unwrap();
    assert_eq!(texts(documents), [("key.json".to_owned(), "{}".to_owned())]);
    let versioned = client
        .get_secret(&RemoteRef::new("app").with_version("2"))
        .await
        .unwrap_err();
    assert_eq!(
        versioned.message(),
        "'remoteRef.version' is not implemented in the 1Password provider"
    );
}

#[tokio::test]
async fn find_by_path_and_by_tags() {
    let (first, second) = vaults();
    fake().add_item(&first, "a", "LOGIN", &[("user", "first-a")], &[], &["team"]);
    fake().add_item(&first, "b", "LOGIN", &[("host", "first-b")], &[], &[]);
    fake().add_item(
        &second,
        "c",
        "LOGIN",
        &[("user", "second-c"), ("port", "5432")],
        &[],
        &["team"],
    );
    let client = client(&[(&first, 1), (&second, 2)], TOKEN).await;
    let all = client.get_all_secrets(&Find::by_name(".*")).await.unwrap();
    assert_eq!(
        texts(all),
        [
            ("host".to_owned(), "first-b".to_owned()),
            ("port".to_owned(), "5432".to_owned()),
            ("user".to_owned(), "first-a".to_owned()),
        ],
        "the first vault's value wins"
    );
    let by_path = Find {
        path: Some("b".into()),
        ..Find::by_name(".*")
    };
    assert_eq!(
        texts(client.get_all_secrets(&by_path).await.unwrap()),
        [("host".to_owned(), "first-b".to_owned())]
    );
    let by_tags = Find {
        tags: [("team".to_owned(), String::new())].into(),
        ..Find::default()
    };
    assert_eq!(
        texts(client.get_all_secrets(&by_tags).await.unwrap()),
        [("user".to_owned(), "first-a".to_owned())],
        "tags are searched in the first vault only, as upstream"
    );
}

fn push(
    key: &str,
    property: Option<&str>,
    value: &str,
    metadata: Option<serde_json::Value>,
) -> PushRequest {
    let data = SecretMap::from([("value".to_owned(), SecretValue::new(value))]);
    PushRequest {
        metadata,
        remote_ref: PushRemoteRef {
            property: property.map(str::to_owned),
            ..PushRemoteRef::new(key)
        },
        ..PushRequest::single(data, "value", key)
    }
}

#[tokio::test]
async fn pushes_create_tagged_items_update_fields_and_deletes_remove_them() {
    let (first, second) = vaults();
    let client = client(&[(&first, 1), (&second, 2)], TOKEN).await;
    let metadata = json!({
        "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
        "kind": "PushSecretMetadata",
        "spec": {"vault": second, "tags": ["pushed"]},
    });
    client
        .push_secret(&push("new", None, "v1", Some(metadata)))
        .await
        .unwrap();
    let items = fake().items(&second);
    let [item] = items.as_slice() else {
        panic!("one item: {items:?}")
    };
    assert_eq!(item["category"], "SERVER");
    assert_eq!(item["tags"], json!(["pushed"]));
    assert_eq!(item["fields"][0]["label"], "password");
    assert_eq!(item["fields"][0]["type"], "CONCEALED");
    assert_eq!(item["fields"][0]["value"], "v1");
    client
        .push_secret(&push("new", Some("user"), "u", None))
        .await
        .unwrap();
    client
        .push_secret(&push("new", None, "v2", None))
        .await
        .unwrap();
    let map = client.get_secret_map(&RemoteRef::new("new")).await.unwrap();
    assert_eq!(
        texts(map),
        [
            ("password".to_owned(), "v2".to_owned()),
            ("user".to_owned(), "u".to_owned())
        ]
    );
    assert!(
        client
            .secret_exists(&PushRemoteRef::new("new"))
            .await
            .unwrap()
    );
    client
        .delete_secret(&PushRemoteRef::new("new"))
        .await
        .unwrap();
    assert_eq!(
        fake().items(&second).len(),
        1,
        "one field left, the item stays"
    );
    let user = PushRemoteRef {
        property: Some("user".into()),
        ..PushRemoteRef::new("new")
    };
    client.delete_secret(&user).await.unwrap();
    assert!(
        fake().items(&second).is_empty(),
        "the emptied item is deleted"
    );
    client.delete_secret(&user).await.unwrap();
    let foreign = json!({
        "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
        "kind": "PushSecretMetadata",
        "spec": {"vault": "elsewhere"},
    });
    let error = client
        .push_secret(&push("other", None, "v", Some(foreign)))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .contains("metadata vault 'elsewhere' not in provider vaults"),
        "{error}"
    );
}

#[tokio::test]
async fn a_missing_vault_is_a_configuration_error_not_a_missing_secret() {
    let client = client(&[("no-such-vault", 1)], TOKEN).await;
    let error = client.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(
        error.message().starts_with("error finding 1Password Vault"),
        "{error}"
    );
}
