//! A webhook provider's response body and `result.jsonPath`: whatever a remote server answers.
#![no_main]

mod split;

use external_secrets_providers::backends::webhook::response::{
    parse, select, single_value, value_map,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (body, path) = split::two_parts(data);
    let Ok(path) = std::str::from_utf8(path) else {
        return;
    };
    let _ = value_map(body, Some(path));
    if let Ok(document) = parse(body) {
        if let Ok(selected) = select(&document, path) {
            let _ = single_value(&selected);
        }
    }
});
