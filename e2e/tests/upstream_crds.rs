//! The real upstream CRDs (shared/reference/upstream-crds) install and validate: a valid
//! SecretStore is accepted, an invalid one is rejected with 422 naming the field, and a
//! version the CRD does not serve is not found.
//!
//! On a real cluster this applies upstream's external-secrets.io CRDs, as installing the
//! operator does.

use anyhow::Context;
use e2e::harness::{TestCluster, TestNamespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use kube::runtime::wait::{await_condition, conditions};
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn upstream_crds() -> anyhow::Result<Vec<CustomResourceDefinition>> {
    let directory =
        PathBuf::from(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
            .join("../../shared/reference/upstream-crds");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&directory)
        .with_context(|| format!("reading {}", directory.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "yaml")
        })
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)?;
            serde_yaml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
        })
        .collect()
}

fn secret_stores(version: &str) -> ApiResource {
    ApiResource {
        group: "external-secrets.io".into(),
        version: version.into(),
        api_version: format!("external-secrets.io/{version}"),
        kind: "SecretStore".into(),
        plural: "secretstores".into(),
    }
}

#[tokio::test]
async fn upstream_crds_install_and_validate() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(cluster.client.clone());
    let definitions = upstream_crds()?;
    assert!(
        definitions.len() > 20,
        "found only {} CRDs",
        definitions.len()
    );
    let started = Instant::now();
    for definition in &definitions {
        let name = definition.metadata.name.clone().context("a CRD name")?;
        crds.patch(
            &name,
            &PatchParams::apply("external-secrets-e2e").force(),
            &Patch::Apply(definition),
        )
        .await
        .with_context(|| format!("applying {name}"))?;
    }
    for definition in &definitions {
        let name = definition.metadata.name.clone().unwrap_or_default();
        tokio::time::timeout(
            Duration::from_secs(60),
            await_condition(crds.clone(), &name, conditions::is_crd_established()),
        )
        .await
        .with_context(|| format!("{name} not established"))??;
    }
    eprintln!(
        "applied {} upstream CRDs in {:?}",
        definitions.len(),
        started.elapsed()
    );

    let namespace = TestNamespace::create(&cluster, "upstream").await?;
    let stores: Api<DynamicObject> = Api::namespaced_with(
        cluster.client.clone(),
        &namespace.name,
        &secret_stores("v1"),
    );
    let store = |name: &str, aws: serde_json::Value| -> anyhow::Result<DynamicObject> {
        Ok(serde_json::from_value(json!({
            "apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
            "metadata": {"name": name},
            "spec": {"provider": {"aws": aws}},
        }))?)
    };
    let valid = store(
        "valid",
        json!({"service": "SecretsManager", "region": "eu-west-1"}),
    )?;
    let created = stores.create(&PostParams::default(), &valid).await?;
    assert_eq!(
        created.data["spec"]["provider"]["aws"]["region"],
        "eu-west-1"
    );
    let invalid = store("invalid", json!({"service": "SecretsManager"}))?;
    match stores.create(&PostParams::default(), &invalid).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            assert!(
                status
                    .message
                    .contains("SecretStore.external-secrets.io \"invalid\" is invalid")
                    && status
                        .message
                        .contains("spec.provider.aws.region: Required value"),
                "{}",
                status.message
            );
        }
        other => panic!("expected 422, got {other:?}"),
    }
    let unserved: Api<DynamicObject> = Api::namespaced_with(
        cluster.client.clone(),
        &namespace.name,
        &secret_stores("v1beta1"),
    );
    match unserved.list(&ListParams::default()).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 404, "{status:?}"),
        other => panic!("v1beta1 is not served, got {other:?}"),
    }
    namespace.delete().await
}
