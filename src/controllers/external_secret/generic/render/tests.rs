//! The generic target builder against upstream's documented behaviour (its
//! `externalsecret_controller_manifest_test.go` and the v2 engine's nested-path tests).

use super::*;
use crate::controllers::template::TemplateSources;
use serde_json::json;

fn external_secret(target: Value) -> ExternalSecret {
    serde_json::from_value(json!({
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {
            "name": "app", "namespace": "team", "uid": "es-uid",
            "labels": {"from-es": "yes"},
        },
        "spec": {"target": target},
    }))
    .unwrap()
}

fn manifest(es: &ExternalSecret) -> ManifestReference {
    es.spec.target.manifest.clone().unwrap()
}

fn data(pairs: &[(&str, &str)]) -> SecretData {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
        .collect()
}

/// The object `desired` builds; an error as its message.
fn build(target: Value, pairs: &[(&str, &str)], base: Option<&Value>) -> Result<Value, String> {
    let es = external_secret(target);
    desired(
        &es,
        &manifest(&es),
        &data(pairs),
        base,
        &TemplateSources::default(),
    )
    .map_err(|error| error.to_string())
}

#[test]
fn config_map_without_template_holds_the_data_and_es_metadata() {
    let object = build(
        json!({"name": "settings", "manifest": {"apiVersion": "v1", "kind": "ConfigMap"}}),
        &[("user", "admin"), ("port", "5432")],
        None,
    )
    .unwrap();
    assert_eq!(object["apiVersion"], "v1");
    assert_eq!(object["metadata"]["name"], "settings");
    assert_eq!(object["metadata"]["namespace"], "team");
    assert_eq!(object["data"], json!({"user": "admin", "port": "5432"}));
    let labels = &object["metadata"]["labels"];
    assert_eq!(labels["from-es"], "yes");
    assert_eq!(labels[LABEL_MANAGED], "true");
    assert_eq!(labels[LABEL_OWNER], owner_label("team", "app"));
    let owner = &object["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "ExternalSecret");
    assert_eq!(owner["uid"], "es-uid");
    assert_eq!(owner["controller"], true);
    assert_eq!(
        object["metadata"]["annotations"][ANNOTATION_DATA_HASH],
        value_hash(&object["data"])
    );
    assert!(is_valid(Some(&object), &external_secret(json!({}))));
}

#[test]
fn custom_resources_without_template_get_spec_data() {
    let object = build(
        json!({
            "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
            "creationPolicy": "Orphan",
        }),
        &[("token", "t0")],
        None,
    )
    .unwrap();
    assert_eq!(object["spec"], json!({"data": {"token": "t0"}}));
    assert_eq!(object["metadata"]["name"], "app");
    assert!(object["metadata"]["ownerReferences"].is_null());
    assert!(object["metadata"]["labels"][LABEL_OWNER].is_null());
    assert_eq!(
        object["metadata"]["annotations"][ANNOTATION_DATA_HASH],
        value_hash(&object["spec"])
    );
}

#[test]
fn templates_render_into_nested_paths_as_upstream() {
    let object = build(
        json!({
            "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
            "template": {
                "metadata": {"labels": {"tier": "db"}},
                "data": {"password": "{{ .password }}"},
                "templateFrom": [
                    {"target": "spec.database", "literal": "host: {{ .host }}\nport: 5432"},
                    {"target": "spec.database", "literal": "user: {{ .user }}"},
                    {"target": "spec.rules[1].from[0].ip", "literal": "10.0.0.1"},
                    {"target": "Annotations", "literal": "note: \"{{ .user }}\""},
                ],
            },
        }),
        &[("host", "db.local"), ("user", "app"), ("password", "pw")],
        None,
    )
    .unwrap();
    // Nested maps merge; numbers stay numbers; lists grow to the index.
    assert_eq!(
        object["spec"],
        json!({
            "database": {"host": "db.local", "port": 5432, "user": "app"},
            "rules": [null, {"from": [{"ip": "10.0.0.1"}]}],
        })
    );
    // template.data always renders into top-level `data`, as upstream's.
    assert_eq!(object["data"], json!({"password": "pw"}));
    assert_eq!(object["metadata"]["annotations"]["note"], "app");
    // Labels come from template.metadata, not from the ExternalSecret.
    assert_eq!(object["metadata"]["labels"]["tier"], "db");
    assert!(object["metadata"]["labels"]["from-es"].is_null());
}

#[test]
fn a_single_key_target_is_replaced_whole() {
    let base = json!({
        "apiVersion": "example.io/v1", "kind": "Widget",
        "metadata": {"name": "app", "namespace": "team", "resourceVersion": "7",
                     "managedFields": [{"manager": "kubectl"}]},
        "spec": {"kept": false, "other": 1},
    });
    let object = build(
        json!({
            "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
            "creationPolicy": "Merge",
            "template": {"templateFrom": [{"target": "spec", "literal": "replicas: 3"}]},
        }),
        &[],
        Some(&base),
    )
    .unwrap();
    assert_eq!(object["spec"], json!({"replicas": 3}));
    assert_eq!(object["metadata"]["resourceVersion"], "7");
    assert!(object["metadata"]["managedFields"].is_null());
}

#[test]
fn values_scope_items_and_plain_values_at_paths() {
    let es = external_secret(json!({
        "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
        "template": {"templateFrom": [
            {"target": "spec.url", "configMap": {"name": "tpl", "items": [{"key": "url"}]}},
            {"target": "spec", "configMap": {"name": "tpl", "items": [{"key": "plain"}]}},
        ]},
    }));
    let mut sources = TemplateSources::default();
    sources.config_maps.insert(
        "tpl".into(),
        [
            ("url".to_owned(), b"https://{{ .host }}/x".to_vec()),
            ("plain".to_owned(), b"{{ .host }}".to_vec()),
        ]
        .into(),
    );
    let object = desired(&es, &manifest(&es), &data(&[("host", "h")]), None, &sources).unwrap();
    assert_eq!(object["spec"], json!({"url": "https://h/x", "plain": "h"}));
}

#[test]
fn errors_name_the_problem() {
    let error = build(
        json!({
            "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
            "template": {"templateFrom": [{"target": "spec..x", "literal": "a: b"}]},
        }),
        &[],
        None,
    )
    .unwrap_err();
    assert_eq!(error, "invalid path \"spec..x\": empty segment");
    let error = build(
        json!({
            "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
            "template": {"templateFrom": [{"target": "spec.x", "literal": "a: [b"}]},
        }),
        &[],
        None,
    )
    .unwrap_err();
    assert!(
        error.starts_with("could not unmarshal template YAML"),
        "{error}"
    );
    let foreign = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app", "namespace": "team", "ownerReferences": [{
            "apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
            "name": "other", "uid": "u2", "controller": true}]},
        "data": {},
    });
    let error = build(
        json!({"manifest": {"apiVersion": "v1", "kind": "ConfigMap"}, "creationPolicy": "Merge"}),
        &[("a", "b")],
        Some(&foreign),
    )
    .unwrap_err();
    assert_eq!(error, "target is owned by another ExternalSecret: other");
}

