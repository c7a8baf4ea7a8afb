//! The ibm provider end to end: the controller binary, run as a local process against the
//! cluster with `SSL_CERT_FILE` naming the CA of the IBM contract fake (`contract-fakes::ibm`:
//! IAM and Secrets Manager v2 on 127.0.0.1 in this test process; the provider has no CA field,
//! as upstream), exchanges an API key for IAM tokens and syncs an ExternalSecret from secrets of
//! several types (an arbitrary secret by name, a username/password property, a kv member by
//! path, an arbitrary secret by id, and `dataFrom.extract` of a kv secret); it follows a changed
//! secret. The backend is read-only, as upstream, so the store reports `ReadOnly` and there is
//! no PushSecret to run.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use contract_fakes::ibm::IbmFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, fake_ca_file, install_crds, unique_name,
    wait_for_secret_data, wait_for_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const API_KEY: &str = "ibm-e2e-api-key";

/// The API key Secret and a store on the fake (service and IAM endpoint).
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &IbmFake,
) -> anyhow::Result<()> {
    let key: Secret = serde_json::from_value(json!({
        "metadata": {"name": "ibm"},
        "stringData": {"apikey": API_KEY},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &key)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "ibm"},
        "spec": {"controller": class, "provider": {"ibm": {
            "serviceUrl": fake.server.url,
            "auth": {"secretRef": {
                "secretApiKeySecretRef": {"name": "ibm", "key": "apikey"},
                "iamEndpoint": fake.server.url,
            }},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_ibm_secrets_manager() -> anyhow::Result<()> {
    let fake = IbmFake::start(API_KEY).await?;
    fake.put_secret(
        "apps",
        "arbitrary",
        "db-password",
        json!({"payload": "first"}),
    );
    fake.put_secret(
        "apps",
        "username_password",
        "login",
        json!({"username": "admin", "password": "pw"}),
    );
    fake.put_secret(
        "apps",
        "kv",
        "config",
        json!({"data": {"db": {"host": "db.internal"}}}),
    );
    fake.put_secret(
        "apps",
        "kv",
        "flags",
        json!({"data": {"MODE": "blue", "REGION": "eu"}}),
    );
    let id = fake.put_secret(
        "default",
        "arbitrary",
        "by-id",
        json!({"payload": "via-id"}),
    );
    let ca = fake_ca_file("ibm-e2e-ca", &fake.server.ca_pem)?;

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "ibm").await?;
    let class = unique_name("e2e-ibm");
    let env = [("SSL_CERT_FILE", ca.as_str())];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;

    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    wait_for_store_ready(&stores, "ibm", "ReadOnly", WAIT, &controller).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "ibm", "kind": "SecretStore"},
            "target": {"name": "app-credentials"},
            "data": [
                {"secretKey": "password", "remoteRef": {"key": "apps/arbitrary/db-password"}},
                {"secretKey": "user", "remoteRef": {
                    "key": "apps/username_password/login", "property": "username"}},
                {"secretKey": "host", "remoteRef": {"key": "apps/kv/config", "property": "db.host"}},
                {"secretKey": "by-id", "remoteRef": {"key": id}},
            ],
            "dataFrom": [{"extract": {"key": "apps/kv/flags"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = |password: &'static str| {
        [
            ("password", password),
            ("user", "admin"),
            ("host", "db.internal"),
            ("by-id", "via-id"),
            ("MODE", "blue"),
            ("REGION", "eu"),
        ]
    };
    wait_for_secret_data(
        &secrets,
        "app-credentials",
        &expected("first"),
        WAIT,
        "target Secret synced from IBM Secrets Manager",
        &controller,
    )
    .await?;

    // A changed secret reaches the Secret at the next refresh.
    fake.put_secret(
        "apps",
        "arbitrary",
        "db-password",
        json!({"payload": "second"}),
    );
    wait_for_secret_data(
        &secrets,
        "app-credentials",
        &expected("second"),
        WAIT,
        "target Secret follows IBM Secrets Manager",
        &controller,
    )
    .await?;

    // Every Secrets Manager request carried an IAM token the fake issued for the API key.
    let requests = fake.server.requests();
    let reads: Vec<_> = requests
        .iter()
        .filter(|request| request.path.starts_with("/api/v2/"))
        .collect();
    anyhow::ensure!(!reads.is_empty());
    for request in reads {
        let token = contract_fakes::server::bearer(&request.headers).unwrap_or_default();
        anyhow::ensure!(
            token.starts_with("iam-access-token-"),
            "{} without an IAM token",
            request.path
        );
    }

    controller.stop().await?;
    namespace.delete().await
}
