//! Reads: KV v2 versions, properties and maps, KV v1, key paths, metadata, Vault namespaces, and
//! the server certificate checked against `caBundle` / `caProvider`.

use external_secrets_crds::v1::{CaProvider, CaProviderType, VaultKvStoreVersion};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::{MetadataPolicy, RemoteRef};
use external_secrets_providers::{ErrorKind, ValidationResult};
use k8s_openapi::ByteString;
use reqwest::Method;
use serde_json::json;

use super::support::vault::{BaoServer, ROOT_TOKEN, TOKEN_SECRET, token_auth, token_source};
use super::support::{NAMESPACE, unique_name};
use super::{client, root_client, text};

#[tokio::test]
async fn kv_v2_reads_versions_properties_and_maps() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[]).await;
    let first = json!({"user": "admin", "port": 5432, "nested": {"a": {"b": "deep"}},
        "dotted.key": "dot", "list": ["x", "y"], "none": null, "html": "<&>"});
    server
        .write(
            &format!("{mount}/data/app/config"),
            json!({ "data": first }),
        )
        .await;
    let second = json!({"user": "root", "nested": {"a": {"b": "deeper"}}});
    server
        .write(
            &format!("{mount}/data/app/config"),
            json!({ "data": second }),
        )
        .await;
    let client = root_client(server, &mount).await;
    let get = |remote_ref: RemoteRef| {
        let client = client.clone();
        async move { client.get_secret(&remote_ref).await.map(text) }
    };

    let key = || RemoteRef::new("app/config");
    assert_eq!(
        get(key()).await.unwrap(),
        r#"{"nested":{"a":{"b":"deeper"}},"user":"root"}"#
    );
    assert_eq!(get(key().with_property("user")).await.unwrap(), "root");
    assert_eq!(
        get(key().with_property("nested.a.b")).await.unwrap(),
        "deeper"
    );
    let old = || key().with_version("1");
    assert_eq!(get(old().with_property("user")).await.unwrap(), "admin");
    assert_eq!(get(old().with_property("port")).await.unwrap(), "5432");
    assert_eq!(get(old().with_property("dotted.key")).await.unwrap(), "dot");
    assert_eq!(get(old().with_property("list.1")).await.unwrap(), "y");
    assert_eq!(get(old().with_property("none")).await.unwrap(), "");
    // As upstream re-encodes with Go: HTML characters escaped in JSON, not in a string value.
    assert!(
        get(old())
            .await
            .unwrap()
            .contains(r#""html":"\u003c\u0026\u003e""#)
    );
    assert_eq!(get(old().with_property("html")).await.unwrap(), "<&>");

    let missing = get(key().with_property("nope.deeper")).await.unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert_eq!(
        missing.message(),
        r#"cannot find secret data for key: "nope.deeper""#
    );

    let map = client
        .get_secret_map(&old().with_property("nested"))
        .await
        .unwrap();
    assert_eq!(text(map["a"].clone()), r#"{"b":"deep"}"#);
    let map = client.get_secret_map(&old()).await.unwrap();
    assert_eq!(
        map.keys().collect::<Vec<_>>(),
        [
            "dotted.key",
            "html",
            "list",
            "nested",
            "none",
            "port",
            "user"
        ]
    );
    assert_eq!(text(map["list"].clone()), r#"["x","y"]"#);
    assert_eq!(text(map["none"].clone()), "");
    let not_object = client
        .get_secret_map(&key().with_property("user"))
        .await
        .unwrap_err();
    assert_eq!(not_object.kind(), ErrorKind::InvalidData);

    // A deleted current version is gone; the older one is still there.
    let (status, _) = server
        .call(
            Method::DELETE,
            &format!("{mount}/data/app/config"),
            None,
            None,
        )
        .await;
    assert!(status.is_success());
    assert!(get(key()).await.unwrap_err().is_not_found());
    assert_eq!(get(old().with_property("user")).await.unwrap(), "admin");
    assert!(
        get(RemoteRef::new("absent"))
            .await
            .unwrap_err()
            .is_not_found()
    );
}

/// Issue 23: a secret missing from a mounted engine is `NotFound` (it drives `deletionPolicy`),
/// but a path with no engine mounted (a moved or removed mount: OpenBao answers 404 "no handler
/// for route") is a temporary error, so no deletion policy acts on it.
#[tokio::test]
async fn a_missing_mount_is_not_a_deleted_secret() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[]).await;
    let client = root_client(server, &mount).await;
    let missing = client
        .get_secret(&RemoteRef::new("never/written"))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");

    let unmounted = root_client(server, &unique_name("moved")).await;
    let error = unmounted
        .get_secret(&RemoteRef::new("app/config"))
        .await
        .unwrap_err();
    assert_ne!(error.kind(), ErrorKind::NotFound, "{error}");
    assert!(error.is_temporary(), "{error}");
    assert!(error.message().contains("no handler for route"), "{error}");
}