#[test]
fn validity_and_up_to_date_checks() {
    let target = json!({"manifest": {"apiVersion": "v1", "kind": "ConfigMap"}});
    let es = external_secret(target.clone());
    let object = build(target, &[("a", "1")], None).unwrap();
    let mut stored = object.clone();
    stored["metadata"]["resourceVersion"] = json!("3");
    stored["metadata"]["managedFields"] = json!([{"manager": "x"}]);
    assert!(is_valid(Some(&stored), &es));
    assert!(is_up_to_date(&stored, &object, false));
    let mut edited = stored.clone();
    edited["data"]["a"] = json!("2");
    assert!(!is_valid(Some(&edited), &es));
    assert!(!is_up_to_date(&edited, &object, false));
    let mut unlabelled = stored.clone();
    unlabelled["metadata"]["labels"] = json!({});
    assert!(!is_valid(Some(&unlabelled), &es));
    assert!(!is_up_to_date(&unlabelled, &object, false));
    assert!(!is_valid(None, &es));
}

/// Upstream's `TestNestedPathTargeting` rows: (case, seeded spec, target, KeysAndValues?,
/// template, data, path checked, expected value there).
type NestedCase = (
    &'static str,
    Value,
    &'static str,
    bool,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
    Value,
);

fn nested_cases() -> Vec<NestedCase> {
    let xxx = "https://hooks.slack.com/services/XXX";
    vec![
        (
            "keys and values into a new map",
            json!(null),
            "spec.slack",
            true,
            "\napi_url: {{ .url }}\nwebhook_url: {{ .webhook }}\n",
            &[
                ("url", "https://hooks.slack.com/services/XXX"),
                ("webhook", "https://hooks.slack.com/services/YYY"),
            ],
            "/spec/slack",
            json!({"api_url": xxx, "webhook_url": "https://hooks.slack.com/services/YYY"}),
        ),
        (
            "merged into an existing map",
            json!({"slack": {"channel": "general", "other_field": "test-value"}}),
            "spec.slack",
            true,
            "api_url: {{ .url }}",
            &[("url", "https://hooks.slack.com/services/NEW")],
            "/spec/slack",
            json!({"channel": "general", "other_field": "test-value",
                "api_url": "https://hooks.slack.com/services/NEW"}),
        ),
        (
            "existing key overwritten, others kept",
            json!({"slack": {"channel": "general", "api_url": "https://existing", "other_field": "test-value"}}),
            "spec.slack",
            true,
            "channel: {{ .new_channel }}",
            &[("new_channel", "alerts")],
            "/spec/slack",
            json!({"channel": "alerts", "api_url": "https://existing", "other_field": "test-value"}),
        ),
        (
            "mixed case path kept (keys and values)",
            json!(null),
            "spec.headers.customRequestHeaders",
            true,
            "foo: {{ .token }}",
            &[("token", "Bearer")],
            "/spec/headers/customRequestHeaders/foo",
            json!("Bearer"),
        ),
        (
            "mixed case path kept (values)",
            json!(null),
            "spec.headers.customRequestHeaders",
            false,
            "{{ .token }}",
            &[("token", "Bearer")],
            "/spec/headers/customRequestHeaders",
            json!("Bearer"),
        ),
        (
            "tlsConfig (keys and values)",
            json!(null),
            "spec.tlsConfig.certResolver",
            true,
            "name: {{ .val }}",
            &[("val", "myResolver")],
            "/spec/tlsConfig/certResolver/name",
            json!("myResolver"),
        ),
        (
            "tlsConfig (values)",
            json!(null),
            "spec.tlsConfig.certResolver",
            false,
            "{{ .val }}",
            &[("val", "myResolver")],
            "/spec/tlsConfig/certResolver",
            json!("myResolver"),
        ),
        (
            "lists created on the way",
            json!(null),
            "spec.rules[0].from[0].source.notRemoteIpBlocks",
            true,
            "- {{ .cidr1 }}\n- {{ .cidr2 }}\n",
            &[("cidr1", "10.0.0.0/8"), ("cidr2", "192.168.0.0/16")],
            "/spec/rules/0/from/0/source/notRemoteIpBlocks",
            json!(["10.0.0.0/8", "192.168.0.0/16"]),
        ),
        (
            "sibling in a list element kept",
            json!({"rules": [{"from": "existing"}]}),
            "spec.rules[0].to",
            true,
            "operation:\n  methods:\n    - GET\n",
            &[],
            "/spec/rules/0",
            json!({"from": "existing", "to": {"operation": {"methods": ["GET"]}}}),
        ),
        (
            "list grown with nulls",
            json!(null),
            "spec.containers[1].image",
            false,
            "{{ .img }}",
            &[("img", "nginx:latest")],
            "/spec/containers",
            json!([null, {"image": "nginx:latest"}]),
        ),
        (
            "existing list elements kept",
            json!({"containers": [{"image": "sidecar:v1"}]}),
            "spec.containers[2].image",
            false,
            "{{ .img }}",
            &[("img", "nginx:latest")],
            "/spec/containers",
            json!([{"image": "sidecar:v1"}, null, {"image": "nginx:latest"}]),
        ),
    ]
}

