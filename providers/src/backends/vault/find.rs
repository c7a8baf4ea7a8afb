//! `dataFrom.find` (upstream's `GetAllSecrets`): every secret under `find.path` (the whole mount
//! without one), listed recursively through the KV metadata, filtered by name regular expression
//! (unanchored) or else by tags (KV v2 custom metadata, every tag equal), each read whole as JSON
//! and keyed by its path relative to the mount (converted by the find's conversion strategy).
//!
//! As upstream: `name` takes precedence over `tags`; tags need KV v2; a listing root with
//! nothing under it is `NotFound`; secrets whose current version is deleted are skipped. Unlike
//! upstream, a folder that disappears during the listing is skipped rather than failing it.

use super::kv::Engine;
use crate::error::{ProviderError, Result};
use crate::request::{Find, convert_keys};
use crate::value::{SecretMap, SecretValue};

/// The secrets `find` selects.
pub(super) async fn find(engine: &Engine, find: &Find) -> Result<SecretMap> {
    if !engine.kv.is_v2() && !find.tags.is_empty() {
        return Err(ProviderError::invalid_request(
            "cannot perform find by tag operations with kv version v1",
        ));
    }
    let matcher = match &find.name {
        Some(name) => Some(name.matcher()?),
        None => None,
    };
    let root = find
        .path
        .as_deref()
        .map(|path| format!("{path}/"))
        .unwrap_or_default();
    let mut found = SecretMap::new();
    for name in list_all(engine, &root).await? {
        let selected = match &matcher {
            Some(matcher) => matcher.is_match(&name),
            None => has_tags(engine, &name, find).await?,
        };
        if !selected {
            continue;
        }
        if let Some(document) = engine.read(&name, None).await? {
            found.insert(name, SecretValue::from(document.get()));
        }
    }
    convert_keys(find.conversion_strategy, found)
}

/// Every secret name under `root` (which is empty or ends in `/`), depth first.
async fn list_all(engine: &Engine, root: &str) -> Result<Vec<String>> {
    let Some(top) = engine.list(root).await? else {
        return Err(ProviderError::not_found(format!(
            "no secrets found in Vault under {root:?}"
        )));
    };
    let mut names = Vec::new();
    let mut pending: Vec<(String, Vec<String>)> = vec![(root.to_owned(), top)];
    while let Some((folder, entries)) = pending.pop() {
        for entry in entries {
            let full = format!("{folder}{entry}");
            if entry.ends_with('/') {
                if let Some(children) = engine.list(&full).await? {
                    pending.push((full, children));
                }
            } else {
                names.push(full);
            }
        }
    }
    Ok(names)
}

/// Whether the custom metadata of `name` carries every tag of `find`.
async fn has_tags(engine: &Engine, name: &str, find: &Find) -> Result<bool> {
    if find.tags.is_empty() {
        return Ok(true);
    }
    let metadata = engine.metadata(name).await?.unwrap_or_default();
    Ok(find
        .tags
        .iter()
        .all(|(key, value)| metadata.entries.get(key) == Some(value)))
}
