//! The ClusterPushSecret controller, run as the real binary: a PushSecret appears in each
//! namespace its selectors match and pushes that namespace's Secret (read back through an
//! ExternalSecret), a foreign PushSecret of the same name is reported and left alone, a
//! namespace that stops matching loses its copy, and the copies go with the ClusterPushSecret.

use std::time::Duration;

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
};
use external_secrets_crds::v1::{ClusterSecretStore, ExternalSecret};
use external_secrets_crds::v1alpha1::{ClusterPushSecret, PushSecret};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

fn provisioned(cps: &ClusterPushSecret) -> Vec<String> {
    cps.status
        .as_ref()
        .map(|status| status.provisioned_namespaces.clone())
        .unwrap_or_default()
}

/// Whether the PushSecret says it pushed (`Ready=True`).
fn pushed(push_secret: &PushSecret) -> bool {
    push_secret.status.as_ref().is_some_and(|status| {
        status
            .conditions
            .iter()
            .any(|condition| condition.r#type == "Ready" && condition.status == "True")
    })
}

#[tokio::test]
async fn push_secrets_follow_namespace_selection_and_go_with_the_cluster_push_secret()
-> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let class = unique_name("e2e-class");
    let label = unique_name("cps");
    let controller = ControllerProcess::start(&cluster, &class, &[]).await?;
    let first = TestNamespace::create(&cluster, "cps-a").await?;
    let second = TestNamespace::create(&cluster, "cps-b").await?;
    let foreign_holder = TestNamespace::create(&cluster, "cps-c").await?;
    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
    let select = |name: String, on: bool| {
        let namespaces = namespaces.clone();
        let value = if on { json!(label) } else { json!(null) };
        let patch = json!({"metadata": {"labels": {"e2e-cps-test": value}}});
        async move {
            namespaces
                .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await
        }
    };
    for namespace in [&first, &second, &foreign_holder] {
        let source: Secret = serde_json::from_value(json!({
            "metadata": {"name": "source"},
            "stringData": {"password": "pushed-by-cps"},
        }))?;
        Api::<Secret>::namespaced(cluster.client.clone(), &namespace.name)
            .create(&PostParams::default(), &source)
            .await?;
    }
    select(first.name.clone(), true).await?;
    select(second.name.clone(), true).await?;

    let store_name = unique_name("e2e-cps-store");
    let stores: Api<ClusterSecretStore> = Api::all(cluster.client.clone());
    let store: ClusterSecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": store_name},
        "spec": {"controller": class, "provider": {"fake": {"data": []}}},
    }))?;
    stores.create(&PostParams::default(), &store).await?;
    let spec = json!({
        "refreshInterval": "1h",
        "secretStoreRefs": [{"name": store_name, "kind": "ClusterSecretStore"}],
        "selector": {"secret": {"name": "source"}},
        "data": [{"match": {"secretKey": "password", "remoteRef": {"remoteKey": "/cps/password"}}}],
    });
    // A PushSecret of the same name that the ClusterPushSecret does not own.
    let foreign: PushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "PushSecret",
        "metadata": {"name": "copy"},
        "spec": spec,
    }))?;
    Api::<PushSecret>::namespaced(cluster.client.clone(), &foreign_holder.name)
        .create(&PostParams::default(), &foreign)
        .await?;

    let cps_name = unique_name("e2e-cps");
    let cps_api: Api<ClusterPushSecret> = Api::all(cluster.client.clone());
    let cps: ClusterPushSecret = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "ClusterPushSecret",
        "metadata": {"name": cps_name},
        "spec": {
            "pushSecretName": "copy",
            "pushSecretMetadata": {"labels": {"made-by": "cps"}},
            "namespaceSelectors": [{"matchLabels": {"e2e-cps-test": label}}],
            "refreshTime": "1m",
            "pushSecretSpec": spec,
        },
    }))?;
    cps_api.create(&PostParams::default(), &cps).await?;

    let mut expected = vec![first.name.clone(), second.name.clone()];
    expected.sort();
    let checks = async {
        eventually(WAIT, "PushSecrets provisioned", || async {
            let cps = cps_api.get(&cps_name).await?;
            Ok((provisioned(&cps) == expected).then_some(()))
        })
        .await?;
        for namespace in [&first.name, &second.name] {
            let copies: Api<PushSecret> = Api::namespaced(cluster.client.clone(), namespace);
            let copy = eventually(WAIT, "copy pushed", || async {
                Ok(copies.get_opt("copy").await?.filter(pushed))
            })
            .await?;
            assert_eq!(
                copy.labels().get("made-by").map(String::as_str),
                Some("cps")
            );
            let owner = copy.owner_references().first().cloned().expect("owner");
            assert_eq!(
                (owner.kind.as_str(), owner.name.as_str()),
                ("ClusterPushSecret", cps_name.as_str())
            );
        }

        // The pushed value is in the store: an ExternalSecret reads it back.
        let reader: ExternalSecret = serde_json::from_value(json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {"name": "read-back"},
            "spec": {
                "refreshInterval": "1h",
                "secretStoreRef": {"name": store_name, "kind": "ClusterSecretStore"},
                "target": {"name": "read-back"},
                "data": [{"secretKey": "password", "remoteRef": {"key": "/cps/password"}}],
            },
        }))?;
        Api::<ExternalSecret>::namespaced(cluster.client.clone(), &first.name)
            .create(&PostParams::default(), &reader)
            .await?;
        let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &first.name);
        let read_back = eventually(WAIT, "pushed value read back", || async {
            Ok(secrets.get_opt("read-back").await?)
        })
        .await?;
        let password = read_back
            .data
            .as_ref()
            .and_then(|data| data.get("password"))
            .map(|value| value.0.clone());
        assert_eq!(password.as_deref(), Some(&b"pushed-by-cps"[..]));

        // Selecting the namespace with the foreign PushSecret: reported, left alone.
        select(foreign_holder.name.clone(), true).await?;
        let cps = eventually(WAIT, "foreign PushSecret reported", || async {
            let cps = cps_api.get(&cps_name).await?;
            let failed = cps.status.as_ref().is_some_and(|status| {
                status.failed_namespaces.iter().any(|failure| {
                    failure.namespace == foreign_holder.name
                        && failure.reason.as_deref()
                            == Some("push secret already exists in namespace")
                })
            });
            Ok(failed.then_some(cps))
        })
        .await?;
        let ready = &cps.status.as_ref().unwrap().conditions[0];
        assert_eq!(
            (ready.status.as_str(), ready.message.as_deref()),
            ("False", Some("one or more namespaces failed"))
        );
        let untouched = Api::<PushSecret>::namespaced(cluster.client.clone(), &foreign_holder.name)
            .get("copy")
            .await?;
        assert!(untouched.owner_references().is_empty());
        select(foreign_holder.name.clone(), false).await?;

        // A namespace that stops matching loses its copy.
        select(second.name.clone(), false).await?;
        eventually(WAIT, "copy removed from unselected namespace", || async {
            let copies: Api<PushSecret> = Api::namespaced(cluster.client.clone(), &second.name);
            Ok(copies.get_opt("copy").await?.is_none().then_some(()))
        })
        .await?;
        eventually(WAIT, "status follows", || async {
            let cps = cps_api.get(&cps_name).await?;
            Ok((provisioned(&cps) == [first.name.clone()]).then_some(()))
        })
        .await?;

        // Deleting the ClusterPushSecret: its copies are garbage-collected.
        cps_api.delete(&cps_name, &DeleteParams::default()).await?;
        eventually(WAIT, "copies gone with the ClusterPushSecret", || async {
            let copy = Api::<PushSecret>::namespaced(cluster.client.clone(), &first.name)
                .get_opt("copy")
                .await?;
            Ok(copy.is_none().then_some(()))
        })
        .await?;
        anyhow::Ok(())
    }
    .await
    .map_err(|error| error.context(controller.log()));
    if checks.is_err() {
        let _ = cps_api.delete(&cps_name, &DeleteParams::default()).await;
    }
    let _ = stores.delete(&store_name, &DeleteParams::default()).await;
    checks?;
    controller.stop().await?;
    for namespace in [first, second, foreign_holder] {
        namespace.delete().await?;
    }
    Ok(())
}
