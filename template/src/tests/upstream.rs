//! upstream's `TestExecute` cases (`runtime/template/v2/template_test.go`) that exercise the
//! engine; the cases about targets and scopes are the controller's (`template.rs`).

use super::{fails, ok};

const PKCS12_CERT: &str = include_str!("../../testdata/pkcs12.crt");
const PKCS12_KEY: &str = include_str!("../../testdata/pkcs12.key");
const PKCS8_RSA: &str = include_str!("../../testdata/jwk-rsa-private.pem");

/// Secret data as key/value pairs.
type Pairs = &'static [(&'static str, &'static str)];

/// (case, template, data, expected)
const VALUE_CASES: &[(&str, &str, Pairs, &str)] = &[
    (
        "b64dec func",
        "{{ .secret | b64dec }}",
        &[("secret", "MTIzNA==")],
        "1234",
    ),
    (
        "fromJson func",
        "{{ $var := .secret | fromJson }}{{ $var.foo }}",
        &[("secret", r#"{"foo": "bar"}"#)],
        "bar",
    ),
    (
        "from & toJson func",
        "{{ $var := .secret | fromJson }}{{ $var.foo | toJson }}",
        &[("secret", r#"{"foo": {"baz":"bang"}}"#)],
        r#"{"baz":"bang"}"#,
    ),
    (
        "fromJson & toYaml func",
        "{{ $var := .secret | fromJson | toYaml }}{{ $var }}",
        &[("secret", r#"{"foo": "bar"}"#)],
        "foo: bar",
    ),
    (
        "fromYaml & toJson func",
        "{{ $var := .secret | fromYaml | toJson }}{{ $var }}",
        &[("secret", "foo: bar")],
        r#"{"foo":"bar"}"#,
    ),
    (
        "use sprig functions",
        "{{ .path | ext }}",
        &[("path", "foo/bar/baz.exe")],
        ".exe",
    ),
    (
        "use replace function",
        r#"{{ .conn | replace "postgres://" "db+postgresql://"}}"#,
        &[("conn", "postgres://user:pass@db.host:5432/dbname")],
        "db+postgresql://user:pass@db.host:5432/dbname",
    ),
    (
        "use upper function",
        "{{ .value | upper }}",
        &[("value", "username")],
        "USERNAME",
    ),
    (
        "base64 pipeline",
        r#"{{ "123412341234" | b64enc | b64dec }}"#,
        &[],
        "123412341234",
    ),
    (
        "base64 decode error",
        "{{ .example | b64dec }}",
        &[("example", "iam_no_base64")],
        "illegal base64 data at input byte 3",
    ),
    (
        "hexdec",
        "{{ .example | sha256sum | hexdec | b64enc }}",
        &[("example", "example")],
        "UNhY4JhezH9gQYqvDMWrWH9CwlcKiECVqejMrND2VFw=",
    ),
    (
        "fromJson error",
        r#"{{ "{ # no json # }" | fromJson }}"#,
        &[],
        "<no value>",
    ),
    (
        "htpasswd with sha1",
        r#"{{ htpasswd .username .password "sha" }}"#,
        &[
            ("username", "foo1"),
            ("password", "FZ4jR;l]ON;pHKi=_'zh79P"),
        ],
        "foo1:{SHA}wtdJD6OIjUniEJkTlewnKzfFxA4=",
    ),
];

#[test]
fn execute_value_cases() {
    for (name, template, pairs, expected) in VALUE_CASES {
        assert_eq!(ok(template, pairs), *expected, "{name}");
    }
}

#[test]
fn execute_multiline_template_is_kept_verbatim() {
    let template = "\n\t\tdatasources:\n\t\t- name: Graphite\n\t\t\ttype: graphite\n\t\t\taccess: proxy\n\t\t\turl: http://localhost:8080\n\t\t\tpassword: \"{{ .password }}\"\n\t\t\tuser: \"{{ .user }}\"";
    let expected = "\n\t\tdatasources:\n\t\t- name: Graphite\n\t\t\ttype: graphite\n\t\t\taccess: proxy\n\t\t\turl: http://localhost:8080\n\t\t\tpassword: \"harharhar\"\n\t\t\tuser: \"foobert\"";
    assert_eq!(
        ok(template, &[("user", "foobert"), ("password", "harharhar")]),
        expected
    );
}

#[test]
fn execute_error_cases() {
    assert!(fails("{{ #xx }}", &[]).starts_with("template: key:1: "));
    assert!(
        fails("{{ .unknown }}", &[])
            .starts_with("template: key:1:3: executing \"key\" at <.unknown>")
    );
    let input = format!("{PKCS8_RSA}{PKCS12_CERT}");
    assert_eq!(
        ok(
            "{{ .secret | filterPEM \"CERTIFICATE\" }}",
            &[("secret", &input)]
        ),
        PKCS12_CERT
    );
    let pair = format!("{PKCS12_KEY}{PKCS12_CERT}");
    assert_eq!(
        ok(
            "{{ .secret | filterPEM \"PRIVATE KEY\" }}",
            &[("secret", &pair)]
        ),
        PKCS12_KEY
    );
}
