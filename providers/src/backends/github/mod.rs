//! The `github` provider: GitHub Actions secrets of an organization, a repository or a
//! repository's environment, written through the GitHub REST API as a GitHub App installation.
//!
//! Behaviour follows upstream's `providers/v1/github`:
//!
//! * Stores are write-only (upstream's capabilities): reads and finds answer upstream's
//!   "not implemented - this provider supports write-only operations".
//! * The scope is the `organization`; with `repository` that repository's secrets; with
//!   `environment` too, that environment's secrets (addressed by the repository's numeric id,
//!   read once when the client is built, as go-github's environment endpoints do).
//! * Auth: an RS256 JWT of the App (`appID`, signed with the `auth.privateKey` PEM) is exchanged
//!   for an installation access token (`installationID`), renewed before it expires.
//! * PushSecret reads the secret (a 404 means "new"), then the scope's public key, seals the
//!   value with it (libsodium's anonymous sealed box) and PUTs it under the remote key. The value
//!   is the `secretKey`'s, or without one the whole Secret as a JSON object of base64 values (Go's
//!   `json.Marshal` of the Secret's data). Organization secrets keep their visibility unless
//!   `orgSecretVisibility` sets one (new ones: `all`); a `selected` one keeps its repositories.
//! * `url` other than `https://github.com/` is a GitHub Enterprise Server: its API lives under
//!   `api/v3/` of it (go-github's `WithEnterpriseURLs`); `uploadURL` is accepted but unused
//!   (secrets need no uploads).
//! * `validate` lists the scope's secrets; ClusterSecretStores are not validated (Unknown).
//! * `ValidateStore` checks nothing beyond the section being present, as upstream.
//!
//! Differences from upstream: the installation token is asked of the instance's own API (upstream
//! asks api.github.com even for an Enterprise `url`, which cannot work there); `secret_exists`
//! answers `false` for a secret GitHub does not have (upstream fails with the 404) and deleting a
//! secret that is already gone succeeds (upstream fails), as the client contract requires.

mod api;
mod app;
mod client;
mod error;
mod seal;

use std::sync::Arc;

use async_trait::async_trait;
use external_secrets_crds::v1::GithubProvider;

use self::api::{Api, Scope};
use self::app::AppAuth;
use self::client::GithubClient;
use crate::client::{Capabilities, SharedClient};
use crate::credentials::Referent;
use crate::error::Result;
use crate::provider::{ClientContext, Provider};
use crate::store::{StoreId, StoreKind};

/// The `github` backend.
#[derive(Debug, Clone, Copy)]
pub struct Github;

#[async_trait]
impl Provider for Github {
    type Spec = GithubProvider;
    const NAME: &'static str = "github";

    fn capabilities(&self, _spec: &GithubProvider) -> Capabilities {
        Capabilities::WriteOnly
    }

    fn validate_store(&self, _spec: &GithubProvider, _store: &StoreId) -> Result<()> {
        // Upstream's ValidateStore only checks that the github section is there, which the
        // registry's dispatch already guarantees.
        Ok(())
    }

    async fn new_client(
        &self,
        spec: &GithubProvider,
        context: ClientContext<'_>,
    ) -> Result<SharedClient> {
        let selector = &spec.auth.private_key;
        let private_key = context
            .credentials
            .selected_key(selector, Referent::Allowed)
            .await
            .map_err(|failure| {
                failure.context("could not get private key: couldn't get private key from secret")
            })?;
        let app = AppAuth::new(spec.app_id, spec.installation_id, private_key.expose())?;
        let api = Api::new(&spec.url, app)?;
        let scope = Scope::of(&api, spec).await?;
        let visibility = spec
            .org_secret_visibility
            .map(|visibility| match visibility {
                external_secrets_crds::v1::GithubOrgSecretVisibility::All => "all",
                external_secrets_crds::v1::GithubOrgSecretVisibility::Private => "private",
            });
        Ok(Arc::new(GithubClient::new(
            api,
            scope,
            visibility,
            context.store.kind == StoreKind::ClusterSecretStore,
        )))
    }
}
