//! Go `text/template` semantics as upstream runs them (`missingkey=error`).

use std::collections::BTreeMap;

use super::{data, fails, ok};
use crate::{Data, Delimiters, MissingKey, Options, Template, TemplateError, render};

#[test]
fn fields_pipelines_and_text() {
    assert_eq!(
        ok("{{ .a }}-{{ .b | upper }}", &[("a", "x"), ("b", "y")]),
        "x-Y"
    );
    assert_eq!(ok("plain text\n  kept", &[]), "plain text\n  kept");
    assert_eq!(ok("{{ . }}", &[("b", "2"), ("a", "1")]), "map[a:1 b:2]");
    assert_eq!(ok("{{ $.a }}", &[("a", "x")]), "x");
}

#[test]
fn trim_markers_and_comments() {
    assert_eq!(ok("a  \n{{- .x -}}\n  b", &[("x", "X")]), "aXb");
    assert_eq!(ok("{{-3}}", &[]), "-3");
    assert_eq!(ok("a{{/* comment */}}b", &[]), "ab");
    assert_eq!(ok("a {{- /* comment */ -}} b", &[]), "ab");
    assert_eq!(ok("{{ 1 }} {{- 2 }}", &[]), "12");
}

#[test]
fn conditionals() {
    let source = "{{ if eq .v \"a\" }}A{{ else if eq .v \"b\" }}B{{ else }}other{{ end }}";
    assert_eq!(ok(source, &[("v", "a")]), "A");
    assert_eq!(ok(source, &[("v", "b")]), "B");
    assert_eq!(ok(source, &[("v", "c")]), "other");
    assert_eq!(
        ok("{{ if .e }}yes{{ else }}no{{ end }}", &[("e", "")]),
        "no"
    );
    assert_eq!(
        ok("{{ with \"\" }}a{{ else with \"b\" }}{{ . }}{{ end }}", &[]),
        "b"
    );
    assert_eq!(ok("{{ with .a }}{{ . }}!{{ end }}", &[("a", "x")]), "x!");
}

#[test]
fn ranges() {
    let pairs = [("b", "2"), ("a", "1")];
    assert_eq!(
        ok("{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}", &pairs),
        "a=1;b=2;"
    );
    assert_eq!(ok("{{ range . }}{{ . }}{{ end }}", &pairs), "12");
    assert_eq!(
        ok(
            "{{ range $i, $e := list \"x\" \"y\" }}{{ $i }}{{ $e }}{{ end }}",
            &[]
        ),
        "0x1y"
    );
    assert_eq!(
        ok("{{ range $e := list \"x\" \"y\" }}{{ $e }}{{ end }}", &[]),
        "xy"
    );
    assert_eq!(
        ok("{{ range list }}x{{ else }}empty{{ end }}", &[]),
        "empty"
    );
    assert_eq!(ok("{{ range 3 }}{{ . }}{{ end }}", &[]), "012");
    assert_eq!(
        ok(
            "{{ range $i := until 6 }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ if eq $i 4 }}{{ break }}{{ end }}{{ $i }}{{ end }}",
            &[]
        ),
        "023"
    );
    assert_eq!(
        ok("{{ range list 1 }}{{ $.a }}{{ end }}", &[("a", "root")]),
        "root"
    );
}

#[test]
fn variables_define_template_block() {
    assert_eq!(
        ok(
            "{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}",
            &[]
        ),
        "2"
    );
    assert_eq!(
        ok(
            "{{ define \"t\" }}<{{ . }}>{{ end }}{{ template \"t\" .a }}",
            &[("a", "x")]
        ),
        "<x>"
    );
    assert_eq!(
        ok("{{ block \"b\" .a }}[{{ . }}]{{ end }}", &[("a", "x")]),
        "[x]"
    );
    assert_eq!(
        ok(
            "{{ define \"t\" }}{{ . }}{{ end }}{{ template \"t\" }}",
            &[]
        ),
        "<no value>"
    );
    assert_eq!(ok("{{- define \"key\" }}defined{{ end -}}", &[]), "defined");
}

