//! The GitLab REST API (v4) as this backend uses it: one CI/CD variable of a project or a group
//! (optionally filtered by `filter[environment_scope]`), every variable of a project or a group
//! page by page, and the groups a project belongs to. Every request carries the access token as
//! `PRIVATE-TOKEN` (as upstream's `client-go` does for personal, project and group tokens);
//! bodies are bounded before they are read; pages are followed through GitLab's `X-Next-Page`
//! header, up to [`MAX_PAGES`].

use reqwest::StatusCode;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{Roots, https_client, read_body, tls_config, transport_error};
use crate::value::SecretValue;

/// The instance upstream talks to when `url` is empty.
pub const DEFAULT_URL: &str = "https://gitlab.com/";

/// The API path `client-go` appends to a base URL that does not already end with it.
const API_PATH: &str = "api/v4/";

/// Longest answer read (one page of 100 variables of up to 10,000 bytes each, with room).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Most pages read from one list (100 variables each: more than GitLab's default plan limits).
pub const MAX_PAGES: u32 = 200;

/// Variables per page of a list (GitLab's maximum; upstream asks for the same).
const PER_PAGE: &str = "100";

/// Request timeout.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A CI/CD variable as GitLab returns it (project and group variables share the shape).
#[derive(Debug, Clone, Deserialize)]
pub struct Variable {
    /// The variable's key (letters, digits and `_`).
    pub key: String,
    /// Its value.
    #[serde(default)]
    pub value: String,
    /// The environments it applies to (`*`: all).
    #[serde(default)]
    pub environment_scope: String,
}

/// A group a project belongs to (`GET /projects/:id/groups`).
#[derive(Debug, Clone, Deserialize)]
pub struct ProjectGroup {
    /// The group's numeric id.
    pub id: u64,
    /// Its full path (`parent/child`): nesting depth orders the groups.
    #[serde(default)]
    pub full_path: String,
}

/// Whose variables a request reads.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'a> {
    /// A project, by numeric id or full path.
    Project(&'a str),
    /// A group, by numeric id or full path.
    Group(&'a str),
}

impl Owner<'_> {
    fn segments(&self) -> [&str; 2] {
        match self {
            Owner::Project(id) => ["projects", id],
            Owner::Group(id) => ["groups", id],
        }
    }
}

/// A GitLab instance and the token to call it with.
pub struct Api {
    http: reqwest::Client,
    base: reqwest::Url,
    token: SecretValue,
}

impl Api {
    /// A client of the instance at `url` (empty: gitlab.com), trusting `ca` when given and the
    /// system roots otherwise.
    pub fn new(url: Option<&str>, ca: Option<&[u8]>, token: SecretValue) -> Result<Self> {
        let base = base_url(url)?;
        let roots = match ca {
            Some(pem) => Roots::Bundle {
                pem,
                invalid: "failed to append ca bundle",
            },
            None => Roots::System,
        };
        let http = https_client(
            tls_config(roots)?,
            TIMEOUT,
            Some("external-secrets"),
            "failed to create GitLab client",
        )?;
        if token.expose_str().is_none() {
            return Err(ProviderError::invalid_config(
                "the GitLab access token is not valid UTF-8",
            ));
        }
        Ok(Self { http, base, token })
    }

    /// The variable `key` of `owner`, restricted to `scope` when given; `None` when GitLab
    /// answers that no such variable exists.
    pub async fn variable(
        &self,
        owner: Owner<'_>,
        key: &str,
        scope: Option<&str>,
    ) -> Result<Option<Variable>> {
        let [kind, id] = owner.segments();
        let query: Vec<(&str, &str)> = scope
            .map(|scope| ("filter[environment_scope]", scope))
            .into_iter()
            .collect();
        let action = "error getting variable from GitLab";
        let (status, body, _) = self
            .send(&[kind, id, "variables", key], &query, action)
            .await?;
        if status == StatusCode::NOT_FOUND && error::is_missing_variable(&body) {
            return Ok(None);
        }
        decode(status, &body, action).map(Some)
    }

