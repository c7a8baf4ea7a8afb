//! The server side of the Keeper Secrets Manager cryptography, written for the fake from the
//! KSM SDKs' description (not shared with the provider, so a client-side mistake shows):
//! AES-256-GCM with the 12-byte nonce in front, ECIES over P-256 (ephemeral point, 65 bytes, in
//! front; key = SHA-256 of the shared x coordinate), ECDSA-SHA256 DER signatures, client ids as
//! base64 HMAC-SHA512 of the one-time token with a fixed tag.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use p256::elliptic_curve::point::AffineCoordinates as _;
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use p256::{PublicKey, SecretKey};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, Nonce, UnboundKey};
use ring::rand::{SecureRandom as _, SystemRandom};

/// `N` random bytes.
pub fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .expect("system randomness");
    bytes
}

/// A fresh P-256 key.
pub fn new_key() -> SecretKey {
    loop {
        if let Ok(key) = SecretKey::from_slice(&random::<32>()) {
            return key;
        }
    }
}

/// The uncompressed point of `key`.
pub fn public_bytes(key: &SecretKey) -> Vec<u8> {
    key.public_key().to_encoded_point(false).as_bytes().to_vec()
}

fn gcm(key: &[u8]) -> Option<LessSafeKey> {
    Some(LessSafeKey::new(UnboundKey::new(&AES_256_GCM, key).ok()?))
}

/// AES-GCM: nonce ‖ ciphertext ‖ tag.
pub fn seal(data: &[u8], key: &[u8]) -> Vec<u8> {
    let nonce = random::<12>();
    let mut sealed = data.to_vec();
    gcm(key)
        .expect("a 256-bit key")
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::empty(),
            &mut sealed,
        )
        .expect("sealing");
    [nonce.to_vec(), sealed].concat()
}

/// The plaintext of [`seal`], if `key` opens it.
pub fn open(data: &[u8], key: &[u8]) -> Option<Vec<u8>> {
    let (nonce, sealed) = data.split_at_checked(12)?;
    let mut sealed = sealed.to_vec();
    let plain = gcm(key)?
        .open_in_place(
            Nonce::try_assume_unique_for_key(nonce).ok()?,
            Aad::empty(),
            &mut sealed,
        )
        .ok()?;
    Some(plain.to_vec())
}

/// Opens ECIES `data` addressed to `key`.
pub fn ecies_open(data: &[u8], key: &SecretKey) -> Option<Vec<u8>> {
    let (point, sealed) = data.split_at_checked(65)?;
    let ephemeral = PublicKey::from_sec1_bytes(point).ok()?;
    let shared = (ephemeral.to_projective() * *key.to_nonzero_scalar()).to_affine();
    let aes = ring::digest::digest(&ring::digest::SHA256, &shared.x());
    open(sealed, aes.as_ref())
}

/// Whether `signature` (DER) is `public`'s ECDSA-SHA256 signature of `data`.
pub fn verify(public: &[u8], data: &[u8], signature: &[u8]) -> bool {
    use p256::ecdsa::signature::Verifier as _;
    let Ok(verifier) = p256::ecdsa::VerifyingKey::from_sec1_bytes(public) else {
        return false;
    };
    let Ok(signature) = p256::ecdsa::Signature::from_der(signature) else {
        return false;
    };
    verifier.verify(data, &signature).is_ok()
}

/// The client id of one-time token `token`.
pub fn client_id(token: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA512, token);
    STANDARD.encode(ring::hmac::sign(&key, b"KEEPER_SECRETS_MANAGER_CLIENT_ID").as_ref())
}

/// Standard base64 (what the SDKs send and the server answers in payload fields).
pub fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// URL-safe base64 without padding (uids, keys in the binding answer).
pub fn url_safe(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Bytes of standard base64 text.
pub fn unb64(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}
