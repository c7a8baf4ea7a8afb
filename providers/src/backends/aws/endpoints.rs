//! Custom AWS endpoints (a VPC endpoint, LocalStack, moto), as upstream takes them from the
//! operator's environment: `AWS_SECRETSMANAGER_ENDPOINT`, `AWS_SSM_ENDPOINT` and
//! `AWS_STS_ENDPOINT`; and, this build's addition for the `ECRAuthorizationToken` generator
//! (upstream has no variable for it), `AWS_ECR_ENDPOINT`. Unset or empty means the region's
//! public endpoint.

use crate::error::{ProviderError, Result};

/// The variable overriding the Secrets Manager endpoint.
pub const SECRETS_MANAGER_ENDPOINT: &str = "AWS_SECRETSMANAGER_ENDPOINT";
/// The variable overriding the Systems Manager (Parameter Store) endpoint.
pub const SSM_ENDPOINT: &str = "AWS_SSM_ENDPOINT";
/// The variable overriding the STS endpoint (assumed roles, web identity).
pub const STS_ENDPOINT: &str = "AWS_STS_ENDPOINT";
/// The variable overriding the ECR endpoint (the `ECRAuthorizationToken` generator).
pub const ECR_ENDPOINT: &str = "AWS_ECR_ENDPOINT";

/// Where each AWS API is reached; `None` is the region's public endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoints {
    /// Secrets Manager.
    pub secrets_manager: Option<String>,
    /// Systems Manager (Parameter Store).
    pub ssm: Option<String>,
    /// Security Token Service.
    pub sts: Option<String>,
    /// Elastic Container Registry (private registries).
    pub ecr: Option<String>,
}

impl Endpoints {
    /// The endpoints the operator's environment sets (upstream's variables).
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Every API at `url` (a local AWS emulator serves them all on one address).
    pub fn all(url: impl Into<String>) -> Self {
        let url = url.into();
        Self {
            secrets_manager: Some(url.clone()),
            ssm: Some(url.clone()),
            sts: Some(url.clone()),
            ecr: Some(url),
        }
    }

    /// The endpoints `lookup` gives for upstream's variables, each checked to be an HTTP(S) URL.
    fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let endpoint = |name: &str, service: &str| -> Result<Option<String>> {
            let Some(url) = lookup(name).filter(|url| !url.is_empty()) else {
                return Ok(None);
            };
            let host = url
                .strip_prefix("https://")
                .or_else(|| url.strip_prefix("http://"));
            match host {
                Some(host) if !host.is_empty() => Ok(Some(url)),
                _ => Err(ProviderError::invalid_config(format!(
                    "failed to parse {service} endpoint {url} (from {name}): it must be an \
                     http or https URL"
                ))),
            }
        };
        Ok(Self {
            secrets_manager: endpoint(SECRETS_MANAGER_ENDPOINT, "secretsmanager")?,
            ssm: endpoint(SSM_ENDPOINT, "ssm")?,
            sts: endpoint(STS_ENDPOINT, "sts")?,
            ecr: endpoint(ECR_ENDPOINT, "ecr")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn upstreams_variables_override_each_api() {
        let endpoints = Endpoints::from_lookup(lookup(&[
            (SECRETS_MANAGER_ENDPOINT, "http://127.0.0.1:4566"),
            (SSM_ENDPOINT, ""),
            (STS_ENDPOINT, "https://sts.example"),
        ]))
        .unwrap();
        assert_eq!(
            endpoints,
            Endpoints {
                secrets_manager: Some("http://127.0.0.1:4566".into()),
                ssm: None,
                sts: Some("https://sts.example".into()),
                ecr: None,
            }
        );
        assert_eq!(
            Endpoints::from_lookup(lookup(&[])).unwrap(),
            Endpoints::default()
        );
    }

    #[test]
    fn a_malformed_endpoint_names_its_variable() {
        let error =
            Endpoints::from_lookup(lookup(&[(SSM_ENDPOINT, "localhost:4566")])).unwrap_err();
        assert_eq!(
            error.message(),
            "failed to parse ssm endpoint localhost:4566 (from AWS_SSM_ENDPOINT): it must be an \
             http or https URL"
        );
    }
}
