//! Remote keys as upstream reads them: `secret/NAME`, `key/NAME`, `cert/NAME`, or a plain
//! `NAME` meaning a secret; the REST bundles the three kinds answer with.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{ProviderError, Result};

/// The kind of Key Vault object a remote key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `secret/` or no prefix.
    Secret,
    /// `key/`.
    Key,
    /// `cert/`.
    Certificate,
}

impl Kind {
    /// The REST collection.
    pub fn collection(self) -> &'static str {
        match self {
            Kind::Secret => "secrets",
            Kind::Key => "keys",
            Kind::Certificate => "certificates",
        }
    }

    /// The noun upstream's messages use.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Secret => "secret",
            Kind::Key => "key",
            Kind::Certificate => "certificate",
        }
    }
}

/// Splits a remote key as upstream's `getObjType`: a first `/`-separated part is the type, the
/// second the name; anything else is a secret's name. An unknown type is refused with
/// upstream's message for reads (`for_write: false`) or writes.
pub fn parse(key: &str, for_write: bool) -> Result<(Kind, &str)> {
    let mut parts = key.split('/');
    let (Some(first), Some(second)) = (parts.next(), parts.next()) else {
        return Ok((Kind::Secret, key));
    };
    match first {
        "secret" => Ok((Kind::Secret, second)),
        "key" => Ok((Kind::Key, second)),
        "cert" => Ok((Kind::Certificate, second)),
        other if for_write => Err(ProviderError::invalid_request(format!(
            "secret type '{other}' is not supported"
        ))),
        _ => Err(ProviderError::invalid_request(format!(
            "unknown Azure Keyvault object Type for {second}"
        ))),
    }
}

/// `attributes` of every bundle (Unix seconds).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Attributes {
    /// Whether the object may be read.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Expiry.
    #[serde(default)]
    pub exp: Option<i64>,
    /// Not valid before.
    #[serde(default)]
    pub nbf: Option<i64>,
    /// Creation time.
    #[serde(default)]
    pub created: Option<i64>,
    /// Last update.
    #[serde(default)]
    pub updated: Option<i64>,
}

/// A secret, key or certificate bundle, or a list item; only the fields used are read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// Object id (`<vault>/<collection>/<name>[/<version>]`); keys carry it as `kid` in lists.
    #[serde(default)]
    pub id: Option<String>,
    /// Secret value.
    #[serde(default)]
    pub value: Option<String>,
    /// Secret content type.
    #[serde(default)]
    pub content_type: Option<String>,
    /// Public JSON Web Key of a key.
    #[serde(default)]
    pub key: Option<serde_json::Map<String, serde_json::Value>>,
    /// Certificate DER, base64.
    #[serde(default)]
    pub cer: Option<String>,
    /// Attributes.
    #[serde(default)]
    pub attributes: Attributes,
    /// Tags.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
}

impl Bundle {
    /// The tags, empty when there are none.
    pub fn tags(&self) -> BTreeMap<String, String> {
        self.tags.clone().unwrap_or_default()
    }

    /// Whether ESO manages the object (`managed-by: external-secrets`).
    pub fn is_managed(&self) -> bool {
        self.tags
            .as_ref()
            .and_then(|tags| tags.get(super::MANAGED_BY))
            .is_some_and(|manager| manager == super::MANAGER)
    }
}

/// The members of a JSON Web Key in the order upstream's Go type marshals them.
const JWK_ORDER: [&str; 16] = [
    "kid", "kty", "key_ops", "n", "e", "d", "dp", "dq", "qi", "p", "q", "k", "key_hsm", "crv", "x",
    "y",
];

/// A key's JWK as upstream returns it (its Go type's member order, absent members left out).
pub fn jwk_json(key: &serde_json::Map<String, serde_json::Value>) -> Vec<u8> {
    let mut out = String::from("{");
    for member in JWK_ORDER {
        let Some(value) = key.get(member).filter(|value| !value.is_null()) else {
            continue;
        };
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&serde_json::Value::from(member).to_string());
        out.push(':');
        out.push_str(&value.to_string());
    }
    out.push('}');
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_keys_parse_as_upstream() {
        assert_eq!(parse("name", false).unwrap(), (Kind::Secret, "name"));
        assert_eq!(parse("secret/name", false).unwrap(), (Kind::Secret, "name"));
        assert_eq!(parse("key/name", false).unwrap(), (Kind::Key, "name"));
        assert_eq!(
            parse("cert/name", true).unwrap(),
            (Kind::Certificate, "name")
        );
        let read = parse("blob/name", false).unwrap_err();
        assert_eq!(
            read.message(),
            "unknown Azure Keyvault object Type for name"
        );
        let write = parse("blob/name", true).unwrap_err();
        assert_eq!(write.message(), "secret type 'blob' is not supported");
    }

    #[test]
    fn jwks_keep_go_member_order() {
        let key = serde_json::json!({"e": "AQAB", "n": "xyz", "kty": "RSA", "kid": "id"});
        let json = jwk_json(key.as_object().unwrap());
        assert_eq!(json, br#"{"kid":"id","kty":"RSA","n":"xyz","e":"AQAB"}"#);
    }
}
