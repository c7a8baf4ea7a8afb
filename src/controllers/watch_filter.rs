//! Which changes of a controller's own objects start a reconcile: upstream's watch
//! predicates for ExternalSecret and PushSecret (`shouldEnqueueExternalSecretUpdate`,
//! `shouldReconcilePushSecretUpdate`), so an object's own status write does not trigger it
//! again. Without them, a reconcile failing with a new message each time (alternating
//! provider errors) writes a new status, whose watch event starts the next reconcile at
//! once: the object burns through its retry backoff in milliseconds instead of seconds.
//!
//! A filtered change still reaches the cache (the filter stands after the reflector), so
//! reconciles started by any other trigger read the latest status. Upstream filters nothing
//! else: stores, ClusterExternalSecrets and ClusterPushSecrets see every update.

use std::collections::hash_map::{DefaultHasher, RandomState};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};

use futures::{Stream, StreamExt, future};
use kube::api::ObjectMeta;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};

/// The properties whose change starts a reconcile: generation (the spec), labels,
/// annotations (`force-sync`), finalizers and the deletion timestamp. Upstream's PushSecret
/// predicate ignores finalizer-only changes and requeues after adding its finalizer; ours
/// lets the finalizer change through instead, which starts the same next reconcile once the
/// cache holds the finalizer.
pub fn desired_state<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    Some(hash(&(
        meta.generation,
        object.labels(),
        object.annotations(),
        object.finalizers(),
        meta.deletion_timestamp.as_ref().map(|time| time.0),
    )))
}

/// The objects of a controller's own watch (its reflector already applied each event) to
/// reconcile, as references of name and namespace alone: each object whose `trigger`
/// properties differ from the last ones seen for it (same uid). The first sight of an object
/// passes, and so does every change of one without properties (`None`). A failed watch
/// call is logged and skipped (the watcher retries it).
///
/// The references carry no resource version or uid: kube's scheduler and our queue-depth
/// count keep a copy of each pending one, and the store finds objects by name and namespace
/// alone.
pub fn triggering<K, S>(
    events: S,
    trigger: fn(&K) -> Option<u64>,
    controller: &'static str,
) -> impl Stream<Item = ObjectRef<K>> + Send
where
    K: Resource + Send + 'static,
    K::DynamicType: Default,
    S: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send,
{
    let mut last = LastTriggers::default();
    events.filter_map(move |event| {
        future::ready(match event {
            Ok(event) => last.follow(&event, trigger),
            Err(error) => {
                tracing::debug!(controller, %error, "watch failed");
                None
            }
        })
    })
}

/// The reference of `object` by name and namespace alone (see [`triggering`]).
pub fn reference_of<K: Resource>(object: &K) -> ObjectRef<K>
where
    K::DynamicType: Default,
{
    let reference = ObjectRef::new(&object.name_any());
    match object.meta().namespace.as_deref() {
        Some(namespace) => reference.within(namespace),
        None => reference,
    }
}

/// The trigger hash last seen of every object, by a hash of its namespace, name and uid
/// (16 bytes an object, where keeping the three strings took ~150). The identity hash is
/// keyed at random per process, so nobody can pick a name whose hash meets another object's;
/// by chance two of 100,000 objects meet with odds of about 1 in 10^9.
#[derive(Default)]
struct LastTriggers {
    seen: HashMap<u64, u64>,
    identities: RandomState,
    /// The objects of the listing under way (between `Init` and `InitDone`): afterwards, the
    /// others are gone (deleted while the watch was down) and are forgotten.
    relisted: Option<HashSet<u64>>,
}

impl LastTriggers {
    fn follow<K>(
        &mut self,
        event: &watcher::Event<K>,
        trigger: fn(&K) -> Option<u64>,
    ) -> Option<ObjectRef<K>>
    where
        K: Resource,
        K::DynamicType: Default,
    {
        match event {
            watcher::Event::Init => {
                self.relisted = Some(HashSet::new());
                None
            }
            watcher::Event::InitDone => {
                if let Some(relisted) = self.relisted.take() {
                    self.seen.retain(|identity, _| relisted.contains(identity));
                }
                None
            }
            watcher::Event::Delete(object) => {
                self.seen.remove(&self.identity(object.meta()));
                None
            }
            watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
                let identity = self.identity(object.meta());
                if let Some(relisted) = &mut self.relisted {
                    relisted.insert(identity);
                }
                let changed = match trigger(object) {
                    Some(properties) => self.seen.insert(identity, properties) != Some(properties),
                    None => true,
                };
                changed.then(|| reference_of(object))
            }
        }
    }

    fn identity(&self, meta: &ObjectMeta) -> u64 {
        self.identities
            .hash_one((&meta.namespace, &meta.name, &meta.uid))
    }
}

