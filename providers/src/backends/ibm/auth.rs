//! IBM Cloud IAM access tokens, as the IBM Go SDK core's authenticators get them: a POST of an
//! `application/x-www-form-urlencoded` grant to `<iamEndpoint>/identity/token`, answered with
//! `{"access_token", "expires_in", ...}`. Two grants, upstream's two auth methods:
//!
//! * API key (`auth.secretRef`): `grant_type=urn:ibm:params:oauth:grant-type:apikey`,
//!   `apikey=<key>` (the `IamAuthenticator`);
//! * container auth (`auth.containerAuth`): `grant_type=urn:ibm:params:oauth:grant-type:cr-token`,
//!   `cr_token=<compute-resource token file>`, `profile_name=<trusted profile>` (the
//!   `ContainerAuthenticator`); the file is read again for every token, so a rotated one is used.
//!
//! A token is kept until 80% of its lifetime has passed (the SDK's refresh point), and dropped
//! when Secrets Manager refuses it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Mutex;

use super::error;
use crate::error::{ProviderError, Result};
use crate::transport::{form_body, read_body, transport_error};
use crate::value::SecretValue;

/// The IAM endpoint upstream uses when the store names none.
pub const DEFAULT_IAM_ENDPOINT: &str = "https://iam.cloud.ibm.com";

/// Where upstream reads the compute-resource token when `tokenLocation` is empty.
pub const DEFAULT_TOKEN_LOCATION: &str = "/var/run/secrets/tokens/vault-token";

/// The token path the SDK appends to the IAM endpoint.
const TOKEN_PATH: &str = "/identity/token";

/// Longest token answer read.
const MAX_BODY_BYTES: usize = 64 * 1024;

/// Longest lifetime believed (IAM tokens live an hour).
const MAX_TOKEN_SECONDS: u64 = 24 * 60 * 60;

/// How the client proves who it is to IAM.
pub enum Grant {
    /// An IAM API key read from a Kubernetes Secret.
    ApiKey(SecretValue),
    /// A trusted profile, with the compute-resource token the kubelet projects at `token_file`.
    Container {
        /// The trusted profile's name.
        profile: String,
        /// The projected token's path.
        token_file: PathBuf,
    },
}

/// An IAM token endpoint and the grant to present to it, with the current token.
pub struct Iam {
    url: String,
    grant: Grant,
    kept: Mutex<Option<(SecretValue, Instant)>>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

impl Iam {
    /// Tokens from the IAM service at `endpoint` (empty: IBM Cloud's), for `grant`.
    pub fn new(endpoint: Option<&str>, grant: Grant) -> Self {
        let endpoint = endpoint
            .filter(|endpoint| !endpoint.is_empty())
            .unwrap_or(DEFAULT_IAM_ENDPOINT);
        Self {
            url: format!("{}{TOKEN_PATH}", endpoint.trim_end_matches('/')),
            grant,
            kept: Mutex::new(None),
        }
    }

    /// A valid access token: the kept one, or a new one.
    pub async fn token(&self, http: &reqwest::Client) -> Result<SecretValue> {
        let mut kept = self.kept.lock().await;
        if let Some((token, until)) = kept.as_ref()
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let action = "failed to get an IAM access token";
        let body = match &self.grant {
            Grant::ApiKey(key) => form_body(&[
                ("grant_type", "urn:ibm:params:oauth:grant-type:apikey"),
                ("apikey", key.expose_str().unwrap_or_default().trim()),
            ]),
            Grant::Container {
                profile,
                token_file,
            } => {
                let token = crate::token_file::read_token_file(token_file, "container auth token")?;
                form_body(&[
                    ("grant_type", "urn:ibm:params:oauth:grant-type:cr-token"),
                    ("cr_token", &token),
                    ("profile_name", profile),
                ])
            }
        };
        let response = http
            .post(&self.url)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let bytes = read_body(response, MAX_BODY_BYTES, action).await?;
        if !status.is_success() {
            return Err(error::iam(action, status, &bytes));
        }
        let answer: TokenAnswer =
            serde_json::from_slice(&bytes).map_err(|failure| error::bad_body(action, &failure))?;
        if answer.access_token.is_empty() {
            return Err(ProviderError::invalid_data(format!(
                "{action}: the answer carries no access_token"
            )));
        }
        let lifetime = answer.expires_in.min(MAX_TOKEN_SECONDS);
        let until = Instant::now() + Duration::from_secs(lifetime * 8 / 10);
        let token = SecretValue::from(answer.access_token);
        *kept = Some((token.clone(), until));
        Ok(token)
    }

    /// Drops the kept token (Secrets Manager refused it), so the next call gets a new one.
    pub async fn forget(&self) {
        *self.kept.lock().await = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_path_is_appended_to_the_endpoint() {
        let iam = Iam::new(None, Grant::ApiKey(SecretValue::from("k".to_owned())));
        assert_eq!(iam.url, "https://iam.cloud.ibm.com/identity/token");
        let iam = Iam::new(
            Some("https://iam.test.cloud.ibm.com/"),
            Grant::ApiKey(SecretValue::from("k".to_owned())),
        );
        assert_eq!(iam.url, "https://iam.test.cloud.ibm.com/identity/token");
    }
}
