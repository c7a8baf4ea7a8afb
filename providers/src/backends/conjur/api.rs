//! The Conjur REST API, as upstream's client (`cyberark/conjur-api-go` v0.14) calls it:
//! authenticators (`POST /authn/{account}/{login}/authenticate`,
//! `/authn-jwt/{service}/{account}[/{host}]/authenticate`,
//! `/authn-cert/{service}/{account}[/{host}]/authenticate`), one variable
//! (`GET /secrets/{account}/variable/{id}`), a page of variables
//! (`GET /resources/{account}?kind=variable&limit=&offset=`) and a batch of values
//! (`GET /secrets?variable_ids=`). Paths and queries are escaped as that client escapes them
//! (Go's `url.PathEscape` and `url.QueryEscape`); bodies are bounded before they are read.

use std::collections::BTreeMap;

use reqwest::StatusCode;
use serde::Deserialize;

use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{https_client, read_body, transport_error};
use crate::value::SecretValue;

/// Longest answer read (a page of resources, a batch of values).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// Request timeout (upstream's client default).
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Host suffixes of Secrets Manager SaaS (Conjur Cloud), whose API lives under `/api`.
const CLOUD_SUFFIXES: [&str; 8] = [
    ".cyberark.cloud",
    ".integration-cyberark.cloud",
    ".test-cyberark.cloud",
    ".dev-cyberark.cloud",
    ".cyberark-everest-integdev.cloud",
    ".cyberark-everest-pre-prod.cloud",
    ".sandbox-cyberark.cloud",
    ".pt-cyberark.cloud",
];

/// One resource of a `/resources` page.
#[derive(Debug, Deserialize)]
pub struct Resource {
    /// Its fully-qualified id, `account:kind:identifier`.
    pub id: String,
    /// Its annotations, when the answer carries them.
    #[serde(default)]
    pub annotations: Option<Vec<Annotation>>,
}

/// One annotation of a resource.
#[derive(Debug, Deserialize)]
pub struct Annotation {
    /// Its name.
    pub name: String,
    /// Its value.
    #[serde(default)]
    pub value: String,
}

/// An authenticator request: where it goes and what it sends.
pub struct Authenticate {
    /// The path segments after the appliance URL, escaped.
    pub path: Vec<String>,
    /// The body and its content type, if any.
    pub body: Option<(SecretValue, &'static str)>,
}

/// A Conjur appliance of one account.
pub struct Api {
    http: reqwest::Client,
    base: String,
    account: String,
}

impl Api {
    /// A client of the appliance at `url` for `account`, on `tls`.
    pub fn new(url: &str, account: &str, tls: rustls::ClientConfig) -> Result<Self> {
        let parsed = reqwest::Url::parse(url).map_err(|failure| {
            ProviderError::invalid_config(format!("invalid Conjur URL {url:?}: {failure}"))
        })?;
        if parsed.cannot_be_a_base() {
            return Err(ProviderError::invalid_config(format!(
                "invalid Conjur URL {url:?}: not a base URL"
            )));
        }
        let http = https_client(tls, TIMEOUT, None, "cannot setup new Conjur client")?;
        Ok(Self {
            http,
            base: base_url(url, &parsed),
            account: account.to_owned(),
        })
    }

    /// The account the client reads.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The authenticator segment for `kind` (`authn`, `authn-jwt`, `authn-cert`): the default
    /// one is `/authn/{account}`, the others `/{kind}/{service}/{account}`.
    pub fn authenticator(&self, kind: &str, service: Option<&str>) -> Vec<String> {
        let mut path = vec![kind.to_owned()];
        path.extend(service.map(path_escape));
        path.push(path_escape(&self.account));
        path
    }

    /// Sends an authenticator request; the access token (Conjur's signed JSON), raw.
    pub async fn authenticate(&self, request: Authenticate) -> Result<SecretValue> {
        let action = "failed to authenticate";
        let url = self.url(&request.path.join("/"), None)?;
        let mut builder = self.http.post(url);
        if let Some((body, content_type)) = request.body {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body.into_bytes());
        }
        let (status, bytes) = self.send(builder, action).await?;
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        Ok(SecretValue::new(bytes))
    }

    /// The value of variable `id` (unqualified); `None` when Conjur answers 404 (no such
    /// variable, or one without a value).
    pub async fn secret(&self, token: &str, id: &str) -> Result<Option<SecretValue>> {
        let action = "failed to retrieve secret";
        let path = format!(
            "secrets/{}/variable/{}",
            path_escape(&self.account),
            path_escape(id)
        );
        let url = self.url(&path, None)?;
        let (status, bytes) = self
            .send(authorized(self.http.get(url), token), action)
            .await?;
        match status {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => Ok(Some(SecretValue::new(bytes))),
            status => Err(error::status(action, status, &bytes)),
        }
    }

