//! Pins the API semantics the controller relies on, through kube-rs, so the loopback server
//! cannot silently drift from kube-apiserver. Every test here must also pass against a real
//! cluster (`KUBECONFIG=...`); loopback-only behaviour is pinned in `loopback_server.rs`.

use e2e::harness::{TestCluster, TestCrd, TestNamespace, eventually, is_not_found};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenReview};
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::core::Status;
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn config_map(name: &str, data: Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).expect("a ConfigMap")
}

fn api_error(error: kube::Error) -> Status {
    match error {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// The `details.causes` of an error status.
fn causes_of(status: Status) -> Vec<kube::core::response::StatusCause> {
    status
        .details
        .map(|details| details.causes)
        .unwrap_or_default()
}

/// The ConfigMap kube-controller-manager publishes the cluster's CA in, in every namespace.
const ROOT_CA: &str = "kube-root-ca.crt";

/// A small CRD with defaults, validation and a status subresource.
fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.e2e.external-secrets.io"},
        "spec": {
            "group": "e2e.external-secrets.io",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wdg"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size"],
                            "properties": {
                                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                                "mode": {"type": "string", "enum": ["auto", "manual"], "default": "auto"},
                                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
                                "options": {
                                    "type": "object",
                                    "default": {},
                                    "properties": {"retries": {"type": "integer", "default": 3}}
                                },
                                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}}
                            }
                        },
                        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
                    }
                }}
            }]
        }
    })
}

#[tokio::test]
async fn stale_resource_version_conflicts() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "rv").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let created = api
        .create(&PostParams::default(), &config_map("c", json!({"k": "1"})))
        .await?;
    let mut first = created.clone();
    first.data = Some([("k".to_owned(), "2".to_owned())].into());
    let updated = api.replace("c", &PostParams::default(), &first).await?;
    assert_ne!(
        updated.metadata.resource_version,
        created.metadata.resource_version
    );
    let mut stale = created.clone();
    stale.data = Some([("k".to_owned(), "3".to_owned())].into());
    let error = api_error(
        api.replace("c", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (error.code, error.reason.as_str()),
        (409, "Conflict"),
        "{error:?}"
    );
    assert!(
        error.message.contains("the object has been modified"),
        "{}",
        error.message
    );
    let error = api_error(
        api.create(&PostParams::default(), &config_map("c", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!((error.code, error.reason.as_str()), (409, "AlreadyExists"));
    namespace.delete().await
}

#[tokio::test]
async fn watch_resumes_after_a_resource_version() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "watch").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let first = api
        .create(&PostParams::default(), &config_map("a", json!({"k": "1"})))
        .await?;
    let resume_from = first.metadata.resource_version.clone().unwrap();
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await?;
    api.create(&PostParams::default(), &config_map("b", json!({})))
        .await?;
    let params = WatchParams::default().timeout(10);
    let mut events = api.watch(&params, &resume_from).await?.boxed();
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let (event, object) = match events.try_next().await?.expect("the watch ended early") {
            WatchEvent::Modified(object) => ("MODIFIED", object),
            WatchEvent::Added(object) => ("ADDED", object),
            WatchEvent::Bookmark(_) => continue,
            other => panic!("unexpected event {other:?}"),
        };
        let name = object.metadata.name.unwrap_or_default();
        // The controller manager's `kube-root-ca.crt` may land after `a` on a real cluster.
        if name != ROOT_CA {
            seen.push(format!("{event} {name}"));
        }
    }
    assert_eq!(seen, vec!["MODIFIED a", "ADDED b"]);
    namespace.delete().await
}

/// kube-controller-manager's root-CA publisher gives every new namespace a `kube-root-ca.crt`
/// ConfigMap whose `ca.crt` is the CA bundle that verifies the API server (pods read it from
/// their projected service-account volume); it lands after the namespace, so this polls.
#[tokio::test]
async fn new_namespaces_get_the_root_ca_config_map() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "root-ca").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let published = eventually(Duration::from_secs(60), "kube-root-ca.crt", || async {
        Ok(api
            .get_opt(ROOT_CA)
            .await?
            .and_then(|config_map| config_map.data?.remove("ca.crt")))
    })
    .await?;
    assert!(
        published.starts_with("-----BEGIN CERTIFICATE-----\n"),
        "{published}"
    );
    if let Some(ca) = cluster.api_server()?.ca_pem {
        assert!(
            published.contains(ca.trim()),
            "the published bundle lacks the kubeconfig's CA"
        );
    }
    namespace.delete().await
}

