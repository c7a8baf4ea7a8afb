//! upstream's `decrypt_test.go` (`TestRsaDecrypt_*`), by test name. Upstream generates a fresh
//! 2048-bit key per test; any RSA key shows the same, so these use the PKCS#1 test key.

use super::{data, function_error, oaep_sha256_encrypt, ok};
use crate::{Delimiters, render};

const RSA_PKCS1: &str = testdata!("rsa-pkcs1.key");

#[test]
fn rsa_decrypt_none_scheme() {
    assert_eq!(
        ok(
            r#"{{ rsaDecrypt "None" "SHA256" "plaintext" "irrelevant" }}"#,
            &[]
        ),
        "plaintext"
    );
}

/// (test, scheme, ciphertext, private key, the function's error)
const FAILURES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "TestRsaDecrypt_InvalidPEM",
        "RSA-OAEP",
        "data",
        "not-a-valid-pem",
        "failed to decode PEM block",
    ),
    // A CERTIFICATE block whose bytes are "invalid".
    (
        "TestRsaDecrypt_InvalidPrivateKey",
        "RSA-OAEP",
        "data",
        "-----BEGIN CERTIFICATE-----\naW52YWxpZA==\n-----END CERTIFICATE-----\n",
        "could not parse private key: unable to parse private key type",
    ),
    (
        "TestRsaDecrypt_UnsupportedScheme",
        "Unsupported",
        "data",
        RSA_PKCS1,
        "decryption scheme Unsupported is not supported",
    ),
    (
        "TestRsaDecrypt_RSAOAEP_DecryptionError",
        "RSA-OAEP",
        "not-encrypted-data",
        RSA_PKCS1,
        "error decrypting data with RSA: crypto/rsa: decryption error",
    ),
];

#[test]
fn rsa_decrypt_failures() {
    let template = r#"{{ rsaDecrypt .scheme "SHA256" .data .key }}"#;
    for (name, scheme, ciphertext, key, expected) in FAILURES {
        let pairs = [("scheme", *scheme), ("data", *ciphertext), ("key", *key)];
        assert_eq!(
            function_error(template, &pairs, "rsaDecrypt"),
            *expected,
            "{name}"
        );
    }
}

#[test]
fn rsa_decrypt_rsa_oaep_success() {
    let mut input = data(&[("key", RSA_PKCS1)]);
    input.insert(
        "data".into(),
        oaep_sha256_encrypt(RSA_PKCS1, b"secret-data"),
    );
    let out = render(
        "k",
        r#"{{ rsaDecrypt "RSA-OAEP" "SHA256" .data .key }}"#,
        &input,
        &Delimiters::default(),
    );
    assert_eq!(out.unwrap(), b"secret-data");
}
