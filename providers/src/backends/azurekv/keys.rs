//! PushSecret of keys: the pushed PEM private key (PKCS#8, PKCS#1 RSA or SEC1 EC) as the JSON
//! Web Key that Key Vault's "Import Key" takes, as upstream builds it with `jwk.FromRaw`; a
//! value that is not PEM is a symmetric (`oct`) key, which only Managed HSM accepts.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

use crate::error::{ProviderError, Result};

const RSA_OID: &str = "1.2.840.113549.1.1.1";
const EC_OID: &str = "1.2.840.10045.2.1";

fn b64(bytes: &[u8]) -> Value {
    Value::String(URL_SAFE_NO_PAD.encode(bytes))
}

fn invalid(name: &str, detail: &str) -> ProviderError {
    ProviderError::invalid_request(format!("could not load private key {name}: {detail}"))
}

/// The private JWK of `value` (PEM, or raw bytes as a symmetric key).
pub(super) fn private_jwk(name: &str, value: &[u8]) -> Result<Map<String, Value>> {
    let Some((label, der)) = pem_block(value) else {
        return Ok(object(json!({"kty": "oct", "k": b64(value)})));
    };
    match label.as_str() {
        "PRIVATE KEY" => {
            let info = pkcs8::PrivateKeyInfo::try_from(der.as_slice())
                .map_err(|_| invalid(name, "not a PKCS#8 private key"))?;
            match info.algorithm.oid.to_string().as_str() {
                RSA_OID => rsa(name, info.private_key),
                EC_OID => {
                    let curve = info
                        .algorithm
                        .parameters_oid()
                        .map_err(|_| invalid(name, "EC key without a named curve"))?;
                    ec(name, info.private_key, Some(curve.to_string()))
                }
                other => Err(invalid(
                    name,
                    &format!("key algorithm {other} is not supported"),
                )),
            }
        }
        "RSA PRIVATE KEY" => rsa(name, &der),
        "EC PRIVATE KEY" => ec(name, &der, None),
        other => Err(invalid(name, &format!("key type {other} is not supported"))),
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn pem_block(value: &[u8]) -> Option<(String, Vec<u8>)> {
    let text = std::str::from_utf8(value).ok()?;
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_owned();
    let body_start = label_end + 5;
    let end = rest.find(&format!("-----END {label}-----"))?;
    let body: String = rest
        .get(body_start..end)?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .ok()?;
    Some((label, der))
}

fn rsa(name: &str, der: &[u8]) -> Result<Map<String, Value>> {
    let key = pkcs1::RsaPrivateKey::try_from(der)
        .map_err(|_| invalid(name, "not a PKCS#1 RSA private key"))?;
    Ok(object(json!({
        "kty": "RSA",
        "n": b64(key.modulus.as_bytes()),
        "e": b64(key.public_exponent.as_bytes()),
        "d": b64(key.private_exponent.as_bytes()),
        "p": b64(key.prime1.as_bytes()),
        "q": b64(key.prime2.as_bytes()),
        "dp": b64(key.exponent1.as_bytes()),
        "dq": b64(key.exponent2.as_bytes()),
        "qi": b64(key.coefficient.as_bytes()),
    })))
}

fn ec(name: &str, der: &[u8], curve: Option<String>) -> Result<Map<String, Value>> {
    let key = sec1::EcPrivateKey::try_from(der)
        .map_err(|_| invalid(name, "not a SEC1 EC private key"))?;
    let curve = curve
        .or_else(|| {
            key.parameters
                .and_then(|p| p.named_curve())
                .map(|oid| oid.to_string())
        })
        .ok_or_else(|| invalid(name, "EC key without a named curve"))?;
    let (crv, size) = match curve.as_str() {
        "1.2.840.10045.3.1.7" => ("P-256", 32),
        "1.3.132.0.34" => ("P-384", 48),
        "1.3.132.0.35" => ("P-521", 66),
        other => return Err(invalid(name, &format!("curve {other} is not supported"))),
    };
    let point = key
        .public_key
        .filter(|point| point.len() == 1 + 2 * size && point.first() == Some(&4))
        .ok_or_else(|| invalid(name, "EC key without its uncompressed public key"))?;
    let mut d = vec![0; size.saturating_sub(key.private_key.len())];
    d.extend_from_slice(key.private_key);
    Ok(object(json!({
        "kty": "EC",
        "crv": crv,
        "x": b64(point.get(1..=size).unwrap_or_default()),
        "y": b64(point.get(1 + size..).unwrap_or_default()),
        "d": b64(&d),
    })))
}

/// Upstream's `equalKeys`: same type and public part.
pub(super) fn same_public_key(new: &Map<String, Value>, old: &Map<String, Value>) -> bool {
    let same = |member: &str| new.get(member).is_some() && new.get(member) == old.get(member);
    new.get("kty") == old.get("kty")
        && ((same("n") && same("e")) || (same("crv") && same("x") && same("y")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ec_pkcs8_keys_become_jwks() {
        let key = rcgen::KeyPair::generate().unwrap();
        let jwk = private_jwk("k", key.serialize_pem().as_bytes()).unwrap();
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        let x = URL_SAFE_NO_PAD.decode(jwk["x"].as_str().unwrap()).unwrap();
        assert_eq!(x, key.public_key_raw()[1..33]);
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode(jwk["d"].as_str().unwrap())
                .unwrap()
                .len(),
            32
        );
    }

    #[test]
    fn raw_values_are_symmetric_and_unknown_pem_is_refused() {
        assert_eq!(private_jwk("k", b"abc").unwrap()["kty"], "oct");
        let error =
            private_jwk("k", b"-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n").unwrap_err();
        assert_eq!(
            error.message(),
            "could not load private key k: key type FOO is not supported"
        );
    }
}
