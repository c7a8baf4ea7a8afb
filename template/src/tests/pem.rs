//! ESO's PEM, certificate chain, PKCS#12, JWK and RSA helpers (upstream `pem_test.go`,
//! `pkcs12_test.go`, `decrypt_test.go`, and the matching `template_test.go` cases).

use std::collections::BTreeMap;

use super::{data, fails, ok, try_render};
use crate::{Delimiters, render};

const CERT: &str = include_str!("../../testdata/pkcs12.crt");
const KEY: &str = include_str!("../../testdata/pkcs12.key");
const OTHER_CERT: &str = include_str!("../../testdata/other.crt");
const LEAF: &str = include_str!("../../testdata/foo.crt");
const INTERMEDIATE: &str = include_str!("../../testdata/intermediate-ca.crt");
const ROOT: &str = include_str!("../../testdata/root-ca.crt");
const DISJUNCT_ROOT: &str = include_str!("../../testdata/disjunct-root-ca.crt");
const LEAF_KEY: &str = include_str!("../../testdata/foo.key");

fn filter_pem(kind: &str, input: &str) -> Result<String, String> {
    try_render(
        &format!("{{{{ .input | filterPEM {kind:?} }}}}"),
        &[("input", input)],
    )
    .map_err(|e| e.to_string())
}

#[test]
fn filter_pem_upstream_cases() {
    assert_eq!(
        filter_pem("certificate", &format!("{CERT}{KEY}")).unwrap(),
        CERT
    );
    assert_eq!(
        filter_pem("certificate", &format!("{KEY}{CERT}")).unwrap(),
        CERT
    );
    assert_eq!(
        filter_pem("certificate", &format!("{KEY}{CERT}{KEY}{OTHER_CERT}")).unwrap(),
        format!("{CERT}{OTHER_CERT}")
    );
    assert_eq!(
        filter_pem("private key", &format!("{KEY}{CERT}")).unwrap(),
        KEY
    );
    assert_eq!(
        filter_pem("private key", &format!("{CERT}{KEY}some ---junk---")).unwrap(),
        KEY
    );
    assert_eq!(
        filter_pem(
            "private key",
            &format!("some junk{CERT}{KEY}some ---junk---")
        )
        .unwrap(),
        KEY
    );
    let interleaved = filter_pem("private key", &format!("{CERT}some junk{KEY}")).unwrap_err();
    assert!(
        interleaved.contains("error calling filterPEM: error filtering pem: found junk"),
        "{interleaved}"
    );
    assert!(filter_pem("private key", "---junk---").is_err());
    assert_eq!(
        filter_pem("CERTIFICATE", &format!("{KEY}{CERT}")).unwrap(),
        CERT
    );
}

fn chain(kind: &str, parts: &[&str]) -> Result<String, String> {
    let input = parts.concat();
    try_render(
        &format!("{{{{ .input | filterCertChain {kind:?} }}}}"),
        &[("input", &input)],
    )
    .map_err(|e| e.to_string())
}

#[test]
fn filter_cert_chain_upstream_cases() {
    assert!(chain("leaf", &[]).is_err());
    assert!(chain("leaf", &[LEAF, LEAF_KEY]).is_err());
    assert_eq!(chain("leaf", &[LEAF]).unwrap(), LEAF);
    assert_eq!(chain("leaf", &[LEAF, INTERMEDIATE]).unwrap(), LEAF);
    assert_eq!(chain("leaf", &[ROOT]).unwrap(), "");
    assert_eq!(chain("leaf", &[LEAF, INTERMEDIATE, ROOT]).unwrap(), LEAF);
    assert_eq!(chain("intermediate", &[LEAF]).unwrap(), "");
    assert_eq!(
        chain("intermediate", &[LEAF, INTERMEDIATE]).unwrap(),
        INTERMEDIATE
    );
    assert_eq!(
        chain("intermediate", &[LEAF, INTERMEDIATE, ROOT]).unwrap(),
        INTERMEDIATE
    );
    assert_eq!(chain("root", &[LEAF]).unwrap(), "");
    assert_eq!(chain("root", &[ROOT]).unwrap(), ROOT);
    assert_eq!(chain("root", &[LEAF, INTERMEDIATE, ROOT]).unwrap(), ROOT);
    assert_eq!(chain("root", &[ROOT, LEAF, INTERMEDIATE]).unwrap(), ROOT);
}