#[test]
fn values_print_as_go() {
    assert_eq!(
        ok(
            "{{ 1000000.0 }} {{ 123456.0 }} {{ 0.000012 }} {{ 3.0 }} {{ 1.5 }}",
            &[]
        ),
        "1e+06 123456 1.2e-05 3 1.5"
    );
    assert_eq!(ok("{{ (fromJson \"{\\\"p\\\":5432}\").p }}", &[]), "5432");
    assert_eq!(
        ok("{{ (fromJson \"{\\\"p\\\":12345678}\").p }}", &[]),
        "1.2345678e+07"
    );
    assert_eq!(
        ok("{{ \"null\" | fromJson }}|{{ print nil }}", &[]),
        "<no value>|<nil>"
    );
    assert_eq!(
        ok("{{ list 1 \"a\" nil (list true) }}", &[]),
        "[1 a <nil> [true]]"
    );
    assert_eq!(
        ok("{{ 0x1F }} {{ 'a' }} {{ 1_000 }} {{ 010 }} {{ -2 }}", &[]),
        "31 97 1000 8 -2"
    );
    assert_eq!(
        ok("{{ `a\\nb` }}|{{ \"a\\tb\\u00e9\\x41\" }}", &[]),
        "a\\nb|a\tbéA"
    );
}

#[test]
fn index_and_len() {
    assert_eq!(ok("[{{ index . \"nope\" }}]", &[]), "[]");
    assert_eq!(ok("{{ index . \"my-key\" }}", &[("my-key", "v")]), "v");
    assert_eq!(ok("{{ index (dict) \"x\" }}", &[]), "<no value>");
    assert_eq!(ok("{{ index (list 1 (list 2 3)) 1 0 }}", &[]), "2");
    assert_eq!(ok("{{ index \"abc\" 1 }}", &[]), "98");
    assert_eq!(
        ok(
            "{{ len .a }} {{ len (list 1 2) }} {{ len . }}",
            &[("a", "héllo")]
        ),
        "6 2 1"
    );
    assert!(
        fails("{{ index (list 1) 5 }}", &[]).contains("error calling index: index out of range: 5")
    );
}

#[test]
fn comparisons_and_logic() {
    assert_eq!(
        ok(
            "{{ eq 1 1 }} {{ eq \"a\" \"b\" \"a\" }} {{ ne 1 2 }} {{ lt \"a\" \"b\" }} {{ ge 2 2 }} {{ gt 1.5 2.5 }}",
            &[]
        ),
        "true true true true true false"
    );
    assert!(
        fails("{{ eq 1 \"1\" }}", &[])
            .contains("error calling eq: incompatible types for comparison")
    );
    assert!(fails("{{ lt 1 2.5 }}", &[]).contains("incompatible types for comparison"));
    assert!(fails("{{ lt true false }}", &[]).contains("invalid type for comparison"));
    assert_eq!(
        ok("{{ and 1 0 2 }} {{ or 0 \"\" \"x\" }} {{ not 0 }}", &[]),
        "0 x true"
    );
    assert_eq!(
        ok(
            "{{ or true (fail \"no\") }} {{ and false (fail \"no\") }}",
            &[]
        ),
        "true false"
    );
}

