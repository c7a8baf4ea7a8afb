//! The KSM client configuration the auth Secret holds, as `ksm init` and the SDKs write it: a
//! JSON object of strings (`hostname`, `clientId`, `privateKey`, `appKey`, `serverPublicKeyId`,
//! `appOwnerPublicKey`, optionally `serverPublicKey`), usually base64-encoded as a whole.
//!
//! A configuration not bound yet holds the one-time token as `clientKey` (and `hostname`) but no
//! `appKey`: the client id is then derived from the token, a private key is generated, and the
//! first `get_secret` binds them (see `api.rs`), as the SDKs do with in-memory storage.
//!
//! The Go SDK upstream uses reads the same object ("Decode if config json was provided as base64
//! string"). The server's public key is the built-in one for `serverPublicKeyId` (default `10`,
//! an unknown id falls back to it, as the Go SDK), or the configuration's `serverPublicKey` when
//! present (the Python SDK's option for isolated deployments).

use std::collections::HashMap;

use p256::SecretKey;

use super::crypto;

/// Keeper's transmission public keys by id, as published in the KSM SDKs.
const SERVER_PUBLIC_KEYS: [(&str, &str); 11] = [
    (
        "7",
        "BK9w6TZFxE6nFNbMfIpULCup2a8xc6w2tUTABjxny7yFmxW0dAEojwC6j6zb5nTlmb1dAx8nwo3qF7RPYGmloRM",
    ),
    (
        "8",
        "BKnhy0obglZJK-igwthNLdknoSXRrGB-mvFRzyb_L-DKKefWjYdFD2888qN1ROczz4n3keYSfKz9Koj90Z6w_tQ",
    ),
    (
        "9",
        "BAsPQdCpLIGXdWNLdAwx-3J5lNqUtKbaOMV56hUj8VzxE2USLHuHHuKDeno0ymJt-acxWV1xPlBfNUShhRTR77g",
    ),
    (
        "10",
        "BNYIh_Sv03nRZUUJveE8d2mxKLIDXv654UbshaItHrCJhd6cT7pdZ_XwbdyxAOCWMkBb9AZ4t1XRCsM8-wkEBRg",
    ),
    (
        "11",
        "BA6uNfeYSvqagwu4TOY6wFK4JyU5C200vJna0lH4PJ-SzGVXej8l9dElyQ58_ljfPs5Rq6zVVXpdDe8A7Y3WRhk",
    ),
    (
        "12",
        "BMjTIlXfohI8TDymsHxo0DqYysCy7yZGJ80WhgOBR4QUd6LBDA6-_318a-jCGW96zxXKMm8clDTKpE8w75KG-FY",
    ),
    (
        "13",
        "BJBDU1P1H21IwIdT2brKkPqbQR0Zl0TIHf7Bz_OO9jaNgIwydMkxt4GpBmkYoprZ_DHUGOrno2faB7pmTR7HhuI",
    ),
    (
        "14",
        "BJFF8j-dH7pDEw_U347w2CBM6xYM8Dk5fPPAktjib-opOqzvvbsER-WDHM4ONCSBf9O_obAHzCyygxmtpktDuiE",
    ),
    (
        "15",
        "BDKyWBvLbyZ-jMueORl3JwJnnEpCiZdN7yUvT0vOyjwpPBCDf6zfL4RWzvSkhAAFnwOni_1tQSl8dfXHbXqXsQ8",
    ),
    (
        "16",
        "BDXyZZnrl0tc2jdC5I61JjwkjK2kr7uet9tZjt8StTiJTAQQmnVOYBgbtP08PWDbecxnHghx3kJ8QXq1XE68y8c",
    ),
    (
        "17",
        "BFX68cb97m9_sweGdOVavFM3j5ot6gveg6xT4BtGahfGhKib-zdZyO9pwvv1cBda9ahkSzo1BQ4NVXp9qRyqVGU",
    ),
];

/// The key id the SDKs start with.
const DEFAULT_SERVER_KEY_ID: &str = "10";

/// Keeper's default host.
const DEFAULT_HOSTNAME: &str = "keepersecurity.com";

