//! azurekv object handling against the Key Vault fake: keys, certificates, versions, find by
//! tags across pages, disabled secrets, `metadataPolicy: Fetch`, pushes of secrets, keys and
//! certificates with ownership and metadata, soft delete and recovery.

use super::*;

#[tokio::test]
async fn keys_certificates_and_versions() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    fake.put_key(
        "signing",
        json!({"kty": "RSA", "n": "bW9kdWx1cw", "e": "AQAB"}),
        &[],
    );
    let jwk = client
        .get_secret(&RemoteRef::new("key/signing"))
        .await
        .unwrap();
    let jwk: serde_json::Value = serde_json::from_slice(jwk.expose()).unwrap();
    assert_eq!(jwk["kty"], "RSA");
    assert!(jwk["kid"].as_str().unwrap().contains("/keys/signing/"));
    let n = client
        .get_secret(&RemoteRef::new("key/signing").with_property("n"))
        .await
        .unwrap();
    assert_eq!(text(n), "bW9kdWx1cw");

    fake.put_certificate("tls", b"\x30\x03\x02\x01\x05", &[]);
    let der = client
        .get_secret(&RemoteRef::new("cert/tls"))
        .await
        .unwrap();
    assert_eq!(der.expose(), b"\x30\x03\x02\x01\x05");
    let map_error = client
        .get_secret_map(&RemoteRef::new("cert/tls"))
        .await
        .unwrap_err();
    assert_eq!(
        map_error.message(),
        "cannot get use dataFrom to get certificate secret"
    );

    fake.put_secret("rotated", "v1", &[], true);
    let old_id = fake.bundle(Kind::Secret, "rotated").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    fake.put_secret("rotated", "v2", &[], true);
    let old_version = old_id.rsplit('/').next().unwrap();
    let latest = client
        .get_secret(&RemoteRef::new("secret/rotated"))
        .await
        .unwrap();
    let pinned = client
        .get_secret(&RemoteRef::new("rotated").with_version(old_version))
        .await
        .unwrap();
    assert_eq!(
        (text(latest), text(pinned)),
        ("v2".to_owned(), "v1".to_owned())
    );
    let missing = client
        .get_secret(&RemoteRef::new("rotated").with_version("0123"))
        .await
        .unwrap_err();
    assert!(missing.is_not_found());
    let unknown = client
        .get_secret(&RemoteRef::new("blob/x"))
        .await
        .unwrap_err();
    assert_eq!(
        unknown.message(),
        "unknown Azure Keyvault object Type for x"
    );
}

#[tokio::test]
async fn find_by_tags_pages_and_skips_disabled() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    for index in 0..30 {
        let team = if index % 2 == 0 { "red" } else { "blue" };
        fake.put_secret(
            &format!("s{index:02}"),
            &format!("v{index}"),
            &[("team", team)],
            true,
        );
    }
    fake.put_secret("s-disabled", "hidden", &[("team", "red")], false);
    let find = Find {
        tags: [("team".to_owned(), "red".to_owned())].into(),
        ..Find::default()
    };
    let found = client.get_all_secrets(&find).await.unwrap();
    assert_eq!(found.len(), 15);
    assert_eq!(text(found["s28"].clone()), "v28");
    assert!(!found.contains_key("s-disabled"));
    let pages = fake
        .server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/secrets" && r.headers.contains_key("authorization"))
        .count();
    assert_eq!(pages, 2, "31 secrets are two pages of 25");
    let by_name = Find {
        name: Some(FindName {
            regexp: "^s0[0-4]$".to_owned(),
        }),
        ..Find::default()
    };
    assert_eq!(client.get_all_secrets(&by_name).await.unwrap().len(), 5);
    let disabled = client
        .get_secret(&RemoteRef::new("s-disabled"))
        .await
        .unwrap_err();
    assert_eq!(disabled.kind(), ErrorKind::PermissionDenied);
    assert!(disabled.message().contains("SecretDisabled"), "{disabled}");
}

