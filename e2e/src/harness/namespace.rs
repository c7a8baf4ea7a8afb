//! Throwaway namespaces: each test gets its own, removed when the test ends.

use super::{TestCluster, cluster::client_for, eventually, is_not_found};
use k8s_openapi::api::core::v1::Namespace;
use kube::{
    Api, Client,
    api::{DeleteParams, PostParams},
};
use std::path::PathBuf;
use std::time::Duration;

/// How long namespace deletion may take on a real cluster.
const DELETE_TIMEOUT: Duration = Duration::from_secs(120);

/// A namespace created for one test. Call [`TestNamespace::delete`] at the end of the test
/// (it waits until the namespace is gone); if the test panics first, dropping it still asks
/// the cluster to delete the namespace.
pub struct TestNamespace {
    /// The namespace's generated name.
    pub name: String,
    client: Client,
    kubeconfig: PathBuf,
    deleted: bool,
}

impl TestNamespace {
    /// Creates a namespace named `<prefix>-<random>` with the harness label, so leftovers of
    /// killed runs can be found and removed with one label selector.
    pub async fn create(cluster: &TestCluster, prefix: &str) -> anyhow::Result<Self> {
        let namespace: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {
                "generateName": format!("{prefix}-"),
                "labels": {"app.kubernetes.io/part-of": "external-secrets-e2e"},
            }
        }))?;
        let created = Api::<Namespace>::all(cluster.client.clone())
            .create(&PostParams::default(), &namespace)
            .await?;
        Ok(Self {
            name: created.metadata.name.unwrap_or_default(),
            client: cluster.client.clone(),
            kubeconfig: cluster.kubeconfig.clone(),
            deleted: false,
        })
    }

    /// Deletes the namespace and waits until it (and so everything in it) is gone.
    pub async fn delete(mut self) -> anyhow::Result<()> {
        self.deleted = true;
        let api = Api::<Namespace>::all(self.client.clone());
        request_deletion(&api, &self.name).await?;
        eventually(
            DELETE_TIMEOUT,
            &format!("namespace {} to be deleted", self.name),
            || async {
                match api.get_opt(&self.name).await? {
                    None => Ok(Some(())),
                    Some(_) => Ok(None),
                }
            },
        )
        .await
    }
}

async fn request_deletion(api: &Api<Namespace>, name: &str) -> anyhow::Result<()> {
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(error) if is_not_found(&error) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

impl Drop for TestNamespace {
    /// Requests deletion from a helper thread with its own runtime and client: the test's
    /// runtime may be shutting down, so nothing can be spawned on it.
    fn drop(&mut self) {
        if self.deleted {
            return;
        }
        let (kubeconfig, name) = (self.kubeconfig.clone(), self.name.clone());
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let client = client_for(&kubeconfig).await.ok()?;
                request_deletion(&Api::all(client), &name).await.ok()
            })
        });
        let _ = cleanup.join();
    }
}
