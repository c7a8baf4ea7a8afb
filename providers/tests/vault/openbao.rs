//! The `openBao` provider against the same OpenBao server: reads, maps and finds through the
//! vault client, and upstream's refusals of what its read-only provider does not do.

use std::sync::Arc;

use external_secrets_crds::v1::{OpenBaoAuth, OpenBaoProvider, SecretStoreProvider};
use external_secrets_providers::request::{Find, FindName, PushRemoteRef, PushRequest, RemoteRef};
use external_secrets_providers::{Capabilities, ErrorKind, Registry, StoreRef, ValidationResult};
use k8s_openapi::ByteString;

use super::support::vault::{BaoServer, ROOT_TOKEN, TOKEN_SECRET, selector, token_source};
use super::support::{NAMESPACE, secret_store, unique_name};
use super::text;

#[tokio::test]
async fn an_open_bao_store_reads_and_refuses_writes_as_upstream() {
    let server = BaoServer::shared();
    let mount = server
        .seeded_mount(&[("app/db", r#"{"user":"admin","password":"s3cret"}"#)])
        .await;
    let spec = OpenBaoProvider {
        server: server.url().to_owned(),
        path: Some(mount),
        ca_bundle: Some(ByteString(server.ca_pem().as_bytes().to_vec())),
        auth: Some(OpenBaoAuth {
            token_secret_ref: Some(selector(TOKEN_SECRET, "token")),
            ..OpenBaoAuth::default()
        }),
        ..OpenBaoProvider::default()
    };
    let store = secret_store(
        &unique_name("openbao"),
        SecretStoreProvider {
            open_bao: Some(Box::new(spec)),
            ..SecretStoreProvider::default()
        },
    );
    let registry = Registry::new(Arc::new(token_source(ROOT_TOKEN)));
    registry.validate_store(&StoreRef::from(&store)).unwrap();
    let client = registry
        .new_client(&StoreRef::from(&store), Some(NAMESPACE))
        .await
        .unwrap();
    assert_eq!(client.capabilities(), Capabilities::ReadOnly);
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);

    let mut property = RemoteRef::new("app/db");
    property.property = Some("password".into());
    assert_eq!(text(client.get_secret(&property).await.unwrap()), "s3cret");
    let map = client
        .get_secret_map(&RemoteRef::new("app/db"))
        .await
        .unwrap();
    assert_eq!(map.keys().collect::<Vec<_>>(), ["password", "user"]);
    let by_name = Find {
        name: Some(FindName {
            regexp: "^app/".into(),
        }),
        ..Find::default()
    };
    let found = client.get_all_secrets(&by_name).await.unwrap();
    // Keys as the vault provider names found secrets: `/` becomes `_`.
    assert_eq!(found.keys().collect::<Vec<_>>(), ["app_db"]);

    let by_tags = Find {
        tags: [("team".to_owned(), "a".to_owned())].into(),
        ..Find::default()
    };
    let error = client.get_all_secrets(&by_tags).await.unwrap_err();
    assert_eq!(error.message(), "tag based search is not implemented");
    let push = PushRequest::default();
    let error = client.push_secret(&push).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert_eq!(
        error.message(),
        "push secret is not supported (the OpenBao provider is currently read only)"
    );
    let error = client
        .delete_secret(&PushRemoteRef::default())
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "delete secret is not supported (the OpenBao provider is currently read only)"
    );
    client.close().await.unwrap();
}
