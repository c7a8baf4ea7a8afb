//! The restart race (issue 23): right after a restart the namespace cache is still empty; a
//! reconcile deciding from it would find no selected namespace and delete every provisioned
//! PushSecret (and, under `deletionPolicy: Delete`, the pushed values). The namespace list is
//! "delayed" here by never feeding the cache, then fed; every request is recorded.

use std::sync::Arc;

use external_secrets_crds::v1alpha1::ClusterPushSecret;
use http::StatusCode;
use k8s_openapi::api::core::v1::Namespace;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};

use crate::caches::CACHE_WAIT;
use crate::controllers::fan_out::reconcile::{TemplateContext, reconcile};
use crate::controllers::test_client::recording_context;

/// A ClusterPushSecret that selects every `team=a` namespace and has provisioned `team-a`.
fn provisioned() -> ClusterPushSecret {
    serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1alpha1",
        "kind": "ClusterPushSecret",
        "metadata": {"name": "shared", "uid": "cps-uid"},
        "spec": {
            "namespaceSelectors": [{"matchLabels": {"team": "a"}}],
            "pushSecretSpec": {
                "secretStoreRefs": [{"name": "store", "kind": "ClusterSecretStore"}],
                "selector": {"secret": {"name": "source"}},
            },
        },
        "status": {"pushSecretName": "shared", "provisionedNamespaces": ["team-a"]},
    }))
    .unwrap()
}

/// Answers as if the provisioned copy exists and is ours (so a delete decision would go
/// through) and accepts writes.
fn respond(method: &str, path: &str, body: &Value) -> (StatusCode, Value) {
    match method {
        "GET" => (
            StatusCode::OK,
            json!({
                "apiVersion": "external-secrets.io/v1alpha1",
                "kind": "PushSecret",
                "metadata": {"name": "shared", "namespace": "team-a", "ownerReferences": [{
                    "apiVersion": "external-secrets.io/v1alpha1", "kind": "ClusterPushSecret",
                    "name": "shared", "uid": "cps-uid", "controller": true}]},
                "spec": {"secretStoreRefs": [], "selector": {}},
            }),
        ),
        "DELETE" => (StatusCode::OK, json!({"kind": "Status", "code": 200})),
        _ if path.ends_with("/status") => (StatusCode::OK, provisioned_with(body)),
        _ => (StatusCode::OK, body.clone()),
    }
}

fn provisioned_with(patch: &Value) -> Value {
    let mut object = serde_json::to_value(provisioned()).unwrap();
    object["status"] = patch["status"].clone();
    object
}

fn namespace(name: &str, team: &str) -> PartialObjectMeta<Namespace> {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"team": team}},
    }))
    .unwrap()
}

#[tokio::test]
async fn copies_are_not_deleted_while_the_namespace_cache_is_unsynced() {
    let (shared, requests) = recording_context("", respond);
    let (namespaces, mut writer) = reflector::store();
    let context = Arc::new(TemplateContext { shared, namespaces });

    // Restarted, namespace list not delivered yet: no decision, no request, look again soon.
    let action = reconcile(Arc::new(provisioned()), context.clone())
        .await
        .unwrap();
    assert!(
        requests.lock().unwrap().is_empty(),
        "{:?}",
        requests.lock().unwrap()
    );
    assert_eq!(action, Action::requeue(CACHE_WAIT));

    // The list arrives: team-a is still selected, so its copy is kept (not deleted).
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(namespace("team-a", "a")));
    writer.apply_watcher_event(&Event::InitDone);
    reconcile(Arc::new(provisioned()), context.clone())
        .await
        .unwrap();
    let deletes: Vec<_> = requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(method, _, _)| method == "DELETE")
        .cloned()
        .collect();
    assert!(deletes.is_empty(), "{deletes:?}");

    // team-a leaves the selection: now (and only now) its copy goes.
    writer.apply_watcher_event(&Event::Apply(namespace("team-a", "b")));
    reconcile(Arc::new(provisioned()), context).await.unwrap();
    let deleted: Vec<String> = requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(method, _, _)| method == "DELETE")
        .map(|(_, path, _)| path.clone())
        .collect();
    assert_eq!(
        deleted,
        ["/apis/external-secrets.io/v1alpha1/namespaces/team-a/pushsecrets/shared"]
    );
}
