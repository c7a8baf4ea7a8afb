//! Rendering the chart with helm_sdkpy into a loopback API server of the test's own, and
//! applying the manifests with server-side dry run to the cluster under test.

use anyhow::Context;
use e2e::harness::TestCluster;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Discovery, Scope};
use kube::runtime::wait::{await_condition, conditions};
use loopback_apiserver::{LoopbackServer, Options};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

use super::text;

/// The repository root.
pub fn repository() -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .parent()
        .expect("e2e/ has a parent")
        .to_path_buf()
}

/// Kinds the chart renders from other projects' APIs (cert-manager, Prometheus Operator): a
/// cluster without them cannot dry-run those objects, which is reported, not an error.
const THIRD_PARTY: &[(&str, &str)] = &[
    ("cert-manager.io/v1", "Certificate"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
];

/// A values file of charts/test/ as JSON, with `overrides` set at the top level.
pub fn values_file(name: &str, overrides: &[(&str, &str)]) -> anyhow::Result<Value> {
    let path = repository().join("charts/test").join(name);
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    let mut values: Value = serde_yaml::from_str(&text)?;
    for (key, value) in overrides {
        values[*key] = json!(value);
    }
    Ok(values)
}

/// Every document of a multi-document YAML text, empty ones dropped.
pub fn documents(text: &str) -> anyhow::Result<Vec<Value>> {
    let mut found = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value = Value::deserialize(document)?;
        if !value.is_null() {
            found.push(value);
        }
    }
    Ok(found)
}

/// Renders the chart as release `release` in `release_namespace` with `values`; `Err` holds
/// Helm's message when the chart refuses the values. `namespace` is created first, for charts
/// whose namespaceOverride points there.
pub async fn render(
    values: &Value,
    release: &str,
    release_namespace: &str,
    namespace: &str,
) -> anyhow::Result<Result<Vec<Value>, String>> {
    let server = LoopbackServer::start(Options::default()).await?;
    let client = server.client().await?;
    install_third_party_crds(&client).await?;
    let namespaces: Api<Namespace> = Api::all(client);
    let target: Namespace = serde_json::from_value(json!({"metadata": {"name": namespace}}))?;
    namespaces.create(&PostParams::default(), &target).await?;

    let script = repository().join("charts/test/render_chart.py");
    let chart = repository().join("charts/external-secrets");
    let mut child = tokio::process::Command::new("python3")
        .arg(&script)
        .arg(server.kubeconfig_path())
        .args([release_namespace, release])
        .arg(&chart)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context(
            "running python3: install it with helm_sdkpy (scripts/test-tools.sh) and put that \
             venv's bin directory on PATH (scripts/test.sh does)",
        )?;
    let mut stdin = child.stdin.take().context("python stdin")?;
    stdin.write_all(values.to_string().as_bytes()).await?;
    drop(stdin);
    let output = child.wait_with_output().await?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    match output.status.code() {
        Some(0) => Ok(Ok(documents(&String::from_utf8(output.stdout)?)?)),
        Some(1) => Ok(Err(stderr)),
        _ => anyhow::bail!("{} failed ({}): {stderr}", script.display(), output.status),
    }
}

/// Serves cert-manager's Certificate and the Prometheus Operator's ServiceMonitor on the render
/// server, since Helm creates every object it renders.
async fn install_third_party_crds(client: &kube::Client) -> anyhow::Result<()> {
    let path = repository().join("charts/test/third-party-crds.yaml");
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for document in documents(&std::fs::read_to_string(&path)?)? {
        let crd: CustomResourceDefinition = serde_json::from_value(document)?;
        let name = crd.metadata.name.clone().context("CRD name")?;
        api.create(&PostParams::default(), &crd).await?;
        tokio::time::timeout(
            Duration::from_secs(30),
            await_condition(api.clone(), &name, conditions::is_crd_established()),
        )
        .await??;
    }
    Ok(())
}

/// Applies every object with server-side dry run to the cluster under test; objects of the
/// third-party kinds the cluster does not serve are reported and left out.
pub async fn dry_run_apply(cluster: &TestCluster, objects: &[Value]) -> anyhow::Result<()> {
    let discovery = Discovery::new(cluster.client.clone()).run().await?;
    let params = PatchParams::apply("external-secrets-e2e").force().dry_run();
    for object in objects {
        let (api_version, kind, name) = (
            text(object, "/apiVersion"),
            text(object, "/kind"),
            text(object, "/metadata/name"),
        );
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let Some((resource, capabilities)) =
            discovery.resolve_gvk(&GroupVersionKind::gvk(group, version, kind))
        else {
            anyhow::ensure!(
                THIRD_PARTY.contains(&(api_version, kind)),
                "the cluster does not serve {api_version} {kind} ({name})"
            );
            println!("not dry-run: {kind} {name} ({api_version} is not served by this cluster)");
            continue;
        };
        let api: Api<DynamicObject> = match capabilities.scope {
            Scope::Namespaced => Api::namespaced_with(
                cluster.client.clone(),
                text(object, "/metadata/namespace"),
                &resource,
            ),
            Scope::Cluster => Api::all_with(cluster.client.clone(), &resource),
        };
        api.patch(name, &params, &Patch::Apply(object))
            .await
            .with_context(|| format!("dry-run apply of {kind} {name}"))?;
    }
    Ok(())
}
