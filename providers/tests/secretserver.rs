//! The `secretserver` backend against the Secret Server contract fake: password grant (with
//! domain, one token for many reads, refused passwords), a given token, the Delinea Platform
//! login, `caBundle`, ClusterSecretStore namespace rules, upstream's key forms, `property`
//! handling and maps, file fields, and PushSecret's update-or-create and strict delete.

#![cfg(feature = "secretserver")]

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use contract_fakes::secretserver::{
    Accounts, KEY_FILE_TEMPLATE, PASSWORD_TEMPLATE, SecretServerFake,
};
use contract_fakes::server::bearer;
use external_secrets_crds::v1::{
    ClusterSecretStore, ClusterSecretStoreSpec, SecretStoreProvider, SecretStoreSpec,
};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use external_secrets_providers::{Registry, SharedClient, StoreRef};
use k8s_openapi::ByteString;
use support::secretserver::{
    PASSWORD, client, client_of, fake, new_folder, reference, store_provider, value,
};
use support::{NAMESPACE, unique_name};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

/// A "Username and Password" secret of its own in `folder`: (name, id).
fn seeded(folder: i64, username: &str, password: &str) -> (String, i64) {
    let name = unique_name("db");
    let values: [(&str, &[u8]); 2] = [
        ("username", username.as_bytes()),
        ("password", password.as_bytes()),
    ];
    let id = fake().add_secret(folder, &name, PASSWORD_TEMPLATE, &values);
    (name, id)
}

/// The bearer tokens of the requests to `path`.
fn tokens_on(server: &contract_fakes::server::FakeServer, path: &str) -> Vec<String> {
    server
        .requests()
        .into_iter()
        .filter(|request| request.path == path)
        .filter_map(|request| bearer(&request.headers).map(str::to_owned))
        .collect()
}

fn metadata(folder: i64, template: i64) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
        "kind": "PushSecretMetadata",
        "spec": {"folderId": folder, "secretTemplateId": template},
    })
}

fn push(key: &str, property: Option<&str>, value: &str) -> PushRequest {
    let mut request = PushRequest::single(
        [("source".to_owned(), SecretValue::from(value))].into(),
        "source",
        key,
    );
    request.remote_ref.property = property.map(str::to_owned);
    request
}

#[tokio::test]
async fn password_grant_sends_user_and_domain_once_and_wrong_passwords_are_refused() {
    let (folder, _) = new_folder();
    let (name, id) = seeded(folder, "admin", "s3cret");
    let denied = client("wrong-password").await;
    let error = denied.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("wrong-password"), "{error}");

    // The fake requires the domain: a store without it is refused.
    let mut no_domain = store_provider(&fake().server.url);
    if let Some(section) = no_domain.secretserver.as_mut() {
        section.domain = None;
    }
    let error = client_of(no_domain, PASSWORD).await.validate().await;
    assert_eq!(error.unwrap_err().kind(), ErrorKind::PermissionDenied);

    let allowed = client(PASSWORD).await;
    for _ in 0..3 {
        let read = RemoteRef::new(&name).with_property("password");
        assert_eq!(text(allowed.get_secret(&read).await.unwrap()), "s3cret");
    }
    let tokens = tokens_on(&fake().server, &format!("/api/v1/secrets/{id}"));
    assert_eq!(tokens.len(), 3);
    let distinct: BTreeSet<_> = tokens.into_iter().collect();
    assert_eq!(distinct.len(), 1, "one token for every read: {distinct:?}");
}

#[tokio::test]
async fn a_given_token_is_used_as_it_is() {
    let (folder, _) = new_folder();
    let (_, id) = seeded(folder, "admin", "by-token");
    let token_store = |token| {
        let mut provider = store_provider(&fake().server.url);
        if let Some(section) = provider.secretserver.as_mut() {
            section.token = token;
            section.username = None;
            section.password = None;
        }
        provider
    };
    let client = client_of(token_store(reference("token")), PASSWORD).await;
    let read = RemoteRef::new(id.to_string()).with_property("password");
    assert_eq!(text(client.get_secret(&read).await.unwrap()), "by-token");
    let tokens = tokens_on(&fake().server, &format!("/api/v1/secrets/{id}"));
    assert_eq!(tokens, ["tss-fixed-token"]);

    let wrong = client_of(token_store(value("not-a-token")), PASSWORD).await;
    let error = wrong.get_secret(&read).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("not-a-token"), "{error}");
}

