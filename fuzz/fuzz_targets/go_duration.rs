//! Go duration text (`refreshInterval`, `retrySettings.retryInterval`, webhook `timeout`):
//! every input parses or is refused, without a panic or an overflow.
#![no_main]

use external_secrets_providers::duration::parse_go_duration;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse_go_duration(text);
    }
});
