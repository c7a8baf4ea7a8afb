//! The PushSecret controller, run as the real binary: a Secret is pushed to a `fake` store
//! (and read back through an ExternalSecret of the same store), status and events say so,
//! `IfNotExists` leaves existing values, a key the provider refuses is reported, a Secret of
//! another namespace is never read, and deleting the PushSecret removes what it pushed.

use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
    wait_for_store_released,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use external_secrets_crds::v1alpha1::PushSecret;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

fn push_secret(
    name: &str,
    source: &str,
    remote_key: &str,
    extra: Value,
) -> anyhow::Result<PushSecret> {
    let mut spec = json!({
        "refreshInterval": "1h",
        "secretStoreRefs": [{"name": "store", "kind": "SecretStore"}],
        "selector": {"secret": {"name": source}},
        "data": [{"match": {"secretKey": "password", "remoteRef": {"remoteKey": remote_key}}}],
    });
    if let (Some(base), Value::Object(extra)) = (spec.as_object_mut(), extra) {
        base.extend(extra);
    }
    Ok(serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": name},
        "spec": spec,
    }))?)
}

/// The Ready condition as [status, reason, message] once its reason is `reason`.
async fn wait_reason(
    api: &Api<PushSecret>,
    name: &str,
    reason: &str,
    controller: &ControllerProcess,
) -> anyhow::Result<(PushSecret, [String; 3])> {
    eventually(WAIT, &format!("PushSecret {name} {reason}"), || async {
        let ps = api.get(name).await?;
        let ready = ps
            .status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.r#type == "Ready"))
            .map(|c| {
                [
                    c.status.clone(),
                    c.reason.clone().unwrap_or_default(),
                    c.message.clone().unwrap_or_default(),
                ]
            });
        Ok(ready.filter(|r| r[1] == reason).map(|r| (ps, r)))
    })
    .await
    .map_err(|error| error.context(controller.log()))
}

/// Reads `remote_key` back from the store through a new ExternalSecret; the Ready reason and
/// the synced value, if any.
async fn read_back(
    cluster: &TestCluster,
    namespace: &str,
    remote_key: &str,
    controller: &ControllerProcess,
) -> anyhow::Result<(String, Option<String>)> {
    let name = unique_name("reader");
    let es: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": name},
        "spec": {
            "secretStoreRef": {"name": "store"},
            "target": {"deletionPolicy": "Retain"},
            "data": [{"secretKey": "value", "remoteRef": {"key": remote_key}}],
        },
    }))?;
    let api: Api<ExternalSecret> = Api::namespaced(cluster.client.clone(), namespace);
    api.create(&PostParams::default(), &es).await?;
    let reason = eventually(WAIT, "reader synced or failed", || async {
        let es = api.get(&name).await?;
        Ok(es
            .status
            .and_then(|s| s.conditions.into_iter().next())
            .and_then(|c| c.reason))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), namespace);
    let value = secrets.get_opt(&name).await?.and_then(|s| {
        s.data?
            .get("value")
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
    });
    Ok((reason, value))
}

/// A namespace holding an empty `fake` SecretStore `store`, and a controller of its own class
/// that shares no reads (read-backs follow pushes at once).
async fn with_empty_store(
    prefix: &str,
) -> anyhow::Result<(TestCluster, TestNamespace, ControllerProcess)> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, prefix).await?;
    let class = unique_name("e2e-class");
    let controller =
        ControllerProcess::start(&cluster, &class, &["--provider-read-dedup-window", "0s"]).await?;
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "store"},
        "spec": {"controller": class, "provider": {"fake": {"data": []}}},
    }))?;
    Api::<SecretStore>::namespaced(cluster.client.clone(), &namespace.name)
        .create(&PostParams::default(), &store)
        .await?;
    Ok((cluster, namespace, controller))
}