    /// One page of the account's variables, `limit` from `offset`.
    pub async fn variables(
        &self,
        token: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<Resource>> {
        let action = "failed to list variables";
        let mut query = format!("kind=variable&limit={limit}");
        if offset != 0 {
            query.push_str(&format!("&offset={offset}"));
        }
        let url = self.url(
            &format!("resources/{}", path_escape(&self.account)),
            Some(&query),
        )?;
        let (status, bytes) = self
            .send(authorized(self.http.get(url), token), action)
            .await?;
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        serde_json::from_slice(&bytes).map_err(|failure| error::unexpected(action, &failure))
    }

    /// The values of the fully-qualified variables `ids`, keyed by those ids.
    pub async fn batch(
        &self,
        token: &str,
        ids: &[String],
    ) -> Result<BTreeMap<String, SecretValue>> {
        let action = "failed to retrieve secrets";
        let query = format!("variable_ids={}", query_escape(&ids.join(",")));
        let url = self.url("secrets", Some(&query))?;
        let (status, bytes) = self
            .send(authorized(self.http.get(url), token), action)
            .await?;
        if !status.is_success() {
            return Err(error::status(action, status, &bytes));
        }
        let values: BTreeMap<String, String> = serde_json::from_slice(&bytes)
            .map_err(|failure| error::unexpected(action, &failure))?;
        Ok(values
            .into_iter()
            .map(|(id, value)| (id, SecretValue::new(value)))
            .collect())
    }

    fn url(&self, path: &str, query: Option<&str>) -> Result<reqwest::Url> {
        let mut url = format!("{}/{path}", self.base);
        if let Some(query) = query {
            url.push('?');
            url.push_str(query);
        }
        reqwest::Url::parse(&url).map_err(|failure| {
            ProviderError::invalid_config(format!("invalid Conjur URL: {failure}"))
        })
    }

    /// Sends a request and reads the (bounded) answer, whatever its status.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        action: &str,
    ) -> Result<(StatusCode, Vec<u8>)> {
        let response = request
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        Ok((status, bytes))
    }
}

/// `request` carrying access token `token` as Conjur wants it: `Token token="<base64>"`.
fn authorized(request: reqwest::RequestBuilder, token: &str) -> reqwest::RequestBuilder {
    request.header(
        reqwest::header::AUTHORIZATION,
        format!("Token token=\"{token}\""),
    )
}

/// The appliance URL without a trailing `/`, with `/api` appended for Secrets Manager SaaS
/// hosts (`*.secretsmgr.<suffix>`, `*-secretsmanager.<suffix>`) as upstream's client does.
fn base_url(url: &str, parsed: &reqwest::Url) -> String {
    let base = url.trim_end_matches('/');
    let host = parsed.host_str().unwrap_or_default().to_ascii_lowercase();
    let cloud = parsed.scheme() == "https"
        && CLOUD_SUFFIXES.iter().any(|suffix| {
            host.strip_suffix(suffix).is_some_and(|rest| {
                rest.ends_with(".secretsmgr") || rest.ends_with("-secretsmanager")
            })
        });
    if cloud && !base.contains("/api") {
        format!("{base}/api")
    } else {
        base.to_owned()
    }
}

/// Go's `url.PathEscape`: unreserved characters and `$&+:=@` stay, everything else
/// (`/` included) is percent-encoded.
pub fn path_escape(segment: &str) -> String {
    escape(segment, |byte| b"$&+:=@".contains(&byte), false)
}

/// Go's `url.QueryEscape`: unreserved characters stay, a space becomes `+`, everything else is
/// percent-encoded.
pub fn query_escape(value: &str) -> String {
    escape(value, |_| false, true)
}

fn escape(text: &str, keep: impl Fn(u8) -> bool, plus_for_space: bool) -> String {
    let mut escaped = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) || keep(byte) {
            escaped.push(char::from(byte));
        } else if byte == b' ' && plus_for_space {
            escaped.push('+');
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_gos_path_and_query_escape() {
        assert_eq!(path_escape("app/db password"), "app%2Fdb%20password");
        assert_eq!(path_escape("a:b@c=d&e+f$"), "a:b@c=d&e+f$");
        assert_eq!(path_escape("x;y,z?"), "x%3By%2Cz%3F");
        assert_eq!(query_escape("host/app one"), "host%2Fapp+one");
        assert_eq!(query_escape("a:variable:b,c"), "a%3Avariable%3Ab%2Cc");
    }

    #[test]
    fn saas_hosts_get_the_api_prefix() {
        let base = |url: &str| base_url(url, &reqwest::Url::parse(url).unwrap());
        assert_eq!(
            base("https://acme.secretsmgr.cyberark.cloud/"),
            "https://acme.secretsmgr.cyberark.cloud/api"
        );
        assert_eq!(
            base("https://acme-secretsmanager.cyberark.cloud/api"),
            "https://acme-secretsmanager.cyberark.cloud/api"
        );
        assert_eq!(
            base("https://conjur.example.com/"),
            "https://conjur.example.com"
        );
        assert_eq!(
            base("http://acme.secretsmgr.cyberark.cloud"),
            "http://acme.secretsmgr.cyberark.cloud"
        );
    }
}
