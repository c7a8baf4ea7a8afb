//! Unit tests of target templates.
use super::*;
use serde_json::json;

fn template(spec: serde_json::Value) -> ExternalSecretTemplate {
    serde_json::from_value(spec).unwrap()
}

fn data() -> SecretData {
    pairs(&[
        ("user", "app"),
        ("password", "p@ss"),
        ("encoded", "aGVsbG8="),
    ])
}

fn pairs(pairs: &[(&str, &str)]) -> SecretData {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.as_bytes().to_vec()))
        .collect()
}

/// `apply` without ConfigMaps or Secrets; an error as its message.
fn render(template: &ExternalSecretTemplate, data: &SecretData) -> Result<Rendered, String> {
    apply(template, data, &TemplateSources::default()).map_err(|error| error.to_string())
}

fn text(rendered: &Rendered, key: &str) -> String {
    String::from_utf8(rendered.data[key].clone()).unwrap()
}

fn literal(target: &str, literal: &str, data: &SecretData) -> Result<Rendered, String> {
    let spec = json!({"templateFrom": [{"target": target, "literal": literal}]});
    render(&template(spec), data)
}

#[test]
fn data_templates_replace_the_provider_data_by_default() {
    let rendered = render(
        &template(json!({"data": {
            "dsn": "postgres://{{ .user }}:{{ .password }}@db:5432/app",
            "decoded": "{{ .encoded | b64dec }}",
            "config.yaml": "user: {{ .user | quote }}\n",
            "keys": "{{ range $k, $v := . }}{{ $k }};{{ end }}",
        }})),
        &data(),
    )
    .unwrap();
    assert_eq!(text(&rendered, "dsn"), "postgres://app:p@ss@db:5432/app");
    assert_eq!(text(&rendered, "decoded"), "hello");
    assert_eq!(text(&rendered, "config.yaml"), "user: \"app\"\n");
    assert_eq!(text(&rendered, "keys"), "encoded;password;user;");
    assert!(
        !rendered.data.contains_key("password"),
        "Replace drops provider keys"
    );
}

#[test]
fn merge_policy_keeps_provider_data_and_templates_win() {
    let rendered = render(
        &template(json!({"mergePolicy": "Merge", "data": {"user": "{{ .user | upper }}"}})),
        &data(),
    )
    .unwrap();
    assert_eq!(text(&rendered, "user"), "APP");
    assert_eq!(text(&rendered, "password"), "p@ss");
    // Only type or metadata templated: the provider data stays.
    let untemplated = render(&template(json!({"type": "Opaque"})), &data()).unwrap();
    assert_eq!(untemplated.data, data());
}

#[test]
fn metadata_and_literal_template_from_are_rendered_in_order() {
    let rendered = render(
        &template(json!({
            "metadata": {"labels": {"owner": "{{ .user }}"}, "annotations": {"fixed": "yes"}},
            "templateFrom": [
                {"literal": "from-literal: {{ .user }}\nuser: overridden\nlater: first\n"},
                {"literal": "later: second"},
                {"target": "Annotations", "literal": "note: \"{{ .user }}\""},
            ],
            "data": {"user": "{{ .user }}"},
        })),
        &data(),
    )
    .unwrap();
    assert_eq!(rendered.labels["owner"], "app");
    assert_eq!(rendered.annotations["fixed"], "yes");
    assert_eq!(rendered.annotations["note"], "app");
    assert_eq!(text(&rendered, "from-literal"), "app");
    assert_eq!(text(&rendered, "later"), "second");
    assert_eq!(
        text(&rendered, "user"),
        "app",
        "template.data wins over templateFrom"
    );
}

/// upstream's `TestExecute` label/annotation case and `KeysAndValues` scope cases.
#[test]
fn upstream_scope_cases() {
    let encoded = pairs(&[("secret", "MTIzNA=="), ("env", "ZGV2")]);
    let rendered = render(
        &template(json!({
            "data": {"foo": "{{ .secret | b64dec }}"},
            "metadata": {
                "labels": {"bar": "{{ .env | b64dec }}"},
                "annotations": {"baz": "{{ .env | b64dec }}"},
            },
        })),
        &encoded,
    )
    .unwrap();
    assert_eq!(rendered.data, pairs(&[("foo", "1234")]));
    assert_eq!(rendered.labels["bar"], "dev");
    assert_eq!(rendered.annotations["baz"], "dev");

    let kv = pairs(&[("key", "foo"), ("value", "bar")]);
    assert!(literal("Data", "", &kv).unwrap().data.is_empty());
    let source = "{{ .key }}: {{ .value }}";
    assert_eq!(
        literal("Data", source, &kv).unwrap().data,
        pairs(&[("foo", "bar")])
    );
    assert_eq!(literal("Labels", source, &kv).unwrap().labels["foo"], "bar");
    for target in ["Annotations", "annotations", "ANNOTATIONS", "AnNoTaTiOnS"] {
        let rendered = literal(target, source, &kv).unwrap();
        assert_eq!(rendered.annotations["foo"], "bar", "{target}");
        assert!(rendered.labels.is_empty() && rendered.data.is_empty());
    }
}