#[tokio::test]
async fn the_platform_login_sends_api_calls_to_the_default_vault() {
    let accounts = Accounts {
        username: "platform-client".into(),
        password: "platform-secret".into(),
        platform: true,
        ..Accounts::default()
    };
    let platform = support::start_fake("Platform", || SecretServerFake::start(accounts));
    platform.add_folder(7, "/platform");
    let values: [(&str, &[u8]); 1] = [("password", b"from-vault")];
    let id = platform.add_secret(7, "vaulted", PASSWORD_TEMPLATE, &values);
    let mut provider = store_provider(&platform.server.url);
    if let Some(section) = provider.secretserver.as_mut() {
        section.username = value("platform-client");
        section.password = value("platform-secret");
    }
    let client = client_of(provider, PASSWORD).await;
    let read = RemoteRef::new("vaulted").with_property("password");
    assert_eq!(text(client.get_secret(&read).await.unwrap()), "from-vault");
    let paths: Vec<String> = platform
        .server
        .requests()
        .into_iter()
        .map(|request| request.path)
        .collect();
    assert!(paths.contains(&"/identity/api/oauth2/token/xpmplatform".to_owned()));
    assert!(
        paths.contains(&format!("/vault/api/v1/secrets/{id}")),
        "{paths:?}"
    );
    assert!(!paths.contains(&"/oauth2/token".to_owned()), "{paths:?}");
}

#[tokio::test]
async fn ca_bundles_replace_the_system_roots() {
    let (folder, _) = new_folder();
    let (name, _) = seeded(folder, "admin", "pinned");
    let with_bundle = |pem: &str| {
        let mut provider = store_provider(&fake().server.url);
        if let Some(section) = provider.secretserver.as_mut() {
            section.ca_bundle = Some(ByteString(pem.as_bytes().to_vec()));
        }
        provider
    };
    let pinned = client_of(with_bundle(&fake().server.ca_pem), PASSWORD).await;
    let read = RemoteRef::new(&name).with_property("password");
    assert_eq!(text(pinned.get_secret(&read).await.unwrap()), "pinned");

    let other_ca = rcgen::generate_simple_self_signed(vec!["elsewhere".to_owned()])
        .unwrap()
        .cert
        .pem();
    let untrusted = client_of(with_bundle(&other_ca), PASSWORD).await;
    let error = untrusted.get_secret(&read).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
}

#[tokio::test]
async fn cluster_stores_need_namespaced_references() {
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, "tss", &[], &[("password", PASSWORD)]);
    let registry = Registry::new(Arc::new(source));
    let cluster_store = |provider: SecretStoreProvider| {
        let mut store = ClusterSecretStore::new(
            &unique_name("cluster-tss"),
            ClusterSecretStoreSpec(SecretStoreSpec {
                provider,
                ..SecretStoreSpec::default()
            }),
        );
        store.metadata.uid = Some("uid".into());
        store.metadata.generation = Some(1);
        store
    };
    let store = cluster_store(store_provider(&fake().server.url));
    let Err(error) = registry
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
    else {
        panic!("a reference without namespace is refused");
    };
    assert_eq!(
        error.message(),
        "when using a ClusterSecretStore, namespaces must be explicitly set"
    );
    let mut provider = store_provider(&fake().server.url);
    if let Some(selector) = provider
        .secretserver
        .as_mut()
        .and_then(|section| section.password.as_mut())
        .and_then(|password| password.secret_ref.as_mut())
    {
        selector.namespace = Some(NAMESPACE.into());
    }
    let store = cluster_store(provider);
    let client = registry
        .new_client(&StoreRef::from(&store), None)
        .await
        .unwrap();
    client.validate().await.unwrap();
}

