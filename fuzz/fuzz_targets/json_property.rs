//! `remoteRef.property` on a provider's value: any document and any path.
#![no_main]

mod split;

use external_secrets_providers::property::json_property;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (document, path) = split::two_parts(data);
    if let Ok(path) = std::str::from_utf8(path) {
        let _ = json_property(document, path);
    }
});
