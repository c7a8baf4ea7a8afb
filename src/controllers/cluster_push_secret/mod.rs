//! The ClusterPushSecret controller: one PushSecret per namespace its `namespaceSelectors`
//! select, through the shared cluster-template controller (`fan_out`). As upstream, it has no
//! finalizer: the PushSecrets carry a controller reference and go with it by garbage
//! collection (each PushSecret's own finalizer then applies its deletionPolicy).

pub mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use external_secrets_crds::v1alpha1::{ClusterPushSecret, PushSecret};
use kube::ResourceExt;

use crate::context::Context;
use crate::controllers::fan_out::{self, ClusterTemplate};
use crate::labels::selector_matches;
use crate::metrics::Metrics;

/// How often namespaces are re-checked when `spec.refreshTime` is unset.
const DEFAULT_REFRESH: Duration = Duration::from_secs(3600);

impl ClusterTemplate for ClusterPushSecret {
    type Copy = PushSecret;
    const CONTROLLER: &'static str = "clusterpushsecret";
    const FINALIZER: Option<&'static str> = None;
    const NAMESPACE_FINALIZER_PREFIX: Option<&'static str> = None;
    const REASON_ALREADY_EXISTS: &'static str = plan::REASON_ALREADY_EXISTS;
    const REASON_WRITE_FAILED: &'static str = "could not create or update push secret";

    fn copy_name(&self) -> String {
        plan::push_secret_name(self)
    }

    fn recorded_copy_name(&self) -> Option<&str> {
        self.status.as_ref()?.push_secret_name.as_deref()
    }

    fn provisioned_namespaces(&self) -> &[String] {
        self.status
            .as_ref()
            .map_or(&[], |status| &status.provisioned_namespaces)
    }

    fn selects(&self, _name: &str, labels: &BTreeMap<String, String>) -> bool {
        self.spec
            .namespace_selectors
            .iter()
            .any(|selector| selector_matches(selector, labels))
    }

    fn desired_copy(&self, namespace: &str, name: &str) -> PushSecret {
        plan::desired_push_secret(self, namespace, name)
    }

    fn is_up_to_date(existing: &PushSecret, desired: &PushSecret) -> bool {
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
        metrics.set_cluster_push_secret(&self.metadata, ready, took);
    }

    fn remove_metrics(&self, metrics: &Metrics) {
        metrics.remove_cluster_push_secret(&self.name_any());
    }
}

/// Runs the ClusterPushSecret controller until `shutdown` completes.
pub async fn run(
    context: Arc<Context>,
    concurrency: u16,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    fan_out::run::<ClusterPushSecret>(context, concurrency, shutdown).await;
}

#[cfg(test)]
mod restart_tests;
