//! upstream's `pem_test.go`: `TestFilterPEM`, `TestFilterCertChain` and `TestCertSANs`, by case
//! name. Upstream calls the Go functions; here each runs as a template pipeline.

use super::{function_error, ok, try_render};

const CERT: &str = testdata!("pkcs12.crt");
const KEY: &str = testdata!("pkcs12.key");
const LEAF: &str = testdata!("foo.crt");
const INTERMEDIATE: &str = testdata!("intermediate-ca.crt");
const ROOT: &str = testdata!("root-ca.crt");
const ROOT_KEY: &str = testdata!("root-ca.key");

/// filterPEM's error when nothing matched and text is left over.
const JUNK: &str = "error filtering pem: found junk";

/// (case, input, PEM type, `Ok(output)` or `Err(error)`)
const FILTER_PEM: &[(&str, &str, &str, Result<&str, &str>)] = &[
    (
        "extract cert / cert first",
        concat!(testdata!("pkcs12.crt"), testdata!("pkcs12.key")),
        "certificate",
        Ok(CERT),
    ),
    (
        "extract cert / key first",
        concat!(testdata!("pkcs12.key"), testdata!("pkcs12.crt")),
        "certificate",
        Ok(CERT),
    ),
    (
        "extract multiple certs",
        concat!(
            testdata!("pkcs12.key"),
            testdata!("pkcs12.crt"),
            testdata!("pkcs12.key"),
            testdata!("other.crt")
        ),
        "certificate",
        Ok(concat!(testdata!("pkcs12.crt"), testdata!("other.crt"))),
    ),
    (
        "extract key",
        concat!(testdata!("pkcs12.key"), testdata!("pkcs12.crt")),
        "private key",
        Ok(KEY),
    ),
    (
        "key with junk",
        concat!(
            testdata!("pkcs12.crt"),
            testdata!("pkcs12.key"),
            "some ---junk---"
        ),
        "private key",
        Ok(KEY),
    ),
    (
        "begin/end with junk",
        concat!(
            "some junk",
            testdata!("pkcs12.crt"),
            testdata!("pkcs12.key"),
            "some ---junk---"
        ),
        "private key",
        Ok(KEY),
    ),
    (
        "interleaved junk",
        concat!(
            testdata!("pkcs12.crt"),
            "some junk",
            testdata!("pkcs12.key")
        ),
        "private key",
        Err(JUNK),
    ),
    ("err when junk", "---junk---", "private key", Err(JUNK)),
];

#[test]
fn filter_pem_cases() {
    let template = "{{ .input | filterPEM .type }}";
    for (name, input, kind, expected) in FILTER_PEM {
        let pairs = [("input", *input), ("type", *kind)];
        match expected {
            Ok(output) => assert_eq!(ok(template, &pairs), *output, "{name}"),
            Err(message) => assert_eq!(
                function_error(template, &pairs, "filterPEM"),
                *message,
                "{name}"
            ),
        }
    }
}

/// (case, certificate type, PEM files concatenated, `Some(output)` or `None` for an error)
const FILTER_CERT_CHAIN: &[(&str, &str, &[&str], Option<&str>)] = &[
    ("extract leaf cert / empty cert chain", "leaf", &[], None),
    (
        "extract leaf cert / cert chain with pkey",
        "leaf",
        &[LEAF, ROOT_KEY],
        None,
    ),
    (
        "extract leaf cert / leaf cert only",
        "leaf",
        &[LEAF],
        Some(LEAF),
    ),
    (
        "extract leaf cert / cert chain without root",
        "leaf",
        &[LEAF, INTERMEDIATE],
        Some(LEAF),
    ),
    (
        "extract leaf cert / root cert only",
        "leaf",
        &[ROOT],
        Some(""),
    ),
    (
        "extract leaf cert / full cert chain",
        "leaf",
        &[LEAF, INTERMEDIATE, ROOT],
        Some(LEAF),
    ),
    (
        "extract intermediate cert / leaf cert only",
        "intermediate",
        &[LEAF],
        Some(""),
    ),
    (
        "extract intermediate cert / cert chain without root",
        "intermediate",
        &[LEAF, INTERMEDIATE],
        Some(INTERMEDIATE),
    ),
    (
        "extract intermediate cert / full cert chain",
        "intermediate",
        &[LEAF, INTERMEDIATE, ROOT],
        Some(INTERMEDIATE),
    ),
    (
        "extract root cert / leaf cert only",
        "root",
        &[LEAF],
        Some(""),
    ),
    (
        "extract root cert / root cert only",
        "root",
        &[ROOT],
        Some(ROOT),
    ),
    (
        "extract root cert / full cert chain",
        "root",
        &[LEAF, INTERMEDIATE, ROOT],
        Some(ROOT),
    ),
];

#[test]
fn filter_cert_chain_cases() {
    let template = "{{ .input | filterCertChain .type }}";
    for (name, kind, files, expected) in FILTER_CERT_CHAIN {
        let input = files.concat();
        let result = try_render(template, &[("input", &input), ("type", kind)]);
        match (expected, result) {
            (Some(output), Ok(text)) => assert_eq!(text, *output, "{name}"),
            (None, Err(error)) => assert!(
                error
                    .to_string()
                    .contains("error calling filterCertChain: "),
                "{name}: {error}"
            ),
            (_, other) => panic!("{name}: unexpected {other:?}"),
        }
    }
}

/// (case, input, the SANs as JSON or `None` for an error)
const CERT_SANS: &[(&str, &str, Option<&str>)] = &[
    (
        "extract DNS SANs from cert",
        CERT,
        Some(r#"["gooble.com"]"#),
    ),
    ("invalid PEM input", "not a pem", None),
    ("empty input", "", None),
    (
        "cert with junk before PEM",
        concat!("some junk\n", testdata!("pkcs12.crt")),
        Some(r#"["gooble.com"]"#),
    ),
    (
        "cert from file with all types of SANs",
        testdata!("sans.crt"),
        Some(
            r#"["example.com","www.example.com","192.168.1.10","10.0.0.1","admin@example.com","https://example.com"]"#,
        ),
    ),
];

#[test]
fn cert_sans_cases() {
    let template = "{{ .input | certSANs | toJson }}";
    for (name, input, expected) in CERT_SANS {
        let pairs = [("input", *input)];
        match expected {
            Some(json) => assert_eq!(ok(template, &pairs), *json, "{name}"),
            None => assert_eq!(
                function_error(template, &pairs, "certSANs"),
                "failed to decode PEM block",
                "{name}"
            ),
        }
    }
}
