//! Upstream's security advisory classes, proven closed end to end with the object that must not be
//! reached really present: a namespace user's ExternalSecret, PushSecret or SecretStore never
//! reads another namespace's ConfigMaps, Secrets or stores (GHSA-77v3, GHSA-fcxq, GHSA-wv26),
//! and a secret value that makes a sync fail never shows in status, events, logs or metrics
//! (#5884). Each test fails if its protection is removed; see SECURITY.md.

mod support;

use e2e::harness::{
    TestNamespace, create_manifest as create, eventually, string_data, unique_name,
};
use external_secrets_crds::v1::{ExternalSecret, SecretStore};
use external_secrets_crds::v1alpha1::PushSecret;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};
use support::{Setup, WAIT, external_secret, force_sync_until, secret_store, wait_reason};

/// What only the other namespace holds; it must never reach the test's namespace.
const OTHER_NAMESPACE_VALUE: &str = "other-namespace-value-7f3a";

fn config_map(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

fn secret(name: &str, labels: Value, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "labels": labels}, "stringData": data})
}

/// GHSA-77v3: `templateFrom` names a ConfigMap and a Secret without a namespace; they resolve in
/// the ExternalSecret's namespace only, even when another namespace has both.
#[tokio::test]
async fn template_sources_resolve_only_in_the_external_secrets_namespace() -> anyhow::Result<()> {
    let setup = Setup::start("adv-template", &[]).await?;
    let other = TestNamespace::create(&setup.cluster, "adv-template-other").await?;
    let theirs = |name| Api::<ConfigMap>::namespaced(setup.client(), name);
    let leaked = format!("{{{{ .user }}}} {OTHER_NAMESPACE_VALUE}");
    create(
        &theirs(&other.name),
        config_map("tpl", json!({"greeting": leaked})),
    )
    .await?;
    create(
        &Api::<Secret>::namespaced(setup.client(), &other.name),
        secret("tpl", json!({}), json!({"farewell": OTHER_NAMESPACE_VALUE})),
    )
    .await?;

    let external_secrets: Api<ExternalSecret> = setup.api();
    let template = json!({"target": {"template": {"templateFrom": [
        {"configMap": {"name": "tpl", "items": [{"key": "greeting"}]}},
        {"secret": {"name": "tpl", "items": [{"key": "farewell"}]}},
    ]}}});
    external_secrets
        .create(
            &PostParams::default(),
            &external_secret("templated", "store", template)?,
        )
        .await?;
    let (_, ready) = wait_reason(
        &external_secrets,
        "templated",
        "SecretSyncedError",
        &setup.controller,
    )
    .await?;
    assert_eq!(ready[0], "False", "{ready:?}");
    assert!(!ready[2].contains(OTHER_NAMESPACE_VALUE), "{ready:?}");
    let secrets: Api<Secret> = setup.api();
    assert!(secrets.get_opt("templated").await?.is_none());

    // The same names in the ExternalSecret's own namespace are what it renders.
    create(
        &setup.api::<ConfigMap>(),
        config_map("tpl", json!({"greeting": "hello {{ .user }}"})),
    )
    .await?;
    create(
        &secrets,
        secret("tpl", json!({}), json!({"farewell": "bye"})),
    )
    .await?;
    force_sync_until(
        &external_secrets,
        "templated",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let rendered = string_data(&secrets.get("templated").await?);
    assert_eq!(rendered["greeting"], "hello app");
    assert_eq!(rendered["farewell"], "bye");
    other.delete().await?;
    setup.finish().await
}

/// GHSA-fcxq: a PushSecret's label selectors pick source Secrets and stores of its own namespace
/// only, while another namespace has a Secret and a store with the same labels.
#[tokio::test]
async fn push_secret_selectors_stay_in_their_namespace() -> anyhow::Result<()> {
    let setup = Setup::start("adv-push", &[]).await?;
    let other = TestNamespace::create(&setup.cluster, "adv-push-other").await?;
    let labelled_store = |name: &str| -> anyhow::Result<SecretStore> {
        let mut store = secret_store(name, &setup.class, json!([]))?;
        store.metadata.labels = Some([("team".to_owned(), "x".to_owned())].into());
        Ok(store)
    };
    let their_stores = Api::<SecretStore>::namespaced(setup.client(), &other.name);
    their_stores
        .create(&PostParams::default(), &labelled_store("store-b")?)
        .await?;
    create(
        &Api::<Secret>::namespaced(setup.client(), &other.name),
        secret(
            "theirs",
            json!({"push": "yes"}),
            json!({"password": OTHER_NAMESPACE_VALUE}),
        ),
    )
    .await?;
    setup
        .api::<SecretStore>()
        .create(&PostParams::default(), &labelled_store("store-a")?)
        .await?;
    create(
        &setup.api::<Secret>(),
        secret(
            "mine",
            json!({"push": "yes"}),
            json!({"password": "own-value"}),
        ),
    )
    .await?;

    let push_secrets: Api<PushSecret> = setup.api();
    create(
        &push_secrets,
        json!({"apiVersion": "external-secrets.io/v1alpha1", "kind": "PushSecret",
        "metadata": {"name": "by-labels"},
        "spec": {
            "refreshInterval": "1h",
            "secretStoreRefs": [{"kind": "SecretStore",
                "labelSelector": {"matchLabels": {"team": "x"}}}],
            "selector": {"secret": {"selector": {"matchLabels": {"push": "yes"}}}},
            "data": [{"match": {"secretKey": "password",
                "remoteRef": {"remoteKey": "pushed"}}}],
        }}),
    )
    .await?;
    let synced = eventually(WAIT, "PushSecret by-labels Synced", || async {
        let push_secret = push_secrets.get("by-labels").await?;
        let status = push_secret.status.unwrap_or_default();
        let ready = status
            .conditions
            .iter()
            .any(|c| c.r#type == "Ready" && c.reason.as_deref() == Some("Synced"));
        Ok(ready.then_some(status.synced_push_secrets))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    assert_eq!(
        synced.keys().collect::<Vec<_>>(),
        ["SecretStore/store-a"],
        "{synced:?}"
    );

    // What reached store-a is this namespace's Secret; store-b received nothing.
    let read_back = |name: &str, store: &str| {
        external_secret(
            name,
            store,
            json!({"data": [{"secretKey": "password", "remoteRef": {"key": "pushed"}}]}),
        )
    };
    let external_secrets: Api<ExternalSecret> = setup.api();
    external_secrets
        .create(&PostParams::default(), &read_back("read-a", "store-a")?)
        .await?;
    wait_reason(
        &external_secrets,
        "read-a",
        "SecretSynced",
        &setup.controller,
    )
    .await?;
    let pushed = string_data(&setup.api::<Secret>().get("read-a").await?);
    assert_eq!(pushed["password"], "own-value");
    let their_external_secrets = Api::<ExternalSecret>::namespaced(setup.client(), &other.name);
    their_external_secrets
        .create(&PostParams::default(), &read_back("read-b", "store-b")?)
        .await?;
    let (_, ready) = wait_reason(
        &their_external_secrets,
        "read-b",
        "SecretSyncedError",
        &setup.controller,
    )
    .await?;
    assert_eq!(ready[0], "False", "{ready:?}");
    other.delete().await?;
    setup.finish().await
}

/// GHSA-wv26: a SecretStore's `caProvider` may not name another namespace, even one where the
/// ConfigMap exists; the store is refused with upstream's message.
#[tokio::test]
async fn ca_provider_of_another_namespace_is_refused_with_the_object_present() -> anyhow::Result<()>
{
    let setup = Setup::start("adv-ca", &[]).await?;
    let other = TestNamespace::create(&setup.cluster, "adv-ca-other").await?;
    create(
        &Api::<ConfigMap>::namespaced(setup.client(), &other.name),
        config_map("ca", json!({"ca.crt": "not read"})),
    )
    .await?;
    create(
        &setup.api::<Secret>(),
        secret("token", json!({}), json!({"token": "t"})),
    )
    .await?;
    let stores: Api<SecretStore> = setup.api();
    create(
        &stores,
        json!({"apiVersion": "external-secrets.io/v1", "kind": "SecretStore",
        "metadata": {"name": "foreign-ca"},
        "spec": {"controller": setup.class, "provider": {"kubernetes": {
            "remoteNamespace": "default",
            "server": {"url": "https://127.0.0.1:1", "caProvider": {
                "type": "ConfigMap", "name": "ca", "key": "ca.crt", "namespace": other.name}},
            "auth": {"token": {"bearerToken": {"name": "token", "key": "token"}}},
        }}}}),
    )
    .await?;
    // Upstream's message, in the Ready condition or (where upstream puts the error) the
    // store's Warning event.
    let refusal = "CAProvider.namespace must be empty with SecretStore";
    eventually(WAIT, "store foreign-ca refused", || async {
        let store = stores.get("foreign-ca").await?;
        let Some(ready) = store
            .status
            .and_then(|status| status.conditions.into_iter().find(|c| c.r#type == "Ready"))
            .filter(|ready| ready.status == "False")
        else {
            return Ok(None);
        };
        let events = setup.api::<Event>().list(&ListParams::default()).await?;
        let in_event = events.items.iter().any(|event| {
            event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("foreign-ca")
                && event.note.as_deref().unwrap_or_default().contains(refusal)
        });
        Ok((in_event
            || ready
                .message
                .as_deref()
                .unwrap_or_default()
                .contains(refusal))
        .then_some(()))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    other.delete().await?;
    setup.finish().await
}

/// #5884: a secret value that makes a sync fail (a JSON path into a non-JSON value, invalid
/// base64, a non-JSON `extract`, a template function on it) never shows in the ExternalSecrets'
/// status, the namespace's events, the controller's log or its metrics.
#[tokio::test]
async fn failing_values_never_reach_status_events_logs_or_metrics() -> anyhow::Result<()> {
    let setup = Setup::start("adv-leak", &[]).await?;
    let canary = format!("canary-{} {{not: json", unique_name("v"));
    let stores: Api<SecretStore> = setup.api();
    stores
        .create(
            &PostParams::default(),
            &secret_store(
                "canary-store",
                &setup.class,
                json!([{"key": "/canary", "value": canary}]),
            )?,
        )
        .await?;
    let failing = [
        (
            "property",
            json!({"data": [{"secretKey": "x",
                "remoteRef": {"key": "/canary", "property": "field"}}]}),
        ),
        (
            "base64",
            json!({"data": [{"secretKey": "x",
                "remoteRef": {"key": "/canary", "decodingStrategy": "Base64"}}]}),
        ),
        (
            "extract",
            json!({"data": [], "dataFrom": [{"extract": {"key": "/canary"}}]}),
        ),
        (
            "template",
            json!({"data": [{"secretKey": "x", "remoteRef": {"key": "/canary"}}],
                "target": {"template": {"data": {"y": "{{ .x | mustFromJson }}"}}}}),
        ),
    ];
    let external_secrets: Api<ExternalSecret> = setup.api();
    for (name, spec) in &failing {
        external_secrets
            .create(
                &PostParams::default(),
                &external_secret(name, "canary-store", spec.clone())?,
            )
            .await?;
    }
    let mut surfaces = Vec::new();
    for (name, _) in &failing {
        let (external_secret, ready) = wait_reason(
            &external_secrets,
            name,
            "SecretSyncedError",
            &setup.controller,
        )
        .await?;
        assert_eq!(ready[0], "False", "{name}: {ready:?}");
        surfaces.push(serde_json::to_string(&external_secret.status)?);
    }
    let events = eventually(WAIT, "Warning events of the failed syncs", || async {
        let events = setup.api::<Event>().list(&ListParams::default()).await?;
        let warnings = events
            .items
            .iter()
            .filter(|event| event.type_.as_deref() == Some("Warning"))
            .count();
        Ok((warnings >= failing.len()).then_some(events.items))
    })
    .await
    .map_err(|error| error.context(setup.controller.log()))?;
    surfaces.push(serde_json::to_string(&events)?);
    surfaces.push(setup.controller.log());
    surfaces.push(setup.controller.metrics().await?);
    let secret_part = canary.split(' ').next().unwrap_or_default();
    for surface in &surfaces {
        assert!(
            !surface.contains(secret_part),
            "value leaked into: {surface}"
        );
    }
    setup.finish().await
}
