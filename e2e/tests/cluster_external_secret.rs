//! The ClusterExternalSecret controller, run as the real binary: copies appear in the selected
//! namespaces and sync, a namespace that starts or stops matching gains or loses its copy, a
//! foreign ExternalSecret of the same name is reported and left alone, fan-out shares provider
//! reads, provisioned namespaces carry upstream's `ces-<name>` finalizer (released when a
//! namespace terminates, stops matching, or the template goes), and deleting the
//! ClusterExternalSecret removes its copies.

use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, is_not_found,
    unique_name,
};
use external_secrets_crds::v1::{ClusterExternalSecret, ClusterSecretStore, ExternalSecret};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

/// Whether namespace `name` carries `finalizer`.
async fn holds(namespaces: &Api<Namespace>, name: &str, finalizer: &str) -> anyhow::Result<bool> {
    Ok(namespaces
        .get(name)
        .await?
        .finalizers()
        .iter()
        .any(|held| held == finalizer))
}

fn provisioned(ces: &ClusterExternalSecret) -> Vec<String> {
    ces.status
        .as_ref()
        .map(|status| status.provisioned_namespaces.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn copies_follow_namespace_selection_and_are_removed_with_it() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let class = unique_name("e2e-class");
    let label = unique_name("ces");
    let controller =
        ControllerProcess::start(&cluster, &class, &["--provider-read-dedup-window", "1h"]).await?;
    let first = TestNamespace::create(&cluster, "ces-a").await?;
    let second = TestNamespace::create(&cluster, "ces-b").await?;
    let unselected = TestNamespace::create(&cluster, "ces-c").await?;
    let doomed = TestNamespace::create(&cluster, "ces-d").await?;
    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
    // Selected namespaces carry this test's label value; unselecting removes it.
    let select = |name: String, on: bool| {
        let namespaces = namespaces.clone();
        let value = if on {
            json!(label)
        } else {
            serde_json::Value::Null
        };
        let patch = json!({"metadata": {"labels": {"e2e-ces-test": value}}});
        async move {
            namespaces
                .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await
        }
    };
    select(first.name.clone(), true).await?;
    select(second.name.clone(), true).await?;
    select(doomed.name.clone(), true).await?;

    // A foreign ExternalSecret already holds the name in the third namespace.
    let store_name = unique_name("e2e-ces-store");
    let stores: Api<ClusterSecretStore> = Api::all(cluster.client.clone());
    let store: ClusterSecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": store_name},
        "spec": {"controller": class, "provider": {"fake": {"data": [
            {"key": "/shared/user", "value": "app"},
            {"key": "/shared/password", "value": "fan-out-value"},
        ]}}},
    }))?;
    stores.create(&PostParams::default(), &store).await?;
    let spec = json!({
        "refreshInterval": "1h",
        "secretStoreRef": {"name": store_name, "kind": "ClusterSecretStore"},
        "target": {"name": "shared-credentials"},
        "data": [
            {"secretKey": "user", "remoteRef": {"key": "/shared/user"}},
            {"secretKey": "password", "remoteRef": {"key": "/shared/password"}},
        ],
    });
    let foreign: ExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {"name": "copy"},
        "spec": spec,
    }))?;
    Api::<ExternalSecret>::namespaced(cluster.client.clone(), &unselected.name)
        .create(&PostParams::default(), &foreign)
        .await?;

    let ces_name = unique_name("e2e-ces");
    let ces_api: Api<ClusterExternalSecret> = Api::all(cluster.client.clone());
    let ces: ClusterExternalSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterExternalSecret",
        "metadata": {"name": ces_name},
        "spec": {
            "externalSecretName": "copy",
            "externalSecretMetadata": {"labels": {"made-by": "ces"}},
            "namespaceSelectors": [{"matchLabels": {"e2e-ces-test": label}}],
            "refreshTime": "1m",
            "externalSecretSpec": spec,
        },
    }))?;
    ces_api.create(&PostParams::default(), &ces).await?;

    let mut expected = vec![first.name.clone(), second.name.clone(), doomed.name.clone()];
    expected.sort();
    // Upstream's buildCESFinalizer (clusterexternalsecret_controller.go).
    let finalizer = format!("externalsecrets.external-secrets.io/ces-{ces_name}");
    let checks = async {
        eventually(WAIT, "copies provisioned", || async {
            let ces = ces_api.get(&ces_name).await?;
            Ok((provisioned(&ces) == expected).then_some(()))
        })
        .await?;
        for namespace in &expected {
            assert!(
                holds(&namespaces, namespace, &finalizer).await?,
                "{namespace}"
            );
        }
        assert!(!holds(&namespaces, &unselected.name, &finalizer).await?);
        // A provisioned namespace being deleted is let go (upstream removes its finalizer
        // from terminating namespaces); `delete` waits until it is gone.
        doomed.delete().await?;
        for namespace in [&first.name, &second.name] {
            let copy = Api::<ExternalSecret>::namespaced(cluster.client.clone(), namespace)
                .get("copy")
                .await?;
            assert_eq!(
                copy.labels().get("made-by").map(String::as_str),
                Some("ces")
            );
            let owner = copy.owner_references().first().cloned().expect("owner");
            assert_eq!(
                (owner.kind.as_str(), owner.name.as_str()),
                ("ClusterExternalSecret", ces_name.as_str())
            );
            let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), namespace);
            eventually(WAIT, "copy synced", || async {
                Ok(secrets.get_opt("shared-credentials").await?.map(|_| ()))
            })
            .await?;
        }
        // Two copies reading the same two keys: two provider reads in all.
        let metrics = controller.metrics().await?;
        let calls: f64 = metrics
            .lines()
            .filter(|line| line.starts_with("externalsecret_provider_api_calls_count{"))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        assert_eq!(calls, 2.0, "{metrics}");

        // Upstream's mutateFunc replaces the copies' metadata: the force-sync annotation is
        // propagated and, like a label dropped from externalSecretMetadata, pruned
        // (clusterexternalsecret_controller_test.go "Should propagate the force-sync
        // annotation" / "Should prune the force-sync annotation").
        let copies: Api<ExternalSecret> = Api::namespaced(cluster.client.clone(), &first.name);
        let force_sync = "external-secrets.io/force-sync";
        let annotate = json!({"metadata": {"annotations": {force_sync: "1"}}});
        ces_api
            .patch(&ces_name, &PatchParams::default(), &Patch::Merge(annotate))
            .await?;
        eventually(WAIT, "force-sync propagated", || async {
            let copy = copies.get("copy").await?;
            Ok(copy.annotations().contains_key(force_sync).then_some(()))
        })
        .await?;
        let prune = json!({
            "metadata": {"annotations": {force_sync: null}},
            "spec": {"externalSecretMetadata": {"labels": {"made-by": null, "kept": "yes"}}},
        });
        ces_api
            .patch(&ces_name, &PatchParams::default(), &Patch::Merge(prune))
            .await?;
        eventually(WAIT, "force-sync and dropped label pruned", || async {
            let copy = copies.get("copy").await?;
            let pruned = !copy.annotations().contains_key(force_sync)
                && !copy.labels().contains_key("made-by")
                && copy.labels().get("kept").map(String::as_str) == Some("yes");
            Ok(pruned.then_some(()))
        })
        .await?;

        // Selecting the namespace with the foreign ExternalSecret: reported, left alone.
        select(unselected.name.clone(), true).await?;
        let ces = eventually(WAIT, "foreign copy reported", || async {
            let ces = ces_api.get(&ces_name).await?;
            let failed = ces.status.as_ref().is_some_and(|s| {
                s.failed_namespaces.iter().any(|f| {
                    f.namespace == unselected.name
                        && f.reason.as_deref()
                            == Some("external secret already exists in namespace")
                })
            });
            Ok(failed.then_some(ces))
        })
        .await?;
        let ready = &ces.status.as_ref().unwrap().conditions[0];
        assert_eq!(
            (ready.status.as_str(), ready.message.as_deref()),
            ("False", Some("one or more namespaces failed"))
        );
        let untouched = Api::<ExternalSecret>::namespaced(cluster.client.clone(), &unselected.name)
            .get("copy")
            .await?;
        assert!(untouched.owner_references().is_empty());
        select(unselected.name.clone(), false).await?;

        // A namespace that stops matching loses its copy.
        select(second.name.clone(), false).await?;
        eventually(WAIT, "copy removed from unselected namespace", || async {
            let copies: Api<ExternalSecret> = Api::namespaced(cluster.client.clone(), &second.name);
            Ok(copies.get_opt("copy").await?.is_none().then_some(()))
        })
        .await?;
        eventually(WAIT, "status follows", || async {
            let ces = ces_api.get(&ces_name).await?;
            Ok((provisioned(&ces) == [first.name.clone()]).then_some(()))
        })
        .await?;
        // Upstream leaves the finalizer on a namespace it stops selecting (a later deletion of
        // that namespace would hang while the template exists); ours releases it.
        eventually(WAIT, "unselected namespace released", || async {
            Ok((!holds(&namespaces, &second.name, &finalizer).await?).then_some(()))
        })
        .await?;

        // Deleting the ClusterExternalSecret removes its copies (finalizer cleanup).
        ces_api.delete(&ces_name, &DeleteParams::default()).await?;
        eventually(
            WAIT,
            "ClusterExternalSecret gone with its copies",
            || async {
                let gone = ces_api.get_opt(&ces_name).await?.is_none();
                let copy = Api::<ExternalSecret>::namespaced(cluster.client.clone(), &first.name)
                    .get_opt("copy")
                    .await?;
                Ok((gone && copy.is_none()).then_some(()))
            },
        )
        .await?;
        assert!(!holds(&namespaces, &first.name, &finalizer).await?);
        anyhow::Ok(())
    }
    .await
    .map_err(|error| error.context(controller.log()));
    if checks.is_err() {
        let _ = ces_api.delete(&ces_name, &DeleteParams::default()).await;
    }
    let _ = stores.delete(&store_name, &DeleteParams::default()).await;
    checks?;
    assert!(is_not_found(
        &ces_api.get(&ces_name).await.expect_err("deleted")
    ));
    controller.stop().await?;
    for namespace in [first, second, unselected] {
        namespace.delete().await?;
    }
    Ok(())
}
