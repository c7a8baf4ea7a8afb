//! The `ACRAccessToken` generator's work (`generate_acr_access_token`) against the registry
//! contract fake (`contract_fakes::azure_registry`, which also plays Entra ID and IMDS): every
//! auth method, refresh and scoped access tokens, and the registry's refusals.

use std::sync::Arc;

use contract_fakes::azure_identity::AppCredential;
use contract_fakes::azure_registry::RegistryFake;
use external_secrets_crds::generators::AcrAccessTokenSpec;
use external_secrets_providers::backends::azurekv::auth::WorkloadEnvironment;
use external_secrets_providers::backends::azurekv::{Endpoints, generate_acr_access_token};
use external_secrets_providers::credentials::{CredentialResolver, KubeSecretSource, SecretSource};
use external_secrets_providers::{ErrorKind, ProviderError, SecretMap, StoreId};
use serde_json::json;

use super::federated_token;
use crate::support::azurekv::{CLIENT_ID, CLIENT_SECRET, CREDENTIALS_SECRET, TENANT, credentials};
use crate::support::{NAMESPACE, cluster_with_service_account};

const ZERO_USER: &str = "00000000-0000-0000-0000-000000000000";

async fn start() -> RegistryFake {
    let fake = RegistryFake::start(TENANT)
        .await
        .expect("starting the registry fake");
    fake.directory.register_app(
        TENANT,
        CLIENT_ID,
        AppCredential::Secret(CLIENT_SECRET.to_owned()),
    );
    fake
}

/// The endpoints of `fake`: its IMDS, its authority as `AZURE_AUTHORITY_HOST`, its CA.
fn endpoints(fake: &RegistryFake, workload: WorkloadEnvironment) -> Endpoints {
    Endpoints {
        imds: fake.server.url.clone(),
        authority_host: Some(fake.server.url.clone()),
        extra_ca_pem: Some(fake.server.ca_pem.clone().into_bytes()),
        verify_challenge_resource: true,
        workload,
    }
}

fn acr_spec(fake: &RegistryFake, extra: serde_json::Value) -> AcrAccessTokenSpec {
    let mut spec = json!({"registry": fake.login_server()});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(spec).expect("a valid ACRAccessToken spec")
}

fn principal(scope: Option<&str>) -> serde_json::Value {
    let mut extra = json!({"tenantId": TENANT, "auth": {"servicePrincipal": {"secretRef": {
        "clientId": {"name": CREDENTIALS_SECRET, "key": "client-id"},
        "clientSecret": {"name": CREDENTIALS_SECRET, "key": "client-secret"},
    }}}});
    if let Some(scope) = scope {
        extra["scope"] = json!(scope);
    }
    extra
}

async fn generate(
    fake: &RegistryFake,
    spec: &AcrAccessTokenSpec,
    source: Arc<dyn SecretSource>,
    workload: WorkloadEnvironment,
) -> Result<SecretMap, ProviderError> {
    let resolver = CredentialResolver::new(
        source,
        StoreId::secret_store(NAMESPACE, "acr"),
        Some(NAMESPACE.to_owned()),
    );
    generate_acr_access_token(spec, resolver, endpoints(fake, workload)).await
}

fn text(data: &SecretMap, key: &str) -> String {
    String::from_utf8(data[key].expose().to_vec()).unwrap()
}

