//! Reads as upstream: one value (`GetSecret`: a secret's value, a key's public JWK, a
//! certificate's DER; `property` on JSON; tags with `metadataPolicy: Fetch`), a secret's JSON as
//! a map (`GetSecretMap`), and every enabled secret matching a name regexp and tags, page by
//! page (`GetAllSecrets`).

use std::collections::BTreeMap;

use base64::Engine as _;
use regex::Regex;
use reqwest::{Method, Url};

use super::http::{Reply, Vault};
use super::object::{self, Bundle, Kind};
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::request::{Find, MetadataPolicy, RemoteRef, convert_keys};
use crate::value::{SecretMap, SecretValue};

/// Longest number of list pages followed (25 items each: 250 000 secrets).
const MAX_PAGES: usize = 10_000;

/// The newest (or `version`) bundle of `name`, `None` when it does not exist.
pub(super) async fn bundle(
    vault: &Vault,
    kind: Kind,
    name: &str,
    version: Option<&str>,
) -> Result<Option<Bundle>> {
    let mut segments = vec![kind.collection(), name];
    if let Some(version) = version.filter(|version| !version.is_empty()) {
        segments.push(version);
    }
    let action = format!("failed to get {} {name:?}", kind.noun());
    match vault
        .send(&action, Method::GET, vault.url(&segments), None)
        .await?
    {
        Reply::Missing => Ok(None),
        Reply::Found(body) => serde_json::from_slice(&body)
            .map(Some)
            .map_err(|_| ProviderError::unavailable(format!("{action}: unreadable answer"))),
    }
}

async fn existing(vault: &Vault, kind: Kind, name: &str, version: Option<&str>) -> Result<Bundle> {
    bundle(vault, kind, name, version)
        .await?
        .ok_or_else(|| ProviderError::not_found(format!("{} {name:?} not found", kind.noun())))
}

/// Upstream's `getProperty`: the value itself, or the JSON property (a dotted name that is not
/// a path is tried as one key).
fn property(value: &[u8], property: Option<&str>, key: &str) -> Result<SecretValue> {
    let Some(property) = property.filter(|property| !property.is_empty()) else {
        return Ok(SecretValue::new(value.to_vec()));
    };
    json_property(value, property)
        .or_else(|| {
            property
                .contains('.')
                .then(|| json_property(value, &property.replace('.', "\\.")))
                .flatten()
        })
        .map(SecretValue::new)
        .ok_or_else(|| {
            ProviderError::not_found(format!("property {property} does not exist in key {key}"))
        })
}

/// Upstream's `getSecretTag`: every tag as JSON, one tag, or a JSON property of one tag.
fn tag(tags: &BTreeMap<String, String>, wanted: Option<&str>) -> Result<SecretValue> {
    let Some(wanted) = wanted.filter(|wanted| !wanted.is_empty()) else {
        let json = serde_json::to_vec(tags).unwrap_or_default();
        return Ok(SecretValue::new(json));
    };
    if let Some(value) = tags.get(wanted) {
        return Ok(SecretValue::new(value.as_bytes().to_vec()));
    }
    let missing = || ProviderError::not_found(format!("tag {wanted} does not exist"));
    let (name, rest) = wanted.split_once('.').ok_or_else(missing)?;
    let value = tags.get(name).ok_or_else(missing)?;
    property(value.as_bytes(), Some(rest), wanted)
}

/// Tags plus the times upstream adds as `attribute.*` tags (RFC 3339, UTC).
fn tags_with_attributes(bundle: &Bundle) -> BTreeMap<String, String> {
    let mut tags = bundle.tags();
    let attributes = &bundle.attributes;
    for (name, time) in [
        ("attribute.expires", attributes.exp),
        ("attribute.created", attributes.created),
        ("attribute.updated", attributes.updated),
        ("attribute.notBefore", attributes.nbf),
    ] {
        if let Some(text) = time.and_then(rfc3339) {
            tags.insert(name.to_owned(), text);
        }
    }
    tags
}

