//! client-go's workqueue metrics as controller-runtime (v0.22, the version upstream ESO v2.9
//! builds with) registers them: `workqueue_depth`, `_adds_total`, `_retries_total`,
//! `_queue_duration_seconds`, `_work_duration_seconds`, `_unfinished_work_seconds` and
//! `_longest_running_processor_seconds`, labelled `name` and `controller` (both the
//! controller's name) and, on the depth, an empty `priority`.
//!
//! A kube-rs controller's scheduler does not expose its queue, so the queue side (depth,
//! adds, time waiting) comes from [`crate::controllers::queue_depth`], the processing side
//! (work duration, unfinished work, longest running processor) from the reconcile timer, and
//! retries from the reconcile results that requeue (client-go counts every delayed re-add).
//! Unfinished work is computed at scrape time from the reconciles in flight, which client-go
//! refreshes every 500 ms.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type QueueHistograms = Family<QueueLabels, Histogram, fn() -> Histogram>;

/// Labels of the workqueue metrics (controller-runtime: `name` and `controller`, both the
/// controller's name).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabels {
    /// The controller's name, e.g. `externalsecret`.
    pub controller: String,
    /// The queue's name: the controller's name, as controller-runtime names it.
    pub name: String,
}

impl QueueLabels {
    fn of(controller: &str) -> Self {
        Self {
            controller: controller.to_owned(),
            name: controller.to_owned(),
        }
    }
}

/// Labels of `workqueue_depth`: controller-runtime v0.22 adds a `priority` label, empty for
/// queues without priorities (every upstream ESO controller's).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DepthLabels {
    /// The controller's name.
    pub controller: String,
    /// The queue's name (the controller's).
    pub name: String,
    /// Always empty: no queue here has priorities.
    pub priority: String,
}

/// client-go's buckets for both workqueue histograms: 10 ns up to 1000 s in powers of ten.
fn queue_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

/// The workqueue metric families and the reconciles in flight they report on.
pub(super) struct Workqueue {
    depth: Family<DepthLabels, Gauge>,
    adds: Family<QueueLabels, Counter>,
    retries: Family<QueueLabels, Counter>,
    queue_duration: QueueHistograms,
    work_duration: QueueHistograms,
    in_flight: Arc<InFlight>,
}

/// Start times of the reconciles running now, per controller, keyed by a ticket number.
#[derive(Debug, Default)]
struct InFlight {
    next: AtomicU64,
    running: Mutex<HashMap<&'static str, HashMap<u64, Instant>>>,
}

impl InFlight {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<&'static str, HashMap<u64, Instant>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Workqueue {
    /// Registers every family under controller-runtime's names and help texts.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let queue = Self {
            depth: Family::default(),
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: Family::new_with_constructor(queue_histogram),
            work_duration: Family::new_with_constructor(queue_histogram),
            in_flight: Arc::default(),
        };
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            queue.depth.clone(),
        );
        // prometheus-client appends `_total` to counters.
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            queue.adds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            queue.retries.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            queue.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            // The registry appends the help's final full stop.
            "How long in seconds processing an item from workqueue takes",
            queue.work_duration.clone(),
        );
        registry.register_collector(Box::new(queue.in_flight.clone()));
        queue
    }

    /// Creates every series of `controller`'s queue at zero, as client-go does when the queue
    /// is made, so dashboards see the queue before its first item.
    pub(super) fn create(&self, controller: &'static str) {
        let labels = QueueLabels::of(controller);
        self.set_depth(controller, 0);
        drop(self.adds.get_or_create(&labels));
        drop(self.retries.get_or_create(&labels));
        drop(self.queue_duration.get_or_create(&labels));
        drop(self.work_duration.get_or_create(&labels));
        self.in_flight.running().entry(controller).or_default();
    }

    pub(super) fn set_depth(&self, controller: &str, depth: usize) {
        self.depth
            .get_or_create(&DepthLabels {
                controller: controller.to_owned(),
                name: controller.to_owned(),
                priority: String::new(),
            })
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    /// One new request entered `controller`'s queue.
    pub(super) fn added(&self, controller: &str) {
        self.adds.get_or_create(&QueueLabels::of(controller)).inc();
    }

    /// A request was handed to a worker after waiting `waited`.
    pub(super) fn dequeued(&self, controller: &str, waited: Duration) {
        self.queue_duration
            .get_or_create(&QueueLabels::of(controller))
            .observe(waited.as_secs_f64());
    }

    /// A reconcile asked to run again later (an error or a requeue).
    pub(super) fn retried(&self, controller: &str) {
        self.retries
            .get_or_create(&QueueLabels::of(controller))
            .inc();
    }

    /// A worker started processing; returns the ticket [`Self::done`] takes.
    pub(super) fn processing(&self, controller: &'static str) -> u64 {
        let ticket = self.in_flight.next.fetch_add(1, Ordering::Relaxed);
        self.in_flight
            .running()
            .entry(controller)
            .or_default()
            .insert(ticket, Instant::now());
        ticket
    }

    /// The worker holding `ticket` finished: its processing time is observed.
    pub(super) fn done(&self, controller: &'static str, ticket: u64) {
        let started = self
            .in_flight
            .running()
            .get_mut(controller)
            .and_then(|running| running.remove(&ticket));
        if let Some(started) = started {
            self.work_duration
                .get_or_create(&QueueLabels::of(controller))
                .observe(started.elapsed().as_secs_f64());
        }
    }
}

impl Collector for InFlight {
    /// `workqueue_unfinished_work_seconds` (the summed age of the reconciles running) and
    /// `workqueue_longest_running_processor_seconds` (the oldest one's), per controller.
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let now = Instant::now();
        let ages: Vec<(&'static str, f64, f64)> = self
            .running()
            .iter()
            .map(|(controller, running)| {
                let ages = running
                    .values()
                    .map(|started| (now - *started).as_secs_f64());
                let (sum, longest) = ages.fold((0.0, 0.0_f64), |(sum, longest), age| {
                    (sum + age, longest.max(age))
                });
                (*controller, sum, longest)
            })
            .collect();
        for (name, help, pick) in [
            (
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been \
                 observed by work_duration. Large values indicate stuck threads. One can deduce \
                 the number of stuck threads by observing the rate at which this increases.",
                0,
            ),
            (
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                1,
            ),
        ] {
            let mut family = encoder.encode_descriptor(
                name,
                help,
                None,
                prometheus_client::metrics::MetricType::Gauge,
            )?;
            for (controller, sum, longest) in &ages {
                let value = if pick == 0 { *sum } else { *longest };
                let labels = QueueLabels::of(controller);
                ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}
