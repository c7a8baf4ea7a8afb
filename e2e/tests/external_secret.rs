//! The ExternalSecret controller, run as the real binary against the cluster: a sync writes the
//! target Secret with upstream's labels, annotations, owner and status; drift is repaired; a
//! provider losing a key never empties the Secret under `Retain`; `Delete` removes it; a
//! restart neither calls the provider nor rewrites anything; store access rules hold.
//!
//! Each test's controller runs with its own `--controller-class` and the test's stores name
//! it, so the test never touches objects of a controller already running on the cluster.

mod support;

use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, is_not_found, string_data,
    unique_name,
};
use external_secrets_crds::v1::{ClusterSecretStore, ExternalSecret, SecretStore};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use support::{
    Setup, WAIT, external_secret, fake_data, force_sync_until, pairs, secret_store, wait_reason,
};

#[tokio::test]
async fn sync_writes_owned_secret_and_repairs_drift() -> anyhow::Result<()> {
    let setup = Setup::start("es-sync", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let secrets: Api<Secret> = setup.api();
    let spec = json!({
        "target": {"name": "db-credentials"},
        "dataFrom": [{"extract": {"key": "/db/config"}}],
    });
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("db", "store", spec)?,
        )
        .await?;

    let (es, ready) =
        wait_reason(&external_secrets, "db", "SecretSynced", &setup.controller).await?;
    assert_eq!(
        ready,
        ["True", "SecretSynced", "secret synced"].map(String::from)
    );
    let status = es.status.clone().unwrap_or_default();
    assert_eq!(
        status.binding.as_ref().map(|b| b.name.as_str()),
        Some("db-credentials")
    );
    assert!(status.refresh_time.is_some(), "refreshTime is set");
    let generation = es.metadata.generation.unwrap_or_default();
    assert!(
        status
            .synced_resource_version
            .as_deref()
            .is_some_and(|v| v.starts_with(&format!("{generation}-"))),
        "syncedResourceVersion {:?}",
        status.synced_resource_version
    );

    let secret = secrets.get("db-credentials").await?;
    let expected = pairs(&[
        ("user", "app"),
        ("password", "first-password"),
        ("host", "db.local"),
        ("port", "5432"),
    ]);
    assert_eq!(string_data(&secret), expected);
    assert_eq!(
        secret
            .labels()
            .get("reconcile.external-secrets.io/managed")
            .map(String::as_str),
        Some("true")
    );
    assert!(
        secret
            .annotations()
            .contains_key("reconcile.external-secrets.io/data-hash")
    );
    let owner = secret
        .owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .expect("creationPolicy Owner sets a controller ownerReference");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("ExternalSecret", "db")
    );
    assert_eq!(owner.uid, es.uid().unwrap_or_default());

    // Someone edits the data: the next look at the Secret restores it.
    secrets
        .patch(
            "db-credentials",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"password": "ZWRpdGVk"}})),
        )
        .await?;
    eventually(WAIT, "edited Secret restored", || async {
        let secret = secrets.get("db-credentials").await?;
        Ok((string_data(&secret) == expected).then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;

    // Someone deletes the Secret: it comes back.
    secrets
        .delete("db-credentials", &DeleteParams::default())
        .await?;
    eventually(WAIT, "deleted Secret restored", || async {
        match secrets.get("db-credentials").await {
            Ok(secret) => Ok((string_data(&secret) == expected).then_some(())),
            Err(kube::Error::Api(response)) if response.code == 404 => Ok(None),
            Err(error) => Err(error.into()),
        }
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;

    // A changed spec syncs at once, not at the next refresh.
    let mut changed = external_secrets.get("db").await?;
    changed.spec.data_from.clear();
    external_secrets
        .replace("db", &PostParams::default(), &changed)
        .await?;
    eventually(WAIT, "Secret without dataFrom keys", || async {
        let secret = secrets.get("db-credentials").await?;
        Ok((!string_data(&secret).contains_key("host")).then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;

    let metrics = setup.controller.metrics().await?;
    for name in [
        "externalsecret_sync_calls_total",
        "externalsecret_status_condition",
        "externalsecret_reconcile_duration",
        "externalsecret_provider_api_calls_count",
        "rest_client_requests_total{",
        "controller_runtime_active_workers{controller=\"externalsecret\"}",
        "controller_runtime_max_concurrent_reconciles{controller=\"externalsecret\"}",
        "workqueue_adds_total{controller=\"externalsecret\",name=\"externalsecret\"}",
        "workqueue_work_duration_seconds_count{controller=\"externalsecret\"",
        "workqueue_queue_duration_seconds_count{controller=\"externalsecret\"",
        "workqueue_unfinished_work_seconds{controller=\"externalsecret\"",
        "workqueue_longest_running_processor_seconds{controller=\"externalsecret\"",
        "workqueue_retries_total{controller=\"externalsecret\"",
        "workqueue_depth{controller=\"secretstore\"",
        "process_cpu_seconds_total ",
        "process_resident_memory_bytes ",
        "process_start_time_seconds ",
        "process_open_fds ",
    ] {
        assert!(metrics.contains(name), "metric {name} missing:\n{metrics}");
    }
    // Once everything is synced no request waits: the depth returns to zero.
    eventually(WAIT, "an empty ExternalSecret queue", || async {
        let metrics = setup.controller.metrics().await?;
        Ok(metrics
            .contains(
                "workqueue_depth{controller=\"externalsecret\",name=\"externalsecret\",priority=\"\"} 0",
            )
            .then_some(()))
    })
    .await?;
    assert!(
        !metrics.contains("first-password"),
        "metrics must not carry secret values"
    );
    setup.finish().await
}

/// Sum of `externalsecret_provider_api_calls_count` samples in a metrics page.
fn provider_calls(metrics: &str) -> f64 {
    metrics
        .lines()
        .filter(|line| line.starts_with("externalsecret_provider_api_calls_count{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test]
async fn restart_neither_refetches_nor_rewrites() -> anyhow::Result<()> {
    let mut setup = Setup::start("es-restart", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let secrets: Api<Secret> = setup.api();
    for name in ["first", "second", "third"] {
        external_secrets
            .create(
                &PostParams::default(),
                &external_secret(name, "store", json!({}))?,
            )
            .await?;
    }
    let mut before = Vec::new();
    for name in ["first", "second", "third"] {
        let (es, _) =
            wait_reason(&external_secrets, name, "SecretSynced", &setup.controller).await?;
        before.push((
            es.resource_version(),
            secrets.get(name).await?.resource_version(),
        ));
    }
    assert!(provider_calls(&setup.controller.metrics().await?) >= 1.0);

    // Scoped to this test's namespace: ExternalSecrets of other tests whose store does not
    // exist belong to no controller class, so every controller would report on them.
    let scope = ["--namespace", setup.namespace.name.as_str()];
    let old = std::mem::replace(
        &mut setup.controller,
        ControllerProcess::start(&setup.cluster, &setup.class, &scope).await?,
    );
    old.stop().await?;
    // The new controller has seen all three once their reconcile durations are recorded.
    eventually(
        WAIT,
        "restarted controller reconciled all three",
        || async {
            let metrics = setup.controller.metrics().await?;
            let seen = ["first", "second", "third"]
                .iter()
                .all(|name| metrics.contains(&format!("name=\"{name}\"")));
            Ok(seen.then_some(()))
        },
    )
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let metrics = setup.controller.metrics().await?;
    assert_eq!(
        provider_calls(&metrics),
        0.0,
        "provider calls after restart:\n{metrics}"
    );
    // Nothing per ExternalSecret beyond the initial lists and watches (issue 24): no Secret or
    // ExternalSecret is read one by one, nothing is written.
    let requests = e2e::bench::requests_by_resource(&metrics);
    let per_object: Vec<_> = requests
        .iter()
        .filter(|((verb, resource), _)| {
            let ours = resource.starts_with("secrets") || resource.starts_with("externalsecrets");
            ours && !matches!(verb.as_str(), "list" | "watch")
        })
        .collect();
    assert!(
        per_object.is_empty(),
        "requests per object after restart: {per_object:?}\n{}",
        setup.controller.log()
    );
    assert!(
        requests.contains_key(&("list".to_owned(), "secrets".to_owned())),
        "the request counter sees the managed-Secret list: {requests:?}"
    );
    for (name, (es_version, secret_version)) in ["first", "second", "third"].iter().zip(before) {
        let es = external_secrets.get(name).await?;
        assert_eq!(es.resource_version(), es_version, "{name} status rewritten");
        let secret = secrets.get(name).await?;
        assert_eq!(
            secret.resource_version(),
            secret_version,
            "{name} Secret rewritten"
        );
    }
    setup.finish().await
}

#[tokio::test]
async fn missing_remote_key_retains_or_deletes() -> anyhow::Result<()> {
    let setup = Setup::start("es-deletion", &[]).await?;
    let stores: Api<SecretStore> = setup.api();
    let external_secrets: Api<ExternalSecret> = setup.api();
    let secrets: Api<Secret> = setup.api();
    let retained = json!({"target": {"deletionPolicy": "Retain"}});
    let deleted = json!({"target": {"deletionPolicy": "Delete"}});
    for (name, spec) in [("retained", retained), ("deleted", deleted)] {
        external_secrets
            .create(
                &PostParams::default(),
                &external_secret(name, "store", spec)?,
            )
            .await?;
        wait_reason(&external_secrets, name, "SecretSynced", &setup.controller).await?;
    }

    // The provider loses both keys the ExternalSecrets read.
    stores
        .patch(
            "store",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"provider": {"fake": {"data": [
                {"key": "/db/config", "value": "{}"},
            ]}}}})),
        )
        .await?;

    // As upstream, a store change alone does not refetch: force a sync the upstream way.
    let (_, ready) = force_sync_until(
        &external_secrets,
        "retained",
        "SecretSyncedError",
        &setup.controller,
    )
    .await?;
    assert_eq!(ready[0], "False");
    assert!(
        ready[2].starts_with(
            "could not get secret data from provider: error processing spec.data[0] (key: /db/user), err: "
        ),
        "message: {}",
        ready[2]
    );
    assert!(
        !ready[2].contains("first-password"),
        "no secret value in {}",
        ready[2]
    );
    let kept = secrets.get("retained").await?;
    assert_eq!(
        string_data(&kept),
        pairs(&[("user", "app"), ("password", "first-password")]),
        "Retain keeps the synced Secret untouched"
    );

    let (_, ready) = force_sync_until(
        &external_secrets,
        "deleted",
        "SecretDeleted",
        &setup.controller,
    )
    .await?;
    assert_eq!(
        ready,
        [
            "True",
            "SecretDeleted",
            "secret deleted due to DeletionPolicy=Delete"
        ]
        .map(String::from)
    );
    match secrets.get("deleted").await {
        Err(error) if is_not_found(&error) => {}
        other => anyhow::bail!("Secret `deleted` should be gone, got {other:?}"),
    }
    setup.finish().await
}

#[tokio::test]
async fn merge_and_orphan_policies() -> anyhow::Result<()> {
    let setup = Setup::start("es-policies", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let secrets: Api<Secret> = setup.api();

    // Merge into a Secret that does not exist yet: nothing created; upstream's
    // markAsDone(SecretMissing) (externalsecret_controller.go; "mergeWithSecretErr" in
    // externalsecret_controller_test.go expects Ready=True): refreshTime set, no Warning event.
    let merge = json!({"target": {"name": "shared", "creationPolicy": "Merge"}});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("merge", "store", merge)?,
        )
        .await?;
    let (missing, ready) = wait_reason(
        &external_secrets,
        "merge",
        "SecretMissing",
        &setup.controller,
    )
    .await?;
    assert_eq!(
        ready,
        [
            "True",
            "SecretMissing",
            "secret will not be created due to CreationPolicy=Merge"
        ]
        .map(String::from)
    );
    let status = missing.status.unwrap_or_default();
    assert!(status.refresh_time.is_some(), "refreshTime is set");
    assert!(status.synced_resource_version.is_some());
    assert!(is_not_found(&secrets.get("shared").await.unwrap_err()));
    // Events are published before the status is written: none may warn about the missing
    // target (a Warning from the flood gate before the store was validated may precede it).
    let events: Api<Event> = setup.api();
    let warnings: Vec<String> = events
        .list(&Default::default())
        .await?
        .items
        .into_iter()
        .filter(|event| {
            event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("merge")
                && event.type_.as_deref() == Some("Warning")
        })
        .filter_map(|event| event.note)
        .filter(|note| note.contains("CreationPolicy=Merge"))
        .collect();
    assert!(warnings.is_empty(), "Warning events: {warnings:?}");

    // Once someone creates it, our keys are merged in and theirs kept, with no owner set.
    let theirs: Secret = serde_json::from_value(json!({
        "metadata": {"name": "shared"},
        "stringData": {"theirs": "kept"},
    }))?;
    secrets.create(&PostParams::default(), &theirs).await?;
    // A label change is upstream's way to force a sync.
    external_secrets
        .patch(
            "merge",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"force-sync": "1"}}})),
        )
        .await?;
    wait_reason(
        &external_secrets,
        "merge",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let merged = secrets.get("shared").await?;
    assert_eq!(
        string_data(&merged),
        pairs(&[
            ("theirs", "kept"),
            ("user", "app"),
            ("password", "first-password")
        ])
    );
    assert!(
        merged.owner_references().is_empty(),
        "Merge never takes ownership"
    );

    // Orphan: created, but without an ownerReference.
    let orphan = json!({"target": {"creationPolicy": "Orphan"}});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("orphan", "store", orphan)?,
        )
        .await?;
    wait_reason(
        &external_secrets,
        "orphan",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let orphaned = secrets.get("orphan").await?;
    assert!(orphaned.owner_references().is_empty());
    assert_eq!(string_data(&orphaned).len(), 2);

    // CreateOrMerge: a missing target is created without an owner; deleted, it comes back.
    let create_or_merge = json!({"target": {"name": "com", "creationPolicy": "CreateOrMerge"}});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("create-or-merge", "store", create_or_merge)?,
        )
        .await?;
    wait_reason(
        &external_secrets,
        "create-or-merge",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let created = secrets.get("com").await?;
    assert!(created.owner_references().is_empty());
    assert_eq!(string_data(&created).len(), 2);
    secrets.delete("com", &DeleteParams::default()).await?;
    eventually(WAIT, "CreateOrMerge target recreated", || async {
        Ok(secrets.get_opt("com").await?.map(|_| ()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    setup.finish().await
}

#[tokio::test]
async fn store_access_rules() -> anyhow::Result<()> {
    let setup = Setup::start("es-access", &[]).await?;
    let other = TestNamespace::create(&setup.cluster, "es-access-other").await?;
    let external_secrets: Api<ExternalSecret> = setup.api();

    // A SecretStore of another namespace is invisible.
    let foreign: Api<SecretStore> = Api::namespaced(setup.client(), &other.name);
    foreign
        .create(
            &PostParams::default(),
            &secret_store("foreign", &setup.class, fake_data())?,
        )
        .await?;
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("cross-namespace", "foreign", json!({}))?,
        )
        .await?;
    let (_, ready) = wait_reason(
        &external_secrets,
        "cross-namespace",
        "SecretSyncedError",
        &setup.controller,
    )
    .await?;
    assert!(ready[2].contains("not found"), "message: {}", ready[2]);

    // A ClusterSecretStore whose conditions admit only the other namespace.
    let cluster_stores: Api<ClusterSecretStore> = Api::all(setup.client());
    let store_name = unique_name("e2e-cluster-store");
    let cluster_store: ClusterSecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": store_name},
        "spec": {
            "controller": setup.class,
            "provider": {"fake": {"data": fake_data()}},
            "conditions": [{"namespaces": [other.name]}],
        },
    }))?;
    cluster_stores
        .create(&PostParams::default(), &cluster_store)
        .await?;
    let denied = json!({"secretStoreRef": {"name": store_name, "kind": "ClusterSecretStore"}});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("denied", "unused", denied.clone())?,
        )
        .await?;
    let result = wait_reason(
        &external_secrets,
        "denied",
        "SecretSyncedError",
        &setup.controller,
    )
    .await;
    let allowed: Api<ExternalSecret> = Api::namespaced(setup.client(), &other.name);
    let checks = async {
        let (_, ready) = result?;
        assert!(
            ready[2].contains("denied by spec.condition"),
            "message: {}",
            ready[2]
        );
        assert!(
            is_not_found(&setup.api::<Secret>().get("denied").await.unwrap_err()),
            "no Secret for a denied namespace"
        );
        // The admitted namespace syncs from the same store.
        allowed
            .create(
                &PostParams::default(),
                &external_secret("allowed", "unused", denied)?,
            )
            .await?;
        wait_reason(&allowed, "allowed", "SecretSynced", &setup.controller).await?;
        anyhow::Ok(())
    }
    .await;
    cluster_stores
        .delete(&store_name, &DeleteParams::default())
        .await?;
    checks?;
    other.delete().await?;
    setup.finish().await
}

#[tokio::test]
async fn namespace_flag_scopes_the_controller() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let watched = TestNamespace::create(&cluster, "es-scoped").await?;
    let setup = Setup::start_unvalidated("es-unscoped", &["--namespace", &watched.name]).await?;
    let stores: Api<SecretStore> = Api::namespaced(setup.client(), &watched.name);
    stores
        .create(
            &PostParams::default(),
            &secret_store("store", &setup.class, fake_data())?,
        )
        .await?;
    for namespace in [&watched.name, &setup.namespace.name] {
        Api::<ExternalSecret>::namespaced(setup.client(), namespace)
            .create(
                &PostParams::default(),
                &external_secret("scoped", "store", json!({}))?,
            )
            .await?;
    }
    let in_scope: Api<ExternalSecret> = Api::namespaced(setup.client(), &watched.name);
    wait_reason(&in_scope, "scoped", "SecretSynced", &setup.controller).await?;
    // The setup namespace is out of scope: its ExternalSecret and store are never touched.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        setup
            .api::<ExternalSecret>()
            .get("scoped")
            .await?
            .status
            .is_none()
    );
    assert!(
        setup
            .api::<SecretStore>()
            .get("store")
            .await?
            .status
            .is_none()
    );
    assert!(is_not_found(
        &setup.api::<Secret>().get("scoped").await.unwrap_err()
    ));
    watched.delete().await?;
    setup.finish().await
}

