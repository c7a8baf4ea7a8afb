//! ESO's PKCS#12 helpers: `pkcs12key(Pass)`, `pkcs12cert(Pass)` read an archive as go-pkcs12's
//! `DecodeChain` does (exactly one key; the first certificate bag is the leaf, the others its
//! chain, which is then ordered when possible), and `pemToPkcs12(Pass)`, `fullPemToPkcs12(Pass)`,
//! `pemTruststoreToPKCS12(Pass)` write archives as go-pkcs12's `Modern` encoder does
//! ([`pkcs12_write`]), base64 encoded. Keys come out as Go's `x509.MarshalPKCS8PrivateKey`
//! writes them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use p12_keystore::Pkcs12Archive;
use rsa::pkcs1::DecodeRsaPrivateKey as _;
use rsa::pkcs8::{DecodePrivateKey as _, EncodePrivateKey as _};

use super::der::{self, EC_PUBLIC_KEY, ED25519, OCTET_STRING, RSA_ENCRYPTION, X25519};
use super::pem::{decode, encode_der};
use super::pkcs12_write::{self, Random};
use super::x509::{Cert, order_chain, parse};
use super::{Arity, Entry, FuncError, pkix_name, string, text};
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
        let (cert, key) = (string(&a[0])?, string(&a[1])?);
        Ok(Value::str(pem_to_pkcs12(
            &cert,
            &key,
            "",
            false,
            &mut os_random,
        )?))
    }),
    ("pemToPkcs12Pass", Arity::Exact(3), |_, a| {
        let (cert, key, password) = (string(&a[0])?, string(&a[1])?, text(&a[2])?);
        Ok(Value::str(pem_to_pkcs12(
            &cert,
            &key,
            &password,
            false,
            &mut os_random,
        )?))
    }),
    ("fullPemToPkcs12", Arity::Exact(2), |_, a| {
        let (cert, key) = (string(&a[0])?, string(&a[1])?);
        Ok(Value::str(pem_to_pkcs12(
            &cert,
            &key,
            "",
            true,
            &mut os_random,
        )?))
    }),
    ("fullPemToPkcs12Pass", Arity::Exact(3), |_, a| {
        let (cert, key, password) = (string(&a[0])?, string(&a[1])?, text(&a[2])?);
        Ok(Value::str(pem_to_pkcs12(
            &cert,
            &key,
            &password,
            true,
            &mut os_random,
        )?))
    }),
    ("pemTruststoreToPKCS12", Arity::Exact(1), |_, a| {
        Ok(Value::str(truststore(&string(&a[0])?, "", &mut os_random)?))
    }),
    ("pemTruststoreToPKCS12Pass", Arity::Exact(2), |_, a| {
        let (certs, password) = (string(&a[0])?, text(&a[1])?);
        Ok(Value::str(truststore(&certs, &password, &mut os_random)?))
    }),
];

/// Random bytes from the operating system, as Go's `crypto/rand.Reader`.
fn os_random(buffer: &mut [u8]) -> Result<(), FuncError> {
    getrandom::fill(buffer).map_err(|_| FuncError::from("no randomness available"))
}

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

/// A DER certificate Go's `x509.ParseCertificate` would take.
fn certificate(der: &[u8]) -> Result<Vec<u8>, FuncError> {
    parse(der)?;
    Ok(der.to_vec())
}

/// upstream's `parseCaCerts`: every PEM block until the input ends (leftover text that is not a
/// block fails, as the nil block does in Go).
fn ca_certs(mut data: &[u8]) -> Result<Vec<Vec<u8>>, FuncError> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let (block, rest) = decode(data).ok_or_else(|| FuncError::from(NIL_DEREFERENCE))?;
        out.push(certificate(&block.bytes)?);
        data = rest;
    }
    Ok(out)
}

/// upstream's `pemToPkcs12Pass` (`chain`: `fullPemToPkcs12Pass`, the certificates after the
/// first are CA certificates), base64 encoded.
pub(crate) fn pem_to_pkcs12(
    cert: &[u8],
    key: &[u8],
    password: &str,
    chain: bool,
    random: Random,
) -> Result<Vec<u8>, FuncError> {
    let (block, rest) = decode(cert).ok_or_else(|| FuncError::from(NIL_DEREFERENCE))?;
    let leaf = certificate(&block.bytes)?;
    let ca_certs = if chain { ca_certs(rest)? } else { Vec::new() };
    let (key_block, _) = decode(key).ok_or_else(|| FuncError::from(NIL_DEREFERENCE))?;
    let pkcs8 = private_key_pkcs8(&key_block.bytes)?;
    let archive = pkcs12_write::encode(&pkcs8, &leaf, &ca_certs, password, random)?;
    Ok(STANDARD.encode(archive).into_bytes())
}

/// upstream's `pemTruststoreToPKCS12Pass`, base64 encoded.
pub(crate) fn truststore(
    certs: &[u8],
    password: &str,
    random: Random,
) -> Result<Vec<u8>, FuncError> {
    let entries = ca_certs(certs)?
        .into_iter()
        .map(|der| {
            let name = pkix_name::subject(&der)?;
            Ok((der, name))
        })
        .collect::<Result<Vec<_>, FuncError>>()?;
    let archive = pkcs12_write::encode_trust_store(&entries, password, random)?;
    Ok(STANDARD.encode(archive).into_bytes())
}
