//! `spec.template`: the source Secret as upstream templates it before pushing, in memory only
//! (the Secret is never written back). `templateFrom` ConfigMaps and Secrets are read from the
//! PushSecret's namespace. Unlike an ExternalSecret's target, the source data is
//! always kept: `templateFrom` entries and then `template.data` render with it and are
//! merged over it; rendered labels and annotations are merged over the source's, and
//! `template.type` replaces its type.

use external_secrets_crds::v1::{ExternalSecretTemplate, TemplateMergePolicy};
use external_secrets_providers::request::SourceMetadata;

use super::data_to::Data;
use super::error::PushError;
use crate::controllers::template::{TemplateSources, apply};

/// The data and metadata the stores receive for a source Secret with `data` and `metadata`.
pub fn render(
    template: &ExternalSecretTemplate,
    data: Data,
    mut metadata: SourceMetadata,
    sources: &TemplateSources,
) -> Result<(Data, SourceMetadata), PushError> {
    let merged = ExternalSecretTemplate {
        merge_policy: TemplateMergePolicy::Merge,
        ..template.clone()
    };
    let rendered = apply(&merged, &data, sources).map_err(PushError::Template)?;
    metadata.labels.extend(rendered.labels);
    metadata.annotations.extend(rendered.annotations);
    if let Some(secret_type) = template.r#type.as_ref().filter(|kind| !kind.is_empty()) {
        metadata.secret_type = Some(secret_type.clone());
    }
    Ok((rendered.data, metadata))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templated_keys_join_the_source_data_and_metadata() {
        let template: ExternalSecretTemplate = serde_json::from_value(json!({
            "type": "kubernetes.io/basic-auth",
            "metadata": {"labels": {"team": "{{ .user }}"}},
            "data": {"dsn": "postgres://{{ .user }}:{{ .password }}@db", "user": "{{ .user | upper }}"},
        }))
        .unwrap();
        let data: Data = [("user", "app"), ("password", "pw")]
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.as_bytes().to_vec()))
            .collect();
        let metadata = SourceMetadata {
            labels: [("source".to_owned(), "kept".to_owned())].into(),
            ..SourceMetadata::default()
        };
        let (data, metadata) =
            render(&template, data, metadata, &TemplateSources::default()).unwrap();
        assert_eq!(data["dsn"], b"postgres://app:pw@db");
        assert_eq!(data["user"], b"APP", "template.data wins over the source");
        assert_eq!(data["password"], b"pw", "the source data is kept");
        assert_eq!(metadata.labels["team"], "app");
        assert_eq!(metadata.labels["source"], "kept");
        assert_eq!(
            metadata.secret_type.as_deref(),
            Some("kubernetes.io/basic-auth")
        );

        let broken: ExternalSecretTemplate =
            serde_json::from_value(json!({"data": {"x": "{{ .missing }}"}})).unwrap();
        let none = TemplateSources::default();
        let error = render(&broken, Data::new(), SourceMetadata::default(), &none)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("spec.template: "), "{error}");
        assert!(error.contains("key x"), "{error}");
    }
}
