//! The cryptography of the Keeper Secrets Manager protocol, as the KSM SDKs implement it:
//!
//! * AES-256-GCM with a random 12-byte nonce in front of the ciphertext and tag (payloads,
//!   responses, record, folder and file keys and data);
//! * ECIES over P-256: an ephemeral key agreed with the recipient's public key, SHA-256 of the
//!   shared x coordinate as the AES-GCM key, the ephemeral public key (uncompressed, 65 bytes)
//!   in front (transmission keys to the server, record keys to the application owner);
//! * ECDSA P-256 with SHA-256, ASN.1 DER signatures, by the client's PKCS#8 private key;
//! * the client id: base64 of HMAC-SHA512 of the one-time token with a fixed tag;
//! * base64: standard with padding when sending, either alphabet with or without padding when
//!   reading (as the SDKs' `Base64ToBytes`).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use p256::elliptic_curve::point::AffineCoordinates as _;
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use p256::pkcs8::DecodePrivateKey as _;
use p256::{PublicKey, SecretKey};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom as _, SystemRandom};

/// A failure of a cryptographic step; the caller names the step (never the data).
#[derive(Debug)]
pub struct CryptoError;

/// The result of a cryptographic step.
pub type Result<T> = std::result::Result<T, CryptoError>;

/// The tag the SDKs hash the one-time token with to name the client.
const CLIENT_ID_TAG: &[u8] = b"KEEPER_SECRETS_MANAGER_CLIENT_ID";

/// Length of an uncompressed P-256 point.
const POINT_LEN: usize = 65;

/// `n` random bytes from the system generator.
pub fn random<const N: usize>() -> Result<[u8; N]> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| CryptoError)?;
    Ok(bytes)
}

/// AES-256-GCM of `data` under `key`: nonce, then ciphertext and tag.
pub fn encrypt(data: &[u8], key: &[u8]) -> Result<Vec<u8>> {
    let key = aes_key(key)?;
    let nonce = random::<NONCE_LEN>()?;
    let mut sealed = data.to_vec();
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::empty(),
        &mut sealed,
    )
    .map_err(|_| CryptoError)?;
    let mut out = nonce.to_vec();
    out.append(&mut sealed);
    Ok(out)
}

/// The plaintext of [`encrypt`]'s output; fails for a wrong key or altered data.
pub fn decrypt(data: &[u8], key: &[u8]) -> Result<Vec<u8>> {
    let key = aes_key(key)?;
    let (nonce, sealed) = data.split_at_checked(NONCE_LEN).ok_or(CryptoError)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CryptoError)?;
    let mut opened = sealed.to_vec();
    let plain = key
        .open_in_place(nonce, Aad::empty(), &mut opened)
        .map_err(|_| CryptoError)?;
    Ok(plain.to_vec())
}

fn aes_key(key: &[u8]) -> Result<LessSafeKey> {
    UnboundKey::new(&AES_256_GCM, key)
        .map(LessSafeKey::new)
        .map_err(|_| CryptoError)
}

/// ECIES of `data` to the P-256 public key `recipient` (uncompressed SEC1 bytes).
pub fn public_encrypt(data: &[u8], recipient: &[u8]) -> Result<Vec<u8>> {
    let recipient = PublicKey::from_sec1_bytes(recipient).map_err(|_| CryptoError)?;
    let ephemeral = new_secret_key()?;
    let key = shared_key(&ephemeral, &recipient);
    let mut out = ephemeral
        .public_key()
        .to_encoded_point(false)
        .as_bytes()
        .to_vec();
    if out.len() != POINT_LEN {
        return Err(CryptoError);
    }
    out.append(&mut encrypt(data, &key)?);
    Ok(out)
}

/// The AES key two parties derive: SHA-256 of the x coordinate of the shared point.
fn shared_key(own: &SecretKey, other: &PublicKey) -> [u8; 32] {
    let shared = (other.to_projective() * *own.to_nonzero_scalar()).to_affine();
    let digest = ring::digest::digest(&ring::digest::SHA256, &shared.x());
    let mut key = [0u8; 32];
    key.copy_from_slice(digest.as_ref());
    key
}

/// A fresh P-256 private key from the system generator.
pub fn new_secret_key() -> Result<SecretKey> {
    // A random 32-byte string is a valid scalar except with negligible probability; a few tries
    // make the failure impossible in practice without a loop that could spin.
    for _ in 0..4 {
        if let Ok(key) = SecretKey::from_slice(&random::<32>()?) {
            return Ok(key);
        }
    }
    Err(CryptoError)
}

