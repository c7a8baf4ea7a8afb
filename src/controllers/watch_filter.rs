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

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use futures::Stream;
use kube::runtime::{PredicateConfig, WatchStreamExt, watcher};
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

/// The changed objects of a watch whose `trigger` properties differ from the last ones seen
/// for the same object (uid); the first sight of each object always passes.
pub fn triggering<K, S>(
    objects: S,
    trigger: fn(&K) -> Option<u64>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send
where
    K: Resource + Send + 'static,
    S: Stream<Item = Result<K, watcher::Error>> + Send,
{
    objects.predicate_filter(trigger, PredicateConfig::default())
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

    async fn passed(objects: Vec<ExternalSecret>) -> Vec<String> {
        triggering(
            futures::stream::iter(objects.into_iter().map(Ok)),
            desired_state,
        )
        .map(|object| object.unwrap().resource_version().unwrap())
        .collect()
        .await
    }

    #[tokio::test]
    async fn status_only_updates_do_not_trigger() {
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
        assert_eq!(passed(updates).await, ["1", "4", "5", "7", "8", "9"]);
    }

    #[tokio::test]
    async fn a_recreated_object_triggers_again() {
        let mut again = es("5", 1, json!({}));
        again.metadata.uid = Some("u2".into());
        let updates = vec![es("1", 1, json!({})), again];
        assert_eq!(passed(updates).await, ["1", "5"]);
    }
}
