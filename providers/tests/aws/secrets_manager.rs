//! `service: SecretsManager`: reads by name, ARN and version, binary values, properties, tags,
//! the store's prefix, find by name, path and tags, pushes (ownership tag, property merge,
//! formats, tags) and deletes (only ours, with the store's recovery settings).

use std::collections::BTreeMap;

use external_secrets_providers::request::{
    Find, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef,
};
use external_secrets_providers::{ErrorKind, SecretMap, SecretValue, SharedClient};
use serde_json::json;

use super::support::aws::{Account, MotoServer};
use super::{remote, text, with};

/// A fresh account and a SecretsManager client acting in it.
async fn setup() -> (Account, SharedClient) {
    let account = MotoServer::shared().account().await;
    let client = account
        .client(&account.provider("SecretsManager"))
        .await
        .unwrap();
    (account, client)
}

fn found(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect()
}

/// A push of `value` (as the Secret's key `k`) to `remote_key`, with PushSecretMetadata `spec`.
fn push(remote_key: &str, value: &str, spec: Option<serde_json::Value>) -> PushRequest {
    PushRequest {
        metadata: spec.map(|spec| {
            json!({"apiVersion": "kubernetes.external-secrets.io/v1alpha1",
                   "kind": "PushSecretMetadata", "spec": spec})
        }),
        ..PushRequest::single(
            [("k".to_owned(), SecretValue::from(value))].into(),
            "k",
            remote_key,
        )
    }
}

/// The tags of secret `name`.
async fn tags_of(account: &Account, name: &str) -> BTreeMap<String, String> {
    let description = account
        .secrets_manager()
        .describe_secret()
        .secret_id(name)
        .send()
        .await
        .unwrap();
    description
        .tags()
        .iter()
        .map(|tag| {
            (
                tag.key().unwrap().to_owned(),
                tag.value().unwrap().to_owned(),
            )
        })
        .collect()
}

/// How many versions secret `name` has.
async fn versions_of(account: &Account, name: &str) -> usize {
    let listed = account
        .secrets_manager()
        .list_secret_version_ids()
        .secret_id(name)
        .send()
        .await
        .unwrap();
    listed.versions().len()
}

