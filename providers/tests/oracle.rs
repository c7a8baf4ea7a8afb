//! The `oracle` backend against the OCI Vault contract fake, which verifies every request's
//! signature with the test key's public half: user-principal auth (PKCS#8 and PKCS#1 keys, a
//! wrong key refused), stages as versions, properties and maps, find by name and by tags across
//! pages, push (create, new version, unchanged value, encryption key required), scheduled
//! deletion, store validation, instance principal auth against the metadata and federation
//! fakes and OKE workload identity against the proxymux fake (token reuse and renewal,
//! refusals, --deny-operator-identity).

#![cfg(feature = "oracle")]

mod support;

use std::sync::Arc;

use external_secrets_crds::v1::OraclePrincipalType;
use external_secrets_providers::credentials::{MemorySecretSource, OperatorIdentity};
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use external_secrets_providers::{ClientManager, ManagerSettings, StoreRef, ValidationResult};
use support::oracle::{
    FINGERPRINT, INSTANCE_TENANCY, POD_TOKEN, client, data, fake, instance, pod, private_key,
    store_provider, vault,
};
use support::{NAMESPACE, secret_store, unique_name};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

/// `store` (using the operator's own identity) is refused under `--deny-operator-identity`.
async fn assert_denied_to_secret_stores(store: &external_secrets_crds::v1::SecretStore) {
    let settings = ManagerSettings {
        operator_identity: OperatorIdentity::DeniedToSecretStores,
        ..ManagerSettings::default()
    };
    let denied = ClientManager::new(Arc::new(MemorySecretSource::default()), settings);
    let error = denied
        .client(&StoreRef::from(store), Some(NAMESPACE))
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.message().contains("a SecretStore may not"), "{error}");
}

