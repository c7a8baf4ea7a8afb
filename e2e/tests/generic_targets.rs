//! Generic targets (`spec.target.manifest`), run as the real binary against the cluster: with
//! `--unsafe-allow-generic-targets` an ExternalSecret writes a ConfigMap (drift repaired, the
//! target deleted with the ExternalSecret under `deletionPolicy: Delete`) or a custom
//! resource with templates rendered into nested paths; without the flag it is refused, and a
//! manifest that would be a service-account token Secret is refused (GHSA-fq7h).

mod support;

use e2e::harness::{TestCrd, eventually, is_not_found};
use external_secrets_crds::v1::ExternalSecret;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use support::{Setup, WAIT, external_secret, pairs, wait_reason};

const FLAG: &str = "--unsafe-allow-generic-targets";

#[tokio::test]
async fn config_map_target_syncs_repairs_drift_and_is_deleted_with_its_external_secret()
-> anyhow::Result<()> {
    let setup = Setup::start("es-generic-cm", &[FLAG]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let config_maps: Api<ConfigMap> = setup.api();
    let spec = json!({"target": {
        "name": "app-settings",
        "deletionPolicy": "Delete",
        "manifest": {"apiVersion": "v1", "kind": "ConfigMap"},
    }});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("settings", "store", spec)?,
        )
        .await?;
    let (es, ready) = wait_reason(
        &external_secrets,
        "settings",
        "ResourceSynced",
        &setup.controller,
    )
    .await?;
    assert_eq!(
        ready,
        ["True", "ResourceSynced", "secret synced"].map(String::from)
    );
    assert!(
        es.finalizers()
            .iter()
            .any(|f| f == "externalsecrets.external-secrets.io/externalsecret-cleanup"),
        "finalizers {:?}",
        es.finalizers()
    );
    let expected = pairs(&[("user", "app"), ("password", "first-password")]);
    let config_map = config_maps.get("app-settings").await?;
    assert_eq!(config_map.data.clone().unwrap_or_default(), expected);
    assert_eq!(
        config_map
            .labels()
            .get("reconcile.external-secrets.io/managed"),
        Some(&"true".to_owned())
    );
    assert!(
        config_map
            .annotations()
            .contains_key("reconcile.external-secrets.io/data-hash")
    );
    let owner = config_map
        .owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .expect("creationPolicy Owner sets a controller ownerReference");
    assert_eq!(owner.uid, es.uid().unwrap_or_default());

    // Someone edits the ConfigMap: the drift watch brings the ExternalSecret back to it.
    config_maps
        .patch(
            "app-settings",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"password": "edited"}})),
        )
        .await?;
    eventually(WAIT, "edited ConfigMap restored", || async {
        let config_map = config_maps.get("app-settings").await?;
        Ok((config_map.data.unwrap_or_default() == expected).then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;

    // Deleting the ExternalSecret deletes its target, then lets the ExternalSecret go.
    external_secrets
        .delete("settings", &DeleteParams::default())
        .await?;
    eventually(WAIT, "ConfigMap and ExternalSecret gone", || async {
        let config_map = config_maps.get_opt("app-settings").await?;
        let es = external_secrets.get_opt("settings").await?;
        Ok((config_map.is_none() && es.is_none()).then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    setup.finish().await
}

/// A namespaced kind whose spec takes anything, as many operators' kinds do.
fn database_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "databases.generic.e2e.external-secrets.io"},
        "spec": {
            "group": "generic.e2e.external-secrets.io",
            "scope": "Namespaced",
            "names": {"kind": "Database", "plural": "databases", "singular": "database"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    })
}

#[tokio::test]
async fn custom_resource_target_renders_templates_into_nested_paths() -> anyhow::Result<()> {
    let setup = Setup::start("es-generic-cr", &[FLAG]).await?;
    let crd = TestCrd::create(&setup.cluster, database_crd()).await?;
    let resource = crd.resource("v1");
    let databases: Api<DynamicObject> =
        Api::namespaced_with(setup.client(), &setup.namespace.name, &resource);
    let external_secrets: Api<ExternalSecret> = setup.api();
    let spec = json!({"target": {
        "name": "orders",
        "manifest": {"apiVersion": format!("{}/v1", crd.group), "kind": "Database"},
        "template": {
            "metadata": {"labels": {"team": "orders"}},
            "templateFrom": [
                {"target": "spec.connection", "literal": "user: {{ .user }}\nport: 5432"},
                {"target": "spec.replicas[1].password", "literal": "{{ .password }}"},
            ],
        },
    }});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("orders", "store", spec)?,
        )
        .await?;
    wait_reason(
        &external_secrets,
        "orders",
        "ResourceSynced",
        &setup.controller,
    )
    .await?;
    let database = databases.get("orders").await?;
    assert_eq!(
        database.data["spec"],
        json!({
            "connection": {"user": "app", "port": 5432},
            "replicas": [null, {"password": "first-password"}],
        })
    );
    assert_eq!(database.labels().get("team"), Some(&"orders".to_owned()));

    // Someone deletes it: it comes back.
    databases.delete("orders", &DeleteParams::default()).await?;
    eventually(WAIT, "deleted Database restored", || async {
        match databases.get("orders").await {
            Ok(database) => {
                Ok((database.data["spec"]["connection"]["user"] == "app").then_some(()))
            }
            Err(error) if is_not_found(&error) => Ok(None),
            Err(error) => Err(error.into()),
        }
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;

    // The kind goes first: the ExternalSecret (which carries the cleanup finalizer) must
    // still be let go by the running controller, with nothing left to delete.
    crd.delete().await?;
    external_secrets
        .delete("orders", &DeleteParams::default())
        .await?;
    eventually(WAIT, "ExternalSecret gone", || async {
        Ok(external_secrets
            .get_opt("orders")
            .await?
            .is_none()
            .then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    setup.finish().await
}

#[tokio::test]
async fn generic_targets_are_refused_without_the_flag() -> anyhow::Result<()> {
    let setup = Setup::start("es-generic-off", &[]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let spec = json!({"target": {"manifest": {"apiVersion": "v1", "kind": "ConfigMap"}}});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("off", "store", spec)?,
        )
        .await?;
    let (_, ready) = wait_reason(
        &external_secrets,
        "off",
        "SecretSyncedError",
        &setup.controller,
    )
    .await?;
    assert_eq!(
        ready[2],
        "invalid generic target: generic targets are disabled. Enable with \
         --unsafe-allow-generic-targets flag"
    );
    let config_maps: Api<ConfigMap> = setup.api();
    assert!(config_maps.get_opt("off").await?.is_none());
    setup.finish().await
}

#[tokio::test]
async fn service_account_token_secrets_are_refused_in_any_spelling() -> anyhow::Result<()> {
    let setup = Setup::start("es-generic-token", &[FLAG]).await?;
    let external_secrets: Api<ExternalSecret> = setup.api();
    let token = "kubernetes.io/service-account-token";
    let annotation = "kubernetes.io/service-account.name";
    let specs = [
        (
            "typed",
            json!({"target": {"name": "typed",
            "manifest": {"apiVersion": "v1", "kind": "Secret"},
            "template": {"templateFrom": [{"target": "type", "literal": token}]}}}),
        ),
        (
            "annotated",
            json!({"target": {"name": "annotated",
            "manifest": {"apiVersion": "/v1", "kind": "Secret"},
            "template": {"metadata": {"annotations": {annotation: "default"}}}}}),
        ),
    ];
    for (name, spec) in &specs {
        external_secrets
            .create(
                &PostParams::default(),
                &external_secret(name, "store", spec.clone())?,
            )
            .await?;
    }
    let secrets: Api<Secret> = setup.api();
    for (name, _) in &specs {
        let (_, ready) = wait_reason(
            &external_secrets,
            name,
            "ResourceSyncedError",
            &setup.controller,
        )
        .await?;
        assert!(
            ready[2].starts_with("could not apply template to manifest"),
            "{name}: {}",
            ready[2]
        );
        assert!(secrets.get_opt(name).await?.is_none(), "{name} was written");
    }
    // Their finalizer is removed by the running controller before the namespace goes.
    for (name, _) in &specs {
        external_secrets
            .delete(name, &DeleteParams::default())
            .await?;
        eventually(WAIT, &format!("ExternalSecret {name} deleted"), || async {
            Ok(external_secrets
                .get_opt(name)
                .await?
                .is_none()
                .then_some(()))
        })
        .await?;
    }
    setup.finish().await
}