#[tokio::test]
async fn reads_by_name_arn_stage_and_version_id() {
    let (account, client) = setup().await;
    let created = account
        .secrets_manager()
        .create_secret()
        .name("db")
        .secret_string("first")
        .send()
        .await
        .unwrap();
    let first_id = created.version_id().unwrap().to_owned();
    account
        .secrets_manager()
        .put_secret_value()
        .secret_id("db")
        .secret_string("second")
        .send()
        .await
        .unwrap();
    let read = |remote_ref: RemoteRef| {
        let client = client.clone();
        async move { client.get_secret(&remote_ref).await }
    };
    assert_eq!(text(read(remote("db")).await.unwrap()), "second");
    let previous = remote("db").with_version("AWSPREVIOUS");
    assert_eq!(text(read(previous).await.unwrap()), "first");
    let by_id = remote("db").with_version(format!("uuid/{first_id}"));
    assert_eq!(text(read(by_id).await.unwrap()), "first");
    let arn = created.arn().unwrap();
    assert_eq!(text(read(remote(arn)).await.unwrap()), "second");
    let error = read(remote("db").with_version("NOSUCHSTAGE"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
}

#[tokio::test]
async fn binary_secrets_read_as_their_bytes() {
    let (account, client) = setup().await;
    let bytes = [0_u8, 159, 146, 150];
    account.create_binary_secret("raw", &bytes).await;
    account
        .create_binary_secret("json", br#"{"user":"admin"}"#)
        .await;
    let value = client.get_secret(&remote("raw")).await.unwrap();
    assert_eq!(value.expose(), bytes);
    let user = client
        .get_secret(&remote("json").with_property("user"))
        .await
        .unwrap();
    assert_eq!(text(user), "admin");
}

#[tokio::test]
async fn properties_and_maps_follow_gjson() {
    let (account, client) = setup().await;
    let document = r#"{"a.b":"literal","a":{"b":"nested","c":1},"list":["x"]}"#;
    account.create_secret("json", document).await;
    account.create_secret("plain", "not json").await;
    let property = |property: &str| {
        let client = client.clone();
        let remote_ref = remote("json").with_property(property);
        async move { client.get_secret(&remote_ref).await }
    };
    assert_eq!(text(property("a.b").await.unwrap()), "literal");
    assert_eq!(text(property("a.c").await.unwrap()), "1");
    assert_eq!(text(property("list.0").await.unwrap()), "x");
    let error = property("missing").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    assert_eq!(error.message(), "key missing does not exist in secret json");

    let map = client
        .get_secret_map(&remote("json").with_property("a"))
        .await
        .unwrap();
    assert_eq!(found(map), pairs(&[("b", "nested"), ("c", "1")]));
    let error = client.get_secret_map(&remote("plain")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidData);
    assert!(!error.message().contains("not json"), "{error}");
}

#[tokio::test]
async fn metadata_policy_fetch_reads_the_tags() {
    let (account, client) = setup().await;
    account
        .secrets_manager()
        .create_secret()
        .name("tagged")
        .secret_string("value")
        .tags(
            aws_sdk_secretsmanager::types::Tag::builder()
                .key("team")
                .value("a")
                .build(),
        )
        .send()
        .await
        .unwrap();
    let mut remote_ref = remote("tagged");
    remote_ref.metadata_policy = MetadataPolicy::Fetch;
    let tags = client.get_secret(&remote_ref).await.unwrap();
    assert_eq!(text(tags), r#"{"team":"a"}"#);
    let team = client
        .get_secret(&remote_ref.clone().with_property("team"))
        .await
        .unwrap();
    assert_eq!(text(team), "a");
    remote_ref.key = "absent".into();
    let error = client.get_secret(&remote_ref).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
}

#[tokio::test]
async fn the_prefix_applies_to_reads_pushes_and_deletes() {
    let account = MotoServer::shared().account().await;
    account.create_secret("team-a/db", "prefixed").await;
    let spec = with(
        &account.provider("SecretsManager"),
        json!({"prefix": "team-a/"}),
    );
    let client = account.client(&spec).await.unwrap();
    assert_eq!(
        text(client.get_secret(&remote("db")).await.unwrap()),
        "prefixed"
    );
    client
        .push_secret(&push("pushed", "v", None))
        .await
        .unwrap();
    assert_eq!(versions_of(&account, "team-a/pushed").await, 1);
    client
        .delete_secret(&PushRemoteRef::new("pushed"))
        .await
        .unwrap();
    assert!(
        !client
            .secret_exists(&PushRemoteRef::new("pushed"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_secret_scheduled_for_deletion_is_missing() {
    let (account, client) = setup().await;
    account.create_secret("leaving", "v").await;
    account
        .secrets_manager()
        .delete_secret()
        .secret_id("leaving")
        .send()
        .await
        .unwrap();
    let error = client.get_secret(&remote("leaving")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    let exists = client
        .secret_exists(&PushRemoteRef::new("leaving"))
        .await
        .unwrap();
    assert!(!exists);
}

#[tokio::test]
async fn find_by_name_path_and_tags() {
    let (account, client) = setup().await;
    for (name, value, env) in [
        ("app/db", "1", "prod"),
        ("app/cache", "2", "dev"),
        ("other/db", "3", "prod"),
    ] {
        account
            .secrets_manager()
            .create_secret()
            .name(name)
            .secret_string(value)
            .tags(
                aws_sdk_secretsmanager::types::Tag::builder()
                    .key("env")
                    .value(env)
                    .build(),
            )
            .send()
            .await
            .unwrap();
    }
    let find = |find: Find| {
        let client = client.clone();
        async move { client.get_all_secrets(&find).await }
    };
    let by_name = find(Find::by_name("db$")).await.unwrap();
    assert_eq!(found(by_name), pairs(&[("app_db", "1"), ("other_db", "3")]));
    let in_path = Find {
        path: Some("app/".into()),
        ..Find::by_name(".")
    };
    let in_path = find(in_path).await.unwrap();
    assert_eq!(
        found(in_path),
        pairs(&[("app_cache", "2"), ("app_db", "1")])
    );
    let prod = BTreeMap::from([("env".to_owned(), "prod".to_owned())]);
    let by_tags = Find {
        tags: prod.clone(),
        ..Find::default()
    };
    let tagged = find(by_tags.clone()).await.unwrap();
    assert_eq!(found(tagged), pairs(&[("app_db", "1"), ("other_db", "3")]));
    let tags_in_path = Find {
        path: Some("app/".into()),
        ..by_tags
    };
    let tagged = find(tags_in_path).await.unwrap();
    assert_eq!(found(tagged), pairs(&[("app_db", "1")]));
    let name_and_tags = Find {
        tags: prod,
        ..Find::by_name("^app/")
    };
    let tagged = find(name_and_tags).await.unwrap();
    assert_eq!(found(tagged), pairs(&[("app_db", "1")]));

    let error = find(Find::default()).await.unwrap_err();
    assert_eq!(error.message(), "unexpected find operator");
    let error = find(Find::by_name("(")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    assert!(
        error
            .message()
            .starts_with("could not compile find.name.regexp [(]")
    );
}

#[tokio::test]
async fn a_push_creates_a_binary_secret_marked_as_ours() {
    let (account, client) = setup().await;
    client
        .push_secret(&push("created", "v", None))
        .await
        .unwrap();
    let stored = account
        .secrets_manager()
        .get_secret_value()
        .secret_id("created")
        .send()
        .await
        .unwrap();
    assert_eq!(stored.secret_binary().unwrap().as_ref(), b"v");
    assert_eq!(stored.secret_string(), None);
    assert_eq!(
        stored.version_id(),
        Some("00000000-0000-0000-0000-000000000001")
    );
    assert_eq!(
        tags_of(&account, "created").await,
        BTreeMap::from([("managed-by".to_owned(), "external-secrets".to_owned())])
    );
    let description = account
        .secrets_manager()
        .describe_secret()
        .secret_id("created")
        .send()
        .await
        .unwrap();
    assert_eq!(
        description.description(),
        Some("secret 'managed-by:external-secrets'")
    );
}

#[tokio::test]
async fn property_pushes_merge_and_unchanged_values_write_nothing() {
    let (account, client) = setup().await;
    let with_property = |property: &str, value: &str| {
        let mut request = push("merged", value, None);
        request.remote_ref.property = Some(property.to_owned());
        request
    };
    client
        .push_secret(&with_property("user", "admin"))
        .await
        .unwrap();
    client
        .push_secret(&with_property("pass", "s3cret"))
        .await
        .unwrap();
    let value = client.get_secret(&remote("merged")).await.unwrap();
    assert_eq!(text(value), r#"{"pass":"s3cret","user":"admin"}"#);
    assert_eq!(versions_of(&account, "merged").await, 2);
    client
        .push_secret(&with_property("pass", "s3cret"))
        .await
        .unwrap();
    assert_eq!(versions_of(&account, "merged").await, 2);
}

#[tokio::test]
async fn foreign_secrets_are_neither_overwritten_nor_deleted() {
    let (account, client) = setup().await;
    account.create_secret("foreign", "theirs").await;
    let error = client
        .push_secret(&push("foreign", "ours", None))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::AlreadyExists);
    assert_eq!(error.message(), "secret not managed by external-secrets");
    client
        .delete_secret(&PushRemoteRef::new("foreign"))
        .await
        .unwrap();
    let value = client.get_secret(&remote("foreign")).await.unwrap();
    assert_eq!(text(value), "theirs");
}

#[tokio::test]
async fn push_metadata_sets_the_format_description_and_tags() {
    let (account, client) = setup().await;
    let spec = json!({"secretPushFormat": "string", "description": "mine",
                      "tags": {"team": "a", "old": "x"}});
    client
        .push_secret(&push("meta", "v1", Some(spec)))
        .await
        .unwrap();
    let stored = account
        .secrets_manager()
        .get_secret_value()
        .secret_id("meta")
        .send()
        .await
        .unwrap();
    assert_eq!(stored.secret_string(), Some("v1"));
    assert_eq!(tags_of(&account, "meta").await.len(), 3);

    let spec = json!({"secretPushFormat": "string", "tags": {"team": "b"}});
    client
        .push_secret(&push("meta", "v2", Some(spec)))
        .await
        .unwrap();
    assert_eq!(
        tags_of(&account, "meta").await,
        BTreeMap::from([
            ("managed-by".to_owned(), "external-secrets".to_owned()),
            ("team".to_owned(), "b".to_owned()),
        ])
    );
    assert_eq!(
        text(client.get_secret(&remote("meta")).await.unwrap()),
        "v2"
    );

    let error = client
        .push_secret(&push(
            "meta",
            "v3",
            Some(json!({"tags": {"managed-by": "me"}})),
        ))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
}

#[tokio::test]
async fn a_whole_secret_push_stores_a_json_object() {
    let (_account, client) = setup().await;
    let request = PushRequest {
        secret_key: None,
        secret_data: [
            ("user".to_owned(), SecretValue::from("admin")),
            ("pass".to_owned(), SecretValue::from("s3cret")),
        ]
        .into(),
        ..push("whole", "", None)
    };
    client.push_secret(&request).await.unwrap();
    let map = client.get_secret_map(&remote("whole")).await.unwrap();
    assert_eq!(found(map), pairs(&[("pass", "s3cret"), ("user", "admin")]));
}

#[tokio::test]
async fn deletes_follow_the_stores_recovery_settings() {
    let account = MotoServer::shared().account().await;
    let provider = account.provider("SecretsManager");
    let forced = with(
        &provider,
        json!({"secretsManager": {"forceDeleteWithoutRecovery": true}}),
    );
    let client = account.client(&forced).await.unwrap();
    client
        .push_secret(&push("forced", "v", None))
        .await
        .unwrap();
    client
        .delete_secret(&PushRemoteRef::new("forced"))
        .await
        .unwrap();
    let gone = account
        .secrets_manager()
        .describe_secret()
        .secret_id("forced")
        .send()
        .await;
    assert!(gone.is_err(), "deleted without recovery");

    let windowed = with(
        &provider,
        json!({"secretsManager": {"recoveryWindowInDays": 7}}),
    );
    let client = account.client(&windowed).await.unwrap();
    client
        .push_secret(&push("windowed", "v", None))
        .await
        .unwrap();
    client
        .delete_secret(&PushRemoteRef::new("windowed"))
        .await
        .unwrap();
    let description = account
        .secrets_manager()
        .describe_secret()
        .secret_id("windowed")
        .send()
        .await
        .unwrap();
    let deleted = description.deleted_date().expect("scheduled for deletion");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let days = (deleted.secs() - i64::try_from(now).unwrap()) / 86_400;
    assert!((6..=7).contains(&days), "{days} days");
    // Deleting what is already scheduled for deletion succeeds.
    client
        .delete_secret(&PushRemoteRef::new("windowed"))
        .await
        .unwrap();
}