/// Resource version 1 is compacted away on any cluster that has run for a moment.
#[tokio::test]
async fn watch_from_a_compacted_resource_version_is_expired() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "expired").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let outcome = match api.watch(&WatchParams::default().timeout(10), "1").await {
        Err(error) => api_error(error).code,
        Ok(stream) => match stream.boxed().try_next().await? {
            Some(WatchEvent::Error(error)) => error.code,
            other => panic!("expected an ERROR event, got {other:?}"),
        },
    };
    assert_eq!(outcome, 410);
    namespace.delete().await
}

#[tokio::test]
async fn garbage_collection_follows_owner_references() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "gc").await?;
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    for (owner_name, policy) in [
        ("background", DeleteParams::background()),
        ("foreground", DeleteParams::foreground()),
    ] {
        let owner = config_maps
            .create(&PostParams::default(), &config_map(owner_name, json!({})))
            .await?;
        let reference = json!([{
            "apiVersion": "v1", "kind": "ConfigMap", "name": owner_name,
            "uid": owner.metadata.uid.clone().unwrap(), "controller": true, "blockOwnerDeletion": true,
        }]);
        let dependent_name = format!("{owner_name}-dependent");
        let dependent: Secret = serde_json::from_value(json!({
            "metadata": {"name": dependent_name, "ownerReferences": reference},
            "stringData": {"k": "v"},
        }))?;
        secrets.create(&PostParams::default(), &dependent).await?;
        config_maps.delete(owner_name, &policy).await?;
        eventually(
            WAIT,
            "the owner and its dependent to be collected",
            || async {
                let owner_gone = config_maps.get_opt(owner_name).await?.is_none();
                let dependent_gone = secrets.get_opt(&dependent_name).await?.is_none();
                Ok((owner_gone && dependent_gone).then_some(()))
            },
        )
        .await?;
    }
    let owner = config_maps
        .create(&PostParams::default(), &config_map("orphaning", json!({})))
        .await?;
    let orphan: Secret = serde_json::from_value(
        json!({"metadata": {"name": "orphan", "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "orphaning", "uid": owner.metadata.uid.unwrap(),
        }]}}),
    )?;
    secrets.create(&PostParams::default(), &orphan).await?;
    config_maps
        .delete("orphaning", &DeleteParams::orphan())
        .await?;
    let orphan = eventually(WAIT, "the dependent to be orphaned", || async {
        let owner_gone = config_maps.get_opt("orphaning").await?.is_none();
        let orphan = secrets.get("orphan").await?;
        Ok((owner_gone
            && orphan
                .metadata
                .owner_references
                .as_ref()
                .is_none_or(Vec::is_empty))
        .then_some(orphan))
    })
    .await?;
    assert!(orphan.metadata.deletion_timestamp.is_none());
    namespace.delete().await
}

#[tokio::test]
async fn finalizers_block_deletion() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "finalizers").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let mut held = config_map("held", json!({}));
    held.metadata.finalizers = Some(vec!["e2e.external-secrets.io/hold".into()]);
    api.create(&PostParams::default(), &held).await?;
    api.delete("held", &DeleteParams::default()).await?;
    let deleting = api.get("held").await?;
    assert!(deleting.metadata.deletion_timestamp.is_some());
    let error = api_error(
        api.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["e2e.external-secrets.io/hold", "e2e.external-secrets.io/more"]}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(error.code, 422, "{error:?}");
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await?;
    eventually(WAIT, "the ConfigMap to be deleted", || async {
        Ok(api.get_opt("held").await?.is_none().then_some(()))
    })
    .await?;
    namespace.delete().await
}

