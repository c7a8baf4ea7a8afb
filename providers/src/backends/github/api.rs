//! The GitHub REST API as this backend uses it: the installation token of a GitHub App, a
//! repository's id, and the Actions secrets of an organization, a repository or an environment
//! (one secret, the public key, create or update, delete, list, and the repositories of a
//! `selected` organization secret). Every request carries the installation token, GitHub's JSON
//! media type and API version; bodies are bounded before they are read.

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::app::{AppAuth, InstallationToken};
use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};
use external_secrets_crds::v1::GithubProvider;

/// The `url` meaning github.com, whose API is [`GITHUB_API`].
const GITHUB_URL: &str = "https://github.com/";

/// github.com's API root.
const GITHUB_API: &str = "https://api.github.com/";

/// The API path go-github appends to an Enterprise Server URL.
const ENTERPRISE_API_PATH: &str = "api/v3/";

/// Longest answer read (a page of 100 repositories with their full records, with room).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Most pages of a `selected` secret's repositories read (100 each).
const MAX_PAGES: u32 = 100;

/// Request timeout.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Whose secrets a store writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// An organization's.
    Organization(String),
    /// A repository's (`owner/repo`).
    Repository(String, String),
    /// An environment's, of the repository with this id.
    Environment(i64, String),
}

impl Scope {
    /// The scope a store configures: the environment needs its repository's id, read here.
    pub async fn of(api: &Api, spec: &GithubProvider) -> Result<Self> {
        let organization = spec.organization.clone();
        let Some(repository) = spec.repository.clone().filter(|name| !name.is_empty()) else {
            return Ok(Scope::Organization(organization));
        };
        match spec.environment.clone().filter(|name| !name.is_empty()) {
            None => Ok(Scope::Repository(organization, repository)),
            Some(environment) => {
                let id = api.repository_id(&organization, &repository).await?;
                Ok(Scope::Environment(id, environment))
            }
        }
    }

    /// The path of the scope's secrets collection.
    fn secrets(&self) -> Vec<String> {
        let owned = |parts: &[&str]| parts.iter().map(|part| (*part).to_owned()).collect();
        match self {
            Scope::Organization(org) => owned(&["orgs", org, "actions", "secrets"]),
            Scope::Repository(owner, repo) => owned(&["repos", owner, repo, "actions", "secrets"]),
            Scope::Environment(id, environment) => {
                let id = id.to_string();
                owned(&["repositories", &id, "environments", environment, "secrets"])
            }
        }
    }

    /// The path of the scope's secret `name` (or of `public-key`).
    fn secret(&self, name: &str) -> Vec<String> {
        let mut path = self.secrets();
        path.push(name.to_owned());
        path
    }
}

/// A secret's metadata (GitHub never returns values).
#[derive(Debug, Clone, Deserialize)]
pub struct RemoteSecret {
    /// Its name as GitHub spells it (upper case).
    pub name: String,
    /// An organization secret's visibility (`all`, `private`, `selected`).
    #[serde(default)]
    pub visibility: Option<String>,
}

/// A scope's public key for sealing values.
#[derive(Debug, Clone, Deserialize)]
pub struct PublicKey {
    /// The key's id, sent back with every value sealed to it.
    pub key_id: String,
    /// The base64 X25519 key.
    pub key: String,
}

/// A GitHub (or Enterprise Server) API and the App installation calling it.
pub struct Api {
    http: reqwest::Client,
    base: reqwest::Url,
    app: AppAuth,
}

impl Api {
    /// A client of the instance at `url` as `app`, trusting the system roots (GitHub's store
    /// has no CA field).
    pub fn new(url: &str, app: AppAuth) -> Result<Self> {
        let http = https_client(
            tls_config(Roots::System)?,
            TIMEOUT,
            Some("external-secrets"),
            "failed to create GitHub client",
        )?;
        Ok(Self {
            http,
            base: base_url(url)?,
            app,
        })
    }

