//! Tests of the template engine. The `upstream*` modules port upstream's test cases
//! (`runtime/template/v2/*_test.go`: inputs, expected outputs and errors) by upstream's case
//! names; the others pin Go `text/template`, Sprig, go-yaml and ESO helper behaviour beyond them.
//! Test data lives in `template/testdata/` (upstream's `_testdata` files and test constants).

/// A file of `template/testdata/`, as text.
macro_rules! testdata {
    ($name:literal) => {
        include_str!(concat!("../../testdata/", $name))
    };
}

mod conformance;
mod core;
mod hostile;
mod limits;
mod pem;
mod sprig;
mod sprig_crypto;
mod upstream;
mod upstream_decrypt;
mod upstream_pem;
mod upstream_pkcs12;
mod yaml;

use std::collections::BTreeMap;

use crate::{Delimiters, TemplateError, render};

/// Secret data from key/value pairs.
pub fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
        .collect()
}

/// Renders `source` as key `key`, as text.
pub fn try_render(source: &str, pairs: &[(&str, &str)]) -> Result<String, TemplateError> {
    render("key", source, &data(pairs), &Delimiters::default())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// Renders and expects success.
pub fn ok(source: &str, pairs: &[(&str, &str)]) -> String {
    match try_render(source, pairs) {
        Ok(text) => text,
        Err(error) => panic!("{source:?} failed: {error}"),
    }
}

/// Renders and expects a failure; returns its message.
pub fn fails(source: &str, pairs: &[(&str, &str)]) -> String {
    match try_render(source, pairs) {
        Ok(text) => panic!("{source:?} rendered {text:?}, expected an error"),
        Err(error) => error.to_string(),
    }
}

/// Renders and expects a failure from function `function`; returns what the function said
/// (the message after Go's `error calling NAME: `).
pub fn function_error(source: &str, pairs: &[(&str, &str)], function: &str) -> String {
    let error = fails(source, pairs);
    let marker = format!("error calling {function}: ");
    match error.split_once(&marker) {
        Some((_, message)) => message.to_owned(),
        None => panic!("{source:?} failed outside {function}: {error}"),
    }
}

/// Secret data as key/value pairs, for tables of cases.
pub type Pairs = &'static [(&'static str, &'static str)];

/// A deterministic generator for test encryption (RSA-OAEP needs randomness).
pub struct TestRng(pub u64);

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

/// `plaintext` encrypted with RSA-OAEP (SHA-256) to the public half of `private_pem`.
pub fn oaep_sha256_encrypt(private_pem: &str, plaintext: &[u8]) -> Vec<u8> {
    use rsa::pkcs1::DecodeRsaPrivateKey as _;
    use rsa::pkcs8::DecodePrivateKey as _;
    let pem = private_pem.trim();
    let key = rsa::RsaPrivateKey::from_pkcs1_pem(pem)
        .or_else(|_| rsa::RsaPrivateKey::from_pkcs8_pem(pem))
        .expect("an RSA private key");
    key.to_public_key()
        .encrypt(&mut TestRng(7), rsa::Oaep::new::<sha2::Sha256>(), plaintext)
        .expect("encryption")
}