    /// Every variable of `owner`, across pages.
    pub async fn variables(&self, owner: Owner<'_>) -> Result<Vec<Variable>> {
        let [kind, id] = owner.segments();
        self.pages(
            &[kind, id, "variables"],
            "error listing variables from GitLab",
        )
        .await
    }

    /// Whether the token may list the variables of `owner` (one variable asked for).
    pub async fn probe(&self, owner: Owner<'_>) -> Result<()> {
        let [kind, id] = owner.segments();
        let action = "could not verify whether the gitlabClient is valid";
        let query = [("per_page", "1")];
        let (status, body, _) = self.send(&[kind, id, "variables"], &query, action).await?;
        decode::<Vec<serde_json::Value>>(status, &body, action).map(|_| ())
    }

    /// The groups (ancestors included) the project belongs to, across pages.
    pub async fn project_groups(&self, project: &str) -> Result<Vec<ProjectGroup>> {
        self.pages(
            &["projects", project, "groups"],
            "error listing the groups of the GitLab project",
        )
        .await
    }

    /// Every item of a paginated list.
    async fn pages<T: DeserializeOwned>(&self, path: &[&str], action: &str) -> Result<Vec<T>> {
        let mut all = Vec::new();
        let mut page = 1_u32;
        loop {
            let page_text = page.to_string();
            let query = [("page", page_text.as_str()), ("per_page", PER_PAGE)];
            let (status, body, next) = self.send(path, &query, action).await?;
            let items: Vec<T> = decode(status, &body, action)?;
            all.extend(items);
            match next {
                Some(next) if next > page && next <= MAX_PAGES => page = next,
                Some(_) => {
                    return Err(ProviderError::invalid_data(format!(
                        "{action}: more than {MAX_PAGES} pages"
                    )));
                }
                None => return Ok(all),
            }
        }
    }

    /// Sends a GET and reads the (bounded) answer and its `X-Next-Page`, whatever its status.
    async fn send(
        &self,
        path: &[&str],
        query: &[(&str, &str)],
        action: &str,
    ) -> Result<(StatusCode, Vec<u8>, Option<u32>)> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| ProviderError::invalid_config("the GitLab url cannot be a base"))?
            .pop_if_empty()
            .extend(path);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let token = self.token.expose_str().unwrap_or_default();
        let response = self
            .http
            .get(url)
            .header("PRIVATE-TOKEN", token.trim())
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let next = response
            .headers()
            .get("x-next-page")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse().ok());
        let body = read_body(response, MAX_BODY_BYTES, action).await?;
        Ok((status, body, next))
    }
}

/// A successful answer's JSON, or the error GitLab answered with.
fn decode<T: DeserializeOwned>(status: StatusCode, body: &[u8], action: &str) -> Result<T> {
    if !status.is_success() {
        return Err(error::status(action, status, body));
    }
    serde_json::from_slice(body).map_err(|failure| error::bad_body(action, &failure))
}

/// The API root of the instance at `url`, as `client-go`'s `WithBaseURL`: a trailing `/`, then
/// `api/v4/` unless the path already ends with it.
pub fn base_url(url: Option<&str>) -> Result<reqwest::Url> {
    let url = url.filter(|url| !url.is_empty()).unwrap_or(DEFAULT_URL);
    let mut base = reqwest::Url::parse(url).map_err(|failure| {
        ProviderError::invalid_config(format!("failed to parse the GitLab url: {failure}"))
    })?;
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    if !base.path().ends_with(API_PATH) {
        let path = format!("{}{API_PATH}", base.path());
        base.set_path(&path);
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_get_the_api_path_once() {
        let base = |url: Option<&str>| base_url(url).unwrap().to_string();
        assert_eq!(base(None), "https://gitlab.com/api/v4/");
        assert_eq!(base(Some("")), "https://gitlab.com/api/v4/");
        assert_eq!(
            base(Some("https://git.example:8443/gitlab")),
            "https://git.example:8443/gitlab/api/v4/"
        );
        assert_eq!(
            base(Some("https://git.example/api/v4")),
            "https://git.example/api/v4/"
        );
        assert!(base_url(Some("not a url")).is_err());
    }
}