#[tokio::test]
async fn kv_v1_reads_ignore_versions() {
    let server = BaoServer::shared();
    let mount = unique_name("kv1");
    server.mount_kv(None, &mount, 1).await;
    server
        .write(
            &format!("{mount}/db"),
            json!({"user": "admin", "pass": "s3cret"}),
        )
        .await;
    let mut provider = server.provider(&mount, Some(token_auth()));
    provider.version = VaultKvStoreVersion::V1;
    let client = client(provider, token_source(ROOT_TOKEN)).await.unwrap();
    let value = client
        .get_secret(&RemoteRef::new("db").with_property("pass").with_version("7"))
        .await
        .unwrap();
    assert_eq!(text(value), "s3cret");
    let whole = client.get_secret(&RemoteRef::new("db")).await.unwrap();
    assert_eq!(text(whole), r#"{"pass":"s3cret","user":"admin"}"#);
    let metadata = RemoteRef {
        metadata_policy: MetadataPolicy::Fetch,
        ..RemoteRef::new("db")
    };
    let error = client.get_secret(&metadata).await.unwrap_err();
    assert_eq!(
        error.message(),
        "cannot perform metadata fetch operations with kv version v1"
    );
}

#[tokio::test]
async fn keys_may_name_the_mount_themselves() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[("team/db", "v")]).await;
    let client = root_client(server, &mount).await;
    for key in [
        "team/db".to_owned(),
        format!("{mount}/team/db"),
        format!("{mount}/data/team/db"),
    ] {
        let value = client
            .get_secret(&RemoteRef::new(key.clone()).with_property("value"))
            .await;
        assert_eq!(text(value.unwrap()), "v", "{key}");
    }
    let mut without_path = server.provider(&mount, Some(token_auth()));
    without_path.path = None;
    let client = super::client(without_path, token_source(ROOT_TOKEN))
        .await
        .unwrap();
    let value = client
        .get_secret(&RemoteRef::new(format!("{mount}/team/db")).with_property("value"))
        .await;
    assert_eq!(text(value.unwrap()), "v");
}

#[tokio::test]
async fn metadata_policy_fetch_reads_system_and_custom_metadata() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[("tagged", "v")]).await;
    server
        .write(
            &format!("{mount}/metadata/tagged"),
            json!({"custom_metadata": {"team": "payments", "created_time": "mine"}}),
        )
        .await;
    let client = root_client(server, &mount).await;
    let fetch = |property: Option<&str>| RemoteRef {
        metadata_policy: MetadataPolicy::Fetch,
        property: property.map(str::to_owned),
        ..RemoteRef::new("tagged")
    };
    let all = text(client.get_secret(&fetch(None)).await.unwrap());
    let all: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all["team"], "payments");
    assert_eq!(all["current_version"], "1");
    // Custom keys win over system keys, as upstream.
    assert_eq!(all["created_time"], "mine");
    let team = client.get_secret(&fetch(Some("team"))).await.unwrap();
    assert_eq!(text(team), "payments");
    let map = client.get_secret_map(&fetch(None)).await.unwrap();
    assert_eq!(text(map["team"].clone()), "payments");
    let error = client
        .get_secret(&RemoteRef {
            key: "absent".into(),
            ..fetch(None)
        })
        .await
        .unwrap_err();
    assert!(error.is_not_found());
}

