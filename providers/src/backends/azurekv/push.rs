//! Writes as upstream: PushSecret sets a secret (or imports a key or certificate) tagged
//! `managed-by: external-secrets`, refusing objects without that tag, skipping unchanged values,
//! with the expiry, content type and tags of a `PushSecretMetadata`; a soft-deleted secret of
//! the same name is recovered first. DeleteSecret soft-deletes managed objects only;
//! SecretExists is a read.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::http::{Reply, Vault};
use super::object::{self, Kind};
use super::read::bundle;
use super::{MANAGED_BY, MANAGER};
use crate::error::{ProviderError, Result};
use crate::request::{PushRemoteRef, PushRequest};

/// Key Vault's code for a name held by a soft-deleted secret.
const SOFT_DELETED: &str = "ObjectIsDeletedButRecoverable";
/// Recovery polling, upstream's interval and timeout.
const RECOVERY_POLL: Duration = Duration::from_secs(2);
const RECOVERY_TIMEOUT: Duration = Duration::from_secs(120);

/// Upstream's `PushSecretMetadataSpec`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetadataSpec {
    #[serde(default)]
    expiration_date: String,
    #[serde(default)]
    content_type: String,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

/// The spec of a `kubernetes.external-secrets.io/v1alpha1` `PushSecretMetadata`.
fn metadata(value: Option<&serde_json::Value>) -> Result<MetadataSpec> {
    let Some(value) = value.filter(|value| !value.is_null()) else {
        return Ok(MetadataSpec::default());
    };
    let fail = |detail: &str| {
        ProviderError::invalid_request(format!("failed to parse push secret metadata: {detail}"))
    };
    if value["apiVersion"] != "kubernetes.external-secrets.io/v1alpha1"
        || value["kind"] != "PushSecretMetadata"
    {
        return Err(fail(
            "expected apiVersion kubernetes.external-secrets.io/v1alpha1 and kind PushSecretMetadata",
        ));
    }
    let spec = value
        .get("spec")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    if spec.is_null() {
        return Ok(MetadataSpec::default());
    }
    let spec: MetadataSpec =
        serde_json::from_value(spec).map_err(|error| fail(&error.to_string()))?;
    if spec.tags.contains_key(MANAGED_BY) {
        return Err(ProviderError::invalid_request(format!(
            "error parsing tags in metadata: Cannot specify a '{MANAGED_BY}' tag"
        )));
    }
    Ok(spec)
}

fn expiry(spec: &MetadataSpec) -> Result<Option<i64>> {
    if spec.expiration_date.is_empty() {
        return Ok(None);
    }
    chrono::DateTime::parse_from_rfc3339(&spec.expiration_date)
        .map(|time| Some(time.timestamp()))
        .map_err(|error| {
            ProviderError::invalid_request(format!(
                "error parsing expiration date in metadata: {error}. Expected format: \
                 YYYY-MM-DDTHH:MM:SSZ (RFC3339). Example: 2024-12-31T20:00:00Z"
            ))
        })
}

/// The ownership check before a write: `Ok(false)` when nothing exists.
async fn existing_managed(
    vault: &Vault,
    kind: Kind,
    name: &str,
) -> Result<Option<super::object::Bundle>> {
    let found = bundle(vault, kind, name, None)
        .await
        .map_err(|error| error.context(format!("cannot get {} {name}", kind.noun())))?;
    match found {
        Some(found) if !found.is_managed() => Err(ProviderError::permission_denied(format!(
            "cannot get {} {name}: not managed by external-secrets",
            kind.noun()
        ))),
        other => Ok(other),
    }
}

/// PushSecret.
pub(super) async fn push_secret(vault: &Vault, request: &PushRequest) -> Result<()> {
    let spec = metadata(request.metadata.as_ref())?;
    let value = request.value()?;
    let (kind, name) = object::parse(&request.remote_ref.remote_key, true)?;
    let mut tags = spec.tags.clone();
    tags.insert(MANAGED_BY.to_owned(), MANAGER.to_owned());
    match kind {
        Kind::Secret => {
            let text = String::from_utf8(value.into_bytes()).map_err(|_| {
                ProviderError::invalid_request("a Key Vault secret value must be text")
            })?;
            set_secret(vault, name, &text, &spec, tags).await
        }
        Kind::Key => import_key(vault, name, value.expose(), tags).await,
        Kind::Certificate => import_certificate(vault, name, value.expose(), tags).await,
    }
}

async fn set_secret(
    vault: &Vault,
    name: &str,
    value: &str,
    spec: &MetadataSpec,
    tags: BTreeMap<String, String>,
) -> Result<()> {
    let expires = expiry(spec)?;
    let content_type = Some(spec.content_type.clone()).filter(|kind| !kind.is_empty());
    let current = existing_managed(vault, Kind::Secret, name).await?;
    if let Some(current) = &current {
        let unchanged = current.value.as_deref() == Some(value)
            && current.attributes.exp == expires
            && content_type
                .as_ref()
                .is_none_or(|kind| current.content_type.as_ref() == Some(kind));
        if unchanged {
            return Ok(());
        }
    }
    let content_type = content_type.or_else(|| current.and_then(|current| current.content_type));
    let mut attributes = json!({"enabled": true});
    if let Some(expires) = expires {
        attributes["exp"] = json!(expires);
    }
    let mut body = json!({"value": value, "tags": tags, "attributes": attributes});
    if let Some(content_type) = content_type {
        body["contentType"] = json!(content_type);
    }
    let action = format!("could not set secret {name}");
    let url = vault.url(&["secrets", name]);
    match vault
        .call(&action, Method::PUT, url.clone(), Some(&body))
        .await
    {
        Ok(_) => Ok(()),
        Err(refused) if refused.code == SOFT_DELETED => {
            recover(vault, name).await?;
            vault
                .send(&action, Method::PUT, url, Some(&body))
                .await
                .map(drop)
        }
        Err(refused) => Err(refused.error),
    }
}

