//! ESO's PEM, PKCS#12 and JWK helpers beyond upstream's test cases (those are in
//! `upstream*.rs`): PKCS#12 round trips, trust store names, a chain given root first, public
//! keys of private JWKs, Ed25519 JWKs.

use super::{fails, ok, try_render};

const CERT: &str = testdata!("pkcs12.crt");
const KEY: &str = testdata!("pkcs12.key");
const OTHER_CERT: &str = testdata!("other.crt");
const LEAF: &str = testdata!("foo.crt");
const INTERMEDIATE: &str = testdata!("intermediate-ca.crt");
const ROOT: &str = testdata!("root-ca.crt");
const LEAF_KEY: &str = testdata!("foo.key");

#[test]
fn filter_cert_chain_orders_a_chain_given_root_first() {
    let input = format!("{ROOT}{LEAF}{INTERMEDIATE}");
    let root = try_render(
        "{{ .input | filterCertChain \"root\" }}",
        &[("input", &input)],
    );
    assert_eq!(root.unwrap(), ROOT);
}

#[test]
fn pem_to_pkcs12_round_trips() {
    let pairs = [
        ("cert", CERT),
        ("key", KEY),
        ("chain", &format!("{CERT}\n{OTHER_CERT}")[..]),
    ];
    let archive = ok("{{ pemToPkcs12Pass .cert .key \"password\" }}", &pairs);
    assert_eq!(
        ok(
            "{{ .a | b64dec | pkcs12keyPass \"password\" }}",
            &[("a", &archive)]
        ),
        KEY
    );
    assert_eq!(
        ok(
            "{{ .a | b64dec | pkcs12certPass \"password\" }}",
            &[("a", &archive)]
        ),
        CERT
    );
    let archive = ok("{{ pemToPkcs12 .cert .key }}", &pairs);
    assert_eq!(ok("{{ .a | b64dec | pkcs12key }}", &[("a", &archive)]), KEY);
    let full = ok("{{ fullPemToPkcs12Pass .chain .key \"password\" }}", &pairs);
    let certs = ok(
        "{{ .a | b64dec | pkcs12certPass \"password\" }}",
        &[("a", &full)],
    );
    assert_eq!(certs, format!("{CERT}{OTHER_CERT}"));
    let store = ok(
        "{{ pemTruststoreToPKCS12Pass .chain \"password\" }}",
        &pairs,
    );
    assert!(store.len() > 100 && !store.contains('\n'));
    assert!(
        fails(
            "{{ .a | b64dec | pkcs12certPass \"password\" }}",
            &[("a", &store)]
        )
        .contains("private key missing")
    );
    let ec = ok(
        "{{ pemToPkcs12 .cert .key }}",
        &[("cert", LEAF), ("key", LEAF_KEY)],
    );
    let key = ok("{{ .a | b64dec | pkcs12key }}", &[("a", &ec)]);
    assert!(
        key.starts_with("-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEH"),
        "{key}"
    );
}

#[test]
fn jwk_to_pem_beyond_upstream_cases() {
    let public_of_private = ok(
        "{{ .s | jwkPublicKeyPem }}",
        &[("s", testdata!("jwk-rsa-private.json"))],
    );
    assert!(public_of_private.starts_with("-----BEGIN PUBLIC KEY-----\n"));
    assert!(
        fails(
            "{{ .s | jwkPrivateKeyPem }}",
            &[("s", testdata!("jwk-rsa-public.json"))]
        )
        .contains("unknown key type")
    );
    let okp = r#"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}"#;
    assert_eq!(
        ok("{{ .k | jwkPublicKeyPem }}", &[("k", okp)]),
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n"
    );
    assert_eq!(
        ok("{{ .k | jwkPrivateKeyPem }}", &[("k", okp)]),
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n-----END PRIVATE KEY-----\n"
    );
}

/// Trust stores name each certificate by its subject as Go's `pkix.Name.String` prints it
/// (expected values printed by Go).
#[test]
fn truststore_friendly_names_print_subjects_as_go() {
    let subject = |pem: &str| {
        let (block, _) = crate::functions::pem::decode(pem.as_bytes()).unwrap();
        crate::functions::pkix_name::subject(&block.bytes).unwrap()
    };
    assert_eq!(subject(CERT), "O=Acme Co");
    assert_eq!(
        subject(testdata!("sans.crt")),
        "CN=example.com,OU=ITDepartment,O=MyCompany,L=San Francisco,ST=California,C=US"
    );
    assert_eq!(
        subject(testdata!("subject-escapes.crt")),
        concat!(
            r#"SERIALNUMBER=42,CN=\#lead\, \"q\" \<x\>\; trail\ ,OU=a+OU=b,O=Acme\, Inc.,"#,
            "POSTALCODE=10115,STREET=Main St 1,L=Mitte,ST=Berlin,C=DE,",
            "0.9.2342.19200300.100.1.1=#13027531,",
            "1.2.840.113549.1.9.1=#0c0f6f7073406578616d706c652e636f6d"
        )
    );
}