/// A bound KSM client, ready to sign requests.
pub struct ClientConfig {
    /// `https://<hostname>` of the Secrets Manager API.
    pub base_url: String,
    /// The id the server knows the client by.
    pub client_id: String,
    /// The client's signing key.
    pub private_key: SecretKey,
    /// The application key records and folders are encrypted to (`None` until bound).
    pub app_key: Option<Vec<u8>>,
    /// The one-time token of a configuration not bound yet: the app key arrives encrypted
    /// with it.
    pub client_key: Option<Vec<u8>>,
    /// The id sent as `PublicKeyId`.
    pub server_key_id: String,
    /// The server's P-256 public key (uncompressed) transmission keys are encrypted to.
    pub server_public_key: Vec<u8>,
    /// Whether that key is the configuration's `serverPublicKey` (kept when the server asks
    /// for another key id) rather than a built-in one.
    pub custom_server_key: bool,
    /// The application owner's public key new records' keys are encrypted to (absent in
    /// configurations made by old clients: creating records is then refused).
    pub owner_public_key: Option<Vec<u8>>,
}

impl ClientConfig {
    /// Reads the configuration text; the error names the missing or unreadable key, never a
    /// value.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let json = match crypto::from_base64(text) {
            Ok(decoded) if decoded.first() == Some(&b'{') => decoded,
            _ => text.as_bytes().to_vec(),
        };
        let values: HashMap<String, serde_json::Value> = serde_json::from_slice(&json)
            .map_err(|_| "the configuration is neither JSON nor base64 of JSON".to_owned())?;
        let get = |key: &str| {
            values
                .get(key)
                .and_then(serde_json::Value::as_str)
                .map(str::trim)
                .filter(|value| !value.is_empty())
        };
        let required =
            |key: &str| get(key).ok_or_else(|| format!("the configuration has no {key}"));
        let bytes = |key: &str| {
            crypto::from_base64(required(key)?)
                .map_err(|_| format!("the configuration's {key} is not base64"))
        };
        let bound = get("appKey").is_some();
        let client_key = match get("clientKey") {
            Some(token) if !bound => Some(
                crypto::from_base64(token)
                    .map_err(|_| "the configuration's clientKey is not base64".to_owned())?,
            ),
            _ => None,
        };
        let (client_id, private_key) = match &client_key {
            Some(token) => (
                crypto::client_id(token),
                crypto::new_secret_key().map_err(|_| "unable to generate a key".to_owned())?,
            ),
            None => (
                required("clientId")?.to_owned(),
                crypto::signing_key(&bytes("privateKey")?).map_err(|_| {
                    "the configuration's privateKey is not a PKCS#8 P-256 key".to_owned()
                })?,
            ),
        };
        let app_key = if client_key.is_some() {
            None
        } else {
            let app_key = bytes("appKey")?;
            if app_key.len() != 32 {
                return Err("the configuration's appKey is not a 256-bit key".into());
            }
            Some(app_key)
        };
        let configured_id = get("serverPublicKeyId").unwrap_or(DEFAULT_SERVER_KEY_ID);
        let (server_key_id, server_public_key) = match get("serverPublicKey") {
            Some(key) => (configured_id, key),
            None => builtin_key(configured_id)
                .or_else(|| builtin_key(DEFAULT_SERVER_KEY_ID))
                .ok_or_else(|| "no server public key".to_owned())?,
        };
        let server_public_key = crypto::from_base64(server_public_key)
            .map_err(|_| "the configuration's serverPublicKey is not base64".to_owned())?;
        let owner_public_key =
            match get("appOwnerPublicKey") {
                Some(key) => Some(crypto::from_base64(key).map_err(|_| {
                    "the configuration's appOwnerPublicKey is not base64".to_owned()
                })?),
                None => None,
            };
        Ok(Self {
            base_url: base_url(get("hostname").unwrap_or(DEFAULT_HOSTNAME)),
            client_id,
            private_key,
            app_key,
            client_key,
            server_key_id: server_key_id.to_owned(),
            server_public_key,
            custom_server_key: get("serverPublicKey").is_some(),
            owner_public_key,
        })
    }
}

/// The built-in server key `id` names (a key rotation answer names one).
pub fn builtin_server_key(id: &str) -> Option<Vec<u8>> {
    builtin_key(id).and_then(|(_, key)| crypto::from_base64(key).ok())
}

