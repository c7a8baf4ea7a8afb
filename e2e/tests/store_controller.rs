//! The store controllers, run as the real binary against the cluster: stores with good and bad
//! configurations reach upstream's `Ready` conditions, events and metrics; a changed spec is
//! validated again; stores of another controller class are left alone.
//!
//! Each test's controller runs with its own `--controller-class` and the test's stores name
//! it, so the test never touches stores of a controller already running on the cluster.

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
};
use external_secrets_crds::v1::{ClusterSecretStore, SecretStore};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// Upstream's Ready condition for a store whose provider cannot tell (`validateStore`:
/// `ReasonValidationUnknown`, `errValidationUnknownMsg`).
const VALIDATION_UNKNOWN: [&str; 3] = [
    "True",
    "ValidationUnknown",
    "could not determine validation status",
];

fn fake_provider(validation_result: i64) -> Value {
    json!({"fake": {
        "data": [{"key": "/db/password", "value": "not-logged"}],
        "validationResult": validation_result,
    }})
}

fn store(name: &str, class: &str, provider: Value) -> Value {
    json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": name},
        "spec": {"controller": class, "provider": provider},
    })
}

/// The `Ready` condition as (status, reason, message), once there is one.
fn ready_of(status: Option<&external_secrets_crds::v1::SecretStoreStatus>) -> Option<[String; 3]> {
    let condition = status?.conditions.iter().find(|c| c.r#type == "Ready")?;
    Some([
        condition.status.clone(),
        condition.reason.clone().unwrap_or_default(),
        condition.message.clone().unwrap_or_default(),
    ])
}

async fn wait_ready(
    api: &Api<SecretStore>,
    name: &str,
    wanted_status: &str,
    controller: &ControllerProcess,
) -> anyhow::Result<(SecretStore, [String; 3])> {
    eventually(
        WAIT,
        &format!("store {name} Ready={wanted_status}"),
        || async {
            let store = api.get(name).await?;
            Ok(ready_of(store.status.as_ref())
                .filter(|ready| ready[0] == wanted_status)
                .map(|ready| (store, ready)))
        },
    )
    .await
    .map_err(|error| error.context(controller.log()))
}

#[tokio::test]
async fn secret_store_conditions_events_and_revalidation() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "store-controller").await?;
    let class = unique_name("e2e-class");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let api: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let create = |manifest: Value| {
        let api = api.clone();
        async move {
            let store: SecretStore = serde_json::from_value(manifest)?;
            anyhow::Ok(api.create(&PostParams::default(), &store).await?)
        }
    };

    // A working fake store: Ready, Valid, with capabilities and a Normal event.
    create(store("good", &class, fake_provider(0))).await?;
    let (good, ready) = wait_ready(&api, "good", "True", &controller).await?;
    assert_eq!(
        ready,
        ["True", "Valid", "store validated"].map(String::from)
    );
    assert_eq!(
        good.status.as_ref().and_then(|s| s.capabilities.as_deref()),
        Some("ReadWrite")
    );

    // A provider this build does not implement: a permanent, named error.
    create(store(
        "volcengine",
        &class,
        json!({"volcengine": {"region": "cn-beijing"}}),
    ))
    .await?;
    // Upstream's condition messages are fixed (`errUnableCreateClient`,
    // `errUnableValidateStore` in pkg/controllers/secretstore/common.go); the error is in the
    // Warning event (checked below).
    let (_, ready) = wait_ready(&api, "volcengine", "False", &controller).await?;
    assert_eq!(
        ready,
        ["False", "InvalidProviderConfig", "unable to create client"].map(String::from)
    );

    // The provider's own validation fails.
    create(store("failing", &class, fake_provider(2))).await?;
    let (_, ready) = wait_ready(&api, "failing", "False", &controller).await?;
    assert_eq!(
        ready,
        ["False", "InvalidProviderConfig", "unable to validate store"].map(String::from)
    );

    // The provider cannot tell (upstream's fake returns Unknown with "unable to validate"):
    // Ready=True ValidationUnknown, as upstream's `validateStore`.
    create(store("unsure", &class, fake_provider(1))).await?;
    let (_, ready) = wait_ready(&api, "unsure", "True", &controller).await?;
    assert_eq!(ready, VALIDATION_UNKNOWN.map(String::from));

    // Fixing the spec is picked up at once, not at the next refresh.
    api.patch(
        "failing",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"provider": fake_provider(0)}})),
    )
    .await?;
    let (_, ready) = wait_ready(&api, "failing", "True", &controller).await?;
    assert_eq!(ready[1], "Valid");

    // Events, as upstream records them: reason and type per store, no secret values.
    let events: Api<Event> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let reasons = eventually(WAIT, "store events", || async {
        let list = events.list(&ListParams::default()).await?;
        let mut found: Vec<(String, String, String, String)> = list
            .items
            .into_iter()
            .map(|event| {
                (
                    event.regarding.and_then(|r| r.name).unwrap_or_default(),
                    event.reason.unwrap_or_default(),
                    event.type_.unwrap_or_default(),
                    event.note.unwrap_or_default(),
                )
            })
            .collect();
        found.sort();
        found.dedup();
        // (store, reason, type, text the note contains): the errors are in the events.
        let wanted = [
            (
                "volcengine",
                "InvalidProviderConfig",
                "Warning",
                "\"volcengine\" is not supported by this build",
            ),
            (
                "failing",
                "InvalidProviderConfig",
                "Warning",
                "unable to validate",
            ),
            ("failing", "Valid", "Normal", "store validated"),
            ("good", "Valid", "Normal", "store validated"),
            (
                "unsure",
                "ValidationUnknown",
                "Warning",
                "unable to validate",
            ),
            // Upstream registers the fake provider NotMaintained (fake.go).
            (
                "good",
                "StoreUnmaintained",
                "Warning",
                "store isn't currently maintained. Please plan and prepare accordingly.",
            ),
        ];
        let all = wanted.iter().all(|(name, reason, kind, note)| {
            found.iter().any(|f| {
                (f.0.as_str(), f.1.as_str(), f.2.as_str()) == (*name, *reason, *kind)
                    && f.3.contains(note)
            })
        });
        Ok(all.then_some(found))
    })
    .await?;
    let all_events = events.list(&ListParams::default()).await?;
    for event in &all_events.items {
        let note = event.note.clone().unwrap_or_default();
        assert!(!note.contains("not-logged"), "event leaks a secret: {note}");
    }
    assert!(
        !controller.log().contains("not-logged"),
        "log leaks a secret"
    );
    println!("events: {reasons:?}");

    // Metrics under upstream's names, per store.
    let metrics = controller.metrics().await?;
    let condition_line = metrics.lines().find(|line| {
        line.starts_with("secretstore_status_condition{")
            && line.contains("name=\"good\"")
            && line.contains("status=\"True\"")
    });
    assert!(
        condition_line.is_some_and(|line| line.ends_with(" 1")),
        "no secretstore_status_condition for good in:\n{metrics}"
    );
    assert!(metrics.contains("controller_runtime_reconcile_total{"));

    controller.stop().await?;
    namespace.delete().await
}