#[tokio::test]
async fn keys_resolve_by_id_path_folder_and_name() {
    let (first, first_path) = new_folder();
    let (second, _) = new_folder();
    let name = unique_name("shared");
    let add = |folder, password: &str| {
        let values: [(&str, &[u8]); 1] = [("password", password.as_bytes())];
        fake().add_secret(folder, &name, PASSWORD_TEMPLATE, &values)
    };
    let first_id = add(first, "in-first");
    add(second, "in-second");
    let numeric_name = format!("{}", 900_000 + first_id);
    let values: [(&str, &[u8]); 1] = [("password", b"by-numeric-name")];
    fake().add_secret(first, &numeric_name, PASSWORD_TEMPLATE, &values);
    let client = client(PASSWORD).await;
    let read = |key: String| {
        let client = client.clone();
        async move {
            let read = RemoteRef::new(key).with_property("password");
            client.get_secret(&read).await.map(text)
        }
    };
    assert_eq!(read(first_id.to_string()).await.unwrap(), "in-first");
    assert_eq!(
        read(format!("{first_path}/{name}")).await.unwrap(),
        "in-first"
    );
    assert_eq!(
        read(format!("folderId:{second}/{name}")).await.unwrap(),
        "in-second"
    );
    assert_eq!(read(name.clone()).await.unwrap(), "in-first");
    assert_eq!(read(numeric_name).await.unwrap(), "by-numeric-name");
    let missing = read(format!("folderId:{second}/absent")).await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    let missing = read(format!("{first_path}/absent")).await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");

    // Exists and delete refuse a plain name two folders share.
    let ambiguous = client
        .secret_exists(&PushRemoteRef::new(&name))
        .await
        .unwrap_err();
    assert!(
        ambiguous.message().contains("multiple secrets found"),
        "{ambiguous}"
    );
    assert!(!ambiguous.is_not_found());
    let error = client
        .delete_secret(&PushRemoteRef::new(&name))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .starts_with("failed to get secret for deletion"),
        "{error}"
    );
    let scoped = PushRemoteRef::new(format!("folderId:{second}/{name}"));
    assert!(client.secret_exists(&scoped).await.unwrap());
    client.delete_secret(&scoped).await.unwrap();
    assert!(!client.secret_exists(&scoped).await.unwrap());
    client.delete_secret(&scoped).await.unwrap();
    assert!(
        client
            .secret_exists(&PushRemoteRef::new(&name))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn properties_whole_secrets_and_maps_follow_upstream() {
    let (folder, _) = new_folder();
    let client: SharedClient = client(PASSWORD).await;
    let (plain, id) = seeded(folder, "admin", "pw");
    let whole = text(client.get_secret(&RemoteRef::new(&plain)).await.unwrap());
    let prefix = format!(r#"{{"Name":"{plain}","FolderID":{folder},"ID":{id},"SiteID":1,"#);
    assert!(whole.starts_with(&prefix), "{whole}");
    assert!(
        whole.contains(r#""FieldName":"Password","Slug":"password","FieldDescription":"","Filename":"","ItemValue":"pw","IsFile":false,"IsNotes":false,"IsPassword":true}"#),
        "{whole}"
    );
    let by_name = RemoteRef::new(&plain).with_property("Password");
    assert_eq!(text(client.get_secret(&by_name).await.unwrap()), "pw");
    let map = client
        .get_secret_map(&RemoteRef::new(&plain))
        .await
        .unwrap();
    assert_eq!(
        texts(map),
        [
            ("notes".into(), String::new()),
            ("password".into(), "pw".into()),
            ("username".into(), "admin".into())
        ]
    );
    let missing = client
        .get_secret(&RemoteRef::new(&plain).with_property("absent"))
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert!(!missing.message().contains("pw") && !missing.message().contains("admin"));

    let (json, _) = seeded(folder, r#"{"host":"db","ports":[5432,5433]}"#, "pw");
    let port = RemoteRef::new(&json).with_property("ports.1");
    assert_eq!(text(client.get_secret(&port).await.unwrap()), "5433");
    // A property missing from the JSON falls back to the fields.
    let field = RemoteRef::new(&json).with_property("password");
    assert_eq!(text(client.get_secret(&field).await.unwrap()), "pw");
    let map = client.get_secret_map(&RemoteRef::new(&json)).await.unwrap();
    assert_eq!(
        texts(map),
        [
            ("host".into(), "db".into()),
            ("ports".into(), "[5432,5433]".into())
        ]
    );
    let host = RemoteRef::new(&json).with_property("host");
    let map = client.get_secret_map(&host).await.unwrap();
    assert_eq!(texts(map), [("host".into(), "db".into())]);

    let versioned = client
        .get_secret(&RemoteRef::new(&plain).with_version("2"))
        .await
        .unwrap_err();
    assert_eq!(versioned.message(), "specifying a version is not supported");
    let find = client
        .get_all_secrets(&Find::by_name(".*"))
        .await
        .unwrap_err();
    assert_eq!(find.kind(), ErrorKind::Unsupported);
    assert_eq!(
        find.message(),
        "getting all secrets is not supported by Delinea Secret Server"
    );
}

#[tokio::test]
async fn file_fields_are_downloaded_and_uploaded() {
    let (folder, _) = new_folder();
    let name = unique_name("key");
    let key_bytes: &[u8] = &[0, 159, 146, 150, b'k'];
    let values: [(&str, &[u8]); 2] = [("private-key", key_bytes), ("passphrase", b"phrase")];
    fake().add_secret(folder, &name, KEY_FILE_TEMPLATE, &values);
    let client = client(PASSWORD).await;
    let read = RemoteRef::new(&name).with_property("private-key");
    assert_eq!(client.get_secret(&read).await.unwrap().expose(), key_bytes);

    client
        .push_secret(&push(&name, Some("private-key"), "NEW KEY"))
        .await
        .unwrap();
    assert_eq!(
        fake().value(folder, &name, "private-key").unwrap(),
        b"NEW KEY"
    );
    assert_eq!(
        fake().value(folder, &name, "passphrase").unwrap(),
        b"phrase"
    );
    client
        .push_secret(&push(&name, Some("passphrase"), "other"))
        .await
        .unwrap();
    assert_eq!(fake().value(folder, &name, "passphrase").unwrap(), b"other");
    assert_eq!(
        fake().value(folder, &name, "private-key").unwrap(),
        b"NEW KEY"
    );

    // A new secret whose targeted field is a file: created, then the file uploaded.
    let created = unique_name("new-key");
    let mut request = push(&created, Some("private-key"), "CREATED KEY");
    request.metadata = Some(metadata(folder, KEY_FILE_TEMPLATE));
    client.push_secret(&request).await.unwrap();
    let stored = fake().value(folder, &created, "private-key");
    assert_eq!(stored.unwrap(), b"CREATED KEY");
}

#[tokio::test]
async fn pushes_update_or_create_as_upstream() {
    let (folder, folder_path) = new_folder();
    let client = client(PASSWORD).await;
    let name = unique_name("pushed");
    let error = client
        .push_secret(&push(&name, None, "v1"))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "folderId and secretTemplateId must be provided in metadata to create a new secret"
    );

    let mut create = push(&format!("/somewhere/{name}"), None, "v1");
    create.metadata = Some(metadata(folder, PASSWORD_TEMPLATE));
    client.push_secret(&create).await.unwrap();
    assert_eq!(fake().value(folder, &name, "username").unwrap(), b"v1");

    let path_key = format!("{folder_path}/{name}");
    client
        .push_secret(&push(&path_key, Some("Password"), "pw"))
        .await
        .unwrap();
    assert_eq!(fake().value(folder, &name, "password").unwrap(), b"pw");
    assert_eq!(fake().value(folder, &name, "username").unwrap(), b"v1");
    let error = client
        .push_secret(&push(&path_key, Some("nope"), "x"))
        .await
        .unwrap_err();
    assert_eq!(error.message(), "field nope not found in secret");

    let mut nested = push(&format!("folderId:{folder}/a/b"), None, "x");
    nested.metadata = Some(metadata(folder, PASSWORD_TEMPLATE));
    let error = client.push_secret(&nested).await.unwrap_err();
    assert!(
        error.message().contains("must not contain path separators"),
        "{error}"
    );

    let mut unknown_field = push(&unique_name("other"), Some("nope"), "x");
    unknown_field.metadata = Some(metadata(folder, PASSWORD_TEMPLATE));
    let error = client.push_secret(&unknown_field).await.unwrap_err();
    assert_eq!(error.message(), "field nope not found in secret template");

    let binary = PushRequest::single(
        [("source".to_owned(), SecretValue::new(vec![0xff, 0xfe]))].into(),
        "source",
        name.clone(),
    );
    let error = client.push_secret(&binary).await.unwrap_err();
    assert_eq!(error.message(), "secret value is not valid UTF-8");
}
