//! Sprig's private keys (crypto.go): `genPrivateKey`, and the PEM forms its certificate
//! functions write (`pemBlockForKey`: PKCS#1 `RSA PRIVATE KEY`, SEC 1 `EC PRIVATE KEY` with the
//! curve and public key as Go's `x509.MarshalECPrivateKey` writes them, PKCS#8 `PRIVATE KEY`
//! for Ed25519) and read (`parsePrivateKeyPEM`: those plus PKCS#8 RSA and ECDSA keys).
//!
//! Differences from Go, all ending in an error rather than a key: `genPrivateKey "dsa"` (Go's
//! L2048N256 DSA parameter search has no maintained Rust implementation in this workspace),
//! and certificates signed with or issued for DSA keys, P-224 or P-521 keys, or RSA keys below
//! 2048 bits (ring, the workspace's one crypto backend, does not sign with them).

use rsa::pkcs1::{DecodeRsaPrivateKey as _, EncodeRsaPrivateKey as _};
use rsa::pkcs8::DecodePrivateKey as _;
use rsa::rand_core::{CryptoRng, RngCore};

use p256::elliptic_curve::sec1::ToEncodedPoint as _;

use super::der::{bit_string, oid, sequence, small_integer, tlv};
use super::pem::{self, encode_der};
use super::{Arity, Entry, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[("genPrivateKey", Arity::Exact(1), |_, a| {
    Ok(Value::str(generate_private_key(&text(&a[0])?)))
})];

/// The RSA size of `genPrivateKey "rsa"` (and `""`).
const RSA_PRIVATE_KEY_BITS: usize = 4096;

/// The RSA size of the keys `genCA`, `genSelfSignedCert` and `genSignedCert` make.
pub const RSA_CERTIFICATE_KEY_BITS: usize = 2048;

/// The largest RSA key read from a template (ring signs with up to 8192 bits).
const MAX_RSA_BITS: usize = 8192;

const ED25519_OID: &str = "1.3.101.112";
const P256_OID: &str = "1.2.840.10045.3.1.7";
const P384_OID: &str = "1.3.132.0.34";
const OCTET_STRING: u8 = 0x04;

/// A private key Sprig can put in a certificate.
pub enum PrivateKey {
    Rsa(Box<rsa::RsaPrivateKey>),
    P256(p256::SecretKey),
    P384(p384::SecretKey),
    /// The 32-byte seed.
    Ed25519([u8; 32]),
}

/// The operating system's random source, as Go's `crypto/rand.Reader`, for the RustCrypto
/// key generators.
struct OsRandom;

impl RngCore for OsRandom {
    fn next_u32(&mut self) -> u32 {
        rsa::rand_core::impls::next_u32_via_fill(self)
    }

    fn next_u64(&mut self) -> u64 {
        rsa::rand_core::impls::next_u64_via_fill(self)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        // The generators have no error path; an OS without randomness cannot run a controller.
        getrandom::fill(dest).expect("the operating system's random source failed");
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rsa::rand_core::Error> {
        getrandom::fill(dest).map_err(|error| rsa::rand_core::Error::new(error.to_string()))
    }
}

impl CryptoRng for OsRandom {}

/// Sprig's `genPrivateKey`: a PEM key of the type, or (as Sprig) a message instead of one.
fn generate_private_key(kind: &str) -> String {
    let key = match kind {
        "" | "rsa" => PrivateKey::generate_rsa(RSA_PRIVATE_KEY_BITS),
        "ecdsa" => Ok(PrivateKey::P256(p256::SecretKey::random(&mut OsRandom))),
        "ed25519" => PrivateKey::generate_ed25519(),
        "dsa" => {
            return "failed to generate dsa params: DSA keys are not supported by this \
                    implementation"
                .into();
        }
        other => return format!("Unknown type {other}"),
    };
    match key.and_then(|key| key.to_pem()) {
        Ok(pem) => pem,
        Err(error) => format!("failed to generate private key: {error}"),
    }
}

impl PrivateKey {
    /// A new RSA key of `bits` bits.
    pub fn generate_rsa(bits: usize) -> Result<PrivateKey, String> {
        rsa::RsaPrivateKey::new(&mut OsRandom, bits)
            .map(|key| PrivateKey::Rsa(Box::new(key)))
            .map_err(|error| error.to_string())
    }

    fn generate_ed25519() -> Result<PrivateKey, String> {
        let mut seed = [0; 32];
        getrandom::fill(&mut seed).map_err(|error| error.to_string())?;
        Ok(PrivateKey::Ed25519(seed))
    }

    /// Go's `pemBlockForKey`, encoded.
    pub fn to_pem(&self) -> Result<String, String> {
        let (kind, der) = match self {
            PrivateKey::Rsa(key) => (
                "RSA PRIVATE KEY",
                key.to_pkcs1_der()
                    .map_err(|error| error.to_string())?
                    .as_bytes()
                    .to_vec(),
            ),
            PrivateKey::P256(key) => (
                "EC PRIVATE KEY",
                ec_private_key(
                    &key.to_bytes(),
                    P256_OID,
                    key.public_key().to_encoded_point(false).as_bytes(),
                ),
            ),
            PrivateKey::P384(key) => (
                "EC PRIVATE KEY",
                ec_private_key(
                    &key.to_bytes(),
                    P384_OID,
                    key.public_key().to_encoded_point(false).as_bytes(),
                ),
            ),
            PrivateKey::Ed25519(seed) => ("PRIVATE KEY", ed25519_pkcs8(seed)),
        };
        String::from_utf8(encode_der(kind, &der)).map_err(|error| error.to_string())
    }

    /// The key as PKCS#8 DER (what ring signs with) and the signature algorithm Go's
    /// `x509.CreateCertificate` picks for it.
    pub fn to_pkcs8(&self) -> Result<(Vec<u8>, &'static rcgen::SignatureAlgorithm), String> {
        Ok(match self {
            PrivateKey::Rsa(key) => (pkcs8_der(key.as_ref())?, &rcgen::PKCS_RSA_SHA256),
            PrivateKey::P256(key) => (pkcs8_der(key)?, &rcgen::PKCS_ECDSA_P256_SHA256),
            PrivateKey::P384(key) => (pkcs8_der(key)?, &rcgen::PKCS_ECDSA_P384_SHA384),
            PrivateKey::Ed25519(seed) => (ed25519_pkcs8(seed), &rcgen::PKCS_ED25519),
        })
    }

    /// The key as rcgen signs and certifies with.
    pub fn key_pair(&self) -> Result<rcgen::KeyPair, String> {
        let (der, algorithm) = self.to_pkcs8()?;
        rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der.into(), algorithm)
            .map_err(|error| error.to_string())
    }
}

/// PKCS#8 DER of an RSA or EC key.
fn pkcs8_der(key: &impl rsa::pkcs8::EncodePrivateKey) -> Result<Vec<u8>, String> {
    key.to_pkcs8_der()
        .map(|document| document.as_bytes().to_vec())
        .map_err(|error| error.to_string())
}

/// Go's `x509.MarshalECPrivateKey` (SEC 1 `ECPrivateKey`): version 1, the private scalar, the
/// named curve as `[0]` and the uncompressed public point as `[1]`.
fn ec_private_key(scalar: &[u8], curve: &str, public: &[u8]) -> Vec<u8> {
    sequence(&[
        small_integer(1),
        tlv(OCTET_STRING, scalar),
        tlv(0xa0, &oid(curve)),
        tlv(0xa1, &bit_string(public)),
    ])
}

/// Go's `x509.MarshalPKCS8PrivateKey` of an Ed25519 key: version 0, the algorithm, and the
/// seed in an OCTET STRING (no public key).
fn ed25519_pkcs8(seed: &[u8; 32]) -> Vec<u8> {
    sequence(&[
        small_integer(0),
        sequence(&[oid(ED25519_OID)]),
        tlv(OCTET_STRING, &tlv(OCTET_STRING, seed)),
    ])
}

/// Sprig's `parsePrivateKeyPEM`, with its messages.
pub fn parse_private_key_pem(input: &[u8]) -> Result<PrivateKey, String> {
    let Some((block, _)) = pem::decode(input) else {
        return Err("no PEM data in input".into());
    };
    if block.kind == "PRIVATE KEY" {
        return parse_pkcs8(&block.bytes)
            .map_err(|error| format!("decoding PEM as PKCS#8: {error}"));
    }
    let Some(prefix) = block.kind.strip_suffix(" PRIVATE KEY") else {
        return Err(format!(
            "no private key data in PEM block of type {}",
            block.kind
        ));
    };
    match prefix {
        "RSA" => rsa::RsaPrivateKey::from_pkcs1_der(&block.bytes)
            .map_err(|error| format!("parsing RSA private key from PEM: {error}"))
            .and_then(rsa_key),
        "EC" => parse_sec1(&block.bytes)
            .map_err(|error| format!("parsing EC private key from PEM: {error}")),
        "DSA" => Err("parsing DSA private key from PEM: DSA keys are not supported".into()),
        _ => Err(format!("invalid private key type {}", block.kind)),
    }
}

fn rsa_key(key: rsa::RsaPrivateKey) -> Result<PrivateKey, String> {
    use rsa::traits::PublicKeyParts as _;
    let bits = key.n().bits();
    if bits > MAX_RSA_BITS {
        return Err(format!(
            "an RSA key of {bits} bits exceeds the limit of {MAX_RSA_BITS}"
        ));
    }
    Ok(PrivateKey::Rsa(Box::new(key)))
}

fn parse_pkcs8(der: &[u8]) -> Result<PrivateKey, String> {
    if let Ok(key) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
        return rsa_key(key);
    }
    if let Ok(key) = p256::pkcs8::DecodePrivateKey::from_pkcs8_der(der) {
        return Ok(PrivateKey::P256(key));
    }
    if let Ok(key) = p384::pkcs8::DecodePrivateKey::from_pkcs8_der(der) {
        return Ok(PrivateKey::P384(key));
    }
    ed25519_seed(der).ok_or_else(|| "x509: PKCS#8 wrapping contained an unsupported key".into())
}

/// The seed of a PKCS#8 Ed25519 key (version 0 or 1, public key ignored).
fn ed25519_seed(der: &[u8]) -> Option<PrivateKey> {
    let (_, content, _) = super::der::read(der)?;
    let fields = super::der::children(content)?;
    let (_, algorithm) = fields.get(1)?;
    let (_, algorithm_oid) = super::der::children(algorithm)?.into_iter().next()?;
    if super::der::oid_text(algorithm_oid) != ED25519_OID {
        return None;
    }
    let (_, wrapped) = fields.get(2)?;
    let (tag, seed, rest) = super::der::read(wrapped)?;
    let seed: [u8; 32] = seed.try_into().ok()?;
    (tag == OCTET_STRING && rest.is_empty()).then_some(PrivateKey::Ed25519(seed))
}

fn parse_sec1(der: &[u8]) -> Result<PrivateKey, String> {
    if let Ok(key) = p256::SecretKey::from_sec1_der(der) {
        return Ok(PrivateKey::P256(key));
    }
    p384::SecretKey::from_sec1_der(der)
        .map(PrivateKey::P384)
        .map_err(|_| "x509: unknown or unsupported elliptic curve".into())
}