#[tokio::test]
async fn push_read_back_policies_and_cleanup() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "push").await?;
    let other = TestNamespace::create(&cluster, "push-other").await?;
    let class = unique_name("e2e-class");
    // Reads back right after a push or delete must not share an earlier read of the key.
    let controller =
        ControllerProcess::start(&cluster, &class, &["--provider-read-dedup-window", "0s"]).await?;
    let client = cluster.client.clone();
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": "store"},
        "spec": {"controller": class, "provider": {"fake": {"data": [
            {"key": "/configured/key", "value": "not-pushed"},
        ]}}},
    }))?;
    Api::<SecretStore>::namespaced(client.clone(), &namespace.name)
        .create(&PostParams::default(), &store)
        .await?;
    // Test data only.
    for target in [&namespace.name, &other.name] {
        let source: Secret = serde_json::from_value(json!({
            "metadata": {"name": "source"},
            "stringData": {"password": format!("pushed-from-{target}")},
        }))?;
        Api::<Secret>::namespaced(client.clone(), target)
            .create(&PostParams::default(), &source)
            .await?;
    }
    let api: Api<PushSecret> = Api::namespaced(client.clone(), &namespace.name);

    // Push, with cleanup on deletion.
    api.create(
        &PostParams::default(),
        &push_secret(
            "push",
            "source",
            "/pushed/password",
            json!({"deletionPolicy": "Delete"}),
        )?,
    )
    .await?;
    let (pushed, ready) = wait_reason(&api, "push", "Synced", &controller).await?;
    assert_eq!(
        ready,
        ["True", "Synced", "PushSecret synced successfully"].map(String::from)
    );
    let synced = &pushed.status.as_ref().unwrap().synced_push_secrets;
    assert!(
        synced["SecretStore/store"].contains_key("/pushed/password"),
        "{synced:?}"
    );
    assert!(
        pushed
            .metadata
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == "pushsecret.externalsecrets.io/finalizer")
    );
    let expected = format!("pushed-from-{}", namespace.name);
    let (reason, value) =
        read_back(&cluster, &namespace.name, "/pushed/password", &controller).await?;
    assert_eq!(
        (reason.as_str(), value.as_deref()),
        ("SecretSynced", Some(expected.as_str()))
    );

    // IfNotExists leaves the existing value alone and says so.
    api.create(
        &PostParams::default(),
        &push_secret(
            "keep",
            "source",
            "/configured/key",
            json!({"updatePolicy": "IfNotExists"}),
        )?,
    )
    .await?;
    let (_, ready) = wait_reason(&api, "keep", "Synced", &controller).await?;
    assert_eq!(
        ready[2],
        "PushSecret synced successfully. Existing secrets in providers unchanged."
    );
    let (_, value) = read_back(&cluster, &namespace.name, "/configured/key", &controller).await?;
    assert_eq!(value.as_deref(), Some("not-pushed"));

    // Replace onto a key the provider does not let us own: Errored, named.
    api.create(
        &PostParams::default(),
        &push_secret("clash", "source", "/configured/key", json!({}))?,
    )
    .await?;
    let (_, ready) = wait_reason(&api, "clash", "Errored", &controller).await?;
    assert!(
        ready[2].starts_with(
            "set secret failed: could not write remote ref password to target secretstore store:"
        ),
        "{}",
        ready[2]
    );

    // A source that only exists in another namespace is never read.
    Api::<Secret>::namespaced(client.clone(), &namespace.name)
        .delete("source", &DeleteParams::default())
        .await?;
    api.create(
        &PostParams::default(),
        &push_secret("elsewhere", "source", "/pushed/other", json!({}))?,
    )
    .await?;
    let (_, ready) = wait_reason(&api, "elsewhere", "Errored", &controller).await?;
    assert!(
        ready[2].starts_with("could not get source secret"),
        "{}",
        ready[2]
    );

    // Deleting the PushSecret removes what it pushed, and only that.
    api.delete("push", &DeleteParams::default()).await?;
    eventually(WAIT, "PushSecret push gone", || async {
        Ok(api.get_opt("push").await?.is_none().then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    // Reads that started before the delete may still answer: look until one sees it gone.
    eventually(WAIT, "pushed value deleted from the store", || async {
        let (reason, _) =
            read_back(&cluster, &namespace.name, "/pushed/password", &controller).await?;
        Ok((reason == "SecretSyncedError").then_some(()))
    })
    .await
    .map_err(|error| error.context(controller.log()))?;
    let (_, value) = read_back(&cluster, &namespace.name, "/configured/key", &controller).await?;
    assert_eq!(value.as_deref(), Some("not-pushed"));

    let stores: Api<SecretStore> = Api::namespaced(client.clone(), &namespace.name);
    wait_for_store_released(&stores, "store", &controller).await?;
    controller.stop().await?;
    other.delete().await?;
    namespace.delete().await
}

#[tokio::test]
async fn templates_and_data_to_shape_what_is_pushed() -> anyhow::Result<()> {
    let (cluster, namespace, controller) = with_empty_store("push-bulk").await?;
    let client = cluster.client.clone();
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "app-env"},
        "stringData": {"APP_HOST": "db.local", "APP_USER": "app", "password": "pw"},
    }))?;
    Api::<Secret>::namespaced(client.clone(), &namespace.name)
        .create(&PostParams::default(), &source)
        .await?;
    let api: Api<PushSecret> = Api::namespaced(client.clone(), &namespace.name);

    // Every APP_ key on its own, renamed; a templated key explicitly.
    let bulk = push_secret(
        "bulk",
        "app-env",
        "/app/dsn",
        json!({
            "data": [{"match": {"secretKey": "dsn", "remoteRef": {"remoteKey": "/app/dsn"}}}],
            "template": {"data": {"dsn": "postgres://{{ .APP_USER }}:{{ .password }}@{{ .APP_HOST }}"}},
            "dataTo": [{
                "storeRef": {"name": "store"},
                "match": {"regexp": "^APP_"},
                "rewrite": [{"regexp": {"source": "^APP_(.*)$", "target": "/app/$1"}},
                            {"transform": {"template": "{{ .value | lower }}"}}],
            }],
        }),
    )?;
    api.create(&PostParams::default(), &bulk).await?;
    let (pushed, ready) = wait_reason(&api, "bulk", "Synced", &controller).await?;
    assert_eq!(ready[0], "True", "{ready:?}");
    let recorded: Vec<String> = pushed
        .status
        .iter()
        .flat_map(|status| status.synced_push_secrets.values())
        .flat_map(|entries| entries.keys().cloned())
        .collect();
    assert_eq!(recorded, ["/app/dsn", "/app/host", "/app/user"]);
    for (remote_key, expected) in [
        ("/app/host", "db.local"),
        ("/app/user", "app"),
        ("/app/dsn", "postgres://app:pw@db.local"),
    ] {
        let (reason, value) = read_back(&cluster, &namespace.name, remote_key, &controller).await?;
        assert_eq!(
            (reason.as_str(), value.as_deref()),
            ("SecretSynced", Some(expected)),
            "{remote_key}"
        );
    }

    // A dataTo entry for a store that secretStoreRefs does not list: a named error.
    let stray = push_secret(
        "stray",
        "app-env",
        "/stray",
        json!({"dataTo": [{"storeRef": {"name": "elsewhere"}}]}),
    )?;
    api.create(&PostParams::default(), &stray).await?;
    let (_, ready) = wait_reason(&api, "stray", "Errored", &controller).await?;
    assert_eq!(
        ready[2], "spec.dataTo[0]: storeRef \"elsewhere\" not found in secretStoreRefs",
        "{ready:?}"
    );

    controller.stop().await?;
    namespace.delete().await
}