fn apply_nested(object: &mut Value, case: &NestedCase) -> Result<(), GenericError> {
    let (_, _, target, keys_and_values, template, pairs, ..) = case;
    let data = data(pairs);
    if *keys_and_values {
        apply_keys_and_values("t", template, &data, target, DecodingStrategy::None, object)
    } else {
        apply_to_target("x", &execute("x", template, &data)?, target, object)
    }
}

#[test]
fn upstream_nested_path_targeting_and_idempotence() {
    for case in nested_cases() {
        let (name, seeded, .., path, expected) = &case;
        let mut object = json!({"apiVersion": "example.com/v1", "kind": "TestResource",
                                "metadata": {"name": "test-resource"}, "spec": seeded});
        apply_nested(&mut object, &case).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(object.pointer(path), Some(expected), "{name}: {object}");
        // Applying again changes nothing (upstream's TestNestedPathTargetingIsIdempotent).
        let first = object.clone();
        apply_nested(&mut object, &case).unwrap();
        apply_nested(&mut object, &case).unwrap();
        assert_eq!(object, first, "{name} is not idempotent");
    }
    for (target, error) in [
        ("spec.rules[abc].foo", "bad index"),
        ("[0]", "must start with a key"),
        ("[0].test", "must start with a key"),
    ] {
        let mut object = json!({});
        let message = apply_to_target("x", b"v", target, &mut object)
            .unwrap_err()
            .to_string();
        assert!(message.contains(error), "{target}: {message}");
    }
}

