//! Per-object metric series end with their object (issue 24), read from the controller binary's
//! own `/metrics`: once a SecretStore, an ExternalSecret and a PushSecret are deleted, no series
//! names them any more, also with `--enable-extended-metric-labels` (whose series carry the
//! object's recommended labels). Upstream's ClusterSecretStore, ClusterExternalSecret and
//! ClusterPushSecret controllers drop their series on deletion; ours do for every kind.
//!
//! Both directions are polled: first until every series is exported, then until none is left.

mod support;

use e2e::harness::eventually;
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use external_secrets_crds::v1alpha1::PushSecret;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;
use support::{Setup, WAIT, external_secret, wait_reason};

/// The recommended label the objects carry, so the extended series are exercised.
const APP: (&str, &str) = ("app.kubernetes.io/name", "cleanup");

/// The `/metrics` lines (samples, not comments) of the per-object families naming `name` in
/// the test's namespace.
async fn series_of(setup: &Setup, name: &str) -> anyhow::Result<Vec<String>> {
    let page = setup.controller.metrics().await?;
    let labels = format!("{{name=\"{name}\",namespace=\"{}\"", setup.namespace.name);
    Ok(page
        .lines()
        .filter(|line| !line.starts_with('#') && line.contains(&labels))
        .map(str::to_owned)
        .collect())
}

/// Waits until the series of `name` include every family in `families`.
async fn wait_exported(setup: &Setup, name: &str, families: &[&str]) -> anyhow::Result<()> {
    eventually(WAIT, &format!("series of {name}"), || async {
        let series = series_of(setup, name).await?;
        let all = families
            .iter()
            .all(|family| series.iter().any(|line| line.starts_with(family)));
        Ok(all.then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))
}

/// Waits until no series names `name` any more.
async fn wait_gone(setup: &Setup, name: &str) -> anyhow::Result<()> {
    let gone = eventually(WAIT, &format!("no series of {name}"), || async {
        Ok(series_of(setup, name).await?.is_empty().then_some(()))
    })
    .await;
    if let Err(error) = gone {
        let left = series_of(setup, name).await?;
        return Err(error.context(format!("left: {left:?}\n{}", setup.controller.log())));
    }
    Ok(())
}

#[tokio::test]
async fn deleted_objects_leave_no_series_with_extended_labels() -> anyhow::Result<()> {
    let setup = Setup::start("metrics-cleanup", &["--enable-extended-metric-labels"]).await?;
    // Test data only.
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "source"},
        "stringData": {"password": "pushed-value"},
    }))?;
    setup
        .api::<Secret>()
        .create(&PostParams::default(), &source)
        .await?;

    let external_secrets: Api<ExternalSecret> = setup.api();
    let mut es = external_secret("pulled", "store", json!({}))?;
    es.metadata.labels = Some([(APP.0.to_owned(), APP.1.to_owned())].into());
    external_secrets.create(&PostParams::default(), &es).await?;

    let push_secrets: Api<PushSecret> = setup.api();
    let push: PushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": "pushed", "labels": {APP.0: APP.1}},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRefs": [{"name": "store", "kind": "SecretStore"}],
            "selector": {"secret": {"name": "source"}},
            "data": [{"match": {"secretKey": "password", "remoteRef": {"remoteKey": "/pushed"}}}],
        },
    }))?;
    push_secrets.create(&PostParams::default(), &push).await?;

    wait_reason(
        &external_secrets,
        "pulled",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    wait_exported(
        &setup,
        "pulled",
        &[
            "externalsecret_status_condition",
            "externalsecret_reconcile_duration",
            "externalsecret_sync_calls_total",
        ],
    )
    .await?;
    wait_exported(
        &setup,
        "pushed",
        &[
            "pushsecret_status_condition",
            "pushsecret_reconcile_duration",
        ],
    )
    .await?;
    wait_exported(
        &setup,
        "store",
        &[
            "secretstore_status_condition",
            "secretstore_reconcile_duration",
        ],
    )
    .await?;
    let extended = series_of(&setup, "pushed").await?;
    assert!(
        extended
            .iter()
            .all(|line| line.contains("app_kubernetes_io_name=\"cleanup\"")),
        "the series carry the recommended labels: {extended:?}"
    );

    let delete = DeleteParams::default();
    external_secrets.delete("pulled", &delete).await?;
    push_secrets.delete("pushed", &delete).await?;
    wait_gone(&setup, "pulled").await?;
    wait_gone(&setup, "pushed").await?;
    setup.api::<SecretStore>().delete("store", &delete).await?;
    wait_gone(&setup, "store").await?;
    setup.finish().await
}