#[tokio::test]
async fn namespace_deletion_removes_its_contents() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "nsdel").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    api.create(&PostParams::default(), &config_map("inside", json!({})))
        .await?;
    let name = namespace.name.clone();
    namespace.delete().await?;
    let error = api_error(api.get("inside").await.unwrap_err());
    assert_eq!(error.code, 404);
    let error = api_error(
        api.create(&PostParams::default(), &config_map("late", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        error.code, 404,
        "creating in the deleted namespace {name}: {error:?}"
    );
    Ok(())
}

#[tokio::test]
async fn custom_resources_are_validated_defaulted_and_pruned() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let crd = TestCrd::create(&cluster, widget_crd()).await?;
    let namespace = TestNamespace::create(&cluster, "schema").await?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(cluster.client.clone(), &namespace.name, &crd.resource("v1"));
    let widget = |name: &str, spec: Value| -> DynamicObject {
        serde_json::from_value(json!({"apiVersion": format!("{}/v1", crd.group), "kind": "Widget", "metadata": {"name": name}, "spec": spec}))
            .expect("a Widget")
    };
    let created = api
        .create(
            &PostParams::default(),
            &widget("ok", json!({"size": 2, "unknown": true})),
        )
        .await?;
    assert_eq!(
        created.data["spec"],
        json!({"size": 2, "mode": "auto", "options": {"retries": 3}})
    );
    assert_eq!(created.metadata.generation, Some(1));
    let cases = [
        (json!({}), "spec.size: Required value"),
        (
            json!({"size": 0}),
            "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
        ),
        (
            json!({"size": "two"}),
            "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
        ),
        (
            json!({"size": 1, "mode": "loud"}),
            "spec.mode: Unsupported value: \"loud\": supported values: \"auto\", \"manual\"",
        ),
        (
            json!({"size": 1, "name": "UPPER"}),
            "spec.name: Invalid value: \"UPPER\": spec.name in body should match '^[a-z]+$'",
        ),
    ];
    for (spec, expected) in cases {
        let error = api_error(
            api.create(&PostParams::default(), &widget("bad", spec.clone()))
                .await
                .unwrap_err(),
        );
        assert_eq!(
            (error.code, error.reason.as_str()),
            (422, "Invalid"),
            "{spec}: {error:?}"
        );
        let prefix = format!("Widget.{} \"bad\" is invalid: ", crd.group);
        assert!(error.message.starts_with(&prefix), "{}", error.message);
        assert!(
            error.message.contains(expected),
            "{spec}: {}",
            error.message
        );
    }
    let strict = PatchParams {
        field_validation: Some(kube::api::ValidationDirective::Strict),
        ..PatchParams::default()
    };
    let error = api_error(
        api.patch("ok", &strict, &Patch::Merge(json!({"spec": {"bogus": 1}})))
            .await
            .unwrap_err(),
    );
    // kube-apiserver's patch.go answers a patch whose result fails strict decoding with
    // `errors.NewInvalid(schema.GroupKind{}, "", field.Invalid(field.NewPath("patch"), ...))`:
    // 422 Invalid, one cause on the field `patch` (a create or update gets 400 instead).
    assert_eq!(
        (error.code, error.reason.as_str()),
        (422, "Invalid"),
        "{error:?}"
    );
    assert!(
        error
            .message
            .starts_with(" \"\" is invalid: patch: Invalid value: ")
            && error
                .message
                .ends_with(": strict decoding error: unknown field \"spec.bogus\""),
        "{}",
        error.message
    );
    let causes = causes_of(error);
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert_eq!(
        (causes[0].field.as_str(), causes[0].reason.as_str()),
        ("patch", "FieldValueInvalid")
    );
    // A patch whose result breaks the schema is 422 like a create, with the field as cause.
    let error = api_error(
        api.patch(
            "ok",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 0}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        (error.code, error.reason.as_str()),
        (422, "Invalid"),
        "{error:?}"
    );
    let causes = causes_of(error);
    assert!(
        causes
            .iter()
            .any(|cause| cause.field == "spec.size" && cause.reason == "FieldValueInvalid"),
        "{causes:?}"
    );
    namespace.delete().await?;
    crd.delete().await
}

