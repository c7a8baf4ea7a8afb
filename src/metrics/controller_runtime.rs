//! controller-runtime's per-controller metrics every upstream controller exports: reconcile
//! counts by result, errors, reconcile time, active workers and queue depth.

use std::time::Instant;

use prometheus_client::metrics::gauge::Gauge;

use super::{ControllerLabels, Metrics, QueueLabels, ResultLabels};

impl Metrics {
    /// Starts timing one reconcile of `controller`; the guard records its duration when dropped.
    pub fn reconcile_started(&self, controller: &'static str) -> ReconcileTimer<'_> {
        self.workers(controller).inc();
        ReconcileTimer {
            metrics: self,
            controller,
            started: Instant::now(),
        }
    }

    /// Sets `workqueue_depth` of `controller`'s queue: requests waiting for a worker.
    pub fn set_queue_depth(&self, controller: &'static str, depth: usize) {
        self.queue_depth
            .get_or_create(&QueueLabels {
                controller: controller.to_owned(),
                name: controller.to_owned(),
            })
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    fn workers(&self, controller: &'static str) -> Gauge {
        self.active_workers
            .get_or_create(&ControllerLabels {
                controller: controller.to_owned(),
            })
            .clone()
    }

    /// Counts a finished reconcile of a controller that requeues on success.
    pub fn reconcile_result<T, E>(&self, controller: &'static str, result: &Result<T, E>) {
        let label = if result.is_ok() {
            "requeue_after"
        } else {
            "error"
        };
        self.reconcile_finished(controller, label);
    }

    /// Counts one finished reconcile with its controller-runtime result label.
    pub fn reconcile_finished(&self, controller: &'static str, result: &'static str) {
        self.reconcile_total
            .get_or_create(&ResultLabels {
                controller: controller.to_owned(),
                result: result.to_owned(),
            })
            .inc();
        if result == "error" {
            self.reconcile_errors
                .get_or_create(&ControllerLabels {
                    controller: controller.to_owned(),
                })
                .inc();
        }
    }
}

/// Records a reconcile's duration when dropped, however the reconcile ended.
pub struct ReconcileTimer<'a> {
    metrics: &'a Metrics,
    controller: &'static str,
    started: Instant,
}

impl Drop for ReconcileTimer<'_> {
    fn drop(&mut self) {
        self.metrics.workers(self.controller).dec();
        self.metrics
            .reconcile_time
            .get_or_create(&ControllerLabels {
                controller: self.controller.to_owned(),
            })
            .observe(self.started.elapsed().as_secs_f64());
    }
}
