//! The `ibm` backend against the IBM contract fake (IAM and Secrets Manager v2): API key and
//! container (trusted profile) auth, the key formats (`name`, `type/id`, `group/type/name`),
//! the value and map of every secret type, `metadataPolicy: Fetch`, and error kinds.

#![cfg(feature = "ibm")]

mod support;

use std::sync::Arc;

use contract_fakes::ibm::IbmFake;
use external_secrets_crds::v1::IbmAuthContainerAuth;
use external_secrets_providers::credentials::{MemorySecretSource, OperatorIdentity};
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, MetadataPolicy, PushRemoteRef, RemoteRef};
use external_secrets_providers::value::{SecretMap, SecretValue};
use external_secrets_providers::{ClientManager, ManagerSettings, SharedClient, StoreRef};
use serde_json::json;
use support::ibm::{API_KEY, client, fake, store_provider};
use support::{NAMESPACE, secret_store, unique_name};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn texts(map: SecretMap) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(key, value)| (key, text(value)))
        .collect()
}

async fn get(
    client: &SharedClient,
    key: &str,
    property: Option<&str>,
) -> Result<String, ErrorKind> {
    let mut remote_ref = RemoteRef::new(key);
    remote_ref.property = property.map(str::to_owned);
    client
        .get_secret(&remote_ref)
        .await
        .map(text)
        .map_err(|error| error.kind())
}

#[tokio::test]
async fn the_api_key_is_exchanged_at_iam_and_a_wrong_one_is_refused() {
    let fake = fake();
    fake.put_secret("team", "arbitrary", "db", json!({"payload": "hunter2"}));
    let denied = client(&fake, "wrong-key", |_| {}).await;
    let error = denied
        .get_secret(&RemoteRef::new("team/arbitrary/db"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error
            .message()
            .contains("Provided API key could not be found"),
        "{error}"
    );
    assert!(!error.message().contains("wrong-key"), "{error}");

    let allowed = client(&fake, API_KEY, |_| {}).await;
    assert_eq!(
        get(&allowed, "team/arbitrary/db", None).await.unwrap(),
        "hunter2"
    );
    // The token is kept: a second read asks IAM for no new one.
    assert_eq!(
        get(&allowed, "team/arbitrary/db", None).await.unwrap(),
        "hunter2"
    );
    let requests = fake.server.requests();
    let token_requests = requests
        .iter()
        .filter(|request| request.path == "/identity/token")
        .count();
    assert_eq!(token_requests, 2, "one refused, one issued");
    let read = requests
        .iter()
        .rev()
        .find(|request| {
            request.path == "/api/v2/secret_groups/team/secret_types/arbitrary/secrets/db"
        })
        .unwrap();
    let token = contract_fakes::server::bearer(&read.headers).unwrap();
    assert!(token.starts_with("iam-access-token-"), "{token}");
}

fn container_auth(
    fake: &IbmFake,
    profile: &str,
    token_file: &std::path::Path,
) -> IbmAuthContainerAuth {
    IbmAuthContainerAuth {
        profile: profile.into(),
        token_location: Some(token_file.display().to_string()),
        iam_endpoint: Some(fake.server.url.clone()),
    }
}

fn token_file(contents: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(unique_name(&format!("ibm-cr-token-{}", std::process::id())));
    std::fs::write(&path, contents).unwrap();
    path
}

#[tokio::test]
async fn container_auth_presents_the_compute_resource_token_for_the_trusted_profile() {
    let fake = fake();
    fake.trust_profile("eso-profile", "cr-token-1");
    fake.put_secret(
        "team",
        "arbitrary",
        "db",
        json!({"payload": "from-profile"}),
    );
    let file = token_file("cr-token-1\n");
    let with_profile = |profile: &'static str, file: std::path::PathBuf| {
        let auth = container_auth(&fake, profile, &file);
        move |ibm: &mut external_secrets_crds::v1::IbmProvider| {
            ibm.auth.secret_ref = None;
            ibm.auth.container_auth = Some(auth);
        }
    };
    let allowed = client(&fake, "unused", with_profile("eso-profile", file.clone())).await;
    assert_eq!(
        get(&allowed, "team/arbitrary/db", None).await.unwrap(),
        "from-profile"
    );

    let wrong_profile = client(&fake, "unused", with_profile("other", file.clone())).await;
    let error = wrong_profile
        .get_secret(&RemoteRef::new("team/arbitrary/db"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");

    // The file is read for every token: a rotated token the fake does not know is refused.
    let rotated = token_file("cr-token-unknown");
    let stale = client(&fake, "unused", with_profile("eso-profile", rotated)).await;
    let error = stale
        .get_secret(&RemoteRef::new("team/arbitrary/db"))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .contains("compute resource token is invalid"),
        "{error}"
    );
    assert!(!error.message().contains("cr-token-unknown"), "{error}");
}

#[tokio::test]
async fn container_auth_needs_its_token_file_and_may_be_denied_to_secret_stores() {
    let fake = fake();
    let missing = std::env::temp_dir().join("ibm-no-such-token");
    let auth = container_auth(&fake, "eso-profile", &missing);
    let provider = store_provider(&fake, |ibm| {
        ibm.auth.secret_ref = None;
        ibm.auth.container_auth = Some(auth);
    });
    let store = secret_store(&unique_name("ibm"), provider);
    let source = Arc::new(MemorySecretSource::default());
    let manager = ClientManager::new(source.clone(), ManagerSettings::default());
    let error = manager
        .client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
        .err()
        .unwrap();
    assert!(
        error
            .message()
            .contains("cannot read container auth token /tmp/ibm-no-such-token"),
        "{error}"
    );
    let settings = ManagerSettings {
        operator_identity: OperatorIdentity::DeniedToSecretStores,
        ..ManagerSettings::default()
    };
    let denied = ClientManager::new(source, settings);
    let error = denied
        .client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.message().contains("a SecretStore may not"), "{error}");
}

