//! The ClusterExternalSecret controller: one ExternalSecret per selected namespace, through the
//! shared cluster-template controller (`fan_out`), behind upstream's cleanup finalizer.

pub mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use external_secrets_crds::v1::{ClusterExternalSecret, ExternalSecret};

use crate::context::Context;
use crate::controllers::fan_out::{self, ClusterTemplate};
use crate::labels::selector_matches;
use crate::metrics::Metrics;

/// Upstream's finalizer: the ExternalSecrets are removed before the ClusterExternalSecret.
pub const FINALIZER: &str = "externalsecrets.external-secrets.io/clusterexternalsecret-cleanup";
/// Upstream's `buildCESFinalizer` prefix: each provisioned namespace carries
/// `externalsecrets.external-secrets.io/ces-<name>` until the ClusterExternalSecret lets go.
pub const NAMESPACE_FINALIZER_PREFIX: &str = "externalsecrets.external-secrets.io/ces-";
/// How often namespaces are re-checked when `spec.refreshTime` is unset (upstream: 1h).
const DEFAULT_REFRESH: Duration = Duration::from_secs(3600);

impl ClusterTemplate for ClusterExternalSecret {
    type Copy = ExternalSecret;
    const CONTROLLER: &'static str = "clusterexternalsecret";
    const FINALIZER: Option<&'static str> = Some(FINALIZER);
    const NAMESPACE_FINALIZER_PREFIX: Option<&'static str> = Some(NAMESPACE_FINALIZER_PREFIX);
    const REASON_ALREADY_EXISTS: &'static str = plan::REASON_ALREADY_EXISTS;
    const REASON_WRITE_FAILED: &'static str = "could not create or update ExternalSecret";

    fn copy_name(&self) -> String {
        plan::external_secret_name(self)
    }

    fn recorded_copy_name(&self) -> Option<&str> {
        self.status.as_ref()?.external_secret_name.as_deref()
    }

    fn provisioned_namespaces(&self) -> &[String] {
        self.status
            .as_ref()
            .map_or(&[], |status| &status.provisioned_namespaces)
    }

    /// `spec.namespaces`, `spec.namespaceSelectors` or the deprecated `spec.namespaceSelector`:
    /// any one matching selects.
    fn selects(&self, name: &str, labels: &BTreeMap<String, String>) -> bool {
        self.spec.namespaces.iter().any(|listed| listed == name)
            || self
                .spec
                .namespace_selector
                .iter()
                .chain(&self.spec.namespace_selectors)
                .any(|selector| selector_matches(selector, labels))
    }

    fn desired_copy(&self, namespace: &str, name: &str) -> ExternalSecret {
        plan::desired_external_secret(self, namespace, name)
    }

    fn is_up_to_date(existing: &ExternalSecret, desired: &ExternalSecret) -> bool {
        plan::is_up_to_date(existing, desired)
    }

    fn status_update(
        &self,
        copy_name: &str,
        provisioned: &[String],
        failed: &BTreeMap<String, String>,
    ) -> Option<serde_json::Value> {
        fan_out::changed_status(
            self.status.as_ref(),
            plan::status(copy_name, provisioned, failed),
        )
    }

    fn refresh_interval(&self) -> Duration {
        fan_out::refresh_interval_of(self.spec.refresh_time.as_deref(), DEFAULT_REFRESH)
    }

    fn record_metrics(&self, metrics: &Metrics, ready: &str, took: Duration) {
        metrics.set_cluster_external_secret(&self.metadata, ready, took);
    }

    fn remove_metrics(&self, metrics: &Metrics) {
        metrics.remove_cluster_external_secret(&kube::ResourceExt::name_any(self));
    }
}

/// Runs the ClusterExternalSecret controller until `shutdown` completes.
pub async fn run(
    context: Arc<Context>,
    concurrency: u16,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    fan_out::run::<ClusterExternalSecret>(context, concurrency, shutdown).await;
}
