//! `fromYaml` reads YAML as upstream's sigs.k8s.io/yaml `Unmarshal` does: go-yaml v2 (YAML 1.1
//! plain scalars, merge keys, last duplicate wins), then JSON. Expected values are what
//! sigs.k8s.io/yaml over gopkg.in/yaml.v2 v2.4.0 gives for each document.

use super::ok;

/// (YAML document, `fromYaml | toJson` of it)
const CASES: &[(&str, &str)] = &[
    // YAML 1.1 booleans, as values and as keys.
    ("a: yes", r#"{"a":true}"#),
    ("a: 'yes'", r#"{"a":"yes"}"#),
    ("a: \"yes\"\nb: |\n  no", r#"{"a":"yes","b":"no"}"#),
    (
        "{y: Y, n: N, on: On, off: OFF, t: True, f: FALSE, yes: No}",
        r#"{"f":false,"false":false,"t":true,"true":false}"#,
    ),
    ("a: !foo yes", r#"{"a":"yes"}"#),
    // Go's ParseInt with base 0 (underscores dropped), then ParseUint, then a float.
    ("a: 0755", r#"{"a":493}"#),
    ("a: 08", r#"{"a":8}"#),
    ("a: 1_000", r#"{"a":1000}"#),
    ("a: 0x1F", r#"{"a":31}"#),
    ("a: 0X1F", r#"{"a":31}"#),
    ("a: 0o17", r#"{"a":15}"#),
    ("a: 0b101", r#"{"a":5}"#),
    ("a: -012", r#"{"a":-10}"#),
    ("a: +12", r#"{"a":12}"#),
    ("a: -0", r#"{"a":0}"#),
    ("a: 0x", r#"{"a":"0x"}"#),
    ("a: 1e3", r#"{"a":1000}"#),
    ("a: .5", r#"{"a":0.5}"#),
    ("a: +.5", r#"{"a":0.5}"#),
    ("a: 1.", r#"{"a":1}"#),
    ("a: 0.1_5", r#"{"a":0.15}"#),
    ("a: 18446744073709551615", r#"{"a":18446744073709552000}"#),
    ("a: -9223372036854775809", r#"{"a":-9223372036854776000}"#),
    ("a: 99999999999999999999", r#"{"a":100000000000000000000}"#),
    // Timestamps stay strings in interface{}.
    ("a: 2001-12-14", r#"{"a":"2001-12-14"}"#),
    // Keys: ints in decimal, floats as float32 `%g`, booleans as words.
    (
        "1: a\n1.5: b\n1e6: c\ntrue: d\n0.1: e\n3.14159265358979: f",
        r#"{"0.1":"e","1":"a","1.5":"b","1e+06":"c","3.1415927":"f","true":"d"}"#,
    ),
    ("1: a\n\"1\": b", r#"{"1":"b"}"#),
    // The last of repeated keys wins; `<<` merges (and `y` is a boolean key).
    ("a: 1\na: 2", r#"{"a":2}"#),
    (
        "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3",
        r#"{"base":{"true":2,"x":1},"m":{"true":3,"x":1}}"#,
    ),
    (
        "m:\n  y: 3\n  <<: [{y: 4, z: 5}, {z: 6, w: 7}]",
        r#"{"m":{"true":4,"w":7,"z":5}}"#,
    ),
    ("m:\n  '<<': {a: 1}", r#"{"m":{"\u003c\u003c":{"a":1}}}"#),
    ("a: <<", r#"{"a":"\u003c\u003c"}"#),
    // Only the first document is read.
    ("a: b\n---\nc: d", r#"{"a":"b"}"#),
    // Failures land in `.Error`.
    (
        "a: .inf",
        r#"{"Error":"error converting YAML to JSON: json: unsupported value: +Inf"}"#,
    ),
    (
        "- a",
        r#"{"Error":"error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"}"#,
    ),
];

#[test]
fn from_yaml_reads_as_go_yaml_v2() {
    for (document, expected) in CASES {
        assert_eq!(
            ok("{{ .y | fromYaml | toJson }}", &[("y", document)]),
            *expected,
            "{document:?}"
        );
    }
}

#[test]
fn from_yaml_numbers_print_as_float64() {
    assert_eq!(
        ok("{{ (.y | fromYaml).a }}", &[("y", "a: 1000000")]),
        "1e+06"
    );
}

/// Upstream's messages for these show the offending key and value; ours stop before them, as
/// every error here leaves the content out.
#[test]
fn from_yaml_errors_leave_content_out() {
    let error = |document: &str| ok("{{ (.y | fromYaml).Error }}", &[("y", document)]);
    assert_eq!(
        error("~: x"),
        "error converting YAML to JSON: unsupported map key of type: %!s(<nil>)"
    );
    assert_eq!(
        error("? [a]\n: b"),
        "error converting YAML to JSON: yaml: invalid map key"
    );
    // Upstream: `yaml: line 1: did not find expected ',' or ']'`.
    let syntax = error("a: [1");
    assert!(
        syntax.starts_with("error converting YAML to JSON: yaml: line ")
            && syntax.ends_with(": invalid YAML"),
        "{syntax}"
    );
    assert_eq!(
        error("m:\n  <<: 1"),
        "error converting YAML to JSON: yaml: map merge requires map or sequence of maps as the value"
    );
}

/// apimachinery's `yaml.Unmarshal` into `interface{}` (the controller's nested targets) keeps
/// integers: Go's JSON text of the number, read back with `UseNumber`.
#[test]
fn yaml_to_json_numbers_read_back_as_go_json_text() {
    let json =
        crate::yaml_to_json("a: 42\nb: 3.14\nc: 1.0\nd: 1e6\ne: 1e21\nf: 18446744073709551615")
            .unwrap();
    assert_eq!(
        json.to_string(),
        r#"{"a":42,"b":3.14,"c":1,"d":1000000,"e":1e+21,"f":1.8446744073709552e+19}"#
    );
}

/// `Unmarshal` into `map[string]string`, as upstream reads `KeysAndValues` output (expected
/// values from sigs.k8s.io/yaml).
#[test]
fn yaml_to_string_map_prints_scalars_as_go() {
    let map = crate::yaml_to_string_map(
        "port: 5432\nok: yes\nr: 0.1\nbig: 1e6\nn: ~\npi: 3.14159265358979\nhuge: 18446744073709551615\nneg: -7\ny: n\nf: 1.0\ninf: .inf",
    )
    .unwrap();
    let pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
        pairs.join(" "),
        "big=1e+06 f=1 false= huge=18446744073709551615 inf=+Inf neg=-7 ok=true pi=3.1415927 port=5432 r=0.1 true=false"
    );
    assert!(crate::yaml_to_string_map("").unwrap().is_empty());
    assert!(crate::yaml_to_string_map("~").unwrap().is_empty());
    let fails = |text: &str| crate::yaml_to_string_map(text).unwrap_err().to_string();
    assert_eq!(
        fails("l: [1]"),
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type string"
    );
    assert_eq!(
        fails("m: {a: 1}"),
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go value of type string"
    );
    assert_eq!(
        fails("- a"),
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]string"
    );
}

/// The inputs of upstream's `TestTryParseYAML` (the controller's nested-path leaves): what
/// `yaml_to_json` gives for each, or an error where upstream keeps the text as it is.
#[test]
fn yaml_to_json_reads_try_parse_yaml_inputs() {
    let cases = [
        ("key: value\nfoo: bar", r#"{"foo":"bar","key":"value"}"#),
        ("- item1\n- item2\n- item3", r#"["item1","item2","item3"]"#),
        ("42", "42"),
        ("true", "true"),
        ("false", "false"),
        ("3.14", "3.14"),
        (
            "database:\n  host: localhost\n  port: 5432\n  enabled: true",
            r#"{"database":{"enabled":true,"host":"localhost","port":5432}}"#,
        ),
        ("just a string", r#""just a string""#),
        ("", "null"),
    ];
    for (text, json) in cases {
        assert_eq!(
            crate::yaml_to_json(text).unwrap().to_string(),
            json,
            "{text:?}"
        );
    }
    assert!(crate::yaml_to_json("invalid: : yaml:").is_err());
}
