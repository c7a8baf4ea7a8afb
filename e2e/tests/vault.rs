//! The vault provider end to end: the controller binary, run as a local process against the
//! cluster, syncs an ExternalSecret from an OpenBao dev server on 127.0.0.1 (started by the
//! test, TLS checked against a `caProvider` ConfigMap, token auth from a Secret), follows a
//! change of the value, and pushes a PushSecret's value there and deletes it again.
//!
//! Cluster-agnostic: only the controller talks to OpenBao, and it runs on this machine.

#[path = "../../providers/tests/support/bao_process.rs"]
mod bao_process;

use std::collections::BTreeMap;
use std::time::Duration;

use bao_process::{BaoProcess, ROOT_TOKEN};
use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use external_secrets_crds::v1alpha1::PushSecret;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

/// Runs the `bao` CLI against `bao`; its JSON output (`Null` when there is none).
fn bao_cli(bao: &BaoProcess, args: &[&str]) -> anyhow::Result<Value> {
    let output = bao.cli().args(args).output()?;
    if !output.status.success() {
        anyhow::bail!(
            "bao {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(serde_json::from_slice(&output.stdout).unwrap_or(Value::Null))
}

/// The data of KV v2 secret `key` of the dev server's `secret/` mount, if it exists.
fn stored(bao: &BaoProcess, key: &str) -> Option<Value> {
    bao_cli(bao, &["kv", "get", "-format=json", "-mount=secret", key])
        .ok()
        .map(|answer| answer["data"].clone())
}

fn string_data(secret: &Secret) -> BTreeMap<String, String> {
    secret
        .data
        .iter()
        .flatten()
        .map(|(key, value)| (key.clone(), String::from_utf8_lossy(&value.0).into_owned()))
        .collect()
}

/// The credentials and trust the store refers to, and the store itself.
async fn create_store(
    cluster: &TestCluster,
    namespace: &str,
    class: &str,
    bao: &BaoProcess,
) -> anyhow::Result<()> {
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "vault-ca"},
        "data": {"ca.crt": bao.ca_pem},
    }))?;
    Api::<ConfigMap>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &config_map)
        .await?;
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": "vault-token"},
        "stringData": {"token": ROOT_TOKEN},
    }))?;
    Api::<Secret>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &token)
        .await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "vault"},
        "spec": {"controller": class, "provider": {"vault": {
            "server": bao.url,
            "path": "secret",
            "version": "v2",
            "caProvider": {"type": "ConfigMap", "name": "vault-ca", "key": "ca.crt"},
            "auth": {"tokenSecretRef": {"name": "vault-token", "key": "token"}},
        }}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), namespace)
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

#[tokio::test]
async fn external_secrets_sync_from_openbao_and_push_secrets_write_to_it() -> anyhow::Result<()> {
    let bao = BaoProcess::start();
    bao_cli(
        &bao,
        &[
            "kv",
            "put",
            "-mount=secret",
            "app/db",
            "user=admin",
            "password=first",
        ],
    )?;
    bao_cli(
        &bao,
        &[
            "kv",
            "put",
            "-mount=secret",
            "app/config",
            "host=db.local",
            "port=5432",
        ],
    )?;
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "vault").await?;
    let class = unique_name("e2e-vault");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_store(&cluster, &namespace.name, &class, &bao).await?;

    // An ExternalSecret reading single properties and a whole secret, refreshed every second.
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "db"},
        "spec": {
            "refreshInterval": "1s",
            "secretStoreRef": {"name": "vault", "kind": "SecretStore"},
            "target": {"name": "db-credentials"},
            "data": [
                {"secretKey": "user", "remoteRef": {"key": "app/db", "property": "user"}},
                {"secretKey": "password", "remoteRef": {"key": "app/db", "property": "password"}},
            ],
            "dataFrom": [{"extract": {"key": "app/config"}}],
        },
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &external_secret)
        .await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let synced = |password: &'static str| {
        let secrets = secrets.clone();
        move || {
            let secrets = secrets.clone();
            async move {
                let Some(secret) = secrets.get_opt("db-credentials").await? else {
                    return Ok(None);
                };
                let expected: BTreeMap<String, String> = [
                    ("user", "admin"),
                    ("password", password),
                    ("host", "db.local"),
                    ("port", "5432"),
                ]
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value.to_owned()))
                .collect();
                Ok((string_data(&secret) == expected).then_some(()))
            }
        }
    };
    eventually(WAIT, "target Secret synced from OpenBao", synced("first"))
        .await
        .map_err(|error| error.context(controller.log()))?;

    // A new version in OpenBao reaches the Secret at the next refresh.
    bao_cli(
        &bao,
        &["kv", "patch", "-mount=secret", "app/db", "password=second"],
    )?;
    eventually(WAIT, "target Secret follows OpenBao", synced("second"))
        .await
        .map_err(|error| error.context(controller.log()))?;

    // A PushSecret writes a property, marked as pushed, and deletes it when it is deleted.
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "source"},
        "stringData": {"password": "pushed-value"},
    }))?;
    secrets.create(&PostParams::default(), &source).await?;
    let push_secret: PushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": "push"},
        "spec": {
            "refreshInterval": "1h",
            "deletionPolicy": "Delete",
            "secretStoreRefs": [{"name": "vault", "kind": "SecretStore"}],
            "selector": {"secret": {"name": "source"}},
            "data": [{"match": {"secretKey": "password",
                "remoteRef": {"remoteKey": "pushed/db", "property": "password"}}}],
        },
    }))?;
    let push_secrets: Api<PushSecret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    push_secrets
        .create(&PostParams::default(), &push_secret)
        .await?;
    let pushed = eventually(WAIT, "value pushed to OpenBao", || async {
        Ok(stored(&bao, "pushed/db"))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    assert_eq!(pushed["data"], json!({"password": "pushed-value"}));
    assert_eq!(
        pushed["metadata"]["custom_metadata"],
        json!({"managed-by": "external-secrets"})
    );
    push_secrets
        .delete("push", &DeleteParams::default())
        .await?;
    eventually(WAIT, "pushed value deleted from OpenBao", || async {
        Ok(stored(&bao, "pushed/db").is_none().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
