//! The IBM Secrets Manager client: upstream's key formats, the value of each secret type, and
//! the maps `dataFrom.extract` gives (with the secret's fields under `metadataPolicy: Fetch`).

use async_trait::async_trait;
use serde_json::Value;

use super::Ibm;
use super::api::{Api, Lookup, Secret};
use super::error::missing_key;
use crate::client::{Capabilities, SecretsClient, ValidationResult, not_implemented};
use crate::error::{ProviderError, Result};
use crate::property::json_property;
use crate::provider::Provider as _;
use crate::request::{Find, MetadataPolicy, PushRemoteRef, PushRequest, RemoteRef};
use crate::value::{SecretMap, SecretValue};

const ARBITRARY: &str = "arbitrary";
const USERNAME_PASSWORD: &str = "username_password";
const IAM_CREDENTIALS: &str = "iam_credentials";
const SERVICE_CREDENTIALS: &str = "service_credentials";
const IMPORTED_CERT: &str = "imported_cert";
const PUBLIC_CERT: &str = "public_cert";
const PRIVATE_CERT: &str = "private_cert";
const KV: &str = "kv";
const CUSTOM_CREDENTIALS: &str = "custom_credentials";

const CERTIFICATE: &str = "certificate";
const INTERMEDIATE: &str = "intermediate";
const PRIVATE_KEY: &str = "private_key";

/// A client of one Secrets Manager instance.
pub struct IbmClient {
    api: Api,
}

/// A key split as upstream splits it: `[group/]type/name`, or a bare name of an arbitrary
/// secret.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Reference<'a> {
    pub group: &'a str,
    pub secret_type: &'a str,
    pub name: &'a str,
}

impl<'a> Reference<'a> {
    pub(super) fn parse(key: &'a str) -> Self {
        let parts: Vec<&str> = key.split('/').collect();
        match parts.as_slice() {
            [secret_type, name] => Self {
                group: "",
                secret_type,
                name,
            },
            [group, secret_type, name] => Self {
                group,
                secret_type,
                name,
            },
            _ => Self {
                group: "",
                secret_type: ARBITRARY,
                name: key,
            },
        }
    }
}

impl IbmClient {
    /// A client calling `api`.
    pub fn new(api: Api) -> Self {
        Self { api }
    }

    /// The secret `reference` names: by id when the name is a UUID, else by name in its group.
    async fn fetch(&self, reference: &Reference<'_>) -> Result<Secret> {
        if !KNOWN_TYPES.contains(&reference.secret_type) {
            return Err(ProviderError::invalid_request(format!(
                "unknown secret type {}",
                reference.secret_type
            )));
        }
        if uuid::Uuid::try_parse(reference.name).is_ok() {
            return self.api.secret(Lookup::Id(reference.name)).await;
        }
        if reference.group.is_empty() {
            return Err(ProviderError::invalid_request(
                "failed to fetch the secret, secret group name is missing",
            ));
        }
        self.api
            .secret(Lookup::Name {
                group: reference.group,
                secret_type: reference.secret_type,
                name: reference.name,
            })
            .await
    }
}

const KNOWN_TYPES: [&str; 9] = [
    ARBITRARY,
    USERNAME_PASSWORD,
    IAM_CREDENTIALS,
    SERVICE_CREDENTIALS,
    IMPORTED_CERT,
    PUBLIC_CERT,
    PRIVATE_CERT,
    KV,
    CUSTOM_CREDENTIALS,
];

/// A field's value as bytes: a string as its text, anything else as JSON.
fn bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(text) => text.clone().into_bytes(),
        other => other.to_string().into_bytes(),
    }
}

/// The field `field` of `secret`, or upstream's "does not exist" naming `what`.
fn field(secret: &Secret, field: &str, what: &str) -> Result<Vec<u8>> {
    secret
        .get(field)
        .map(bytes)
        .ok_or_else(|| missing_key(field, what))
}

/// The object a `kv` (`data`) or `custom_credentials` (`credentials_content`) secret holds.
fn structured<'a>(
    secret: &'a Secret,
    secret_type: &str,
    name: &str,
    during: &str,
) -> Result<&'a Value> {
    let member = if secret_type == KV {
        "data"
    } else {
        "credentials_content"
    };
    secret
        .get(member)
        .filter(|value| value.is_object())
        .ok_or_else(|| {
            ProviderError::invalid_data(format!(
                "unable to extract the fetched secret {name} of type {secret_type} while performing {during}"
            ))
        })
}

/// The JSON of a structured secret, or one member of it (`a.b` is tried as the key `a.b`
/// before the path `a` → `b`).
fn structured_value(data: &Value, remote_ref: &RemoteRef) -> Result<Vec<u8>> {
    let json = data.to_string();
    let Some(property) = remote_ref.property.as_deref().filter(|p| !p.is_empty()) else {
        return Ok(json.into_bytes());
    };
    if property.find('.').is_some_and(|index| index > 0)
        && let Some(value) = json_property(json.as_bytes(), &property.replace('.', "\\."))
    {
        return Ok(value);
    }
    json_property(json.as_bytes(), property).ok_or_else(|| missing_key(property, &remote_ref.key))
}

