//! azurekv beyond the behaviour suite, against the Key Vault contract fake: every auth method
//! (service principal with secret and certificate, managed identity with and without an
//! identity id, workload identity from a TokenRequest and from the webhook's token file), the
//! challenge, token caching, object types, versions, tags, paging, disabled secrets, and pushes
//! with ownership and metadata; the ACRAccessToken generator's exchange in `azure/acr.rs`.

#![cfg(feature = "azurekv")]

mod support;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use contract_fakes::azure_identity::AppCredential;
use contract_fakes::azure_keyvault::{KeyVaultFake, Kind};
use external_secrets_providers::StoreId;
use external_secrets_providers::backends::azurekv::AzureKvClient;
use external_secrets_providers::backends::azurekv::auth::WorkloadEnvironment;
use external_secrets_providers::credentials::{
    CredentialResolver, KubeSecretSource, MemorySecretSource, OperatorIdentity,
};
use external_secrets_providers::request::{
    Find, FindName, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef,
};
use external_secrets_providers::{ErrorKind, SecretValue, SharedClient};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;

use support::azurekv::{
    CLIENT_SECRET, CREDENTIALS_SECRET, TENANT, client_secret_auth, connect, credentials, endpoints,
    spec, start_fake,
};
use support::{NAMESPACE, cluster_with_service_account};

const CERT_BUNDLE: &str = include_str!("data/azure-sp-cert.pem");

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

