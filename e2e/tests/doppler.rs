//! The doppler provider end to end: the controller binary, run as a local process against the
//! cluster with `DOPPLER_BASE_URL` naming the Doppler contract fake (`contract-fakes::doppler`,
//! on 127.0.0.1 in this test process) and `SSL_CERT_FILE` its CA, syncs an ExternalSecret (one
//! secret, and a find through the `lower-kebab` name transformer), follows a changed value
//! while asking with the cached download's `ETag` (the `--doppler-etag-cache-size` default in
//! effect), and pushes a PushSecret's value into the config, removed again when the PushSecret
//! is deleted.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use contract_fakes::doppler::DopplerFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, fake_ca_file,
    install_crds, unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "dp.st.e2e-service-token";

/// The token Secret and a store downloading with the `lower-kebab` transformer.
async fn create_store(cluster: &TestCluster, namespace: &str, class: &str) -> anyhow::Result<()> {
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "doppler-token"},
        "stringData": {"dopplerToken": TOKEN},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &token)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "doppler"},
        "spec": {"controller": class, "provider": {"doppler": {
            "auth": {"secretRef": {"dopplerToken": {"name": "doppler-token"}}},
            "nameTransformer": "lower-kebab",
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_doppler_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let fake = DopplerFake::start().await?;
    fake.add_service_token(TOKEN, "auth-api", "prd");
    fake.set_secret("auth-api", "prd", "DB_URL", "postgres://first");
    fake.set_secret("auth-api", "prd", "API_KEY", "key-1");
    fake.set_secret("auth-api", "prd", "OTHER", "not found by the find");
    let ca = fake_ca_file("doppler-e2e-ca", &fake.server.ca_pem)?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "doppler").await?;
    let class = unique_name("e2e-doppler");
    let env = [
        ("SSL_CERT_FILE", ca.as_str()),
        ("DOPPLER_BASE_URL", fake.server.url.as_str()),
    ];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    create_store(&cluster, &namespace.name, &class).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "auth-api"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "doppler", "kind": "SecretStore"},
            "target": {"name": "auth-api"},
            "data": [{"secretKey": "url", "remoteRef": {"key": "DB_URL"}}],
            "dataFrom": [{"find": {"name": {"regexp": "^(api|db)-"}}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = |url: &'static str| [("url", url), ("db-url", url), ("api-key", "key-1")];
    wait_for_secret_data(
        &secrets,
        "auth-api",
        &expected("postgres://first"),
        WAIT,
        "target Secret synced from Doppler",
        &controller,
    )
    .await?;

    // A changed value reaches the Secret at a later refresh; refreshes ask with the ETag of the
    // cached download.
    fake.set_secret("auth-api", "prd", "DB_URL", "postgres://second");
    wait_for_secret_data(
        &secrets,
        "auth-api",
        &expected("postgres://second"),
        WAIT,
        "target Secret follows Doppler",
        &controller,
    )
    .await?;
    let conditional = fake.server.requests().iter().any(|request| {
        request.path == "/v3/configs/config/secrets/download"
            && request.headers.contains_key("if-none-match")
    });
    anyhow::ensure!(conditional, "no download carried If-None-Match");

    // A PushSecret sets a secret of the config, and deletes it with the PushSecret.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "doppler",
        json!({"token": "pushed-value"}),
        json!([{"match": {"secretKey": "token", "remoteRef": {"remoteKey": "PUSHED_TOKEN"}}}]),
    )
    .await?;
    eventually(WAIT, "value pushed to Doppler", || async {
        let secrets = fake.secrets("auth-api", "prd");
        Ok((secrets.get("PUSHED_TOKEN").map(String::as_str) == Some("pushed-value")).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret deleted from Doppler", || async {
        let secrets = fake.secrets("auth-api", "prd");
        Ok((!secrets.contains_key("PUSHED_TOKEN")).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
