//! Sprig's certificate functions (crypto.go): `buildCustomCert`, `genCA`, `genCAWithKey`,
//! `genSelfSignedCert`, `genSelfSignedCertWithKey`, `genSignedCert` and
//! `genSignedCertWithKey`. Each returns Sprig's `certificate` struct (`.Cert` and `.Key`, PEM)
//! and builds what Go's `getBaseCertTemplate` describes: a random positive 128-bit serial, the
//! common name as the only subject attribute, validity from now for `daysValid` days, key usages
//! key encipherment and digital signature (plus certificate signing for a CA), extended key
//! usages server and client authentication, basic constraints (CA or not), and the given DNS
//! names and IP addresses as subject alternative names. New keys are RSA 2048, as Sprig's.

use std::collections::BTreeMap;
use std::net::IpAddr;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, DnValue,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyUsagePurpose, SanType, SerialNumber,
};

use super::encoding::decode_base64;
use super::keys::{PrivateKey, RSA_CERTIFICATE_KEY_BITS, parse_private_key_pem};
use super::pem::{decode, encode_der};
use super::{Arity, Ctx, Entry, FuncError, FuncResult, int, string, strval, wrong_type};
use crate::value::{MapKind, Value, lossy};

pub const FUNCTIONS: &[Entry] = &[
    ("buildCustomCert", Arity::Exact(2), build_custom_cert),
    ("genCA", Arity::Exact(2), |ctx, a| {
        let key = new_key()?;
        certificate_authority(ctx, &a[0], &a[1], key)
    }),
    ("genCAWithKey", Arity::Exact(3), |ctx, a| {
        let key = given_key(&a[2])?;
        certificate_authority(ctx, &a[0], &a[1], key)
    }),
    ("genSelfSignedCert", Arity::Exact(4), |ctx, a| {
        let key = new_key()?;
        self_signed(ctx, a, key)
    }),
    ("genSelfSignedCertWithKey", Arity::Exact(5), |ctx, a| {
        let key = given_key(&a[4])?;
        self_signed(ctx, a, key)
    }),
    ("genSignedCert", Arity::Exact(5), |ctx, a| {
        let key = new_key()?;
        signed(ctx, a, key)
    }),
    ("genSignedCertWithKey", Arity::Exact(6), |ctx, a| {
        let key = given_key(&a[5])?;
        signed(ctx, a, key)
    }),
];

/// The validity Go can represent: `time.Hour * 24 * time.Duration(daysValid)` overflows an
/// `int64` of nanoseconds past this many days (Go then wraps around; this refuses).
const MAX_DAYS_VALID: i64 = 106_751;

fn new_key() -> Result<PrivateKey, FuncError> {
    PrivateKey::generate_rsa(RSA_CERTIFICATE_KEY_BITS)
        .map_err(|error| FuncError(format!("error generating rsa key: {error}")))
}

fn given_key(pem: &Value) -> Result<PrivateKey, FuncError> {
    parse_private_key_pem(&string(pem)?)
        .map_err(|error| FuncError(format!("parsing private key: {error}")))
}

/// Sprig's `certificate` value.
fn certificate(ctx: &mut Ctx, cert: Vec<u8>, key: Vec<u8>) -> Value {
    let entries = BTreeMap::from([
        ("Cert".to_owned(), Value::str(cert)),
        ("Key".to_owned(), Value::str(key)),
    ]);
    let map = Value::new_map(entries, MapKind::Certificate);
    ctx.arena.push(map.clone());
    Value::Map(map)
}

/// The `Cert` and `Key` of a `certificate` argument.
fn certificate_fields(value: &Value) -> Result<(Vec<u8>, Vec<u8>), FuncError> {
    match value {
        Value::Map(map) if map.borrow().kind == MapKind::Certificate => {
            let map = map.borrow();
            let field = |name: &str| match map.entries.get(name) {
                Some(Value::Str(bytes)) => bytes.to_vec(),
                _ => Vec::new(),
            };
            Ok((field("Cert"), field("Key")))
        }
        other => Err(wrong_type("sprig.certificate", other)),
    }
}

