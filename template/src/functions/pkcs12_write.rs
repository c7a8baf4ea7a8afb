//! PKCS#12 archives written as go-pkcs12's `Modern` encoder (v0.7, `Modern2023`) writes them,
//! byte for byte given the same random bytes: certificates in a PBES2-encrypted SafeContents,
//! the key as a PBES2-shrouded key bag in a plain one (PBKDF2-HMAC-SHA-256, 2048 iterations,
//! AES-256-CBC, 16-byte salts), and an HMAC-SHA-256 MAC keyed by the PKCS#12 KDF. Trust stores
//! mark each certificate for Java and name it by its subject, as `EncodeTrustStore` does.

use aes::cipher::{BlockCipherEncrypt as _, KeyInit as _};
use hmac::{Hmac, Mac as _};
use sha1::{Digest as _, Sha1};
use sha2::Sha256;

use super::FuncError;
use super::der::{self, OCTET_STRING, sequence, tlv};

/// Where random bytes come from: the operating system, or a fixed source in tests.
pub type Random<'a> = &'a mut dyn FnMut(&mut [u8]) -> Result<(), FuncError>;

const DATA: &str = "1.2.840.113549.1.7.1";
const ENCRYPTED_DATA: &str = "1.2.840.113549.1.7.6";
const CERT_BAG: &str = "1.2.840.113549.1.12.10.1.3";
const SHROUDED_KEY_BAG: &str = "1.2.840.113549.1.12.10.1.2";
const X509_CERTIFICATE: &str = "1.2.840.113549.1.9.22.1";
const LOCAL_KEY_ID: &str = "1.2.840.113549.1.9.21";
const FRIENDLY_NAME: &str = "1.2.840.113549.1.9.20";
const JAVA_TRUST_STORE: &str = "2.16.840.1.113894.746875.1.1";
const ANY_EXTENDED_KEY_USAGE: &str = "2.5.29.37.0";
const PBES2: &str = "1.2.840.113549.1.5.13";
const PBKDF2: &str = "1.2.840.113549.1.5.12";
const HMAC_WITH_SHA256: &str = "1.2.840.113549.2.9";
const AES256_CBC: &str = "2.16.840.1.101.3.4.1.42";
const SHA256: &str = "2.16.840.1.101.3.4.2.1";

const ITERATIONS: u32 = 2048;
const SALT_LEN: usize = 16;
const SET: u8 = 0x31;
const BMP_STRING: u8 = 0x1e;
/// `[0]`, constructed (EXPLICIT) and primitive (IMPLICIT OCTET STRING).
const EXPLICIT_0: u8 = 0xa0;
const IMPLICIT_0: u8 = 0x80;

/// go-pkcs12's `Encode`: `key` (PKCS#8 DER), the end-entity certificate and CA certificates
/// (DER), protected by `password`.
pub fn encode(
    key: &[u8],
    certificate: &[u8],
    ca_certs: &[Vec<u8>],
    password: &str,
    random: Random,
) -> Result<Vec<u8>, FuncError> {
    let secret = Password::new(password)?;
    let fingerprint = Sha1::digest(certificate);
    let local_key_id = attribute(LOCAL_KEY_ID, &tlv(OCTET_STRING, &fingerprint));
    let shrouded = encrypted_private_key_info(key, &secret, random)?;
    let key_bag = safe_bag(SHROUDED_KEY_BAG, &shrouded, vec![local_key_id.clone()]);
    let mut cert_bags = vec![cert_bag(certificate, vec![local_key_id])];
    cert_bags.extend(ca_certs.iter().map(|der| cert_bag(der, Vec::new())));
    let safes = [
        encrypted_contents(&cert_bags, &secret, random)?,
        plain_contents(&[key_bag]),
    ];
    pfx(&safes, &secret, random)
}