    /// The numeric id of `owner/repo` (environment secrets are addressed by it).
    pub async fn repository_id(&self, owner: &str, repo: &str) -> Result<i64> {
        #[derive(Deserialize)]
        struct Repository {
            id: i64,
        }
        let action = "error fetching repository";
        let answer = self
            .call(Method::GET, &["repos", owner, repo], None, action)
            .await?;
        decode::<Repository>(answer, action).map(|repository| repository.id)
    }

    /// The secret `name` of `scope`, `None` when GitHub has none of that name.
    pub async fn secret(&self, scope: &Scope, name: &str) -> Result<Option<RemoteSecret>> {
        let action = "error fetching secret";
        let answer = self
            .call(Method::GET, &scope.secret(name), None, action)
            .await?;
        if answer.0 == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        decode(answer, action).map(Some)
    }

    /// The key values written to `scope` are sealed with.
    pub async fn public_key(&self, scope: &Scope) -> Result<PublicKey> {
        let action = "error fetching public key";
        let answer = self
            .call(Method::GET, &scope.secret("public-key"), None, action)
            .await?;
        decode(answer, action)
    }

    /// Creates or updates the secret `name` of `scope` (`body`: the sealed value, its key id,
    /// and for organizations the visibility).
    pub async fn put_secret(
        &self,
        scope: &Scope,
        name: &str,
        body: &serde_json::Value,
    ) -> Result<()> {
        let action = "failed to create secret";
        let answer = self
            .call(Method::PUT, &scope.secret(name), Some(body), action)
            .await?;
        success(answer, action)
    }

    /// Deletes the secret `name` of `scope`; one already gone counts as deleted.
    pub async fn delete_secret(&self, scope: &Scope, name: &str) -> Result<()> {
        let action = "failed to delete secret";
        let answer = self
            .call(Method::DELETE, &scope.secret(name), None, action)
            .await?;
        if answer.0 == StatusCode::NOT_FOUND {
            return Ok(());
        }
        success(answer, action)
    }

    /// Whether the installation may list the secrets of `scope` (one page asked for).
    pub async fn list_secrets(&self, scope: &Scope) -> Result<()> {
        let action = "store is not allowed to list secrets";
        let answer = self
            .call(Method::GET, &scope.secrets(), None, action)
            .await?;
        decode::<serde_json::Value>(answer, action).map(|_| ())
    }

    /// The ids of the repositories the `selected` organization secret `name` is granted to,
    /// across pages.
    pub async fn selected_repositories(&self, org: &str, name: &str) -> Result<Vec<i64>> {
        #[derive(Deserialize)]
        struct Page {
            total_count: usize,
            repositories: Vec<Repository>,
        }
        #[derive(Deserialize)]
        struct Repository {
            id: i64,
        }
        let action = format!("failed to list selected repositories for org secret {name:?}");
        let path = Scope::Organization(org.to_owned()).secret(name);
        let mut path: Vec<&str> = path.iter().map(String::as_str).collect();
        path.push("repositories");
        let mut ids = Vec::new();
        for page in 1..=MAX_PAGES {
            let query = format!("page={page}&per_page=100");
            let answer = self
                .send(Method::GET, &path, Some(&query), None, &action)
                .await?;
            let Page {
                total_count,
                repositories,
            } = decode(answer, &action)?;
            let last = repositories.len() < 100;
            ids.extend(repositories.into_iter().map(|repository| repository.id));
            if last || ids.len() >= total_count {
                return Ok(ids);
            }
        }
        Err(ProviderError::invalid_data(format!(
            "{action}: more than {MAX_PAGES} pages"
        )))
    }

    /// A request without query; see [`Self::send`].
    async fn call<S: AsRef<str>>(
        &self,
        method: Method,
        path: &[S],
        body: Option<&serde_json::Value>,
        action: &str,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>)> {
        let path: Vec<&str> = path.iter().map(AsRef::as_ref).collect();
        self.send(method, &path, None, body, action).await
    }

    /// Sends a request as the installation and reads the (bounded) answer, whatever its status.
    async fn send(
        &self,
        method: Method,
        path: &[&str],
        query: Option<&str>,
        body: Option<&serde_json::Value>,
        action: &str,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>)> {
        let token = self.app.token(|| self.installation_token()).await?;
        let mut request = self.http.request(method, self.url(path, query)?).header(
            "authorization",
            format!("token {}", token.expose_str().unwrap_or_default()),
        );
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        self.exchange(request, action).await
    }