#[tokio::test]
async fn namespaces_scope_every_request() {
    let server = BaoServer::shared();
    let namespace = unique_name("tenant");
    server
        .write(&format!("sys/namespaces/{namespace}"), json!({}))
        .await;
    server.mount_kv(Some(&namespace), "kv", 2).await;
    server
        .write_in(
            Some(&namespace),
            "kv/data/db",
            json!({"data": {"pass": "inside"}}),
        )
        .await;
    let mut provider = server.provider("kv", Some(token_auth()));
    provider.namespace = Some(namespace.clone());
    let inside = client(provider.clone(), token_source(ROOT_TOKEN))
        .await
        .unwrap();
    let value = inside
        .get_secret(&RemoteRef::new("db").with_property("pass"))
        .await;
    assert_eq!(text(value.unwrap()), "inside");
    provider.namespace = None;
    let outside = client(provider, token_source(ROOT_TOKEN)).await.unwrap();
    let error = outside.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    // Outside the namespace no `kv` engine is mounted: a missing mount, not a deleted secret
    // (issue 23; it was NotFound before).
    assert!(!error.is_not_found(), "{error}");
    assert!(error.message().contains("no handler for route"), "{error}");
}

#[tokio::test]
async fn the_server_certificate_is_checked_against_the_configured_ca() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[("db", "v")]).await;
    let read = RemoteRef::new("db").with_property("value");

    // caProvider: a ConfigMap key in the store's namespace.
    let mut provider = server.provider(&mount, Some(token_auth()));
    provider.ca_bundle = None;
    provider.ca_provider = Some(CaProvider {
        r#type: CaProviderType::ConfigMap,
        name: "vault-ca".into(),
        key: Some("ca.crt".into()),
        namespace: None,
    });
    let source = token_source(ROOT_TOKEN).with_config_map(
        NAMESPACE,
        "vault-ca",
        &[("ca.crt", server.ca_pem())],
    );
    let trusted = client(provider.clone(), source).await.unwrap();
    assert_eq!(text(trusted.get_secret(&read).await.unwrap()), "v");
    assert_eq!(trusted.validate().await.unwrap(), ValidationResult::Ready);

    // No CA: the system roots do not know the dev server's CA.
    provider.ca_provider = None;
    let untrusted = client(provider.clone(), token_source(ROOT_TOKEN))
        .await
        .unwrap();
    let error = untrusted.get_secret(&read).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.is_temporary());
    assert!(error.message().contains("tls handshake failed"), "{error}");

    // A bundle that is not PEM fails the client.
    provider.ca_bundle = Some(ByteString(b"not a certificate".to_vec()));
    let error = client(provider, token_source(ROOT_TOKEN))
        .await
        .err()
        .unwrap();
    assert!(
        error
            .message()
            .starts_with("cannot set Vault CA certificate")
    );
}

#[tokio::test]
async fn errors_map_to_kinds() {
    let server = BaoServer::shared();
    let mount = server.seeded_mount(&[("db", "v")]).await;

    // A valid token without a policy for the mount.
    let powerless = server.token(&["default"]).await;
    let provider = server.provider(&mount, Some(token_auth()));
    let denied = client(provider.clone(), token_source(&powerless))
        .await
        .unwrap();
    let error = denied.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.is_temporary());
    assert!(error.message().contains("permission denied"), "{error}");
    assert!(!error.message().contains(&powerless));
    assert_eq!(denied.validate().await.unwrap(), ValidationResult::Ready);

    // An unknown token fails validation.
    let forged = client(provider.clone(), token_source("s.not-a-token"))
        .await
        .unwrap();
    let error = forged.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
    assert!(error.message().starts_with("invalid vault credentials"));

    // The token Secret missing is a temporary configuration error when the client is built.
    let error = client(provider.clone(), MemorySecretSource::default())
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(error.is_temporary());
    assert!(error.message().contains(TOKEN_SECRET));

    // Nothing listening: temporarily unavailable.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut unreachable = provider;
    unreachable.server = format!("https://127.0.0.1:{port}");
    let client = client(unreachable, token_source(ROOT_TOKEN)).await.unwrap();
    let error = client.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.is_temporary());
}
