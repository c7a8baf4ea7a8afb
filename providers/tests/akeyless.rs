//! The `akeyless` backend against the Akeyless gateway contract fake: access-key and Kubernetes
//! auth (a token per operation), the gateway's `/v2` path, each item type (static with
//! versions, dynamic, rotated, certificate), find by name under a path and by tags, pushes
//! merging JSON members into tagged items, deletes limited to those, and error kinds.

#![cfg(feature = "akeyless")]

mod support;

use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use serde_json::json;
use support::akeyless::{ACCESS, ACCESS_ID, CREDENTIALS, access_key_auth, client, fake, spec};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

#[tokio::test]
async fn access_keys_authenticate_every_operation_on_the_gateways_v2_path() {
    let fake = fake().await;
    fake.set_static("/app/db", "hunter2", &[]);
    let reader = client(spec(&fake, access_key_auth()), ACCESS).await;
    for _ in 0..2 {
        assert_eq!(
            text(reader.get_secret(&RemoteRef::new("/app/db")).await.unwrap()),
            "hunter2"
        );
    }
    assert_eq!(fake.auths(), 2, "a token per operation, as upstream");
    let paths: Vec<String> = fake
        .server
        .requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(paths.contains(&"/v2/auth".to_owned()), "{paths:?}");
    assert!(
        paths.contains(&"/v2/get-secret-value".to_owned()),
        "{paths:?}"
    );

    let wrong = [
        ("id", ACCESS_ID),
        ("type", "access_key"),
        ("key", "not-the-key"),
    ];
    let denied = client(spec(&fake, access_key_auth()), &wrong).await;
    let error = denied
        .get_secret(&RemoteRef::new("/app/db"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error.message().starts_with("authentication failed"),
        "{error}"
    );
    assert!(!error.message().contains("not-the-key"), "{error}");
    assert_eq!(
        reader.validate().await.unwrap(),
        external_secrets_providers::ValidationResult::Ready
    );
}

#[tokio::test]
async fn kubernetes_auth_sends_the_secrets_jwt_base64_with_the_config_name() {
    let fake = fake().await;
    fake.accept_kubernetes("p-k8s", "cluster-conf", "header.payload.signature");
    fake.set_static("k", "from-k8s", &[]);
    let auth = json!({"kubernetesAuth": {
        "accessID": "p-k8s",
        "k8sConfName": "cluster-conf",
        "secretRef": {"name": CREDENTIALS},
    }});
    let reader = client(
        spec(&fake, auth.clone()),
        &[("token", "header.payload.signature")],
    )
    .await;
    assert_eq!(
        text(reader.get_secret(&RemoteRef::new("k")).await.unwrap()),
        "from-k8s"
    );
    let other = client(spec(&fake, auth), &[("token", "other.jwt.value")]).await;
    let error = other.get_secret(&RemoteRef::new("k")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
}

#[tokio::test]
async fn cloud_identities_are_refused_with_a_reason() {
    let fake = fake().await;
    let store = support::secret_store(
        "akeyless-cloud",
        external_secrets_crds::v1::SecretStoreProvider {
            akeyless: Some(Box::new(spec(&fake, access_key_auth()))),
            ..Default::default()
        },
    );
    let source = external_secrets_providers::credentials::MemorySecretSource::default()
        .with_secret(
            support::NAMESPACE,
            CREDENTIALS,
            &[],
            &[("id", ACCESS_ID), ("type", "aws_iam"), ("key", "unused")],
        );
    let manager = external_secrets_providers::ClientManager::new(
        std::sync::Arc::new(source),
        external_secrets_providers::ManagerSettings::default(),
    );
    let error = manager
        .client(
            &external_secrets_providers::StoreRef::from(&store),
            Some(support::NAMESPACE),
        )
        .await
        .err()
        .expect("refused");
    assert_eq!(error.kind(), ErrorKind::Unsupported, "{error}");
    assert!(error.message().contains("aws_iam"), "{error}");
}

#[tokio::test]
async fn each_item_type_is_read_as_upstream_renders_it() {
    let fake = fake().await;
    fake.set_static("s", "v1", &[]);
    fake.set_static("s", r#"{"user":"admin","a.b":"dotted"}"#, &[]);
    fake.set_dynamic("dyn", json!({"user": "tmp-user", "password": "tmp-pass"}));
    fake.set_rotated("rot-payload", json!({"value": {"payload": "rotated-text"}}));
    fake.set_rotated(
        "rot-target",
        json!({"value": {"target_value": {"username": "u", "password": "p"}}}),
    );
    fake.set_certificate(
        "cert",
        json!({"certificate_pem": "PEM", "private_key_pem": "KEY"}),
    );
    let reader = client(spec(&fake, access_key_auth()), ACCESS).await;
    let get = |key: &str, property: Option<&str>, version: Option<&str>| {
        let mut remote_ref = RemoteRef::new(key);
        remote_ref.property = property.map(Into::into);
        remote_ref.version = version.map(Into::into);
        let reader = reader.clone();
        async move { reader.get_secret(&remote_ref).await }
    };
    assert_eq!(text(get("s", None, Some("1")).await.unwrap()), "v1");
    assert_eq!(text(get("s", Some("user"), None).await.unwrap()), "admin");
    assert_eq!(text(get("s", Some("a.b"), None).await.unwrap()), "dotted");
    assert_eq!(
        text(get("dyn", Some("password"), None).await.unwrap()),
        "tmp-pass"
    );
    assert_eq!(
        text(get("rot-payload", None, None).await.unwrap()),
        "rotated-text"
    );
    assert_eq!(
        text(get("rot-target", Some("username"), None).await.unwrap()),
        "u"
    );
    assert_eq!(
        text(get("cert", Some("certificate_pem"), None).await.unwrap()),
        "PEM"
    );
    let missing = get("s", Some("nope"), None).await.unwrap_err();
    assert_eq!(missing.message(), "key nope does not exist in value s");
    assert_eq!(
        get("absent", None, None).await.unwrap_err().kind(),
        ErrorKind::NotFound
    );
    let map = reader.get_secret_map(&RemoteRef::new("dyn")).await.unwrap();
    assert_eq!(
        texts(map),
        vec![
            ("password".into(), "tmp-pass".into()),
            ("user".into(), "tmp-user".into())
        ]
    );
}

#[tokio::test]
async fn find_by_name_under_a_path_and_by_tags() {
    let fake = fake().await;
    fake.set_static("/team/db", "1", &["prod"]);
    fake.set_static("/team/cache", "2", &[]);
    fake.set_static("/other/db", "3", &["prod"]);
    let reader = client(spec(&fake, access_key_auth()), ACCESS).await;
    let by_name = Find {
        path: Some("team".into()),
        ..Find::by_name("db")
    };
    assert_eq!(
        texts(reader.get_all_secrets(&by_name).await.unwrap()),
        vec![("/team/db".into(), "1".into())]
    );
    let by_tag = Find {
        tags: [("env".to_owned(), "prod".to_owned())].into(),
        ..Find::default()
    };
    assert_eq!(
        texts(reader.get_all_secrets(&by_tag).await.unwrap()),
        vec![
            ("/other/db".into(), "3".into()),
            ("/team/db".into(), "1".into())
        ]
    );
    let neither = reader.get_all_secrets(&Find::default()).await.unwrap_err();
    assert_eq!(neither.message(), "unexpected find operator");
}

#[tokio::test]
async fn pushes_merge_members_into_tagged_items_and_deletes_spare_foreign_ones() {
    let fake = fake().await;
    let writer = client(spec(&fake, access_key_auth()), ACCESS).await;
    let data: SecretMap = [
        ("user".to_owned(), SecretValue::from("admin")),
        ("pass".to_owned(), SecretValue::from("s3cret")),
    ]
    .into();
    let whole = PushRequest {
        secret_key: None,
        ..PushRequest::single(data.clone(), "", "/pushed")
    };
    writer.push_secret(&whole).await.unwrap();
    let (value, tags) = fake.static_value("/pushed").unwrap();
    assert_eq!(value, r#"{"pass":"s3cret","user":"admin"}"#);
    assert_eq!(tags, vec!["k8s-external-secrets".to_owned()]);
    let member = PushRequest {
        remote_ref: PushRemoteRef {
            property: Some("extra".into()),
            ..PushRemoteRef::new("/pushed")
        },
        ..PushRequest::single(data, "user", "/pushed")
    };
    writer.push_secret(&member).await.unwrap();
    assert_eq!(
        fake.static_value("/pushed").unwrap().0,
        r#"{"extra":"admin","pass":"s3cret","user":"admin"}"#
    );
    let extra = PushRemoteRef {
        property: Some("extra".into()),
        ..PushRemoteRef::new("/pushed")
    };
    assert!(writer.secret_exists(&extra).await.unwrap());
    writer.delete_secret(&extra).await.unwrap();
    assert!(!writer.secret_exists(&extra).await.unwrap());
    writer
        .delete_secret(&PushRemoteRef::new("/pushed"))
        .await
        .unwrap();
    assert!(fake.static_value("/pushed").is_none());
    writer
        .delete_secret(&PushRemoteRef::new("/pushed"))
        .await
        .unwrap();

    // An item the operator did not create (no tag) is never deleted.
    fake.set_static("/foreign", r#"{"a":"1"}"#, &[]);
    writer
        .delete_secret(&PushRemoteRef::new("/foreign"))
        .await
        .unwrap();
    assert!(fake.static_value("/foreign").is_some());
    // A value that is not a JSON object cannot take members.
    fake.set_static("/plain", "text", &[]);
    let refused = writer
        .push_secret(&PushRequest::single(
            [("k".to_owned(), SecretValue::from("v"))].into(),
            "k",
            "/plain",
        ))
        .await
        .unwrap_err();
    assert_eq!(
        refused.message(),
        "failed to unmarshal remote secret: invalid JSON format"
    );
}
