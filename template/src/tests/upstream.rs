//! upstream's `TestExecute` (`runtime/template/v2/template_test.go`), by row name: every row
//! whose outcome is the template language's. The rows about where results go (`test empty`,
//! `labels`, `annotations`, `stringData`) are the controller's; `NonStandardDelimiters` is
//! `core::custom_delimiters`.

use std::collections::BTreeMap;

use super::{Pairs, oaep_sha256_encrypt, try_render};
use crate::{Delimiters, TemplateError, render};

const CERT: &str = testdata!("pkcs12.crt");
const KEY: &str = testdata!("pkcs12.key");
const PKCS12_NO_PASS: &str = testdata!("pkcs12-nopass.b64");
const PKCS12_PASS_123456: &str = testdata!("pkcs12-withpass-123456.b64");
const RSA_PKCS1: &str = testdata!("rsa-pkcs1.key");

/// What a row expects.
enum Expect {
    /// This output, byte for byte.
    Renders(&'static str),
    /// A parse error whose message contains this.
    ParseError(&'static str),
    /// An execution error whose message contains this.
    ExecuteError(&'static str),
}

use Expect::{ExecuteError, ParseError, Renders};

/// (upstream's row name, template, secret data, expected)
const ROWS: &[(&str, &str, Pairs, Expect)] = &[
    (
        "b64dec func",
        "{{ .secret | b64dec }}",
        &[("secret", "MTIzNA==")],
        Renders("1234"),
    ),
    (
        "fromJson func",
        "{{ $var := .secret | fromJson }}{{ $var.foo }}",
        &[("secret", r#"{"foo": "bar"}"#)],
        Renders("bar"),
    ),
    (
        "from & toJson func",
        "{{ $var := .secret | fromJson }}{{ $var.foo | toJson }}",
        &[("secret", r#"{"foo": {"baz":"bang"}}"#)],
        Renders(r#"{"baz":"bang"}"#),
    ),
    (
        "fromJson & toYaml func",
        "{{ $var := .secret | fromJson | toYaml }}{{ $var }}",
        &[("secret", r#"{"foo": "bar"}"#)],
        Renders("foo: bar"),
    ),
    (
        "fromYaml & toJson func",
        "{{ $var := .secret | fromYaml | toJson }}{{ $var }}",
        &[("secret", "foo: bar")],
        Renders(r#"{"foo":"bar"}"#),
    ),
    (
        "use sprig functions",
        "{{ .path | ext }}",
        &[("path", "foo/bar/baz.exe")],
        Renders(".exe"),
    ),
    (
        "use replace function",
        r#"{{ .conn | replace "postgres://" "db+postgresql://"}}"#,
        &[("conn", "postgres://user:pass@db.host:5432/dbname")],
        Renders("db+postgresql://user:pass@db.host:5432/dbname"),
    ),
    (
        "use upper function",
        "{{ .value | upper }}",
        &[("value", "username")],
        Renders("USERNAME"),
    ),
    (
        "multiline template",
        "\n\t\tdatasources:\n\t\t- name: Graphite\n\t\t\ttype: graphite\n\t\t\taccess: proxy\n\t\t\turl: http://localhost:8080\n\t\t\tpassword: \"{{ .password }}\"\n\t\t\tuser: \"{{ .user }}\"",
        &[("user", "foobert"), ("password", "harharhar")],
        Renders(
            "\n\t\tdatasources:\n\t\t- name: Graphite\n\t\t\ttype: graphite\n\t\t\taccess: proxy\n\t\t\turl: http://localhost:8080\n\t\t\tpassword: \"harharhar\"\n\t\t\tuser: \"foobert\"",
        ),
    ),
    (
        "base64 pipeline",
        r#"{{ "123412341234" | b64enc | b64dec }}"#,
        &[],
        Renders("123412341234"),
    ),
    (
        "base64 pkcs12 extract (key)",
        "{{ .secret | b64dec | pkcs12key }}",
        &[("secret", PKCS12_NO_PASS)],
        Renders(KEY),
    ),
    (
        "base64 pkcs12 extract (cert)",
        "{{ .secret | b64dec | pkcs12cert }}",
        &[("secret", PKCS12_NO_PASS)],
        Renders(CERT),
    ),
    (
        "base64 pkcs12 extract with password (key)",
        r#"{{ .secret | b64dec | pkcs12keyPass "123456" }}"#,
        &[("secret", PKCS12_PASS_123456)],
        Renders(KEY),
    ),
    (
        "base64 pkcs12 extract with password (cert)",
        r#"{{ .secret | b64dec | pkcs12certPass "123456" }}"#,
        &[("secret", PKCS12_PASS_123456)],
        Renders(CERT),
    ),
    // Upstream only checks that this does not fail: Sprig's b64dec returns Go's error text.
    (
        "base64 decode error",
        "{{ .example | b64dec }}",
        &[("example", "iam_no_base64")],
        Renders("illegal base64 data at input byte 3"),
    ),
    (
        "hexdec",
        "{{ .example | sha256sum | hexdec | b64enc }}",
        &[("example", "example")],
        Renders("UNhY4JhezH9gQYqvDMWrWH9CwlcKiECVqejMrND2VFw="),
    ),
    (
        "pkcs12 key wrong password",
        r#"{{ .secret | b64dec | pkcs12keyPass "wrong" }}"#,
        &[("secret", PKCS12_PASS_123456)],
        ExecuteError("unable to decode pkcs12 with password: "),
    ),
    (
        "pkcs12 cert wrong password",
        r#"{{ .secret | b64dec | pkcs12certPass "wrong" }}"#,
        &[("secret", PKCS12_PASS_123456)],
        ExecuteError("unable to decode pkcs12 certificate with password: "),
    ),
    // Upstream only checks that this does not fail: Sprig's fromJson returns nil.
    (
        "fromJson error",
        r#"{{ "{ # no json # }" | fromJson }}"#,
        &[],
        Renders("<no value>"),
    ),
    // Upstream's "unable to parse template" is the controller's wrapping of this error.
    (
        "template syntax error",
        "{{ #xx }}",
        &[],
        ParseError("template: key:1: unexpected \"#\" in command"),
    ),
    // Upstream's "unable to execute template at key key" wraps this error.
    (
        "unknown key error",
        "{{ .unknown }}",
        &[],
        ExecuteError(
            "template: key:1:3: executing \"key\" at <.unknown>: map has no entry for key \"unknown\"",
        ),
    ),
    (
        "jwk rsa pub pem",
        "{{ .secret | jwkPublicKeyPem }}",
        &[("secret", testdata!("jwk-rsa-public.json"))],
        Renders(testdata!("jwk-rsa-public.pem")),
    ),
    (
        "jwk rsa priv pem",
        "{{ .secret | jwkPrivateKeyPem }}",
        &[("secret", testdata!("jwk-rsa-private.json"))],
        Renders(testdata!("jwk-rsa-private.pem")),
    ),
    (
        "jwk ecdsa pub pem",
        "{{ .secret | jwkPublicKeyPem }}",
        &[("secret", testdata!("jwk-ec-public.json"))],
        Renders(testdata!("jwk-ec-public.pem")),
    ),
    (
        "jwk ecdsa priv pem",
        "{{ .secret | jwkPrivateKeyPem }}",
        &[("secret", testdata!("jwk-ec-private.json"))],
        Renders(testdata!("jwk-ec-private.pem")),
    ),
    (
        "filter pem certificate",
        r#"{{ .secret | filterPEM "CERTIFICATE" }}"#,
        &[(
            "secret",
            concat!(testdata!("jwk-rsa-private.pem"), testdata!("pkcs12.crt")),
        )],
        Renders(CERT),
    ),
    (
        "rsa decrypt rsa-oaep sha1 pkcs8 data base64",
        r#"{{ .private_key | rsaDecrypt "RSA-OAEP" "SHA1" (.data_crypted_base64 | b64dec) }}"#,
        &[
            ("private_key", testdata!("rsa-pkcs8.key")),
            (
                "data_crypted_base64",
                testdata!("rsa-pkcs8-sha1-ciphertext.b64"),
            ),
        ],
        Renders("a1b2c3d4"),
    ),
    (
        "rsa decrypt rsa-oaep sha256 pkcs1 data base64",
        r#"{{ .private_key | rsaDecrypt "RSA-OAEP" "SHA256" (.data_crypted_base64 | b64dec) }}"#,
        &[
            ("private_key", RSA_PKCS1),
            (
                "data_crypted_base64",
                testdata!("rsa-pkcs1-sha256-ciphertext.b64"),
            ),
        ],
        Renders("hellopkcs1sha256"),
    ),
    (
        "certSANs extract DNS SANs as comma-separated string",
        r#"{{ .certificate | certSANs | join "," }}"#,
        &[("certificate", CERT)],
        Renders("gooble.com"),
    ),
    (
        "certSANs extract first SAN with index",
        "{{ index (.certificate | certSANs) 0 }}",
        &[("certificate", CERT)],
        Renders("gooble.com"),
    ),
    (
        "certSANs with toJson",
        "{{ .certificate | certSANs | toJson }}",
        &[("certificate", CERT)],
        Renders(r#"["gooble.com"]"#),
    ),
    (
        "certSANs combined with filterPEM pipeline",
        r#"{{ .secret | filterPEM "CERTIFICATE" | certSANs | join "," }}"#,
        &[(
            "secret",
            concat!(testdata!("pkcs12.key"), testdata!("pkcs12.crt")),
        )],
        Renders("gooble.com"),
    ),
    (
        "certSANs with invalid PEM",
        "{{ .certificate | certSANs }}",
        &[("certificate", "not-a-pem")],
        ExecuteError("error calling certSANs: failed to decode PEM block"),
    ),
    (
        "htpasswd with sha1",
        r#"{{ htpasswd .username .password "sha" }}"#,
        &[
            ("username", "foo1"),
            ("password", "FZ4jR;l]ON;pHKi=_'zh79P"),
        ],
        Renders("foo1:{SHA}wtdJD6OIjUniEJkTlewnKzfFxA4="),
    ),
];

#[test]
fn execute_rows() {
    for (name, template, pairs, expect) in ROWS {
        let result = try_render(template, pairs);
        match (expect, result) {
            (Renders(expected), Ok(text)) => assert_eq!(text, *expected, "{name}"),
            (ParseError(part), Err(error @ TemplateError::Parse { .. }))
            | (ExecuteError(part), Err(error @ TemplateError::Execute { .. })) => {
                let message = error.to_string();
                assert!(message.contains(part), "{name}: {message}");
            }
            (_, other) => panic!("{name}: unexpected {other:?}"),
        }
    }
}

/// "rsa decrypt rsa-oaep sha256 pkcs1 data bin": the ciphertext is binary secret data.
#[test]
fn execute_rsa_decrypt_binary_ciphertext() {
    let mut data = BTreeMap::new();
    data.insert("private_key".to_owned(), RSA_PKCS1.as_bytes().to_vec());
    data.insert(
        "data_crypted_bin".to_owned(),
        oaep_sha256_encrypt(RSA_PKCS1, b"hellopkcs1sha256"),
    );
    let out = render(
        "data_decrypted",
        r#"{{ .private_key | rsaDecrypt "RSA-OAEP" "SHA256" .data_crypted_bin }}"#,
        &data,
        &Delimiters::default(),
    );
    assert_eq!(out.unwrap(), b"hellopkcs1sha256");
}
