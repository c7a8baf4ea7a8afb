//! The `VaultDynamicSecret` generator's Vault side: one call to any Vault path (a dynamic
//! secrets engine, `auth/token/create`, PKI issue, ...) over the provider's client and
//! authentication, as upstream's `vault` generator makes it.
//!
//! * `method`: `GET` (the default; `getParameters` as the query), `LIST`, `DELETE`, or anything
//!   else (spelled otherwise, `get` too, as upstream compares), which writes `parameters` (a
//!   JSON object) with `PUT`, as the Go client's `Write`.
//! * `resultType`: `Data` (default) returns the members of the answer's `data`, `Auth` those of
//!   its `auth`, `Raw` those of the whole answer; strings as they are, other values as JSON.
//! * No answer (404 or an empty body) fails with "empty response from Vault" unless
//!   `allowEmptyResponse`, which returns no data.
//! * `retrySettings` retry temporary failures (defaults otherwise), as a store's do.
//!
//! The login token is not revoked afterwards: the leases of what was generated belong to it,
//! and revoking it would revoke them (upstream does not revoke it either).

use external_secrets_crds::generators::{VaultDynamicSecretResultType, VaultDynamicSecretSpec};
use reqwest::Method;
use serde_json::Value;

use super::http::{Call, Reply};
use super::kv::Engine;
use crate::credentials::CredentialResolver;
use crate::error::{ProviderError, Result};
use crate::retry::RetryPolicy;
use crate::value::SecretMap;

/// Authenticates with `spec.provider` (Secrets resolved by `credentials`), makes the call
/// `spec` describes and returns the part of the answer `spec.resultType` selects.
pub async fn generate(
    spec: &VaultDynamicSecretSpec,
    credentials: CredentialResolver,
) -> Result<SecretMap> {
    super::validate_store(&spec.provider, credentials.store())?;
    let retry = match &spec.retry_settings {
        Some(settings) => {
            RetryPolicy::from_settings(settings.max_retries, settings.retry_interval.as_deref())?
        }
        None => RetryPolicy::default(),
    };
    let engine = retry
        .run(|| super::connect(&spec.provider, credentials.clone()))
        .await
        .map_err(|error| error.context("unable to setup Vault client"))?;
    let reply = retry.run(|| call(&engine, spec)).await?;
    let body = match reply {
        Reply::Body(body) if !body.is_empty() => body,
        _ if spec.allow_empty_response => return Ok(SecretMap::new()),
        _ => {
            return Err(ProviderError::invalid_data(
                "unable to get dynamic secret: empty response from Vault",
            ));
        }
    };
    select(&body, spec.result_type)
}

/// The request `spec.method` says.
async fn call(engine: &Engine, spec: &VaultDynamicSecretSpec) -> Result<Reply> {
    let path = spec.path.as_str();
    let method = spec.method.as_deref().unwrap_or_default();
    let call = match method {
        "" | "GET" => {
            let mut call = Call::new(Method::GET, path);
            call.query = spec
                .get_parameters
                .iter()
                .flat_map(|(name, values)| values.iter().map(|value| (name.clone(), value.clone())))
                .collect();
            call
        }
        "LIST" => {
            let mut call = Call::new(Method::GET, path);
            call.query.push(("list".to_owned(), "true".to_owned()));
            call
        }
        "DELETE" => Call::new(Method::DELETE, path),
        _ => {
            let mut call = Call::new(Method::PUT, path);
            let parameters = match &spec.parameters {
                None | Some(Value::Null) => Value::Object(Default::default()),
                Some(parameters @ Value::Object(_)) => parameters.clone(),
                Some(_) => {
                    return Err(ProviderError::invalid_config(
                        "parameters must be a JSON object",
                    ));
                }
            };
            call.body = Some(parameters);
            call
        }
    };
    let action = format!("unable to get dynamic secret at {path:?}");
    engine.session.send(call, &action).await
}

/// The members of the part of `body` that `result_type` selects.
fn select(body: &[u8], result_type: VaultDynamicSecretResultType) -> Result<SecretMap> {
    let invalid = || ProviderError::invalid_data("unable to get dynamic secret: invalid answer");
    let answer: serde_json::Map<String, Value> =
        serde_json::from_slice(body).map_err(|_| invalid())?;
    let part = match result_type {
        VaultDynamicSecretResultType::Data => answer.get("data").cloned(),
        VaultDynamicSecretResultType::Auth => answer.get("auth").cloned(),
        VaultDynamicSecretResultType::Raw => Some(Value::Object(answer)),
    };
    match part {
        None | Some(Value::Null) => Ok(SecretMap::new()),
        Some(part) => super::read::to_map(&serde_json::to_vec(&part).map_err(|_| invalid())?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_types_select_their_part_with_strings_raw_and_the_rest_as_json() {
        let body = br#"{"request_id":"r","lease_duration":60,
            "data":{"user":"u","n":1,"nested":{"a":true}},
            "auth":{"client_token":"t","policies":["p"]}}"#;
        let data = select(body, VaultDynamicSecretResultType::Data).unwrap();
        assert_eq!(data["user"].expose(), b"u");
        assert_eq!(data["n"].expose(), b"1");
        assert_eq!(data["nested"].expose(), br#"{"a":true}"#);
        let auth = select(body, VaultDynamicSecretResultType::Auth).unwrap();
        assert_eq!(auth["client_token"].expose(), b"t");
        assert_eq!(auth["policies"].expose(), br#"["p"]"#);
        let raw = select(body, VaultDynamicSecretResultType::Raw).unwrap();
        assert_eq!(raw["request_id"].expose(), b"r");
        assert_eq!(raw["lease_duration"].expose(), b"60");
        assert!(raw.contains_key("auth") && raw.contains_key("data"));
    }

    #[test]
    fn a_missing_or_null_part_is_empty() {
        let body = br#"{"data":null}"#;
        assert!(
            select(body, VaultDynamicSecretResultType::Data)
                .unwrap()
                .is_empty()
        );
        assert!(
            select(body, VaultDynamicSecretResultType::Auth)
                .unwrap()
                .is_empty()
        );
    }
}