#[test]
fn printf_verbs() {
    assert_eq!(
        ok(
            "{{ printf \"%s-%d-%v-%q-%x-%5.2f-%t-%%\" \"a\" 3 true \"q\" \"hi\" 3.14159 false }}",
            &[]
        ),
        "a-3-true-\"q\"-6869- 3.14-false-%"
    );
    assert_eq!(
        ok(
            "{{ printf \"%05d|%-4s|%+d|%X|%o|%b|%c|%U\" 42 \"ab\" 5 255 8 5 65 65 }}",
            &[]
        ),
        "00042|ab  |+5|FF|10|101|A|U+0041"
    );
    assert_eq!(
        ok(
            "{{ printf \"%e|%g|%.3g|%E\" 123456.789 0.0001 3.14159 1.0 }}",
            &[]
        ),
        "1.234568e+05|0.0001|3.14|1.000000E+00"
    );
    assert_eq!(ok("{{ printf \"%d\" \"x\" }}", &[]), "%!d(string=x)");
    assert_eq!(ok("{{ printf \"%s %s\" \"x\" }}", &[]), "x %!s(MISSING)");
    assert_eq!(ok("{{ printf \"%s\" \"x\" 1 }}", &[]), "x%!(EXTRA int=1)");
    assert_eq!(
        ok("{{ printf \"%v %s\" (list 1 2) (list \"a\" \"b\") }}", &[]),
        "[1 2] [a b]"
    );
    assert_eq!(ok("{{ printf \"%[2]s %[1]s\" \"a\" \"b\" }}", &[]), "b a");
    assert_eq!(
        ok("{{ printf \"%6.2f|%-6.1f|%.0f\" 3.14159 2.0 2.5 }}", &[]),
        "  3.14|2.0   |2"
    );
}

#[test]
fn print_spacing() {
    assert_eq!(ok("{{ print 1 2 \"a\" 3 \"b\" \"c\" }}", &[]), "1 2a3bc");
    assert_eq!(ok("{{ println 1 2 \"a\" }}", &[]), "1 2 a\n");
}

#[test]
fn escapers() {
    assert_eq!(
        ok("{{ html \"<a href='x'>&</a>\" }}", &[]),
        "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
    );
    assert_eq!(
        ok("{{ js \"a'b\\\"<>=\" }}", &[]),
        "a\\'b\\\"\\u003C\\u003E\\u003D"
    );
    assert_eq!(ok("{{ urlquery \"a b&c/é\" }}", &[]), "a+b%26c%2F%C3%A9");
}

#[test]
fn parenthesised_pipelines_and_chains() {
    assert_eq!(
        ok(
            "{{ (fromJson .j).a.b }}",
            &[("j", "{\"a\":{\"b\":\"deep\"}}")]
        ),
        "deep"
    );
    assert_eq!(
        ok(
            "{{ $m := .j | fromJson }}{{ $m.a.b }}",
            &[("j", "{\"a\":{\"b\":1}}")]
        ),
        "1"
    );
    assert_eq!(
        ok(
            "{{ printf \"%s-%s\" (.a | upper) (lower \"B\") }}",
            &[("a", "x")]
        ),
        "X-b"
    );
}

#[test]
fn missing_keys_fail_with_go_message_and_position() {
    let error = fails("{{ .nope }}", &[("pass", "p@ss")]);
    assert_eq!(
        error,
        "template: key:1:3: executing \"key\" at <.nope>: map has no entry for key \"nope\""
    );
    let error = fails("line1\n  {{ .a.b }}", &[("a", "x")]);
    assert_eq!(
        error,
        "template: key:2:5: executing \"key\" at <.a.b>: can't evaluate field b in type string"
    );
    let error = fails("{{ $x := fromJson \"{}\" }}{{ $x.missing }}", &[]);
    assert!(
        error.ends_with("map has no entry for key \"missing\""),
        "{error}"
    );
    let error = fails("{{ $x := fromJson \"{\\\"n\\\":null}\" }}{{ $x.n.y }}", &[]);
    assert!(
        error.ends_with("nil pointer evaluating interface {}.y"),
        "{error}"
    );
    assert!(fails("{{ .a 1 }}", &[("a", "x")]).contains("a is not a method but has arguments"));
}