/// The built-in key `id` names, with its id.
fn builtin_key(id: &str) -> Option<(&'static str, &'static str)> {
    SERVER_PUBLIC_KEYS
        .iter()
        .find(|(known, _)| *known == id)
        .copied()
}

/// `https://host[:port]` of a configured hostname, which may carry a scheme and a path.
fn base_url(hostname: &str) -> String {
    let without_scheme = hostname
        .split_once("://")
        .map_or(hostname, |(_, rest)| rest);
    let host = without_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or(without_scheme);
    format!("https://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::pkcs8::EncodePrivateKey as _;

    fn config_json(extra: &[(&str, &str)]) -> serde_json::Value {
        let key = crypto::new_secret_key().unwrap();
        let mut json = serde_json::json!({
            "hostname": "keepersecurity.eu",
            "clientId": "client-id",
            "privateKey": crypto::to_base64(key.to_pkcs8_der().unwrap().as_bytes()),
            "appKey": crypto::to_base64(&[7u8; 32]),
        });
        for (key, value) in extra {
            json[*key] = serde_json::Value::from(*value);
        }
        json
    }

    #[test]
    fn reads_base64_or_plain_json_with_the_builtin_server_key() {
        let json = config_json(&[("serverPublicKeyId", "12")]);
        let encoded = crypto::to_base64(json.to_string().as_bytes());
        for text in [encoded, json.to_string()] {
            let config = ClientConfig::parse(&text).unwrap();
            assert_eq!(config.base_url, "https://keepersecurity.eu");
            assert_eq!(config.client_id, "client-id");
            assert_eq!(config.server_key_id, "12");
            assert_eq!(config.server_public_key.len(), 65);
            assert!(config.owner_public_key.is_none());
        }
        let unknown = config_json(&[("serverPublicKeyId", "99")]).to_string();
        assert_eq!(ClientConfig::parse(&unknown).unwrap().server_key_id, "10");
    }

    #[test]
    fn a_configured_server_key_and_host_port_are_used() {
        let server = crypto::public_key_bytes(&crypto::new_secret_key().unwrap());
        let json = config_json(&[
            ("serverPublicKey", &crypto::to_url_safe(&server)),
            ("serverPublicKeyId", "fake-1"),
            ("hostname", "https://127.0.0.1:8443/path"),
        ]);
        let config = ClientConfig::parse(&json.to_string()).unwrap();
        assert_eq!(config.server_public_key, server);
        assert_eq!(config.server_key_id, "fake-1");
        assert_eq!(config.base_url, "https://127.0.0.1:8443");
    }

    #[test]
    fn a_one_time_token_configuration_is_unbound_with_a_derived_client_id() {
        let token = crypto::to_url_safe(&[9u8; 32]);
        let json = serde_json::json!({"clientKey": token, "hostname": "keepersecurity.com"});
        let config = ClientConfig::parse(&json.to_string()).unwrap();
        assert_eq!(config.client_id, crypto::client_id(&[9u8; 32]));
        assert_eq!(config.client_key.as_deref(), Some(&[9u8; 32][..]));
        assert!(config.app_key.is_none());
        // A bound configuration ignores a leftover token.
        let bound = config_json(&[("clientKey", &token)]);
        let config = ClientConfig::parse(&bound.to_string()).unwrap();
        assert!(config.client_key.is_none());
        assert_eq!(config.app_key.as_deref(), Some(&[7u8; 32][..]));
    }

    #[test]
    fn missing_or_broken_keys_are_named_without_values() {
        let mut json = config_json(&[]);
        json.as_object_mut().unwrap().remove("clientId");
        let error = ClientConfig::parse(&json.to_string()).err().unwrap();
        assert_eq!(error, "the configuration has no clientId");
        let broken = config_json(&[("privateKey", "c2VjcmV0")]).to_string();
        let error = ClientConfig::parse(&broken).err().unwrap();
        assert!(error.contains("privateKey is not a PKCS#8"), "{error}");
        assert!(!error.contains("c2VjcmV0"));
        assert!(ClientConfig::parse("not json").is_err());
        let unbound = serde_json::json!({"hostname": "h"}).to_string();
        let error = ClientConfig::parse(&unbound).err().unwrap();
        assert_eq!(error, "the configuration has no clientId");
        let short = config_json(&[("appKey", "AAAA")]).to_string();
        assert!(ClientConfig::parse(&short).is_err());
    }
}
