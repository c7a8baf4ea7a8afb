//! The secretserver provider end to end: the controller binary, run as a local process against
//! the cluster, logs in with a password grant (user inline, password from a Secret, a domain) at
//! the Secret Server contract fake (`contract-fakes::secretserver`, on 127.0.0.1 in this test
//! process, trusted through the store's `caBundle`), syncs an ExternalSecret (a field by secret
//! name, a field by secret path, the first field's JSON members through `dataFrom.extract`),
//! follows a changed field, and pushes a PushSecret's value into a new secret (folder and
//! template from PushSecret metadata) that is deleted again with the PushSecret.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use base64::Engine as _;
use contract_fakes::secretserver::{Accounts, PASSWORD_TEMPLATE, SecretServerFake};
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_secret_data, wait_for_store_ready, wait_for_store_released,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const USERNAME: &str = "e2e-user";
const PASSWORD: &str = "e2e-password";
const FOLDER: i64 = 5;

/// The password Secret and a store on the fake.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    fake: &SecretServerFake,
) -> anyhow::Result<()> {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "tss"},
        "stringData": {"password": PASSWORD},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &secret)
        .await?;
    let ca = base64::engine::general_purpose::STANDARD.encode(&fake.server.ca_pem);
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "tss"},
        "spec": {"controller": class, "provider": {"secretserver": {
            "serverURL": fake.server.url,
            "username": {"value": USERNAME},
            "password": {"secretRef": {"name": "tss", "key": "password"}},
            "domain": "corp",
            "caBundle": ca,
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_secret_server_and_push_secrets_write_to_it()
-> anyhow::Result<()> {
    let fake = SecretServerFake::start(Accounts {
        username: USERNAME.into(),
        password: PASSWORD.into(),
        domain: "corp".into(),
        ..Accounts::default()
    })
    .await?;
    fake.add_folder(FOLDER, "/e2e");
    let values: [(&str, &[u8]); 2] = [("username", b"admin"), ("password", b"first")];
    let db = fake.add_secret(FOLDER, "db", PASSWORD_TEMPLATE, &values);
    let config: [(&str, &[u8]); 1] = [("username", br#"{"host":"db.internal","port":5432}"#)];
    fake.add_secret(FOLDER, "config", PASSWORD_TEMPLATE, &config);

    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "secretserver").await?;
    let class = unique_name("e2e-secretserver");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &fake).await?;
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    wait_for_store_ready(&stores, "tss", "ReadWrite", WAIT, &controller).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "tss", "kind": "SecretStore"},
            "target": {"name": "db-credentials"},
            "data": [
                {"secretKey": "login", "remoteRef": {"key": "db", "property": "username"}},
                {"secretKey": "password", "remoteRef": {"key": "/e2e/db", "property": "password"}},
            ],
            "dataFrom": [{"extract": {"key": "config"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected = |password| {
        [
            ("login", "admin"),
            ("password", password),
            ("host", "db.internal"),
            ("port", "5432"),
        ]
    };
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("first"),
        WAIT,
        "target Secret synced from Secret Server",
        &controller,
    )
    .await?;

    // A changed field reaches the Secret at the next refresh.
    fake.set_value(db, "password", b"second");
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("second"),
        WAIT,
        "target Secret follows Secret Server",
        &controller,
    )
    .await?;

    // A PushSecret creates a secret in the folder its metadata names, and deletes it again.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "tss",
        json!({"token": "pushed-value"}),
        json!([{
            "match": {
                "secretKey": "token",
                "remoteRef": {"remoteKey": "pushed-token", "property": "password"},
            },
            "metadata": {
                "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
                "kind": "PushSecretMetadata",
                "spec": {"folderId": FOLDER, "secretTemplateId": PASSWORD_TEMPLATE},
            },
        }]),
    )
    .await?;
    let pushed = eventually(WAIT, "value pushed to Secret Server", || async {
        Ok(fake.value(FOLDER, "pushed-token", "password"))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(pushed, b"pushed-value");
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed secret deleted from Secret Server", || async {
        Ok(fake
            .value(FOLDER, "pushed-token", "password")
            .is_none()
            .then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    wait_for_store_released(&stores, "tss", &controller).await?;

    controller.stop().await?;
    namespace.delete().await
}
