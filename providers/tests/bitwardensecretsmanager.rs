//! The `bitwardensecretsmanager` backend against the `bitwarden-sdk-server` contract fake:
//! access-token login with the API and identity URLs, secrets by UUID or by name within the
//! store's project, maps, find, PushSecret's create/skip/update rules and notes, delete, the CA
//! the server is trusted through, and error kinds.

#![cfg(feature = "bitwardensecretsmanager")]

mod support;

use std::sync::Arc;

use external_secrets_crds::v1::{CaProvider, CaProviderType, SecretStoreProvider};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::error::ErrorKind;
use external_secrets_providers::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::value::SecretValue;
use external_secrets_providers::{Registry, StoreRef};
use support::bitwardensecretsmanager::{Tenant, fake};
use support::{NAMESPACE, secret_store, unique_name};

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

fn push(key: &str, value: &str, metadata: Option<serde_json::Value>) -> PushRequest {
    PushRequest {
        metadata,
        ..PushRequest::single(
            [("source".to_owned(), SecretValue::from(value))].into(),
            "source",
            key,
        )
    }
}

#[tokio::test]
async fn the_access_token_and_urls_log_in_and_others_are_refused() {
    let tenant = Tenant::new("https://api.bitwarden.eu", "https://identity.bitwarden.eu");
    tenant.seed("db", "hunter2");
    let mut provider = tenant.provider();
    provider.api_url = Some("https://api.bitwarden.eu/".into());
    provider.identity_url = Some("https://identity.bitwarden.eu".into());
    let client = Tenant::client_of(provider.clone(), &tenant.token).await;
    let value = client.get_secret(&RemoteRef::new("db")).await.unwrap();
    assert_eq!(text(value), "hunter2");
    client.validate().await.unwrap();
    // This tenant's last request (other tests share the fake).
    let request = fake()
        .server
        .requests()
        .into_iter()
        .rfind(|request| {
            contract_fakes::server::header(&request.headers, "warden-access-token")
                == Some(tenant.token.as_str())
        })
        .unwrap();
    assert_eq!(request.path, "/rest/api/1/secrets");
    let header = |name: &str| contract_fakes::server::header(&request.headers, name).unwrap();
    assert_eq!(header("warden-access-token"), tenant.token);
    assert_eq!(header("warden-api-url"), "https://api.bitwarden.eu");

    // Bitwarden's cloud instead of the tenant's: the login fails.
    let cloud = Tenant::client_of(tenant.provider(), &tenant.token).await;
    let error = cloud.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    let wrong = Tenant::client_of(provider, "0.wrong.token:a2V5").await;
    let error = wrong.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("0.wrong.token"), "{error}");
}