#[tokio::test]
async fn metadata_policy_fetch_returns_tags() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    fake.put_secret(
        "tagged",
        "v",
        &[("env", "prod"), ("owner", r#"{"team":"red"}"#)],
        true,
    );
    let mut all = RemoteRef::new("tagged");
    all.metadata_policy = MetadataPolicy::Fetch;
    let tags: serde_json::Value =
        serde_json::from_slice(client.get_secret(&all).await.unwrap().expose()).unwrap();
    assert_eq!(tags["env"], "prod");
    assert!(tags["attribute.created"].as_str().unwrap().ends_with('Z'));
    let one = RemoteRef {
        property: Some("owner.team".to_owned()),
        ..all.clone()
    };
    assert_eq!(text(client.get_secret(&one).await.unwrap()), "red");
    let map = client.get_secret_map(&all).await.unwrap();
    assert_eq!(text(map["tagged_env"].clone()), "prod");
    assert_eq!(text(map["tagged_owner_team"].clone()), "red");
    let missing = RemoteRef {
        property: Some("absent".to_owned()),
        ..all
    };
    assert_eq!(
        client.get_secret(&missing).await.unwrap_err().message(),
        "tag absent does not exist"
    );
}

fn push(remote_key: &str, value: &str, metadata: Option<serde_json::Value>) -> PushRequest {
    let data = [("value".to_owned(), SecretValue::from(value))].into();
    let mut request = PushRequest::single(data, "value", remote_key);
    request.metadata = metadata;
    request
}

#[tokio::test]
async fn pushes_are_tagged_and_never_touch_unmanaged_secrets() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    let metadata = json!({
        "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
        "kind": "PushSecretMetadata",
        "spec": {"expirationDate": "2040-01-02T03:04:05Z", "contentType": "text/plain", "tags": {"team": "red"}}
    });
    client
        .push_secret(&push("pushed", "one", Some(metadata)))
        .await
        .unwrap();
    let bundle = fake.bundle(Kind::Secret, "pushed").unwrap();
    assert_eq!(bundle["value"], "one");
    assert_eq!(
        bundle["tags"],
        json!({"managed-by": "external-secrets", "team": "red"})
    );
    assert_eq!(bundle["contentType"], "text/plain");
    assert_eq!(bundle["attributes"]["exp"], 2_209_086_245i64);

    fake.put_secret("foreign", "theirs", &[], true);
    let refused = client
        .push_secret(&push("foreign", "mine", None))
        .await
        .unwrap_err();
    assert!(
        refused
            .message()
            .contains("not managed by external-secrets"),
        "{refused}"
    );
    assert_eq!(
        fake.bundle(Kind::Secret, "foreign").unwrap()["value"],
        "theirs"
    );
    let delete = client
        .delete_secret(&PushRemoteRef::new("foreign"))
        .await
        .unwrap_err();
    assert!(delete.message().contains("not managed by external-secrets"));
    assert!(fake.bundle(Kind::Secret, "foreign").is_some());

    let bad_tags = json!({"apiVersion": "kubernetes.external-secrets.io/v1alpha1", "kind": "PushSecretMetadata", "spec": {"tags": {"managed-by": "me"}}});
    let error = client
        .push_secret(&push("pushed", "two", Some(bad_tags)))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "error parsing tags in metadata: Cannot specify a 'managed-by' tag"
    );
}

