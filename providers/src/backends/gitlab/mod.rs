//! The `gitlab` provider: CI/CD variables of a GitLab project and its groups, read through the
//! GitLab REST API (v4) with an access token.
//!
//! Behaviour follows upstream's `providers/v1/gitlab`:
//!
//! * Stores are read-only (upstream's capabilities); PushSecret and delete are not implemented.
//! * A key is a variable key; `-` in it is read as `_` (GitLab keys have no hyphens). The
//!   project's variable wins; otherwise the groups are searched from the last (most nested)
//!   to the first. `groupIDs` are the groups, or with `inheritFromGroups` the project's own
//!   groups ordered by the length of their full path.
//! * With `environment` set, a variable of that scope is asked for first, then the `*` one.
//! * `property` selects a gjson path inside a JSON value; an empty value without property is an
//!   error. `dataFrom.extract` reads the (selected) value as a JSON object of strings.
//! * `dataFrom.find` needs `find.name`, refuses `find.path`, and accepts only the
//!   `environment_scope` tag (which the store's own environment constrains); it reads every
//!   variable of the groups left to right (a later group's value replaces an earlier one only
//!   if it is specific to the environment, so the least nested group's wildcard value wins,
//!   unlike single reads) then of the project (whose values replace the groups', a wildcard
//!   one not replacing the project's environment-specific one).
//! * `validate` lists the variables of the project and of each group.
//! * Lists are read 100 variables a page, following GitLab's `X-Next-Page` header.
//!
//! Differences from upstream: `secret_exists` says whether the variable a key names exists
//! (upstream answers "not implemented"); a store without `projectID` does not ask GitLab for a
//! project variable (upstream sends a request for an empty project id, which fails with 404);
//! a 404 naming a missing project or group is a configuration error, not "not found"; the
//! project's groups are read across pages (upstream reads the first 20).

mod api;
mod client;
mod error;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::GitlabProvider;

use self::api::Api;
use self::client::GitlabClient;
use crate::client::{Capabilities, SharedClient};
use crate::credentials::{Referent, check_selector_namespace};
use crate::error::{ProviderError, Result};
use crate::provider::{ClientContext, Provider};
use crate::store::StoreId;

/// The `gitlab` backend.
#[derive(Debug, Clone, Copy)]
pub struct Gitlab;

#[async_trait]
impl Provider for Gitlab {
    type Spec = GitlabProvider;
    const NAME: &'static str = "gitlab";

    fn capabilities(&self, _spec: &GitlabProvider) -> Capabilities {
        Capabilities::ReadOnly
    }

    fn validate_store(&self, spec: &GitlabProvider, store: &StoreId) -> Result<()> {
        validate_store(spec, store).map_err(ProviderError::invalid_config)
    }

    async fn new_client(
        &self,
        spec: &GitlabProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let selector = spec
            .auth
            .secret_ref
            .access_token
            .clone()
            .unwrap_or_default();
        let token = context
            .credentials
            .selected(&selector, Referent::Allowed)
            .await?;
        let ca = crate::ca::ca_bundle(
            spec.ca_bundle.as_ref(),
            spec.ca_provider.as_ref(),
            &context.credentials,
        )
        .await
        .map_err(|failure| failure.context("failed to read ca bundle"))?;
        let api = Api::new(spec.url.as_deref(), ca.as_deref(), token)?;
        Ok(Arc::new(GitlabClient::new(
            api,
            spec.project_id.clone(),
            spec.group_i_ds.clone(),
            spec.inherit_from_groups.unwrap_or(false),
            spec.environment.clone(),
        )))
    }
}

/// Upstream's `ValidateStore`, returning its message.
fn validate_store(spec: &GitlabProvider, store: &StoreId) -> std::result::Result<(), String> {
    let selector = spec
        .auth
        .secret_ref
        .access_token
        .clone()
        .unwrap_or_default();
    check_selector_namespace(store, selector.namespace.as_deref(), Referent::Forbidden)?;
    if spec.project_id.as_deref().unwrap_or_default().is_empty() && spec.group_i_ds.is_empty() {
        return Err("projectID and groupIDs must not both be empty".into());
    }
    if spec.inherit_from_groups == Some(true) && !spec.group_i_ds.is_empty() {
        return Err("defining groupIDs and inheritFromGroups = true is not allowed".into());
    }
    if selector.key.as_deref().unwrap_or_default().is_empty() {
        return Err("accessToken.key cannot be empty".into());
    }
    if selector.name.as_deref().unwrap_or_default().is_empty() {
        return Err("accessToken.name cannot be empty".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