/// The client's signing key from the configuration's PKCS#8 DER `privateKey`.
pub fn signing_key(pkcs8_der: &[u8]) -> Result<SecretKey> {
    SecretKey::from_pkcs8_der(pkcs8_der).map_err(|_| CryptoError)
}

/// The uncompressed public key of `key`.
pub fn public_key_bytes(key: &SecretKey) -> Vec<u8> {
    key.public_key().to_encoded_point(false).as_bytes().to_vec()
}

/// The DER ECDSA-SHA256 signature of `data` by `key`.
pub fn sign(data: &[u8], key: &SecretKey) -> Vec<u8> {
    use p256::ecdsa::signature::Signer as _;
    let signature: p256::ecdsa::Signature = p256::ecdsa::SigningKey::from(key).sign(data);
    signature.to_der().as_bytes().to_vec()
}

/// The client id the server knows a one-time token's client by.
pub fn client_id(one_time_token: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA512, one_time_token);
    STANDARD.encode(ring::hmac::sign(&key, CLIENT_ID_TAG).as_ref())
}

/// Standard base64 with padding (what the SDKs send).
pub fn to_base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// URL-safe base64 without padding (record uids).
pub fn to_url_safe(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Bytes of base64 text in either alphabet, padded or not.
pub fn from_base64(text: &str) -> Result<Vec<u8>> {
    let normalized: String = text
        .trim()
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            other => other,
        })
        .collect();
    STANDARD_NO_PAD.decode(normalized).map_err(|_| CryptoError)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aes_gcm_round_trips_and_refuses_a_wrong_key_or_altered_data() {
        let key = random::<32>().unwrap();
        let sealed = encrypt(b"record json", &key).unwrap();
        assert_eq!(sealed.len(), 12 + 11 + 16);
        assert_eq!(decrypt(&sealed, &key).unwrap(), b"record json");
        assert!(decrypt(&sealed, &random::<32>().unwrap()).is_err());
        let mut altered = sealed.clone();
        altered[20] ^= 1;
        assert!(decrypt(&altered, &key).is_err());
        assert!(decrypt(&sealed[..5], &key).is_err());
        assert!(encrypt(b"x", &[0u8; 7]).is_err());
    }

    #[test]
    fn ecies_is_readable_by_the_recipients_private_key_only() {
        let recipient = new_secret_key().unwrap();
        let sealed = public_encrypt(b"transmission key", &public_key_bytes(&recipient)).unwrap();
        let (ephemeral, rest) = sealed.split_at(POINT_LEN);
        let ephemeral = PublicKey::from_sec1_bytes(ephemeral).unwrap();
        let key = shared_key(&recipient, &ephemeral);
        assert_eq!(decrypt(rest, &key).unwrap(), b"transmission key");
        let stranger = shared_key(&new_secret_key().unwrap(), &ephemeral);
        assert!(decrypt(rest, &stranger).is_err());
        assert!(public_encrypt(b"x", b"not a point").is_err());
    }

    #[test]
    fn signatures_verify_with_the_public_key() {
        use p256::ecdsa::signature::Verifier as _;
        use p256::pkcs8::EncodePrivateKey as _;
        let key = new_secret_key().unwrap();
        let der = key.to_pkcs8_der().unwrap();
        let loaded = signing_key(der.as_bytes()).unwrap();
        let signature = sign(b"signed", &loaded);
        let verifier = p256::ecdsa::VerifyingKey::from_sec1_bytes(&public_key_bytes(&key)).unwrap();
        let parsed = p256::ecdsa::Signature::from_der(&signature).unwrap();
        assert!(verifier.verify(b"signed", &parsed).is_ok());
        assert!(verifier.verify(b"other", &parsed).is_err());
        assert!(signing_key(b"garbage").is_err());
    }

    #[test]
    fn base64_reads_both_alphabets_and_client_ids_are_hmacs() {
        assert_eq!(from_base64("-_8=").unwrap(), [0xfb, 0xff]);
        assert_eq!(from_base64("+/8").unwrap(), [0xfb, 0xff]);
        assert!(from_base64("!!").is_err());
        assert_eq!(to_url_safe(&[0xfb, 0xff]), "-_8");
        // HMAC-SHA512 is 64 bytes: 88 base64 characters with padding.
        let id = client_id(b"token");
        assert_eq!(id.len(), 88);
        assert_ne!(id, client_id(b"other token"));
    }
}