#[test]
fn parse_errors_name_key_and_position() {
    let error = fails("{{ #xx }}", &[]);
    assert_eq!(error, "template: key:1: unexpected \"#\" in command");
    assert!(fails("{{ nope }}", &[]).contains("function \"nope\" not defined"));
    assert!(fails("a\n{{ .a", &[]).contains("key:2:"));
    assert!(fails("{{ .a", &[]).contains("unclosed action"));
    assert!(fails("{{ end }}", &[]).contains("unexpected {{end}}"));
    assert!(fails("{{ if true }}", &[]).contains("unexpected EOF"));
    assert!(fails("{{ $x }}", &[]).contains("undefined variable \"$x\""));
    assert!(
        fails("{{ .a | \"x\" }}", &[("a", "")])
            .contains("non executable command in pipeline stage 2")
    );
    assert!(fails("{{ break }}", &[]).contains("{{break}} outside {{range}}"));
    assert!(fails("{{ \"a\" \"b\" }}", &[]).contains("can't give argument to non-function"));
    assert!(fails("{{ nil }}", &[]).contains("nil is not a command"));
    assert!(fails("{{ env \"HOME\" }}", &[]).contains("function \"env\" not defined"));
    assert!(fails("{{ expandenv \"$HOME\" }}", &[]).contains("function \"expandenv\" not defined"));
    assert!(
        fails("{{ getHostByName \"x\" }}", &[]).contains("function \"getHostByName\" not defined")
    );
}

#[test]
fn errors_never_carry_secret_values() {
    let pairs = [
        ("password", "hunter2-secret"),
        ("pfx", "aHVudGVyMi1zZWNyZXQ="),
    ];
    for source in [
        "{{ .nope }}",
        "{{ .password.field }}",
        "{{ .password | int | printf \"%s\" | eq 1 }}",
        "{{ range .password }}{{ end }}",
        "{{ .pfx | b64dec | pkcs12key }}",
        "{{ .password | fromJson | toJson | jwkPublicKeyPem }}",
        "{{ index .password 99 }}",
        "{{ .password | filterCertChain \"leaf\" }}",
    ] {
        let error = fails(source, &pairs);
        assert!(!error.contains("hunter2"), "{source}: {error}");
    }
}

#[test]
fn custom_delimiters() {
    let delimiters = Delimiters {
        left: "<<".into(),
        right: ">>".into(),
    };
    let out = render(
        "foo",
        "<< .secret | b64dec >> {{ kept }}",
        &data(&[("secret", "MTIzNA==")]),
        &delimiters,
    );
    assert_eq!(out.unwrap(), b"1234 {{ kept }}");
}

#[test]
fn secret_values_are_byte_strings() {
    let mut pairs = data(&[]);
    pairs.insert("bin".into(), vec![0xff, 0x00, 0x80]);
    let out = render(
        "k",
        "{{ .bin }}|{{ len .bin }}|{{ .bin | b64enc }}",
        &pairs,
        &Delimiters::default(),
    )
    .unwrap();
    assert_eq!(out, [&[0xff, 0x00, 0x80][..], b"|3|/wCA"].concat());
    let error = render("k", "{{ .a", &pairs, &Delimiters::default()).unwrap_err();
    assert!(matches!(error, TemplateError::Parse { line: 1, .. }));
}

#[test]
fn nested_data_and_go_default_missing_keys() {
    let data = Data::Map(BTreeMap::from([
        ("remoteRef".to_owned(), Data::strings([("key", "a b/c")])),
        ("creds".to_owned(), Data::strings([("token", "t0k")])),
    ]));
    let lenient = Options {
        missing_key: MissingKey::Default,
        ..Options::default()
    };
    let source = "{{ .remoteRef.key | urlquery }}|{{ .remoteRef.nope }}|{{ .nope.deeper }}|{{ index .remoteRef \"nope\" }}|{{ .creds.token }}";
    let template = Template::parse("url", source, &lenient).unwrap();
    assert_eq!(
        template.execute(&data).unwrap(),
        b"a+b%2Fc|<no value>|<no value>||t0k"
    );
    assert_eq!(
        template.execute(&data).unwrap(),
        b"a+b%2Fc|<no value>|<no value>||t0k",
        "parsed once, run again"
    );
    let strict = Template::parse("url", "{{ .remoteRef.nope }}", &Options::default()).unwrap();
    assert_eq!(
        strict.execute(&data).unwrap_err().to_string(),
        "template: url:1:3: executing \"url\" at <.remoteRef.nope>: map has no entry for key \"nope\""
    );
    fn shareable<T: Send + Sync>(_: &T) {}
    shareable(&template);
    assert_eq!(
        crate::query_escape("a b&c/é".as_bytes()),
        "a+b%26c%2F%C3%A9"
    );
}
