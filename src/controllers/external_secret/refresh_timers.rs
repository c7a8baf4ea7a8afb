//! When each ExternalSecret's next refresh is due, kept here instead of in kube-rs'
//! scheduler (issue 24's memory). Every synced ExternalSecret always has its next refresh
//! pending, and kube's scheduler holds each pending request as a `DelayQueue` slot and a
//! `HashMap` entry of a full `ObjectRef` and reason (~500 bytes an object, 5.3 MB at 10,000).
//! Here an object costs one shared `namespace/name` string and two small entries. A due
//! refresh reaches the controller as a trigger ([`RefreshTimers::due`]); retries after errors
//! and short waits stay with kube's scheduler, as they are few and brief.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::runtime::reflector::ObjectRef;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::cached_external_secret::CachedExternalSecret;

/// The wait of a refresh whose due time the clock cannot hold (about 30 years).
const FOREVER: Duration = Duration::from_secs(60 * 60 * 24 * 365 * 30);

/// The pending refreshes (see the module doc).
#[derive(Default)]
pub struct RefreshTimers {
    pending: Mutex<Pending>,
    /// Raised when a refresh comes due earlier than the one [`Self::due`] sleeps until.
    earlier: Notify,
}

#[derive(Default)]
struct Pending {
    /// Each object's due time, by `namespace/name`.
    due_of: HashMap<Arc<str>, Instant>,
    /// The same, in due order.
    by_time: BTreeSet<(Instant, Arc<str>)>,
}

impl RefreshTimers {
    /// The refresh of the ExternalSecret `name` in `namespace` is due `after` from now,
    /// replacing any earlier or later time it had.
    pub fn schedule(&self, namespace: &str, name: &str, after: Duration) {
        // A refresh interval of centuries must not overflow the clock: it waits "forever".
        let now = Instant::now();
        let at = now.checked_add(after).unwrap_or_else(|| now + FOREVER);
        let key: Arc<str> = format!("{namespace}/{name}").into();
        let mut pending = self.pending();
        if let Some(old) = pending.due_of.insert(key.clone(), at) {
            pending.by_time.remove(&(old, key.clone()));
        }
        let first = pending
            .by_time
            .first()
            .is_none_or(|(earliest, _)| at < *earliest);
        pending.by_time.insert((at, key));
        drop(pending);
        if first {
            self.earlier.notify_one();
        }
    }

    /// The ExternalSecret `name` in `namespace` needs no refresh (deleted, or not refreshed
    /// periodically any more).
    pub fn forget(&self, namespace: &str, name: &str) {
        let key = format!("{namespace}/{name}");
        let mut pending = self.pending();
        if let Some((key, at)) = pending.due_of.remove_entry(key.as_str()) {
            pending.by_time.remove(&(at, key));
        }
    }

    /// The ExternalSecrets whose refresh came due, each once per [`Self::schedule`], as
    /// references of name and namespace; never ends.
    pub fn due(self: Arc<Self>) -> impl Stream<Item = ObjectRef<CachedExternalSecret>> + Send {
        futures::stream::unfold(self, |timers| async move {
            let due = timers.next_due().await;
            Some((futures::stream::iter(due), timers))
        })
        .flatten()
    }

    /// Waits until at least one refresh is due and takes every due one.
    async fn next_due(&self) -> Vec<ObjectRef<CachedExternalSecret>> {
        loop {
            let (due, next) = self.take_due(Instant::now());
            if !due.is_empty() {
                return due;
            }
            match next {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = self.earlier.notified() => {}
                    }
                }
                None => self.earlier.notified().await,
            }
        }
    }

    /// Removes the refreshes due by `now`; returns them and the next due time after them.
    fn take_due(&self, now: Instant) -> (Vec<ObjectRef<CachedExternalSecret>>, Option<Instant>) {
        let mut pending = self.pending();
        let mut due = Vec::new();
        while let Some((at, key)) = pending.by_time.first().cloned() {
            if at > now {
                return (due, Some(at));
            }
            pending.by_time.pop_first();
            pending.due_of.remove(&key);
            if let Some((namespace, name)) = key.split_once('/') {
                due.push(ObjectRef::new(name).within(namespace));
            }
        }
        (due, None)
    }

    /// How many refreshes are pending.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.pending().due_of.len()
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        // A poisoned lock only means a panic between two inserts; the entries are intact.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(references: &[ObjectRef<CachedExternalSecret>]) -> Vec<String> {
        references
            .iter()
            .map(|reference| {
                format!(
                    "{}/{}",
                    reference.namespace.as_deref().unwrap_or(""),
                    reference.name
                )
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn refreshes_come_due_in_order_and_once() {
        let timers = Arc::new(RefreshTimers::default());
        timers.schedule("team", "late", Duration::from_secs(30));
        timers.schedule("team", "soon", Duration::from_secs(10));
        timers.schedule("other", "moved", Duration::from_secs(5));
        // Rescheduled: only the new time counts.
        timers.schedule("other", "moved", Duration::from_secs(20));
        timers.schedule("team", "gone", Duration::from_secs(15));
        timers.forget("team", "gone");
        let started = Instant::now();
        let mut due = Box::pin(timers.clone().due());
        let mut seen = Vec::new();
        for _ in 0..3 {
            let reference = due.next().await.unwrap();
            seen.push((names(&[reference]).remove(0), started.elapsed().as_secs()));
        }
        assert_eq!(
            seen,
            [
                ("team/soon".to_owned(), 10),
                ("other/moved".to_owned(), 20),
                ("team/late".to_owned(), 30)
            ]
        );
        assert_eq!(timers.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_refresh_wakes_the_sleeping_stream() {
        let timers = Arc::new(RefreshTimers::default());
        timers.schedule("team", "hourly", Duration::from_secs(3600));
        let started = Instant::now();
        let mut due = Box::pin(timers.clone().due());
        let waiting = tokio::spawn(async move { due.next().await.unwrap() });
        tokio::time::sleep(Duration::from_secs(1)).await;
        timers.schedule("team", "urgent", Duration::from_secs(2));
        let first = waiting.await.unwrap();
        assert_eq!(first.name, "urgent");
        assert_eq!(started.elapsed().as_secs(), 3);
        assert_eq!(timers.len(), 1);
    }

    #[test]
    fn an_interval_beyond_the_clock_waits_instead_of_panicking() {
        let timers = RefreshTimers::default();
        timers.schedule("team", "never", Duration::MAX);
        let (due, next) = timers.take_due(Instant::now() + Duration::from_secs(3600));
        assert!(due.is_empty());
        assert!(next.is_some());
    }

    #[test]
    fn references_carry_name_and_namespace_only() {
        let timers = RefreshTimers::default();
        timers.schedule("team", "db", Duration::ZERO);
        let (due, next) = timers.take_due(Instant::now() + Duration::from_millis(1));
        assert_eq!(names(&due), ["team/db"]);
        assert!(due[0].extra.resource_version.is_none() && due[0].extra.uid.is_none());
        assert_eq!(next, None);
    }
}
