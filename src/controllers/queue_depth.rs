//! `workqueue_depth` for a kube-rs controller, whose scheduler does not expose its queue:
//! the requests a trigger (a watch event, a mapped event, a drift event) has raised for an
//! object and that no reconcile has started on yet. Requests for the same object count once,
//! as they do in the real queue; a deleted object's request is dropped with it. Requeues
//! after a delay are not counted while they wait, as client-go counts them only once due.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

use kube::runtime::reflector::ObjectRef;

use crate::metrics::Metrics;

/// The waiting requests of one controller.
pub struct QueueDepth<K: kube::Resource>
where
    K::DynamicType: Eq + Hash,
{
    controller: &'static str,
    waiting: Mutex<HashSet<ObjectRef<K>>>,
    metrics: Arc<Metrics>,
}

impl<K: kube::Resource> QueueDepth<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// An empty queue of `controller`, reported through `metrics`.
    pub fn new(controller: &'static str, metrics: Arc<Metrics>) -> Self {
        metrics.set_queue_depth(controller, 0);
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
        self.update(|waiting| waiting.extend(objects.into_iter().cloned()));
    }

    /// A reconcile of `object` started (or the object is gone): its request is taken.
    pub fn taken(&self, object: &ObjectRef<K>) {
        self.update(|waiting| {
            waiting.remove(object);
        });
    }

    fn update(&self, change: impl FnOnce(&mut HashSet<ObjectRef<K>>)) {
        let mut waiting = self
            .waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        change(&mut waiting);
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
        let queue = QueueDepth::<Secret>::new("test", metrics.clone());
        assert!(depth(&metrics).ends_with(" 0"), "{}", depth(&metrics));
        let (a, b) = (
            ObjectRef::new("a").within("ns"),
            ObjectRef::new("b").within("ns"),
        );
        queue.triggered([&a, &b, &a]);
        assert_eq!(
            depth(&metrics),
            "workqueue_depth{controller=\"test\",name=\"test\"} 2"
        );
        queue.taken(&a);
        queue.taken(&a);
        assert!(depth(&metrics).ends_with(" 1"));
        queue.taken(&b);
        assert!(depth(&metrics).ends_with(" 0"));
    }
}