#[test]
fn cert_sans_upstream_cases() {
    let sans = |input: &str| {
        try_render("{{ .c | certSANs | join \",\" }}", &[("c", input)]).map_err(|e| e.to_string())
    };
    assert_eq!(sans(CERT).unwrap(), "gooble.com");
    assert_eq!(sans(&format!("some junk\n{CERT}")).unwrap(), "gooble.com");
    assert!(
        sans("not a pem")
            .unwrap_err()
            .contains("failed to decode PEM block")
    );
    assert!(sans("").is_err());
    assert_eq!(
        sans(include_str!("../../testdata/sans.crt")).unwrap(),
        "example.com,www.example.com,192.168.1.10,10.0.0.1,admin@example.com,https://example.com"
    );
    assert_eq!(
        ok("{{ index (.c | certSANs) 0 }}", &[("c", CERT)]),
        "gooble.com"
    );
    assert_eq!(
        ok("{{ .c | certSANs | toJson }}", &[("c", CERT)]),
        "[\"gooble.com\"]"
    );
    let combined = format!("{KEY}{CERT}");
    assert_eq!(
        ok(
            "{{ .s | filterPEM \"CERTIFICATE\" | certSANs | join \",\" }}",
            &[("s", &combined)]
        ),
        "gooble.com"
    );
}

