//! The README's quickstart: syncs a secret end to end with nothing installed. Starts the
//! loopback API server (or uses the cluster `KUBECONFIG` names), installs the CRDs, runs the
//! controller binary, creates a `fake` SecretStore and an ExternalSecret reading from it, and
//! prints the store's and the ExternalSecret's status and the Secret they produced.
//!
//! Run it with `bash scripts/demo.sh`, which builds the controller first.

use anyhow::Context;
use e2e::harness::{ControllerProcess, TestCluster, TestNamespace, eventually, install_crds};
use external_secrets_crds::v1::{ExternalSecret, ExternalSecretConditionType, SecretStore};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(60);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    println!(
        "cluster: {}",
        if cluster.loopback {
            "loopback API server (in this process)".to_owned()
        } else {
            format!("KUBECONFIG {}", cluster.kubeconfig.display())
        }
    );
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "eso-demo").await?;
    let class = format!("demo-{}", std::process::id());
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let result = sync(&cluster, &namespace.name, &class).await;
    if result.is_err() {
        eprintln!("controller log:\n{}", controller.log());
    }
    controller.stop().await?;
    namespace.delete().await?;
    result
}

async fn sync(cluster: &TestCluster, namespace: &str, class: &str) -> anyhow::Result<()> {
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), namespace);
    let external_secrets: Api<ExternalSecret> = Api::namespaced(cluster.client.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), namespace);

    // Demo values only: the fake provider serves what its store spec lists.
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "demo-store"},
        "spec": {"controller": class, "provider": {"fake": {"data": [
            {"key": "/demo/database", "value": "{\"username\":\"app\",\"password\":\"demo-password\"}"},
            {"key": "/demo/api-token", "value": "demo-token", "version": "v1"},
        ]}}},
    }))?;
    let external_secret: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "demo"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRef": {"name": "demo-store", "kind": "SecretStore"},
            "target": {"name": "demo-credentials"},
            "data": [
                {"secretKey": "username", "remoteRef": {"key": "/demo/database", "property": "username"}},
                {"secretKey": "password", "remoteRef": {"key": "/demo/database", "property": "password"}},
                {"secretKey": "token", "remoteRef": {"key": "/demo/api-token", "version": "v1"}},
            ],
        },
    }))?;
    let started = Instant::now();
    stores.create(&PostParams::default(), &store).await?;
    external_secrets
        .create(&PostParams::default(), &external_secret)
        .await?;

    let ready = eventually(WAIT, "ExternalSecret demo to be Ready", || async {
        let current = external_secrets.get("demo").await?;
        let ready = current.status.as_ref().and_then(|status| {
            status
                .conditions
                .iter()
                .find(|c| c.r#type == ExternalSecretConditionType::Ready && c.status == "True")
                .cloned()
        });
        Ok(ready.map(|condition| (current, condition)))
    })
    .await?;
    let elapsed = started.elapsed();
    let store = stores.get("demo-store").await?;
    if let Some(status) = &store.status {
        for condition in &status.conditions {
            println!(
                "SecretStore demo-store: {}={} ({}: {}), capabilities {}",
                condition.r#type,
                condition.status,
                condition.reason.as_deref().unwrap_or_default(),
                condition.message.as_deref().unwrap_or_default(),
                status.capabilities.as_deref().unwrap_or_default()
            );
        }
    }
    let (_, condition) = ready;
    println!(
        "ExternalSecret demo: Ready={} ({}: {}) after {:.2?}",
        condition.status,
        condition.reason.as_deref().unwrap_or_default(),
        condition.message.as_deref().unwrap_or_default(),
        elapsed
    );
    let secret = secrets
        .get("demo-credentials")
        .await
        .context("reading the synced Secret")?;
    println!("Secret demo-credentials:");
    for (key, value) in secret.data.unwrap_or_default() {
        println!("  {key}: {}", String::from_utf8_lossy(&value.0));
    }
    Ok(())
}
