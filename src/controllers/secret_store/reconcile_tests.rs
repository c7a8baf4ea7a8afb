//! Reconcile scenarios against an in-process fake of the few API calls the store controller
//! makes (status patch, event creation); every request is recorded and checked.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use external_secrets_crds::v1::{ClusterSecretStore, SecretStore};
use http::StatusCode;
use kube::runtime::controller::Action;
use serde_json::{Value, json};

use super::{error_policy, reconcile};
use crate::context::Context;
use crate::controllers::test_client::{Recorded, recording_context};

/// A context whose Kubernetes client answers from memory, and the requests it received.
fn context(class: &str) -> (Arc<Context>, Arc<Mutex<Vec<Recorded>>>) {
    recording_context(class, |method, path, body| {
        if method == "PATCH" && path.ends_with("/status") {
            (StatusCode::OK, echo_store(path, body))
        } else if method == "POST" && path.ends_with("/events") {
            (StatusCode::CREATED, body.clone())
        } else {
            (
                StatusCode::NOT_FOUND,
                json!({"kind": "Status", "code": 404}),
            )
        }
    })
}

/// The object a status patch returns: the patched status on a minimal store.
fn echo_store(path: &str, patch: &Value) -> Value {
    let name = path.trim_end_matches("/status").rsplit('/').next().unwrap();
    json!({
        "apiVersion": patch["apiVersion"],
        "kind": patch["kind"],
        "metadata": {"name": name, "uid": "u", "generation": 1},
        "spec": {"provider": {"fake": {"data": []}}},
        "status": patch["status"],
    })
}

fn store(name: &str, controller: Option<&str>, provider: Value) -> SecretStore {
    serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "SecretStore",
        "metadata": {"name": name, "namespace": "team-a", "uid": format!("uid-{name}"), "generation": 1},
        "spec": {"controller": controller, "provider": provider},
    }))
    .unwrap()
}

fn patches(requests: &Mutex<Vec<Recorded>>) -> Vec<Recorded> {
    requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(method, _, _)| method == "PATCH")
        .cloned()
        .collect()
}

/// The Events posted so far, once there are `wanted` (they leave through the event queue,
/// after the reconcile returned); fails after ten seconds.
async fn events(requests: &Mutex<Vec<Recorded>>, wanted: usize) -> Vec<Value> {
    for _ in 0..1000 {
        let posted: Vec<Value> = requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(method, path, _)| method == "POST" && path.ends_with("/events"))
            .map(|(_, _, body)| body.clone())
            .collect();
        if posted.len() >= wanted {
            return posted;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("fewer than {wanted} events were posted");
}

#[tokio::test]
async fn fake_store_becomes_ready_with_capabilities() {
    let (context, requests) = context("default");
    let store = Arc::new(store("fake", None, json!({"fake": {"data": []}})));
    let action = reconcile(&*store, &context, None).await.unwrap();
    assert_ne!(action, Action::await_change());

    let patches = patches(&requests);
    assert_eq!(patches.len(), 1);
    let (_, path, body) = &patches[0];
    assert_eq!(
        path,
        "/apis/external-secrets.io/v1/namespaces/team-a/secretstores/fake/status"
    );
    assert_eq!(body["kind"], "SecretStore");
    assert_eq!(body["status"]["capabilities"], "ReadWrite");
    let condition = &body["status"]["conditions"][0];
    assert_eq!(condition["type"], "Ready");
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "Valid");
    assert_eq!(condition["message"], "store validated");
    let events = events(&requests, 2).await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["type"], "Normal");
    assert_eq!(events[0]["reason"], "Valid");
    assert_eq!(events[0]["reportingController"], "secret-store");
    // Upstream registers the fake provider NotMaintained (fake.go `MaintenanceStatus`).
    assert_eq!(events[1]["type"], "Warning");
    assert_eq!(events[1]["reason"], "StoreUnmaintained");
    assert_eq!(
        events[1]["note"],
        "store isn't currently maintained. Please plan and prepare accordingly."
    );
    let metrics = context.metrics.encode();
    assert!(metrics.contains("secretstore_reconcile_duration{name=\"fake\",namespace=\"team-a\"}"));
    assert!(metrics.contains(
        "secretstore_status_condition{name=\"fake\",namespace=\"team-a\",condition=\"Ready\",status=\"True\"} 1"
    ));

    // The watch event of our own patch does not validate or write again.
    let mut patched = (*store).clone();
    patched.status = serde_json::from_value(body["status"].clone()).unwrap();
    reconcile(&patched, &context, None).await.unwrap();
    assert_eq!(requests.lock().unwrap().len(), 3);
}

