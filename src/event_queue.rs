//! Events leave the reconciles through one bounded queue, as client-go's broadcaster sends them:
//! a reconcile never waits for an Event to reach the API server (a `Created` event used to
//! delay the Ready status behind it), a full queue drops the event and counts it instead of
//! growing (client-go's `maxQueuedEvents`, 1000), and each object may send a burst of 25
//! events, then one per five minutes (client-go's `EventSourceObjectSpamFilter` defaults), so
//! an object that fails in a loop cannot flood the API server. Identical repeats within that
//! allowance become one Event with a growing series count (`event_series`, as client-go's
//! correlator).

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::Event;
use tokio::sync::mpsc;

use crate::event_series::{Reporter, Send, SeriesCache};

/// Events waiting to be sent (client-go's `maxQueuedEvents`).
const CAPACITY: usize = 1000;
/// Events one object may send at once (client-go's `defaultSpamBurst`).
const SPAM_BURST: f64 = 25.0;
/// Time to earn one more event after the burst (client-go's `defaultSpamQPS`, 1/300).
const SPAM_REFILL: Duration = Duration::from_secs(300);
/// Objects whose allowance is remembered (client-go's `maxLruCacheEntries`).
const SPAM_KEYS: usize = 4096;

/// The queue and the task that drains it, started with the first event.
pub struct EventQueue {
    client: kube::Client,
    sender: OnceLock<mpsc::Sender<Pending>>,
}

struct Pending {
    component: &'static str,
    object: ObjectReference,
    event: Event,
}

impl EventQueue {
    /// A queue sending through `client`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            sender: OnceLock::new(),
        }
    }

    /// Queues `event` about `object`, reported as `component`; `false` when the queue is full
    /// and the event was dropped. Must be called within the tokio runtime.
    pub fn send(&self, component: &'static str, object: ObjectReference, event: Event) -> bool {
        let sender = self.sender.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(CAPACITY);
            tokio::spawn(drain(self.client.clone(), receiver));
            sender
        });
        let pending = Pending {
            component,
            object,
            event,
        };
        sender.try_send(pending).is_ok()
    }
}

/// Sends queued events one at a time, within each object's allowance; repeats within a
/// series' window update its Event instead of creating one.
async fn drain(client: kube::Client, mut receiver: mpsc::Receiver<Pending>) {
    let instance = std::env::var("POD_NAME").ok();
    let mut allowances = Allowances::default();
    let mut series = SeriesCache::default();
    while let Some(pending) = receiver.recv().await {
        let now = Instant::now();
        if !allowances.take(pending.component, &pending.object, now) {
            continue;
        }
        let reporter = Reporter {
            controller: pending.component,
            instance: instance.as_deref(),
        };
        let send = series.next(reporter, &pending.event, &pending.object, now);
        let repeat = matches!(send, Send::Repeat { .. });
        let mut sent = publish(&client, send).await;
        if repeat && sent.as_ref().is_err_and(is_not_found) {
            // The series' Event expired at the API server: this occurrence begins a new one.
            series.forget(reporter, &pending.event, &pending.object);
            let send = series.next(reporter, &pending.event, &pending.object, now);
            sent = publish(&client, send).await;
        }
        if let Err(error) = sent {
            series.forget(reporter, &pending.event, &pending.object);
            tracing::warn!(
                object = pending.object.name.as_deref().unwrap_or_default(),
                %error,
                "could not publish event"
            );
        }
    }
}

fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

