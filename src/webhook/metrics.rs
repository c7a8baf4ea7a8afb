//! The webhook's Prometheus metrics, under controller-runtime's names (upstream's webhook
//! exports them): `controller_runtime_webhook_requests_total{webhook,code}`,
//! `controller_runtime_webhook_latency_seconds{webhook}` and
//! `controller_runtime_webhook_requests_in_flight{webhook}`, `webhook` being the path.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of the per-path metrics.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PathLabels {
    /// The webhook's URL path.
    webhook: String,
}

/// Labels of the request counter.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    /// The webhook's URL path.
    webhook: String,
    /// The HTTP status code answered.
    code: String,
}

/// Every metric the webhook exports, and the registry encoding them.
pub struct WebhookMetrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<PathLabels, Histogram, fn() -> Histogram>,
    in_flight: Family<PathLabels, Gauge>,
}

impl Default for WebhookMetrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code",
            requests.clone(),
        );
        let latency: Family<PathLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.0, 14)));
        registry.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            latency.clone(),
        );
        let in_flight = Family::<PathLabels, Gauge>::default();
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served",
            in_flight.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            in_flight,
        }
    }
}

/// Counts a request as in flight until dropped.
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl WebhookMetrics {
    /// Marks a request to `webhook` as in flight until the returned guard is dropped.
    pub fn start(&self, webhook: &str) -> InFlight {
        let gauge = self
            .in_flight
            .get_or_create(&PathLabels {
                webhook: webhook.to_owned(),
            })
            .clone();
        gauge.inc();
        InFlight(gauge)
    }

    /// Records a request to `webhook` answered with `code` after `took`.
    pub fn finished(&self, webhook: &str, code: u16, took: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                webhook: webhook.to_owned(),
                code: code.to_string(),
            })
            .inc();
        self.latency
            .get_or_create(&PathLabels {
                webhook: webhook.to_owned(),
            })
            .observe(took.as_secs_f64());
    }

    /// The text exposition of every metric.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_requests_and_in_flight() {
        let metrics = WebhookMetrics::default();
        let path = "/validate-external-secrets-io-v1-externalsecret";
        let guard = metrics.start(path);
        assert!(metrics.encode().contains(&format!(
            "controller_runtime_webhook_requests_in_flight{{webhook=\"{path}\"}} 1"
        )));
        drop(guard);
        metrics.finished(path, 200, Duration::from_millis(3));
        let text = metrics.encode();
        assert!(text.contains(&format!(
            "controller_runtime_webhook_requests_in_flight{{webhook=\"{path}\"}} 0"
        )));
        assert!(text.contains(&format!(
            "controller_runtime_webhook_requests_total{{webhook=\"{path}\",code=\"200\"}} 1"
        )));
        assert!(text.contains("controller_runtime_webhook_latency_seconds_count"));
    }
}