fn build_custom_cert(ctx: &mut Ctx, args: &[Value]) -> FuncResult {
    let cert = decode_base64(&string(&args[0])?, false)
        .map_err(|_| FuncError::from("unable to decode base64 certificate"))?;
    let key = decode_base64(&string(&args[1])?, false)
        .map_err(|_| FuncError::from("unable to decode base64 private key"))?;
    let Some((block, _)) = decode(&cert) else {
        return Err("unable to decode certificate".into());
    };
    parse_certificate(&block.bytes)
        .map_err(|error| format!("error parsing certificate: decodedCert.Bytes: {error}"))?;
    parse_private_key_pem(&key).map_err(|error| format!("error parsing private key: {error}"))?;
    Ok(certificate(ctx, cert, key))
}

fn parse_certificate(der: &[u8]) -> Result<x509_parser::certificate::X509Certificate<'_>, String> {
    match x509_parser::parse_x509_certificate(der) {
        Ok((rest, _)) if !rest.is_empty() => Err("x509: trailing data".into()),
        Ok((_, cert)) => Ok(cert),
        Err(_) => Err("x509: malformed certificate".into()),
    }
}

fn certificate_authority(ctx: &mut Ctx, cn: &Value, days: &Value, key: PrivateKey) -> FuncResult {
    let mut params = base_params(&string(cn)?, &Value::Nil, &Value::Nil, days)?;
    params.key_usages.push(KeyUsagePurpose::KeyCertSign);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key_pair = key.key_pair().map_err(creating)?;
    let cert = params.self_signed(&key_pair).map_err(creating)?;
    finish(ctx, cert.der(), &key)
}

/// `cn ips alternateDNS daysValid`.
fn self_signed(ctx: &mut Ctx, args: &[Value], key: PrivateKey) -> FuncResult {
    let params = base_params(&string(&args[0])?, &args[1], &args[2], &args[3])?;
    let key_pair = key.key_pair().map_err(creating)?;
    let cert = params.self_signed(&key_pair).map_err(creating)?;
    finish(ctx, cert.der(), &key)
}

/// `cn ips alternateDNS daysValid ca`.
fn signed(ctx: &mut Ctx, args: &[Value], key: PrivateKey) -> FuncResult {
    let cn = string(&args[0])?;
    let (ca_cert, ca_key) = certificate_fields(&args[4])?;
    let Some((block, _)) = decode(&ca_cert) else {
        return Err("unable to decode certificate".into());
    };
    let parsed = parse_certificate(&block.bytes)
        .map_err(|error| format!("error parsing certificate: decodedSignerCert.Bytes: {error}"))?;
    let signer_key = parse_private_key_pem(&ca_key)
        .map_err(|error| format!("error parsing private key: {error}"))?;
    let mut params = base_params(&cn, &args[1], &args[2], &args[3])?;
    let signer = signer_key.key_pair().map_err(creating)?;
    if parsed.public_key().subject_public_key.data.as_ref() != signer.public_key_raw() {
        return Err(creating(
            "x509: provided PrivateKey doesn't match parent's PublicKey",
        ));
    }
    // Go names the issuer's key when the issuer has a subject key identifier.
    params.use_authority_key_identifier_extension = parsed.extensions().iter().any(|e| {
        matches!(
            e.parsed_extension(),
            x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(_)
        )
    });
    let issuer = Issuer::from_ca_cert_der(&block.bytes.clone().into(), signer).map_err(creating)?;
    let key_pair = key.key_pair().map_err(creating)?;
    let cert = params.signed_by(&key_pair, &issuer).map_err(creating)?;
    finish(ctx, cert.der(), &key)
}

fn creating(error: impl std::fmt::Display) -> FuncError {
    FuncError(format!("error creating certificate: {error}"))
}

