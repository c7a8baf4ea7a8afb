//! Sprig's `b64enc b64dec b32enc b32dec hexdec`, with Go's decoders ported so results match
//! byte for byte: Go's base64/base32 skip `\r` and `\n`, and on bad input Sprig returns Go's
//! error text (`illegal base64 data at input byte 3`) as the function's *result*, which upstream
//! then writes into the Secret.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{Arity, Entry, string};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("b64enc", Arity::Exact(1), |_, a| {
        Ok(Value::str(STANDARD.encode(string(&a[0])?)))
    }),
    ("b64dec", Arity::Exact(1), |_, a| {
        Ok(Value::str(
            decode_base64(&string(&a[0])?, false).unwrap_or_else(String::into_bytes),
        ))
    }),
    ("b32enc", Arity::Exact(1), |_, a| {
        Ok(Value::str(encode_base32(&string(&a[0])?)))
    }),
    ("b32dec", Arity::Exact(1), |_, a| {
        Ok(Value::str(
            decode_base32(&string(&a[0])?).unwrap_or_else(String::into_bytes),
        ))
    }),
    ("hexdec", Arity::Exact(1), |_, a| {
        Ok(Value::str(
            decode_hex(&string(&a[0])?).unwrap_or_else(String::into_bytes),
        ))
    }),
];

const BASE64_STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn corrupt(kind: &str, offset: usize) -> String {
    format!("illegal {kind} data at input byte {offset}")
}

fn position(alphabet: &[u8], byte: u8) -> Option<u8> {
    alphabet.iter().position(|c| *c == byte).map(|p| p as u8)
}

/// Go's `base64.StdEncoding.DecodeString` (or `URLEncoding` with `url`), error text included.
pub fn decode_base64(src: &[u8], url: bool) -> Result<Vec<u8>, String> {
    let alphabet = if url { BASE64_URL } else { BASE64_STD };
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    while si < src.len() {
        let mut quantum = [0u8; 4];
        let mut length = 4;
        let mut trailing_error = None;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(corrupt("base64", si - j));
            }
            let byte = src[si];
            si += 1;
            if let Some(value) = position(alphabet, byte) {
                quantum[j] = value;
                j += 1;
                continue;
            }
            if byte == b'\n' || byte == b'\r' {
                continue;
            }
            if byte != b'=' || j < 2 {
                return Err(corrupt("base64", si - 1));
            }
            if j == 2 {
                while si < src.len() && matches!(src[si], b'\n' | b'\r') {
                    si += 1;
                }
                if si == src.len() {
                    return Err(corrupt("base64", src.len()));
                }
                if src[si] != b'=' {
                    return Err(corrupt("base64", si - 1));
                }
                si += 1;
            }
            while si < src.len() && matches!(src[si], b'\n' | b'\r') {
                si += 1;
            }
            if si < src.len() {
                trailing_error = Some(corrupt("base64", si));
            }
            length = j;
            break;
        }
        let value = u32::from(quantum[0]) << 18
            | u32::from(quantum[1]) << 12
            | u32::from(quantum[2]) << 6
            | u32::from(quantum[3]);
        let bytes = [(value >> 16) as u8, (value >> 8) as u8, value as u8];
        out.extend_from_slice(&bytes[..length - 1]);
        if let Some(error) = trailing_error {
            return Err(error);
        }
        if length < 4 {
            break;
        }
    }
    Ok(out)
}

fn encode_base32(src: &[u8]) -> String {
    let mut out = String::with_capacity(src.len().div_ceil(5) * 8);
    for chunk in src.chunks(5) {
        let mut buffer = [0u8; 5];
        buffer[..chunk.len()].copy_from_slice(chunk);
        let bits = buffer.iter().fold(0u64, |acc, b| acc << 8 | u64::from(*b));
        let symbols = (chunk.len() * 8).div_ceil(5);
        for index in 0..8 {
            if index < symbols {
                out.push(BASE32[((bits >> (35 - 5 * index)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Go's `base32.StdEncoding.DecodeString`, error text included.
pub fn decode_base32(input: &[u8]) -> Result<Vec<u8>, String> {
    let src: Vec<u8> = input
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\n' | b'\r'))
        .collect();
    let total = src.len();
    let mut rest: &[u8] = &src;
    let mut out = Vec::new();
    let mut end = false;
    while !rest.is_empty() && !end {
        let mut quantum = [0u8; 8];
        let mut length = 8;
        let mut j = 0;
        while j < 8 {
            if rest.is_empty() {
                return Err(corrupt("base32", total - rest.len() - j));
            }
            let byte = rest[0];
            rest = &rest[1..];
            if byte == b'=' && j >= 2 && rest.len() < 8 {
                if rest.len() + j < 7 {
                    return Err(corrupt("base32", total));
                }
                for k in 0..7 - j {
                    if rest.len() > k && rest[k] != b'=' {
                        return Err(corrupt("base32", total - rest.len() + k - 1));
                    }
                }
                length = j;
                end = true;
                if matches!(length, 1 | 3 | 6) {
                    return Err(corrupt("base32", total - rest.len() - 1));
                }
                break;
            }
            match position(BASE32, byte) {
                Some(value) => quantum[j] = value,
                None => return Err(corrupt("base32", total - rest.len() - 1)),
            }
            j += 1;
        }
        let q = quantum;
        let bytes = [
            q[0] << 3 | q[1] >> 2,
            q[1] << 6 | q[2] << 1 | q[3] >> 4,
            q[3] << 4 | q[4] >> 1,
            q[4] << 7 | q[5] << 2 | q[6] >> 3,
            q[6] << 5 | q[7],
        ];
        let produced = match length {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            _ => 0,
        };
        out.extend_from_slice(&bytes[..produced]);
    }
    Ok(out)
}

fn hex_value(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|d| d as u8)
}

fn invalid_hex_byte(byte: u8) -> String {
    let c = char::from(byte);
    if crate::gofmt::is_print(c) {
        format!("encoding/hex: invalid byte: U+{:04X} '{c}'", byte)
    } else {
        format!("encoding/hex: invalid byte: U+{:04X}", byte)
    }
}

/// Go's `hex.DecodeString`, error text included.
pub fn decode_hex(src: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(src.len() / 2);
    for pair in src.chunks(2) {
        let high = hex_value(pair[0]).ok_or_else(|| invalid_hex_byte(pair[0]))?;
        let Some(&low) = pair.get(1) else {
            return Err("encoding/hex: odd length hex string".into());
        };
        let low = hex_value(low).ok_or_else(|| invalid_hex_byte(low))?;
        out.push(high << 4 | low);
    }
    Ok(out)
}
