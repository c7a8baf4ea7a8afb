//! The writing half of the Key Vault fake: Set Secret, Import Key, Import Certificate,
//! Delete (soft) and Recover Deleted Secret, with the name, tag and body checks Key Vault makes.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::{Kind, Vault, bundle, kv_error, not_found, now, valid_name};

/// A `400 BadParameter` answer.
fn bad(message: &str) -> Response {
    kv_error(StatusCode::BAD_REQUEST, "BadParameter", message, None)
}

fn string_tags(body: &Value) -> Result<BTreeMap<String, String>, &'static str> {
    let tags: BTreeMap<String, String> = match body.get("tags") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
            .collect::<Option<_>>()
            .ok_or("Tag values must be strings.")?,
        Some(_) => return Err("tags must be an object."),
    };
    if tags.len() > 15 {
        return Err("The number of tags exceeds 15.");
    }
    Ok(tags)
}

fn write_guard(vault: &Vault, kind: Kind, name: &str) -> Option<Response> {
    if !valid_name(name) {
        let message = format!("The request URI contains an invalid name: {name}");
        return Some(bad(&message));
    }
    vault.deleted.contains_key(&(kind, name.to_owned())).then(|| {
        let message = format!(
            "{} {name} is currently in a deleted but recoverable state, and its name cannot be reused; in this state, the {} can only be recovered or purged.",
            kind.noun(),
            kind.noun().to_lowercase()
        );
        kv_error(StatusCode::CONFLICT, "Conflict", &message, Some("ObjectIsDeletedButRecoverable"))
    })
}

pub(super) fn set_secret(vault: &mut Vault, origin: &str, name: &str, body: Value) -> Response {
    if let Some(refused) = write_guard(vault, Kind::Secret, name) {
        return refused;
    }
    let Some(value) = body.get("value").and_then(Value::as_str) else {
        return bad("Property value is required.");
    };
    let tags = match string_tags(&body) {
        Ok(tags) => tags,
        Err(message) => return bad(message),
    };
    let attributes = body.get("attributes").cloned().unwrap_or_default();
    let enabled = attributes
        .get("enabled")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let expires = attributes.get("exp").and_then(Value::as_i64);
    let content_type = body
        .get("contentType")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let version = vault.add(
        origin,
        Kind::Secret,
        name,
        json!(value),
        content_type,
        tags,
        enabled,
        expires,
    );
    (StatusCode::OK, axum::Json(bundle(Kind::Secret, &version))).into_response()
}

/// Private JWK members, stripped on import as Key Vault never returns them.
const PRIVATE_MEMBERS: [&str; 7] = ["d", "p", "q", "dp", "dq", "qi", "k"];

