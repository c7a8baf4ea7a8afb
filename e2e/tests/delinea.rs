//! The delinea provider end to end: the controller binary, run as a local process against the
//! cluster with `SSL_CERT_FILE` naming the CA of the DevOps Secrets Vault contract fake
//! (`contract-fakes::delinea`, on 127.0.0.1 in this test process; the store has no CA field,
//! as upstream), exchanges client credentials (the client secret from a Secret) for a token and
//! syncs an ExternalSecret: a property, the whole secret as JSON, and `dataFrom.extract`; it
//! follows a changed secret. The backend is read-only, as upstream, so the store reports
//! `ReadOnly` and there is no PushSecret to run.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use contract_fakes::delinea::DelineaFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, fake_ca_file, install_crds, unique_name,
    wait_for_secret_data, wait_for_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const CLIENT_ID: &str = "e2e-client";
const CLIENT_SECRET: &str = "e2e-client-secret";

/// The client-secret Secret and a store on the fake (tenant `127.0.0` and TLD `1:PORT` make
/// the fake's host in the SDK's default URL shape).
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &DelineaFake,
) -> anyhow::Result<()> {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "dsv"},
        "stringData": {"clientSecret": CLIENT_SECRET},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &secret)
        .await?;
    let port = fake.server.url.rsplit(':').next().unwrap_or_default();
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "dsv"},
        "spec": {"controller": class, "provider": {"delinea": {
            "tenant": "127.0.0",
            "tld": format!("1:{port}"),
            "urlTemplate": "https://%s.%s/v1/%s%s",
            "clientId": {"value": CLIENT_ID},
            "clientSecret": {"secretRef": {"name": "dsv", "key": "clientSecret"}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_devops_secrets_vault() -> anyhow::Result<()> {
    let fake = DelineaFake::start(CLIENT_ID, CLIENT_SECRET).await?;
    fake.set_secret("apps/db", json!({"user": "admin", "password": "first"}));
    let ca = fake_ca_file("delinea-e2e-ca", &fake.server.ca_pem)?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "delinea").await?;
    let class = unique_name("e2e-delinea");
    let env = [("SSL_CERT_FILE", ca.as_str())];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;

    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    wait_for_store_ready(&stores, "dsv", "ReadOnly", WAIT, &controller).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "dsv", "kind": "SecretStore"},
            "target": {"name": "db-credentials"},
            "data": [
                {"secretKey": "login", "remoteRef": {"key": "apps/db", "property": "user"}},
                {"secretKey": "whole", "remoteRef": {"key": "apps:db"}},
            ],
            "dataFrom": [{"extract": {"key": "apps/db"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    fn expected<'a>(password: &'a str, whole: &'a str) -> [(&'a str, &'a str); 4] {
        [
            ("login", "admin"),
            ("whole", whole),
            ("user", "admin"),
            ("password", password),
        ]
    }
    let whole = |password: &str| format!(r#"{{"password":"{password}","user":"admin"}}"#);
    let first = whole("first");
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("first", &first),
        WAIT,
        "target Secret synced from DSV",
        &controller,
    )
    .await?;

    // A changed secret reaches the Secret at the next refresh.
    fake.set_secret("apps/db", json!({"user": "admin", "password": "second"}));
    let second = whole("second");
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("second", &second),
        WAIT,
        "target Secret follows DSV",
        &controller,
    )
    .await?;

    controller.stop().await?;
    namespace.delete().await
}
