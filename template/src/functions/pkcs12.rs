//! ESO's PKCS#12 helpers: `pkcs12key(Pass)`, `pkcs12cert(Pass)` read an archive as go-pkcs12's
//! `DecodeChain` does (exactly one key; the first certificate bag is the leaf, the others its
//! chain, which is then ordered when possible), and `pemToPkcs12(Pass)`, `fullPemToPkcs12(Pass)`,
//! `pemTruststoreToPKCS12(Pass)` write archives like go-pkcs12's `Modern` encoder (PBES2 with
//! AES-256-CBC and PBKDF2-HMAC-SHA-256, HMAC-SHA-256 MAC, 2048 iterations), base64 encoded.
//! Keys come out as Go's `x509.MarshalPKCS8PrivateKey` writes them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use p12_keystore::{
    Certificate, EncryptionAlgorithm, KeyStore, KeyStoreEntry, MacAlgorithm, Pkcs12Archive,
    PrivateKey, PrivateKeyChain,
};
use rsa::pkcs1::DecodeRsaPrivateKey as _;
use rsa::pkcs8::{DecodePrivateKey as _, EncodePrivateKey as _};
use sha1::{Digest as _, Sha1};

use super::der::{self, EC_PUBLIC_KEY, ED25519, OCTET_STRING, RSA_ENCRYPTION, X25519};
use super::pem::{decode, encode_der};
use super::x509::{Cert, order_chain, parse};
use super::{Arity, Entry, FuncError, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("pkcs12key", Arity::Exact(1), |_, a| {
        Ok(Value::str(key("", &string(&a[0])?)?))
    }),
    ("pkcs12keyPass", Arity::Exact(2), |_, a| {
        Ok(Value::str(key(&text(&a[0])?, &string(&a[1])?)?))
    }),
    ("pkcs12cert", Arity::Exact(1), |_, a| {
        Ok(Value::str(certs("", &string(&a[0])?)?))
    }),
    ("pkcs12certPass", Arity::Exact(2), |_, a| {
        Ok(Value::str(certs(&text(&a[0])?, &string(&a[1])?)?))
    }),
    ("pemToPkcs12", Arity::Exact(2), |_, a| {
        Ok(Value::str(pem_to_pkcs12(
            &string(&a[0])?,
            &string(&a[1])?,
            "",
            false,
        )?))
    }),
    ("pemToPkcs12Pass", Arity::Exact(3), |_, a| {
        Ok(Value::str(pem_to_pkcs12(
            &string(&a[0])?,
            &string(&a[1])?,
            &text(&a[2])?,
            false,
        )?))
    }),
    ("fullPemToPkcs12", Arity::Exact(2), |_, a| {
        Ok(Value::str(pem_to_pkcs12(
            &string(&a[0])?,
            &string(&a[1])?,
            "",
            true,
        )?))
    }),
    ("fullPemToPkcs12Pass", Arity::Exact(3), |_, a| {
        Ok(Value::str(pem_to_pkcs12(
            &string(&a[0])?,
            &string(&a[1])?,
            &text(&a[2])?,
            true,
        )?))
    }),
    ("pemTruststoreToPKCS12", Arity::Exact(1), |_, a| {
        Ok(Value::str(truststore(&string(&a[0])?, "")?))
    }),
    ("pemTruststoreToPKCS12Pass", Arity::Exact(2), |_, a| {
        Ok(Value::str(truststore(&string(&a[0])?, &text(&a[1])?)?))
    }),
];

const NIL_DEREFERENCE: &str = "runtime error: invalid memory address or nil pointer dereference";

/// go-pkcs12's `DecodeChain`: the one key and the certificates in bag order.
fn decode_chain(password: &str, archive: &[u8]) -> Result<(Vec<u8>, Vec<Vec<u8>>), String> {
    let archive = Pkcs12Archive::from_pkcs12(archive, password).map_err(|error| match error {
        p12_keystore::error::Error::MacError(_) => {
            "pkcs12: decryption password incorrect".to_owned()
        }
        _ => "pkcs12: error decoding chain".to_owned(),
    })?;
    match archive.keys.len() {
        0 => return Err("pkcs12: private key missing".into()),
        1 => {}
        _ => return Err("pkcs12: expected exactly one key bag".into()),
    }
    let key = archive.keys[0].key.as_der().to_vec();
    let certs = archive
        .certs
        .iter()
        .map(|bag| bag.cert.as_der().to_vec())
        .collect();
    Ok((key, certs))
}