#[tokio::test]
async fn a_deleted_source_takes_what_it_pushed_with_it_under_delete() -> anyhow::Result<()> {
    let (cluster, namespace, controller) = with_empty_store("push-source").await?;
    let client = cluster.client.clone();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace.name);
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "short-lived"},
        "stringData": {"password": "soon-gone"},
    }))?;
    secrets.create(&PostParams::default(), &source).await?;
    let api: Api<PushSecret> = Api::namespaced(client.clone(), &namespace.name);
    let push = push_secret(
        "follows-source",
        "short-lived",
        "/short/lived",
        json!({"refreshInterval": "1s", "deletionPolicy": "Delete"}),
    )?;
    api.create(&PostParams::default(), &push).await?;
    wait_reason(&api, "follows-source", "Synced", &controller).await?;
    let (reason, value) = read_back(&cluster, &namespace.name, "/short/lived", &controller).await?;
    assert_eq!(
        (reason.as_str(), value.as_deref()),
        ("SecretSynced", Some("soon-gone"))
    );

    secrets
        .delete("short-lived", &DeleteParams::default())
        .await?;
    let (pushed, ready) = wait_reason(&api, "follows-source", "SourceDeleted", &controller).await?;
    assert_eq!(
        ready,
        [
            "False",
            "SourceDeleted",
            "source secret deleted; provider secrets cleaned up"
        ]
        .map(String::from)
    );
    assert!(
        pushed
            .status
            .as_ref()
            .is_some_and(|status| status.synced_push_secrets.is_empty())
    );
    let (reason, value) = read_back(&cluster, &namespace.name, "/short/lived", &controller).await?;
    assert_eq!(value, None, "the pushed value was deleted ({reason})");

    // Its finalizer goes while the controller runs.
    api.delete("follows-source", &DeleteParams::default())
        .await?;
    eventually(WAIT, "PushSecret gone", || async {
        Ok(api.get_opt("follows-source").await?.is_none().then_some(()))
    })
    .await?;
    let stores: Api<SecretStore> = Api::namespaced(client.clone(), &namespace.name);
    wait_for_store_released(&stores, "store", &controller).await?;
    controller.stop().await?;
    namespace.delete().await
}