    /// A new installation token for the App's JWT.
    async fn installation_token(&self) -> Result<InstallationToken> {
        let action = "could not refresh installation id's token";
        let id = self.app.installation_id().to_string();
        let url = self.url(&["app", "installations", &id, "access_tokens"], None)?;
        let request = self.http.post(url).bearer_auth(self.app.jwt()?);
        let answer = self.exchange(request, action).await?;
        decode(answer, action)
    }

    /// Adds GitHub's headers, sends, and reads the answer.
    async fn exchange(
        &self,
        request: reqwest::RequestBuilder,
        action: &str,
    ) -> Result<(StatusCode, HeaderMap, Vec<u8>)> {
        let response = request
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28")
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = read_body(response, MAX_BODY_BYTES, action).await?;
        Ok((status, headers, body))
    }

    /// `path` (segments, each percent-encoded) and `query` under the API root.
    fn url(&self, path: &[&str], query: Option<&str>) -> Result<reqwest::Url> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ProviderError::invalid_config("the GitHub url cannot be a base"))?
            .pop_if_empty()
            .extend(path);
        url.set_query(query);
        Ok(url)
    }
}

/// A successful answer's JSON, or the error GitHub answered with.
fn decode<T: DeserializeOwned>(
    (status, headers, body): (StatusCode, HeaderMap, Vec<u8>),
    action: &str,
) -> Result<T> {
    if !status.is_success() {
        return Err(error::status(action, status, &headers, &body));
    }
    serde_json::from_slice(&body).map_err(|failure| error::bad_body(action, &failure))
}

/// Success, or the error GitHub answered with.
fn success((status, headers, body): (StatusCode, HeaderMap, Vec<u8>), action: &str) -> Result<()> {
    if status.is_success() {
        return Ok(());
    }
    Err(error::status(action, status, &headers, &body))
}

/// The API root of the instance at `url`: api.github.com for github.com (or an empty `url`),
/// otherwise go-github's `WithEnterpriseURLs` rule: a trailing `/`, then `api/v3/` unless the
/// path already ends with it or the host is an `api.` one.
pub fn base_url(url: &str) -> Result<reqwest::Url> {
    let url = if url.is_empty() || url == GITHUB_URL {
        GITHUB_API
    } else {
        url
    };
    let mut base = reqwest::Url::parse(url).map_err(|failure| {
        ProviderError::invalid_config(format!("failed to parse the GitHub url: {failure}"))
    })?;
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    let host = base.host_str().unwrap_or_default();
    let api_host = host.starts_with("api.") || host.contains(".api.");
    if !api_host && !base.path().ends_with(ENTERPRISE_API_PATH) {
        let path = format!("{}{ENTERPRISE_API_PATH}", base.path());
        base.set_path(&path);
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_follow_go_github() {
        let base = |url: &str| base_url(url).unwrap().to_string();
        assert_eq!(base(""), "https://api.github.com/");
        assert_eq!(base("https://github.com/"), "https://api.github.com/");
        assert_eq!(base("https://ghe.example"), "https://ghe.example/api/v3/");
        assert_eq!(
            base("https://ghe.example/api/v3"),
            "https://ghe.example/api/v3/"
        );
        assert_eq!(base("https://api.ghe.example/"), "https://api.ghe.example/");
        assert!(base_url("not a url").is_err());
    }

    #[test]
    fn scopes_address_their_collections() {
        let join = |path: Vec<String>| path.join("/");
        let org = Scope::Organization("acme".into());
        assert_eq!(join(org.secret("A")), "orgs/acme/actions/secrets/A");
        let repo = Scope::Repository("acme".into(), "app".into());
        assert_eq!(join(repo.secrets()), "repos/acme/app/actions/secrets");
        let env = Scope::Environment(42, "prod".into());
        assert_eq!(
            join(env.secret("public-key")),
            "repositories/42/environments/prod/secrets/public-key"
        );
    }
}