#[tokio::test]
async fn status_subresource_and_generation() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let crd = TestCrd::create(&cluster, widget_crd()).await?;
    let namespace = TestNamespace::create(&cluster, "status").await?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(cluster.client.clone(), &namespace.name, &crd.resource("v1"));
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{}/v1", crd.group), "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"size": 1}, "status": {"ready": true},
    }))?;
    let created = api.create(&PostParams::default(), &object).await?;
    assert!(
        created.data.get("status").is_none(),
        "status is dropped on create: {:?}",
        created.data
    );
    let merge = |value: Value| Patch::Merge(value);
    let params = PatchParams::default();
    let after_status = api
        .patch_status(
            "w",
            &params,
            &merge(json!({"status": {"ready": true}, "spec": {"size": 5}})),
        )
        .await?;
    assert_eq!(after_status.data["status"]["ready"], true);
    assert_eq!(
        after_status.data["spec"]["size"], 1,
        "status writes ignore the spec"
    );
    assert_eq!(
        after_status.metadata.generation,
        Some(1),
        "status writes keep the generation"
    );
    let after_spec = api
        .patch(
            "w",
            &params,
            &merge(json!({"spec": {"size": 2}, "status": {"ready": false}})),
        )
        .await?;
    assert_eq!(after_spec.data["spec"]["size"], 2);
    assert_eq!(
        after_spec.data["status"]["ready"], true,
        "main-resource writes ignore the status"
    );
    assert_eq!(after_spec.metadata.generation, Some(2));
    let after_labels = api
        .patch(
            "w",
            &params,
            &merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await?;
    assert_eq!(
        after_labels.metadata.generation,
        Some(2),
        "metadata changes keep the generation"
    );
    namespace.delete().await?;
    crd.delete().await
}

#[tokio::test]
async fn label_and_field_selectors() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "selectors").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    for (name, labels) in [
        ("a", json!({"app": "web", "tier": "front"})),
        ("b", json!({"app": "db"})),
        ("c", json!({})),
    ] {
        let object: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}}))?;
        api.create(&PostParams::default(), &object).await?;
    }
    let names = |selector: &'static str| {
        let api = api.clone();
        async move {
            let list = api.list(&ListParams::default().labels(selector)).await?;
            let mut names: Vec<String> = list
                .items
                .into_iter()
                .filter_map(|o| o.metadata.name)
                .collect();
            names.sort();
            anyhow::Ok(names)
        }
    };
    assert_eq!(names("app=web").await?, vec!["a"]);
    assert_eq!(names("app==web,tier").await?, vec!["a"]);
    assert_eq!(names("app!=web,app").await?, vec!["b"]);
    assert_eq!(names("app in (web,db)").await?, vec!["a", "b"]);
    assert_eq!(names("app notin (web),app").await?, vec!["b"]);
    assert_eq!(
        names("!app")
            .await?
            .into_iter()
            .filter(|n| n == "c")
            .count(),
        1
    );
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=b"))
        .await?;
    assert_eq!(by_name.items.len(), 1);
    let secrets: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    for (name, kind) in [("opaque", "Opaque"), ("basic", "kubernetes.io/basic-auth")] {
        let secret: Secret = serde_json::from_value(
            json!({"metadata": {"name": name}, "type": kind, "stringData": {"username": "u"}}),
        )?;
        secrets.create(&PostParams::default(), &secret).await?;
    }
    let basic = secrets
        .list(&ListParams::default().fields("type=kubernetes.io/basic-auth"))
        .await?;
    assert_eq!(
        basic
            .items
            .iter()
            .filter_map(|s| s.metadata.name.as_deref())
            .collect::<Vec<_>>(),
        vec!["basic"]
    );
    let page = api
        .list(&ListParams::default().labels("app").limit(1))
        .await?;
    assert_eq!(page.items.len(), 1);
    let token = page.metadata.continue_.clone().expect("a continue token");
    let rest = api
        .list(
            &ListParams::default()
                .labels("app")
                .limit(1)
                .continue_token(&token),
        )
        .await?;
    assert_eq!(rest.items.len(), 1);
    assert_ne!(rest.items[0].metadata.name, page.items[0].metadata.name);
    namespace.delete().await
}

