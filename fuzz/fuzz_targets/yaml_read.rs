//! YAML as templates' `fromYaml` and `KeysAndValues` outputs read it: any text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = external_secrets_template::yaml_to_json(text);
        let _ = external_secrets_template::yaml_to_string_map(text);
    }
});
