//! `spec.target.template`, applied as upstream's `ApplyTemplate` does: the template is first
//! checked as upstream's `ValidateSecretTemplate` checks it; the provider data is kept only with
//! `mergePolicy: Merge` or when nothing is templated; `templateFrom` entries apply in order (a
//! ConfigMap's or Secret's items, rendered as `Values` or `KeysAndValues`, then a literal), then
//! `template.data` (which wins); labels and annotations are templates too. The ConfigMaps and
//! Secrets are read first ([`sources`]), from the object's own namespace only, so rendering
//! itself does no I/O.
//! Templates run on the `external-secrets-template` engine with upstream's options: every
//! fetched value is a string and a missing key is an error. Messages name the key and never
//! carry values.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use external_secrets_crds::v1::{
    ExternalSecretTemplate, TemplateFrom, TemplateMergePolicy, TemplateScope,
};
use external_secrets_providers::credentials::SecretSource;
use external_secrets_providers::request::DecodingStrategy;
use external_secrets_template::{Delimiters, TemplateError, render, yaml_to_string_map};

use super::fetch::decode;
use super::target::SecretData;

/// What a template produces for the target Secret.
#[derive(Debug, Default, PartialEq)]
pub struct Rendered {
    /// The Secret's data.
    pub data: SecretData,
    /// Labels to set (rendered `template.metadata.labels` and templateFrom Labels).
    pub labels: BTreeMap<String, String>,
    /// Annotations to set.
    pub annotations: BTreeMap<String, String>,
}

/// Where an ExternalSecret keeps its template.
pub const TEMPLATE_FIELD: &str = "spec.target.template";

/// The data of the ConfigMaps and Secrets that `templateFrom` entries name, by name.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TemplateSources {
    /// ConfigMaps' data.
    pub config_maps: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// Secrets' data.
    pub secrets: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
}

/// Reads the ConfigMaps and Secrets `template` (the object's field `at`) names from
/// `namespace` (the object's own); a missing one fails with the templateFrom field naming it.
pub async fn sources(
    template: Option<&ExternalSecretTemplate>,
    at: &str,
    namespace: &str,
    source: &dyn SecretSource,
) -> Result<TemplateSources, String> {
    let mut sources = TemplateSources::default();
    let Some(template) = template else {
        return Ok(sources);
    };
    for (index, from) in template.template_from.iter().enumerate() {
        let field = format!("{at}.templateFrom[{index}]");
        if let Some(reference) = &from.config_map
            && !sources.config_maps.contains_key(&reference.name)
        {
            let data = source
                .config_map(namespace, &reference.name)
                .await
                .map_err(|error| format!("{field}.configMap: {error}"))?
                .ok_or_else(|| {
                    format!(
                        "{field}.configMap: configmap {:?} not found",
                        reference.name
                    )
                })?;
            let data = data.into_iter().map(|(k, v)| (k, v.into_bytes())).collect();
            sources.config_maps.insert(reference.name.clone(), data);
        }
        if let Some(reference) = &from.secret
            && !sources.secrets.contains_key(&reference.name)
        {
            let secret = source
                .secret(namespace, &reference.name)
                .await
                .map_err(|error| format!("{field}.secret: {error}"))?
                .ok_or_else(|| format!("{field}.secret: secret {:?} not found", reference.name))?;
            let data = secret
                .data
                .into_iter()
                .map(|(key, value)| (key, value.into_bytes()))
                .collect();
            sources.secrets.insert(reference.name.clone(), data);
        }
    }
    Ok(sources)
}

const SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";
const SERVICE_ACCOUNT_NAME: &str = "kubernetes.io/service-account.name";
const BOOTSTRAP_TOKEN: &str = "bootstrap.kubernetes.io/token";

/// Where a `templateFrom` entry writes (upstream compares the target case-insensitively).
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Data,
    Labels,
    Annotations,
}

fn target(name: &str) -> Option<Target> {
    match name.to_ascii_lowercase().as_str() {
        "" | "data" => Some(Target::Data),
        "labels" => Some(Target::Labels),
        "annotations" => Some(Target::Annotations),
        _ => None,
    }
}

