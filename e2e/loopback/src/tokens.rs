//! ServiceAccount tokens: the `serviceaccounts/<name>/token` subresource (TokenRequest),
//! `authentication.k8s.io/v1` TokenReview, and the OIDC discovery documents
//! (`/.well-known/openid-configuration`, `/openid/v1/jwks`), so Vault/OpenBao Kubernetes and
//! JWT auth can be tested against the server. Tokens are ES256 JWTs signed by a P-256 key
//! generated at start (kube-apiserver usually signs RS256; both are standard).

use crate::errors::{ApiError, ApiResult, FieldError};
use crate::meta;
use crate::state::State;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

/// Default token lifetime, as kube-apiserver.
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;

/// Signs and verifies ServiceAccount tokens.
pub struct TokenIssuer {
    key_pair: EcdsaKeyPair,
    random: SystemRandom,
    key_id: String,
    issuer: String,
    audience: String,
}

impl std::fmt::Debug for TokenIssuer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("TokenIssuer")
            .field("issuer", &self.issuer)
            .field("key_id", &self.key_id)
            .finish()
    }
}

impl TokenIssuer {
    /// A fresh signing key for `issuer`; tokens default to audience `audience`.
    pub fn new(issuer: &str, audience: &str) -> anyhow::Result<Self> {
        let random = SystemRandom::new();
        let algorithm = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(algorithm, &random)
            .map_err(|_| anyhow::anyhow!("generating the token signing key"))?;
        let key_pair = EcdsaKeyPair::from_pkcs8(algorithm, pkcs8.as_ref(), &random)
            .map_err(|error| anyhow::anyhow!("loading the token signing key: {error}"))?;
        let digest = ring::digest::digest(&ring::digest::SHA256, key_pair.public_key().as_ref());
        Ok(Self {
            key_id: URL_SAFE_NO_PAD.encode(digest.as_ref()),
            key_pair,
            random,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
        })
    }