#[tokio::test]
async fn service_principal_gets_a_refresh_token_and_with_scope_an_access_token() {
    let fake = start().await;
    let source: Arc<dyn SecretSource> = Arc::new(credentials(CLIENT_SECRET));
    let refresh = generate(
        &fake,
        &acr_spec(&fake, principal(None)),
        source.clone(),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap();
    assert_eq!(refresh.len(), 2);
    assert_eq!(text(&refresh, "username"), ZERO_USER);
    assert!(fake.is_refresh_token(&text(&refresh, "password")));

    let scope = "repository:team/app:pull,push";
    let access = generate(
        &fake,
        &acr_spec(&fake, principal(Some(scope))),
        source,
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap();
    let password = text(&access, "password");
    assert!(!fake.is_refresh_token(&password));
    assert_eq!(fake.access_scope(&password).as_deref(), Some(scope));
    let paths: Vec<String> = fake
        .server
        .requests()
        .into_iter()
        .map(|request| request.path)
        .collect();
    let token_path = format!("/{TENANT}/oauth2/v2.0/token");
    assert_eq!(
        paths,
        [
            token_path.as_str(),
            "/oauth2/exchange",
            token_path.as_str(),
            "/oauth2/exchange",
            "/oauth2/token"
        ]
    );
}

#[tokio::test]
async fn a_wrong_secret_never_reaches_the_registry() {
    let fake = start().await;
    let error = generate(
        &fake,
        &acr_spec(&fake, principal(None)),
        Arc::new(credentials("wrong")),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(!error.message().contains("wrong"));
    let exchanges = fake.server.requests().into_iter();
    assert_eq!(
        exchanges
            .filter(|request| request.path.starts_with("/oauth2/"))
            .count(),
        0
    );
}

#[tokio::test]
async fn the_registry_refuses_another_tenant_with_upstreams_message() {
    let fake = start().await;
    fake.directory.register_app(
        "other-tenant",
        CLIENT_ID,
        AppCredential::Secret(CLIENT_SECRET.to_owned()),
    );
    let mut extra = principal(None);
    extra["tenantId"] = json!("other-tenant");
    let error = generate(
        &fake,
        &acr_spec(&fake, extra),
        Arc::new(credentials(CLIENT_SECRET)),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.message(),
        "count not generate refresh token, unexpected status code 401, expected 200"
    );
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
}

#[tokio::test]
async fn managed_identity_by_client_id_and_by_resource_id() {
    let fake = start().await;
    let resource_id = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/acr";
    fake.directory.assign_managed_identity("system");
    fake.directory.assign_managed_identity("user-client");
    fake.directory.assign_managed_identity(resource_id);
    let source: Arc<dyn SecretSource> = Arc::new(credentials(CLIENT_SECRET));
    for identity in [None, Some("user-client"), Some(resource_id)] {
        let auth = match identity {
            Some(id) => json!({"managedIdentity": {"identityId": id}}),
            None => json!({"managedIdentity": {}}),
        };
        let spec = acr_spec(&fake, json!({"auth": auth}));
        let data = generate(&fake, &spec, source.clone(), WorkloadEnvironment::default())
            .await
            .unwrap();
        assert!(fake.is_refresh_token(&text(&data, "password")));
    }
    let queries: Vec<String> = fake
        .server
        .requests()
        .into_iter()
        .filter(|request| request.path == "/metadata/identity/oauth2/token")
        .filter_map(|request| request.query)
        .collect();
    assert_eq!(queries.len(), 3);
    assert!(queries[0].contains("resource=https%3A%2F%2Fmanagement.azure.com"));
    assert!(!queries[0].contains("client_id") && !queries[0].contains("msi_res_id"));
    assert!(queries[1].contains("client_id=user-client"));
    assert!(queries[2].contains("msi_res_id=%2Fsubscriptions%2F"));
    assert!(!queries[2].contains("client_id"));

    let unknown = acr_spec(
        &fake,
        json!({"auth": {"managedIdentity": {"identityId": "nobody"}}}),
    );
    let error = generate(&fake, &unknown, source, WorkloadEnvironment::default())
        .await
        .unwrap_err();
    assert!(error.message().contains("Identity not found"), "{error}");
}

#[tokio::test]
async fn workload_identity_from_a_service_account_of_the_callers_namespace() {
    let fake = start().await;
    let subject = format!("system:serviceaccount:{NAMESPACE}:acr-wi");
    fake.directory
        .register_app(TENANT, "acr-app", AppCredential::Federated { subject });
    let (_loopback, admin) = cluster_with_service_account(
        "acr-wi",
        &[
            ("azure.workload.identity/client-id", "acr-app"),
            ("azure.workload.identity/tenant-id", TENANT),
        ],
    )
    .await;
    let spec = acr_spec(
        &fake,
        json!({"tenantId": TENANT, "auth": {"workloadIdentity": {"serviceAccountRef": {"name": "acr-wi"}}}}),
    );
    let source: Arc<dyn SecretSource> = Arc::new(KubeSecretSource::new(admin));
    let data = generate(&fake, &spec, source, WorkloadEnvironment::default())
        .await
        .unwrap();
    assert!(fake.is_refresh_token(&text(&data, "password")));

    let (_other, admin) = cluster_with_service_account(
        "acr-wi",
        &[("azure.workload.identity/client-id", "acr-app")],
    )
    .await;
    let error = generate(
        &fake,
        &spec,
        Arc::new(KubeSecretSource::new(admin)),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.message(),
        "service account is missing annotation: azure.workload.identity/tenant-id"
    );
}

#[tokio::test]
async fn workload_identity_from_the_webhooks_environment() {
    let fake = start().await;
    let subject = "system:serviceaccount:eso:controller";
    fake.directory.register_app(
        TENANT,
        "env-app",
        AppCredential::Federated {
            subject: subject.to_owned(),
        },
    );
    let file = std::env::temp_dir().join(format!("acr-token-{}", std::process::id()));
    std::fs::write(&file, federated_token(subject)).unwrap();
    let spec = acr_spec(&fake, json!({"auth": {"workloadIdentity": {}}}));
    let environment = WorkloadEnvironment {
        client_id: Some("env-app".to_owned()),
        tenant_id: Some(TENANT.to_owned()),
        token_file: Some(file.clone()),
    };
    let source: Arc<dyn SecretSource> = Arc::new(credentials(CLIENT_SECRET));
    let data = generate(&fake, &spec, source, environment).await.unwrap();
    assert!(fake.is_refresh_token(&text(&data, "password")));
    std::fs::remove_file(file).unwrap();
}
