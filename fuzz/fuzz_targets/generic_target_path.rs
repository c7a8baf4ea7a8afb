//! Generic-target path rendering: a `templateFrom[].target` path (`spec.rules[0].host`) and a
//! rendered value, set into an object as the controller sets them (the value read as YAML,
//! else kept as a string). The path module is the controller's own source file, compiled in.
#![no_main]

mod split;

#[path = "../../src/controllers/external_secret/generic/path.rs"]
mod path;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let (target, value) = split::two_parts(data);
    let (Ok(target), Ok(value)) = (std::str::from_utf8(target), std::str::from_utf8(value))
    else {
        return;
    };
    let Ok(steps) = path::parse(target) else {
        return;
    };
    let parsed = external_secrets_template::yaml_to_json(value)
        .unwrap_or_else(|_| Value::String(value.to_owned()));
    let mut object = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "target", "labels": {"a": "b"}},
        "data": {"key": "value"},
        "spec": {"rules": [{"host": "example.com"}]},
    });
    if path::set(&mut object, &steps, |_| parsed).is_ok() {
        // What was set is serialized as the controller would send it.
        let _ = serde_json::to_vec(&object);
    }
});
