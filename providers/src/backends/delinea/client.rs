//! The DSV client: secrets by path, whole (their data as JSON), by gjson property, or as a map
//! of their data's members. Read-only, as upstream.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::Delinea;
use super::api::{Dsv, Secret};
use crate::client::{Capabilities, SecretsClient, ValidationResult};
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::provider::Provider as _;
use crate::request::{Find, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

/// A client of one tenant.
pub struct DelineaClient {
    dsv: Dsv,
}

impl DelineaClient {
    /// A client calling `dsv`.
    pub fn new(dsv: Dsv) -> Self {
        Self { dsv }
    }

    /// The secret a ref names; versions are refused as upstream.
    async fn secret(&self, remote_ref: &RemoteRef) -> Result<Secret> {
        if remote_ref.version.as_deref().is_some_and(|v| !v.is_empty()) {
            return Err(ProviderError::invalid_request(
                "specifying a version is not yet supported",
            ));
        }
        self.dsv.secret(&remote_ref.key).await
    }
}

/// A member of a secret's data as bytes, as upstream's `GetByteValue`: strings as they are,
/// null as nothing, anything else as its JSON text.
fn member_bytes(value: &serde_json::Value) -> Vec<u8> {
    match value {
        serde_json::Value::String(text) => text.clone().into_bytes(),
        serde_json::Value::Null => Vec::new(),
        other => other.to_string().into_bytes(),
    }
}

/// The error of an operation DSV does not offer, with upstream's message.
fn unsupported(what: &str) -> ProviderError {
    ProviderError::unsupported(format!(
        "{what} is not supported by Delinea DevOps Secrets Vault"
    ))
}

#[async_trait]
impl SecretsClient for DelineaClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let secret = self.secret(remote_ref).await?;
        let Some(data) = secret.data else {
            return Ok(SecretValue::new(Vec::new()));
        };
        // Upstream marshals the data with Go's encoding/json: compact, keys sorted.
        let sorted: BTreeMap<String, serde_json::Value> = data.into_iter().collect();
        let json = serde_json::to_vec(&sorted).map_err(|failure| {
            ProviderError::invalid_data(format!("error encoding secret data: {failure}"))
        })?;
        match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
            None => Ok(SecretValue::new(json)),
            Some(property) => json_property(&json, property)
                .map(SecretValue::new)
                .ok_or_else(|| {
                    ProviderError::not_found(format!(
                        "property {property} does not exist in secret {}",
                        remote_ref.key
                    ))
                }),
        }
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let secret = self.secret(remote_ref).await?;
        Ok(secret
            .data
            .unwrap_or_default()
            .iter()
            .map(|(key, value)| (key.clone(), SecretValue::new(member_bytes(value))))
            .collect())
    }

    async fn get_all_secrets(&self, _find: &Find) -> Result<SecretMap> {
        Err(unsupported("getting all secrets"))
    }

    async fn push_secret(&self, _request: &PushRequest) -> Result<()> {
        Err(unsupported("pushing secrets"))
    }

    async fn delete_secret(&self, _remote_ref: &PushRemoteRef) -> Result<()> {
        Err(unsupported("deleting secrets"))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self.dsv.secret(&remote_ref.remote_key).await {
            Ok(_) => Ok(true),
            Err(missing) if missing.is_not_found() => Ok(false),
            Err(failure) => Err(failure),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        self.dsv.token().await?;
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Delinea.capabilities(&Default::default())
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_become_bytes_as_upstream() {
        let bytes = |json: &str| member_bytes(&serde_json::from_str(json).unwrap());
        assert_eq!(bytes(r#""text""#), b"text");
        assert_eq!(bytes("null"), b"");
        assert_eq!(bytes("5432"), b"5432");
        assert_eq!(bytes("true"), b"true");
        assert_eq!(bytes(r#"{"a":1}"#), br#"{"a":1}"#);
    }
}
