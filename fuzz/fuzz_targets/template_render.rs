//! The Go text/template engine with Sprig: any template against any data ends, without a
//! panic, within the engine's limits.
#![no_main]

mod split;

use std::collections::BTreeMap;

use external_secrets_template::{Delimiters, render};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (template, value) = split::two_parts(data);
    let Ok(template) = std::str::from_utf8(template) else {
        return;
    };
    let data = BTreeMap::from([
        ("value".to_owned(), value.to_vec()),
        ("json".to_owned(), br#"{"a":[1,"b",{"c":null}]}"#.to_vec()),
    ]);
    let _ = render("fuzz", template, &data, &Delimiters::default());
});