async fn secret_client(fake: &KeyVaultFake) -> SharedClient {
    let spec = spec(fake, client_secret_auth());
    connect(
        fake,
        &spec,
        Arc::new(credentials(CLIENT_SECRET)),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap()
}

async fn reads_seeded_secret(fake: &KeyVaultFake, client: &SharedClient) {
    fake.put_secret("probe", "value", &[], true);
    let value = client.get_secret(&RemoteRef::new("probe")).await.unwrap();
    assert_eq!(text(value), "value");
}

#[tokio::test]
async fn client_secret_is_sent_and_checked() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    reads_seeded_secret(&fake, &client).await;
    let first = fake.server.requests();
    // Challenge first (no token), then the token endpoint, then the authorised read.
    assert!(first[0].headers.get("authorization").is_none());
    assert_eq!(first[1].path, format!("/{TENANT}/oauth2/v2.0/token"));
    assert!(
        first[2]
            .query
            .as_deref()
            .unwrap()
            .contains("api-version=7.4")
    );

    let spec = spec(&fake, client_secret_auth());
    let wrong = connect(
        &fake,
        &spec,
        Arc::new(credentials("wrong")),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap();
    let error = wrong
        .get_secret(&RemoteRef::new("probe"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::PermissionDenied);
    assert!(error.message().contains("AADSTS7000215"), "{error}");
    assert!(!error.message().contains("wrong"));
}

#[tokio::test]
async fn tokens_are_cached_per_client() {
    let fake = start_fake().await;
    let client = secret_client(&fake).await;
    for _ in 0..3 {
        reads_seeded_secret(&fake, &client).await;
    }
    assert_eq!(fake.directory.issued(), 1);
}

#[tokio::test]
async fn client_certificate_signs_an_assertion() {
    let fake = start_fake().await;
    let der = CertificateDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap();
    let PrivateKeyDer::Pkcs8(key) = PrivateKeyDer::from_pem_slice(CERT_BUNDLE.as_bytes()).unwrap()
    else {
        panic!("the test key is PKCS#8");
    };
    let pair = ring::signature::RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()).unwrap();
    use ring::signature::KeyPair as _;
    fake.directory.register_app(
        TENANT,
        "cert-app",
        AppCredential::Certificate {
            der: der.to_vec(),
            public_key: pair.public_key().as_ref().to_vec(),
        },
    );
    let source = MemorySecretSource::default().with_secret(
        NAMESPACE,
        CREDENTIALS_SECRET,
        &[],
        &[("client-id", "cert-app"), ("cert", CERT_BUNDLE)],
    );
    let spec = spec(
        &fake,
        json!({
            "tenantId": TENANT,
            "authSecretRef": {
                "clientId": {"name": CREDENTIALS_SECRET, "key": "client-id"},
                "clientCertificate": {"name": CREDENTIALS_SECRET, "key": "cert"},
            }
        }),
    );
    let client = connect(
        &fake,
        &spec,
        Arc::new(source),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap();
    reads_seeded_secret(&fake, &client).await;
}

#[tokio::test]
async fn service_principal_configuration_errors_are_upstreams() {
    let fake = start_fake().await;
    let both = spec(
        &fake,
        json!({
            "tenantId": TENANT,
            "authSecretRef": {
                "clientId": {"name": CREDENTIALS_SECRET, "key": "client-id"},
                "clientSecret": {"name": CREDENTIALS_SECRET, "key": "client-secret"},
                "clientCertificate": {"name": CREDENTIALS_SECRET, "key": "cert"},
            }
        }),
    );
    let source = Arc::new(credentials(CLIENT_SECRET));
    let error = connect(&fake, &both, source.clone(), WorkloadEnvironment::default())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error.message(),
        "both clientSecret and clientCredentials set"
    );
    let no_tenant = spec(&fake, json!({"authSecretRef": {}}));
    let error = connect(&fake, &no_tenant, source, WorkloadEnvironment::default())
        .await
        .err()
        .unwrap();
    assert_eq!(error.message(), "missing tenantID in store config");
}

#[tokio::test]
async fn managed_identity_asks_imds_with_the_identity_id() {
    let fake = start_fake().await;
    fake.directory.assign_managed_identity("system-assigned");
    fake.directory.assign_managed_identity("user-assigned");
    let source = Arc::new(MemorySecretSource::default());
    for identity in [None, Some("user-assigned")] {
        let mut extra = json!({"authType": "ManagedIdentity"});
        if let Some(identity) = identity {
            extra["identityId"] = json!(identity);
        }
        let spec = spec(&fake, extra);
        let client = connect(&fake, &spec, source.clone(), WorkloadEnvironment::default())
            .await
            .unwrap();
        reads_seeded_secret(&fake, &client).await;
    }
    let imds: Vec<_> = fake
        .server
        .requests()
        .into_iter()
        .filter(|request| request.path == "/metadata/identity/oauth2/token")
        .collect();
    assert_eq!(imds.len(), 2);
    assert_eq!(imds[0].headers["metadata"], "true");
    assert!(!imds[0].query.as_deref().unwrap().contains("client_id"));
    assert!(
        imds[1]
            .query
            .as_deref()
            .unwrap()
            .contains("client_id=user-assigned")
    );

    let unknown = spec(
        &fake,
        json!({"authType": "ManagedIdentity", "identityId": "nobody"}),
    );
    let client = connect(&fake, &unknown, source, WorkloadEnvironment::default())
        .await
        .unwrap();
    let error = client
        .get_secret(&RemoteRef::new("probe"))
        .await
        .unwrap_err();
    assert!(error.message().contains("Identity not found"), "{error}");
}

#[tokio::test]
async fn secret_stores_may_be_denied_the_pods_own_identity() {
    let fake = start_fake().await;
    for (auth_type, method) in [
        ("ManagedIdentity", "managed identity"),
        ("WorkloadIdentity", "workload identity"),
    ] {
        let spec = spec(&fake, json!({"authType": auth_type}));
        let denied = CredentialResolver::new(
            Arc::new(MemorySecretSource::default()),
            StoreId::secret_store(NAMESPACE, "azurekv"),
            Some(NAMESPACE.to_owned()),
        )
        .with_operator_identity(OperatorIdentity::DeniedToSecretStores);
        let error = AzureKvClient::connect(
            &spec,
            denied,
            endpoints(&fake, WorkloadEnvironment::default()),
        )
        .await
        .err()
        .unwrap();
        assert!(
            error
                .message()
                .starts_with(&format!("{method}: a SecretStore may not")),
            "{error}"
        );
    }
}

fn federated_token(subject: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256"}"#);
    let claims =
        json!({"sub": subject, "aud": ["api://AzureADTokenExchange"], "exp": 4_000_000_000u64});
    format!(
        "{header}.{}.c2ln",
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

#[tokio::test]
async fn workload_identity_from_the_webhooks_token_file() {
    let fake = start_fake().await;
    let subject = "system:serviceaccount:eso:controller";
    fake.directory.register_app(
        TENANT,
        "wi-app",
        AppCredential::Federated {
            subject: subject.to_owned(),
        },
    );
    let file = std::env::temp_dir().join(format!("azure-token-{}", std::process::id()));
    std::fs::write(&file, federated_token(subject)).unwrap();
    let spec = spec(&fake, json!({"authType": "WorkloadIdentity"}));
    let source = Arc::new(MemorySecretSource::default());
    let missing = connect(&fake, &spec, source.clone(), WorkloadEnvironment::default())
        .await
        .err()
        .unwrap();
    assert!(
        missing
            .message()
            .starts_with("missing environment variables")
    );
    let environment = WorkloadEnvironment {
        client_id: Some("wi-app".to_owned()),
        tenant_id: Some(TENANT.to_owned()),
        token_file: Some(file.clone()),
    };
    let client = connect(&fake, &spec, source, environment).await.unwrap();
    reads_seeded_secret(&fake, &client).await;
    std::fs::remove_file(file).unwrap();
}

#[tokio::test]
async fn workload_identity_from_a_service_account_token_request() {
    let fake = start_fake().await;
    let subject = format!("system:serviceaccount:{NAMESPACE}:eso-wi");
    fake.directory
        .register_app(TENANT, "sa-app", AppCredential::Federated { subject });
    let (_loopback, admin) = cluster_with_service_account(
        "eso-wi",
        &[
            ("azure.workload.identity/client-id", "sa-app"),
            ("azure.workload.identity/tenant-id", TENANT),
        ],
    )
    .await;
    let spec = spec(
        &fake,
        json!({"authType": "WorkloadIdentity", "serviceAccountRef": {"name": "eso-wi"}}),
    );
    let client = connect(
        &fake,
        &spec,
        Arc::new(KubeSecretSource::new(admin.clone())),
        WorkloadEnvironment::default(),
    )
    .await
    .unwrap();
    reads_seeded_secret(&fake, &client).await;

    let (_other, admin) = cluster_with_service_account("eso-wi", &[]).await;
    let error = connect(
        &fake,
        &spec,
        Arc::new(KubeSecretSource::new(admin)),
        WorkloadEnvironment::default(),
    )
    .await
    .err()
    .unwrap();
    assert!(error.message().starts_with("missing clientID"), "{error}");
}

#[tokio::test]
async fn challenge_resource_is_checked_outside_tests() {
    let fake = start_fake().await;
    let spec = spec(&fake, client_secret_auth());
    let store = external_secrets_providers::StoreId::secret_store(NAMESPACE, "azurekv");
    let resolver = external_secrets_providers::credentials::CredentialResolver::new(
        Arc::new(credentials(CLIENT_SECRET)),
        store,
        Some(NAMESPACE.to_owned()),
    );
    let mut endpoints = crate::support::azurekv::endpoints(&fake, WorkloadEnvironment::default());
    endpoints.verify_challenge_resource = true;
    let client = external_secrets_providers::backends::azurekv::AzureKvClient::connect(
        &spec, resolver, endpoints,
    )
    .await
    .unwrap();
    use external_secrets_providers::SecretsClient as _;
    let error = client
        .get_secret(&RemoteRef::new("probe"))
        .await
        .unwrap_err();
    assert!(
        error
            .message()
            .contains("doesn't match the requested domain"),
        "{error}"
    );
    assert_eq!(fake.directory.issued(), 0);
}

#[path = "azure/objects.rs"]
mod objects;

#[path = "azure/acr.rs"]
mod acr;