fn key(password: &str, archive: &[u8]) -> Result<Vec<u8>, FuncError> {
    let wrap =
        |message: String| FuncError(format!("unable to decode pkcs12 with password: {message}"));
    let (key, _) = decode_chain(password, archive).map_err(wrap)?;
    let der = marshal_pkcs8(&key)?;
    Ok(encode_der("PRIVATE KEY", &der))
}

fn certs(password: &str, archive: &[u8]) -> Result<Vec<u8>, FuncError> {
    let wrap = |message: String| {
        FuncError(format!(
            "unable to decode pkcs12 certificate with password: {message}"
        ))
    };
    let (_, certs) = decode_chain(password, archive).map_err(wrap)?;
    if certs.is_empty() {
        return Err(NIL_DEREFERENCE.into());
    }
    let unordered: Vec<u8> = certs
        .iter()
        .flat_map(|der| encode_der("CERTIFICATE", der))
        .collect();
    let parsed: Result<Vec<Cert>, _> = certs.iter().map(|der| parse(der)).collect();
    match parsed.and_then(order_chain) {
        Ok(ordered) => Ok(ordered
            .iter()
            .flat_map(|c| encode_der("CERTIFICATE", &c.der))
            .collect()),
        Err(_) => Ok(unordered),
    }
}

/// Re-encodes a PKCS#8 key as Go's `MarshalPKCS8PrivateKey(ParsePKCS8PrivateKey(der))` would.
pub fn marshal_pkcs8(der: &[u8]) -> Result<Vec<u8>, FuncError> {
    let invalid = || FuncError::from("x509: failed to parse private key");
    let (_, info, _) = der::read(der).ok_or_else(invalid)?;
    let parts = der::children(info).ok_or_else(invalid)?;
    let [(_, _), (_, algorithm), (OCTET_STRING, private_key), ..] = parts.as_slice() else {
        return Err(invalid());
    };
    let algorithm = der::children(algorithm).ok_or_else(invalid)?;
    let oid = algorithm
        .first()
        .map(|(_, content)| der::oid_text(content))
        .unwrap_or_default();
    match oid.as_str() {
        RSA_ENCRYPTION => {
            let key = rsa::RsaPrivateKey::from_pkcs8_der(der).map_err(|_| invalid())?;
            Ok(key
                .to_pkcs8_der()
                .map_err(|_| invalid())?
                .as_bytes()
                .to_vec())
        }
        EC_PUBLIC_KEY => {
            let curve = algorithm
                .get(1)
                .map(|(_, c)| der::oid_text(c))
                .ok_or_else(invalid)?;
            ec_pkcs8(&curve, private_key)
        }
        ED25519 | X25519 => {
            let (_, seed, _) = der::read(private_key).ok_or_else(invalid)?;
            Ok(der::sequence(&[
                der::small_integer(0),
                der::sequence(&[der::oid(&oid)]),
                der::tlv(OCTET_STRING, &der::tlv(OCTET_STRING, seed)),
            ]))
        }
        _ => Err("x509: PKCS#8 wrapping contained private key with unknown algorithm".into()),
    }
}

/// PKCS#8 for an EC key from its SEC1 `ECPrivateKey` (curve parameters left out, as Go does).
fn ec_pkcs8(curve: &str, sec1: &[u8]) -> Result<Vec<u8>, FuncError> {
    let invalid = || FuncError::from("x509: failed to parse EC private key");
    let size =
        der::curve_size(curve).ok_or_else(|| FuncError::from("x509: unknown elliptic curve"))?;
    let (_, content, _) = der::read(sec1).ok_or_else(invalid)?;
    let fields = der::children(content).ok_or_else(invalid)?;
    let scalar = fields
        .iter()
        .find(|(tag, _)| *tag == OCTET_STRING)
        .ok_or_else(invalid)?
        .1;
    let mut inner = vec![
        der::small_integer(1),
        der::tlv(OCTET_STRING, &der::pad(scalar, size)),
    ];
    if let Some((_, public)) = fields.iter().find(|(tag, _)| *tag == 0xa1) {
        inner.push(der::tlv(0xa1, public));
    }
    Ok(der::sequence(&[
        der::small_integer(0),
        der::sequence(&[der::oid(EC_PUBLIC_KEY), der::oid(curve)]),
        der::tlv(OCTET_STRING, &der::sequence(&inner)),
    ]))
}

