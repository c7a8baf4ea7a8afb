//! Sprig's key, certificate, password and AES functions (crypto.go), against the cases of
//! Sprig's crypto_test.go (cited per test) and, where Sprig only checks a format, structural
//! checks of what is generated: keys and certificates are parsed back.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use x509_parser::extensions::ParsedExtension;
use x509_parser::prelude::{FromDer as _, X509Certificate};

use super::{function_error, ok};

/// The DER of the single PEM block of `pem`, checking its type.
fn pem_der(pem: &str, kind: &str) -> Vec<u8> {
    let begin = format!("-----BEGIN {kind}-----\n");
    let end = format!("-----END {kind}-----\n");
    assert!(pem.starts_with(&begin) && pem.ends_with(&end), "{pem}");
    let body: String = pem[begin.len()..pem.len() - end.len()]
        .lines()
        .inspect(|line| assert!(line.len() <= 64, "Go wraps PEM at 64 columns"))
        .collect();
    STANDARD.decode(body).expect("PEM base64")
}

/// Renders `source` and parses its output as one certificate: (DER, then checks by `check`).
fn with_certificate(source: &str, check: impl FnOnce(&X509Certificate<'_>)) {
    let der = pem_der(&ok(source, &[]), "CERTIFICATE");
    let (rest, cert) = X509Certificate::from_der(&der).expect("a certificate");
    assert!(rest.is_empty());
    check(&cert);
}

fn common_name(cert: &X509Certificate<'_>) -> String {
    cert.subject()
        .iter_common_name()
        .map(|cn| cn.as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join(",")
}

fn sans(cert: &X509Certificate<'_>) -> (Vec<String>, Vec<String>) {
    let (mut dns, mut ips) = (Vec::new(), Vec::new());
    if let Ok(Some(extension)) = cert.subject_alternative_name() {
        for name in &extension.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(name) => dns.push(name.to_string()),
                x509_parser::extensions::GeneralName::IPAddress(bytes) => {
                    let ip: [u8; 4] = (*bytes).try_into().unwrap();
                    ips.push(std::net::Ipv4Addr::from(ip).to_string());
                }
                other => panic!("unexpected name {other:?}"),
            }
        }
    }
    (dns, ips)
}

/// What Sprig's `getBaseCertTemplate` puts in every certificate.
fn assert_base_template(cert: &X509Certificate<'_>, ca: bool, days: i64) {
    assert_eq!(cert.version(), x509_parser::x509::X509Version::V3);
    assert!(!cert.raw_serial().is_empty() && cert.raw_serial()[0] & 0x80 == 0);
    assert!(cert.raw_serial().len() <= 17, "at most 128 bits, positive");
    let validity = cert.validity();
    let span = validity.not_after.timestamp() - validity.not_before.timestamp();
    assert_eq!(span, days * 86_400);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((validity.not_before.timestamp() - now).abs() < 600);
    let usage = cert.key_usage().unwrap().expect("key usage").value;
    assert!(usage.digital_signature() && usage.key_encipherment());
    assert_eq!(usage.key_cert_sign(), ca);
    let extended = cert.extended_key_usage().unwrap().expect("EKU").value;
    assert!(extended.server_auth && extended.client_auth);
    let constraints = cert
        .basic_constraints()
        .unwrap()
        .expect("basic constraints");
    assert_eq!(constraints.value.ca, ca);
    assert_eq!(constraints.value.path_len_constraint, None);
}

fn rsa_bits(key_pem: &str) -> usize {
    use rsa::pkcs1::DecodeRsaPrivateKey as _;
    use rsa::traits::PublicKeyParts as _;
    let der = pem_der(key_pem, "RSA PRIVATE KEY");
    rsa::RsaPrivateKey::from_pkcs1_der(&der).unwrap().n().bits()
}