/// Upstream `reconcile` (pkg/controllers/secretstore/common.go) skips the maintenance
/// warning when the store has the `external-secrets.io/ignore-maintenance-checks` annotation.
#[tokio::test]
async fn the_ignore_annotation_silences_the_maintenance_warning() {
    let (context, requests) = context("default");
    let mut quiet = store("quiet", None, json!({"fake": {"data": []}}));
    quiet.metadata.annotations = Some(
        [(
            "external-secrets.io/ignore-maintenance-checks".to_owned(),
            "true".to_owned(),
        )]
        .into(),
    );
    reconcile(&quiet, &context, None).await.unwrap();
    events(&requests, 1).await;
    // A warning would be queued right behind the first event: give it time to arrive.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let reasons: Vec<Value> = events(&requests, 1)
        .await
        .iter()
        .map(|event| event["reason"].clone())
        .collect();
    assert_eq!(reasons, [json!("Valid")]);
}

#[tokio::test]
async fn unsupported_provider_is_invalid_provider_config_and_waits_for_change() {
    let (context, requests) = context("default");
    let store = Arc::new(store(
        "volcengine",
        None,
        json!({"volcengine": {"region": "cn-beijing"}}),
    ));
    let error = reconcile(&*store, &context, None).await.unwrap_err();
    assert_eq!(error.reason(), "InvalidProviderConfig");
    assert_eq!(
        error_policy(&*store, &error, &context),
        Action::await_change()
    );
    let patches = patches(&requests);
    let condition = &patches[0].2["status"]["conditions"][0];
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "InvalidProviderConfig");
    // Upstream's `errUnableCreateClient` alone; the error goes to the event.
    assert_eq!(condition["message"], "unable to create client");
    let events = events(&requests, 1).await;
    assert_eq!(events[0]["type"], "Warning");
    assert_eq!(events[0]["reason"], "InvalidProviderConfig");
    let note = events[0]["note"].as_str().unwrap();
    assert!(
        note.contains("provider \"volcengine\" is not supported by this build"),
        "{note}"
    );
}

/// Upstream `validateStore` + `reconcile` (pkg/controllers/secretstore/common.go): the fake
/// provider with `validationResult: 1` returns Unknown with "unable to validate"; the store is
/// Ready=True `ValidationUnknown` "could not determine validation status", a Warning event
/// carries the error, and the store is requeued at its interval, not failed.
#[tokio::test]
async fn validation_unknown_is_ready_with_a_warning_event() {
    let (context, requests) = context("default");
    let store = Arc::new(store(
        "unsure",
        None,
        json!({"fake": {"data": [], "validationResult": 1}}),
    ));
    let action = reconcile(&*store, &context, None).await.unwrap();
    assert_ne!(action, Action::await_change());
    let condition = &patches(&requests)[0].2["status"]["conditions"][0];
    assert_eq!(condition["status"], "True");
    assert_eq!(condition["reason"], "ValidationUnknown");
    assert_eq!(
        condition["message"],
        "could not determine validation status"
    );
    let events = events(&requests, 1).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "Warning");
    assert_eq!(events[0]["reason"], "ValidationUnknown");
    assert_eq!(events[0]["note"], "unable to validate");
}

#[tokio::test]
async fn unreachable_webhook_fails_validation_and_backs_off() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let (context, requests) = context("default");
    let store = Arc::new(store(
        "hook",
        None,
        json!({"webhook": {"url": format!("http://127.0.0.1:{port}/secret"), "result": {}}}),
    ));
    let error = reconcile(&*store, &context, None).await.unwrap_err();
    assert_eq!(error.reason(), "ValidationFailed");
    let condition = &patches(&requests)[0].2["status"]["conditions"][0];
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "InvalidProviderConfig");
    assert_eq!(condition["message"], "unable to validate store");
    assert!(error.is_temporary(), "{error}");
    assert_eq!(
        error_policy(&*store, &error, &context),
        Action::requeue(Duration::from_secs(1))
    );
}

#[tokio::test]
async fn stores_of_another_class_are_left_untouched() {
    let (context, requests) = context("default");
    let store = Arc::new(store("other", Some("dev"), json!({"fake": {"data": []}})));
    let action = reconcile(&*store, &context, None).await.unwrap();
    assert_eq!(action, Action::await_change());
    assert!(requests.lock().unwrap().is_empty());
}

#[tokio::test]
async fn cluster_store_status_goes_to_the_cluster_path() {
    let (context, requests) = context("default");
    let store: ClusterSecretStore = serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ClusterSecretStore",
        "metadata": {"name": "global", "uid": "uid-global", "generation": 1},
        "spec": {"provider": {"fake": {"data": []}}},
    }))
    .unwrap();
    reconcile(&store, &context, None).await.unwrap();
    let patches = patches(&requests);
    assert_eq!(
        patches[0].1,
        "/apis/external-secrets.io/v1/clustersecretstores/global/status"
    );
    assert!(context.metrics.encode().contains(
        "clustersecretstore_status_condition{name=\"global\",namespace=\"\",condition=\"Ready\",status=\"True\"} 1"
    ));
}
