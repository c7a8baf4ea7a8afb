//! Repeats of one event become one Event object with a growing series count, as client-go's
//! events broadcaster and kube-rs' recorder do. kube-rs' recorder keeps every Event it sent
//! for six minutes and scans them all on each send: 10,000 ExternalSecrets syncing held
//! 10,000 Events (about 3 KiB each) and made sending quadratic. Here at most [`SERIES_KEYS`]
//! series are remembered (client-go's LRU size), each as a hash and the Event's name.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::events::{Event, EventType};

/// Series remembered at once (client-go's `maxLruCacheEntries`).
pub const SERIES_KEYS: usize = 4096;
/// How long a repeat still joins the last Event's series (kube-rs' and client-go's 6 minutes).
pub const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// Who reports events: the component (upstream's recorder name) and the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reporter<'a> {
    /// `reportingController`.
    pub controller: &'a str,
    /// `reportingInstance` (the controller's name when unset).
    pub instance: Option<&'a str>,
}

/// What to send for one event.
#[derive(Debug, PartialEq)]
pub enum Send {
    /// A new Event object.
    Create(Box<K8sEvent>),
    /// One more occurrence of the Event `name` in `namespace`: its series count and time.
    Repeat {
        /// The Event's name.
        name: String,
        /// The Event's namespace.
        namespace: String,
        /// `series.count`.
        count: i32,
    },
}

/// The series of recently sent events, by key.
#[derive(Default)]
pub struct SeriesCache {
    series: HashMap<u64, Series>,
    /// Keys in the order their series began, with that time (a key whose series began again
    /// later is skipped when its older position comes up for eviction).
    began: VecDeque<(u64, Instant)>,
}

struct Series {
    name: String,
    namespace: String,
    count: i32,
    began: Instant,
    last: Instant,
}

impl SeriesCache {
    /// What to send for `event` about `regarding` at `now`, remembering it as the start or
    /// the next occurrence of its series.
    pub fn next(
        &mut self,
        reporter: Reporter<'_>,
        event: &Event,
        regarding: &ObjectReference,
        now: Instant,
    ) -> Send {
        let key = series_key(reporter, event, regarding);
        if let Some(series) = self.series.get_mut(&key)
            && now.saturating_duration_since(series.last) < SERIES_WINDOW
        {
            series.count = series.count.saturating_add(1);
            series.last = now;
            return Send::Repeat {
                name: series.name.clone(),
                namespace: series.namespace.clone(),
                count: series.count,
            };
        }
        let created = new_event(reporter, event, regarding);
        let series = Series {
            name: created.metadata.name.clone().unwrap_or_default(),
            namespace: created.metadata.namespace.clone().unwrap_or_default(),
            count: 1,
            began: now,
            last: now,
        };
        self.series.insert(key, series);
        self.began.push_back((key, now));
        self.evict();
        Send::Create(Box::new(created))
    }

    /// Forgets the series of `regarding`'s event: its Event object is gone (expired at the API
    /// server), so the next occurrence creates a new one.
    pub fn forget(&mut self, reporter: Reporter<'_>, event: &Event, regarding: &ObjectReference) {
        self.series.remove(&series_key(reporter, event, regarding));
    }

    /// Drops the oldest series past [`SERIES_KEYS`].
    fn evict(&mut self) {
        while self.series.len() > SERIES_KEYS {
            let Some((key, began)) = self.began.pop_front() else {
                return;
            };
            if self.series.get(&key).is_some_and(|s| s.began == began) {
                self.series.remove(&key);
            }
        }
        // Positions of series already gone (forgotten or begun again) stay bounded too.
        if self.began.len() > 2 * SERIES_KEYS {
            let series = &self.series;
            self.began
                .retain(|(key, began)| series.get(key).is_some_and(|s| s.began == *began));
        }
    }
}

/// The series an event belongs to: its reporter, type, action, reason, the object it regards
/// and the related one (kube-rs' key; the note may differ between occurrences).
fn series_key(reporter: Reporter<'_>, event: &Event, regarding: &ObjectReference) -> u64 {
    let mut hasher = DefaultHasher::new();
    reporter.hash(&mut hasher);
    event.type_.hash(&mut hasher);
    event.action.hash(&mut hasher);
    event.reason.hash(&mut hasher);
    hash_reference(regarding, &mut hasher);
    event.secondary.is_some().hash(&mut hasher);
    if let Some(related) = &event.secondary {
        hash_reference(related, &mut hasher);
    }
    hasher.finish()
}

fn hash_reference(reference: &ObjectReference, hasher: &mut DefaultHasher) {
    reference.api_version.hash(hasher);
    reference.kind.hash(hasher);
    reference.name.hash(hasher);
    reference.namespace.hash(hasher);
    reference.uid.hash(hasher);
}