fn finish(ctx: &mut Ctx, der: &[u8], key: &PrivateKey) -> FuncResult {
    let key_pem = key
        .to_pem()
        .map_err(|error| FuncError(format!("error pem-encoding key: {error}")))?;
    Ok(certificate(
        ctx,
        encode_der("CERTIFICATE", der),
        key_pem.into_bytes(),
    ))
}

/// Go's `getBaseCertTemplate`.
fn base_params(
    cn: &[u8],
    ips: &Value,
    alternate_dns: &Value,
    days: &Value,
) -> Result<CertificateParams, FuncError> {
    let days = int(days)?;
    if days.abs() > MAX_DAYS_VALID {
        return Err(FuncError(format!(
            "daysValid {days} is out of range (at most {MAX_DAYS_VALID} days either way)"
        )));
    }
    let mut params = CertificateParams::default();
    params.subject_alt_names = dns_names(alternate_dns)?;
    params.subject_alt_names.extend(ip_addresses(ips)?);
    params.distinguished_name = DistinguishedName::new();
    if !cn.is_empty() {
        params
            .distinguished_name
            .push(DnType::CommonName, name_value(&lossy(cn)));
    }
    let mut serial = [0u8; 16];
    getrandom::fill(&mut serial).map_err(|error| FuncError(error.to_string()))?;
    params.serial_number = Some(SerialNumber::from_slice(&serial));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs() as i64);
    let timestamp = |seconds: i64| {
        time::OffsetDateTime::from_unix_timestamp(seconds)
            .map_err(|error| FuncError(error.to_string()))
    };
    params.not_before = timestamp(now)?;
    params.not_after = timestamp(now + days * 86_400)?;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    params.is_ca = IsCa::ExplicitNoCa;
    Ok(params)
}

/// Go's ASN.1 string choice for a name: PrintableString when it fits, else UTF8String.
fn name_value(text: &str) -> DnValue {
    match rcgen::string::PrintableString::try_from(text) {
        Ok(printable) => DnValue::PrintableString(printable),
        Err(_) => DnValue::Utf8String(text.to_owned()),
    }
}

/// The elements of an `[]interface{}` parameter (nil is empty).
fn items(value: &Value) -> Result<&[Value], FuncError> {
    match value {
        Value::Nil => Ok(&[]),
        Value::List(items) => Ok(items),
        other => Err(wrong_type("[]interface {}", other)),
    }
}

/// The texts of an `[]interface{}` of strings; `context` starts the error for an element that
/// is not one.
fn texts(value: &Value, context: &str) -> Result<Vec<String>, FuncError> {
    items(value)?
        .iter()
        .map(|item| match item {
            Value::Str(text) => Ok(lossy(text)),
            other => Err(FuncError(format!(
                "{context}: {} is not a string",
                lossy(&strval(other))
            ))),
        })
        .collect()
}

/// Go's `getNetIPs`.
fn ip_addresses(ips: &Value) -> Result<Vec<SanType>, FuncError> {
    texts(ips, "error parsing ip")?
        .into_iter()
        .map(|text| {
            // Go writes an IPv4-mapped IPv6 address as its four IPv4 bytes.
            text.parse::<IpAddr>()
                .map(|ip| SanType::IpAddress(ip.to_canonical()))
                .map_err(|_| FuncError(format!("error parsing ip: {text}")))
        })
        .collect()
}

/// Go's `getAlternateDNSStrs`, and `x509.CreateCertificate`'s IA5String check.
fn dns_names(names: &Value) -> Result<Vec<SanType>, FuncError> {
    texts(names, "error processing alternate dns name")?
        .into_iter()
        .map(|text| {
            rcgen::string::Ia5String::try_from(text.as_str())
                .map(SanType::DnsName)
                .map_err(|_| creating(format!("x509: {text:?} cannot be encoded as an IA5String")))
        })
        .collect()
}