#[test]
fn keys_and_values_must_render_a_string_map() {
    let none = SecretData::new();
    let rendered = literal("Data", "a: \"1\"\nb: ~", &none).unwrap();
    assert_eq!(rendered.data, pairs(&[("a", "1"), ("b", "")]));
    // Scalars are printed, as Go's YAML-to-JSON-to-string reading does.
    let scalars = literal("Data", "port: 5432\nenabled: yes\nratio: 0.5", &none).unwrap();
    assert_eq!(
        scalars.data,
        pairs(&[("port", "5432"), ("enabled", "true"), ("ratio", "0.5")])
    );
    let nested = literal("Data", "a: {b: c}", &none).unwrap_err();
    assert!(
        nested.contains("cannot unmarshal object into Go value of type string"),
        "{nested}"
    );
    let list = literal("Data", "- a\n- b", &none).unwrap_err();
    assert!(
        list.starts_with("could not unmarshal template to 'map[string][]byte'"),
        "{list}"
    );
}

#[test]
fn values_decoding_strategy_decodes_rendered_values() {
    let decoded = |literal: &str, strategy: &str| {
        let spec = json!({"templateFrom": [
            {"literal": literal, "valuesDecodingStrategy": strategy},
        ]});
        render(&template(spec), &SecretData::new())
    };
    let both = decoded("service-a: SGVsbG8=\nservice-b: V29ybGQ=\n", "Base64").unwrap();
    assert_eq!(
        both.data,
        pairs(&[("service-a", "Hello"), ("service-b", "World")])
    );
    let keys_stay = decoded("SGVsbG8=: V29ybGQ=\n", "Base64").unwrap();
    assert_eq!(keys_stay.data, pairs(&[("SGVsbG8=", "World")]));
    let none = decoded("service-a: SGVsbG8=\n", "None").unwrap();
    assert_eq!(none.data, pairs(&[("service-a", "SGVsbG8=")]));
    let auto = decoded("message: SGVsbG8=\nplain: not base64!\n", "Auto").unwrap();
    assert_eq!(
        auto.data,
        pairs(&[("message", "Hello"), ("plain", "not base64!")])
    );
    let error = decoded("service-a: not-base64!\n", "Base64").unwrap_err();
    assert!(
        error.starts_with("failed to decode rendered template value for key service-a"),
        "{error}"
    );
}

/// upstream's `ValidateSecretTemplate` cases.
#[test]
fn privileged_templates_are_rejected_as_upstream() {
    let run = |spec| render(&template(spec), &data()).unwrap_err();
    assert_eq!(
        run(
            json!({"type": SERVICE_ACCOUNT_TOKEN, "metadata": {"annotations": {SERVICE_ACCOUNT_NAME: "admin"}}})
        ),
        "template.type=\"kubernetes.io/service-account-token\" with annotation \
             \"kubernetes.io/service-account.name\" is not allowed"
    );
    assert_eq!(
        run(
            json!({"type": SERVICE_ACCOUNT_TOKEN, "templateFrom": [{"literal": "x", "target": "Annotations"}]})
        ),
        "template.type=\"kubernetes.io/service-account-token\" with templateFrom \
             target=\"Annotations\" is not allowed"
    );
    assert_eq!(
        run(json!({"type": BOOTSTRAP_TOKEN})),
        "template.type=\"bootstrap.kubernetes.io/token\" is not allowed"
    );
    for target in [
        "type",
        "metadata.annotations",
        "Metadata.Annotations",
        "immutable",
        "metadata.ownerReferences",
    ] {
        let error = run(json!({"templateFrom": [{"literal": "a: b", "target": target}]}));
        assert!(
            error.contains("is not allowed when targeting a Secret"),
            "{target}: {error}"
        );
    }
}