#[tokio::test]
async fn deleted_secrets_are_soft_deleted_and_recovered_on_push() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    client
        .push_secret(&push("cycle", "one", None))
        .await
        .unwrap();
    client
        .delete_secret(&PushRemoteRef::new("cycle"))
        .await
        .unwrap();
    assert!(fake.is_deleted(Kind::Secret, "cycle"));
    assert!(
        !client
            .secret_exists(&PushRemoteRef::new("cycle"))
            .await
            .unwrap()
    );
    client
        .push_secret(&push("cycle", "two", None))
        .await
        .unwrap();
    assert!(!fake.is_deleted(Kind::Secret, "cycle"));
    assert_eq!(fake.bundle(Kind::Secret, "cycle").unwrap()["value"], "two");
    assert!(
        client
            .secret_exists(&PushRemoteRef::new("cycle"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn pushed_pem_keys_are_imported_as_jwks() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    let key_pem = &CERT_BUNDLE[CERT_BUNDLE.find("-----BEGIN PRIVATE KEY").unwrap()..];
    client
        .push_secret(&push("key/imported", key_pem, None))
        .await
        .unwrap();
    let bundle = fake.bundle(Kind::Key, "imported").unwrap();
    assert_eq!(bundle["key"]["kty"], "RSA");
    assert_eq!(bundle["key"]["e"], "AQAB");
    assert!(bundle["key"].get("d").is_none());
    assert_eq!(bundle["tags"], json!({"managed-by": "external-secrets"}));
    let first_id = bundle["key"]["kid"].clone();
    client
        .push_secret(&push("key/imported", key_pem, None))
        .await
        .unwrap();
    let again = fake.bundle(Kind::Key, "imported").unwrap();
    assert_eq!(
        again["key"]["kid"], first_id,
        "an unchanged key is not imported again"
    );

    fake.put_key(
        "foreign",
        json!({"kty": "RSA", "n": "eA", "e": "AQAB"}),
        &[],
    );
    let refused = client
        .push_secret(&push("key/foreign", key_pem, None))
        .await
        .unwrap_err();
    assert!(
        refused
            .message()
            .contains("not managed by external-secrets")
    );
    client
        .delete_secret(&PushRemoteRef::new("key/imported"))
        .await
        .unwrap();
    assert!(fake.is_deleted(Kind::Key, "imported"));
}

#[tokio::test]
async fn pushed_pem_certificates_are_imported() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    client
        .push_secret(&push("cert/tls", CERT_BUNDLE, None))
        .await
        .unwrap();
    let der = CertificateDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap();
    let read = client
        .get_secret(&RemoteRef::new("cert/tls"))
        .await
        .unwrap();
    assert_eq!(read.expose(), der.as_ref());
    let bundle = fake.bundle(Kind::Certificate, "tls").unwrap();
    assert_eq!(bundle["tags"], json!({"managed-by": "external-secrets"}));
    client
        .push_secret(&push("cert/tls", CERT_BUNDLE, None))
        .await
        .unwrap();
    assert_eq!(
        fake.bundle(Kind::Certificate, "tls").unwrap()["id"],
        bundle["id"]
    );
    let no_key = &CERT_BUNDLE[..CERT_BUNDLE.find("-----BEGIN PRIVATE KEY").unwrap()];
    let refused = client
        .push_secret(&push("cert/other", no_key, None))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidRequest, "{refused}");
}

/// A PKCS#12 archive without password of the test certificate and its key, written with
/// p12-keystore (AES-256 PBES2 and an HMAC-SHA-256 MAC, as go-pkcs12's Modern encoder).
fn pkcs12_archive() -> Vec<u8> {
    use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
    let der = CertificateDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap();
    let PrivateKeyDer::Pkcs8(key) = PrivateKeyDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap()
    else {
        panic!("the test key is PKCS#8");
    };
    let chain = PrivateKeyChain::new(
        b"key-1".to_vec(),
        PrivateKey::from_der(key.secret_pkcs8_der()).unwrap(),
        [Certificate::from_der(der.as_ref()).unwrap()],
    );
    let mut store = KeyStore::new();
    store.add_entry("tls", KeyStoreEntry::PrivateKeyChain(chain));
    store.writer("").write().unwrap()
}

#[tokio::test]
async fn pushed_pkcs12_certificates_are_imported_and_other_values_refused() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    let archive = pkcs12_archive();
    let request = |value: &[u8]| {
        let data = [("value".to_owned(), SecretValue::from(value))].into();
        PushRequest::single(data, "value", "cert/p12")
    };
    client.push_secret(&request(&archive)).await.unwrap();
    let der = CertificateDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap();
    let read = client
        .get_secret(&RemoteRef::new("cert/p12"))
        .await
        .unwrap();
    assert_eq!(read.expose(), der.as_ref());
    let bundle = fake.bundle(Kind::Certificate, "p12").unwrap();
    assert_eq!(bundle["tags"], json!({"managed-by": "external-secrets"}));
    let imports = || {
        fake.server
            .requests()
            .into_iter()
            .filter(|request| request.path == "/certificates/p12/import")
            .count()
    };
    assert_eq!(imports(), 1);
    // The same certificate again (a new archive: fresh salts) is not imported again.
    client
        .push_secret(&request(&pkcs12_archive()))
        .await
        .unwrap();
    assert_eq!(imports(), 1);
    assert_eq!(
        fake.bundle(Kind::Certificate, "p12").unwrap()["id"],
        bundle["id"]
    );
    let refused = client
        .push_secret(&request(b"not a certificate"))
        .await
        .unwrap_err();
    assert_eq!(
        refused.message(),
        "value from secret is not a valid certificate: could not parse certificate value as \
         PKCS#12, DER or PEM"
    );
    assert_eq!(imports(), 1);
}
