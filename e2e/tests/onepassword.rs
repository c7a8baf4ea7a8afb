//! The onepassword provider end to end: the controller binary, run as a local process against
//! the cluster with `SSL_CERT_FILE` naming the CA of the 1Password Connect contract fake
//! (`contract-fakes::onepassword`, on 127.0.0.1 in this test process), syncs an ExternalSecret
//! from two vaults searched by priority (a field, a file, and `dataFrom.extract`), follows a
//! changed field, and pushes a PushSecret's value into a new tagged item that is removed again
//! when the PushSecret is deleted.
//!
//! Cluster-agnostic: only the controller talks to the fake, and it runs on this machine.

use std::time::Duration;

use contract_fakes::onepassword::OnePasswordFake;
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, create_push_secret, eventually, install_crds,
    unique_name, wait_for_secret_data,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "e2e-connect-token";

/// The connect token Secret and a store over vaults `prod` (searched first) and `shared`.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    host: &str,
) -> anyhow::Result<()> {
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "connect"},
        "stringData": {"token": TOKEN},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &token)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "op"},
        "spec": {"controller": class, "provider": {"onepassword": {
            "connectHost": host,
            "vaults": {"prod": 1, "shared": 2},
            "auth": {"secretRef": {"connectTokenSecretRef": {"name": "connect", "key": "token"}}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

/// The pushed item of vault `prod`, if any.
fn pushed(fake: &OnePasswordFake) -> Option<Value> {
    fake.items("prod")
        .into_iter()
        .find(|item| item["title"] == "pushed")
}

#[tokio::test]
async fn external_secrets_sync_from_connect_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let fake = OnePasswordFake::start(TOKEN, &["prod", "shared"]).await?;
    fake.add_item(
        "shared",
        "db",
        "LOGIN",
        &[("password", "shadowed")],
        &[],
        &[],
    );
    let db = fake.add_item(
        "prod",
        "db",
        "LOGIN",
        &[("username", "admin"), ("password", "first")],
        &[("ca.pem", b"CA".as_slice())],
        &[],
    );
    let ca = tempfile_with(&fake.server.ca_pem)?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "onepassword").await?;
    let class = unique_name("e2e-onepassword");
    let env = [("SSL_CERT_FILE", ca.as_str())];
    let controller = ControllerProcess::start_with_env(&cluster, &class, &[], &env).await?;
    create_store(&cluster, &namespace.name, &class, &fake.server.url).await?;

    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "op", "kind": "SecretStore"},
            "target": {"name": "db-credentials"},
            "data": [
                {"secretKey": "password", "remoteRef": {"key": "db"}},
                {"secretKey": "ca", "remoteRef": {"key": "db", "property": "file/ca.pem"}},
            ],
            "dataFrom": [{"extract": {"key": "db"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let expected =
        |password: &'static str| [("username", "admin"), ("password", password), ("ca", "CA")];
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("first"),
        WAIT,
        "target Secret synced from Connect",
        &controller,
    )
    .await?;

    // A changed field reaches the Secret at the next refresh.
    anyhow::ensure!(fake.set_field("prod", &db, "password", "second"));
    wait_for_secret_data(
        &secrets,
        "db-credentials",
        &expected("second"),
        WAIT,
        "target Secret follows Connect",
        &controller,
    )
    .await?;

    // A PushSecret creates a tagged item in the first vault, and deletes it with the PushSecret.
    let push_secrets = create_push_secret(
        &cluster.client,
        &namespace.name,
        "op",
        json!({"token": "pushed-value"}),
        json!([{
            "match": {"secretKey": "token", "remoteRef": {"remoteKey": "pushed"}},
            "metadata": {
                "apiVersion": "kubernetes.external-secrets.io/v1alpha1",
                "kind": "PushSecretMetadata",
                "spec": {"tags": ["e2e"]},
            },
        }]),
    )
    .await?;
    let item = eventually(WAIT, "value pushed to Connect", || async {
        Ok(pushed(&fake))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(item["category"], "SERVER");
    assert_eq!(item["tags"], json!(["e2e"]));
    assert_eq!(item["fields"][0]["label"], "password");
    assert_eq!(item["fields"][0]["value"], "pushed-value");
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed item deleted from Connect", || async {
        Ok(pushed(&fake).is_none().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}

/// Writes `pem` to a file of its own in the temp dir; its path.
fn tempfile_with(pem: &str) -> anyhow::Result<String> {
    let path = std::env::temp_dir().join(format!("{}.pem", unique_name("onepassword-e2e-ca")));
    std::fs::write(&path, pem)?;
    Ok(path.to_string_lossy().into_owned())
}
