//! `service: ParameterStore`: reads of every parameter type, versions and labels, properties,
//! tags, the store's prefix, find by path, name and tags, pushes (type, tier, tags, ownership)
//! and deletes (only ours).

use std::collections::BTreeMap;

use aws_sdk_ssm::types::{ParameterType, ResourceTypeForTagging, Tag};
use external_secrets_providers::request::{Find, MetadataPolicy, PushRemoteRef, PushRequest};
use external_secrets_providers::{ErrorKind, SecretMap, SecretValue, SharedClient};
use serde_json::json;

use super::support::aws::{Account, MotoServer};
use super::{remote, text, with};

/// A fresh account and a ParameterStore client acting in it.
async fn setup() -> (Account, SharedClient) {
    let account = MotoServer::shared().account().await;
    let client = account
        .client(&account.provider("ParameterStore"))
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

/// Tags `name` with `key: value`.
async fn tag(account: &Account, name: &str, key: &str, value: &str) {
    account
        .ssm()
        .add_tags_to_resource()
        .resource_type(ResourceTypeForTagging::Parameter)
        .resource_id(name)
        .tags(Tag::builder().key(key).value(value).build().unwrap())
        .send()
        .await
        .unwrap();
}

/// The tags of `name`.
async fn tags_of(account: &Account, name: &str) -> BTreeMap<String, String> {
    let listed = account
        .ssm()
        .list_tags_for_resource()
        .resource_type(ResourceTypeForTagging::Parameter)
        .resource_id(name)
        .send()
        .await
        .unwrap();
    listed
        .tag_list()
        .iter()
        .map(|tag| (tag.key().to_owned(), tag.value().to_owned()))
        .collect()
}

/// The stored parameter `name` (decrypted): type, value and version.
async fn stored(account: &Account, name: &str) -> (ParameterType, String, i64) {
    let output = account
        .ssm()
        .get_parameter()
        .name(name)
        .with_decryption(true)
        .send()
        .await
        .unwrap();
    let parameter = output.parameter().unwrap();
    (
        parameter.r#type().unwrap().clone(),
        parameter.value().unwrap().to_owned(),
        parameter.version(),
    )
}

#[tokio::test]
async fn reads_every_type_decrypted_and_versions_by_number_or_label() {
    let (account, client) = setup().await;
    account
        .put_parameter("/app/db", "first", ParameterType::String)
        .await;
    account
        .put_parameter("/app/db", "second", ParameterType::String)
        .await;
    account
        .put_parameter("/app/secure", "s3cret", ParameterType::SecureString)
        .await;
    account
        .put_parameter("/app/list", "a,b", ParameterType::StringList)
        .await;
    account
        .ssm()
        .label_parameter_version()
        .name("/app/db")
        .parameter_version(1)
        .labels("old")
        .send()
        .await
        .unwrap();
    let read = |remote_ref| {
        let client = client.clone();
        async move { client.get_secret(&remote_ref).await }
    };
    assert_eq!(text(read(remote("/app/db")).await.unwrap()), "second");
    assert_eq!(text(read(remote("/app/secure")).await.unwrap()), "s3cret");
    assert_eq!(text(read(remote("/app/list")).await.unwrap()), "a,b");
    let first = remote("/app/db").with_version("1");
    assert_eq!(text(read(first).await.unwrap()), "first");
    let labelled = remote("/app/db").with_version("old");
    assert_eq!(text(read(labelled).await.unwrap()), "first");
    for missing in [
        remote("/app/absent"),
        remote("/app/db").with_version("9"),
        remote("/app/db").with_version("nolabel"),
    ] {
        let error = read(missing).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    }
}

#[tokio::test]
async fn properties_maps_and_tags() {
    let (account, client) = setup().await;
    account
        .put_parameter(
            "/json",
            r#"{"a.b":"literal","a":{"b":"nested"}}"#,
            ParameterType::String,
        )
        .await;
    tag(&account, "/json", "team", "a").await;
    let value = client
        .get_secret(&remote("/json").with_property("a.b"))
        .await
        .unwrap();
    assert_eq!(text(value), "literal");
    let error = client
        .get_secret(&remote("/json").with_property("c"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    assert_eq!(error.message(), "key c does not exist in secret /json");
    let map = client
        .get_secret_map(&remote("/json").with_property("a"))
        .await
        .unwrap();
    assert_eq!(found(map), pairs(&[("b", "nested")]));

    let mut tags = remote("/json");
    tags.metadata_policy = MetadataPolicy::Fetch;
    assert_eq!(
        text(client.get_secret(&tags).await.unwrap()),
        r#"{"team":"a"}"#
    );
    tags.key = "/absent".into();
    let error = client.get_secret(&tags).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
}

#[tokio::test]
async fn the_prefix_applies_to_reads_pushes_and_deletes() {
    let account = MotoServer::shared().account().await;
    account
        .put_parameter("/team/db", "prefixed", ParameterType::String)
        .await;
    let spec = with(
        &account.provider("ParameterStore"),
        json!({"prefix": "/team/"}),
    );
    let client = account.client(&spec).await.unwrap();
    let value = client.get_secret(&remote("db")).await.unwrap();
    assert_eq!(text(value), "prefixed");
    client
        .push_secret(&push("pushed", "v", None))
        .await
        .unwrap();
    assert_eq!(stored(&account, "/team/pushed").await.1, "v");
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
async fn find_by_path_name_and_tags() {
    let (account, client) = setup().await;
    for (name, value, env) in [
        ("/app/db", "1", "prod"),
        ("/app/nested/cache", "2", "dev"),
        ("/other/db", "3", "prod"),
    ] {
        account
            .put_parameter(name, value, ParameterType::SecureString)
            .await;
        tag(&account, name, "env", env).await;
    }
    let find = |find: Find| {
        let client = client.clone();
        async move { client.get_all_secrets(&find).await }
    };
    let by_name = find(Find::by_name("db$")).await.unwrap();
    assert_eq!(
        found(by_name),
        pairs(&[("_app_db", "1"), ("_other_db", "3")])
    );
    let in_path = Find {
        path: Some("/app".into()),
        ..Find::by_name(".")
    };
    assert_eq!(
        found(find(in_path).await.unwrap()),
        pairs(&[("_app_db", "1"), ("_app_nested_cache", "2")])
    );
    let by_tags = Find {
        tags: BTreeMap::from([("env".to_owned(), "prod".to_owned())]),
        ..Find::default()
    };
    assert_eq!(
        found(find(by_tags.clone()).await.unwrap()),
        pairs(&[("_app_db", "1"), ("_other_db", "3")])
    );
    let tags_in_path = Find {
        path: Some("/app".into()),
        ..by_tags
    };
    assert_eq!(
        found(find(tags_in_path).await.unwrap()),
        pairs(&[("_app_db", "1")])
    );
    let error = find(Find::default()).await.unwrap_err();
    assert_eq!(error.message(), "unexpected find operator");
}

#[tokio::test]
async fn a_push_creates_a_parameter_marked_as_ours() {
    let (account, client) = setup().await;
    let spec = json!({"secretType": "SecureString", "tags": {"team": "a"}, "description": "d"});
    client
        .push_secret(&push("/pushed", "s3cret", Some(spec.clone())))
        .await
        .unwrap();
    let (kind, value, version) = stored(&account, "/pushed").await;
    assert_eq!(kind, ParameterType::SecureString);
    assert_eq!(value, "s3cret");
    assert_eq!(version, 1);
    assert_eq!(
        tags_of(&account, "/pushed").await,
        BTreeMap::from([
            ("managed-by".to_owned(), "external-secrets".to_owned()),
            ("team".to_owned(), "a".to_owned()),
        ])
    );

    // The same value writes nothing; a new one overwrites and the tags follow the metadata.
    client
        .push_secret(&push("/pushed", "s3cret", Some(spec)))
        .await
        .unwrap();
    assert_eq!(stored(&account, "/pushed").await.2, 1);
    let spec = json!({"secretType": "SecureString", "tags": {"env": "prod"}});
    client
        .push_secret(&push("/pushed", "n3w", Some(spec)))
        .await
        .unwrap();
    let (_, value, version) = stored(&account, "/pushed").await;
    assert_eq!((value.as_str(), version), ("n3w", 2));
    assert_eq!(
        tags_of(&account, "/pushed").await,
        BTreeMap::from([
            ("env".to_owned(), "prod".to_owned()),
            ("managed-by".to_owned(), "external-secrets".to_owned()),
        ])
    );
}

#[tokio::test]
async fn foreign_parameters_are_neither_overwritten_nor_deleted() {
    let (account, client) = setup().await;
    account
        .put_parameter("/foreign", "theirs", ParameterType::String)
        .await;
    let error = client
        .push_secret(&push("/foreign", "ours", None))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::AlreadyExists);
    client
        .delete_secret(&PushRemoteRef::new("/foreign"))
        .await
        .unwrap();
    assert_eq!(stored(&account, "/foreign").await.1, "theirs");
}

#[tokio::test]
async fn deletes_remove_only_what_we_pushed_and_tolerate_absence() {
    let (_account, client) = setup().await;
    client
        .push_secret(&push("/doomed", "v", None))
        .await
        .unwrap();
    let doomed = PushRemoteRef::new("/doomed");
    assert!(client.secret_exists(&doomed).await.unwrap());
    client.delete_secret(&doomed).await.unwrap();
    assert!(!client.secret_exists(&doomed).await.unwrap());
    client.delete_secret(&doomed).await.unwrap();
}

#[tokio::test]
async fn whole_secrets_are_pushed_as_base64_json_unless_decoded() {
    let (account, client) = setup().await;
    let whole = |spec| PushRequest {
        secret_key: None,
        secret_data: [("user".to_owned(), SecretValue::from("admin"))].into(),
        ..push("/whole", "", spec)
    };
    client.push_secret(&whole(None)).await.unwrap();
    assert_eq!(stored(&account, "/whole").await.1, r#"{"user":"YWRtaW4="}"#);
    client
        .push_secret(&whole(Some(json!({"encodeAsDecoded": true}))))
        .await
        .unwrap();
    assert_eq!(stored(&account, "/whole").await.1, r#"{"user":"admin"}"#);
}

#[tokio::test]
async fn a_property_cannot_be_pushed_to_a_parameter() {
    let (_account, client) = setup().await;
    let mut request = push("/p", "v", None);
    request.remote_ref.property = Some("field".into());
    let error = client.push_secret(&request).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    assert!(
        !client
            .secret_exists(&PushRemoteRef::new("/p"))
            .await
            .unwrap()
    );
}