#[tokio::test]
async fn stores_of_another_controller_class_are_left_alone() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "store-class").await?;
    let class = unique_name("e2e-class");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let api: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);

    let foreign_class = unique_name("someone-else");
    let foreign: SecretStore =
        serde_json::from_value(store("foreign", &foreign_class, fake_provider(0)))?;
    api.create(&PostParams::default(), &foreign).await?;
    let ours: SecretStore = serde_json::from_value(store("ours", &class, fake_provider(0)))?;
    api.create(&PostParams::default(), &ours).await?;

    // Our store is handled after the foreign one was created, so by then the controller has
    // seen the foreign one too and decided to leave it.
    wait_ready(&api, "ours", "True", &controller).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let foreign = api.get("foreign").await?;
    assert!(
        foreign
            .status
            .is_none_or(|status| status.conditions.is_empty()),
        "a store of class {foreign_class} got a status from controller {class}"
    );

    controller.stop().await?;
    namespace.delete().await
}

#[tokio::test]
async fn cluster_secret_store_becomes_ready() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let class = unique_name("e2e-class");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let api: Api<ClusterSecretStore> = Api::all(cluster.client.clone());
    let name = unique_name("e2e-cluster-store");
    let mut manifest = store(&name, &class, fake_provider(1));
    manifest["kind"] = json!("ClusterSecretStore");
    let created: ClusterSecretStore = serde_json::from_value(manifest)?;
    api.create(&PostParams::default(), &created).await?;

    // validationResult 1 is upstream's "Unknown" (its fake returns it with an error):
    // usable, so Ready, with upstream's ValidationUnknown reason (validateStore in
    // pkg/controllers/secretstore/common.go).
    let result = eventually(WAIT, "cluster store Ready", || async {
        let store = api.get(&name).await?;
        Ok(ready_of(store.status.as_ref()).filter(|ready| ready[0] == "True"))
    })
    .await;
    let deleted = api.delete(&name, &DeleteParams::default()).await;
    let ready = result.map_err(|error| error.context(controller.log()))?;
    deleted?;
    assert_eq!(ready, VALIDATION_UNKNOWN.map(String::from));
    let status = controller.stop().await?;
    assert!(status.success(), "controller exited with {status}");
    Ok(())
}