/// The `Authorization` header of the fake's latest request to `path` whose query names
/// `vault` (`None`: any query). The fake is shared by the tests of this binary, which run in
/// parallel: without the vault, another test's read of the same path could be the latest.
fn last_authorization(path: &str, vault: Option<&str>) -> String {
    let request = fake()
        .server
        .requests()
        .into_iter()
        .rev()
        .find(|request| {
            request.path == path
                && vault.is_none_or(|vault| {
                    request
                        .query
                        .as_deref()
                        .is_some_and(|query| query.contains(vault))
                })
        })
        .unwrap();
    contract_fakes::server::header(&request.headers, "authorization")
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn requests_are_signed_with_the_api_key_in_either_pem_form() {
    let vault = vault();
    fake().put_secret(&vault, "db", "hunter2", &[]);
    let pkcs1 = std::fs::read_to_string(data("oci-api-key-pkcs1.pem")).unwrap();
    for key in [private_key(), pkcs1] {
        let c = client(&vault, &key, FINGERPRINT, |_| {}).await;
        assert_eq!(
            text(c.get_secret(&RemoteRef::new("db")).await.unwrap()),
            "hunter2"
        );
        assert_eq!(c.validate().await.unwrap(), ValidationResult::Ready);
    }
    let authorization =
        last_authorization("/20190301/secretbundles/actions/getByName", Some(&vault));
    assert!(authorization.starts_with("Signature version=\"1\",keyId=\"ocid1.tenancy.oc1..eso-test/ocid1.user.oc1..eso-test/db:03"), "{authorization}");
    assert!(
        authorization.contains(
            "headers=\"date (request-target) host content-length content-type x-content-sha256\""
        ),
        "{authorization}"
    );
}

#[tokio::test]
async fn a_wrong_fingerprint_or_key_is_not_authenticated() {
    let vault = vault();
    fake().put_secret(&vault, "db", "hunter2", &[]);
    let wrong_fingerprint = client(&vault, &private_key(), "00:11", |_| {}).await;
    let error = wrong_fingerprint
        .get_secret(&RemoteRef::new("db"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error
            .message()
            .starts_with("Secrets service failed to GetSecretBundleByName, HTTP status code 401"),
        "{error}"
    );
    let error = wrong_fingerprint.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    // Another key under the right key id: the signature does not verify.
    let other_key = std::fs::read_to_string(data("azure-sp-cert.pem")).unwrap();
    let wrong_key = client(&vault, &other_key, FINGERPRINT, |_| {}).await;
    let error = wrong_key
        .get_secret(&RemoteRef::new("db"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("PRIVATE KEY"), "{error}");
}

#[tokio::test]
async fn stages_properties_and_maps() {
    let vault = vault();
    fake().put_secret(&vault, "config", r#"{"user":"old"}"#, &[]);
    fake().put_secret(
        &vault,
        "config",
        r#"{"user":"admin","db":{"port":"5432"}}"#,
        &[],
    );
    let c = client(&vault, &private_key(), FINGERPRINT, |_| {}).await;
    let get = |property: Option<&str>, version: Option<&str>| {
        let mut remote_ref = RemoteRef::new("config");
        remote_ref.property = property.map(str::to_owned);
        remote_ref.version = version.map(str::to_owned);
        let c = c.clone();
        async move { c.get_secret(&remote_ref).await }
    };
    assert_eq!(text(get(Some("user"), None).await.unwrap()), "admin");
    assert_eq!(text(get(Some("db.port"), None).await.unwrap()), "5432");
    assert_eq!(
        text(get(Some("user"), Some("PREVIOUS")).await.unwrap()),
        "old"
    );
    assert_eq!(
        text(get(Some("user"), Some("LATEST")).await.unwrap()),
        "admin"
    );
    let error = get(None, Some("v2")).await.unwrap_err();
    assert_eq!(error.message(), "unsupported enum value for Stage: v2");
    let error = get(Some("absent"), None).await.unwrap_err();
    assert_eq!(error.message(), "missing Key in secret: config");
    let error = c
        .get_secret_map(&RemoteRef::new("config"))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .starts_with("unable to unmarshal secret from JSON"),
        "{error}"
    );
    assert!(
        !error.message().contains("5432"),
        "no value in the error: {error}"
    );
    let map = c
        .get_secret_map(&RemoteRef::new("config").with_property("db"))
        .await
        .unwrap();
    assert_eq!(texts(map), [("port".into(), "5432".into())]);
    let error = c.get_secret(&RemoteRef::new("absent")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
}

#[tokio::test]
async fn find_by_name_or_any_tag_across_pages_skipping_scheduled_deletions() {
    let vault = vault();
    for index in 0..7 {
        let tags: &[(&str, &str)] = if index % 2 == 0 {
            &[("team", "a")]
        } else {
            &[("env", "prod")]
        };
        fake().put_secret(&vault, &format!("app-{index}"), &index.to_string(), tags);
    }
    fake().put_secret(&vault, "other", "x", &[("team", "b")]);
    let c = client(&vault, &private_key(), FINGERPRINT, |_| {}).await;
    c.delete_secret(&PushRemoteRef::new("app-6")).await.unwrap();
    let found = c
        .get_all_secrets(&Find::by_name("^app-[0-5]$"))
        .await
        .unwrap();
    assert_eq!(found.len(), 6);
    let mut by_tags = Find::default();
    by_tags.tags.insert("team".into(), "a".into());
    by_tags.tags.insert("env".into(), "none".into());
    let found = c.get_all_secrets(&by_tags).await.unwrap();
    assert_eq!(
        found.keys().cloned().collect::<Vec<_>>(),
        ["app-0", "app-2", "app-4"],
        "any one tag matches; app-6 is scheduled for deletion"
    );
    let pages = fake()
        .server
        .requests()
        .into_iter()
        .filter(|request| {
            request.path == "/20180608/secrets"
                && request
                    .query
                    .as_deref()
                    .is_some_and(|q| q.contains(&vault.replace(':', "%3A")))
        })
        .count();
    assert!(pages >= 3, "{pages} list requests");
}

#[tokio::test]
async fn push_creates_updates_and_skips_unchanged_values() {
    let vault = vault();
    let c = client(&vault, &private_key(), FINGERPRINT, |_| {}).await;
    let data: SecretMap = [("token".to_owned(), SecretValue::from("t-1"))]
        .into_iter()
        .collect();
    let push = |data: &SecretMap| PushRequest::single(data.clone(), "token", "pushed");
    assert!(
        !c.secret_exists(&PushRemoteRef::new("pushed"))
            .await
            .unwrap()
    );
    c.push_secret(&push(&data)).await.unwrap();
    assert_eq!(fake().secret(&vault, "pushed"), Some(("t-1".into(), false)));
    assert!(
        c.secret_exists(&PushRemoteRef::new("pushed"))
            .await
            .unwrap()
    );
    let before = fake().server.requests().len();
    c.push_secret(&push(&data)).await.unwrap();
    let writes = fake().server.requests()[before..]
        .iter()
        .filter(|request| request.method != "POST" || !request.path.contains("secretbundles"))
        .count();
    assert_eq!(writes, 0, "an unchanged value is not written again");
    let changed: SecretMap = [("token".to_owned(), SecretValue::from("t-2"))]
        .into_iter()
        .collect();
    c.push_secret(&push(&changed)).await.unwrap();
    assert_eq!(fake().secret(&vault, "pushed"), Some(("t-2".into(), false)));
    c.delete_secret(&PushRemoteRef::new("pushed"))
        .await
        .unwrap();
    assert_eq!(fake().secret(&vault, "pushed"), Some(("t-2".into(), true)));
    c.delete_secret(&PushRemoteRef::new("pushed"))
        .await
        .unwrap();
    c.delete_secret(&PushRemoteRef::new("never-there"))
        .await
        .unwrap();

    let keyless = client(&vault, &private_key(), FINGERPRINT, |o| {
        o.encryption_key = None
    })
    .await;
    let error = keyless.push_secret(&push(&data)).await.unwrap_err();
    assert_eq!(error.message(), "SecretStore must reference encryption key");
}

#[tokio::test]
async fn another_vault_is_not_authorized_or_not_found() {
    fake();
    let c = client(
        "ocid1.vault.oc1..unknown",
        &private_key(),
        FINGERPRINT,
        |_| {},
    )
    .await;
    assert!(matches!(
        c.validate().await.unwrap(),
        ValidationResult::Undetermined(_)
    ));
}

/// Instance principal auth against the metadata and federation fakes, in one test because the
/// fake's token lifetime is process-wide: a token is federated once and reused while it is
/// valid, renewed (with a new session key) once less than five minutes are left, and the
/// principal is also what a store without `auth` uses.
#[tokio::test]
async fn instance_principal_federates_a_session_key_and_renews_it_before_expiry() {
    let (identity, metadata) = instance();
    let vault = vault();
    fake().put_secret(&vault, "db", "hunter2", &[]);
    fake().register_instance(identity, 3600);
    let before = fake().federations();
    let c = client(&vault, "", "", |o| {
        o.principal_type = Some(OraclePrincipalType::InstancePrincipal);
    })
    .await;
    for _ in 0..3 {
        assert_eq!(
            text(c.get_secret(&RemoteRef::new("db")).await.unwrap()),
            "hunter2"
        );
    }
    assert_eq!(
        fake().federations() - before,
        1,
        "one token for three reads"
    );
    let authorization = last_authorization("/v1/x509", None);
    assert!(
        authorization.contains(&format!("keyId=\"{}\"", identity.key_id())),
        "{authorization}"
    );
    let authorization =
        last_authorization("/20190301/secretbundles/actions/getByName", Some(&vault));
    assert!(authorization.contains("keyId=\"ST$"), "{authorization}");
    assert!(
        metadata
            .server
            .requests()
            .iter()
            .any(|request| request.path == "/opc/v2/identity/intermediate.pem")
    );

    // Tokens within the SDKs' five-minute renewal window are renewed before every request.
    fake().register_instance(identity, 120);
    let c = client(&vault, "", "", |o| o.auth = None).await;
    let before = fake().federations();
    for _ in 0..2 {
        assert_eq!(
            text(c.get_secret(&RemoteRef::new("db")).await.unwrap()),
            "hunter2"
        );
    }
    assert_eq!(fake().federations() - before, 2, "a token renewed per read");
    assert_eq!(c.validate().await.unwrap(), ValidationResult::Ready);

    // An identity service that refuses the instance fails the read as a permission error
    // naming no token, key or certificate.
    let stranger =
        contract_fakes::oracle_identity::InstanceIdentity::new(INSTANCE_TENANCY, &private_key())
            .unwrap();
    fake().register_instance(&stranger, 3600);
    let c = client(&vault, "", "", |o| o.auth = None).await;
    let error = c.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(error.message().contains("401"), "{error}");
    for secret in ["BEGIN", "ST$", "PRIVATE"] {
        assert!(!error.to_string().contains(secret), "{error}");
    }

    // Off an instance (no metadata service answering) the client cannot be built.
    fake().register_instance(identity, 3600);
    metadata.set_available(false);
    let manager = ClientManager::new(
        Arc::new(MemorySecretSource::default()),
        ManagerSettings::default(),
    );
    let provider = store_provider(&vault, |o| o.auth = None);
    let store = secret_store(&unique_name("oracle"), provider);
    let error = manager
        .client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
        .err()
        .unwrap();
    metadata.set_available(true);
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.message().contains("/instance/region"), "{error}");

    // The instance's identity is the operator's own: --deny-operator-identity refuses it to a
    // SecretStore.
    assert_denied_to_secret_stores(&store).await;
}

/// OKE workload identity against the proxymux fake (one test: the fake's token lifetime is
/// process-wide): the pod's token is exchanged once for a session reused while valid and
/// renewed within five minutes of expiry; a wrong pod token is refused without the token in
/// the error; `--deny-operator-identity` refuses the pod's identity to a SecretStore.
#[tokio::test]
async fn workload_identity_exchanges_the_pod_token_at_the_proxymux() {
    pod();
    let vault = vault();
    fake().put_secret(&vault, "db", "hunter2", &[]);
    let workload = |o: &mut external_secrets_crds::v1::OracleProvider| {
        o.principal_type = Some(OraclePrincipalType::Workload);
        o.auth = None;
    };
    fake().register_workload(POD_TOKEN, 3600);
    let before = fake().exchanges();
    let c = client(&vault, "", "", workload).await;
    for _ in 0..2 {
        assert_eq!(
            text(c.get_secret(&RemoteRef::new("db")).await.unwrap()),
            "hunter2"
        );
    }
    assert_eq!(fake().exchanges() - before, 1, "one token for two reads");
    assert_eq!(
        last_authorization("/resourcePrincipalSessionTokens", None),
        format!("Bearer {POD_TOKEN}")
    );

    fake().register_workload(POD_TOKEN, 120);
    let c = client(&vault, "", "", workload).await;
    let before = fake().exchanges();
    for _ in 0..2 {
        c.get_secret(&RemoteRef::new("db")).await.unwrap();
    }
    assert_eq!(fake().exchanges() - before, 2, "a token renewed per read");

    fake().register_workload("another pod's token", 3600);
    let c = client(&vault, "", "", workload).await;
    let error = c.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.to_string().contains(POD_TOKEN), "{error}");
    fake().register_workload(POD_TOKEN, 3600);

    let store = secret_store(&unique_name("oracle"), store_provider(&vault, workload));
    assert_denied_to_secret_stores(&store).await;
}
