//! The queue side of the workqueue metrics (`workqueue_depth`, `workqueue_adds_total`,
//! `workqueue_queue_duration_seconds`) for a kube-rs controller, whose scheduler does not
//! expose its queue: the requests a trigger (a watch event, a mapped event, a drift event) has
//! raised for an object and that no reconcile has started on yet. Requests for the same
//! object count once, as they do in client-go's queue (an add of a queued item is no add); a
//! deleted object's request is dropped with it. Requeues after a delay are not counted while
//! they wait, as client-go counts them only once due.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kube::runtime::controller;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;

use crate::caches::give_back_burst;
use crate::metrics::Metrics;

/// The waiting requests of one controller.
pub struct QueueDepth<K: kube::Resource>
where
    K::DynamicType: Eq + Hash,
{
    controller: &'static str,
    /// Each waiting request and when it was raised.
    waiting: Mutex<HashMap<ObjectRef<K>, Instant>>,
    metrics: Arc<Metrics>,
}

impl<K: kube::Resource> QueueDepth<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// An empty queue of `controller` with `concurrency` workers, reported through `metrics`
    /// (this also creates the controller's controller-runtime series).
    pub fn new(controller: &'static str, concurrency: u16, metrics: Arc<Metrics>) -> Self {
        metrics.controller_started(controller, concurrency);
        Self {
            controller,
            waiting: Mutex::default(),
            metrics,
        }
    }

    /// Requests were raised for `objects`.
    pub fn triggered<'a>(&self, objects: impl IntoIterator<Item = &'a ObjectRef<K>>)
    where
        K: 'a,
    {
        let now = Instant::now();
        self.update(|waiting, metrics, controller| {
            for object in objects {
                if !waiting.contains_key(object) {
                    waiting.insert(object.clone(), now);
                    metrics.queue_added(controller);
                }
            }
        });
    }

    /// A reconcile of `object` started: its request is taken after the time it waited.
    pub fn taken(&self, object: &ObjectRef<K>) {
        self.update(|waiting, metrics, controller| {
            if let Some(raised) = waiting.remove(object) {
                metrics.queue_taken(controller, raised.elapsed());
            }
        });
    }

    /// `object` is gone: its request leaves the queue without a worker taking it.
    pub fn dropped(&self, object: &ObjectRef<K>) {
        self.update(|waiting, _, _| {
            waiting.remove(object);
        });
    }

    /// Follows the controller's own watch: a changed object's request enters the queue, a
    /// deleted object's leaves it.
    pub fn follow(&self, event: &Result<watcher::Event<K>, watcher::Error>)
    where
        K::DynamicType: Default,
    {
        if let Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) = event {
            self.triggered([&ObjectRef::from_obj(object)]);
        }
        self.follow_deletions(event);
    }

    /// Follows the deletions of the controller's own watch, for a controller whose changed
    /// objects pass a filter first (`watch_filter`) and are counted as triggers after it.
    pub fn follow_deletions(&self, event: &Result<watcher::Event<K>, watcher::Error>)
    where
        K::DynamicType: Default,
    {
        if let Ok(watcher::Event::Delete(object)) = event {
            self.dropped(&ObjectRef::from_obj(object));
        }
    }

    /// After a reconcile: an object found gone leaves the queue.
    pub fn finished<T, E>(&self, result: &Result<T, controller::Error<E, watcher::Error>>)
    where
        E: std::error::Error + 'static,
        K::DynamicType: Default,
    {
        if let Err(controller::Error::ObjectNotFound(object)) = result {
            let gone = ObjectRef::<K>::new(&object.name);
            self.dropped(&match &object.namespace {
                Some(namespace) => gone.within(namespace),
                None => gone,
            });
        }
    }

    fn update(
        &self,
        change: impl FnOnce(&mut HashMap<ObjectRef<K>, Instant>, &Metrics, &'static str),
    ) {
        let mut waiting = self
            .waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        change(&mut waiting, &self.metrics, self.controller);
        give_back_burst(&mut waiting);
        self.metrics.set_queue_depth(self.controller, waiting.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Secret;

    fn depth(metrics: &Metrics) -> String {
        metrics
            .encode()
            .lines()
            .find(|line| line.starts_with("workqueue_depth{"))
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn requests_count_once_per_object_until_taken() {
        let metrics = Arc::new(Metrics::default());
        let queue = QueueDepth::<Secret>::new("test", 3, metrics.clone());
        assert!(depth(&metrics).ends_with(" 0"), "{}", depth(&metrics));
        let (a, b) = (
            ObjectRef::new("a").within("ns"),
            ObjectRef::new("b").within("ns"),
        );
        queue.triggered([&a, &b, &a]);
        assert_eq!(
            depth(&metrics),
            "workqueue_depth{controller=\"test\",name=\"test\",priority=\"\"} 2"
        );
        queue.taken(&a);
        queue.taken(&a);
        assert!(depth(&metrics).ends_with(" 1"));
        queue.dropped(&b);
        assert!(depth(&metrics).ends_with(" 0"));
        let text = metrics.encode();
        for expected in [
            // Two distinct objects were added; the repeated add of `a` is no add.
            "workqueue_adds_total{controller=\"test\",name=\"test\"} 2",
            // Only `a` was handed to a worker; `b` was dropped.
            "workqueue_queue_duration_seconds_count{controller=\"test\",name=\"test\"} 1",
            "controller_runtime_max_concurrent_reconciles{controller=\"test\"} 3",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in\n{text}");
        }
    }
}
