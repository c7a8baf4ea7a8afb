//! Good and bad objects per kind; the ExternalSecret and store cases are upstream's validator
//! test cases (same inputs, same verdicts, messages prefixed with the field).

use serde_json::{Value, json};

use super::{Kind, Rejection, check};

fn object(kind: Kind, spec: Value) -> Value {
    let api_version = match kind {
        Kind::PushSecret => "external-secrets.io/v1alpha1",
        _ => "external-secrets.io/v1",
    };
    json!({
        "apiVersion": api_version,
        "kind": kind.name(),
        "metadata": {"name": "test", "namespace": "default"},
        "spec": spec,
    })
}

fn problems(kind: Kind, spec: Value) -> Vec<String> {
    match check(kind, object(kind, spec)) {
        Ok(()) => Vec::new(),
        Err(Rejection::Invalid(problems)) => problems,
        Err(Rejection::Undecodable(message)) => panic!("undecodable: {message}"),
    }
}

fn generator_source() -> Value {
    json!([{"sourceRef": {"generatorRef": {"kind": "Password", "name": "password"}}}])
}

fn external_secret(target: Value) -> Vec<String> {
    problems(
        Kind::ExternalSecret,
        json!({"dataFrom": generator_source(), "target": target}),
    )
}

#[test]
fn valid_external_secret() {
    assert_eq!(external_secret(json!({})), Vec::<String>::new());
}

#[test]
fn deletion_policy_delete_needs_an_owned_secret() {
    let message = "spec.target: deletionPolicy=Delete must not be used when the controller \
                   doesn't own the secret. Please set creationPolicy=Owner";
    for creation in ["Merge", "None", "CreateOrMerge"] {
        assert_eq!(
            external_secret(json!({"deletionPolicy": "Delete", "creationPolicy": creation})),
            [message],
            "creationPolicy {creation}"
        );
    }
    for creation in ["Owner", "Orphan"] {
        assert!(
            external_secret(json!({"deletionPolicy": "Delete", "creationPolicy": creation}))
                .is_empty()
        );
    }
}

#[test]
fn every_problem_is_reported() {
    assert_eq!(
        problems(
            Kind::ExternalSecret,
            json!({"target": {"deletionPolicy": "Merge", "creationPolicy": "None"}})
        ),
        [
            "spec.target: deletionPolicy=Merge must not be used with creationPolicy=None. \
             There is no Secret to merge with",
            "spec: either data or dataFrom should be specified",
        ]
    );
}

#[test]
fn data_from_entries_need_exactly_one_source() {
    let exclusive = "extract, find, or generatorRef cannot be set at the same time";
    let generator = json!({"kind": "Password", "name": "password"});
    let cases = [
        (
            json!({"find": {}, "extract": {"key": "k"}}),
            exclusive.to_owned(),
        ),
        (
            json!({"find": {}, "sourceRef": {"generatorRef": generator}}),
            exclusive.to_owned(),
        ),
        (
            json!({"extract": {"key": "k"}, "sourceRef": {"generatorRef": generator}}),
            exclusive.to_owned(),
        ),
        (
            json!({}),
            "either extract, find, or sourceRef must be set to dataFrom".to_owned(),
        ),
    ];
    for (entry, message) in cases {
        assert_eq!(
            problems(Kind::ExternalSecret, json!({"dataFrom": [entry]})),
            [format!("spec.dataFrom[0]: {message}")],
        );
    }
    assert_eq!(
        problems(
            Kind::ExternalSecret,
            json!({"dataFrom": [{"sourceRef": {}}]})
        ),
        [
            "spec.dataFrom[0].sourceRef: generatorRef or storeRef must be set when using \
          sourceRef in dataFrom"
        ]
    );
}