/// Applies `template` to the fetched `data`, with the ConfigMaps and Secrets of `sources`.
pub fn apply(
    template: &ExternalSecretTemplate,
    data: &SecretData,
    sources: &TemplateSources,
) -> Result<Rendered, String> {
    validate(template)?;
    let templated = !template.data.is_empty() || !template.template_from.is_empty();
    let mut rendered = Rendered::default();
    if template.merge_policy == TemplateMergePolicy::Merge || !templated {
        rendered.data = data.clone();
    }
    for (index, from) in template.template_from.iter().enumerate() {
        apply_template_from(from, index, data, sources, &mut rendered)?;
    }
    for (key, source) in &template.data {
        let value = execute(key, source, data)?;
        rendered.set(Target::Data, key.clone(), value);
    }
    if let Some(metadata) = &template.metadata {
        for (key, source) in &metadata.labels {
            let value = execute(key, source, data)?;
            rendered.set(Target::Labels, key.clone(), value);
        }
        for (key, source) in &metadata.annotations {
            let value = execute(key, source, data)?;
            rendered.set(Target::Annotations, key.clone(), value);
        }
    }
    Ok(rendered)
}

impl Rendered {
    fn set(&mut self, target: Target, key: String, value: Vec<u8>) {
        let text = || String::from_utf8_lossy(&value).into_owned();
        match target {
            Target::Data => {
                self.data.insert(key, value);
            }
            Target::Labels => {
                self.labels.insert(key, text());
            }
            Target::Annotations => {
                self.annotations.insert(key, text());
            }
        }
    }
}

