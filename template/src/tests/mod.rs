//! Tests of the template engine. `upstream*` and `pem`/`pkcs12` cases are ported from upstream's
//! `runtime/template/v2/*_test.go` and `pkg/controllers/externalsecret/*template_test.go`
//! (inputs and expected outputs); the others pin Go `text/template` and Sprig behaviour.

mod conformance;
mod core;
mod hostile;
mod limits;
mod pem;
mod sprig;
mod upstream;

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
