//! Push, delete and find: the ownership marker, property merges, check-and-set, KV v1, and
//! recursive finds by name, path and tags.

use external_secrets_crds::v1::{VaultCheckAndSet, VaultKvStoreVersion};
use external_secrets_providers::request::{
    ConversionStrategy, Find, PushRemoteRef, PushRequest, RemoteRef,
};
use external_secrets_providers::{ErrorKind, SecretValue};
use reqwest::Method;
use serde_json::{Value, json};

use super::support::unique_name;
use super::support::vault::{BaoServer, ROOT_TOKEN, token_auth, token_source};
use super::{client, root_client, text};

/// Pushes `value` to `property` of `remote_key`.
fn push(remote_key: &str, property: Option<&str>, value: &str) -> PushRequest {
    PushRequest {
        remote_ref: PushRemoteRef {
            remote_key: remote_key.to_owned(),
            property: property.map(str::to_owned),
        },
        ..PushRequest::single(
            [("source".to_owned(), SecretValue::from(value))].into(),
            "source",
            remote_key,
        )
    }
}

fn property(remote_key: &str, property: &str) -> PushRemoteRef {
    PushRemoteRef {
        remote_key: remote_key.to_owned(),
        property: Some(property.to_owned()),
    }
}

/// The current data and metadata of a KV v2 secret, as root reads them.
async fn stored(server: &BaoServer, mount: &str, key: &str) -> (Option<Value>, Option<Value>) {
    let data = server
        .read(&format!("{mount}/data/{key}"))
        .await
        .map(|answer| answer["data"]["data"].clone());
    let metadata = server
        .read(&format!("{mount}/metadata/{key}"))
        .await
        .map(|answer| answer["data"].clone());
    (data, metadata)
}

#[tokio::test]
async fn push_and_delete_touch_only_what_was_pushed() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[("foreign", "theirs")]).await;
    let client = root_client(server, &mount).await;

    // A secret without the marker is neither overwritten nor deleted.
    let error = client
        .push_secret(&push("foreign", Some("value"), "ours"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::AlreadyExists);
    assert_eq!(error.message(), "secret not managed by external-secrets");
    client
        .delete_secret(&PushRemoteRef::new("foreign"))
        .await
        .unwrap();
    let (data, _) = stored(server, &mount, "foreign").await;
    assert_eq!(data.unwrap(), json!({"value": "theirs"}));

    // Properties merge into a secret marked as ours.
    client
        .push_secret(&push("app", Some("user"), "admin"))
        .await
        .unwrap();
    client
        .push_secret(&push("app", Some("pass"), "s3cret"))
        .await
        .unwrap();
    let (data, metadata) = stored(server, &mount, "app").await;
    assert_eq!(data.unwrap(), json!({"user": "admin", "pass": "s3cret"}));
    let metadata = metadata.unwrap();
    assert_eq!(
        metadata["custom_metadata"],
        json!({"managed-by": "external-secrets"})
    );
    assert_eq!(metadata["current_version"], 2);
    // Pushing what is already there writes nothing.
    client
        .push_secret(&push("app", Some("pass"), "s3cret"))
        .await
        .unwrap();
    let (_, metadata) = stored(server, &mount, "app").await;
    assert_eq!(metadata.unwrap()["current_version"], 2);
    assert!(
        client
            .secret_exists(&property("app", "pass"))
            .await
            .unwrap()
    );
    assert!(
        !client
            .secret_exists(&property("app", "other"))
            .await
            .unwrap()
    );
    assert!(
        !client
            .secret_exists(&PushRemoteRef::new("nope"))
            .await
            .unwrap()
    );

    // Deleting a property keeps the others; deleting the last deletes the secret entirely.
    client
        .delete_secret(&property("app", "user"))
        .await
        .unwrap();
    let (data, _) = stored(server, &mount, "app").await;
    assert_eq!(data.unwrap(), json!({"pass": "s3cret"}));
    client
        .delete_secret(&property("app", "pass"))
        .await
        .unwrap();
    assert_eq!(stored(server, &mount, "app").await, (None, None));
    client
        .delete_secret(&property("app", "pass"))
        .await
        .unwrap();
}

