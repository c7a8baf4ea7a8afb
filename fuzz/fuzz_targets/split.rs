//! Splits one fuzz input into two texts at the first NUL byte, so a target can take a
//! document and a path (or a template and its data) from one input.

/// The part before the first NUL and the part after it (empty without a NUL).
pub fn two_parts(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&byte| byte == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[]),
    }
}
