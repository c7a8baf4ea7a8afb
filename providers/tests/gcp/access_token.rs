//! One-off access tokens for the `GCRAccessToken` generator (`generate_access_token`): from a
//! service-account key through the Google token endpoint fake, and through GKE workload
//! identity (the loopback API server's TokenRequest and the Secure Token / IAM Credentials
//! fake); the keys and expiry upstream's generator returns.

use std::sync::Arc;

use contract_fakes::google::{TOKEN_LIFETIME_SECONDS, WorkloadIdentityEndpoints};
use external_secrets_crds::v1::GcpsmAuth;
use external_secrets_providers::backends::gcpsm::{REGISTRY_USERNAME, generate_access_token};
use external_secrets_providers::credentials::{
    CredentialResolver, KubeSecretSource, MemorySecretSource, SecretSource,
};
use external_secrets_providers::{ErrorKind, SecretMap, StoreId};
use serde_json::json;

use super::support::gcp::{KEY_ITEM, KEY_SECRET, endpoints, key_file, token_endpoint};
use super::support::{NAMESPACE, cluster_with_service_account};

fn resolver(source: Arc<dyn SecretSource>) -> CredentialResolver {
    let store = StoreId::secret_store(NAMESPACE, "gcr");
    CredentialResolver::new(source, store, Some(NAMESPACE.into()))
}

fn field(data: &SecretMap, key: &str) -> String {
    String::from_utf8(data[key].expose().to_vec()).unwrap()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn a_key_yields_a_registry_login_with_its_expiry() {
    let tokens = token_endpoint().await;
    let key = key_file(&tokens.token_uri());
    let source =
        MemorySecretSource::default().with_secret(NAMESPACE, KEY_SECRET, &[], &[(KEY_ITEM, &key)]);
    let auth: GcpsmAuth = serde_json::from_value(json!({"secretRef": {
        "secretAccessKeySecretRef": {"name": KEY_SECRET, "key": KEY_ITEM}}}))
    .unwrap();
    let before = now();
    let data = generate_access_token(
        Some(auth.clone()),
        "registry-project",
        resolver(Arc::new(source)),
        &endpoints(&tokens.server.url, &tokens.server.url),
    )
    .await
    .unwrap();
    let after = now();
    assert_eq!(
        data.keys().map(String::as_str).collect::<Vec<_>>(),
        ["expiry", "password", "username"]
    );
    assert_eq!(field(&data, "username"), REGISTRY_USERNAME);
    assert_eq!(field(&data, "password"), "ya29.fake-1");
    let expiry: u64 = field(&data, "expiry").parse().unwrap();
    assert!(
        (before + TOKEN_LIFETIME_SECONDS..=after + TOKEN_LIFETIME_SECONDS).contains(&expiry),
        "expiry {expiry} is the token's end in Unix seconds"
    );
    assert_eq!(tokens.issued(), 1);

    // A missing key Secret is an error naming no value.
    let error = generate_access_token(
        Some(auth),
        "registry-project",
        resolver(Arc::new(MemorySecretSource::default())),
        &endpoints(&tokens.server.url, &tokens.server.url),
    )
    .await
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.message().starts_with("cannot get Kubernetes secret"));
    assert_eq!(tokens.issued(), 1);
}

#[tokio::test]
async fn workload_identity_yields_the_impersonated_token() {
    let google_account = "registry@cluster-project.iam.gserviceaccount.com";
    let annotation = ("iam.gke.io/gcp-service-account", google_account);
    let (loopback, admin) = cluster_with_service_account("puller", &[annotation]).await;
    let provider = "https://container.googleapis.com/v1/projects/cluster-project/locations/us-east1/clusters/c2";
    let fake =
        WorkloadIdentityEndpoints::start("cluster-project.svc.id.goog", provider, google_account)
            .await
            .unwrap();
    let auth: GcpsmAuth = serde_json::from_value(json!({"workloadIdentity": {
        "serviceAccountRef": {"name": "puller"},
        "clusterLocation": "us-east1",
        "clusterName": "c2",
        "clusterProjectID": "cluster-project",
    }}))
    .unwrap();
    let data = generate_access_token(
        Some(auth),
        "registry-project",
        resolver(Arc::new(KubeSecretSource::new(admin))),
        &endpoints(&fake.server.url, &fake.server.url),
    )
    .await
    .unwrap();
    assert_eq!(field(&data, "username"), REGISTRY_USERNAME);
    assert_eq!(field(&data, "password"), "ya29.impersonated-1");
    // The fake's IAM Credentials answer expires at 2999-01-01T00:00:00Z.
    assert_eq!(field(&data, "expiry"), "32472144000");
    assert_eq!(fake.counts(), (1, 1));
    drop(loopback);
}
