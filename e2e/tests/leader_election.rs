//! Leader election: of two replicas competing for one Lease only the holder reconciles; when it
//! stops it releases the Lease and the other takes over at once.

use e2e::harness::{
    ControllerProcess, TestCluster, TestNamespace, eventually, install_crds, unique_name,
    wait_store_ready,
};
use external_secrets_crds::v1::SecretStore;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use serde_json::json;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// Reconciles a controller has run, summed over its `controller_runtime_reconcile_total`.
async fn reconciles(controller: &ControllerProcess) -> anyhow::Result<f64> {
    let metrics = controller.metrics().await?;
    Ok(metrics
        .lines()
        .filter(|line| line.starts_with("controller_runtime_reconcile_total{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

async fn holder(leases: &Api<Lease>, name: &str) -> anyhow::Result<Option<String>> {
    Ok(leases
        .get_opt(name)
        .await?
        .and_then(|lease| lease.spec?.holder_identity)
        .filter(|holder| !holder.is_empty()))
}

async fn create_ready_store(api: &Api<SecretStore>, name: &str, class: &str) -> anyhow::Result<()> {
    let store: SecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": name},
        "spec": {"controller": class, "provider": {"fake": {"data": []}}},
    }))?;
    api.create(&PostParams::default(), &store).await?;
    wait_store_ready(api, name, WAIT).await
}

#[tokio::test]
async fn only_the_lease_holder_reconciles_and_hands_over_on_exit() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    install_crds(&cluster.client).await?;
    let namespace = TestNamespace::create(&cluster, "leader").await?;
    let class = unique_name("e2e-class");
    let lease_name = unique_name("e2e-lease");
    let args = [
        "--enable-leader-election",
        "--leader-election-id",
        &lease_name,
        "--leader-election-namespace",
        &namespace.name,
    ];
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let stores: Api<SecretStore> = Api::namespaced(cluster.client.clone(), &namespace.name);

    let first = ControllerProcess::start(&cluster, &class, &args).await?;
    let first_holder = eventually(WAIT, "the first replica to take the lease", || {
        holder(&leases, &lease_name)
    })
    .await?;
    let second = ControllerProcess::start(&cluster, &class, &args).await?;

    create_ready_store(&stores, "while-first-leads", &class).await?;
    assert!(reconciles(&first).await? > 0.0);
    assert_eq!(
        reconciles(&second).await?,
        0.0,
        "the replica without the lease reconciled"
    );
    assert_eq!(
        holder(&leases, &lease_name).await?,
        Some(first_holder.clone())
    );

    // A clean exit releases the lease: the second replica takes over well before the 15 s
    // lease would have expired on its own.
    let stopped = tokio::time::Instant::now();
    let status = first.stop().await?;
    assert!(status.success(), "first replica exited with {status}");
    let second_holder = eventually(WAIT, "the second replica to take the lease", || async {
        Ok(holder(&leases, &lease_name)
            .await?
            .filter(|holder| *holder != first_holder))
    })
    .await?;
    println!(
        "lease handed over to {second_holder} in {:?}",
        stopped.elapsed()
    );
    assert!(
        stopped.elapsed() < Duration::from_secs(12),
        "hand-over took {:?}: the lease was not released",
        stopped.elapsed()
    );
    create_ready_store(&stores, "while-second-leads", &class)
        .await
        .map_err(|error| error.context(second.log()))?;
    assert!(reconciles(&second).await? > 0.0);

    second.stop().await?;
    namespace.delete().await
}
