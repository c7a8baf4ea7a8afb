//! Go's `encoding/pem` (decode with its skipping rules, encode with 64-column lines and
//! sorted headers) and ESO's `filterPEM`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{Arity, Entry, FuncError, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[("filterPEM", Arity::Exact(2), |_, a| {
    Ok(Value::str(filter_pem(&text(&a[0])?, &string(&a[1])?)?))
})];

/// A PEM block.
#[derive(Debug, Clone)]
pub struct Block {
    pub kind: String,
    pub headers: Vec<(String, String)>,
    pub bytes: Vec<u8>,
}

fn get_line(data: &[u8]) -> (&[u8], &[u8]) {
    let (mut end, next) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (i, i + 1),
        None => (data.len(), data.len()),
    };
    if end > 0 && end < data.len() && data[end - 1] == b'\r' {
        end -= 1;
    }
    let mut line = &data[..end];
    while let [rest @ .., b' ' | b'\t'] = line {
        line = rest;
    }
    (line, &data[next..])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    super::strings::find(haystack, needle)
}

/// Go's `pem.Decode`: the first valid block and the input after it.
pub fn decode(data: &[u8]) -> Option<(Block, &[u8])> {
    let mut rest = data;
    loop {
        if let Some(after) = rest.strip_prefix(b"-----BEGIN ") {
            rest = after;
        } else if let Some(i) = find(rest, b"\n-----BEGIN ") {
            rest = &rest[i + 12..];
        } else {
            return None;
        }
        let (type_line, after_type) = get_line(rest);
        rest = after_type;
        let Some(kind) = type_line.strip_suffix(b"-----") else {
            continue;
        };
        let mut headers = Vec::new();
        let mut body = rest;
        loop {
            if body.is_empty() {
                return None;
            }
            let (line, next) = get_line(body);
            let Some(colon) = line.iter().position(|b| *b == b':') else {
                break;
            };
            let key = String::from_utf8_lossy(line[..colon].trim_ascii()).into_owned();
            let value = String::from_utf8_lossy(line[colon + 1..].trim_ascii()).into_owned();
            headers.retain(|(k, _)| *k != key);
            headers.push((key, value));
            body = next;
        }
        let (end_index, trailer_index) = if headers.is_empty() && body.starts_with(b"-----END ") {
            (0, 9)
        } else {
            match find(body, b"\n-----END ") {
                Some(i) => (i, i + 10),
                None => continue,
            }
        };
        let trailer = &body[trailer_index..];
        let trailer_length = kind.len() + 5;
        if trailer.len() < trailer_length {
            continue;
        }
        let (end_trailer, rest_of_line) = trailer.split_at(trailer_length);
        if !end_trailer.starts_with(kind) || !end_trailer.ends_with(b"-----") {
            continue;
        }
        if !get_line(rest_of_line).0.is_empty() {
            continue;
        }
        let encoded: Vec<u8> = body[..end_index]
            .iter()
            .copied()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .collect();
        let Ok(bytes) = super::encoding::decode_base64(&encoded, false) else {
            continue;
        };
        let (_, remaining) = get_line(&body[end_index + 10 - 1..]);
        let kind = String::from_utf8_lossy(kind).into_owned();
        return Some((
            Block {
                kind,
                headers,
                bytes,
            },
            remaining,
        ));
    }
}

/// Go's `pem.Encode`.
pub fn encode(block: &Block) -> Vec<u8> {
    let mut out = format!("-----BEGIN {}-----\n", block.kind).into_bytes();
    if !block.headers.is_empty() {
        let mut headers = block.headers.clone();
        headers.sort_by(|a, b| (a.0 != "Proc-Type", &a.0).cmp(&(b.0 != "Proc-Type", &b.0)));
        for (key, value) in headers {
            out.extend_from_slice(format!("{key}: {value}\n").as_bytes());
        }
        out.push(b'\n');
    }
    let encoded = STANDARD.encode(&block.bytes);
    for line in encoded.as_bytes().chunks(64) {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.extend_from_slice(format!("-----END {}-----\n", block.kind).as_bytes());
    out
}

/// PEM text for DER bytes of the given type.
pub fn encode_der(kind: &str, bytes: &[u8]) -> Vec<u8> {
    encode(&Block {
        kind: kind.into(),
        headers: Vec::new(),
        bytes: bytes.to_vec(),
    })
}

/// The input from its first `-----BEGIN` on (upstream's `trimJunk`).
pub fn trim_junk(input: &[u8]) -> &[u8] {
    match find(input, b"-----BEGIN") {
        Some(index) => &input[index..],
        None => input,
    }
}

/// ESO's `filterPEM`: every block of the given type (case-insensitive), re-encoded.
fn filter_pem(kind: &str, input: &[u8]) -> Result<Vec<u8>, FuncError> {
    let mut data = trim_junk(input);
    let mut out = Vec::new();
    while let Some((block, remaining)) = decode(data) {
        data = remaining;
        if block.kind.eq_ignore_ascii_case(kind) {
            out.extend_from_slice(&encode(&block));
        }
    }
    if out.is_empty() && !data.is_empty() {
        return Err("error filtering pem: found junk".into());
    }
    Ok(out)
}
