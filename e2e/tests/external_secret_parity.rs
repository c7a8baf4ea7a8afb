//! ExternalSecret behaviours pinned to upstream v2.9's controller (issue 22), run as the real
//! binary against the cluster: the Secret's metadata follows the ExternalSecret (or its
//! template) and loses what we no longer send; `refreshInterval: 0` syncs once; generators and
//! stores of another controller class are skipped; `data[].sourceRef.generatorRef` is ignored;
//! `--enable-extended-metric-labels` adds the recommended labels to the metrics.
//!
//! "Did not happen" is never read once: each such check first waits until the controller has
//! reconciled the object again (its `externalsecret_sync_calls_total` sample grew).

mod support;

use e2e::harness::{eventually, string_data};
use external_secrets_crds::v1::ExternalSecret;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use support::{Setup, WAIT, external_secret, wait_reason};

/// The `externalsecret_sync_calls_total` sample of one ExternalSecret (0 when absent).
async fn sync_calls(setup: &Setup, name: &str) -> anyhow::Result<f64> {
    let metrics = setup.controller.metrics().await?;
    let labels = format!(
        "externalsecret_sync_calls_total{{name=\"{name}\",namespace=\"{}\"}} ",
        setup.namespace.name
    );
    Ok(metrics
        .lines()
        .find_map(|line| line.strip_prefix(&labels))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0.0))
}