#[tokio::test]
async fn keys_are_uuids_or_names_within_the_project() {
    let tenant = Tenant::new("", "");
    let id = tenant.seed("db", r#"{"user":"admin"}"#);
    // The same name in another project of the organization is not the store's.
    let other = support::bitwardensecretsmanager::unique_uuid();
    fake().add_project(&tenant.organization, &other);
    let elsewhere = fake().add_secret(&tenant.organization, &other, "db", "other", "");
    let client = tenant.client().await;
    let by_name = client.get_secret(&RemoteRef::new("db")).await.unwrap();
    assert_eq!(text(by_name), r#"{"user":"admin"}"#);
    let by_id = client
        .get_secret(&RemoteRef::new(&elsewhere))
        .await
        .unwrap();
    assert_eq!(text(by_id), "other");
    let property = RemoteRef::new(&id).with_property("user");
    assert_eq!(text(client.get_secret(&property).await.unwrap()), "admin");

    let missing = client
        .get_secret(&RemoteRef::new("absent"))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    assert_eq!(
        missing.message(),
        format!(
            "no secret found for project id {} and name absent",
            tenant.project
        )
    );
    let unknown = "d8f29773-3019-4973-9bbc-66327d077fe2";
    let missing = client
        .get_secret(&RemoteRef::new(unknown))
        .await
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    assert!(
        !client
            .secret_exists(&PushRemoteRef::new(unknown))
            .await
            .unwrap()
    );

    tenant.seed("db", "twin");
    let error = client.get_secret(&RemoteRef::new("db")).await.unwrap_err();
    assert!(
        error.message().contains(&format!(
            "more than one secret found for project {} with key db",
            tenant.project
        )),
        "{error}"
    );
}

#[tokio::test]
async fn values_read_as_maps_from_yaml_or_json() {
    let tenant = Tenant::new("", "");
    tenant.seed("yaml", "user: admin\nport: 5432\nnested:\n  k: v\n");
    tenant.seed("plain", "hunter2");
    let client = tenant.client().await;
    let map = client
        .get_secret_map(&RemoteRef::new("yaml"))
        .await
        .unwrap();
    let map: Vec<(String, String)> = map.into_iter().map(|(k, v)| (k, text(v))).collect();
    assert_eq!(
        map,
        [
            ("nested".to_owned(), "k: v".to_owned()),
            ("port".to_owned(), "5432".to_owned()),
            ("user".to_owned(), "admin".to_owned())
        ]
    );
    let error = client
        .get_secret_map(&RemoteRef::new("plain"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidData, "{error}");
    assert!(!error.message().contains("hunter2"), "{error}");
}

#[tokio::test]
async fn find_keys_secrets_by_id() {
    let tenant = Tenant::new("", "");
    let one = tenant.seed("db-one", "1");
    let two = tenant.seed("cache", "2");
    let client = tenant.client().await;
    let all = client.get_all_secrets(&Find::default()).await.unwrap();
    let all: Vec<(String, String)> = all.into_iter().map(|(k, v)| (k, text(v))).collect();
    assert_eq!(all, [(one, "1".to_owned()), (two, "2".to_owned())]);
    let tagged = Find {
        tags: [("team".to_owned(), "a".to_owned())].into(),
        ..Find::default()
    };
    let error = client.get_all_secrets(&tagged).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
}

#[tokio::test]
async fn pushes_skip_same_secrets_update_values_and_create_otherwise() {
    let tenant = Tenant::new("", "");
    let client = tenant.client().await;
    let note = serde_json::json!({"apiVersion": "kubernetes.external-secrets.io/v1alpha1",
        "kind": "PushSecretMetadata", "spec": {"note": "rotated monthly"}});
    client
        .push_secret(&push("api-key", "v1", Some(note.clone())))
        .await
        .unwrap();
    let created = fake().secrets_named(&tenant.organization, "api-key");
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].project, tenant.project);
    assert_eq!(created[0].note, "rotated monthly");
    client
        .push_secret(&push("api-key", "v1", Some(note.clone())))
        .await
        .unwrap();
    client
        .push_secret(&push("api-key", "v2", Some(note)))
        .await
        .unwrap();
    let updated = fake().secrets_named(&tenant.organization, "api-key");
    assert_eq!(updated.len(), 1, "{updated:?}");
    assert_eq!(
        (updated[0].id.as_str(), updated[0].value.as_str()),
        (created[0].id.as_str(), "v2")
    );
    // Another note is another secret (upstream never overwrites what may not be its own).
    client
        .push_secret(&push("api-key", "v3", None))
        .await
        .unwrap();
    assert_eq!(
        fake().secrets_named(&tenant.organization, "api-key").len(),
        2
    );
    let error = client.push_secret(&push("", "v", None)).await.unwrap_err();
    assert_eq!(error.message(), "remote key must be defined");
}

#[tokio::test]
async fn deletes_take_uuids_or_names() {
    let tenant = Tenant::new("", "");
    let id = tenant.seed("by-id", "v");
    tenant.seed("by-name", "v");
    let client = tenant.client().await;
    client
        .delete_secret(&PushRemoteRef::new(&id))
        .await
        .unwrap();
    client
        .delete_secret(&PushRemoteRef::new("by-name"))
        .await
        .unwrap();
    assert!(
        fake()
            .secrets_named(&tenant.organization, "by-id")
            .is_empty()
    );
    assert!(
        fake()
            .secrets_named(&tenant.organization, "by-name")
            .is_empty()
    );
    // A name already gone is nothing to delete; an id the server no longer knows is refused.
    client
        .delete_secret(&PushRemoteRef::new("by-name"))
        .await
        .unwrap();
    let error = client
        .delete_secret(&PushRemoteRef::new(&id))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .contains(&format!("error deleting secret with id {id}")),
        "{error}"
    );
}

#[tokio::test]
async fn the_server_is_trusted_through_ca_bundle_or_ca_provider_only() {
    let tenant = Tenant::new("", "");
    tenant.seed("db", "v");
    let source = MemorySecretSource::default()
        .with_secret(NAMESPACE, "bitwarden", &[], &[("token", &tenant.token)])
        .with_config_map(NAMESPACE, "sdk-ca", &[("ca.crt", &fake().server.ca_pem)]);
    let registry = Registry::new(Arc::new(source));
    let store = |provider| {
        secret_store(
            &unique_name("bitwarden"),
            SecretStoreProvider {
                bitwardensecretsmanager: Some(Box::new(provider)),
                ..SecretStoreProvider::default()
            },
        )
    };
    let mut from_config_map = tenant.provider();
    from_config_map.ca_bundle = None;
    from_config_map.ca_provider = Some(CaProvider {
        r#type: CaProviderType::ConfigMap,
        name: "sdk-ca".into(),
        key: Some("ca.crt".into()),
        namespace: None,
    });
    let client = registry
        .new_client(&StoreRef::from(&store(from_config_map)), Some(NAMESPACE))
        .await
        .unwrap();
    assert_eq!(
        text(client.get_secret(&RemoteRef::new("db")).await.unwrap()),
        "v"
    );

    // The system roots do not hold the fakes' CA.
    let mut system = tenant.provider();
    system.ca_bundle = None;
    let client = registry
        .new_client(&StoreRef::from(&store(system)), Some(NAMESPACE))
        .await
        .unwrap();
    let error = client.validate().await.unwrap_err();
    assert!(error.message().contains("tls handshake failed"), "{error}");

    let mut garbage = tenant.provider();
    garbage.ca_bundle = Some("not a certificate".into());
    let error = match registry
        .new_client(&StoreRef::from(&store(garbage)), Some(NAMESPACE))
        .await
    {
        Ok(_) => panic!("an unusable caBundle is refused"),
        Err(error) => error,
    };
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(
        error.message().ends_with("failed to append caBundle"),
        "{error}"
    );
}
