//! upstream's PKCS#12 cases by name: `TestPkcs12certPass` (`template_test.go`) and
//! `pkcs12_test.go`'s `TestPemToPkcs12`, `TestFullPemToPkcs12`, `TestPemTruststoreToPKCS12`,
//! whose archives must come out byte for byte given upstream's mocked random source.

use std::collections::BTreeMap;

use crate::functions::FuncError;
use crate::functions::pkcs12::{pem_to_pkcs12, truststore};
use crate::{Delimiters, render};

const LEAF: &str = testdata!("foo.crt");
const INTERMEDIATE: &str = testdata!("intermediate-ca.crt");
const ROOT: &str = testdata!("root-ca.crt");
const DISJUNCT_ROOT: &str = testdata!("disjunct-root-ca.crt");
const PASS_1234: &[u8] = include_bytes!("../../testdata/foo-withpass-1234.pfx");

/// (case, password, archive, the certificates in the order `pkcs12certPass` gives them, or
/// `None` for an error)
type CertPassCase = (
    &'static str,
    &'static str,
    &'static [u8],
    Option<&'static [&'static str]>,
);

const CERT_PASS: &[CertPassCase] = &[
    // One bag holds the whole chain, out of order; another the key.
    (
        "read file without password",
        "",
        include_bytes!("../../testdata/foo-nopass.pfx"),
        Some(&[LEAF, INTERMEDIATE, ROOT]),
    ),
    (
        "read file with password",
        "1234",
        PASS_1234,
        Some(&[LEAF, INTERMEDIATE, ROOT]),
    ),
    // The leaf in one bag, root and intermediate in another.
    (
        "read multibag cert chain",
        "",
        include_bytes!("../../testdata/foo-multibag-nopass.pfx"),
        Some(&[LEAF, INTERMEDIATE, ROOT]),
    ),
    // A certificate outside the chain: the order cannot be fixed, so bag order is kept.
    (
        "read disjunct cert chain",
        "",
        include_bytes!("../../testdata/foo-disjunct-nopass.pfx"),
        Some(&[LEAF, ROOT, INTERMEDIATE, DISJUNCT_ROOT]),
    ),
    ("read file wrong password", "wrongpass", PASS_1234, None),
];

#[test]
fn pkcs12_cert_pass_cases() {
    for (name, password, archive, expected) in CERT_PASS {
        let mut input = BTreeMap::new();
        input.insert("archive".to_owned(), archive.to_vec());
        input.insert("password".to_owned(), password.as_bytes().to_vec());
        let result = render(
            "cert",
            "{{ .archive | pkcs12certPass .password }}",
            &input,
            &Delimiters::default(),
        );
        match (expected, result) {
            (Some(certs), Ok(out)) => assert_eq!(out, certs.concat().as_bytes(), "{name}"),
            (None, Err(error)) => assert!(
                error
                    .to_string()
                    .contains("error calling pkcs12certPass: unable to decode pkcs12 certificate with password: pkcs12: decryption password incorrect"),
                "{name}: {error}"
            ),
            (_, other) => panic!("{name}: unexpected {other:?}"),
        }
    }
}

const CERT: &str = testdata!("pkcs12.crt");
const KEY: &str = testdata!("pkcs12.key");
const OTHER_CERT: &str = testdata!("other.crt");

/// upstream's `MockRandomReader`: every read starts with `"0123456789"` (quotes included) and
/// leaves the rest of the fresh, zeroed buffer alone.
fn mock_random(buffer: &mut [u8]) -> Result<(), FuncError> {
    let pattern = b"\"0123456789\"";
    let length = pattern.len().min(buffer.len());
    buffer[..length].copy_from_slice(&pattern[..length]);
    Ok(())
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn pem_to_pkcs12_password() {
    let archive = pem_to_pkcs12(
        CERT.as_bytes(),
        KEY.as_bytes(),
        "password",
        false,
        &mut mock_random,
    );
    assert_eq!(
        text(archive.unwrap()),
        testdata!("pem-to-pkcs12-password.b64")
    );
}

#[test]
fn full_pem_to_pkcs12_password() {
    let chain = format!("{CERT}\n{OTHER_CERT}");
    let archive = pem_to_pkcs12(
        chain.as_bytes(),
        KEY.as_bytes(),
        "password",
        true,
        &mut mock_random,
    );
    assert_eq!(
        text(archive.unwrap()),
        testdata!("full-pem-to-pkcs12-password.b64")
    );
}

#[test]
fn pem_truststore_to_pkcs12_password() {
    let chain = format!("{CERT}\n{OTHER_CERT}");
    let archive = truststore(chain.as_bytes(), "password", &mut mock_random);
    assert_eq!(
        text(archive.unwrap()),
        testdata!("pem-truststore-to-pkcs12-password.b64")
    );
}