#[test]
fn duplicate_secret_keys_are_refused_with_retain() {
    let data = |keys: &[&str]| {
        keys.iter()
            .map(|key| json!({"secretKey": key, "remoteRef": {"key": "remote"}}))
            .collect::<Vec<_>>()
    };
    let keys = [
        "SERVICE_NAME",
        "SERVICE_NAME",
        "SERVICE_NAME-2",
        "SERVICE_NAME-2",
        "NOT_DUPLICATE",
    ];
    assert_eq!(
        problems(
            Kind::ExternalSecret,
            json!({"data": data(&keys), "target": {"deletionPolicy": "Retain"}})
        ),
        [
            "spec.data[1].secretKey: duplicate secretKey found: SERVICE_NAME",
            "spec.data[3].secretKey: duplicate secretKey found: SERVICE_NAME-2",
        ]
    );
    // Upstream checks duplicates with Retain only.
    assert!(
        problems(
            Kind::ExternalSecret,
            json!({"data": data(&keys), "target": {"deletionPolicy": "Delete"}})
        )
        .is_empty()
    );
}

#[test]
fn privileged_templates_are_refused() {
    let token = "kubernetes.io/service-account-token";
    let named = json!({"template": {
        "type": token,
        "metadata": {"annotations": {"kubernetes.io/service-account.name": "admin"}},
    }});
    assert_eq!(
        external_secret(named),
        [
            "spec.target.template.metadata.annotations: template.type=\"kubernetes.io/service-\
          account-token\" with annotation \"kubernetes.io/service-account.name\" is not allowed"
        ]
    );
    assert!(external_secret(json!({"template": {"type": token}})).is_empty());
    for target in ["Annotations", "annotations"] {
        assert_eq!(
            external_secret(json!({"template": {
                "type": token,
                "templateFrom": [{"target": target, "literal": "a: b"}],
            }})),
            [
                "spec.target.template.templateFrom[0].target: template.type=\"kubernetes.io/\
              service-account-token\" with templateFrom target=\"Annotations\" is not allowed"
            ]
        );
    }
    assert!(
        external_secret(json!({"template": {
            "type": token,
            "templateFrom": [{"target": "Data", "literal": "a: b"}],
        }}))
        .is_empty()
    );
    assert_eq!(
        external_secret(json!({"template": {"type": "bootstrap.kubernetes.io/token"}})),
        [
            "spec.target.template.type: template.type=\"bootstrap.kubernetes.io/token\" is not \
          allowed"
        ]
    );
    // The annotation alone is harmless.
    assert!(
        external_secret(json!({"template": {
            "metadata": {"annotations": {"kubernetes.io/service-account.name": "admin"}},
        }}))
        .is_empty()
    );
}

#[test]
fn template_from_targets_of_secrets_are_data_labels_or_annotations() {
    let template_from = |target: &str| json!({"templateFrom": [{"target": target}]});
    for target in [
        "type",
        "metadata.annotations",
        "Metadata.Annotations.kubernetes.io/service-account.name",
        "immutable",
    ] {
        assert_eq!(
            external_secret(json!({"template": template_from(target)})),
            [format!(
                "spec.target.template.templateFrom[0].target: templateFrom target={target:?} \
                 is not allowed when targeting a Secret, must be one of \"Data\", \
                 \"Annotations\" or \"Labels\""
            )]
        );
    }
    for target in [
        "",
        "data",
        "Data",
        "labels",
        "Labels",
        "annotations",
        "Annotations",
    ] {
        assert!(external_secret(json!({"template": template_from(target)})).is_empty());
    }
    let application = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application"});
    assert!(
        external_secret(json!({
            "manifest": application,
            "template": template_from("spec.database.config"),
        }))
        .is_empty()
    );
    let secret = json!({"apiVersion": "v1", "kind": "Secret"});
    assert_eq!(
        external_secret(json!({"manifest": secret, "template": template_from("type")})).len(),
        1
    );
}

