//! kube-runtime's building blocks — `watcher` (list-watch and streaming lists, full and
//! metadata-only), `reflector` and `Controller` — run against the cluster without errors.

use e2e::harness::{TestCluster, TestCrd, TestNamespace, eventually};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{Controller, WatchStreamExt};
use kube::{Client, Resource, ResourceExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn labelled_config_map(name: &str, label: &str) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": {"e2e-test": label}}, "data": {"in": "1"}}),
    )
    .expect("a ConfigMap")
}

/// Waits for the next event matching `wanted`, skipping others.
async fn next_matching<S, K>(
    stream: &mut S,
    wanted: impl Fn(&Event<K>) -> bool,
) -> anyhow::Result<Event<K>>
where
    S: futures::Stream<Item = Result<Event<K>, watcher::Error>> + Unpin,
{
    tokio::time::timeout(WAIT, async {
        loop {
            let event = stream
                .try_next()
                .await?
                .ok_or_else(|| anyhow::anyhow!("the watcher ended"))?;
            if wanted(&event) {
                return Ok(event);
            }
        }
    })
    .await?
}

#[tokio::test]
async fn watcher_follows_changes_with_both_initial_list_strategies() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "watcher").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    api.create(
        &PostParams::default(),
        &labelled_config_map("before", "watcher"),
    )
    .await?;
    for (strategy, config) in [
        ("list-watch", watcher::Config::default()),
        (
            "streaming list",
            watcher::Config::default().streaming_lists(),
        ),
    ] {
        let config = config.labels("e2e-test=watcher").timeout(20);
        let mut events = watcher::watcher(api.clone(), config).boxed();
        let initial = next_matching(&mut events, |e| matches!(e, Event::InitApply(_))).await?;
        assert!(
            matches!(&initial, Event::InitApply(o) if o.name_any() == "before"),
            "{strategy}"
        );
        next_matching(&mut events, |e| matches!(e, Event::InitDone)).await?;
        let name = format!("after-{}", strategy.replace(' ', "-"));
        api.create(
            &PostParams::default(),
            &labelled_config_map(&name, "watcher"),
        )
        .await?;
        let applied = next_matching(
            &mut events,
            |e| matches!(e, Event::Apply(o) if o.name_any() == name),
        )
        .await?;
        assert!(matches!(applied, Event::Apply(_)), "{strategy}");
        api.patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"e2e-test": "other"}}})),
        )
        .await?;
        next_matching(
            &mut events,
            |e| matches!(e, Event::Delete(o) if o.name_any() == name),
        )
        .await?;
    }
    namespace.delete().await
}

#[tokio::test]
async fn metadata_watcher_and_reflector_track_the_cluster() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "reflector").await?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let (reader, writer) = reflector::store();
    let config = watcher::Config::default().labels("e2e-test=reflector");
    let metadata: Api<PartialObjectMeta<Secret>> =
        Api::namespaced(cluster.client.clone(), &namespace.name);
    let reflection = reflector::reflector(writer, watcher::watcher(metadata, config))
        .applied_objects()
        .try_for_each(|_| async { Ok(()) });
    let reflection = tokio::spawn(reflection);
    for index in 0..3 {
        let secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": format!("s{index}"), "labels": {"e2e-test": "reflector"}},
            "stringData": {"password": "not in the cache"},
        }))?;
        secrets.create(&PostParams::default(), &secret).await?;
    }
    eventually(WAIT, "the reflector to hold 3 secrets", || async {
        Ok((reader.state().len() == 3).then_some(()))
    })
    .await?;
    let cached = reader
        .get(&ObjectRef::new("s0").within(&namespace.name))
        .expect("s0 is cached");
    assert_eq!(
        cached.metadata.labels.as_ref().unwrap()["e2e-test"],
        "reflector"
    );
    secrets.delete("s1", &DeleteParams::default()).await?;
    eventually(WAIT, "the reflector to drop s1", || async {
        Ok((reader.state().len() == 2).then_some(()))
    })
    .await?;
    assert!(
        !reflection.is_finished(),
        "the reflector stopped: {:?}",
        reflection.await
    );
    reflection.abort();
    namespace.delete().await
}

struct Context {
    client: Client,
}

#[derive(Debug)]
struct ReconcileError(String);

impl std::fmt::Display for ReconcileError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for ReconcileError {}

