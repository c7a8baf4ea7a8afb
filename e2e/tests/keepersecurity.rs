//! The keepersecurity provider end to end: the controller binary, run as a local process against
//! the cluster with `SSL_CERT_FILE` naming the CA of the Keeper Secrets Manager contract fake
//! (`contract-fakes::keeper`, on 127.0.0.1 in this test process, named by the configuration's
//! `hostname`), syncs an ExternalSecret (a field by record uid, a custom field by title, a
//! record's fields by `dataFrom.extract`) and pushes a PushSecret's value into a new
//! `externalSecrets` record of the store's folder, deleted again with the PushSecret.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use contract_fakes::keeper::KeeperFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
const FOLDER: &str = "e2e-folder";

/// The configuration Secret and a store pushing into [`FOLDER`].
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    config: &str,
) -> anyhow::Result<()> {
    let auth: Secret = serde_json::from_value(json!({
        "metadata": {"name": "keeper-config"},
        "stringData": {"config": config},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &auth)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "keeper"},
        "spec": {"controller": class, "provider": {"keepersecurity": {
            "authRef": {"name": "keeper-config", "key": "config"},
            "folderID": FOLDER,
            "getByTitleFallback": true,
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

/// The `externalSecrets` record titled `title`, if the fake holds one.
fn pushed(fake: &KeeperFake, title: &str) -> Option<Value> {
    fake.records_titled(title)
        .into_iter()
        .map(|(_, data)| data)
        .find(|data| data["type"] == "externalSecrets")
}

#[tokio::test]
async fn external_secrets_sync_from_keeper_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let fake = KeeperFake::start().await?;
    let config = fake.add_application(FOLDER);
    let db = fake.add_record(
        FOLDER,
        json!({
            "type": "login", "title": "app-db",
            "fields": [
                {"type": "login", "value": ["admin"]},
                {"type": "password", "value": ["hunter2"]},
            ],
            "custom": [{"type": "text", "label": "region", "value": ["eu"]}],
        }),
    );
    fake.add_file(&db, "ca.pem", b"PEM");
    let ca = std::env::temp_dir().join(format!("{}.pem", unique_name("keeper-e2e-ca")));
    std::fs::write(&ca, &fake.server.ca_pem)?;
    let ca = ca.to_string_lossy().into_owned();
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "keeper").await?;
    let class = unique_name("e2e-keeper");
    let env = [("SSL_CERT_FILE", ca.as_str())];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    create_store(&cluster, &namespace.name, &class, &config).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "app-db"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "keeper", "kind": "SecretStore"},
            "target": {"name": "app-db"},
            "data": [
                {"secretKey": "pass", "remoteRef": {"key": db, "property": "password"}},
                {"secretKey": "where", "remoteRef": {"key": "app-db", "property": "region"}},
            ],
            "dataFrom": [{"extract": {"key": db}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = [
        ("pass", "hunter2"),
        ("where", "eu"),
        ("login", "admin"),
        ("password", "hunter2"),
        ("region", "eu"),
        ("ca.pem", "PEM"),
    ];
    wait_for_secret_data(
        &secrets,
        "app-db",
        &expected,
        WAIT,
        "target Secret synced from Keeper",
        &controller,
    )
    .await?;

    // A PushSecret creates an externalSecrets record in the folder, deleted with it.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "keeper",
        json!({"token": "pushed-value"}),
        json!([{"match": {"secretKey": "token", "remoteRef": {"remoteKey": "pushed/token"}}}]),
    )
    .await?;
    eventually(WAIT, "value pushed to Keeper", || async {
        let value = pushed(&fake, "pushed").map(|data| data["custom"][0]["value"].clone());
        Ok((value == Some(json!(["pushed-value"]))).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed record deleted from Keeper", || async {
        Ok(pushed(&fake, "pushed").is_none().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
