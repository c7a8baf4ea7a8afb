//! The restart race (issue 23): a controller restarting while the API server is slow to list
//! namespaces must not decide from its still-empty namespace cache. ClusterExternalSecret and
//! ClusterPushSecret copies (and the Secrets the copies own) provisioned before the restart
//! are the same objects (same uids) after it; a namespace selected after the restart still
//! gains its copies, so the controller did reconcile.
//!
//! Loopback only, on a server of its own: it needs an API server whose namespace LIST answers
//! late (`LoopbackServer::delay_lists`), which a real cluster cannot be told to do.

use std::collections::BTreeMap;
use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
};
use external_secrets_crds::v1::{ClusterExternalSecret, ClusterSecretStore, ExternalSecret};
use external_secrets_crds::v1alpha1::{ClusterPushSecret, PushSecret};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use loopback_apiserver::{LoopbackServer, Options};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
/// How late the namespace list answers after the restart.
const LIST_DELAY: Duration = Duration::from_secs(8);
const LABEL: &str = "e2e-restart-race";

/// The uid of every copy and copied Secret in `namespaces`, once all exist.
async fn copies(client: &Client, namespaces: &[&str]) -> anyhow::Result<BTreeMap<String, String>> {
    eventually(WAIT, "every copy and its Secret", || async {
        let mut uids = BTreeMap::new();
        for namespace in namespaces {
            let es = Api::<ExternalSecret>::namespaced(client.clone(), namespace)
                .get_opt("copy")
                .await?;
            let secret = Api::<Secret>::namespaced(client.clone(), namespace)
                .get_opt("copied")
                .await?;
            let push = Api::<PushSecret>::namespaced(client.clone(), namespace)
                .get_opt("copy")
                .await?;
            let (Some(es), Some(secret), Some(push)) = (es, secret, push) else {
                return Ok(None);
            };
            for (kind, uid) in [
                ("ExternalSecret", es.uid()),
                ("Secret", secret.uid()),
                ("PushSecret", push.uid()),
            ] {
                uids.insert(format!("{namespace}/{kind}"), uid.unwrap_or_default());
            }
        }
        Ok(Some(uids))
    })
    .await
}

async fn select(client: &Client, namespace: &str) -> anyhow::Result<()> {
    let patch = json!({"metadata": {"labels": {LABEL: "on"}}});
    Api::<Namespace>::all(client.clone())
        .patch(namespace, &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "source"},
        "stringData": {"password": "pushed"},
    }))?;
    Api::<Secret>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &source)
        .await?;
    Ok(())
}

/// A fake ClusterSecretStore, a ClusterExternalSecret and a ClusterPushSecret selecting the
/// namespaces labelled [`LABEL`].
async fn create_templates(client: &Client, class: &str) -> anyhow::Result<()> {
    let store: ClusterSecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": "shared"},
        "spec": {"controller": class, "provider": {"fake": {"data": [
            {"key": "/shared/password", "value": "value"},
        ]}}},
    }))?;
    Api::<ClusterSecretStore>::all(client.clone())
        .create(&PostParams::default(), &store)
        .await?;
    let selectors = json!([{"matchLabels": {LABEL: "on"}}]);
    let ces: ClusterExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterExternalSecret",
        "metadata": {"name": "shared"},
        "spec": {
            "externalSecretName": "copy",
            "namespaceSelectors": selectors,
            "refreshTime": "1h",
            "externalSecretSpec": {
                "refreshInterval": "1h",
                "secretStoreRef": {"name": "shared", "kind": "ClusterSecretStore"},
                "target": {"name": "copied"},
                "data": [{"secretKey": "password", "remoteRef": {"key": "/shared/password"}}],
            },
        },
    }))?;
    Api::<ClusterExternalSecret>::all(client.clone())
        .create(&PostParams::default(), &ces)
        .await?;
    let cps: ClusterPushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "ClusterPushSecret",
        "metadata": {"name": "shared"},
        "spec": {
            "pushSecretName": "copy",
            "namespaceSelectors": selectors,
            "refreshTime": "1h",
            "pushSecretSpec": {
                "refreshInterval": "1h",
                "deletionPolicy": "Delete",
                "secretStoreRefs": [{"name": "shared", "kind": "ClusterSecretStore"}],
                "selector": {"secret": {"name": "source"}},
                "data": [{"match": {"secretKey": "password",
                    "remoteRef": {"remoteKey": "/pushed/password"}}}],
            },
        },
    }))?;
    Api::<ClusterPushSecret>::all(client.clone())
        .create(&PostParams::default(), &cps)
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_survive_a_restart_with_a_slow_namespace_list() -> anyhow::Result<()> {
    let server = LoopbackServer::start(Options::default()).await?;
    let cluster = TestCluster {
        client: server.client().await?,
        kubeconfig: server.kubeconfig_path().to_path_buf(),
        loopback: true,
    };
    let client = cluster.client.clone();
    install_crds(&client).await?;
    let class = unique_name("e2e-restart");
    let first = TestNamespace::create(&cluster, "race-a").await?;
    let second = TestNamespace::create(&cluster, "race-b").await?;
    let later = TestNamespace::create(&cluster, "race-c").await?;
    select(&client, &first.name).await?;
    select(&client, &second.name).await?;
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    create_templates(&client, &class).await?;
    let provisioned = [first.name.as_str(), second.name.as_str()];
    let before = copies(&client, &provisioned)
        .await
        .map_err(|error| error.context(controller.log()))?;
    controller.stop().await?;

    // Restart while namespaces list late: every controller starts with an empty namespace
    // cache and must wait for it instead of deleting the copies it finds no namespace for.
    server.delay_lists("namespaces", LIST_DELAY);
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    tokio::time::sleep(LIST_DELAY).await;
    server.delay_lists("namespaces", Duration::ZERO);
    select(&client, &later.name).await?;
    copies(&client, &[later.name.as_str()])
        .await
        .map_err(|error| error.context(controller.log()))?;
    let after = copies(&client, &provisioned).await?;
    assert_eq!(
        after,
        before,
        "copies were deleted and made again\n{}",
        controller.log()
    );
    controller.stop().await?;
    Ok(())
}