#[tokio::test]
async fn each_secret_type_gives_upstreams_value() {
    let fake = fake();
    let g = "types";
    fake.put_secret(
        g,
        "username_password",
        "login",
        json!({"username": "admin", "password": "pw"}),
    );
    fake.put_secret(
        g,
        "iam_credentials",
        "iam",
        json!({"api_key": "iam-key", "api_key_id": "id"}),
    );
    fake.put_secret(
        g,
        "service_credentials",
        "svc",
        json!({"credentials": {"apikey": "k", "iam_role_crn": "r"}}),
    );
    fake.put_secret(
        g,
        "imported_cert",
        "imported",
        json!({"certificate": "CERT"}),
    );
    fake.put_secret(
        g,
        "public_cert",
        "public",
        json!({"certificate": "PC", "intermediate": "PI", "private_key": "PK"}),
    );
    fake.put_secret(
        g,
        "private_cert",
        "private",
        json!({"certificate": "VC", "private_key": "VK", "issuing_ca": "CA"}),
    );
    fake.put_secret(
        g,
        "kv",
        "settings",
        json!({"data": {"db": {"host": "h"}, "a.b": "dotted", "n": 5}}),
    );
    fake.put_secret(
        g,
        "custom_credentials",
        "custom",
        json!({"credentials_content": {"token": "t"}}),
    );
    let id = fake.put_secret(g, "arbitrary", "by-id", json!({"payload": "via-id"}));
    let c = client(&fake, API_KEY, |_| {}).await;

    assert_eq!(
        get(&c, "types/username_password/login", Some("password"))
            .await
            .unwrap(),
        "pw"
    );
    assert_eq!(
        get(&c, "types/username_password/login", None).await,
        Err(ErrorKind::InvalidRequest)
    );
    assert_eq!(
        get(&c, "types/iam_credentials/iam", None).await.unwrap(),
        "iam-key"
    );
    assert_eq!(
        get(&c, "types/service_credentials/svc", None)
            .await
            .unwrap(),
        r#"{"apikey":"k","iam_role_crn":"r"}"#
    );
    assert_eq!(
        get(&c, "types/imported_cert/imported", Some("certificate"))
            .await
            .unwrap(),
        "CERT"
    );
    assert_eq!(
        get(&c, "types/imported_cert/imported", Some("intermediate"))
            .await
            .unwrap(),
        ""
    );
    assert_eq!(
        get(&c, "types/imported_cert/imported", Some("private_key"))
            .await
            .unwrap(),
        ""
    );
    assert_eq!(
        get(&c, "types/imported_cert/imported", Some("other")).await,
        Err(ErrorKind::NotFound)
    );
    assert_eq!(
        get(&c, "types/public_cert/public", Some("intermediate"))
            .await
            .unwrap(),
        "PI"
    );
    assert_eq!(
        get(&c, "types/private_cert/private", Some("issuing_ca"))
            .await
            .unwrap(),
        "CA"
    );
    assert_eq!(
        get(&c, "types/private_cert/private", None).await,
        Err(ErrorKind::InvalidRequest)
    );
    assert_eq!(
        get(&c, "types/kv/settings", None).await.unwrap(),
        r#"{"a.b":"dotted","db":{"host":"h"},"n":5}"#
    );
    assert_eq!(
        get(&c, "types/kv/settings", Some("db.host")).await.unwrap(),
        "h"
    );
    assert_eq!(
        get(&c, "types/kv/settings", Some("a.b")).await.unwrap(),
        "dotted"
    );
    assert_eq!(get(&c, "types/kv/settings", Some("n")).await.unwrap(), "5");
    assert_eq!(
        get(&c, "types/kv/settings", Some("absent")).await,
        Err(ErrorKind::NotFound)
    );
    assert_eq!(
        get(&c, "types/custom_credentials/custom", Some("token"))
            .await
            .unwrap(),
        "t"
    );
    // A UUID is read by id, with or without type and group; a name needs its group.
    assert_eq!(get(&c, &id, None).await.unwrap(), "via-id");
    assert_eq!(
        get(&c, &format!("arbitrary/{id}"), None).await.unwrap(),
        "via-id"
    );
    let error = c
        .get_secret(&RemoteRef::new("arbitrary/by-id"))
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "failed to fetch the secret, secret group name is missing"
    );
    let error = c
        .get_secret(&RemoteRef::new("types/secret_kind/x"))
        .await
        .unwrap_err();
    assert_eq!(error.message(), "unknown secret type secret_kind");
    // A missing secret is NotFound, with Secrets Manager's message.
    let error = c
        .get_secret(&RemoteRef::new("types/arbitrary/absent"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    assert!(error.message().ends_with("Secret not found"), "{error}");
}

#[tokio::test]
async fn maps_per_type_and_metadata_when_fetched() {
    let fake = fake();
    let g = "maps";
    fake.put_secret(
        g,
        "username_password",
        "login",
        json!({"username": "admin", "password": "pw"}),
    );
    fake.put_secret(
        g,
        "imported_cert",
        "imported",
        json!({"certificate": "CERT"}),
    );
    fake.put_secret(g, "public_cert", "public", json!({"certificate": "PC"}));
    fake.put_secret(g, "iam_credentials", "iam", json!({"api_key": "iam-key"}));
    fake.put_secret(g, "arbitrary", "plain", json!({"payload": "p"}));
    fake.put_secret(
        g,
        "kv",
        "settings",
        json!({"data": {"db": {"host": "h"}, "user": "u"}}),
    );
    let c = client(&fake, API_KEY, |_| {}).await;
    let map = |key: &'static str| {
        let c = c.clone();
        async move { c.get_secret_map(&RemoteRef::new(key)).await }
    };
    assert_eq!(
        texts(map("maps/username_password/login").await.unwrap()),
        [
            ("password".into(), "pw".into()),
            ("username".into(), "admin".into())
        ]
    );
    assert_eq!(
        texts(map("maps/imported_cert/imported").await.unwrap()),
        [
            ("certificate".into(), "CERT".into()),
            ("intermediate".into(), String::new()),
            ("private_key".into(), String::new())
        ]
    );
    let error = map("maps/public_cert/public").await.unwrap_err();
    assert_eq!(
        error.message(),
        "key intermediate does not exist in secret public"
    );
    assert_eq!(
        texts(map("maps/iam_credentials/iam").await.unwrap()),
        [("apikey".into(), "iam-key".into())]
    );
    assert_eq!(
        texts(map("maps/arbitrary/plain").await.unwrap()),
        [("arbitrary".into(), "p".into())]
    );
    assert_eq!(
        texts(map("maps/kv/settings").await.unwrap()),
        [
            ("db".into(), r#"{"host":"h"}"#.into()),
            ("user".into(), "u".into())
        ]
    );
    let mut fetch = RemoteRef::new("maps/arbitrary/plain");
    fetch.metadata_policy = MetadataPolicy::Fetch;
    let with_metadata: std::collections::BTreeMap<_, _> =
        texts(c.get_secret_map(&fetch).await.unwrap())
            .into_iter()
            .collect();
    assert_eq!(with_metadata["arbitrary"], "p");
    assert_eq!(with_metadata["name"], "plain");
    assert_eq!(with_metadata["secret_type"], "arbitrary");
    assert_eq!(with_metadata["versions_total"], "1");
    assert_eq!(with_metadata["secret_group_id"], "group-maps");
}

#[tokio::test]
async fn the_store_is_read_only_and_offers_no_find_but_says_what_exists() {
    let fake = fake();
    let c = client(&fake, API_KEY, |_| {}).await;
    let error = c.get_all_secrets(&Find::by_name(".*")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    let error = c.delete_secret(&PushRemoteRef::new("x")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    // Whether a secret exists is answered (upstream: not implemented), as the suite expects.
    fake.put_secret("ro", "kv", "there", json!({"data": {}}));
    assert!(
        c.secret_exists(&PushRemoteRef::new("ro/kv/there"))
            .await
            .unwrap()
    );
    assert!(
        !c.secret_exists(&PushRemoteRef::new("ro/kv/absent"))
            .await
            .unwrap()
    );
}
