//! `spec.target.template`, applied as upstream's `ApplyTemplate` does: literal `templateFrom`
//! entries, then `template.data` (which wins), over the provider data only with
//! `mergePolicy: Merge` or when nothing is templated; labels and annotations are templates
//! too. Templates see every fetched value as a string and fail on a missing key, as upstream's
//! `missingkey=error`. Messages name the key and never carry values.

use std::collections::BTreeMap;

use external_secrets_crds::v1::{ExternalSecretTemplate, TemplateFrom, TemplateMergePolicy};
use external_secrets_providers::template::{Template, string_map};

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

/// Applies `template` to the fetched `data`.
pub fn apply(template: &ExternalSecretTemplate, data: &SecretData) -> Result<Rendered, String> {
    let scope = string_map(
        data.iter()
            .map(|(key, value)| (key.as_str(), String::from_utf8_lossy(value).into_owned())),
    );
    let templated = !template.data.is_empty() || !template.template_from.is_empty();
    let mut rendered = Rendered::default();
    if template.merge_policy == TemplateMergePolicy::Merge || !templated {
        rendered.data = data.clone();
    }
    for (index, from) in template.template_from.iter().enumerate() {
        apply_template_from(from, index, &scope, &mut rendered)?;
    }
    for (key, source) in &template.data {
        let value = execute(key, source, &scope)?;
        rendered.data.insert(key.clone(), value.into_bytes());
    }
    if let Some(metadata) = &template.metadata {
        for (key, source) in &metadata.labels {
            rendered
                .labels
                .insert(key.clone(), execute(key, source, &scope)?);
        }
        for (key, source) in &metadata.annotations {
            rendered
                .annotations
                .insert(key.clone(), execute(key, source, &scope)?);
        }
    }
    Ok(rendered)
}

/// A `templateFrom` entry: a literal renders to a YAML map of key to value for its target.
fn apply_template_from(
    from: &TemplateFrom,
    index: usize,
    scope: &external_secrets_providers::template::Value,
    rendered: &mut Rendered,
) -> Result<(), String> {
    let field = format!("spec.target.template.templateFrom[{index}]");
    if from.config_map.is_some() || from.secret.is_some() {
        return Err(format!(
            "{field}: configMap and secret sources are not supported by this build yet"
        ));
    }
    if from.values_decoding_strategy.is_some() {
        return Err(format!(
            "{field}.valuesDecodingStrategy: not supported by this build yet"
        ));
    }
    let Some(literal) = &from.literal else {
        return Ok(());
    };
    let text = execute(literal, literal, scope)?;
    let entries: BTreeMap<String, String> = serde_yaml::from_str(&text).map_err(|error| {
        format!("{field}: could not unmarshal template to 'map[string][]byte': {error}")
    })?;
    for (key, value) in entries {
        match from.target.to_ascii_lowercase().as_str() {
            "" | "data" => {
                rendered.data.insert(key, value.into_bytes());
            }
            "labels" => {
                rendered.labels.insert(key, value);
            }
            "annotations" => {
                rendered.annotations.insert(key, value);
            }
            other => {
                return Err(format!(
                    "{field}.target: {other:?} is not allowed for Secrets (Data, Annotations or Labels)"
                ));
            }
        }
    }
    Ok(())
}

/// Parses and runs one template; `key` names it in errors, as upstream's messages do.
fn execute(
    key: &str,
    source: &str,
    scope: &external_secrets_providers::template::Value,
) -> Result<String, String> {
    let template = Template::parse(source)
        .map_err(|error| format!("unable to parse template at key {key}: {error}"))?
        .with_missing_key_error();
    template
        .render(scope)
        .map_err(|error| format!("unable to execute template at key {key}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template(spec: serde_json::Value) -> ExternalSecretTemplate {
        serde_json::from_value(spec).unwrap()
    }

    fn data() -> SecretData {
        [
            ("user".to_owned(), b"app".to_vec()),
            ("password".to_owned(), b"p@ss".to_vec()),
            ("encoded".to_owned(), b"aGVsbG8=".to_vec()),
        ]
        .into()
    }

    fn text(rendered: &Rendered, key: &str) -> String {
        String::from_utf8(rendered.data[key].clone()).unwrap()
    }

    #[test]
    fn data_templates_replace_the_provider_data_by_default() {
        let rendered = apply(
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
        let rendered = apply(
            &template(json!({"mergePolicy": "Merge", "data": {"user": "{{ .user | upper }}"}})),
            &data(),
        )
        .unwrap();
        assert_eq!(text(&rendered, "user"), "APP");
        assert_eq!(text(&rendered, "password"), "p@ss");
        // Only type or metadata templated: the provider data stays.
        let untemplated = apply(&template(json!({"type": "Opaque"})), &data()).unwrap();
        assert_eq!(untemplated.data, data());
    }

    #[test]
    fn metadata_and_literal_template_from_are_rendered() {
        let rendered = apply(
            &template(json!({
                "metadata": {"labels": {"owner": "{{ .user }}"}, "annotations": {"fixed": "yes"}},
                "templateFrom": [
                    {"literal": "from-literal: {{ .user }}\nuser: overridden\n"},
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
        assert_eq!(
            text(&rendered, "user"),
            "app",
            "template.data wins over templateFrom"
        );
    }

    #[test]
    fn errors_name_the_key_and_never_the_values() {
        let missing =
            apply(&template(json!({"data": {"dsn": "{{ .nope }}"}})), &data()).unwrap_err();
        assert_eq!(
            missing,
            "unable to execute template at key dsn: map has no entry for key \"nope\""
        );
        let broken = apply(&template(json!({"data": {"dsn": "{{ .user "}})), &data()).unwrap_err();
        assert!(
            broken.starts_with("unable to parse template at key dsn:"),
            "{broken}"
        );
        assert!(!broken.contains("p@ss") && !missing.contains("p@ss"));
        let from_secret = apply(
            &template(
                json!({"templateFrom": [{"secret": {"name": "t", "items": [{"key": "k"}]}}]}),
            ),
            &data(),
        )
        .unwrap_err();
        assert!(
            from_secret
                .starts_with("spec.target.template.templateFrom[0]: configMap and secret sources"),
            "{from_secret}"
        );
    }
}