/// The `events.k8s.io/v1` Event for a first occurrence, named `<object>.<time in ns, hex>`
/// as kube-rs and client-go name them.
fn new_event(reporter: Reporter<'_>, event: &Event, regarding: &ObjectReference) -> K8sEvent {
    let now = Timestamp::now();
    let object = regarding.name.as_deref().unwrap_or(reporter.controller);
    K8sEvent {
        action: Some(event.action.clone()),
        reason: Some(event.reason.clone()),
        event_time: Some(MicroTime(now)),
        regarding: Some(regarding.clone()),
        related: event.secondary.clone(),
        note: event.note.clone(),
        metadata: ObjectMeta {
            namespace: regarding.namespace.clone(),
            name: Some(format!("{object}.{:x}", now.as_nanosecond())),
            ..ObjectMeta::default()
        },
        reporting_controller: Some(reporter.controller.to_owned()),
        reporting_instance: Some(reporter.instance.unwrap_or(reporter.controller).to_owned()),
        type_: Some(
            match event.type_ {
                EventType::Normal => "Normal",
                EventType::Warning => "Warning",
            }
            .to_owned(),
        ),
        ..K8sEvent::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORTER: Reporter<'static> = Reporter {
        controller: "external-secrets",
        instance: Some("pod-1"),
    };

    fn object(name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("external-secrets.io/v1".into()),
            kind: Some("ExternalSecret".into()),
            namespace: Some("team".into()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectReference::default()
        }
    }

    fn event(reason: &str, note: &str) -> Event {
        Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: Some(note.into()),
            action: reason.into(),
            secondary: None,
        }
    }

    #[test]
    fn a_first_event_is_created_as_kube_rs_builds_it() {
        let mut cache = SeriesCache::default();
        let Send::Create(created) = cache.next(
            REPORTER,
            &event("Created", "made"),
            &object("db"),
            Instant::now(),
        ) else {
            panic!("a first event is created");
        };
        assert_eq!(created.metadata.namespace.as_deref(), Some("team"));
        assert!(created.metadata.name.as_deref().unwrap().starts_with("db."));
        assert_eq!(created.reason.as_deref(), Some("Created"));
        assert_eq!(created.note.as_deref(), Some("made"));
        assert_eq!(created.type_.as_deref(), Some("Normal"));
        assert_eq!(
            created.reporting_controller.as_deref(),
            Some("external-secrets")
        );
        assert_eq!(created.reporting_instance.as_deref(), Some("pod-1"));
        assert_eq!(created.regarding, Some(object("db")));
        assert!(created.event_time.is_some() && created.series.is_none());
    }

    #[test]
    fn repeats_within_the_window_count_up_the_same_event() {
        let mut cache = SeriesCache::default();
        let start = Instant::now();
        let Send::Create(first) = cache.next(REPORTER, &event("Failed", "a"), &object("db"), start)
        else {
            panic!("first");
        };
        let name = first.metadata.name.unwrap();
        for (count, after) in [(2, 1), (3, 300)] {
            let repeat = cache.next(
                REPORTER,
                &event("Failed", "another note"),
                &object("db"),
                start + Duration::from_secs(after),
            );
            let expected = Send::Repeat {
                name: name.clone(),
                namespace: "team".into(),
                count,
            };
            assert_eq!(repeat, expected);
        }
        // Another reason, object or reporter starts its own series.
        let other_reporter = Reporter {
            instance: Some("pod-2"),
            ..REPORTER
        };
        for (reporter, reason, name) in [
            (REPORTER, "Updated", "db"),
            (REPORTER, "Failed", "cache"),
            (other_reporter, "Failed", "db"),
        ] {
            let sent = cache.next(reporter, &event(reason, "a"), &object(name), start);
            assert!(matches!(sent, Send::Create(_)), "{reason} {name}");
        }
        // Past the window since the last occurrence, or once forgotten, a new Event begins.
        let late = start + Duration::from_secs(300) + SERIES_WINDOW;
        let sent = cache.next(REPORTER, &event("Failed", "a"), &object("db"), late);
        assert!(matches!(sent, Send::Create(_)));
        cache.forget(REPORTER, &event("Failed", "a"), &object("db"));
        let sent = cache.next(REPORTER, &event("Failed", "a"), &object("db"), late);
        assert!(matches!(sent, Send::Create(_)));
    }

    #[test]
    fn remembered_series_are_bounded_oldest_first() {
        let mut cache = SeriesCache::default();
        let start = Instant::now();
        for index in 0..(SERIES_KEYS * 3) {
            let at = start + Duration::from_millis(index as u64);
            cache.next(
                REPORTER,
                &event("Created", "x"),
                &object(&index.to_string()),
                at,
            );
            assert!(cache.series.len() <= SERIES_KEYS);
            assert!(cache.began.len() <= 2 * SERIES_KEYS + 1);
        }
        let at = start + Duration::from_secs(60);
        let newest = (SERIES_KEYS * 3 - 1).to_string();
        let sent = cache.next(REPORTER, &event("Created", "x"), &object(&newest), at);
        assert!(
            matches!(sent, Send::Repeat { count: 2, .. }),
            "the newest is kept"
        );
        let sent = cache.next(REPORTER, &event("Created", "x"), &object("0"), at);
        assert!(matches!(sent, Send::Create(_)), "the oldest was evicted");
    }
}