#[test]
fn expressions_templates_and_intervals_must_parse() {
    let spec = json!({
        "refreshInterval": "nonsense",
        "dataFrom": [{
            "find": {"name": {"regexp": "(unclosed"}},
            "rewrite": [
                {"regexp": {"source": "[", "target": "x"}},
                {"transform": {"template": "{{ .value "}},
            ],
        }],
        "target": {"template": {"data": {"password": "{{ if .password }}no end", "ok": "{{ .user }}"}}},
    });
    let found = problems(Kind::ExternalSecret, spec);
    let fields: Vec<&str> = found
        .iter()
        .map(|message| message.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.refreshInterval",
            "spec.target.template.data[password]",
            "spec.dataFrom[0].find.name.regexp",
            "spec.dataFrom[0].rewrite[0].regexp.source",
            "spec.dataFrom[0].rewrite[1].transform.template",
        ],
        "{found:#?}"
    );
    assert_eq!(
        found[2],
        "spec.dataFrom[0].find.name.regexp: invalid regular expression \"(unclosed\": unclosed \
         group"
    );
    assert!(found[1].contains("unable to parse template"));
}

#[test]
fn undecodable_objects_are_refused_with_the_reason() {
    let object = object(
        Kind::ExternalSecret,
        json!({"dataFrom": generator_source(), "target": {"creationPolicy": "Sometimes"}}),
    );
    match check(Kind::ExternalSecret, object) {
        Err(Rejection::Undecodable(message)) => {
            assert!(
                message.starts_with("not a valid ExternalSecret: "),
                "{message}"
            );
            assert!(message.contains("Sometimes"), "{message}");
        }
        other => panic!("expected undecodable, got {other:?}"),
    }
}

fn fake_store(extra: Value) -> Value {
    let mut spec = json!({"provider": {"fake": {"data": [{"key": "k", "value": "v"}]}}});
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    spec
}

#[test]
fn valid_stores() {
    for kind in [Kind::SecretStore, Kind::ClusterSecretStore] {
        for extra in [
            json!({"conditions": [{"namespaceRegexes": [".*"]}]}),
            json!({"refreshInterval": "1h"}),
            json!({"refreshInterval": 300}),
        ] {
            assert!(
                problems(kind, fake_store(extra.clone())).is_empty(),
                "{extra}"
            );
        }
    }
}

#[test]
fn store_refresh_interval_and_regexes_must_parse() {
    let found = problems(
        Kind::SecretStore,
        fake_store(json!({"refreshInterval": "nonsense"})),
    );
    assert_eq!(found.len(), 1);
    assert!(found[0].starts_with("spec.refreshInterval: "), "{found:?}");
    assert_eq!(
        problems(
            Kind::SecretStore,
            fake_store(json!({"refreshInterval": -5}))
        ),
        ["spec.refreshInterval: invalid refreshInterval -5: must not be negative"]
    );
    let found = problems(
        Kind::ClusterSecretStore,
        fake_store(json!({"conditions": [{"namespaceRegexes": ["\\1", "\\2"]}]})),
    );
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("spec.conditions[0].namespaceRegexes[0]: invalid regular"));
    assert!(found[1].starts_with("spec.conditions[0].namespaceRegexes[1]: invalid regular"));
}

#[test]
fn stores_need_exactly_one_valid_provider() {
    let two = json!({"provider": {
        "fake": {"data": []},
        "webhook": {"url": "http://example.com", "result": {}},
    }});
    assert_eq!(
        problems(Kind::SecretStore, two),
        ["spec.provider: secret stores must only have exactly one backend specified, found 2"]
    );
    assert_eq!(
        problems(Kind::SecretStore, json!({"provider": {}})),
        ["spec.provider: secret stores must only have exactly one backend specified, found 0"]
    );
    // The provider's own validation runs (here: the fake provider's).
    assert_eq!(
        problems(
            Kind::SecretStore,
            json!({"provider": {"fake": {"data": [{"key": "", "value": "v"}]}}})
        ),
        ["spec.provider.fake: key must be set in data 0"]
    );
}

fn push_secret(extra: Value) -> Vec<String> {
    let mut spec = json!({
        "secretStoreRefs": [{"name": "store"}],
        "selector": {"secret": {"name": "source"}},
        "data": [{"match": {"secretKey": "a", "remoteRef": {"remoteKey": "remote-a"}}}],
    });
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    problems(Kind::PushSecret, spec)
}

#[test]
fn valid_push_secret() {
    assert!(push_secret(json!({})).is_empty());
    assert!(
        push_secret(json!({"dataTo": [{
            "storeRef": {"name": "store"},
            "match": {"regexp": "^db-"},
            "rewrite": [{"regexp": {"source": "^db-", "target": ""}}],
        }]}))
        .is_empty()
    );
}