/// Whether `der` parses as a private key of any kind Go's `parsePrivateKey` accepts.
pub fn is_private_key(der: &[u8]) -> bool {
    rsa::RsaPrivateKey::from_pkcs1_der(der).is_ok()
        || marshal_pkcs8(der).is_ok()
        || sec1_to_pkcs8(der).is_ok()
}

fn sec1_to_pkcs8(der: &[u8]) -> Result<Vec<u8>, FuncError> {
    let invalid = || FuncError::from("unable to parse private key type");
    let (_, content, _) = der::read(der).ok_or_else(invalid)?;
    let fields = der::children(content).ok_or_else(invalid)?;
    let (_, parameters) = fields
        .iter()
        .find(|(tag, _)| *tag == 0xa0)
        .ok_or_else(invalid)?;
    let (_, curve, _) = der::read(parameters).ok_or_else(invalid)?;
    ec_pkcs8(&der::oid_text(curve), der)
}

/// upstream's `parsePrivateKey` (PKCS#1, PKCS#8, SEC1), as PKCS#8.
fn private_key_pkcs8(der: &[u8]) -> Result<Vec<u8>, FuncError> {
    if let Ok(key) = rsa::RsaPrivateKey::from_pkcs1_der(der) {
        return Ok(key
            .to_pkcs8_der()
            .map_err(|_| FuncError::from("unable to parse private key type"))?
            .as_bytes()
            .to_vec());
    }
    marshal_pkcs8(der).or_else(|_| sec1_to_pkcs8(der))
}

fn certificate(der: &[u8]) -> Result<Certificate, FuncError> {
    parse(der)?;
    Certificate::from_der(der).map_err(|_| FuncError::from("x509: malformed certificate"))
}

/// upstream's `parseCaCerts`: every PEM block until the input ends (leftover text that is not a
/// block fails, as the nil block does in Go).
fn ca_certs(mut data: &[u8]) -> Result<Vec<Certificate>, FuncError> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let (block, rest) = decode(data).ok_or_else(|| FuncError::from(NIL_DEREFERENCE))?;
        out.push(certificate(&block.bytes)?);
        data = rest;
    }
    Ok(out)
}

fn write(store: &KeyStore, password: &str) -> Result<Vec<u8>, FuncError> {
    let bytes = store
        .writer(password)
        .encryption_algorithm(EncryptionAlgorithm::PbeWithHmacSha256AndAes256)
        .encryption_iterations(2048)
        .mac_algorithm(MacAlgorithm::HmacSha256)
        .mac_iterations(2048)
        .write()
        .map_err(|_| FuncError::from("pkcs12: could not encode archive"))?;
    Ok(STANDARD.encode(bytes).into_bytes())
}

fn pem_to_pkcs12(
    cert: &[u8],
    key: &[u8],
    password: &str,
    chain: bool,
) -> Result<Vec<u8>, FuncError> {
    let (block, rest) = decode(cert).ok_or_else(|| FuncError::from(NIL_DEREFERENCE))?;
    let leaf = certificate(&block.bytes)?;
    let mut certs = vec![leaf];
    if chain {
        certs.extend(ca_certs(rest)?);
    }
    let (key_block, _) = decode(key).ok_or_else(|| FuncError::from(NIL_DEREFERENCE))?;
    let pkcs8 = private_key_pkcs8(&key_block.bytes)?;
    let private_key = PrivateKey::from_der(&pkcs8)
        .map_err(|_| FuncError::from("unable to parse private key type"))?;
    let local_key_id = Sha1::digest(&block.bytes).to_vec();
    let mut store = KeyStore::new();
    let entry = PrivateKeyChain::new(local_key_id, private_key, certs);
    store.add_entry("1", KeyStoreEntry::PrivateKeyChain(entry));
    write(&store, password)
}

fn truststore(certs: &[u8], password: &str) -> Result<Vec<u8>, FuncError> {
    let mut store = KeyStore::new();
    for (index, cert) in ca_certs(certs)?.into_iter().enumerate() {
        store.add_entry(&format!("{index:04}"), KeyStoreEntry::Certificate(cert));
    }
    write(&store, password)
}