#[test]
fn metadata_templates_of_any_shape_fail_without_panicking() {
    let literals = [
        "just a string",
        "[1, 2]",
        "labels: x",
        "annotations: [a]",
        "42",
    ];
    for target in [
        "metadata",
        "Metadata",
        "metadata.labels",
        "metadata.annotations",
    ] {
        for literal in literals {
            let result = build(
                json!({
                    "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
                    "template": {"templateFrom": [{"target": target, "literal": literal}]},
                }),
                &[("a", "b")],
                None,
            );
            if let Ok(object) = result {
                assert!(
                    object["metadata"].is_object(),
                    "{target} {literal}: {object}"
                );
            }
        }
    }
    let error = build(
        json!({
            "manifest": {"apiVersion": "example.io/v1", "kind": "Widget"},
            "template": {"templateFrom": [{"target": "metadata", "literal": "just a string"}]},
        }),
        &[],
        None,
    )
    .unwrap_err();
    assert_eq!(error, "metadata.annotations is not a map");
}

#[test]
fn token_secrets_are_refused_through_every_template_path() {
    let token = "kubernetes.io/service-account-token";
    let annotation = "kubernetes.io/service-account.name";
    let cases = [
        json!({"manifest": {"apiVersion": "v1", "kind": "Secret"},
            "template": {"templateFrom": [{"target": "type", "literal": token}]}}),
        json!({"manifest": {"apiVersion": "/v1", "kind": "Secret"},
            "template": {"metadata": {"annotations": {annotation: "default"}}}}),
        json!({"manifest": {"apiVersion": "v1", "kind": "Secret"},
            "template": {"templateFrom": [{"target": "annotations",
                "literal": format!("{annotation}: \"{{{{ .sa }}}}\"")}]}}),
        json!({"manifest": {"apiVersion": "v1", "kind": "Secret"},
            "template": {"templateFrom": [{"target": "metadata",
                "literal": format!("annotations: {{{annotation}: admin}}")}]}}),
    ];
    for case in cases {
        let error = build(case.clone(), &[("sa", "admin")], None).unwrap_err();
        assert!(error.starts_with("manifest target "), "{case}: {error}");
    }
    let existing = json!({"apiVersion": "v1", "kind": "Secret", "type": token,
        "metadata": {"name": "app", "namespace": "team",
            "annotations": {annotation: "admin"}}, "data": {}});
    let merged = build(
        json!({"manifest": {"apiVersion": "v1", "kind": "Secret"}, "creationPolicy": "Merge"}),
        &[("a", "b")],
        Some(&existing),
    );
    assert!(merged.is_err(), "merging into a token Secret is refused");
    let opaque = build(
        json!({"manifest": {"apiVersion": "v1", "kind": "Secret"}}),
        &[("a", "b")],
        None,
    );
    assert!(opaque.is_ok(), "{opaque:?}");
}