/// Marks a Widget ready and mirrors its spec into an owned ConfigMap.
async fn reconcile(
    widget: Arc<DynamicObject>,
    context: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let namespace = widget.namespace().unwrap_or_default();
    let name = widget.name_any();
    let owner = widget
        .controller_owner_ref(&resource_of(&widget))
        .ok_or_else(|| ReconcileError("no owner reference".into()))?;
    let config_map = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": format!("{name}-mirror"), "ownerReferences": [owner]},
        "data": {"size": widget.data["spec"]["size"].to_string()},
    });
    let config_maps: Api<ConfigMap> = Api::namespaced(context.client.clone(), &namespace);
    let apply = PatchParams::apply("e2e-widget-controller").force();
    config_maps
        .patch(
            &format!("{name}-mirror"),
            &apply,
            &Patch::Apply(&config_map),
        )
        .await
        .map_err(|error| ReconcileError(error.to_string()))?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(context.client.clone(), &namespace, &resource_of(&widget));
    let status =
        json!({"status": {"ready": true, "observedGeneration": widget.metadata.generation}});
    match api
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(status))
        .await
    {
        Ok(_) => Ok(Action::requeue(Duration::from_secs(300))),
        // Deleted after the cache handed it to us (a reconcile queued by its mirror's garbage
        // collection): nothing left to do, as on any cluster.
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Action::await_change()),
        Err(error) => Err(ReconcileError(error.to_string())),
    }
}

fn resource_of(object: &DynamicObject) -> kube::discovery::ApiResource {
    let types = object.types.clone().expect("typed object");
    let (group, version) = types
        .api_version
        .split_once('/')
        .expect("a grouped apiVersion");
    kube::discovery::ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: types.api_version.clone(),
        kind: types.kind,
        plural: "widgets".into(),
    }
}

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.runtime.e2e.external-secrets.io"},
        "spec": {
            "group": "runtime.e2e.external-secrets.io",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {
                        "ready": {"type": "boolean"}, "observedGeneration": {"type": "integer"}
                    }}
                }}}
            }]
        }
    })
}

#[tokio::test]
async fn controller_reconciles_a_custom_resource() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let crd = TestCrd::create(&cluster, widget_crd()).await?;
    let namespace = TestNamespace::create(&cluster, "controller").await?;
    let resource = crd.resource("v1");
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(cluster.client.clone(), &namespace.name, &resource);
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let context = Arc::new(Context {
        client: cluster.client.clone(),
    });
    let controller = Controller::new_with(
        widgets.clone(),
        watcher::Config::default(),
        resource.clone(),
    )
    .owns(config_maps.clone(), watcher::Config::default())
    .run(
        reconcile,
        |_, error, _| panic!("reconcile failed: {error}"),
        context,
    )
    .for_each(|result| async move {
        match result {
            // An owned object's event for an owner already deleted: benign on any cluster.
            Ok(_) | Err(kube::runtime::controller::Error::ObjectNotFound(_)) => {}
            Err(error) => panic!("controller error: {error}"),
        }
    });
    let controller = tokio::spawn(controller);
    let widget: DynamicObject = serde_json::from_value(json!({
        "apiVersion": resource.api_version, "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3},
    }))?;
    widgets.create(&PostParams::default(), &widget).await?;
    eventually(WAIT, "the widget to be ready and mirrored", || async {
        let widget = widgets.get("w").await?;
        let mirror = config_maps.get_opt("w-mirror").await?;
        let mirrored = mirror
            .and_then(|c| c.data)
            .is_some_and(|d| d["size"] == "3");
        Ok((widget.data["status"]["ready"] == true && mirrored).then_some(()))
    })
    .await?;
    widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 4}})),
        )
        .await?;
    eventually(WAIT, "the change to be mirrored", || async {
        let mirror = config_maps.get_opt("w-mirror").await?;
        let widget = widgets.get("w").await?;
        let observed =
            widget.data["status"]["observedGeneration"] == json!(widget.metadata.generation);
        Ok((mirror
            .and_then(|c| c.data)
            .is_some_and(|d| d["size"] == "4")
            && observed)
            .then_some(()))
    })
    .await?;
    config_maps
        .delete("w-mirror", &DeleteParams::default())
        .await?;
    eventually(WAIT, "the deleted mirror to be recreated", || async {
        Ok(config_maps.get_opt("w-mirror").await?.map(|_| ()))
    })
    .await?;
    widgets.delete("w", &DeleteParams::default()).await?;
    eventually(WAIT, "the mirror to be garbage collected", || async {
        Ok(config_maps
            .get_opt("w-mirror")
            .await?
            .is_none()
            .then_some(()))
    })
    .await?;
    assert!(
        !controller.is_finished(),
        "the controller stopped: {:?}",
        controller.await
    );
    controller.abort();
    namespace.delete().await?;
    crd.delete().await
}