/// Creates the Event, or patches the series count and time of the one already sent.
async fn publish(client: &kube::Client, send: Send) -> kube::Result<()> {
    match send {
        Send::Create(event) => {
            let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
            let events: Api<K8sEvent> = Api::namespaced(client.clone(), namespace);
            events.create(&PostParams::default(), &event).await?;
        }
        Send::Repeat {
            name,
            namespace,
            count,
        } => {
            let events: Api<K8sEvent> = Api::namespaced(client.clone(), &namespace);
            let series = EventSeries {
                count,
                last_observed_time: MicroTime(Timestamp::now()),
            };
            let patch = serde_json::json!({"series": series});
            events
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
    }
    Ok(())
}

/// Per-object token buckets of the spam filter.
#[derive(Default)]
struct Allowances {
    buckets: HashMap<String, Bucket>,
}

struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Allowances {
    /// Whether `component` may send one more event about `object` at `now` (and spends it).
    fn take(&mut self, component: &str, object: &ObjectReference, now: Instant) -> bool {
        let key = spam_key(component, object);
        if !self.buckets.contains_key(&key) && self.buckets.len() >= SPAM_KEYS {
            self.forget_refilled(now);
        }
        let bucket = self.buckets.entry(key).or_insert(Bucket {
            tokens: SPAM_BURST,
            updated: now,
        });
        let earned =
            now.saturating_duration_since(bucket.updated).as_secs_f64() / SPAM_REFILL.as_secs_f64();
        bucket.tokens = (bucket.tokens + earned).min(SPAM_BURST);
        bucket.updated = now;
        if bucket.tokens < 1.0 {
            return false;
        }
        bucket.tokens -= 1.0;
        true
    }

    /// Makes room: a full bucket is the same as none; if every bucket is in use, all are
    /// forgotten (which only ever allows more events, never blocks one wrongly for long).
    fn forget_refilled(&mut self, now: Instant) {
        self.buckets.retain(|_, bucket| {
            let earned = now.saturating_duration_since(bucket.updated).as_secs_f64()
                / SPAM_REFILL.as_secs_f64();
            bucket.tokens + earned < SPAM_BURST
        });
        if self.buckets.len() >= SPAM_KEYS {
            self.buckets.clear();
        }
    }
}

/// client-go's spam key: the reporting component and the object.
fn spam_key(component: &str, object: &ObjectReference) -> String {
    [
        component,
        object.api_version.as_deref().unwrap_or_default(),
        object.kind.as_deref().unwrap_or_default(),
        object.namespace.as_deref().unwrap_or_default(),
        object.name.as_deref().unwrap_or_default(),
        object.uid.as_deref().unwrap_or_default(),
    ]
    .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(name: &str) -> ObjectReference {
        ObjectReference {
            kind: Some("ExternalSecret".into()),
            namespace: Some("team".into()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectReference::default()
        }
    }

    #[test]
    fn an_object_gets_a_burst_then_one_event_per_refill() {
        let mut allowances = Allowances::default();
        let start = Instant::now();
        let sent = (0..40)
            .filter(|_| allowances.take("c", &object("a"), start))
            .count();
        assert_eq!(sent, 25);
        assert!(!allowances.take("c", &object("a"), start + SPAM_REFILL / 2));
        assert!(allowances.take("c", &object("a"), start + SPAM_REFILL));
        assert!(!allowances.take("c", &object("a"), start + SPAM_REFILL));
        // Another object, or another component about the same object, has its own allowance.
        assert!(allowances.take("c", &object("b"), start));
        assert!(allowances.take("other", &object("a"), start));
    }

    #[test]
    fn remembered_objects_are_bounded() {
        let mut allowances = Allowances::default();
        let start = Instant::now();
        for index in 0..(SPAM_KEYS * 3) {
            assert!(allowances.take("c", &object(&index.to_string()), start));
            assert!(allowances.buckets.len() <= SPAM_KEYS);
        }
        // Refilled buckets are forgotten first: a spent one survives making room.
        let mut allowances = Allowances::default();
        for _ in 0..25 {
            allowances.take("c", &object("spent"), start);
        }
        for index in 0..(SPAM_KEYS - 1) {
            allowances.take("c", &object(&index.to_string()), start);
        }
        let later = start + SPAM_REFILL * 2;
        assert!(allowances.take("c", &object("new"), later));
        let kept: Vec<&String> = allowances.buckets.keys().collect();
        let (spent, new) = (
            spam_key("c", &object("spent")),
            spam_key("c", &object("new")),
        );
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(kept.contains(&&spent) && kept.contains(&&new), "{kept:?}");
    }
}