#[tokio::test]
async fn identical_reads_are_shared_across_external_secrets() -> anyhow::Result<()> {
    // A long window makes sharing independent of how fast the controller gets to each one.
    let setup = Setup::start("es-dedup", &["--provider-read-dedup-window", "1h"]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let names: Vec<String> = (0..5).map(|index| format!("reader-{index}")).collect();
    for name in &names {
        external_secrets
            .create(
                &PostParams::default(),
                &external_secret(name, "store", json!({}))?,
            )
            .await?;
    }
    for name in &names {
        wait_reason(&external_secrets, name, "SecretSynced", &setup.controller).await?;
    }
    // Five ExternalSecrets reading the same two keys: two provider reads.
    let metrics = setup.controller.metrics().await?;
    assert_eq!(provider_calls(&metrics), 2.0, "{metrics}");
    setup.finish().await
}

#[tokio::test]
async fn template_from_config_maps_and_secrets() -> anyhow::Result<()> {
    let setup = Setup::start("es-tmpl-from", &[]).await?;
    let es_api = setup.api::<ExternalSecret>();
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "app-templates"},
        "data": {
            "config.yml": "user: {{ .user }}\npassword: {{ .password }}\n",
            "pairs": "DB_USER: {{ .user | upper }}\n",
        },
    }))?;
    setup
        .api::<ConfigMap>()
        .create(&PostParams::default(), &config_map)
        .await?;
    let es = external_secret(
        "from-templates",
        "store",
        json!({"target": {"name": "rendered", "template": {"templateFrom": [
            {"configMap": {"name": "app-templates", "items": [
                {"key": "config.yml"},
                {"key": "pairs", "templateAs": "KeysAndValues"},
            ]}},
            {"target": "Labels", "secret": {"name": "label-templates", "items": [
                {"key": "team", "templateAs": "KeysAndValues"},
            ]}},
        ]}}}),
    )?;
    es_api.create(&PostParams::default(), &es).await?;

    // The Secret holding the label template does not exist yet: a retried failure (once the
    // store is Ready: the flood gate refuses it before its first validation).
    let missing = "templateFrom[1].secret: secret \"label-templates\" not found";
    let ready = eventually(WAIT, "the missing template Secret reported", || async {
        let es = es_api.get("from-templates").await?;
        Ok(support::ready_of(&es)
            .filter(|ready| ready[1] == "SecretSyncedError" && ready[2].contains(missing)))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    assert_eq!(ready[0], "False");
    let labels: Secret = serde_json::from_value(json!({
        "metadata": {"name": "label-templates"},
        "stringData": {"team": "owner: {{ .user }}"},
    }))?;
    setup
        .api::<Secret>()
        .create(&PostParams::default(), &labels)
        .await?;
    wait_reason(&es_api, "from-templates", "SecretSynced", &setup.controller).await?;
    let rendered = setup.api::<Secret>().get("rendered").await?;
    assert_eq!(
        string_data(&rendered),
        pairs(&[
            ("config.yml", "user: app\npassword: first-password\n"),
            ("DB_USER", "APP"),
        ])
    );
    assert_eq!(
        rendered.labels().get("owner").map(String::as_str),
        Some("app")
    );
    setup.finish().await
}

#[tokio::test]
async fn generators_fill_data_from() -> anyhow::Result<()> {
    let setup = Setup::start("es-generators", &[]).await?;
    setup
        .create_generator(
            "Password",
            "passwords",
            "db-password",
            json!({"length": 32, "digits": 5, "symbols": 0, "allowRepeat": true,
                "secretKeys": ["generated-password"]}),
        )
        .await?;
    setup
        .create_generator("UUID", "uuids", "id", json!({}))
        .await?;
    let reference = |kind: &str, name: &str| {
        json!({"sourceRef": {"generatorRef": {
            "apiVersion": "generators.external-secrets.io/v1alpha1", "kind": kind, "name": name}}})
    };
    let mut renamed = reference("UUID", "id");
    renamed["rewrite"] = json!([{"regexp": {"source": "uuid", "target": "instance-id"}}]);
    let es = external_secret(
        "generated",
        "store",
        json!({"dataFrom": [reference("Password", "db-password"), renamed]}),
    )?;
    let es_api = setup.api::<ExternalSecret>();
    es_api.create(&PostParams::default(), &es).await?;
    wait_reason(&es_api, "generated", "SecretSynced", &setup.controller).await?;
    let data = string_data(&setup.api::<Secret>().get("generated").await?);
    let password = &data["generated-password"];
    assert_eq!(password.len(), 32);
    assert_eq!(password.chars().filter(char::is_ascii_digit).count(), 5);
    assert_eq!(data["instance-id"].len(), 36);
    assert_eq!(data["user"], "app", "store data sits beside generated data");
    assert_eq!(
        data["password"], "first-password",
        "spec.data wins over dataFrom"
    );

    // A generator that does not exist: a retried failure naming the entry.
    let missing = external_secret(
        "missing-generator",
        "store",
        json!({"dataFrom": [reference("Password", "nope")]}),
    )?;
    es_api.create(&PostParams::default(), &missing).await?;
    let (_, ready) = wait_reason(
        &es_api,
        "missing-generator",
        "SecretSyncedError",
        &setup.controller,
    )
    .await?;
    assert!(
        ready[2].contains("spec.dataFrom[0].sourceRef.generatorRef: could not get generator"),
        "{ready:?}"
    );
    setup.finish().await
}

#[tokio::test]
async fn template_delimiter_flags_apply_to_target_templates() -> anyhow::Result<()> {
    let setup = Setup::start(
        "es-delimiters",
        &[
            "--template-left-delimiter",
            "<%",
            "--template-right-delimiter",
            "%>",
        ],
    )
    .await?;
    let es_api = setup.api::<ExternalSecret>();
    let es = external_secret(
        "custom-delimiters",
        "store",
        json!({"target": {"template": {"data": {
            "dsn": "postgres://<% .user %>:<% .password %>@db",
            "braces": "{{ kept as text }}",
        }}}}),
    )?;
    es_api.create(&PostParams::default(), &es).await?;
    wait_reason(
        &es_api,
        "custom-delimiters",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let data = string_data(&setup.api::<Secret>().get("custom-delimiters").await?);
    assert_eq!(data["dsn"], "postgres://app:first-password@db");
    assert_eq!(data["braces"], "{{ kept as text }}");
    setup.finish().await
}

#[tokio::test]
async fn renamed_target_deletes_the_old_owned_secret() -> anyhow::Result<()> {
    let setup = Setup::start("es-rename", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let secrets: Api<Secret> = setup.api();
    let es = external_secret("renamed", "store", json!({"target": {"name": "first"}}))?;
    external_secrets.create(&PostParams::default(), &es).await?;
    wait_reason(
        &external_secrets,
        "renamed",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let first = secrets.get("first").await?;
    assert!(
        first
            .labels()
            .contains_key("reconcile.external-secrets.io/created-by"),
        "creationPolicy Owner labels the Secret with its creator"
    );
    let rename = json!({"spec": {"target": {"name": "second"}}});
    external_secrets
        .patch("renamed", &PatchParams::default(), &Patch::Merge(rename))
        .await?;
    eventually(WAIT, "second written and first deleted", || async {
        let second = secrets.get_opt("second").await?;
        let first = secrets.get_opt("first").await?;
        Ok((second.is_some() && first.is_none()).then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    setup.finish().await
}
