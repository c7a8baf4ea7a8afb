//! How AWS errors reach controllers: throttling is a temporary `RateLimited`, refusals a
//! permanent `PermissionDenied` (also when it is the role that was refused), an unreachable
//! endpoint a temporary `Unavailable`; missing secrets are `NotFound` (see the service tests).

use external_secrets_providers::backends::aws::Endpoints;
use external_secrets_providers::request::PushRemoteRef;
use external_secrets_providers::{ErrorKind, ProviderError, SharedClient, StoreId};
use serde_json::json;

use super::stub::StubEndpoint;
use super::support::NAMESPACE;
use super::support::aws::{MotoServer, client, keys};
use super::{remote, with};

/// A client of `service` with static keys (and no role) at `endpoints`.
async fn client_at(service: &str, endpoints: Endpoints) -> Result<SharedClient, ProviderError> {
    let server = MotoServer::shared();
    let account = server.default_account().await;
    let spec = with(&account.provider(service), json!({"role": null}));
    let store = StoreId::secret_store(NAMESPACE, "errors");
    client(&spec, store, Some(NAMESPACE), keys(), endpoints).await
}

#[tokio::test]
async fn throttling_is_temporary_rate_limiting() {
    let stub = StubEndpoint::json_failing(400, "ThrottlingException", "Rate exceeded").await;
    for service in ["SecretsManager", "ParameterStore"] {
        let client = client_at(service, Endpoints::all(&stub.url)).await.unwrap();
        let error = client.get_secret(&remote("db")).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::RateLimited, "{service}: {error}");
        assert!(error.is_temporary());
        assert!(
            error
                .message()
                .contains("ThrottlingException: Rate exceeded")
        );
    }
}

#[tokio::test]
async fn access_denied_is_a_permanent_refusal() {
    let stub = StubEndpoint::json_failing(400, "AccessDeniedException", "not allowed").await;
    for service in ["SecretsManager", "ParameterStore"] {
        let client = client_at(service, Endpoints::all(&stub.url)).await.unwrap();
        let error = client
            .secret_exists(&PushRemoteRef::new("db"))
            .await
            .unwrap_err();
        assert_eq!(
            error.kind(),
            ErrorKind::PermissionDenied,
            "{service}: {error}"
        );
        assert!(!error.is_temporary());
    }
}

#[tokio::test]
async fn a_refused_role_fails_validation_and_every_call_alike() {
    let server = MotoServer::shared();
    let sts = StubEndpoint::sts_failing(403, "AccessDenied", "not authorized to assume").await;
    let account = server.account().await;
    let spec = account.provider("SecretsManager");
    let mut endpoints = server.endpoints();
    endpoints.sts = Some(sts.url.clone());
    let store = StoreId::secret_store(NAMESPACE, "refused");
    let client = client(&spec, store, Some(NAMESPACE), keys(), endpoints)
        .await
        .unwrap();
    let expected = format!(
        "cannot assume role {:?}: AccessDenied: not authorized to assume",
        account.role_arn
    );
    let error = client.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
    assert_eq!(error.message(), expected);
    let error = client.get_secret(&remote("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.is_temporary());
    assert!(error.message().ends_with(&expected), "{error}");
}

#[tokio::test]
async fn a_throttled_role_is_temporary() {
    let server = MotoServer::shared();
    let sts = StubEndpoint::sts_failing(400, "Throttling", "Rate exceeded").await;
    let account = server.account().await;
    let mut endpoints = server.endpoints();
    endpoints.sts = Some(sts.url.clone());
    let store = StoreId::secret_store(NAMESPACE, "throttled");
    let spec = account.provider("ParameterStore");
    let client = client(&spec, store, Some(NAMESPACE), keys(), endpoints)
        .await
        .unwrap();
    let error = client.validate().await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::RateLimited);
    assert!(error.is_temporary());
}

#[tokio::test]
async fn an_unreachable_endpoint_is_temporarily_unavailable() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let client = client_at("SecretsManager", Endpoints::all(closed))
        .await
        .unwrap();
    let error = client.get_secret(&remote("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
    assert!(error.is_temporary());
    assert!(
        error.message().starts_with(r#"cannot get secret "db": "#),
        "{error}"
    );
}