fn hash(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::ExternalSecret;
    use futures::StreamExt;
    use serde_json::{Value, json};

    fn es(version: &str, generation: i64, extra: Value) -> ExternalSecret {
        let mut manifest = json!({
            "apiVersion": "external-secrets.io/v1",
            "kind": "ExternalSecret",
            "metadata": {"name": "db", "namespace": "team", "uid": "u1",
                         "resourceVersion": version, "generation": generation},
            "spec": {},
        });
        if let (Some(base), Value::Object(extra)) = (manifest.as_object_mut(), extra) {
            for (key, value) in extra {
                match (base.get_mut(&key), value) {
                    (Some(Value::Object(into)), Value::Object(value)) => into.extend(value),
                    (_, value) => {
                        base.insert(key, value);
                    }
                }
            }
        }
        serde_json::from_value(manifest).unwrap()
    }

    /// The versions of `objects` that trigger, when the watch shows them one after another.
    fn passed(objects: Vec<ExternalSecret>) -> Vec<String> {
        let mut last = LastTriggers::default();
        objects
            .into_iter()
            .filter(|object| {
                let event = watcher::Event::Apply(object.clone());
                last.follow(&event, desired_state).is_some()
            })
            .map(|object| object.resource_version().unwrap())
            .collect()
    }

    /// Whether `event` starts a reconcile.
    fn fires(last: &mut LastTriggers, event: watcher::Event<ExternalSecret>) -> bool {
        last.follow(&event, desired_state).is_some()
    }

    fn named(name: &str, version: &str) -> ExternalSecret {
        let mut object = es(version, 1, json!({}));
        object.metadata.name = Some(name.to_owned());
        object
    }

    #[test]
    fn status_only_updates_do_not_trigger() {
        let updates = vec![
            es("1", 1, json!({})),
            es(
                "2",
                1,
                json!({"status": {"refreshTime": "2026-01-01T00:00:00Z"}}),
            ),
            es(
                "3",
                1,
                json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
            ),
            es("4", 2, json!({})),
            es(
                "5",
                2,
                json!({"metadata": {"annotations": {"force-sync": "1"}}}),
            ),
            es(
                "6",
                2,
                json!({"metadata": {"annotations": {"force-sync": "1"}}, "status": {}}),
            ),
            es(
                "7",
                2,
                json!({"metadata": {"annotations": {"force-sync": "1"}, "labels": {"a": "b"}}}),
            ),
            es(
                "8",
                2,
                json!({"metadata": {"annotations": {"force-sync": "1"}, "labels": {"a": "b"}, "finalizers": ["f"]}}),
            ),
            es(
                "9",
                2,
                json!({"metadata": {"annotations": {"force-sync": "1"}, "labels": {"a": "b"}, "finalizers": ["f"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}),
            ),
        ];
        assert_eq!(passed(updates), ["1", "4", "5", "7", "8", "9"]);
    }

    #[test]
    fn a_recreated_object_triggers_again() {
        let mut again = es("5", 1, json!({}));
        again.metadata.uid = Some("u2".into());
        let updates = vec![es("1", 1, json!({})), again];
        assert_eq!(passed(updates), ["1", "5"]);
    }

    #[test]
    fn a_deleted_object_is_forgotten() {
        let mut last = LastTriggers::default();
        let first = named("a", "1");
        assert!(fires(&mut last, watcher::Event::Apply(first.clone())));
        assert!(!fires(&mut last, watcher::Event::Apply(named("a", "2"))));
        assert!(!fires(&mut last, watcher::Event::Delete(first)));
        assert!(last.seen.is_empty());
        assert!(fires(&mut last, watcher::Event::Apply(named("a", "3"))));
    }

    /// A relisting (after the watch was down) forgets the objects it no longer shows, and
    /// objects it shows unchanged do not trigger again.
    #[test]
    fn a_relisting_forgets_objects_deleted_meanwhile() {
        let mut last = LastTriggers::default();
        for name in ["kept", "gone"] {
            assert!(fires(&mut last, watcher::Event::Apply(named(name, "1"))));
        }
        assert!(!fires(&mut last, watcher::Event::Init));
        assert!(!fires(
            &mut last,
            watcher::Event::InitApply(named("kept", "2"))
        ));
        assert!(!fires(&mut last, watcher::Event::InitDone));
        assert_eq!(last.seen.len(), 1);
        assert!(fires(&mut last, watcher::Event::Apply(named("gone", "3"))));
    }

    /// The stream yields references without version or uid, and skips failed watch calls.
    #[tokio::test]
    async fn the_stream_yields_bare_references() {
        let events = vec![
            Ok(watcher::Event::Apply(named("a", "1"))),
            Err(watcher::Error::NoResourceVersion),
            Ok(watcher::Event::Apply(named("b", "1"))),
        ];
        let references: Vec<_> = triggering(futures::stream::iter(events), desired_state, "test")
            .collect()
            .await;
        let names: Vec<_> = references
            .iter()
            .map(|reference| reference.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert!(references.iter().all(|reference| {
            reference.namespace.as_deref() == Some("team")
                && reference.extra.resource_version.is_none()
                && reference.extra.uid.is_none()
        }));
    }
}