/// Imports a key (upstream's `setKeyVaultKey`): skipped when the vault holds the same public
/// key.
async fn import_key(
    vault: &Vault,
    name: &str,
    value: &[u8],
    tags: BTreeMap<String, String>,
) -> Result<()> {
    let jwk = super::keys::private_jwk(name, value)?;
    let current = existing_managed(vault, Kind::Key, name).await?;
    if let Some(old) = current.and_then(|current| current.key)
        && super::keys::same_public_key(&jwk, &old)
    {
        return Ok(());
    }
    let body = json!({"key": jwk, "attributes": {}, "tags": tags});
    let action = format!("could not import key {name}");
    vault
        .send(
            &action,
            Method::PUT,
            vault.url(&["keys", name]),
            Some(&body),
        )
        .await
        .map(drop)
}

/// Imports a certificate (upstream's `setKeyVaultCertificate`): a PKCS#12 archive without
/// password holding one key, as base64 `application/x-pkcs12`, or a PEM bundle (certificate
/// and key) as `application/x-pem-file`; anything else is refused as upstream refuses it.
/// Skipped when the vault holds the same certificate.
async fn import_certificate(
    vault: &Vault,
    name: &str,
    value: &[u8],
    tags: BTreeMap<String, String>,
) -> Result<()> {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    let (certificate, body) = match pushed_certificate(value) {
        Some(Pushed::Pkcs12(certificate)) => (
            certificate,
            json!({"value": STANDARD.encode(value), "tags": tags,
                "policy": {"secret_props": {"contentType": "application/x-pkcs12"}}}),
        ),
        Some(Pushed::Pem(certificate, text)) => (
            certificate,
            json!({"value": text, "tags": tags,
                "policy": {"secret_props": {"contentType": "application/x-pem-file"}}}),
        ),
        None => {
            return Err(ProviderError::invalid_data(
                "value from secret is not a valid certificate: could not parse certificate \
                 value as PKCS#12, DER or PEM",
            ));
        }
    };
    let current = existing_managed(vault, Kind::Certificate, name).await?;
    let stored = current
        .and_then(|current| current.cer)
        .and_then(|cer| STANDARD.decode(cer).ok());
    if stored.as_deref() == Some(certificate.as_slice()) {
        return Ok(());
    }
    let action = format!("could not import certificate {name}");
    let url = vault.url(&["certificates", name, "import"]);
    vault
        .send(&action, Method::POST, url, Some(&body))
        .await
        .map(drop)
}

/// A pushed certificate value with its leaf certificate (DER).
enum Pushed<'a> {
    Pkcs12(Vec<u8>),
    Pem(Vec<u8>, &'a str),
}

/// Reads `value` as upstream's `getCertificateFromValue` does, first as PKCS#12 without
/// password (exactly one key; the first certificate bag is the leaf), then as PEM (the first
/// `CERTIFICATE` block).
fn pushed_certificate(value: &[u8]) -> Option<Pushed<'_>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    if let Ok(archive) = p12_keystore::Pkcs12Archive::from_pkcs12(value, "")
        && archive.keys.len() == 1
        && let Some(first) = archive.certs.first()
    {
        return Some(Pushed::Pkcs12(first.cert.as_der().to_vec()));
    }
    let text = std::str::from_utf8(value).ok()?;
    let certificate = CertificateDer::pem_slice_iter(value).next()?.ok()?;
    Some(Pushed::Pem(certificate.as_ref().to_vec(), text))
}

/// Recovers a soft-deleted secret and waits until it reads again (recovery is asynchronous).
async fn recover(vault: &Vault, name: &str) -> Result<()> {
    let action = format!("could not recover soft-deleted secret {name}");
    let url = vault.url(&["deletedsecrets", name, "recover"]);
    vault.send(&action, Method::POST, url, None).await?;
    let deadline = tokio::time::Instant::now() + RECOVERY_TIMEOUT;
    loop {
        if let Some(found) = bundle(vault, Kind::Secret, name, None).await? {
            if !found.is_managed() {
                return Err(ProviderError::permission_denied(format!(
                    "cannot update recovered secret {name}: not managed by external-secrets"
                )));
            }
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ProviderError::unavailable(format!(
                "waiting for recovered secret {name} to become available: timed out"
            )));
        }
        tokio::time::sleep(RECOVERY_POLL).await;
    }
}

/// DeleteSecret: soft-deletes a managed object; a missing one is already gone.
pub(super) async fn delete_secret(vault: &Vault, remote_ref: &PushRemoteRef) -> Result<()> {
    let (kind, name) = object::parse(&remote_ref.remote_key, true)?;
    let found = bundle(vault, kind, name, None)
        .await
        .map_err(|error| error.context(format!("error getting {} {name}", kind.noun())))?;
    let Some(found) = found else {
        return Ok(());
    };
    if !found.is_managed() {
        return Err(ProviderError::permission_denied(format!(
            "error getting {} {name}: not managed by external-secrets",
            kind.noun()
        )));
    }
    let action = format!("error deleting {} {name}", kind.noun());
    match vault
        .send(
            &action,
            Method::DELETE,
            vault.url(&[kind.collection(), name]),
            None,
        )
        .await?
    {
        Reply::Found(_) | Reply::Missing => Ok(()),
    }
}

/// SecretExists.
pub(super) async fn secret_exists(vault: &Vault, remote_ref: &PushRemoteRef) -> Result<bool> {
    let (kind, name) = object::parse(&remote_ref.remote_key, true)?;
    Ok(bundle(vault, kind, name, None).await?.is_some())
}