/// Sprig's TestDerivePassword: its seven fixed vectors.
#[test]
fn derive_password_matches_sprigs_vectors() {
    let vectors = [
        (1, "long", "ZedaFaxcZaso9*"),
        (2, "long", "Fovi2@JifpTupx"),
        (1, "maximum", "pf4zS1LjCg&LjhsZ7T2~"),
        (1, "medium", "ZedJuz8$"),
        (1, "basic", "pIS54PLs"),
        (1, "short", "Zed5"),
        (1, "pin", "6685"),
    ];
    for (counter, kind, expected) in vectors {
        let source = format!(
            "{{{{derivePassword {counter} \"{kind}\" \"password\" \"user\" \"example.com\"}}}}"
        );
        assert_eq!(ok(&source, &[]), expected, "{kind} {counter}");
    }
    // crypto.go's message for a type it has no templates for.
    assert_eq!(
        ok(r#"{{derivePassword 1 "huge" "p" "u" "s"}}"#, &[]),
        "cannot find password template huge"
    );
    assert!(
        function_error(
            r#"{{derivePassword -1 "pin" "p" "u" "s"}}"#,
            &[],
            "derivePassword"
        )
        .contains("uint32")
    );
}

/// Sprig's TestEncryptDecryptAES, plus the layout crypto.go writes: base64 of a random IV and
/// the PKCS#7-padded AES-256-CBC blocks.
#[test]
fn encrypt_aes_round_trips_with_a_random_iv() {
    assert_eq!(
        ok(
            r#"{{"plaintext" | encryptAES "secretkey" | decryptAES "secretkey"}}"#,
            &[]
        ),
        "plaintext"
    );
    let first = ok(r#"{{encryptAES "secretkey" "sixteen byte msg"}}"#, &[]);
    let second = ok(r#"{{encryptAES "secretkey" "sixteen byte msg"}}"#, &[]);
    // IV plus the message plus one whole block of padding.
    assert_eq!(STANDARD.decode(&first).unwrap().len(), 16 + 16 + 16);
    assert_ne!(first, second, "a fresh IV every time");
    // A password longer than 32 bytes is cut to 32; the empty text stays empty both ways.
    let long = "k".repeat(40);
    let cut = "k".repeat(32);
    assert_eq!(
        ok(
            &format!(r#"{{{{"x" | encryptAES "{long}" | decryptAES "{cut}"}}}}"#),
            &[]
        ),
        "x"
    );
    assert_eq!(
        ok(r#"[{{encryptAES "k" ""}}|{{decryptAES "k" ""}}]"#, &[]),
        "[|]"
    );
}

/// AES-256-CBC known answer (NIST SP 800-38A, F.2.5/F.2.6): with the NIST key as the password
/// and base64(IV || C1..C4) as input, crypto.go's `decryptAES` yields P1..P3: the last byte of
/// P4 is 0x10, which it takes as a whole block of padding.
#[test]
fn decrypt_aes_of_a_known_ciphertext() {
    let hex = |text: &str| -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    };
    let key = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
    let iv = hex("000102030405060708090a0b0c0d0e0f");
    let ciphertext = hex(concat!(
        "f58c4c04d6e5f1ba779eabfb5f7bfbd6",
        "9cfc4e967edb808d679f777bc6702c7d",
        "39f23369a9d9bacfa530e26304231461",
        "b2eb05e2c39be9fcda6c19078c6a9d1b"
    ));
    let plaintext = hex(concat!(
        "6bc1bee22e409f96e93d7e117393172a",
        "ae2d8a571e03ac9c9eb76fac45af8e51",
        "30c81c46a35ce411e5fbc1191a0a52ef"
    ));
    let source = format!(
        r#"{{{{decryptAES (b64dec "{}") "{}" | b64enc}}}}"#,
        STANDARD.encode(&key),
        STANDARD.encode([iv, ciphertext].concat())
    );
    assert_eq!(ok(&source, &[]), STANDARD.encode(plaintext));
}

/// Where crypto.go's `decryptAES` panics (Go's template recovers into an error) or returns
/// base64's error.
#[test]
fn decrypt_aes_errors_as_go() {
    let cases = [
        (
            "AAAA",
            "runtime error: slice bounds out of range [:16] with capacity 3",
        ),
        (
            "AAAAAAAAAAAAAAAAAAAAAA==",
            "runtime error: index out of range [-1]",
        ),
        (
            "AAAAAAAAAAAAAAAAAAAAAAAA",
            "crypto/cipher: input not full blocks",
        ),
        ("!!!!", "illegal base64 data at input byte 0"),
    ];
    for (input, expected) in cases {
        let source = format!(r#"{{{{decryptAES "k" "{input}"}}}}"#);
        assert_eq!(
            function_error(&source, &[], "decryptAES"),
            expected,
            "{input}"
        );
    }
}

/// Sprig's TestGenPrivateKey (types and PEM block types; "bad" is a message, not an error),
/// with each key parsed back.
#[test]
fn gen_private_key_writes_sprigs_pem_types() {
    let ecdsa = ok(r#"{{genPrivateKey "ecdsa"}}"#, &[]);
    let der = pem_der(&ecdsa, "EC PRIVATE KEY");
    // Go's MarshalECPrivateKey names the curve (prime256v1) inside the key.
    assert!(
        der.windows(10)
            .any(|w| w == [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07])
    );
    p256::SecretKey::from_sec1_der(&der).expect("a P-256 key");

    let ed25519 = ok(r#"{{genPrivateKey "ed25519"}}"#, &[]);
    let der = pem_der(&ed25519, "PRIVATE KEY");
    assert_eq!(
        der.len(),
        48,
        "PKCS#8 v1 without the public key, as Go writes it"
    );
    rcgen::KeyPair::from_pem(&ed25519).expect("an Ed25519 PKCS#8 key");

    let rsa = ok(r#"{{genPrivateKey ""}}"#, &[]);
    assert_eq!(rsa_bits(&rsa), 4096);

    assert_eq!(ok(r#"{{genPrivateKey "bad"}}"#, &[]), "Unknown type bad");
    assert!(ok(r#"{{genPrivateKey "dsa"}}"#, &[]).starts_with("failed to generate dsa params"));
}

/// Sprig's TestGenCA: a CA certificate for the common name, with a new RSA 2048 key.
#[test]
fn gen_ca_makes_a_ca() {
    with_certificate(r#"{{ (genCA "foo-ca" 365).Cert }}"#, |cert| {
        assert_eq!(common_name(cert), "foo-ca");
        assert_eq!(cert.subject(), cert.issuer());
        assert_base_template(cert, true, 365);
        assert_eq!(sans(cert), (vec![], vec![]));
    });
    assert_eq!(rsa_bits(&ok(r#"{{ (genCA "foo-ca" 1).Key }}"#, &[])), 2048);
}

/// Sprig's TestGenSelfSignedCert: CN, positive serial, the IPs in order, the DNS names, no CA.
#[test]
fn gen_self_signed_cert_carries_names_and_addresses() {
    let source = r#"{{ (genSelfSignedCert "foo.com" (list "10.0.0.1" "10.0.0.2") (list "bar.com" "bat.com") 365).Cert }}"#;
    with_certificate(source, |cert| {
        assert_eq!(common_name(cert), "foo.com");
        assert_eq!(cert.subject(), cert.issuer());
        assert_base_template(cert, false, 365);
        assert_eq!(
            sans(cert),
            (
                vec!["bar.com".to_owned(), "bat.com".to_owned()],
                vec!["10.0.0.1".to_owned(), "10.0.0.2".to_owned()]
            )
        );
    });
}

/// Sprig's TestGenSignedCert: issued by the CA (its subject, its key identifier).
#[test]
fn gen_signed_cert_is_issued_by_the_ca() {
    let source = r#"{{- $ca := genCA "foo" 365 -}}
{{- $cert := genSignedCert "foo.com" (list "10.0.0.1" "10.0.0.2") (list "bar.com" "bat.com") 365 $ca -}}
{{ $ca.Cert }}{{ $cert.Cert }}"#;
    let output = ok(source, &[]);
    let split = output.find("-----END CERTIFICATE-----\n").unwrap() + 26;
    let ca_der = pem_der(&output[..split], "CERTIFICATE");
    let der = pem_der(&output[split..], "CERTIFICATE");
    let (_, ca) = X509Certificate::from_der(&ca_der).unwrap();
    let (_, cert) = X509Certificate::from_der(&der).unwrap();
    assert_eq!(common_name(&cert), "foo.com");
    assert_eq!(cert.issuer(), ca.subject());
    assert_base_template(&cert, false, 365);
    assert_eq!(sans(&cert).1, vec!["10.0.0.1", "10.0.0.2"]);
    let key_id = |cert: &X509Certificate<'_>, authority: bool| {
        cert.extensions()
            .iter()
            .find_map(|e| match e.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(id) if !authority => Some(id.0.to_vec()),
                ParsedExtension::AuthorityKeyIdentifier(aki) if authority => {
                    aki.key_identifier.as_ref().map(|id| id.0.to_vec())
                }
                _ => None,
            })
    };
    assert!(key_id(&ca, false).is_some());
    assert_eq!(key_id(&cert, true), key_id(&ca, false));
}

/// The `WithKey` variants certify the given key and hand it back as `pemBlockForKey` writes it.
#[test]
fn with_key_variants_use_the_given_key() {
    let source = r#"{{- $key := genPrivateKey "ecdsa" -}}
{{- $ca := genCAWithKey "ca" 30 $key -}}
{{- $self := genSelfSignedCertWithKey "self" nil nil 30 $key -}}
{{- $leaf := genSignedCertWithKey "leaf" nil (list "a.example") 30 $ca $key -}}
{{ eq $ca.Key $key }} {{ eq $self.Key $key }} {{ eq $leaf.Key $key }}"#;
    assert_eq!(ok(source, &[]), "true true true");
    let source = r#"{{- $ed := genPrivateKey "ed25519" -}}
{{ (genSelfSignedCertWithKey "ed" nil nil 1 $ed).Cert }}"#;
    with_certificate(source, |cert| {
        assert_eq!(
            cert.public_key().algorithm.algorithm.to_id_string(),
            "1.3.101.112"
        );
        assert_base_template(cert, false, 1);
    });
}

/// Sprig's TestBuildCustomCert: base64 PEM certificate and key make a `certificate`; an
/// undecodable certificate fails.
#[test]
fn build_custom_cert_wraps_base64_pem() {
    let source = r#"{{- $ca := genCA "example.com" 365 -}}
{{- $built := buildCustomCert ($ca.Cert | b64enc) ($ca.Key | b64enc) -}}
{{ eq $built.Cert $ca.Cert }} {{ eq $built.Key $ca.Key }}"#;
    assert_eq!(ok(source, &[]), "true true");
    let source = r#"{{ buildCustomCert ("fail" | b64enc) ((genCA "x" 1).Key | b64enc) }}"#;
    assert_eq!(
        function_error(source, &[], "buildCustomCert"),
        "unable to decode certificate"
    );
    assert_eq!(
        function_error(r#"{{ buildCustomCert "%%" "" }}"#, &[], "buildCustomCert"),
        "unable to decode base64 certificate"
    );
}

/// crypto.go's messages for bad arguments, and Go's for a value of the wrong type.
#[test]
fn certificate_argument_errors() {
    let cases = [
        (
            r#"{{ genSelfSignedCert "x" (list "10.0.0.300") nil 1 }}"#,
            "genSelfSignedCert",
            "error parsing ip: 10.0.0.300",
        ),
        (
            r#"{{ genSelfSignedCert "x" (list 1) nil 1 }}"#,
            "genSelfSignedCert",
            "error parsing ip: 1 is not a string",
        ),
        (
            r#"{{ genSelfSignedCert "x" nil (list 2) 1 }}"#,
            "genSelfSignedCert",
            "error processing alternate dns name: 2 is not a string",
        ),
        (
            r#"{{ genSignedCert "x" nil nil 1 (dict "Cert" "" "Key" "") }}"#,
            "genSignedCert",
            "wrong type for value; expected sprig.certificate; got map[string]interface {}",
        ),
        (
            r#"{{ genCAWithKey "x" 1 "no pem" }}"#,
            "genCAWithKey",
            "parsing private key: no PEM data in input",
        ),
        (
            r#"{{ genSignedCertWithKey "x" nil nil 1 (genCA "ca" 1) (genPrivateKey "bad") }}"#,
            "genSignedCertWithKey",
            "parsing private key: no PEM data in input",
        ),
    ];
    for (source, function, expected) in cases {
        assert_eq!(function_error(source, &[], function), expected, "{source}");
    }
    assert!(function_error(r#"{{ genCA "x" 200000 }}"#, &[], "genCA").contains("out of range"));
    // A CA whose key is not the one in its certificate (Go's CreateCertificate refuses it).
    let source = r#"{{- $a := genCAWithKey "a" 1 (genPrivateKey "ecdsa") -}}
{{- $b := genCAWithKey "b" 1 (genPrivateKey "ecdsa") -}}
{{ genSignedCert "x" nil nil 1 (buildCustomCert ($a.Cert | b64enc) ($b.Key | b64enc)) }}"#;
    assert_eq!(
        function_error(source, &[], "genSignedCert"),
        "error creating certificate: x509: provided PrivateKey doesn't match parent's PublicKey"
    );
}

/// Sprig's `certificate` is a struct: printed as `{Cert Key}`, `kindOf` struct, unknown fields
/// an error, and no map functions.
#[test]
fn certificate_values_behave_as_go_structs() {
    let source = r#"{{- $ca := genCAWithKey "x" 1 (genPrivateKey "ecdsa") -}}
{{ kindOf $ca }}|{{ typeOf $ca }}|{{ printf "%v" $ca | trunc 28 }}"#;
    assert_eq!(
        ok(source, &[]),
        "struct|sprig.certificate|{-----BEGIN CERTIFICATE-----"
    );
    let error = super::fails(
        r#"{{ (genCAWithKey "x" 1 (genPrivateKey "ecdsa")).Nope }}"#,
        &[],
    );
    assert!(
        error.contains("can't evaluate field Nope in type sprig.certificate"),
        "{error}"
    );
    let error = super::fails(
        r#"{{ keys (genCAWithKey "x" 1 (genPrivateKey "ecdsa")) }}"#,
        &[],
    );
    assert!(error.contains("sprig.certificate"), "{error}");
}
