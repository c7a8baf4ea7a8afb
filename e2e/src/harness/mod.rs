//! The test harness: connecting to the cluster under test, throwaway namespaces, polling (also
//! for a synced Secret's data), running the controller binary (also through a proxy in front of
//! the API server), and locating `kubectl`.

mod cluster;
mod component;
mod controller;
mod crd;
mod kubectl;
mod namespace;
mod proxied;
mod push;
mod secret_data;
mod store_status;
pub mod test_certs;
mod webhook;

pub use cluster::{ApiServerEndpoint, TestCluster, install_crds};
pub use component::{ComponentProcess, http_status};
pub use controller::{
    CONTROLLER_BIN_ENV, ControllerProcess, controller_binary, free_local_address,
};
pub use crd::TestCrd;
pub use kubectl::{Kubectl, kubectl};
pub use namespace::TestNamespace;
pub use proxied::ProxiedCluster;
pub use push::create_push_secret;
pub use secret_data::wait_for_secret_data;
pub use store_status::{fake_ca_file, wait_for_store_ready, wait_for_store_released};
pub use webhook::{WebhookProcess, admission_review, post_review, valid_external_secret_review};

use std::future::Future;
use std::time::Duration;

/// A name unique to this test run: `<prefix>-<random>`, valid as a DNS label.
pub fn unique_name(prefix: &str) -> String {
    format!("{prefix}-{:08x}", fastrand::u32(..))
}

/// Polls `check` every 100ms until it returns `Some`, failing after `timeout`: real clusters
/// do asynchronously what the loopback server may do at once (garbage collection, namespace
/// deletion, CRD establishment).
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await? {
            return Ok(value);
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the store `name` has a True `Ready` condition (validated by the store
/// controller): the ExternalSecret flood gate refuses it until then, as upstream's.
pub async fn wait_store_ready(
    api: &kube::Api<external_secrets_crds::v1::SecretStore>,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    eventually(timeout, &format!("store {name} Ready"), || async {
        let store = api.get(name).await?;
        let ready = store.status.is_some_and(|status| {
            status
                .conditions
                .iter()
                .any(|c| c.r#type == "Ready" && c.status == "True")
        });
        Ok(ready.then_some(()))
    })
    .await
}

/// Whether a kube error is the API's 404.
pub fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

/// A Secret's data as text (lossy), key by key, for comparing with what a test expects.
pub fn string_data(
    secret: &k8s_openapi::api::core::v1::Secret,
) -> std::collections::BTreeMap<String, String> {
    secret
        .data
        .iter()
        .flatten()
        .map(|(key, value)| (key.clone(), String::from_utf8_lossy(&value.0).into_owned()))
        .collect()
}

/// Creates the object a JSON manifest describes through `api` (rendered chart objects, test
/// fixtures written as `json!`).
pub async fn create_manifest<K>(
    api: &kube::Api<K>,
    manifest: serde_json::Value,
) -> anyhow::Result<K>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    Ok(api
        .create(
            &kube::api::PostParams::default(),
            &serde_json::from_value(manifest)?,
        )
        .await?)
}