#[test]
fn push_secret_references_and_sources() {
    assert_eq!(
        push_secret(json!({"secretStoreRefs": [{}]})),
        ["spec.secretStoreRefs[0]: name or labelSelector is required"]
    );
    assert_eq!(
        push_secret(json!({"selector": {}})),
        ["spec.selector: exactly one of secret or generatorRef must be set"]
    );
    assert_eq!(
        push_secret(json!({"selector": {"secret": {}}})),
        ["spec.selector.secret: name or selector is required"]
    );
    assert_eq!(
        push_secret(
            json!({"selector": {"secret": {"selector": {"matchExpressions": [
                {"key": "app", "operator": "In"}
            ]}}}})
        ),
        [
            "spec.selector.secret.selector.matchExpressions[0].values: must be specified when \
          operator is In"
        ]
    );
}

#[test]
fn push_secret_remote_keys_are_unique() {
    let entry = |key: &str, property: Option<&str>| json!({"match": {"secretKey": key, "remoteRef": {"remoteKey": "remote", "property": property}}});
    assert_eq!(
        push_secret(json!({"data": [entry("a", None), entry("b", None)]})),
        [
            "spec.data[1].match.remoteRef: duplicate remote key \"remote\": source keys \"a\" and \
          \"b\" both map to the same destination"
        ]
    );
    assert!(
        push_secret(json!({"data": [entry("a", Some("x")), entry("b", Some("y"))]})).is_empty()
    );
}

#[test]
fn push_secret_data_to_entries() {
    assert_eq!(
        push_secret(json!({"dataTo": [{}]})),
        ["spec.dataTo[0].storeRef: storeRef is required"]
    );
    assert_eq!(
        push_secret(json!({"dataTo": [{"storeRef": {"name": "elsewhere"}}]})),
        ["spec.dataTo[0].storeRef: storeRef \"elsewhere\" not found in secretStoreRefs"]
    );
    assert_eq!(
        push_secret(json!({"dataTo": [{
            "storeRef": {"name": "store", "kind": "ClusterSecretStore"}
        }]})),
        ["spec.dataTo[0].storeRef: storeRef \"store\" not found in secretStoreRefs"]
    );
    let found =
        push_secret(json!({"dataTo": [{"storeRef": {"name": "store"}, "match": {"regexp": "("}}]}));
    assert_eq!(found.len(), 1);
    assert!(found[0].starts_with("spec.dataTo[0].match.regexp: invalid regular expression"));
}

#[test]
fn cluster_external_secret_checks_the_stamped_spec() {
    let valid = json!({
        "externalSecretSpec": {"dataFrom": generator_source()},
        "namespaceSelectors": [{"matchLabels": {"team": "a"}}],
        "refreshTime": "1m",
    });
    assert!(problems(Kind::ClusterExternalSecret, valid).is_empty());
    let invalid = json!({
        "externalSecretSpec": {"target": {"deletionPolicy": "Delete", "creationPolicy": "Merge"}},
        "namespaceSelectors": [{"matchExpressions": [{"key": "team", "operator": "Near"}]}],
        "refreshTime": "soon",
    });
    let found = problems(Kind::ClusterExternalSecret, invalid);
    let fields: Vec<&str> = found
        .iter()
        .map(|message| message.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.externalSecretSpec.target",
            "spec.externalSecretSpec",
            "spec.refreshTime",
            "spec.namespaceSelectors[0].matchExpressions[0].operator",
        ],
        "{found:#?}"
    );
}

#[test]
fn paths_follow_the_controller_runtime_pattern() {
    assert_eq!(
        Kind::ALL.map(Kind::path),
        [
            "/validate-external-secrets-io-v1-externalsecret",
            "/validate-external-secrets-io-v1-secretstore",
            "/validate-external-secrets-io-v1-clustersecretstore",
            "/validate-external-secrets-io-v1-clusterexternalsecret",
            "/validate-external-secrets-io-v1alpha1-pushsecret",
        ]
    );
}