/// Waits until the controller reconciled `name` more often than `before` times.
async fn reconciled_since(setup: &Setup, name: &str, before: f64) -> anyhow::Result<()> {
    eventually(WAIT, &format!("another reconcile of {name}"), || async {
        Ok((sync_calls(setup, name).await? > before).then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))
}

async fn patch(api: &Api<ExternalSecret>, name: &str, patch: Value) -> anyhow::Result<()> {
    api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    Ok(())
}

/// Waits until the Secret `name` satisfies `check`.
async fn wait_secret(
    setup: &Setup,
    name: &str,
    what: &str,
    check: impl Fn(&Secret) -> bool,
) -> anyhow::Result<Secret> {
    let secrets: Api<Secret> = setup.api();
    eventually(WAIT, what, || async {
        Ok(secrets.get_opt(name).await?.filter(|secret| check(secret)))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))
}

/// Upstream `setMetadata` (externalsecret_controller_template.go) and the tests
/// "syncLabelsAnnotations" / "removeOutdatedLabelsAnnotations" (externalsecret_controller_test.go).
#[tokio::test]
async fn secret_metadata_follows_the_external_secret_and_its_template() -> anyhow::Result<()> {
    let setup = Setup::start("es-metadata", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let mut es = external_secret("meta", "store", json!({}))?;
    es.metadata.labels = Some([("labelKey".to_owned(), "labelValue".to_owned())].into());
    es.metadata.annotations =
        Some([("reloader.stakater.com/match".to_owned(), "true".to_owned())].into());
    external_secrets.create(&PostParams::default(), &es).await?;

    // No template: the ExternalSecret's own labels and annotations are copied.
    let secret = wait_secret(&setup, "meta", "labels copied", |secret| {
        secret.labels().get("labelKey").map(String::as_str) == Some("labelValue")
    })
    .await?;
    assert_eq!(
        secret
            .annotations()
            .get("reloader.stakater.com/match")
            .map(String::as_str),
        Some("true")
    );

    // A label removed from the ExternalSecret is removed from the Secret.
    patch(
        &external_secrets,
        "meta",
        json!({"metadata": {"labels": {"labelKey": null, "other": "x"}}}),
    )
    .await?;
    wait_secret(&setup, "meta", "label removed", |secret| {
        !secret.labels().contains_key("labelKey")
            && secret.labels().get("other").map(String::as_str) == Some("x")
    })
    .await?;

    // With a template: its labels and finalizers instead of the ExternalSecret's metadata.
    patch(
        &external_secrets,
        "meta",
        json!({"spec": {"target": {"template": {"metadata": {
            "labels": {"team": "payments", "tier": "db"},
            "finalizers": ["example.com/hold"],
        }}}}}),
    )
    .await?;
    let templated = wait_secret(&setup, "meta", "template metadata", |secret| {
        secret.labels().get("tier").map(String::as_str) == Some("db")
            && secret.finalizers().iter().any(|f| f == "example.com/hold")
    })
    .await?;
    assert!(!templated.labels().contains_key("other"), "ES labels gone");
    assert!(
        !templated
            .annotations()
            .contains_key("reloader.stakater.com/match")
    );
    assert_eq!(
        templated
            .labels()
            .get("reconcile.external-secrets.io/managed")
            .map(String::as_str),
        Some("true")
    );

    // Dropped from the template: the label and the finalizer go too.
    patch(
        &external_secrets,
        "meta",
        json!({"spec": {"target": {"template": {"metadata": {
            "labels": {"team": "payments", "tier": null},
            "finalizers": null,
        }}}}}),
    )
    .await?;
    wait_secret(&setup, "meta", "template entries removed", |secret| {
        !secret.labels().contains_key("tier")
            && secret.labels().get("team").map(String::as_str) == Some("payments")
            && secret.finalizers().is_empty()
    })
    .await?;
    setup.finish().await
}

/// Upstream `shouldRefreshPeriodic` (externalsecret_controller.go): a zero interval syncs once
/// and never again, a spec change included ("refreshintervalZero" in
/// externalsecret_controller_test.go).
#[tokio::test]
async fn a_zero_refresh_interval_syncs_once() -> anyhow::Result<()> {
    let setup = Setup::start("es-interval-zero", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let es = external_secret("once", "store", json!({"refreshInterval": "0s"}))?;
    external_secrets.create(&PostParams::default(), &es).await?;
    let (synced, _) =
        wait_reason(&external_secrets, "once", "SecretSynced", &setup.controller).await?;
    let first = synced.status.clone().unwrap_or_default();
    let before = sync_calls(&setup, "once").await?;

    // A spec change is reconciled but does not sync: no new key, same sync bookkeeping.
    patch(
        &external_secrets,
        "once",
        json!({"spec": {"dataFrom": [{"extract": {"key": "/db/config"}}]}}),
    )
    .await?;
    reconciled_since(&setup, "once", before).await?;
    let data = string_data(&setup.api::<Secret>().get("once").await?);
    assert!(
        !data.contains_key("host"),
        "synced again: {:?}",
        data.keys()
    );
    let after = external_secrets
        .get("once")
        .await?
        .status
        .unwrap_or_default();
    assert_eq!(after.synced_resource_version, first.synced_resource_version);
    assert_eq!(after.refresh_time, first.refresh_time);
    setup.finish().await
}

/// Upstream `shouldSkipGenerator` (externalsecret_controller_secret.go,
/// "ignoreMismatchControllerForGeneratorRef"): an ExternalSecret using a generator of another
/// controller class is skipped without status; `data[].sourceRef.generatorRef` is deprecated
/// and not implemented upstream (StoreSourceRef in externalsecret_types.go): ignored.
#[tokio::test]
async fn generators_of_another_class_are_skipped_and_data_generator_refs_ignored()
-> anyhow::Result<()> {
    let setup = Setup::start("es-generator-class", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    setup
        .create_generator(
            "Fake",
            "fakes",
            "foreign",
            json!({"data": {"somekey": "someValue"}, "controller": "fakeControllerClass"}),
        )
        .await?;
    setup
        .create_generator(
            "Fake",
            "fakes",
            "ours",
            json!({"data": {"somekey": "someValue"}, "controller": setup.class}),
        )
        .await?;
    let generator = |name: &str| {
        json!({"sourceRef": {"generatorRef": {
            "apiVersion": "generators.external-secrets.io/v1alpha1",
            "kind": "Fake", "name": name}}})
    };
    for (name, reference) in [("foreign", "foreign"), ("ours", "ours")] {
        let es = external_secret(name, "store", json!({"dataFrom": [generator(reference)]}))?;
        external_secrets.create(&PostParams::default(), &es).await?;
    }
    wait_reason(&external_secrets, "ours", "SecretSynced", &setup.controller).await?;
    assert_eq!(
        string_data(&setup.api::<Secret>().get("ours").await?)["somekey"],
        "someValue"
    );
    reconciled_since(&setup, "foreign", 0.0).await?;
    let foreign = external_secrets.get("foreign").await?;
    assert!(
        foreign
            .status
            .as_ref()
            .is_none_or(|status| status.conditions.is_empty()),
        "skipped without status: {:?}",
        foreign.status
    );
    assert!(setup.api::<Secret>().get_opt("foreign").await?.is_none());

    // A generatorRef in spec.data (the CRD allows it alone: sourceRef has maxProperties 1) is
    // ignored: the entry reads from the ExternalSecret's store.
    let data = json!({"data": [{
        "secretKey": "user",
        "remoteRef": {"key": "/db/user"},
        "sourceRef": {
            "generatorRef": {"apiVersion": "generators.external-secrets.io/v1alpha1",
                "kind": "Fake", "name": "ours"},
        },
    }]});
    let es = external_secret("data-generator", "store", data)?;
    external_secrets.create(&PostParams::default(), &es).await?;
    wait_reason(
        &external_secrets,
        "data-generator",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let data = string_data(&setup.api::<Secret>().get("data-generator").await?);
    assert_eq!(data.get("user").map(String::as_str), Some("app"));
    assert!(!data.contains_key("somekey"), "the generator is not used");
    setup.finish().await
}

/// Upstream's `--enable-extended-metric-labels` (pkg/controllers/metrics/labels.go): per-object
/// series carry the object's six `app.kubernetes.io/*` labels as `app_kubernetes_io_*`.
#[tokio::test]
async fn extended_metric_labels_carry_the_recommended_labels() -> anyhow::Result<()> {
    let setup = Setup::start("es-extended", &["--enable-extended-metric-labels"]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let mut es = external_secret("labelled", "store", json!({}))?;
    es.metadata.labels = Some(
        [
            ("app.kubernetes.io/name".to_owned(), "billing".to_owned()),
            ("app.kubernetes.io/part-of".to_owned(), "shop".to_owned()),
        ]
        .into(),
    );
    external_secrets.create(&PostParams::default(), &es).await?;
    wait_reason(
        &external_secrets,
        "labelled",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let series = format!(
        "externalsecret_status_condition{{name=\"labelled\",namespace=\"{}\",condition=\"Ready\",\
         status=\"True\",app_kubernetes_io_name=\"billing\",app_kubernetes_io_instance=\"\",\
         app_kubernetes_io_version=\"\",app_kubernetes_io_component=\"\",\
         app_kubernetes_io_part_of=\"shop\",app_kubernetes_io_managed_by=\"\"}} 1",
        setup.namespace.name
    );
    eventually(WAIT, "extended series exported", || async {
        let metrics = setup.controller.metrics().await?;
        Ok(metrics.contains(&series).then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    setup.finish().await
}