/// go-pkcs12's `EncodeTrustStore`: each certificate (DER) trusted for any purpose and named
/// `friendly_name` (the subject, as `pkix.Name.String` prints it).
pub fn encode_trust_store(
    certs: &[(Vec<u8>, String)],
    password: &str,
    random: Random,
) -> Result<Vec<u8>, FuncError> {
    let secret = Password::new(password)?;
    let trusted = attribute(JAVA_TRUST_STORE, &der::oid(ANY_EXTENDED_KEY_USAGE));
    let mut bags = Vec::new();
    for (der, friendly_name) in certs {
        let name = attribute(FRIENDLY_NAME, &tlv(BMP_STRING, &bmp_string(friendly_name)?));
        bags.push(cert_bag(der, vec![trusted.clone(), name]));
    }
    let safes = [encrypted_contents(&bags, &secret, random)?];
    pfx(&safes, &secret, random)
}

/// The password as PKCS#12 (a zero-terminated BMPString, for the MAC) and PBES2 (UTF-8) use it.
struct Password {
    bmp: Vec<u8>,
    utf8: Vec<u8>,
}

impl Password {
    fn new(password: &str) -> Result<Password, FuncError> {
        let mut bmp = bmp_string(password)?;
        bmp.extend_from_slice(&[0, 0]);
        Ok(Password {
            bmp,
            utf8: password.as_bytes().to_vec(),
        })
    }
}

/// UTF-16 big-endian, refusing characters outside the Basic Multilingual Plane.
fn bmp_string(text: &str) -> Result<Vec<u8>, FuncError> {
    let mut out = Vec::with_capacity(text.len() * 2);
    for c in text.chars() {
        let unit = u16::try_from(u32::from(c)).map_err(|_| {
            FuncError::from("pkcs12: string contains characters that cannot be encoded in UCS-2")
        })?;
        out.extend_from_slice(&unit.to_be_bytes());
    }
    Ok(out)
}

/// `Attribute ::= SEQUENCE { type, SET { value } }`.
fn attribute(kind: &str, value: &[u8]) -> Vec<u8> {
    sequence(&[der::oid(kind), tlv(SET, value)])
}

/// `SafeBag ::= SEQUENCE { bagId, [0] EXPLICIT bagValue, SET OF attributes }`; the set is
/// written even when empty and sorted, as Go's `encoding/asn1` writes a non-nil slice.
fn safe_bag(kind: &str, value: &[u8], mut attributes: Vec<Vec<u8>>) -> Vec<u8> {
    attributes.sort();
    sequence(&[
        der::oid(kind),
        tlv(EXPLICIT_0, value),
        tlv(SET, &attributes.concat()),
    ])
}

fn cert_bag(der: &[u8], attributes: Vec<Vec<u8>>) -> Vec<u8> {
    let value = sequence(&[
        der::oid(X509_CERTIFICATE),
        tlv(EXPLICIT_0, &tlv(OCTET_STRING, der)),
    ]);
    safe_bag(CERT_BAG, &value, attributes)
}

/// `ContentInfo` of type data holding `bags`.
fn plain_contents(bags: &[Vec<u8>]) -> Vec<u8> {
    data_content(&sequence(bags))
}

fn data_content(bytes: &[u8]) -> Vec<u8> {
    sequence(&[der::oid(DATA), tlv(EXPLICIT_0, &tlv(OCTET_STRING, bytes))])
}

/// `ContentInfo` of type encryptedData holding `bags`, PBES2-encrypted.
fn encrypted_contents(
    bags: &[Vec<u8>],
    secret: &Password,
    random: Random,
) -> Result<Vec<u8>, FuncError> {
    let (algorithm, ciphertext) = pbes2(&sequence(bags), secret, random)?;
    let content_info = sequence(&[der::oid(DATA), algorithm, tlv(IMPLICIT_0, &ciphertext)]);
    let encrypted_data = sequence(&[der::small_integer(0), content_info]);
    Ok(sequence(&[
        der::oid(ENCRYPTED_DATA),
        tlv(EXPLICIT_0, &encrypted_data),
    ]))
}

/// `EncryptedPrivateKeyInfo ::= SEQUENCE { algorithm, OCTET STRING }` for a PKCS#8 key.
fn encrypted_private_key_info(
    key: &[u8],
    secret: &Password,
    random: Random,
) -> Result<Vec<u8>, FuncError> {
    let (algorithm, ciphertext) = pbes2(key, secret, random)?;
    Ok(sequence(&[algorithm, tlv(OCTET_STRING, &ciphertext)]))
}