#[tokio::test]
async fn server_side_apply_conflicts_and_force() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "ssa").await?;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let applied = |value: &str, extra: Option<&str>| {
        let mut data = json!({"shared": value});
        if let Some(extra) = extra {
            data["extra"] = extra.into();
        }
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data})
    };
    api.patch(
        "c",
        &PatchParams::apply("first"),
        &Patch::Apply(applied("1", Some("x"))),
    )
    .await?;
    let error = api_error(
        api.patch(
            "c",
            &PatchParams::apply("second"),
            &Patch::Apply(applied("2", None)),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        (error.code, error.reason.as_str()),
        (409, "Conflict"),
        "{error:?}"
    );
    assert!(
        error.message.contains("conflict with \"first\""),
        "{}",
        error.message
    );
    assert!(error.message.contains(".data.shared"), "{}", error.message);
    let same = api
        .patch(
            "c",
            &PatchParams::apply("second"),
            &Patch::Apply(applied("1", None)),
        )
        .await?;
    assert_eq!(
        same.data.unwrap()["shared"],
        "1",
        "applying an equal value is no conflict"
    );
    let forced = api
        .patch(
            "c",
            &PatchParams::apply("second").force(),
            &Patch::Apply(applied("2", None)),
        )
        .await?;
    assert_eq!(forced.data.as_ref().unwrap()["shared"], "2");
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|entry| entry.manager)
        .collect();
    assert!(managers.contains(&"second".to_owned()), "{managers:?}");
    let dropped = api
        .patch(
            "c",
            &PatchParams::apply("first"),
            &Patch::Apply(applied("2", None)),
        )
        .await?;
    let data = dropped.data.unwrap();
    assert!(
        !data.contains_key("extra"),
        "fields no longer applied are removed: {data:?}"
    );
    namespace.delete().await
}

#[tokio::test]
async fn token_request_and_token_review_round_trip() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "tokens").await?;
    let accounts: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let account = accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "reader"}}))?,
        )
        .await?;
    let request: TokenRequest = serde_json::from_value(
        json!({"spec": {"audiences": ["vault"], "expirationSeconds": 600}}),
    )?;
    let issued = accounts
        .create_token_request("reader", &PostParams::default(), &request)
        .await?;
    let token = issued.status.expect("a token").token;
    let reviews: Api<TokenReview> = Api::all(cluster.client.clone());
    let review = |audiences: Vec<&str>| -> TokenReview {
        serde_json::from_value(json!({"spec": {"token": token, "audiences": audiences}}))
            .expect("a TokenReview")
    };
    let reviewed = reviews
        .create(&PostParams::default(), &review(vec!["vault"]))
        .await?;
    let status = reviewed.status.expect("a review status");
    assert_eq!(status.authenticated, Some(true), "{status:?}");
    let user = status.user.expect("a user");
    assert_eq!(
        user.username.as_deref(),
        Some(format!("system:serviceaccount:{}:reader", namespace.name).as_str())
    );
    assert_eq!(user.uid, account.metadata.uid);
    assert!(
        user.groups
            .unwrap_or_default()
            .contains(&format!("system:serviceaccounts:{}", namespace.name))
    );
    assert_eq!(status.audiences, Some(vec!["vault".to_owned()]));
    let rejected = reviews
        .create(&PostParams::default(), &review(vec!["elsewhere"]))
        .await?;
    assert_ne!(rejected.status.and_then(|s| s.authenticated), Some(true));
    let error = api_error(
        accounts
            .create_token_request("missing", &PostParams::default(), &request)
            .await
            .unwrap_err(),
    );
    assert!(is_not_found(&kube::Error::Api(Box::new(error))));
    namespace.delete().await
}

#[tokio::test]
async fn secrets_merge_string_data_and_honor_immutability() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let namespace = TestNamespace::create(&cluster, "secrets").await?;
    let api: Api<Secret> = Api::namespaced(cluster.client.clone(), &namespace.name);
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"generateName": "s-"}, "immutable": true,
        "data": {"a": "YQ=="}, "stringData": {"b": "bee"},
    }))?;
    let created = api.create(&PostParams::default(), &secret).await?;
    let name = created.metadata.name.clone().unwrap();
    assert!(name.starts_with("s-") && name.len() > 2);
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    assert!(created.string_data.is_none());
    let data = created.data.unwrap();
    assert_eq!(data["b"].0, b"bee");
    assert_eq!(data["a"].0, b"a");
    assert_eq!(created.metadata.generation, None);
    let error = api_error(
        api.patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"b": "changed"}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(error.code, 422, "{error:?}");
    let tls: Secret = serde_json::from_value(
        json!({"metadata": {"name": "tls"}, "type": "kubernetes.io/tls", "stringData": {"tls.crt": "x"}}),
    )?;
    let error = api_error(api.create(&PostParams::default(), &tls).await.unwrap_err());
    assert_eq!(error.code, 422);
    assert!(
        error.message.contains("data[tls.key]: Required value"),
        "{}",
        error.message
    );
    namespace.delete().await
}

