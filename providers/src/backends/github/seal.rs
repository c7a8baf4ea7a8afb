//! Secret values encrypted as GitHub requires: a libsodium sealed box (`crypto_box_seal`:
//! X25519 with an ephemeral key, XSalsa20-Poly1305, the nonce a BLAKE2b hash of both public
//! keys) to the scope's public key, base64 encoded.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use crypto_box::PublicKey;
use crypto_box::aead::OsRng;

use crate::error::{ProviderError, Result};

/// `value` sealed to the base64 X25519 `public_key` GitHub gave, as base64.
pub fn seal(public_key: &str, value: &[u8]) -> Result<String> {
    let unusable =
        |why: &str| ProviderError::invalid_data(format!("unable to decode public key: {why}"));
    let bytes = STANDARD
        .decode(public_key.trim())
        .map_err(|failure| unusable(&failure.to_string()))?;
    let bytes: [u8; crypto_box::KEY_SIZE] = bytes
        .try_into()
        .map_err(|_| unusable("not a 32-byte X25519 key"))?;
    let sealed = PublicKey::from(bytes)
        .seal(&mut OsRng, value)
        .map_err(|_| ProviderError::unavailable("box.SealAnonymous failed"))?;
    Ok(STANDARD.encode(sealed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crypto_box::SecretKey;

    #[test]
    fn sealed_values_open_with_the_private_key_only() {
        let key = SecretKey::generate(&mut OsRng);
        let public = STANDARD.encode(key.public_key().as_bytes());
        let sealed = STANDARD.decode(seal(&public, b"hunter2").unwrap()).unwrap();
        assert_eq!(key.unseal(&sealed).unwrap(), b"hunter2");
        // Ephemeral keys: the same value seals differently each time.
        assert_ne!(
            seal(&public, b"hunter2").unwrap(),
            seal(&public, b"hunter2").unwrap()
        );
        let other = SecretKey::generate(&mut OsRng);
        assert!(other.unseal(&sealed).is_err());
    }

    #[test]
    fn public_keys_must_be_base64_x25519_keys() {
        let error = seal("not base64!", b"v").unwrap_err();
        assert!(error.message().starts_with("unable to decode public key"));
        assert!(seal(&STANDARD.encode([1_u8; 31]), b"v").is_err());
    }
}
