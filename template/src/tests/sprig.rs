//! Sprig functions as upstream vendors them (expected values from Sprig's documentation and
//! Go's behaviour), plus the function map's coverage.

use super::{fails, ok};
use crate::functions::exists;

/// Every function upstream's vendored `sprig.GenericFuncMap` registers.
pub(super) const SPRIG: &[&str] = &[
    "hello",
    "ago",
    "date",
    "date_in_zone",
    "date_modify",
    "dateInZone",
    "dateModify",
    "duration",
    "durationRound",
    "htmlDate",
    "htmlDateInZone",
    "must_date_modify",
    "mustDateModify",
    "mustToDate",
    "now",
    "toDate",
    "unixEpoch",
    "abbrev",
    "abbrevboth",
    "trunc",
    "trim",
    "upper",
    "lower",
    "title",
    "untitle",
    "substr",
    "repeat",
    "trimall",
    "trimAll",
    "trimSuffix",
    "trimPrefix",
    "nospace",
    "initials",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "swapcase",
    "shuffle",
    "snakecase",
    "camelcase",
    "kebabcase",
    "wrap",
    "wrapWith",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "quote",
    "squote",
    "cat",
    "indent",
    "nindent",
    "replace",
    "plural",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "adler32sum",
    "toString",
    "atoi",
    "int64",
    "int",
    "float64",
    "seq",
    "toDecimal",
    "split",
    "splitList",
    "splitn",
    "toStrings",
    "until",
    "untilStep",
    "add1",
    "add",
    "sub",
    "div",
    "mod",
    "mul",
    "randInt",
    "add1f",
    "addf",
    "subf",
    "divf",
    "mulf",
    "biggest",
    "max",
    "min",
    "maxf",
    "minf",
    "ceil",
    "floor",
    "round",
    "join",
    "sortAlpha",
    "default",
    "empty",
    "coalesce",
    "all",
    "any",
    "compact",
    "mustCompact",
    "fromJson",
    "toJson",
    "toPrettyJson",
    "toRawJson",
    "mustFromJson",
    "mustToJson",
    "mustToPrettyJson",
    "mustToRawJson",
    "ternary",
    "deepCopy",
    "mustDeepCopy",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "base",
    "dir",
    "clean",
    "ext",
    "isAbs",
    "osBase",
    "osClean",
    "osDir",
    "osExt",
    "osIsAbs",
    "b64enc",
    "b64dec",
    "b32enc",
    "b32dec",
    "hexdec",
    "tuple",
    "list",
    "dict",
    "get",
    "set",
    "unset",
    "hasKey",
    "pluck",
    "keys",
    "pick",
    "omit",
    "merge",
    "mergeOverwrite",
    "mustMerge",
    "mustMergeOverwrite",
    "values",
    "append",
    "push",
    "mustAppend",
    "mustPush",
    "prepend",
    "mustPrepend",
    "first",
    "mustFirst",
    "rest",
    "mustRest",
    "last",
    "mustLast",
    "initial",
    "mustInitial",
    "reverse",
    "mustReverse",
    "uniq",
    "mustUniq",
    "without",
    "mustWithout",
    "has",
    "mustHas",
    "slice",
    "mustSlice",
    "concat",
    "dig",
    "chunk",
    "mustChunk",
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "randBytes",
    "uuidv4",
    "semver",
    "semverCompare",
    "fail",
    "regexMatch",
    "mustRegexMatch",
    "regexFindAll",
    "mustRegexFindAll",
    "regexFind",
    "mustRegexFind",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
    "urlParse",
    "urlJoin",
];

/// ESO's own functions (`tplFuncs` in upstream's template.go).
pub(super) const ESO: &[&str] = &[
    "pkcs12key",
    "pkcs12keyPass",
    "pkcs12cert",
    "pkcs12certPass",
    "pemToPkcs12",
    "pemToPkcs12Pass",
    "fullPemToPkcs12",
    "fullPemToPkcs12Pass",
    "pemTruststoreToPKCS12",
    "pemTruststoreToPKCS12Pass",
    "filterPEM",
    "filterCertChain",
    "certSANs",
    "jwkPublicKeyPem",
    "jwkPrivateKeyPem",
    "toYaml",
    "fromYaml",
    "rsaDecrypt",
];

