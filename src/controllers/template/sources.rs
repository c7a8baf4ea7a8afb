//! Reading what `templateFrom` entries name (ConfigMaps and Secrets of the object's own
//! namespace) before rendering, so rendering itself does no I/O.

use external_secrets_crds::v1::ExternalSecretTemplate;
use external_secrets_providers::credentials::SecretSource;

use super::{SourcesError, TemplateSources};

/// Reads the ConfigMaps and Secrets `template` (the object's field `at`) names from
/// `namespace` (the object's own); a missing one fails with the templateFrom field naming it.
pub async fn sources(
    template: Option<&ExternalSecretTemplate>,
    at: &str,
    namespace: &str,
    source: &dyn SecretSource,
) -> Result<TemplateSources, SourcesError> {
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
                .map_err(|source| SourcesError::Read {
                    field: format!("{field}.configMap"),
                    source,
                })?
                .ok_or_else(|| SourcesError::Missing {
                    field: format!("{field}.configMap"),
                    kind: "configmap",
                    name: reference.name.clone(),
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
                .map_err(|source| SourcesError::Read {
                    field: format!("{field}.secret"),
                    source,
                })?
                .ok_or_else(|| SourcesError::Missing {
                    field: format!("{field}.secret"),
                    kind: "secret",
                    name: reference.name.clone(),
                })?;
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
