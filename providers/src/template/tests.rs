//! Go-template compatibility cases for the webhook templates.

use super::functions::{query_escape, string_map};
use super::*;

fn data() -> Value {
    Value::Map(BTreeMap::from([
        (
            "remoteRef".to_owned(),
            string_map([
                ("key", "my key".to_owned()),
                ("version", String::new()),
                ("remoteKey", "rk".to_owned()),
                ("rk", "pushed value".to_owned()),
            ]),
        ),
        (
            "auth".to_owned(),
            string_map([
                ("username", "test".to_owned()),
                ("password", "test".to_owned()),
            ]),
        ),
    ]))
}

fn render(source: &str) -> Result<String, String> {
    Template::parse(source)?.render(&data())
}

#[test]
fn upstream_documented_templates() {
    assert_eq!(
        render("http://httpbin.org/get?parameter={{ .remoteRef.key }}").unwrap(),
        "http://httpbin.org/get?parameter=my key"
    );
    assert_eq!(
        render(r#"Basic {{ print .auth.username ":" .auth.password | b64enc }}"#).unwrap(),
        "Basic dGVzdDp0ZXN0"
    );
    assert_eq!(
        render(r#"{"secret-field": "{{ index .remoteRef .remoteRef.remoteKey }}"}"#).unwrap(),
        r#"{"secret-field": "pushed value"}"#
    );
    assert_eq!(render(r#"{{ "" }}"#).unwrap(), "");
    assert_eq!(render("$.args.parameter").unwrap(), "$.args.parameter");
}

#[test]
fn missing_values_behave_like_go() {
    assert_eq!(render("{{ .remoteRef.nope }}").unwrap(), "<no value>");
    assert_eq!(render("{{ .nope.deeper }}").unwrap(), "<no value>");
    assert_eq!(render("{{ index .remoteRef \"nope\" }}").unwrap(), "");
    assert_eq!(
        render("{{ .remoteRef.nope | default .remoteRef.key }}").unwrap(),
        "my key"
    );
    assert_eq!(
        render("{{ .remoteRef.version | default \"latest\" }}").unwrap(),
        "latest"
    );
    assert_eq!(
        render("{{ .auth }}").unwrap(),
        "map[password:test username:test]"
    );
}

#[test]
fn conditionals() {
    let source = "{{ if .remoteRef.remoteKey }}{{ .remoteRef.remoteKey }}{{ else }}{{ .remoteRef.key }}{{ end }}";
    assert_eq!(render(source).unwrap(), "rk");
    let source =
        "{{ if .remoteRef.nope }}a{{ else if eq .remoteRef.key \"my key\" }}b{{ else }}c{{ end }}";
    assert_eq!(render(source).unwrap(), "b");
    assert_eq!(
        render("{{if .remoteRef.version}}v={{.remoteRef.version}}{{end}}").unwrap(),
        ""
    );
    assert_eq!(
        render("{{ if not .remoteRef.version }}none{{ end }}").unwrap(),
        "none"
    );
}

#[test]
fn trim_markers_comments_and_literals() {
    assert_eq!(render("a  {{- \"b\" -}}  c").unwrap(), "abc");
    assert_eq!(render("a {{/* note */}}b").unwrap(), "a b");
    assert_eq!(
        render("{{ `raw\\n` }}{{ \"tab\\t\\u00e9\" }}").unwrap(),
        "raw\\ntab\té"
    );
    assert_eq!(render("{{ print 1 2 \"x\" 3 }}").unwrap(), "1 2x3");
    assert_eq!(
        render("{{ printf \"%s-%d%%\" .remoteRef.key 5 }}").unwrap(),
        "my key-5%"
    );
    assert_eq!(render("{{ -3 }}").unwrap(), "-3");
    assert_eq!(
        render("{{ (print .remoteRef.key) | upper }}").unwrap(),
        "MY KEY"
    );
    assert_eq!(render("{{ $.auth.username }}").unwrap(), "test");
}

#[test]
fn string_functions() {
    assert_eq!(render("{{ urlquery .remoteRef.key }}").unwrap(), "my+key");
    assert_eq!(render("{{ \"a b/c\" | urlquery }}").unwrap(), "a+b%2Fc");
    assert_eq!(render("{{ \"dGVzdA==\" | b64dec }}").unwrap(), "test");
    assert_eq!(
        render("{{ .remoteRef.key | quote }}").unwrap(),
        "\"my key\""
    );
    assert_eq!(
        render("{{ .remoteRef.key | replace \" \" \"-\" }}").unwrap(),
        "my-key"
    );
    assert_eq!(render("{{ \"/p/x\" | trimPrefix \"/p\" }}").unwrap(), "/x");
    assert_eq!(render("{{ len .auth }}").unwrap(), "2");
    assert_eq!(
        render("{{ toJson .auth }}").unwrap(),
        r#"{"password":"test","username":"test"}"#
    );
}

#[test]
fn parse_errors_are_reported_without_data() {
    for (source, expected) in [
        ("{{ .a", "unclosed action"),
        ("{{ nope .a }}", "function \"nope\" not defined"),
        ("{{ if .a }}x", "unexpected EOF: missing {{end}}"),
        ("{{ end }}", "unexpected {{end}}"),
        ("{{ define \"x\" }}{{ end }}", "{{define}} is not supported"),
        ("{{ range .a }}", "unexpected EOF: missing {{end}}"),
        ("{{ .a .b }}", "can't give argument to non-function"),
        ("{{ }}", "missing value for command"),
        ("{{ \"x }}", "unclosed action"),
    ] {
        let error = Template::parse(source).unwrap_err();
        assert_eq!(error, expected, "{source}");
    }
    let error = render("{{ .remoteRef.key.deeper }}").unwrap_err();
    assert_eq!(error, "can't evaluate field deeper in a non-map value");
}

#[test]
fn query_escape_matches_go() {
    assert_eq!(query_escape("a b&c=d/é~"), "a+b%26c%3Dd%2F%C3%A9~");
}

#[test]
fn range_with_and_variables_follow_go() {
    let secrets = Value::Map(BTreeMap::from([(
        "data".to_owned(),
        string_map([("b", "2".to_owned()), ("a", "1".to_owned())]),
    )]));
    let run = |source: &str| Template::parse(source)?.render(&secrets);
    // Keys in sorted order, as Go ranges over maps.
    assert_eq!(
        run("{{ range $k, $v := .data }}{{ $k }}={{ $v }};{{ end }}").unwrap(),
        "a=1;b=2;"
    );
    assert_eq!(
        run("{{ range .data }}[{{ . }}]{{ end }}").unwrap(),
        "[1][2]"
    );
    assert_eq!(
        run("{{ range .missing }}x{{ else }}empty{{ end }}").unwrap(),
        "empty"
    );
    // Variables: declared, reassigned, scoped to their block; `$` is the root.
    assert_eq!(
        run("{{ $n := \"x\" }}{{ range .data }}{{ $n = . }}{{ end }}{{ $n }}").unwrap(),
        "2"
    );
    assert_eq!(
        run("{{ with .data }}{{ .a }}-{{ $.data.b }}{{ end }}").unwrap(),
        "1-2"
    );
    assert_eq!(
        run("{{ with $d := .data.a }}{{ $d }}{{ else }}none{{ end }}").unwrap(),
        "1"
    );
    assert_eq!(
        run("{{ with .nothing }}x{{ else }}none{{ end }}").unwrap(),
        "none"
    );
    assert_eq!(
        run("{{ if true }}{{ $inner := 1 }}{{ end }}{{ $inner }}").unwrap_err(),
        "undefined variable: $inner"
    );
    assert_eq!(
        run("{{ range .data.a }}{{ end }}").unwrap_err(),
        "range can't iterate over a non-map value"
    );
}