fn pfx(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn pkcs12_certs(password: &str, archive: Vec<u8>) -> Result<String, String> {
    let mut input = BTreeMap::new();
    input.insert("archive".to_owned(), archive);
    input.insert("password".to_owned(), password.as_bytes().to_vec());
    render(
        "cert",
        "{{ .archive | pkcs12certPass .password }}",
        &input,
        &Delimiters::default(),
    )
    .map(|b| String::from_utf8(b).unwrap())
    .map_err(|e| e.to_string())
}

#[test]
fn pkcs12_cert_orders_chains_as_upstream() {
    let ordered = format!("{LEAF}{INTERMEDIATE}{ROOT}");
    assert_eq!(pkcs12_certs("", pfx("foo-nopass.pfx")).unwrap(), ordered);
    assert_eq!(
        pkcs12_certs("1234", pfx("foo-withpass-1234.pfx")).unwrap(),
        ordered
    );
    assert_eq!(
        pkcs12_certs("", pfx("foo-multibag-nopass.pfx")).unwrap(),
        ordered
    );
    assert_eq!(
        pkcs12_certs("", pfx("foo-disjunct-nopass.pfx")).unwrap(),
        format!("{LEAF}{ROOT}{INTERMEDIATE}{DISJUNCT_ROOT}")
    );
    let wrong = pkcs12_certs("wrongpass", pfx("foo-withpass-1234.pfx")).unwrap_err();
    assert!(
        wrong.contains("unable to decode pkcs12 certificate with password"),
        "{wrong}"
    );
}

#[test]
fn pkcs12_key_and_cert_from_base64_archives() {
    let no_pass = include_str!("../../testdata/pkcs12-nopass.b64");
    let with_pass = include_str!("../../testdata/pkcs12-withpass-123456.b64");
    assert_eq!(
        ok("{{ .secret | b64dec | pkcs12key }}", &[("secret", no_pass)]),
        KEY
    );
    assert_eq!(
        ok(
            "{{ .secret | b64dec | pkcs12cert }}",
            &[("secret", no_pass)]
        ),
        CERT
    );
    assert_eq!(
        ok(
            "{{ .secret | b64dec | pkcs12keyPass \"123456\" }}",
            &[("secret", with_pass)]
        ),
        KEY
    );
    assert_eq!(
        ok(
            "{{ .secret | b64dec | pkcs12certPass \"123456\" }}",
            &[("secret", with_pass)]
        ),
        CERT
    );
    assert!(
        fails(
            "{{ .secret | b64dec | pkcs12keyPass \"wrong\" }}",
            &[("secret", with_pass)]
        )
        .contains("unable to decode pkcs12")
    );
    assert!(
        fails(
            "{{ .secret | b64dec | pkcs12certPass \"wrong\" }}",
            &[("secret", with_pass)]
        )
        .contains("unable to decode pkcs12")
    );
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
fn jwk_to_pem_upstream_cases() {
    let cases = [
        (
            "jwkPublicKeyPem",
            include_str!("../../testdata/jwk-rsa-public.json"),
            include_str!("../../testdata/jwk-rsa-public.pem"),
        ),
        (
            "jwkPrivateKeyPem",
            include_str!("../../testdata/jwk-rsa-private.json"),
            include_str!("../../testdata/jwk-rsa-private.pem"),
        ),
        (
            "jwkPublicKeyPem",
            include_str!("../../testdata/jwk-ec-public.json"),
            include_str!("../../testdata/jwk-ec-public.pem"),
        ),
        (
            "jwkPrivateKeyPem",
            include_str!("../../testdata/jwk-ec-private.json"),
            include_str!("../../testdata/jwk-ec-private.pem"),
        ),
    ];
    for (function, jwk, pem) in cases {
        assert_eq!(
            ok(
                &format!("{{{{ .secret | {function} }}}}"),
                &[("secret", jwk)]
            ),
            pem,
            "{function}"
        );
    }
    let public_of_private = ok(
        "{{ .s | jwkPublicKeyPem }}",
        &[("s", include_str!("../../testdata/jwk-rsa-private.json"))],
    );
    assert!(public_of_private.starts_with("-----BEGIN PUBLIC KEY-----\n"));
    assert!(
        fails(
            "{{ .s | jwkPrivateKeyPem }}",
            &[("s", include_str!("../../testdata/jwk-rsa-public.json"))]
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

/// A deterministic generator for test encryption (OAEP needs randomness).
struct TestRng(u64);

impl rsa::rand_core::RngCore for TestRng {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for byte in dest {
            *byte = self.next_u64() as u8;
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rsa::rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl rsa::rand_core::CryptoRng for TestRng {}

#[test]
fn rsa_decrypt_upstream_cases() {
    use rsa::pkcs1::DecodeRsaPrivateKey as _;
    let pkcs8 = include_str!("../../testdata/rsa-pkcs8.key");
    let pkcs1 = include_str!("../../testdata/rsa-pkcs1.key");
    let template =
        "{{ .private_key | rsaDecrypt \"RSA-OAEP\" \"SHA1\" (.data_crypted_base64 | b64dec) }}";
    let pairs = [
        ("private_key", pkcs8),
        (
            "data_crypted_base64",
            include_str!("../../testdata/rsa-pkcs8-sha1-ciphertext.b64"),
        ),
    ];
    assert_eq!(ok(template, &pairs), "a1b2c3d4");
    let template =
        "{{ .private_key | rsaDecrypt \"RSA-OAEP\" \"SHA256\" (.data_crypted_base64 | b64dec) }}";
    let pairs = [
        ("private_key", pkcs1),
        (
            "data_crypted_base64",
            include_str!("../../testdata/rsa-pkcs1-sha256-ciphertext.b64"),
        ),
    ];
    assert_eq!(ok(template, &pairs), "hellopkcs1sha256");

    let block = pkcs1
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<String>();
    let der = crate::functions::encoding::decode_base64(block.as_bytes(), false).unwrap();
    let key = rsa::RsaPrivateKey::from_pkcs1_der(&der).unwrap();
    let ciphertext = key
        .to_public_key()
        .encrypt(
            &mut TestRng(7),
            rsa::Oaep::new::<sha2::Sha256>(),
            b"hellopkcs1sha256",
        )
        .unwrap();
    let mut input = data(&[("private_key", pkcs1)]);
    input.insert("data_crypted_bin".into(), ciphertext);
    let out = render(
        "k",
        "{{ .private_key | rsaDecrypt \"RSA-OAEP\" \"SHA256\" .data_crypted_bin }}",
        &input,
        &Delimiters::default(),
    );
    assert_eq!(out.unwrap(), b"hellopkcs1sha256");

    assert_eq!(
        ok(
            "{{ rsaDecrypt \"None\" \"SHA256\" \"plaintext\" \"irrelevant\" }}",
            &[]
        ),
        "plaintext"
    );
    assert!(
        fails(
            "{{ rsaDecrypt \"RSA-OAEP\" \"SHA256\" \"data\" \"not-a-valid-pem\" }}",
            &[]
        )
        .ends_with("failed to decode PEM block")
    );
    let not_a_key = "-----BEGIN CERTIFICATE-----\naW52YWxpZA==\n-----END CERTIFICATE-----\n";
    assert!(
        fails(
            "{{ rsaDecrypt \"RSA-OAEP\" \"SHA256\" \"data\" .k }}",
            &[("k", not_a_key)]
        )
        .contains("could not parse private key")
    );
    assert!(
        fails(
            "{{ rsaDecrypt \"Unsupported\" \"SHA256\" \"data\" .k }}",
            &[("k", pkcs1)]
        )
        .ends_with("decryption scheme Unsupported is not supported")
    );
    assert!(
        fails(
            "{{ rsaDecrypt \"RSA-OAEP\" \"SHA256\" \"not-encrypted-data\" .k }}",
            &[("k", pkcs1)]
        )
        .contains("error decrypting data with RSA")
    );
}