pub(super) fn import_key(vault: &mut Vault, origin: &str, name: &str, body: Value) -> Response {
    if let Some(refused) = write_guard(vault, Kind::Key, name) {
        return refused;
    }
    let Some(Value::Object(key)) = body.get("key") else {
        return bad("Property key is required.");
    };
    let kty = key.get("kty").and_then(Value::as_str).unwrap_or_default();
    let complete = match kty {
        "RSA" | "RSA-HSM" => ["n", "e", "d"].iter().all(|m| key.contains_key(*m)),
        "EC" | "EC-HSM" => ["crv", "x", "y", "d"].iter().all(|m| key.contains_key(*m)),
        _ => false,
    };
    if !complete {
        return bad("The key is not a valid private JSON Web Key.");
    }
    let tags = match string_tags(&body) {
        Ok(tags) => tags,
        Err(message) => return bad(message),
    };
    let public: Map<String, Value> = key
        .iter()
        .filter(|(member, _)| !PRIVATE_MEMBERS.contains(&member.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let version = vault.add(
        origin,
        Kind::Key,
        name,
        Value::Object(public),
        None,
        tags,
        true,
        None,
    );
    (StatusCode::OK, axum::Json(bundle(Kind::Key, &version))).into_response()
}

/// Import Certificate: a PEM bundle (policy content type `application/x-pem-file`) or a base64
/// PKCS#12 archive (`application/x-pkcs12`, the default; `pwd` its password, empty when absent)
/// must hold the certificate and its private key; the certificate (the archive's first) is
/// what the vault keeps as `cer`.
pub(super) fn import_certificate(
    vault: &mut Vault,
    origin: &str,
    name: &str,
    body: Value,
) -> Response {
    if let Some(refused) = write_guard(vault, Kind::Certificate, name) {
        return refused;
    }
    let content_type = body
        .pointer("/policy/secret_props/contentType")
        .and_then(Value::as_str)
        .unwrap_or("application/x-pkcs12");
    let Some(value) = body.get("value").and_then(Value::as_str) else {
        return bad("Property value is required.");
    };
    let certificate = match content_type {
        "application/x-pem-file" => pem_certificate(value),
        "application/x-pkcs12" => {
            let password = body.get("pwd").and_then(Value::as_str).unwrap_or_default();
            pkcs12_certificate(value, password)
        }
        _ => Err("The specified certificate content type is not supported."),
    };
    let certificate = match certificate {
        Ok(certificate) => certificate,
        Err(message) => return bad(message),
    };
    let tags = match string_tags(&body) {
        Ok(tags) => tags,
        Err(message) => return bad(message),
    };
    let version = vault.add(
        origin,
        Kind::Certificate,
        name,
        json!(certificate),
        None,
        tags,
        true,
        None,
    );
    (
        StatusCode::OK,
        axum::Json(bundle(Kind::Certificate, &version)),
    )
        .into_response()
}

/// The base64 certificate of a PEM bundle that also holds a private key.
fn pem_certificate(value: &str) -> Result<String, &'static str> {
    let block = |label: &str| -> Option<String> {
        let begin = format!("-----BEGIN {label}-----");
        let start = value.find(&begin)? + begin.len();
        let end = value[start..].find("-----END")? + start;
        Some(
            value[start..end]
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect(),
        )
    };
    let has_key = ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"]
        .iter()
        .any(|label| block(label).is_some());
    block("CERTIFICATE").filter(|_| has_key).ok_or(
        "The specified PEM X.509 certificate content is in an unexpected format. Please check if certificate is in valid PEM format.",
    )
}

/// The base64 first certificate of a base64 PKCS#12 archive holding exactly one private key.
fn pkcs12_certificate(value: &str, password: &str) -> Result<String, &'static str> {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    const UNREADABLE: &str = "The specified PKCS#12 X.509 certificate content can not be read. Please check if certificate is in valid PKCS#12 format.";
    let archive = STANDARD.decode(value).map_err(|_| UNREADABLE)?;
    let archive =
        p12_keystore::Pkcs12Archive::from_pkcs12(&archive, password).map_err(|_| UNREADABLE)?;
    if archive.keys.len() != 1 {
        return Err(
            "Private key is not specified in the specified X.509 PKCS#12 certificate content.",
        );
    }
    let first = archive.certs.first().ok_or(UNREADABLE)?;
    Ok(STANDARD.encode(first.cert.as_der()))
}

pub(super) fn delete(vault: &mut Vault, kind: Kind, name: &str) -> Response {
    let Some(versions) = vault.objects.remove(&(kind, name.to_owned())) else {
        return not_found(kind, name);
    };
    let mut out = versions.last().map(|v| bundle(kind, v)).unwrap_or_default();
    out["recoveryId"] = json!(format!("deleted{}/{name}", kind.collection()));
    out["deletedDate"] = json!(now());
    vault.deleted.insert((kind, name.to_owned()), versions);
    (StatusCode::OK, axum::Json(out)).into_response()
}

pub(super) fn recover(vault: &mut Vault, name: &str) -> Response {
    let Some(versions) = vault.deleted.remove(&(Kind::Secret, name.to_owned())) else {
        let message = format!("Deleted Secret not found: {name}");
        return kv_error(StatusCode::NOT_FOUND, "SecretNotFound", &message, None);
    };
    let out = versions
        .last()
        .map(|v| bundle(Kind::Secret, v))
        .unwrap_or_default();
    vault
        .objects
        .insert((Kind::Secret, name.to_owned()), versions);
    (StatusCode::OK, axum::Json(out)).into_response()
}