fn rfc3339(seconds: i64) -> Option<String> {
    let time = chrono::DateTime::from_timestamp(seconds, 0)?;
    Some(time.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// `GetSecret`.
pub(super) async fn get_secret(vault: &Vault, remote_ref: &RemoteRef) -> Result<SecretValue> {
    let (kind, name) = object::parse(&remote_ref.key, false)?;
    let bundle = existing(vault, kind, name, remote_ref.version.as_deref()).await?;
    let wanted = remote_ref.property.as_deref();
    if remote_ref.metadata_policy == MetadataPolicy::Fetch {
        return tag(&tags_with_attributes(&bundle), wanted);
    }
    match kind {
        Kind::Secret => {
            let value = bundle.value.unwrap_or_default();
            property(value.as_bytes(), wanted, &remote_ref.key)
        }
        Kind::Key => {
            let key = bundle.key.unwrap_or_default();
            property(&object::jwk_json(&key), wanted, &remote_ref.key)
        }
        Kind::Certificate => {
            let der = base64::engine::general_purpose::STANDARD
                .decode(bundle.cer.unwrap_or_default())
                .map_err(|_| ProviderError::invalid_data("the certificate is not base64"))?;
            Ok(SecretValue::new(der))
        }
    }
}

/// `GetSecretMap`.
pub(super) async fn get_secret_map(vault: &Vault, remote_ref: &RemoteRef) -> Result<SecretMap> {
    let (kind, name) = object::parse(&remote_ref.key, false)?;
    match kind {
        Kind::Certificate => {
            return Err(ProviderError::invalid_request(
                "cannot get use dataFrom to get certificate secret",
            ));
        }
        Kind::Key => {
            return Err(ProviderError::invalid_request(
                "cannot get use dataFrom to get key secret",
            ));
        }
        Kind::Secret => {}
    }
    if remote_ref.metadata_policy == MetadataPolicy::Fetch {
        let bundle = existing(vault, kind, name, remote_ref.version.as_deref()).await?;
        return Ok(tag_map(name, &bundle, remote_ref.property.as_deref()));
    }
    let value = get_secret(vault, remote_ref).await?;
    let object: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(value.expose())
        .map_err(|error| {
            ProviderError::invalid_data(format!("error unmarshalling json data: {error}"))
        })?;
    Ok(object
        .into_iter()
        .map(|(key, value)| {
            let bytes = match value {
                serde_json::Value::String(text) => text.into_bytes(),
                other => other.to_string().into_bytes(),
            };
            (key, SecretValue::new(bytes))
        })
        .collect())
}

/// Upstream's tag map: `<name>_<tag>` (JSON object tags expanded to `<name>_<tag>_<key>`) and
/// `<name>_attribute.*`; with `property`, only `<key>_<property>`.
fn tag_map(name: &str, bundle: &Bundle, wanted: Option<&str>) -> SecretMap {
    let mut all = BTreeMap::new();
    for (tag, value) in bundle.tags() {
        let prefix = format!("{name}_{tag}");
        match serde_json::from_str::<BTreeMap<String, String>>(&value) {
            Ok(object) => {
                for (key, inner) in object {
                    all.insert(format!("{prefix}_{key}"), inner);
                }
            }
            Err(_) => {
                all.insert(prefix, value);
            }
        }
    }
    for (attribute, value) in tags_with_attributes(&Bundle {
        tags: None,
        ..bundle.clone()
    }) {
        all.insert(format!("{name}_{attribute}"), value);
    }
    let to_map = |pairs: BTreeMap<String, String>| -> SecretMap {
        pairs
            .into_iter()
            .map(|(key, value)| (key, SecretValue::new(value.into_bytes())))
            .collect()
    };
    match wanted.filter(|wanted| !wanted.is_empty()) {
        None => to_map(all),
        Some(property) => {
            let key = format!("{name}_{property}");
            let value = tag(&all, Some(&key))
                .map(SecretValue::into_bytes)
                .unwrap_or_default();
            SecretMap::from([(key, SecretValue::new(value))])
        }
    }
}

/// `GetAllSecrets`: enabled secrets whose tags include `find.tags` and whose name matches
/// `find.name.regexp`, with their values.
pub(super) async fn get_all_secrets(vault: &Vault, find: &Find) -> Result<SecretMap> {
    let pattern = match find.name.as_ref().map(|name| name.regexp.as_str()) {
        Some(regexp) if !regexp.is_empty() => Some(Regex::new(regexp).map_err(|error| {
            ProviderError::invalid_request(format!("invalid name regexp: {error}"))
        })?),
        _ => None,
    };
    let mut found = SecretMap::new();
    let mut next = Some(vault.url(&["secrets"]));
    let mut pages = 0;
    while let Some(url) = next.take() {
        pages += 1;
        if pages > MAX_PAGES {
            return Err(ProviderError::unavailable("too many secret list pages"));
        }
        let page = list_page(vault, url).await?;
        for item in page.value {
            let Some(name) = item.id.as_deref().and_then(|id| id.rsplit('/').next()) else {
                continue;
            };
            let enabled = item.attributes.enabled.unwrap_or(false);
            let tags = item.tags();
            let tags_match = find
                .tags
                .iter()
                .all(|(key, value)| tags.get(key) == Some(value));
            let name_matches = pattern
                .as_ref()
                .is_none_or(|pattern| pattern.is_match(name));
            if !(enabled && tags_match && name_matches) {
                continue;
            }
            let value = existing(vault, Kind::Secret, name, None).await?;
            let bytes = value.value.unwrap_or_default().into_bytes();
            found.insert(name.to_owned(), SecretValue::new(bytes));
        }
        next = match page.next_link.filter(|link| !link.is_empty()) {
            None => None,
            Some(link) => {
                let url = Url::parse(&link).ok().filter(|url| vault.owns(url));
                Some(url.ok_or_else(|| {
                    ProviderError::unavailable("the secret list's nextLink leaves the vault")
                })?)
            }
        };
    }
    convert_keys(find.conversion_strategy, found)
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    #[serde(default)]
    value: Vec<Bundle>,
    #[serde(default)]
    next_link: Option<String>,
}

async fn list_page(vault: &Vault, url: Url) -> Result<Page> {
    let action = "failed to list secrets";
    match vault.send(action, Method::GET, url, None).await? {
        Reply::Missing => Err(ProviderError::unavailable(format!("{action}: 404"))),
        Reply::Found(body) => serde_json::from_slice(&body)
            .map_err(|_| ProviderError::unavailable(format!("{action}: unreadable answer"))),
    }
}