#[tokio::test]
async fn whole_secret_pushes_replace_the_data() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[]).await;
    let client = root_client(server, &mount).await;
    let request = |data: &[(&str, &str)]| PushRequest {
        secret_key: None,
        ..PushRequest::single(
            data.iter()
                .map(|(key, value)| ((*key).to_owned(), SecretValue::from(*value)))
                .collect(),
            "unused",
            "whole",
        )
    };
    client
        .push_secret(&request(&[("a", "1"), ("b", "2")]))
        .await
        .unwrap();
    client.push_secret(&request(&[("a", "3")])).await.unwrap();
    client.push_secret(&request(&[("a", "3")])).await.unwrap();
    let (data, metadata) = stored(server, &mount, "whole").await;
    assert_eq!(data.unwrap(), json!({"a": "3"}));
    assert_eq!(metadata.unwrap()["current_version"], 2);
    // A single key whose value is not a JSON object cannot be the whole secret.
    let error = client
        .push_secret(&push("whole", None, "hunter2"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    assert!(!error.message().contains("hunter2"));
}

#[tokio::test]
async fn check_and_set_versions_writes() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[]).await;
    server
        .write(&format!("{mount}/config"), json!({"cas_required": true}))
        .await;
    let plain = root_client(server, &mount).await;
    let error = plain
        .push_secret(&push("cas", Some("k"), "v"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error}");
    assert!(error.message().contains("check-and-set"), "{error}");

    let mut provider = server.provider(&mount, Some(token_auth()));
    provider.check_and_set = Some(VaultCheckAndSet {
        required: Some(true),
    });
    let careful = client(provider, token_source(ROOT_TOKEN)).await.unwrap();
    for value in ["1", "2"] {
        careful
            .push_secret(&push("cas", Some("k"), value))
            .await
            .unwrap();
    }
    careful
        .push_secret(&push("cas", Some("j"), "x"))
        .await
        .unwrap();
    careful.delete_secret(&property("cas", "k")).await.unwrap();
    let (data, metadata) = stored(server, &mount, "cas").await;
    assert_eq!(data.unwrap(), json!({"j": "x"}));
    assert_eq!(metadata.unwrap()["current_version"], 4);
}

#[tokio::test]
async fn kv_v1_keeps_the_marker_in_the_data() {
    let server = BaoServer::shared();
    let mount = unique_name("kv1");
    server.mount_kv(None, &mount, 1).await;
    server
        .write(&format!("{mount}/foreign"), json!({"k": "theirs"}))
        .await;
    let mut provider = server.provider(&mount, Some(token_auth()));
    provider.version = VaultKvStoreVersion::V1;
    let client = client(provider, token_source(ROOT_TOKEN)).await.unwrap();
    client
        .push_secret(&push("app", Some("user"), "admin"))
        .await
        .unwrap();
    let stored = server.read(&format!("{mount}/app")).await.unwrap();
    assert_eq!(
        stored["data"],
        json!({"user": "admin", "custom_metadata": {"managed-by": "external-secrets"}})
    );
    let value = client
        .get_secret(&RemoteRef::new("app").with_property("user"))
        .await;
    assert_eq!(text(value.unwrap()), "admin");
    let error = client
        .push_secret(&push("foreign", Some("k"), "ours"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::AlreadyExists);
    client
        .delete_secret(&property("app", "user"))
        .await
        .unwrap();
    assert!(server.read(&format!("{mount}/app")).await.is_none());
    let error = client
        .get_all_secrets(&Find {
            tags: [("team".to_owned(), "a".to_owned())].into(),
            ..Find::default()
        })
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "cannot perform find by tag operations with kv version v1"
    );
}

#[tokio::test]
async fn find_lists_recursively_by_name_path_and_tags() {
    let server = BaoServer::shared();
    let mount = server
        .seeded_mount(&[
            ("db/one", "1"),
            ("db/nested/two", "2"),
            ("cache", "3"),
            ("deleted", "4"),
        ])
        .await;
    for (key, team) in [("db/one", "a"), ("cache", "a"), ("db/nested/two", "b")] {
        server
            .write(
                &format!("{mount}/metadata/{key}"),
                json!({"custom_metadata": {"team": team}}),
            )
            .await;
    }
    let (status, _) = server
        .call(Method::DELETE, &format!("{mount}/data/deleted"), None, None)
        .await;
    assert!(status.is_success());
    let client = root_client(server, &mount).await;
    let found = |find: Find| {
        let client = client.clone();
        async move {
            let map = client.get_all_secrets(&find).await.unwrap();
            map.into_iter()
                .map(|(key, value)| (key, text(value)))
                .collect::<Vec<_>>()
        }
    };
    let pair = |key: &str, value: &str| (key.to_owned(), json!({ "value": value }).to_string());

    assert_eq!(
        found(Find::by_name("^db/")).await,
        [pair("db_nested_two", "2"), pair("db_one", "1")]
    );
    let unicode = Find {
        conversion_strategy: ConversionStrategy::Unicode,
        ..Find::by_name("one")
    };
    assert_eq!(found(unicode).await, [pair("db_U002f_one", "1")]);
    let under_db = Find {
        path: Some("db".into()),
        ..Find::default()
    };
    assert_eq!(
        found(under_db).await,
        [pair("db_nested_two", "2"), pair("db_one", "1")]
    );
    let team_a = Find {
        tags: [("team".to_owned(), "a".to_owned())].into(),
        ..Find::default()
    };
    assert_eq!(
        found(team_a).await,
        [pair("cache", "3"), pair("db_one", "1")]
    );
    // The deleted secret is listed but skipped.
    assert!(found(Find::by_name("deleted")).await.is_empty());

    let empty = Find {
        path: Some("nothing-here".into()),
        ..Find::default()
    };
    let error = client.get_all_secrets(&empty).await.unwrap_err();
    assert!(error.is_not_found(), "{error}");
    let bad = client
        .get_all_secrets(&Find::by_name("("))
        .await
        .unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidRequest);
}