/// PBES2 over `plaintext`: the AlgorithmIdentifier (salt drawn first, then the IV) and the
/// AES-256-CBC ciphertext with PKCS#7 padding.
fn pbes2(
    plaintext: &[u8],
    secret: &Password,
    random: Random,
) -> Result<(Vec<u8>, Vec<u8>), FuncError> {
    let mut salt = [0; SALT_LEN];
    random(&mut salt)?;
    let mut iv = [0; 16];
    random(&mut iv)?;
    let kdf_parameters = sequence(&[
        tlv(OCTET_STRING, &salt),
        der::unsigned_integer(&ITERATIONS.to_be_bytes()),
        sequence(&[der::oid(HMAC_WITH_SHA256)]),
    ]);
    let algorithm = sequence(&[
        der::oid(PBES2),
        sequence(&[
            sequence(&[der::oid(PBKDF2), kdf_parameters]),
            sequence(&[der::oid(AES256_CBC), tlv(OCTET_STRING, &iv)]),
        ]),
    ]);
    let key = pbkdf2_sha256(&secret.utf8, &salt, ITERATIONS);
    Ok((algorithm, aes256_cbc(&key, iv, plaintext)))
}

/// AES-256-CBC with PKCS#7 padding.
pub(super) fn aes256_cbc(key: &[u8; 32], iv: [u8; 16], plaintext: &[u8]) -> Vec<u8> {
    let cipher = aes::Aes256::new(key.into());
    let padding = 16 - plaintext.len() % 16;
    let mut data = plaintext.to_vec();
    data.resize(plaintext.len() + padding, padding as u8);
    let mut previous = iv;
    for chunk in data.chunks_exact_mut(16) {
        let mut block = [0; 16];
        for (out, (byte, prev)) in block.iter_mut().zip(chunk.iter().zip(previous)) {
            *out = byte ^ prev;
        }
        let mut block = aes::Block::from(block);
        cipher.encrypt_block(&mut block);
        chunk.copy_from_slice(&block);
        previous.copy_from_slice(chunk);
    }
    data
}

fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// PBKDF2-HMAC-SHA-256 for one 32-byte block (RFC 8018 5.2).
fn pbkdf2_sha256(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut u = hmac_sha256(password, &[salt, &1u32.to_be_bytes()].concat());
    let mut key = u;
    for _ in 1..iterations {
        u = hmac_sha256(password, &u);
        key.iter_mut().zip(u).for_each(|(k, b)| *k ^= b);
    }
    key
}

/// The PKCS#12 KDF (RFC 7292 B.2) with SHA-256 for the MAC key (ID 3). One hash output is the
/// whole key, so the I-update step between rounds never runs.
fn pkcs12_mac_key(salt: &[u8], password: &[u8], iterations: u32) -> [u8; 32] {
    const BLOCK: usize = 64;
    let repeat = |pattern: &[u8]| -> Vec<u8> {
        let length = BLOCK * pattern.len().div_ceil(BLOCK);
        pattern.iter().copied().cycle().take(length).collect()
    };
    let mut input = vec![3u8; BLOCK];
    input.extend(repeat(salt));
    input.extend(repeat(password));
    let mut digest: [u8; 32] = Sha256::digest(&input).into();
    for _ in 1..iterations {
        digest = Sha256::digest(digest).into();
    }
    digest
}

/// The PFX: version 3, the authenticated safe of `safes`, and its MAC.
fn pfx(safes: &[Vec<u8>], secret: &Password, random: Random) -> Result<Vec<u8>, FuncError> {
    let authenticated_safe = sequence(safes);
    let mut salt = [0; SALT_LEN];
    random(&mut salt)?;
    let key = pkcs12_mac_key(&salt, &secret.bmp, ITERATIONS);
    let digest = hmac_sha256(&key, &authenticated_safe);
    let mac_data = sequence(&[
        sequence(&[sequence(&[der::oid(SHA256)]), tlv(OCTET_STRING, &digest)]),
        tlv(OCTET_STRING, &salt),
        der::unsigned_integer(&ITERATIONS.to_be_bytes()),
    ]);
    Ok(sequence(&[
        der::small_integer(3),
        data_content(&authenticated_safe),
        mac_data,
    ]))
}