/// `property`, required by the certificate and username/password types.
fn required_property<'a>(remote_ref: &'a RemoteRef, secret_type: &str) -> Result<&'a str> {
    remote_ref
        .property
        .as_deref()
        .filter(|property| !property.is_empty())
        .ok_or_else(|| {
            ProviderError::invalid_request(format!(
                "remoteRef.property required for secret type {secret_type}"
            ))
        })
}

#[async_trait]
impl SecretsClient for IbmClient {
    async fn get_secret(&self, remote_ref: &RemoteRef) -> Result<SecretValue> {
        let reference = Reference::parse(&remote_ref.key);
        let name = reference.name;
        let secret_type = reference.secret_type;
        let property = match secret_type {
            USERNAME_PASSWORD | IMPORTED_CERT | PUBLIC_CERT | PRIVATE_CERT => {
                Some(required_property(remote_ref, secret_type)?)
            }
            _ => None,
        };
        let secret = self.fetch(&reference).await?;
        let value = match (secret_type, property) {
            (ARBITRARY, _) => field(&secret, "payload", name)?,
            (IAM_CREDENTIALS, _) => field(&secret, "api_key", name)?,
            (SERVICE_CREDENTIALS, _) => field(&secret, "credentials", name)?,
            (KV | CUSTOM_CREDENTIALS, _) => {
                let data = structured(&secret, secret_type, name, "GetSecret")?;
                structured_value(data, remote_ref)?
            }
            (IMPORTED_CERT, Some(property @ (INTERMEDIATE | PRIVATE_KEY)))
                if !secret.contains_key(property) =>
            {
                // An imported certificate may lack both; a `kubernetes.io/tls` target still
                // gets its keys, as upstream.
                Vec::new()
            }
            (_, Some(property)) => field(&secret, property, &remote_ref.key)?,
            (_, None) => {
                return Err(ProviderError::invalid_request(format!(
                    "unknown secret type {secret_type}"
                )));
            }
        };
        Ok(SecretValue::new(value))
    }

    async fn get_secret_map(&self, remote_ref: &RemoteRef) -> Result<SecretMap> {
        let reference = Reference::parse(&remote_ref.key);
        let name = reference.name;
        let secret_type = reference.secret_type;
        let secret = self.fetch(&reference).await?;
        let mut map = SecretMap::new();
        if remote_ref.metadata_policy == MetadataPolicy::Fetch {
            for (key, value) in &secret {
                map.insert(key.clone(), SecretValue::new(bytes(value)));
            }
        }
        let mut copy = |from: &str, to: &str| -> Result<()> {
            map.insert(to.to_owned(), SecretValue::new(field(&secret, from, name)?));
            Ok(())
        };
        match secret_type {
            ARBITRARY => copy("payload", ARBITRARY)?,
            USERNAME_PASSWORD => {
                copy("username", "username")?;
                copy("password", "password")?;
            }
            IAM_CREDENTIALS => copy("api_key", "apikey")?,
            SERVICE_CREDENTIALS => copy("credentials", "credentials")?,
            IMPORTED_CERT => {
                copy(CERTIFICATE, CERTIFICATE)?;
                for optional in [INTERMEDIATE, PRIVATE_KEY] {
                    let value = secret.get(optional).map(bytes).unwrap_or_default();
                    map.insert(optional.to_owned(), SecretValue::new(value));
                }
            }
            PUBLIC_CERT => {
                for required in [CERTIFICATE, INTERMEDIATE, PRIVATE_KEY] {
                    copy(required, required)?;
                }
            }
            PRIVATE_CERT => {
                copy(CERTIFICATE, CERTIFICATE)?;
                copy(PRIVATE_KEY, PRIVATE_KEY)?;
            }
            _ => {
                let data = structured(&secret, secret_type, name, "GetSecretMap")?;
                let json = structured_value(data, remote_ref)?;
                let members: serde_json::Map<String, Value> = serde_json::from_slice(&json)
                    .map_err(|failure| {
                        ProviderError::invalid_data(format!(
                            "unable to unmarshal secret from JSON: {}",
                            crate::redact::json_error(&failure)
                        ))
                    })?;
                for (key, value) in &members {
                    map.insert(key.clone(), SecretValue::new(bytes(value)));
                }
            }
        }
        Ok(map)
    }

    async fn get_all_secrets(&self, _find: &Find) -> Result<SecretMap> {
        Err(not_implemented(Ibm::NAME, "GetAllSecrets"))
    }

    async fn push_secret(&self, _request: &PushRequest) -> Result<()> {
        Err(not_implemented(Ibm::NAME, "PushSecret"))
    }

    async fn delete_secret(&self, _remote_ref: &PushRemoteRef) -> Result<()> {
        Err(not_implemented(Ibm::NAME, "DeleteSecret"))
    }

    async fn secret_exists(&self, remote_ref: &PushRemoteRef) -> Result<bool> {
        match self.fetch(&Reference::parse(&remote_ref.remote_key)).await {
            Ok(_) => Ok(true),
            Err(error) if error.is_not_found() => Ok(false),
            Err(error) => Err(error),
        }
    }

    async fn validate(&self) -> Result<ValidationResult> {
        Ok(ValidationResult::Ready)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::ReadOnly
    }

    async fn close(&self) -> Result<()> {
        Ok(())
    }
}
