//! ESO's `jwkPublicKeyPem` and `jwkPrivateKeyPem`: a JSON Web Key (RSA, EC P-256/384/521, OKP
//! Ed25519/X25519) as the PEM Go's `x509.MarshalPKIXPublicKey` / `MarshalPKCS8PrivateKey`
//! write.

use rsa::BigUint;
use rsa::pkcs8::EncodePrivateKey as _;

use super::der::{
    self, EC_PUBLIC_KEY, ED25519, OCTET_STRING, P256, P384, P521, RSA_ENCRYPTION, X25519,
};
use super::encoding::decode_base64;
use super::pem::encode_der;
use super::{Arity, Entry, FuncError, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("jwkPublicKeyPem", Arity::Exact(1), |_, a| {
        let key = Jwk::parse(&text(&a[0])?)?;
        Ok(Value::str(encode_der("PUBLIC KEY", &key.public_der()?)))
    }),
    ("jwkPrivateKeyPem", Arity::Exact(1), |_, a| {
        let key = Jwk::parse(&text(&a[0])?)?;
        Ok(Value::str(encode_der("PRIVATE KEY", &key.private_der()?)))
    }),
];

struct Jwk {
    fields: serde_json::Map<String, serde_json::Value>,
    kty: String,
}

impl Jwk {
    fn parse(json: &str) -> Result<Jwk, FuncError> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|_| FuncError::from("failed to parse key: invalid JSON"))?;
        let serde_json::Value::Object(fields) = value else {
            return Err("failed to parse key: not a JSON object".into());
        };
        let kty = match fields.get("kty") {
            Some(serde_json::Value::String(kty)) => kty.clone(),
            _ => return Err("failed to parse key: invalid key type".into()),
        };
        Ok(Jwk { fields, kty })
    }

    /// A base64url member (padding optional, as jwx accepts).
    fn bytes(&self, name: &str) -> Result<Vec<u8>, FuncError> {
        let Some(serde_json::Value::String(encoded)) = self.fields.get(name) else {
            return Err(FuncError(format!(
                "failed to parse key: required field {name} is missing"
            )));
        };
        let trimmed = encoded.trim_end_matches('=');
        let padded = format!("{trimmed}{}", "=".repeat((4 - trimmed.len() % 4) % 4));
        decode_base64(padded.as_bytes(), true).map_err(|_| {
            FuncError(format!(
                "failed to parse key: invalid base64 in field {name}"
            ))
        })
    }

    fn has(&self, name: &str) -> bool {
        self.fields.contains_key(name)
    }

    fn curve(&self) -> Result<(&'static str, usize), FuncError> {
        match self.fields.get("crv").and_then(|c| c.as_str()) {
            Some("P-256") => Ok((P256, 32)),
            Some("P-384") => Ok((P384, 48)),
            Some("P-521") => Ok((P521, 66)),
            _ => Err("failed to parse key: unsupported elliptic curve".into()),
        }
    }

    fn okp_oid(&self) -> Result<&'static str, FuncError> {
        match self.fields.get("crv").and_then(|c| c.as_str()) {
            Some("Ed25519") => Ok(ED25519),
            Some("X25519") => Ok(X25519),
            _ => Err("failed to parse key: unsupported OKP curve".into()),
        }
    }

    fn ec_point(&self, size: usize) -> Result<Vec<u8>, FuncError> {
        Ok([
            vec![4u8],
            der::pad(&self.bytes("x")?, size),
            der::pad(&self.bytes("y")?, size),
        ]
        .concat())
    }

    fn public_der(&self) -> Result<Vec<u8>, FuncError> {
        match self.kty.as_str() {
            "RSA" => {
                let public = der::sequence(&[
                    der::unsigned_integer(&self.bytes("n")?),
                    der::unsigned_integer(&self.bytes("e")?),
                ]);
                Ok(der::sequence(&[
                    der::sequence(&[der::oid(RSA_ENCRYPTION), der::tlv(der::NULL, &[])]),
                    der::bit_string(&public),
                ]))
            }
            "EC" => {
                let (curve, size) = self.curve()?;
                Ok(der::sequence(&[
                    der::sequence(&[der::oid(EC_PUBLIC_KEY), der::oid(curve)]),
                    der::bit_string(&self.ec_point(size)?),
                ]))
            }
            "OKP" => Ok(der::sequence(&[
                der::sequence(&[der::oid(self.okp_oid()?)]),
                der::bit_string(&self.bytes("x")?),
            ])),
            "oct" => Err("x509: unsupported public key type: []uint8".into()),
            _ => Err("failed to parse key: invalid key type".into()),
        }
    }

    fn private_der(&self) -> Result<Vec<u8>, FuncError> {
        if self.kty == "oct" {
            return Err("x509: unknown key type while marshaling PKCS#8: []uint8".into());
        }
        if !self.has("d") {
            let kind = match self.kty.as_str() {
                "RSA" => "*rsa.PublicKey",
                "EC" => "*ecdsa.PublicKey",
                _ => "ed25519.PublicKey",
            };
            return Err(FuncError(format!(
                "x509: unknown key type while marshaling PKCS#8: {kind}"
            )));
        }
        match self.kty.as_str() {
            "RSA" => {
                let number = |name: &str| self.bytes(name).map(|b| BigUint::from_bytes_be(&b));
                let primes = if self.has("p") && self.has("q") {
                    vec![number("p")?, number("q")?]
                } else {
                    Vec::new()
                };
                let key = rsa::RsaPrivateKey::from_components(
                    number("n")?,
                    number("e")?,
                    number("d")?,
                    primes,
                )
                .map_err(|_| FuncError::from("failed to parse key: invalid RSA private key"))?;
                let der = key
                    .to_pkcs8_der()
                    .map_err(|_| FuncError::from("x509: failed to marshal RSA key"))?;
                Ok(der.as_bytes().to_vec())
            }
            "EC" => {
                let (curve, size) = self.curve()?;
                let sec1 = der::sequence(&[
                    der::small_integer(1),
                    der::tlv(OCTET_STRING, &der::pad(&self.bytes("d")?, size)),
                    der::tlv(0xa1, &der::bit_string(&self.ec_point(size)?)),
                ]);
                Ok(der::sequence(&[
                    der::small_integer(0),
                    der::sequence(&[der::oid(EC_PUBLIC_KEY), der::oid(curve)]),
                    der::tlv(OCTET_STRING, &sec1),
                ]))
            }
            "OKP" => Ok(der::sequence(&[
                der::small_integer(0),
                der::sequence(&[der::oid(self.okp_oid()?)]),
                der::tlv(OCTET_STRING, &der::tlv(OCTET_STRING, &self.bytes("d")?)),
            ])),
            _ => Err("failed to parse key: invalid key type".into()),
        }
    }
}
