//! `dataFrom.find` for Parameter Store (upstream's `GetAllSecrets`), keyed by parameter name
//! (converted by the find's conversion strategy; the store's `prefix` is not applied):
//!
//! * `name`: every parameter under `path` (default `/`), recursively and decrypted
//!   (`GetParametersByPath`), whose name matches the regular expression. Without permission to
//!   do that (`AccessDeniedException`), upstream's fallback: the parameters are described
//!   (`DescribeParameters` under the path) and the matching ones read one by one.
//! * otherwise `tags`: the parameters (under `path`, if set) carrying every tag with its value,
//!   described and read one by one;
//! * neither: an error ("unexpected find operator").

use aws_sdk_ssm::error::ProvideErrorMetadata;
use aws_sdk_ssm::types::ParameterStringFilter;
use regex::Regex;

use super::ParameterStore;
use crate::backends::aws::error::map_sdk_error;
use crate::backends::aws::name_pattern;
use crate::error::{ProviderError, Result};
use crate::request::{Find, convert_keys};
use crate::value::{SecretMap, SecretValue};

/// The secrets `find` selects.
pub(super) async fn find(store: &ParameterStore, find: &Find) -> Result<SecretMap> {
    let found = match &find.name {
        Some(name) => {
            let matcher = name_pattern(&name.regexp)?;
            let path = find.path.as_deref().unwrap_or("/");
            by_path(store, path, &matcher).await?
        }
        None if !find.tags.is_empty() => {
            let mut filters = Vec::new();
            for (key, value) in &find.tags {
                filters.push(string_filter(&format!("tag:{key}"), "Equals", value)?);
            }
            if let Some(path) = &find.path {
                filters.push(string_filter("Path", "Recursive", path)?);
            }
            described(store, filters, None).await?
        }
        None => return Err(ProviderError::invalid_request("unexpected find operator")),
    };
    convert_keys(find.conversion_strategy, found)
}

fn string_filter(key: &str, option: &str, value: &str) -> Result<ParameterStringFilter> {
    ParameterStringFilter::builder()
        .key(key)
        .option(option)
        .values(value)
        .build()
        .map_err(|error| ProviderError::invalid_request(format!("invalid find filter: {error}")))
}

/// The parameters under `path` whose names `matcher` accepts.
async fn by_path(store: &ParameterStore, path: &str, matcher: &Regex) -> Result<SecretMap> {
    let mut found = SecretMap::new();
    let mut next_token = None;
    loop {
        let answer = store
            .client
            .get_parameters_by_path()
            .path(path)
            .recursive(true)
            .with_decryption(true)
            .set_next_token(next_token)
            .send()
            .await;
        let page = match answer {
            Ok(page) => page,
            Err(error) if error.code() == Some("AccessDeniedException") => {
                tracing::info!(
                    path,
                    "GetParametersByPath: access denied, describing parameters instead; it is \
                     recommended to add ssm:GetParametersByPath permissions"
                );
                let filters = vec![string_filter("Path", "Recursive", path)?];
                return described(store, filters, Some(matcher)).await;
            }
            Err(error) => {
                return Err(map_sdk_error(
                    error,
                    format!("fetching parameters by path {path}"),
                ));
            }
        };
        for parameter in page.parameters() {
            let (Some(name), Some(value)) = (parameter.name(), parameter.value()) else {
                continue;
            };
            if matcher.is_match(name) {
                found.insert(name.to_owned(), SecretValue::from(value));
            }
        }
        next_token = page.next_token().map(str::to_owned);
        if next_token.is_none() {
            return Ok(found);
        }
    }
}

/// The parameters `filters` describe (whose names `matcher` accepts, if any), read one by one.
async fn described(
    store: &ParameterStore,
    filters: Vec<ParameterStringFilter>,
    matcher: Option<&Regex>,
) -> Result<SecretMap> {
    let mut found = SecretMap::new();
    let mut next_token = None;
    loop {
        let page = store
            .client
            .describe_parameters()
            .set_parameter_filters(Some(filters.clone()))
            .set_next_token(next_token)
            .send()
            .await
            .map_err(|error| map_sdk_error(error, "cannot describe parameters"))?;
        for name in page
            .parameters()
            .iter()
            .filter_map(|parameter| parameter.name())
        {
            if matcher.is_some_and(|matcher| !matcher.is_match(name)) {
                continue;
            }
            if let Some(value) = store.value(name).await? {
                found.insert(name.to_owned(), SecretValue::from(value));
            }
        }
        next_token = page.next_token().map(str::to_owned);
        if next_token.is_none() {
            return Ok(found);
        }
    }
}