#[tokio::test]
async fn dry_run_delete_collection_and_cross_namespace_lists() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let first = TestNamespace::create(&cluster, "multi-a").await?;
    let second = TestNamespace::create(&cluster, "multi-b").await?;
    let run = e2e::harness::unique_name("run");
    let labelled = |name: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"e2e-run": run}}}))
            .expect("a ConfigMap")
    };
    let in_first: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &first.name);
    let in_second: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &second.name);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let planned = in_first.create(&dry_run, &labelled("planned")).await?;
    assert_eq!(planned.metadata.name.as_deref(), Some("planned"));
    assert!(
        in_first.get_opt("planned").await?.is_none(),
        "dry runs store nothing"
    );
    for api in [&in_first, &in_second] {
        api.create(&PostParams::default(), &labelled("one")).await?;
        api.create(&PostParams::default(), &labelled("two")).await?;
    }
    let everywhere: Api<ConfigMap> = Api::all(cluster.client.clone());
    let selector = format!("e2e-run={run}");
    let listed = everywhere
        .list(&ListParams::default().labels(&selector))
        .await?;
    let mut found: Vec<String> = listed
        .items
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o.metadata.namespace.as_deref().unwrap_or_default(),
                o.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect();
    found.sort();
    let mut expected = vec![
        format!("{}/one", first.name),
        format!("{}/two", first.name),
        format!("{}/one", second.name),
        format!("{}/two", second.name),
    ];
    expected.sort();
    assert_eq!(found, expected);
    in_first
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels(&selector),
        )
        .await?;
    eventually(WAIT, "the collection to be deleted", || async {
        let left = in_first
            .list(&ListParams::default().labels(&selector))
            .await?
            .items
            .len();
        Ok((left == 0).then_some(()))
    })
    .await?;
    assert_eq!(
        in_second
            .list(&ListParams::default().labels(&selector))
            .await?
            .items
            .len(),
        2
    );
    first.delete().await?;
    second.delete().await
}

#[tokio::test]
async fn plain_and_aggregated_discovery_find_built_in_and_custom_kinds() -> anyhow::Result<()> {
    let cluster = TestCluster::connect().await?;
    let crd = TestCrd::create(&cluster, widget_crd()).await?;
    for aggregated in [false, true] {
        let discovery = kube::discovery::Discovery::new(cluster.client.clone());
        let discovery = if aggregated {
            discovery.run_aggregated().await?
        } else {
            discovery.run().await?
        };
        let find = |group: &str, kind: &str| {
            let gvk = kube::api::GroupVersionKind::gvk(group, "v1", kind);
            discovery
                .resolve_gvk(&gvk)
                .map(|(resource, capabilities)| (resource.plural, capabilities.scope))
        };
        assert_eq!(
            find("", "Secret"),
            Some(("secrets".to_owned(), kube::discovery::Scope::Namespaced)),
            "aggregated: {aggregated}"
        );
        assert_eq!(
            find("apiextensions.k8s.io", "CustomResourceDefinition").map(|(plural, _)| plural),
            Some("customresourcedefinitions".to_owned())
        );
        assert_eq!(
            find(&crd.group, "Widget").map(|(plural, _)| plural),
            Some("widgets".to_owned())
        );
        let (_, capabilities) = discovery
            .resolve_gvk(&kube::api::GroupVersionKind::gvk(
                &crd.group, "v1", "Widget",
            ))
            .unwrap();
        assert!(
            capabilities
                .subresources
                .iter()
                .any(|(sub, _)| sub.plural == "widgets/status" || sub.plural == "status"),
            "{:?}",
            capabilities.subresources
        );
    }
    crd.delete().await
}