#[test]
fn errors_name_the_key_and_never_the_values() {
    let missing = render(&template(json!({"data": {"dsn": "{{ .nope }}"}})), &data()).unwrap_err();
    assert_eq!(
        missing,
        "unable to execute template at key dsn: unable to execute template at key dsn: \
             template: dsn:1:3: executing \"dsn\" at <.nope>: map has no entry for key \"nope\""
    );
    let broken = render(&template(json!({"data": {"dsn": "{{ .user "}})), &data()).unwrap_err();
    assert!(
        broken.starts_with(
            "unable to execute template at key dsn: unable to parse template at key dsn: \
                 template: dsn:1: "
        ),
        "{broken}"
    );
    let in_literal = literal("Data", "a: {{ .password | int | fail }}", &data()).unwrap_err();
    assert!(
        in_literal.starts_with(
            "unable to execute template at key templateFrom[0].literal: unable to execute \
                 template at key templateFrom[0].literal: template: templateFrom[0].literal:1:"
        ),
        "{in_literal}"
    );
    for error in [&missing, &broken, &in_literal] {
        assert!(!error.contains("p@ss"), "{error}");
    }
    let from_secret = render(
        &template(json!({"templateFrom": [{"secret": {"name": "t", "items": [{"key": "k"}]}}]})),
        &data(),
    )
    .unwrap_err();
    assert_eq!(from_secret, "secret \"t\" not found");
}

#[test]
fn config_map_and_secret_items_render_as_values_or_keys_and_values() {
    let sources = TemplateSources {
        config_maps: [(
            "tmpl".to_owned(),
            [
                ("config.yml".to_owned(), b"user: {{ .user }}".to_vec()),
                ("pairs".to_owned(), b"a: {{ .user | upper }}\nb: x".to_vec()),
            ]
            .into(),
        )]
        .into(),
        secrets: [(
            "labels".to_owned(),
            [("team".to_owned(), b"team: {{ .user }}".to_vec())].into(),
        )]
        .into(),
    };
    let spec = template(json!({"templateFrom": [
        {"configMap": {"name": "tmpl", "items": [
            {"key": "config.yml"},
            {"key": "pairs", "templateAs": "KeysAndValues"},
        ]}},
        {"target": "Labels", "secret": {"name": "labels", "items": [
            {"key": "team", "templateAs": "KeysAndValues"},
        ]}},
    ]}));
    let rendered = apply(&spec, &data(), &sources).unwrap();
    assert_eq!(text(&rendered, "config.yml"), "user: app");
    assert_eq!(text(&rendered, "a"), "APP");
    assert_eq!(text(&rendered, "b"), "x");
    assert!(
        !rendered.data.contains_key("user"),
        "Replace drops the provider data"
    );
    assert_eq!(rendered.labels["team"], "app");
    let missing_key = template(json!({"templateFrom": [
        {"configMap": {"name": "tmpl", "items": [{"key": "absent"}]}},
    ]}));
    assert_eq!(
        apply(&missing_key, &data(), &sources)
            .unwrap_err()
            .to_string(),
        "error in configmap tmpl: missing key absent"
    );
}

#[tokio::test]
async fn one_budget_spans_every_template_of_a_reconcile() {
    // Each template writes 3 MB: alone within the 8 MiB output limit of one render.
    let big = "{{ range until 3 }}{{ repeat 1000000 \"a\" }}{{ end }}";
    let many_keys = template(json!({"data": {"a": big, "b": big, "c": big}}));
    let mixed = template(json!({
        "templateFrom": [{"target": "Data", "literal": format!("from: {big}")}],
        "data": {"key": big},
        "metadata": {"annotations": {"note": big}},
    }));
    for spec in [&many_keys, &mixed] {
        // Outside a reconcile (the `render` command) each render has a budget of its own.
        assert!(render(spec, &data()).is_ok());
        // Within one, all renders of the object share one.
        let error = budgeted(async { render(spec, &data()) }).await.unwrap_err();
        assert!(error.contains("output exceeds 8388608 bytes"), "{error}");
        assert!(!error.contains("aaaa"), "no rendered text in {error}");
    }
    // Two reconciles do not share: each starts with the whole budget.
    let small = template(json!({"data": {"a": big, "b": big}}));
    for _ in 0..2 {
        assert!(budgeted(async { render(&small, &data()) }).await.is_ok());
    }
}
