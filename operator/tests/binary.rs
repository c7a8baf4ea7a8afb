//! The `external-secrets-operator` binary as deployed: it starts against the cluster under test
//! (loopback API server, or `KUBECONFIG`), creates the default `ExternalSecretsManager`, takes
//! its leader lease, and serves `/metrics`, `/healthz` and `/readyz` on the given addresses.

use std::time::Duration;

use e2e::harness::{TestCluster, eventually, free_local_address, http_status};
use external_secrets_operator::api::ExternalSecretsManager;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(60);

#[tokio::test]
async fn binary_creates_the_manager_leads_and_serves_probes_and_metrics() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let client = cluster.client.clone();
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    for crd in external_secrets_operator::api::all_crds() {
        let name = crd.metadata.name.clone().unwrap_or_default();
        crds.patch(
            &name,
            &PatchParams::apply("operator-e2e").force(),
            &Patch::Apply(&crd),
        )
        .await?;
    }
    let namespace = "external-secrets-operator";
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    Api::<Namespace>::all(client.clone())
        .patch(
            namespace,
            &PatchParams::apply("operator-e2e").force(),
            &Patch::Apply(&ns),
        )
        .await?;

    let (metrics, probes) = (free_local_address()?, free_local_address()?);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_external-secrets-operator"))
        .env("KUBECONFIG", &cluster.kubeconfig)
        .args([
            "--leader-elect".to_owned(),
            format!("--leader-election-namespace={namespace}"),
            format!("--metrics-addr={metrics}"),
            format!("--healthz-addr={probes}"),
        ])
        .kill_on_drop(true)
        .spawn()?;

    let managers: Api<ExternalSecretsManager> = Api::all(client.clone());
    eventually(TIMEOUT, "the default ExternalSecretsManager", || async {
        Ok(managers.get_opt("cluster").await?.map(|_| ()))
    })
    .await?;
    let leases: Api<Lease> = Api::namespaced(client.clone(), namespace);
    eventually(TIMEOUT, "the leader lease", || async {
        let lease = leases.get_opt("external-secrets-operator").await?;
        Ok(lease
            .and_then(|lease| lease.spec?.holder_identity)
            .filter(|holder| !holder.is_empty())
            .map(|_| ()))
    })
    .await?;
    for (address, path) in [
        (probes, "/healthz"),
        (probes, "/readyz"),
        (metrics, "/healthz"),
    ] {
        let (status, body) = http_status(address, path).await?;
        assert_eq!((status, body.as_str()), (200, "ok"), "{path} on {address}");
    }
    let (status, body) = http_status(metrics, "/metrics").await?;
    assert_eq!(status, 200);
    assert!(
        body.contains("# TYPE controller_runtime_reconcile counter"),
        "{body}"
    );
    child.kill().await?;
    Ok(())
}