/// Upstream's `ValidateSecretTemplate`: no bootstrap tokens, no service-account token bound
/// through the template, `templateFrom` targets only Data, Annotations or Labels.
fn validate(template: &ExternalSecretTemplate) -> Result<(), String> {
    let mut errors = Vec::new();
    match template.r#type.as_deref() {
        Some(SERVICE_ACCOUNT_TOKEN) => {
            let annotated = template
                .metadata
                .as_ref()
                .is_some_and(|metadata| metadata.annotations.contains_key(SERVICE_ACCOUNT_NAME));
            let annotates = template
                .template_from
                .iter()
                .any(|from| target(&from.target) == Some(Target::Annotations));
            if annotated {
                errors.push(format!(
                    "template.type={SERVICE_ACCOUNT_TOKEN:?} with annotation \
                     {SERVICE_ACCOUNT_NAME:?} is not allowed"
                ));
            } else if annotates {
                errors.push(format!(
                    "template.type={SERVICE_ACCOUNT_TOKEN:?} with templateFrom \
                     target=\"Annotations\" is not allowed"
                ));
            }
        }
        Some(BOOTSTRAP_TOKEN) => {
            errors.push(format!("template.type={BOOTSTRAP_TOKEN:?} is not allowed"));
        }
        _ => {}
    }
    for from in &template.template_from {
        if target(&from.target).is_none() {
            errors.push(format!(
                "templateFrom target={:?} is not allowed when targeting a Secret, must be one \
                 of \"Data\", \"Annotations\" or \"Labels\"",
                from.target
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// A `templateFrom` entry: the items of its ConfigMap and Secret, then its literal; a
/// `KeysAndValues` template (and a literal) renders to a YAML map of key to value for the
/// entry's target, each value decoded by `valuesDecodingStrategy`.
fn apply_template_from(
    from: &TemplateFrom,
    index: usize,
    data: &SecretData,
    sources: &TemplateSources,
    rendered: &mut Rendered,
) -> Result<(), String> {
    let target = target(&from.target).unwrap_or(Target::Data);
    let strategy = DecodingStrategy::from(from.values_decoding_strategy);
    for (key, value) in source_items(from, data, sources, strategy)? {
        rendered.set(target, key, value);
    }
    if let Some(literal) = &from.literal {
        let name = format!("templateFrom[{index}].literal");
        for (key, value) in render_map(&name, literal, data, strategy)? {
            rendered.set(target, key, value);
        }
    }
    Ok(())
}

/// The rendered items of a `templateFrom` entry's ConfigMap, then Secret: each item renders
/// as one value (`Values`) or as a YAML map of keys to values (`KeysAndValues`), every value
/// decoded by `strategy`.
pub(super) fn source_items(
    from: &TemplateFrom,
    data: &SecretData,
    sources: &TemplateSources,
    strategy: DecodingStrategy,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut rendered = Vec::new();
    let named = [
        ("configmap", from.config_map.as_ref(), &sources.config_maps),
        ("secret", from.secret.as_ref(), &sources.secrets),
    ];
    for (kind, reference, stored) in named {
        let Some(reference) = reference else {
            continue;
        };
        let stored = stored
            .get(&reference.name)
            .ok_or_else(|| format!("{kind} {:?} not found", reference.name))?;
        for item in &reference.items {
            let text = stored
                .get(&item.key)
                .map(|value| String::from_utf8_lossy(value).into_owned())
                .ok_or_else(|| {
                    format!(
                        "error in {kind} {}: missing key {}",
                        reference.name, item.key
                    )
                })?;
            match item.template_as {
                TemplateScope::Values => {
                    let value = execute(&item.key, &text, data)?;
                    rendered.push((
                        item.key.clone(),
                        decode_rendered(strategy, &item.key, value)?,
                    ));
                }
                TemplateScope::KeysAndValues => {
                    rendered.extend(render_map(&text, &text, data, strategy)?);
                }
            }
        }
    }
    Ok(rendered)
}

/// Renders `source` (named `name` in errors) to a YAML map of keys to values, each decoded
/// by `strategy`.
pub(super) fn render_map(
    name: &str,
    source: &str,
    data: &SecretData,
    strategy: DecodingStrategy,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let text = execute(name, source, data)?;
    string_map(&text)?
        .into_iter()
        .map(|(key, value)| {
            let value = decode_rendered(strategy, &key, value.into_bytes())?;
            Ok((key, value))
        })
        .collect()
}

/// Decodes a rendered value by a `valuesDecodingStrategy`, naming the key on failure.
pub(super) fn decode_rendered(
    strategy: DecodingStrategy,
    key: &str,
    value: Vec<u8>,
) -> Result<Vec<u8>, String> {
    decode(strategy, value)
        .map_err(|error| format!("failed to decode rendered template value for key {key}: {error}"))
}

/// What a `KeysAndValues` template rendered, read as upstream reads it: YAML 1.1 converted to
/// JSON and unmarshalled into `map[string]string` (scalars printed, null read as "", lists
/// and maps fail).
fn string_map(text: &[u8]) -> Result<BTreeMap<String, String>, String> {
    let fail =
        |message: &str| format!("could not unmarshal template to 'map[string][]byte': {message}");
    let text = std::str::from_utf8(text).map_err(|_| fail("invalid UTF-8 in rendered template"))?;
    yaml_to_string_map(text).map_err(|error| fail(&error))
}

/// The delimiters of target templates (`--template-left-delimiter` and
/// `--template-right-delimiter`), set once at start-up; `{{ }}` until then.
static DELIMITERS: OnceLock<Delimiters> = OnceLock::new();

/// Sets the template delimiters for the process, as upstream's flags do (process-wide there
/// too). Later calls change nothing.
pub fn set_delimiters(left: &str, right: &str) {
    let _ = DELIMITERS.set(Delimiters {
        left: left.to_owned(),
        right: right.to_owned(),
    });
}

/// Parses and runs one template; `key` names it in errors, as upstream's messages do.
pub(super) fn execute(key: &str, source: &str, data: &SecretData) -> Result<Vec<u8>, String> {
    let delimiters = DELIMITERS.get().cloned().unwrap_or_default();
    // Upstream wraps twice: its `execute` says which step failed, its scope functions
    // (`valueScopeApply`, `mapScopeApply`) wrap that again.
    render(key, source, data, &delimiters).map_err(|error| {
        let step = match error {
            TemplateError::Parse { .. } => "parse",
            TemplateError::Execute { .. } => "execute",
        };
        format!("unable to execute template at key {key}: unable to {step} template at key {key}: {error}")
    })
}

#[cfg(test)]
mod tests {
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

    /// `apply` without ConfigMaps or Secrets.
    fn render(template: &ExternalSecretTemplate, data: &SecretData) -> Result<Rendered, String> {
        apply(template, data, &TemplateSources::default())
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
        let missing =
            render(&template(json!({"data": {"dsn": "{{ .nope }}"}})), &data()).unwrap_err();
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
            &template(
                json!({"templateFrom": [{"secret": {"name": "t", "items": [{"key": "k"}]}}]}),
            ),
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
            apply(&missing_key, &data(), &sources).unwrap_err(),
            "error in configmap tmpl: missing key absent"
        );
    }
}