    /// The `iss` of issued tokens.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The audience of tokens requested without audiences, and of reviews without any.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Signs a JWT with these claims.
    pub fn sign(&self, claims: &Value) -> String {
        let header = json!({"alg": "ES256", "kid": self.key_id});
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .key_pair
            .sign(&self.random, signing_input.as_bytes())
            .expect("ECDSA signing does not fail");
        format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        )
    }

    /// Checks signature, issuer and time bounds; returns the claims.
    pub fn verify(&self, token: &str) -> Result<Value, String> {
        let invalid = || "invalid bearer token".to_owned();
        let (signing_input, signature) = token.rsplit_once('.').ok_or_else(invalid)?;
        let (_, payload) = signing_input.split_once('.').ok_or_else(invalid)?;
        let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| invalid())?;
        signature::UnparsedPublicKey::new(
            &signature::ECDSA_P256_SHA256_FIXED,
            self.key_pair.public_key().as_ref(),
        )
        .verify(signing_input.as_bytes(), &signature)
        .map_err(|_| invalid())?;
        let claims: Value = URL_SAFE_NO_PAD
            .decode(payload)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .ok_or_else(invalid)?;
        if claims["iss"] != self.issuer.as_str() {
            return Err(invalid());
        }
        let now = meta::unix_now();
        if claims["exp"].as_i64().is_none_or(|exp| exp < now) {
            return Err("Token has expired.".to_owned());
        }
        if claims["nbf"].as_i64().is_some_and(|nbf| nbf > now + 60) {
            return Err("Token is not yet valid.".to_owned());
        }
        Ok(claims)
    }

    /// `/openid/v1/jwks`.
    pub fn jwks(&self) -> Value {
        let point = self.key_pair.public_key().as_ref();
        json!({"keys": [{
            "use": "sig",
            "kty": "EC",
            "kid": self.key_id,
            "crv": "P-256",
            "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        }]})
    }

    /// `/.well-known/openid-configuration`; `base_url` is where the JWKS is served.
    pub fn openid_configuration(&self, base_url: &str) -> Value {
        json!({
            "issuer": self.issuer,
            "jwks_uri": format!("{base_url}/openid/v1/jwks"),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        })
    }
}

fn audiences(value: &Value, default: &str) -> Vec<String> {
    let list: Vec<String> = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    if list.is_empty() {
        vec![default.to_owned()]
    } else {
        list
    }
}

impl State {
    /// POST `serviceaccounts/<name>/token`.
    pub(crate) fn token_request(
        &self,
        issuer: &TokenIssuer,
        namespace: &str,
        name: &str,
        body: &Value,
    ) -> ApiResult<Value> {
        let accounts = self
            .registry
            .get("", "v1", "serviceaccounts")
            .expect("built in");
        let account = self.get(&accounts, Some(namespace), name)?;
        let spec = &body["spec"];
        let expiration = spec["expirationSeconds"]
            .as_i64()
            .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
        let too = |detail: &str| {
            ApiError::invalid(
                "authentication.k8s.io",
                "TokenRequest",
                name,
                &[FieldError::invalid(
                    "spec.expirationSeconds",
                    expiration.into(),
                    detail,
                )],
            )
        };
        if expiration < 600 {
            return Err(too("may not specify a duration less than 10 minutes"));
        }
        if expiration > 1 << 32 {
            return Err(too("may not specify a duration larger than 2^32 seconds"));
        }
        let audiences = audiences(&spec["audiences"], &issuer.audience);
        let now = meta::unix_now();
        let account_uid = meta::meta_str(&account, "uid").unwrap_or_default();
        let mut private =
            json!({"namespace": namespace, "serviceaccount": {"name": name, "uid": account_uid}});
        let bound = &spec["boundObjectRef"];
        if let Some(kind) = bound["kind"].as_str() {
            private[kind.to_lowercase()] = json!({"name": bound["name"], "uid": bound["uid"]});
        }
        let claims = json!({
            "aud": audiences,
            "exp": now + expiration,
            "iat": now,
            "nbf": now,
            "iss": issuer.issuer,
            "jti": meta::new_uid(),
            "sub": format!("system:serviceaccount:{namespace}:{name}"),
            "kubernetes.io": private,
        });
        Ok(json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": meta::now()},
            "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": bound},
            "status": {"token": issuer.sign(&claims), "expirationTimestamp": meta::timestamp_after(expiration)},
        }))
    }

    /// POST `tokenreviews`.
    pub(crate) fn token_review(&self, issuer: &TokenIssuer, body: &Value) -> ApiResult<Value> {
        let token = body["spec"]["token"].as_str().unwrap_or_default();
        if token.is_empty() {
            return Err(ApiError::invalid(
                "authentication.k8s.io",
                "TokenReview",
                "",
                &[FieldError::required("spec.token")],
            ));
        }
        let wanted = audiences(&body["spec"]["audiences"], &issuer.audience);
        let status = match self.review(issuer, token, &wanted) {
            Ok((user, audiences)) => {
                json!({"authenticated": true, "user": user, "audiences": audiences})
            }
            Err(error) => json!({"user": {}, "error": format!("[invalid bearer token, {error}]")}),
        };
        Ok(json!({
            "kind": "TokenReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": body["spec"],
            "status": status,
        }))
    }

    /// Authenticates a ServiceAccount token: the user info and matched audiences.
    pub(crate) fn review(
        &self,
        issuer: &TokenIssuer,
        token: &str,
        wanted: &[String],
    ) -> Result<(Value, Vec<String>), String> {
        let claims = issuer.verify(token)?;
        let token_audiences = audiences(&claims["aud"], "");
        let matched: Vec<String> = wanted
            .iter()
            .filter(|a| token_audiences.contains(a))
            .cloned()
            .collect();
        if matched.is_empty() {
            return Err(format!(
                "token audiences {token_audiences:?} is invalid for the target audiences {wanted:?}"
            ));
        }
        let private = &claims["kubernetes.io"];
        let namespace = private["namespace"].as_str().unwrap_or_default();
        let name = private["serviceaccount"]["name"]
            .as_str()
            .unwrap_or_default();
        let uid = private["serviceaccount"]["uid"]
            .as_str()
            .unwrap_or_default();
        let accounts = self
            .registry
            .get("", "v1", "serviceaccounts")
            .expect("built in");
        let account = self
            .get(&accounts, Some(namespace), name)
            .map_err(|_| format!("serviceaccounts {name:?} not found"))?;
        if meta::meta_str(&account, "uid") != Some(uid) {
            return Err(format!("service account UID ({uid}) does not match claim"));
        }
        let user = json!({
            "username": format!("system:serviceaccount:{namespace}:{name}"),
            "uid": uid,
            "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{namespace}"), "system:authenticated"],
            "extra": {"authentication.kubernetes.io/credential-id": [format!("JTI={}", claims["jti"].as_str().unwrap_or_default())]},
        });
        Ok((user, matched))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_tokens_verify_and_tampering_fails() {
        let issuer = TokenIssuer::new("https://issuer", "aud").unwrap();
        let token = issuer.sign(&json!({"iss": "https://issuer", "exp": meta::unix_now() + 60}));
        assert!(issuer.verify(&token).is_ok());
        let mut tampered = token.clone();
        tampered.insert(token.find('.').unwrap() + 2, 'x');
        assert!(issuer.verify(&tampered).is_err());
        let expired = issuer.sign(&json!({"iss": "https://issuer", "exp": 1}));
        assert!(issuer.verify(&expired).is_err());
        assert_eq!(issuer.jwks()["keys"][0]["crv"], "P-256");
    }
}
