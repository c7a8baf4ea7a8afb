//! `dataFrom.find` for Secrets Manager (upstream's `GetAllSecrets`), keyed by secret name
//! (converted by the find's conversion strategy; the store's `prefix` is not applied):
//!
//! * `name` without `path`: every secret is listed (`ListSecrets`, filtered by the tags if any)
//!   and those whose name matches the regular expression are read one by one;
//! * `name` with `path`, or `tags`: secrets whose name starts with `path` and that carry the
//!   tags are read in batches (`BatchGetSecretValue`), then filtered by the name expression;
//! * neither `name` nor `tags`: an error ("unexpected find operator").
//!
//! Tag filters are AWS's: a secret matches when it has a tag with each key and a tag with each
//! value. Secrets scheduled for deletion are not listed.

use aws_sdk_secretsmanager::types::{Filter, FilterNameStringType};
use regex::Regex;

use super::SecretsManager;
use super::read::{Version, payload};
use crate::backends::aws::error::map_sdk_error;
use crate::backends::aws::name_pattern;
use crate::error::{ProviderError, Result};
use crate::request::{Find, convert_keys};
use crate::value::SecretMap;

/// The secrets `find` selects.
pub(super) async fn find(manager: &SecretsManager, find: &Find) -> Result<SecretMap> {
    let matcher = match &find.name {
        Some(name) => Some(name_pattern(&name.regexp)?),
        None if find.tags.is_empty() => {
            return Err(ProviderError::invalid_request("unexpected find operator"));
        }
        None => None,
    };
    let mut filters: Vec<Filter> = find
        .tags
        .iter()
        .flat_map(|(key, value)| {
            [
                filter(FilterNameStringType::TagKey, key),
                filter(FilterNameStringType::TagValue, value),
            ]
        })
        .collect();
    let found = match (&matcher, &find.path) {
        (Some(matcher), None) => list_and_read(manager, filters, matcher).await?,
        (_, path) => {
            filters.extend(
                path.iter()
                    .map(|path| filter(FilterNameStringType::Name, path)),
            );
            batch_read(manager, filters, matcher.as_ref()).await?
        }
    };
    convert_keys(find.conversion_strategy, found)
}

fn filter(key: FilterNameStringType, value: &str) -> Filter {
    Filter::builder().key(key).values(value).build()
}

/// Lists secrets matching `filters` and reads those whose name `matcher` accepts.
async fn list_and_read(
    manager: &SecretsManager,
    filters: Vec<Filter>,
    matcher: &Regex,
) -> Result<SecretMap> {
    let mut found = SecretMap::new();
    let mut next_token = None;
    let current = Version::parse(None);
    loop {
        let page = manager
            .client
            .list_secrets()
            .set_filters(Some(filters.clone()))
            .set_next_token(next_token)
            .send()
            .await
            .map_err(|error| map_sdk_error(error, "cannot list secrets"))?;
        for name in page.secret_list().iter().filter_map(|entry| entry.name()) {
            if !matcher.is_match(name) {
                continue;
            }
            if let Some(value) = manager.value(name, &current).await? {
                found.insert(name.to_owned(), value);
            }
        }
        next_token = page.next_token().map(str::to_owned);
        if next_token.is_none() {
            return Ok(found);
        }
    }
}

/// Reads the secrets matching `filters` in batches, keeping those whose name `matcher` (if any)
/// accepts.
async fn batch_read(
    manager: &SecretsManager,
    filters: Vec<Filter>,
    matcher: Option<&Regex>,
) -> Result<SecretMap> {
    let mut found = SecretMap::new();
    let mut next_token = None;
    loop {
        let page = manager
            .client
            .batch_get_secret_value()
            .set_filters(Some(filters.clone()))
            .set_next_token(next_token)
            .send()
            .await
            .map_err(|error| map_sdk_error(error, "cannot get secrets in batch"))?;
        for entry in page.secret_values() {
            let Some(name) = entry.name() else {
                continue;
            };
            if matcher.is_some_and(|matcher| !matcher.is_match(name)) {
                continue;
            }
            if let Some(value) = payload(entry.secret_string(), entry.secret_binary()) {
                found.insert(name.to_owned(), value);
            }
        }
        next_token = page.next_token().map(str::to_owned);
        if next_token.is_none() {
            return Ok(found);
        }
    }
}