#[test]
fn function_map_matches_upstream() {
    for name in SPRIG.iter().chain(ESO) {
        assert!(exists(name), "{name}");
    }
    for name in ["env", "expandenv", "getHostByName"] {
        assert!(!exists(name), "{name} must not be exposed");
    }
}

/// Go's `text/template` builtins.
const GO_BUILTINS: &[&str] = &[
    "and", "call", "eq", "ge", "gt", "html", "index", "js", "le", "len", "lt", "ne", "not", "or",
    "print", "printf", "println", "slice", "urlquery",
];

/// GHSA-r2pg: the exact function list is upstream's, so no function with network, file or
/// environment access can slip in unnoticed.
#[test]
fn no_function_beyond_upstreams_list_is_exposed() {
    let allowed: std::collections::BTreeSet<&str> = SPRIG
        .iter()
        .chain(ESO)
        .chain(GO_BUILTINS)
        .copied()
        .collect();
    let extra: Vec<&str> = crate::functions::names()
        .filter(|name| !allowed.contains(name))
        .collect();
    assert!(extra.is_empty(), "functions beyond upstream's: {extra:?}");
}

#[test]
fn string_functions() {
    let cases = [
        ("{{ trim \"  a b  \" }}", "a b"),
        ("{{ trimAll \"$\" \"$5.00$\" }}", "5.00"),
        (
            "{{ trimSuffix \"-\" \"hello-\" }}|{{ trimPrefix \"-\" \"-hello\" }}",
            "hello|hello",
        ),
        (
            "{{ upper \"hello\" }} {{ lower \"HELLO\" }} {{ title \"hello world\" }} {{ untitle \"Hello World\" }}",
            "HELLO hello Hello World hello world",
        ),
        ("{{ repeat 3 \"ab\" }}", "ababab"),
        (
            "{{ substr 0 5 \"hello world\" }}|{{ substr 6 -1 \"hello world\" }}",
            "hello|world",
        ),
        ("{{ nospace \"hello w o r l d\" }}", "helloworld"),
        (
            "{{ trunc 5 \"hello world\" }}|{{ trunc -5 \"hello world\" }}",
            "hello|world",
        ),
        (
            "{{ abbrev 5 \"hello world\" }}|{{ abbrevboth 5 10 \"1234 5678 9123\" }}",
            "he...|...5678...",
        ),
        ("{{ initials \"First Try\" }}", "FT"),
        (
            "{{ wrap 5 \"Hello World\" }}|{{ wrapWith 5 \"\\t\" \"Hello World\" }}",
            "Hello\nWorld|Hello\tWorld",
        ),
        (
            "{{ contains \"cat\" \"catch\" }} {{ hasPrefix \"cat\" \"catch\" }} {{ hasSuffix \"cat\" \"catch\" }}",
            "true true false",
        ),
        (
            "{{ quote \"a\" 1 nil }}|{{ squote \"a\" }}",
            "\"a\" \"1\"|'a'",
        ),
        (
            "{{ cat \"hello\" \"beautiful\" \"world\" }}|{{ cat \"a\" nil 1 }}",
            "hello beautiful world|a 1",
        ),
        (
            "{{ indent 4 \"a\\nb\" }}|{{ nindent 2 \"a\" }}",
            "    a\n    b|\n  a",
        ),
        (
            "{{ replace \" \" \"-\" \"I Am Henry VIII\" }}",
            "I-Am-Henry-VIII",
        ),
        (
            "{{ plural \"one anchovy\" \"many anchovies\" 2 }}",
            "many anchovies",
        ),
        (
            "{{ snakecase \"FirstName\" }} {{ camelcase \"http_server\" }} {{ kebabcase \"FirstName\" }}",
            "first_name HttpServer first-name",
        ),
        ("{{ swapcase \"This Is A.Test\" }}", "tHIS iS a.tEST"),
        ("{{ toString 5 }} {{ atoi \"42\" | add 1 }}", "5 43"),
        (
            "{{ $a := split \"$\" \"foo$bar$baz\" }}{{ $a._0 }} {{ splitList \"$\" \"foo$bar$baz\" }} {{ splitn \"$\" 2 \"foo$bar$baz\" }}",
            "foo [foo bar baz] map[_0:foo _1:bar$baz]",
        ),
        (
            "{{ join \"-\" (list \"a\" \"b\" 1) }} {{ sortAlpha (list \"c\" \"a\" \"b\") }} {{ toStrings (list 1 2) }}",
            "a-b-1 [a b c] [1 2]",
        ),
        ("{{ shuffle \"aaa\" }} {{ hello }}", "aaa Hello!"),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
    // Sprig's `substring`: an end past the string means "to the end"; a start past it panics
    // in Go, which text/template reports as an error.
    assert_eq!(ok("{{ substr 0 50 \"short\" }}", &[]), "short");
    assert!(fails("{{ substr 6 50 \"short\" }}", &[]).contains("slice bounds out of range"));
    assert!(fails("{{ substr -1 50 \"short\" }}", &[]).contains("slice bounds out of range"));
}

#[test]
fn regex_functions() {
    let cases = [
        (
            "{{ regexMatch \"^[a-z]+@[a-z]+\\\\.com$\" \"test@acme.com\" }} {{ regexMatch \"(\" \"x\" }}",
            "true false",
        ),
        (
            "{{ regexFindAll \"[2,4,6,8]\" \"123456789\" -1 }} {{ regexFindAll \"[2,4,6,8]\" \"123456789\" 2 }}",
            "[2 4 6 8] [2 4]",
        ),
        ("{{ regexFind \"[a-zA-Z][1-9]\" \"abcd1234\" }}", "d1"),
        (
            "{{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" \"${1}W\" }}",
            "-W-xxW-",
        ),
        (
            "{{ regexReplaceAllLiteral \"a(x*)b\" \"-ab-axxb-\" \"${1}\" }}",
            "-${1}-${1}-",
        ),
        (
            "{{ regexSplit \"z+\" \"pizza\" -1 }} {{ regexSplit \"z+\" \"pizza\" 1 }}",
            "[pi a] [pizza]",
        ),
        ("{{ regexQuoteMeta \"1.2.3\" }}", "1\\.2\\.3"),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
    assert!(fails("{{ mustRegexMatch \"(\" \"x\" }}", &[]).contains("error parsing regexp"));
}

#[test]
fn list_functions() {
    let cases = [
        (
            "{{ first (list 1 2 3) }} {{ last (list 1 2 3) }} {{ rest (list 1 2 3) }} {{ initial (list 1 2 3) }}",
            "1 3 [2 3] [1 2]",
        ),
        (
            "{{ append (list 1 2) 3 }} {{ prepend (list 1 2) 0 }} {{ reverse (list 1 2 3) }}",
            "[1 2 3] [0 1 2] [3 2 1]",
        ),
        (
            "{{ uniq (list 1 1 2) }} {{ without (list 1 2 3) 2 }} {{ has 4 (list 1 2 3 4) }}",
            "[1 2] [1 3] true",
        ),
        (
            "{{ compact (list 1 \"\" nil 2) }} {{ slice (list 1 2 3 4) 1 3 }} {{ concat (list 1) (list 2 3) }}",
            "[1 2] [2 3] [1 2 3]",
        ),
        (
            "{{ chunk 2 (list 1 2 3) }} {{ until 3 }} {{ untilStep 3 6 2 }}",
            "[[1 2] [3]] [0 1 2] [3 5]",
        ),
        (
            "{{ seq 5 }}|{{ seq 5 1 }}|{{ seq 0 2 10 }}",
            "1 2 3 4 5|5 4 3 2 1|0 2 4 6 8 10",
        ),
        (
            "{{ first (list) }} {{ rest (list) }} {{ tuple 1 \"a\" }}",
            "<no value> [] [1 a]",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
    assert!(fails("{{ first \"abc\" }}", &[]).contains("Cannot find first on type string"));
}

#[test]
fn dict_functions() {
    let cases = [
        (
            "{{ $d := dict \"a\" 1 \"b\" \"x\" }}{{ $d.a }}{{ get $d \"b\" }}{{ get $d \"c\" }}|{{ hasKey $d \"a\" }}",
            "1x|true",
        ),
        (
            "{{ $d := dict }}{{ $_ := set $d \"k\" \"v\" }}{{ $d.k }}{{ $_ := unset $d \"k\" }}{{ len $d }}",
            "v0",
        ),
        (
            "{{ keys (dict \"b\" 1 \"a\" 2) | sortAlpha }} {{ values (dict \"b\" 1 \"a\" 2) }}",
            "[a b] [2 1]",
        ),
        (
            "{{ pluck \"a\" (dict \"a\" 1) (dict \"a\" 2 \"b\" 3) }} {{ pick (dict \"a\" 1 \"b\" 2) \"a\" }} {{ omit (dict \"a\" 1 \"b\" 2) \"a\" }}",
            "[1 2] map[a:1] map[b:2]",
        ),
        (
            "{{ $dst := dict \"a\" 1 \"n\" (dict \"x\" 1) }}{{ merge $dst (dict \"a\" 2 \"b\" 3 \"n\" (dict \"y\" 2)) }}",
            "map[a:1 b:3 n:map[x:1 y:2]]",
        ),
        (
            "{{ $dst := dict \"a\" 1 \"n\" (dict \"x\" 1) }}{{ mergeOverwrite $dst (dict \"a\" 2 \"b\" 3 \"n\" (dict \"y\" 2)) }}",
            "map[a:2 b:3 n:map[x:1 y:2]]",
        ),
        (
            "{{ dig \"a\" \"b\" \"def\" (dict \"a\" (dict \"b\" \"found\")) }} {{ dig \"a\" \"z\" \"def\" (dict \"a\" (dict)) }}",
            "found def",
        ),
        (
            "{{ $a := dict \"l\" (list 1) }}{{ $b := deepCopy $a }}{{ $_ := set $b \"x\" 1 }}{{ $a }} {{ $b }}",
            "map[l:[1]] map[l:[1] x:1]",
        ),
        ("{{ dict \"odd\" }}", "map[odd:]"),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
}

#[test]
fn math_and_defaults() {
    let cases = [
        (
            "{{ add 1 2 \"3\" }} {{ sub 5 2 }} {{ mul 2 3 4 }} {{ div 7 2 }} {{ mod 7 3 }} {{ add1 1 }}",
            "6 3 24 3 1 2",
        ),
        (
            "{{ max 1 5 3 }} {{ min 4 2 }} {{ biggest 1 9 }} {{ maxf 1 2.5 }} {{ minf 1 2.5 }}",
            "5 2 9 2.5 1",
        ),
        (
            "{{ addf 1.1 2.2 }} {{ subf 1.5 0.5 }} {{ mulf 1.1 3 }} {{ divf 10 4 }} {{ divf 1 3 }} {{ add1f 0.1 }}",
            "3.3 1 3.3 2.5 0.3333333333333333 1.1",
        ),
        (
            "{{ floor 1.7 }} {{ ceil 1.2 }} {{ round 3.14159 2 }} {{ round 2.5 0 }}",
            "1 2 3.14 3",
        ),
        (
            "{{ int \"42\" }} {{ int64 3.9 }} {{ float64 \"1.5\" }} {{ toDecimal \"0777\" }} {{ int \"0x10\" }} {{ int \"nope\" }}",
            "42 3 1.5 511 16 0",
        ),
        (
            "{{ default \"foo\" \"\" }} {{ default \"foo\" \"bar\" }} {{ empty \"\" }} {{ empty 0 }} {{ empty (list 1) }}",
            "foo bar true true false",
        ),
        (
            "{{ coalesce \"\" 0 \"x\" }} {{ ternary \"a\" \"b\" true }} {{ all 1 \"a\" }} {{ any 0 \"\" }}",
            "x a true false",
        ),
        (
            "{{ typeOf 1 }} {{ typeOf 1.5 }} {{ kindOf (list) }} {{ kindIs \"map\" (dict) }} {{ deepEqual (list 1) (list 1) }}",
            "int float64 slice true true",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
    assert!(fails("{{ div 1 0 }}", &[]).contains("integer divide by zero"));
    assert!(fails("{{ fail \"boom\" }}", &[]).ends_with("error calling fail: boom"));
}

#[test]
fn encoding_and_hashes() {
    let cases = [
        (
            "{{ b64enc \"hello\" }} {{ b64dec \"aGVs\\nbG8=\" }} {{ b32enc \"hello\" }} {{ b32dec \"NBSWY3DP\" }}",
            "aGVsbG8= hello NBSWY3DP hello",
        ),
        (
            "{{ hexdec \"zz\" }}|{{ hexdec \"abc\" }}|{{ hexdec \"6869\" }}",
            "encoding/hex: invalid byte: U+007A 'z'|encoding/hex: odd length hex string|hi",
        ),
        (
            "{{ b64dec \"aGk\" }}|{{ b32dec \"1\" }}",
            "illegal base64 data at input byte 0|illegal base32 data at input byte 0",
        ),
        (
            "{{ sha1sum \"abc\" }}",
            "a9993e364706816aba3e25717850c26c9cd0d89d",
        ),
        (
            "{{ sha256sum \"abc\" }}",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            "{{ sha512sum \"abc\" }}",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        ),
        ("{{ adler32sum \"Wikipedia\" }}", "300286872"),
        (
            "{{ randAlphaNum 10 | len }} {{ randNumeric 3 | regexMatch \"^[0-9]{3}$\" }} {{ randBytes 12 | b64dec | len }} {{ randInt 5 6 }}",
            "10 true 12 5",
        ),
        (
            "{{ uuidv4 | regexMatch \"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$\" }}",
            "true",
        ),
        (
            "{{ htpasswd \"a:b\" \"x\" \"sha\" }}",
            "invalid username: a:b",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
    assert_eq!(
        ok("{{ b64dec \"aGk\" }}", &[]),
        "illegal base64 data at input byte 0"
    );
    let hashed = ok("{{ bcrypt \"password\" }}", &[]);
    assert!(
        hashed.starts_with("$2a$10$") && hashed.len() == 60,
        "{hashed}"
    );
    assert!(ok("{{ htpasswd \"user\" \"pw\" \"bcrypt\" }}", &[]).starts_with("user:$2a$10$"));
}

#[test]
fn json_functions() {
    let cases = [
        (
            "{{ toJson (dict \"b\" \"<x>\" \"a\" (list 1 2.5 nil true)) }}",
            "{\"a\":[1,2.5,null,true],\"b\":\"\\u003cx\\u003e\"}",
        ),
        ("{{ toRawJson (dict \"b\" \"<x>\") }}", "{\"b\":\"<x>\"}"),
        (
            "{{ toPrettyJson (dict \"a\" (list 1) \"b\" (dict)) }}",
            "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}",
        ),
        (
            "{{ toJson 1e21 }} {{ toJson 0.0000001 }} {{ toJson 100000000.0 }} {{ toJson \"a\\nb\" }}",
            "1e+21 1e-7 100000000 \"a\\nb\"",
        ),
        (
            "{{ index (fromJson \"[1,\\\"a\\\"]\") 1 }} {{ (fromJson \"{\\\"n\\\": 1.5}\").n }}",
            "a 1.5",
        ),
        (
            "{{ .j | fromJson | toJson }}",
            "{\"a\":1,\"b\":[true,null]}",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(
            ok(source, &[("j", "{\"b\": [true, null], \"a\": 1}")]),
            expected,
            "{source}"
        );
    }
    assert!(fails("{{ mustFromJson \"x\" }}", &[]).contains("error calling mustFromJson"));
}

#[test]
fn yaml_functions() {
    let source = "{{ toYaml (dict \"name\" \"x\" \"list\" (list \"a\" \"b\") \"nested\" (dict \"k\" \"v\") \"num\" 5 \"t\" \"true\" \"empty\" \"\" \"multi\" \"a\\nb\" \"colon\" \"a: b\" \"float\" 1.5) }}";
    let expected = "colon: 'a: b'\nempty: \"\"\nfloat: 1.5\nlist:\n- a\n- b\nmulti: |-\n  a\n  b\nname: x\nnested:\n  k: v\nnum: 5\nt: \"true\"";
    assert_eq!(ok(source, &[]), expected);
    assert_eq!(
        ok("{{ toYaml (dict \"a10\" 1 \"a2\" 2 \"b\" 3) }}", &[]),
        "a2: 2\na10: 1\nb: 3"
    );
    assert_eq!(
        ok("{{ toYaml (list (dict \"a\" 1 \"b\" 2) (list 1 2)) }}", &[]),
        "- a: 1\n  b: 2\n- - 1\n  - 2"
    );
    // go-yaml v2 resolves `y`, `n`, `yes`... as booleans, so keys are quoted like values.
    assert_eq!(
        ok(
            "{{ toYaml (dict \"d\" \"2001-12-14\" \"v\" \"1.0\" \"y\" \"yes\" \"n\" \"~\") }}",
            &[]
        ),
        "d: \"2001-12-14\"\n\"n\": \"~\"\nv: \"1.0\"\n\"y\": \"yes\""
    );
    // `y` is a YAML 1.1 boolean.
    assert_eq!(
        ok(
            "{{ (fromYaml \"a: 1\\nb: [x, y]\").b }} {{ (fromYaml \"a: 1\").a }}",
            &[]
        ),
        "[x true] 1"
    );
    assert_eq!(
        ok("{{ (fromYaml \"- a\").Error }}", &[]),
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
}

#[test]
fn path_and_url_functions() {
    let cases = [
        (
            "{{ base \"foo/bar/baz\" }} {{ dir \"foo/bar/baz\" }} {{ clean \"foo/../bar//baz/.\" }} {{ ext \"a/b.tar.gz\" }} {{ isAbs \"/a\" }}",
            "baz foo/bar bar/baz .gz true",
        ),
        (
            "{{ base \"\" }} {{ base \"/\" }} {{ dir \"x\" }} {{ clean \"/../a\" }}",
            ". / . /a",
        ),
        (
            "{{ $u := urlParse \"https://user:pw@host.example:8443/p/a?q=1#frag\" }}{{ $u.scheme }} {{ $u.host }} {{ $u.hostname }} {{ $u.userinfo }} {{ $u.path }} {{ $u.query }} {{ $u.fragment }}",
            "https host.example:8443 host.example user:pw /p/a q=1 frag",
        ),
        (
            "{{ urlJoin (dict \"scheme\" \"https\" \"host\" \"h\" \"path\" \"/p\" \"query\" \"a=b\") }}",
            "https://h/p?a=b",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
}

#[test]
fn semver_functions() {
    let cases = [
        (
            "{{ semverCompare \">=1.2.0\" \"1.3.0\" }} {{ semverCompare \"^1.2\" \"2.0.0\" }} {{ semverCompare \"~1.2.3\" \"1.2.9\" }}",
            "true false true",
        ),
        (
            "{{ semverCompare \"1.x\" \"1.9.0\" }} {{ semverCompare \">1.0.0\" \"1.1.0-beta\" }} {{ semverCompare \"1.0.0 - 2.0.0\" \"1.5.0\" }}",
            "true false true",
        ),
        (
            "{{ semverCompare \"<1.0 || >=3\" \"3.1.0\" }} {{ semverCompare \"!=1.2.3\" \"1.2.3\" }} {{ semverCompare \"^0.2.3\" \"0.3.0\" }}",
            "true false false",
        ),
        (
            "{{ $v := semver \"v1.2.3-rc.1+b5\" }}{{ $v.Major }}.{{ $v.Minor }}.{{ $v.Patch }} {{ $v.Prerelease }} {{ $v.Metadata }}",
            "1.2.3 rc.1 b5",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
    assert!(fails("{{ semver \"not-a-version\" }}", &[]).contains("Invalid Semantic Version"));
}

#[test]
fn date_functions() {
    let cases = [
        (
            "{{ date \"2006-01-02 15:04:05 MST\" 0 }}",
            "1970-01-01 00:00:00 UTC",
        ),
        (
            "{{ toDate \"2006-01-02\" \"2024-02-29\" | date \"Jan 2, 2006\" }}",
            "Feb 29, 2024",
        ),
        (
            "{{ (toDate \"2006-01-02T15:04:05Z07:00\" \"2024-01-02T03:04:05+01:00\").Unix }}",
            "1704161045",
        ),
        (
            "{{ toDate \"2006-01-02\" \"2024-01-02\" | unixEpoch }}",
            "1704153600",
        ),
        (
            "{{ duration 95 }} {{ duration \"3600\" }} {{ durationRound \"2h30m\" }} {{ durationRound \"49h\" }}",
            "1m35s 1h0m0s 2h 2d",
        ),
        (
            "{{ dateModify \"1h30m\" (toDate \"2006-01-02\" \"2024-01-02\") | date \"15:04\" }}",
            "01:30",
        ),
        (
            "{{ htmlDate 86400 }} {{ date \"Mon Jan _2 3:04PM .000\" 0 }}",
            "1970-01-02 Thu Jan  1 12:00AM .000",
        ),
        (
            "{{ now | date \"2006\" | len }} {{ toDate \"2006\" \"nope\" | date \"2006\" }}",
            "4 0001",
        ),
        (
            "{{ toDate \"2006-01-02 15:04:05.000\" \"2024-03-04 05:06:07.890\" }}",
            "2024-03-04 05:06:07.89 +0000 UTC",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(ok(source, &[]), expected, "{source}");
    }
}
