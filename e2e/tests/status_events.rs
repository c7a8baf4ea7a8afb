//! An ExternalSecret's status-only updates do not start a reconcile (upstream's
//! `shouldEnqueueExternalSecretUpdate`): otherwise every status write of a failing reconcile
//! would trigger the next one at once, bypassing the retry backoff. Changes of labels and
//! annotations (`force-sync`) still do.
//!
//! Counted through the controller's own `workqueue_adds_total`, with a barrier instead of a
//! wait: the watch delivers the events of one resource in order, so once the label change of
//! a second ExternalSecret (patched after the status updates) has been counted, the status
//! updates have been seen too. Cluster-agnostic: the controller watches the test namespace only.

mod support;

use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
    wait_store_ready,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use support::{WAIT, external_secret, fake_data, secret_store, wait_reason};

const CONTROLLER: &str = "externalsecret";

/// The value of the series `name{controller="externalsecret",...}` in a metrics page.
fn series(page: &str, name: &str) -> Option<u64> {
    let prefix = format!("{name}{{controller=\"{CONTROLLER}\"");
    page.lines()
        .filter(|line| line.starts_with(&prefix))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|value| value as u64)
        .reduce(|a, b| a + b)
}

/// Requests added to the ExternalSecret controller's queue so far, once the queue is empty
/// and no reconcile is running (so nothing raised earlier is still on its way).
async fn settled_adds(controller: &ControllerProcess) -> anyhow::Result<u64> {
    let give_up = std::time::Instant::now() + WAIT;
    let mut last = None;
    loop {
        let page = controller.metrics().await?;
        let adds = series(&page, "workqueue_adds_total");
        let idle = series(&page, "workqueue_depth") == Some(0)
            && series(&page, "controller_runtime_active_workers") == Some(0);
        if let Some(adds) = adds.filter(|adds| idle && last == Some(*adds)) {
            return Ok(adds);
        }
        anyhow::ensure!(
            std::time::Instant::now() < give_up,
            "the ExternalSecret queue never settled\n{}",
            controller.log()
        );
        last = adds;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Patches `updates` status-only changes into `a`, then the label `round` into `b`; the
/// requests this added to the queue once all of it has been handled.
async fn barrier(
    api: &Api<ExternalSecret>,
    controller: &ControllerProcess,
    round: &str,
    updates: usize,
) -> anyhow::Result<u64> {
    let before = settled_adds(controller).await?;
    // Status-only updates of `a`, as its own failing reconciles would write them.
    for update in 0..updates {
        let binding = format!("elsewhere-{round}-{update}");
        let status = json!({"status": {"binding": {"name": binding}}});
        api.patch_status("a", &PatchParams::default(), &Patch::Merge(status))
            .await?;
    }
    // The barrier: a label change of `b`, which must trigger.
    let label = json!({"metadata": {"labels": {"round": round}}});
    api.patch("b", &PatchParams::default(), &Patch::Merge(label))
        .await?;
    eventually(WAIT, "the label change counted", || async {
        let adds = series(&controller.metrics().await?, "workqueue_adds_total");
        Ok(adds.filter(|adds| *adds > before))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    Ok(settled_adds(controller).await? - before)
}

#[tokio::test(flavor = "multi_thread")]
async fn status_only_updates_do_not_trigger_a_reconcile() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "status-events").await?;
    let class = unique_name("e2e-class");
    let controller = ControllerProcess::start(
        &cluster,
        &class,
        &["--namespace", &namespace.name, "--concurrent", "1"],
    )
    .await?;
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    stores
        .create(
            &PostParams::default(),
            &secret_store("store", &class, fake_data())?,
        )
        .await?;
    wait_store_ready(&stores, "store", WAIT).await?;
    let api: Api<ExternalSecret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    for name in ["a", "b"] {
        api.create(
            &PostParams::default(),
            &external_secret(name, "store", json!({}))?,
        )
        .await?;
        wait_reason(&api, name, "SecretSynced", &controller).await?;
    }
    // The same barrier twice: alone, then after status-only updates of `a`. Each
    // ExternalSecret counts once while queued, so a's updates would add at least one request.
    let alone = barrier(&api, &controller, "1", 0).await?;
    let with_status_updates = barrier(&api, &controller, "2", 3).await?;
    assert!(alone >= 1, "the label change of b reached the queue");
    assert_eq!(
        with_status_updates,
        alone,
        "a's status-only updates reached the queue\n{}",
        controller.log()
    );

    // An annotation change still syncs `a` (upstream's force-sync).
    let synced = api.get("a").await?.status.and_then(|s| s.refresh_time);
    let annotation = json!({"metadata": {"annotations": {"force-sync": "1"}}});
    api.patch("a", &PatchParams::default(), &Patch::Merge(annotation))
        .await?;
    eventually(WAIT, "a synced again", || async {
        let now = api.get("a").await?.status.and_then(|s| s.refresh_time);
        Ok((now.is_some() && now != synced).then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;

    controller.stop().await?;
    namespace.delete().await
}
