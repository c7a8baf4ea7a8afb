//! controller-runtime's per-controller metrics every upstream controller exports: reconcile
//! counts by result, errors, reconcile time, the worker limit and active workers, and the
//! workqueue metrics their queues feed.

use std::time::{Duration, Instant};

use prometheus_client::metrics::gauge::Gauge;

use super::{ControllerLabels, Metrics, ResultLabels};

/// controller-runtime's `controller_runtime_reconcile_time_seconds` buckets (seconds).
pub(super) const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// The reconcile results controller-runtime creates at zero when a controller starts.
const RESULTS: [&str; 4] = ["error", "requeue", "requeue_after", "success"];

impl Metrics {
    /// A controller with `concurrency` workers started: as controller-runtime does, its
    /// worker limit is set and its counters and queue series are created at zero, so
    /// dashboards and rate() see the controller before its first reconcile.
    pub fn controller_started(&self, controller: &'static str, concurrency: u16) {
        let labels = ControllerLabels {
            controller: controller.to_owned(),
        };
        self.max_concurrent
            .get_or_create(&labels)
            .set(i64::from(concurrency));
        self.active_workers.get_or_create(&labels).set(0);
        for result in RESULTS {
            drop(self.reconcile_total.get_or_create(&ResultLabels {
                controller: controller.to_owned(),
                result: result.to_owned(),
            }));
        }
        drop(self.reconcile_errors.get_or_create(&labels));
        drop(self.terminal_errors.get_or_create(&labels));
        drop(self.reconcile_panics.get_or_create(&labels));
        self.workqueue.create(controller);
    }

    /// Starts timing one reconcile of `controller`; the guard records its duration when dropped.
    pub fn reconcile_started(&self, controller: &'static str) -> ReconcileTimer<'_> {
        self.workers(controller).inc();
        ReconcileTimer {
            metrics: self,
            controller,
            started: Instant::now(),
            ticket: self.workqueue.processing(controller),
        }
    }

    /// Sets `workqueue_depth` of `controller`'s queue: requests waiting for a worker.
    pub fn set_queue_depth(&self, controller: &'static str, depth: usize) {
        self.workqueue.set_depth(controller, depth);
    }

    /// A new request entered `controller`'s queue (`workqueue_adds_total`).
    pub fn queue_added(&self, controller: &'static str) {
        self.workqueue.added(controller);
    }

    /// A request left `controller`'s queue for a worker after `waited`
    /// (`workqueue_queue_duration_seconds`).
    pub fn queue_taken(&self, controller: &'static str, waited: Duration) {
        self.workqueue.dequeued(controller, waited);
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

    /// Counts one finished reconcile with its controller-runtime result label; a result that
    /// puts the request back (an error, a requeue) is a workqueue retry, as client-go counts
    /// every delayed re-add.
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
        if result != "success" {
            self.workqueue.retried(controller);
        }
    }
}

/// Records a reconcile's duration when dropped, however the reconcile ended.
pub struct ReconcileTimer<'a> {
    metrics: &'a Metrics,
    controller: &'static str,
    started: Instant,
    ticket: u64,
}

impl Drop for ReconcileTimer<'_> {
    fn drop(&mut self) {
        self.metrics.workers(self.controller).dec();
        self.metrics.workqueue.done(self.controller, self.ticket);
        self.metrics
            .reconcile_time
            .get_or_create(&ControllerLabels {
                controller: self.controller.to_owned(),
            })
            .observe(self.started.elapsed().as_secs_f64());
    }
}