#[tokio::test]
async fn a_generator_can_be_the_source() -> anyhow::Result<()> {
    let (cluster, namespace, controller) = with_empty_store("push-generated").await?;
    let client = cluster.client.clone();
    let resource = kube::discovery::ApiResource {
        group: "generators.external-secrets.io".into(),
        version: "v1alpha1".into(),
        api_version: "generators.external-secrets.io/v1alpha1".into(),
        kind: "Password".into(),
        plural: "passwords".into(),
    };
    let generator: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "generators.external-secrets.io/v1alpha1",
        "kind": "Password",
        "metadata": {"name": "rotated"},
        "spec": {"length": 28, "digits": 4, "symbols": 0},
    }))?;
    Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), &namespace.name, &resource)
        .create(&PostParams::default(), &generator)
        .await?;
    let api: Api<PushSecret> = Api::namespaced(client.clone(), &namespace.name);
    let push: PushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": "generated"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRefs": [{"name": "store", "kind": "SecretStore"}],
            "selector": {"generatorRef": {"apiVersion": "generators.external-secrets.io/v1alpha1",
                "kind": "Password", "name": "rotated"}},
            "data": [{"match": {"secretKey": "password", "remoteRef": {"remoteKey": "/generated"}}}],
        },
    }))?;
    api.create(&PostParams::default(), &push).await?;
    let (_, ready) = wait_reason(&api, "generated", "Synced", &controller).await?;
    assert_eq!(ready[0], "True", "{ready:?}");
    let (reason, value) = read_back(&cluster, &namespace.name, "/generated", &controller).await?;
    assert_eq!(reason, "SecretSynced");
    let value = value.unwrap_or_default();
    assert_eq!(value.len(), 28, "a generated password was pushed");
    assert_eq!(value.chars().filter(char::is_ascii_digit).count(), 4);

    controller.stop().await?;
    namespace.delete().await
}

/// Upstream's store finalizer (common_test.go "should add finalizer when PushSecret with
/// DeletionPolicy=Delete is created", "should remove finalizer when DeletionPolicy changes to
/// None", "should prevent deletion when finalizer exists"): a store keeps
/// `secretstore.externalsecrets.io/finalizer` while a PushSecret with `deletionPolicy: Delete`
/// uses it, so deleting the store waits until that PushSecret has cleaned up through it.
#[tokio::test]
async fn a_store_outlives_the_push_secrets_that_delete_through_it() -> anyhow::Result<()> {
    const FINALIZER: &str = "secretstore.externalsecrets.io/finalizer";
    let (cluster, namespace, controller) = with_empty_store("push-store-fin").await?;
    let client = cluster.client.clone();
    let stores: Api<SecretStore> = Api::namespaced(client.clone(), &namespace.name);
    let held = |stores: Api<SecretStore>, want: bool| async move {
        eventually(
            WAIT,
            &format!("store finalizer present: {want}"),
            || async {
                let store = stores.get("store").await?;
                let has = store.finalizers().iter().any(|f| f == FINALIZER);
                Ok((has == want).then_some(store))
            },
        )
        .await
    };
    let source: Secret = serde_json::from_value(json!({
        "metadata": {"name": "kept-source"},
        "stringData": {"password": "held"},
    }))?;
    Api::<Secret>::namespaced(client.clone(), &namespace.name)
        .create(&PostParams::default(), &source)
        .await?;
    let api: Api<PushSecret> = Api::namespaced(client.clone(), &namespace.name);
    let push = push_secret(
        "deletes-through",
        "kept-source",
        "/kept/source",
        json!({"deletionPolicy": "Delete"}),
    )?;
    let checks = async {
        api.create(&PostParams::default(), &push).await?;
        wait_reason(&api, "deletes-through", "Synced", &controller).await?;
        held(stores.clone(), true).await?;

        let policy = |value: &str| json!({"spec": {"deletionPolicy": value}});
        api.patch(
            "deletes-through",
            &PatchParams::default(),
            &Patch::Merge(policy("None")),
        )
        .await?;
        held(stores.clone(), false).await?;
        api.patch(
            "deletes-through",
            &PatchParams::default(),
            &Patch::Merge(policy("Delete")),
        )
        .await?;
        held(stores.clone(), true).await?;

        // Deleting the store waits for the PushSecret; deleting that removes the pushed value
        // through the store, and then the store goes.
        stores.delete("store", &DeleteParams::default()).await?;
        let terminating = held(stores.clone(), true).await?;
        assert!(terminating.metadata.deletion_timestamp.is_some());
        api.delete("deletes-through", &DeleteParams::default())
            .await?;
        eventually(WAIT, "PushSecret, then store gone", || async {
            let push_gone = api.get_opt("deletes-through").await?.is_none();
            let store_gone = stores.get_opt("store").await?.is_none();
            Ok((push_gone && store_gone).then_some(()))
        })
        .await?;
        anyhow::Ok(())
    }
    .await
    .map_err(|error| error.context(controller.log()));
    checks?;
    controller.stop().await?;
    namespace.delete().await
}
