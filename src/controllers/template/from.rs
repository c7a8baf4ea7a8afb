//! `templateFrom` entries: the items of a ConfigMap or Secret rendered as `Values` or
//! `KeysAndValues`, and literals, each value decoded by `valuesDecodingStrategy`.

use std::collections::BTreeMap;

use external_secrets_crds::v1::{TemplateFrom, TemplateScope};
use external_secrets_providers::request::DecodingStrategy;
use external_secrets_template::yaml_to_string_map;

use super::{Error, Rendered, SecretData, Target, TemplateSources, decode, execute, target};

/// A `templateFrom` entry: the items of its ConfigMap and Secret, then its literal; a
/// `KeysAndValues` template (and a literal) renders to a YAML map of key to value for the
/// entry's target, each value decoded by `valuesDecodingStrategy`.
pub(crate) fn apply_template_from(
    from: &TemplateFrom,
    index: usize,
    data: &SecretData,
    sources: &TemplateSources,
    rendered: &mut Rendered,
) -> Result<(), Error> {
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
pub fn source_items(
    from: &TemplateFrom,
    data: &SecretData,
    sources: &TemplateSources,
    strategy: DecodingStrategy,
) -> Result<Vec<(String, Vec<u8>)>, Error> {
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
            .ok_or_else(|| Error::SourceMissing {
                kind,
                name: reference.name.clone(),
            })?;
        for item in &reference.items {
            let text = stored
                .get(&item.key)
                .map(|value| String::from_utf8_lossy(value).into_owned())
                .ok_or_else(|| Error::MissingItem {
                    kind,
                    name: reference.name.clone(),
                    key: item.key.clone(),
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
pub fn render_map(
    name: &str,
    source: &str,
    data: &SecretData,
    strategy: DecodingStrategy,
) -> Result<Vec<(String, Vec<u8>)>, Error> {
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
pub fn decode_rendered(
    strategy: DecodingStrategy,
    key: &str,
    value: Vec<u8>,
) -> Result<Vec<u8>, Error> {
    decode(strategy, value).map_err(|source| Error::DecodeRendered {
        key: key.to_owned(),
        source,
    })
}

/// What a `KeysAndValues` template rendered, read as upstream reads it: YAML 1.1 converted to
/// JSON and unmarshalled into `map[string]string` (scalars printed, null read as "", lists
/// and maps fail).
pub(crate) fn string_map(text: &[u8]) -> Result<BTreeMap<String, String>, Error> {
    let text = std::str::from_utf8(text).map_err(|_| Error::NotUtf8)?;
    yaml_to_string_map(text).map_err(Error::NotAStringMap)
}
