//! RS256 JSON Web Tokens signed with ring, for the backends that authenticate with a JWT they
//! sign themselves (GitHub App JWTs, Google service-account assertions, Entra ID client
//! assertions): one place that reads an RSA private key from PEM and one that signs.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject as _;

/// Why a key could not be used; the caller words the configuration error (the key is never in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyError {
    /// The PEM holds no `PRIVATE KEY` or `RSA PRIVATE KEY` block.
    NoRsaBlock,
    /// The block is not a usable RSA key (wrong algorithm, too short, malformed).
    Unusable,
}

/// The RSA private key of the first PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`) block of
/// `pem`.
pub fn rsa_key_from_pem(pem: &[u8]) -> Result<RsaKeyPair, KeyError> {
    match PrivateKeyDer::from_pem_slice(pem) {
        Ok(PrivateKeyDer::Pkcs8(key)) => RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()),
        Ok(PrivateKeyDer::Pkcs1(key)) => RsaKeyPair::from_der(key.secret_pkcs1_der()),
        _ => return Err(KeyError::NoRsaBlock),
    }
    .map_err(|_| KeyError::Unusable)
}

/// `claims` under `header` (which must say `"alg": "RS256"`) as a compact JWS signed by `key`;
/// `None` only if ring cannot sign (no randomness).
pub fn sign_rs256(
    key: &RsaKeyPair,
    header: &serde_json::Value,
    claims: &serde_json::Value,
) -> Option<String> {
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .ok()?;
    Some(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{KeyPair as _, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};

    /// A PKCS#1 key (`RSA PRIVATE KEY`, GitHub's format) and a PKCS#8 one.
    const PKCS1: &str = include_str!("../tests/data/github-app-key.pem");
    const PKCS8: &str = include_str!("../tests/data/azure-sp-cert.pem");

    #[test]
    fn signs_tokens_their_public_keys_verify() {
        check(PKCS1);
        check(PKCS8);
    }

    fn check(pem: &str) {
        let key = rsa_key_from_pem(pem.as_bytes()).unwrap();
        let token = sign_rs256(
            &key,
            &serde_json::json!({"alg": "RS256", "typ": "JWT"}),
            &serde_json::json!({"iss": "42"}),
        )
        .unwrap();
        let (input, signature) = token.rsplit_once('.').unwrap();
        let signature = URL_SAFE_NO_PAD.decode(signature).unwrap();
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key.public_key().as_ref())
            .verify(input.as_bytes(), &signature)
            .unwrap();
        let claims = input.split('.').nth(1).unwrap();
        assert_eq!(URL_SAFE_NO_PAD.decode(claims).unwrap(), br#"{"iss":"42"}"#);
    }

    #[test]
    fn refuses_what_is_not_an_rsa_key() {
        assert_eq!(
            rsa_key_from_pem(b"not a pem").err(),
            Some(KeyError::NoRsaBlock)
        );
        let ec = rcgen::KeyPair::generate().unwrap().serialize_pem();
        assert_eq!(
            rsa_key_from_pem(ec.as_bytes()).err(),
            Some(KeyError::Unusable)
        );
    }
}
