//! Just enough DER to write the key structures Go's `x509.MarshalPKIXPublicKey` and
//! `MarshalPKCS8PrivateKey` produce, and to read PKCS#8/SEC1 keys back (definite lengths only).

/// Tag numbers used here.
pub const INTEGER: u8 = 0x02;
pub const BIT_STRING: u8 = 0x03;
pub const OCTET_STRING: u8 = 0x04;
pub const NULL: u8 = 0x05;
pub const OID: u8 = 0x06;
pub const SEQUENCE: u8 = 0x30;

/// Well-known object identifiers.
pub const RSA_ENCRYPTION: &str = "1.2.840.113549.1.1.1";
pub const EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";
pub const ED25519: &str = "1.3.101.112";
pub const X25519: &str = "1.3.101.110";
pub const P256: &str = "1.2.840.10045.3.1.7";
pub const P384: &str = "1.3.132.0.34";
pub const P521: &str = "1.3.132.0.35";

/// A tag-length-value element.
pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let length = content.len();
    if length < 0x80 {
        out.push(length as u8);
    } else {
        let bytes: Vec<u8> = length
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend_from_slice(&bytes);
    }
    out.extend_from_slice(content);
    out
}

/// A SEQUENCE of already-encoded elements.
pub fn sequence(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(SEQUENCE, &parts.concat())
}

/// A non-negative INTEGER from big-endian magnitude bytes.
pub fn unsigned_integer(magnitude: &[u8]) -> Vec<u8> {
    let trimmed: &[u8] = match magnitude.iter().position(|b| *b != 0) {
        Some(start) => &magnitude[start..],
        None => &[0],
    };
    let mut content = Vec::with_capacity(trimmed.len() + 1);
    if trimmed[0] & 0x80 != 0 {
        content.push(0);
    }
    content.extend_from_slice(trimmed);
    tlv(INTEGER, &content)
}

/// A small INTEGER.
pub fn small_integer(value: u8) -> Vec<u8> {
    tlv(INTEGER, &[value])
}

/// A BIT STRING with no unused bits.
pub fn bit_string(bytes: &[u8]) -> Vec<u8> {
    tlv(BIT_STRING, &[&[0u8][..], bytes].concat())
}

/// An OBJECT IDENTIFIER from dotted text.
pub fn oid(dotted: &str) -> Vec<u8> {
    let arcs: Vec<u64> = dotted.split('.').filter_map(|a| a.parse().ok()).collect();
    let mut content = Vec::new();
    if arcs.len() >= 2 {
        encode_arc(arcs[0] * 40 + arcs[1], &mut content);
        for arc in &arcs[2..] {
            encode_arc(*arc, &mut content);
        }
    }
    tlv(OID, &content)
}

fn encode_arc(mut arc: u64, out: &mut Vec<u8>) {
    let mut bytes = vec![(arc & 0x7f) as u8];
    arc >>= 7;
    while arc > 0 {
        bytes.push(0x80 | (arc & 0x7f) as u8);
        arc >>= 7;
    }
    bytes.reverse();
    out.extend_from_slice(&bytes);
}

/// Reads one element: its tag, content and the bytes after it.
pub fn read(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let count = (first & 0x7f) as usize;
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let length = rest[..count]
            .iter()
            .fold(0usize, |acc, b| acc << 8 | *b as usize);
        (length, &rest[count..])
    };
    if rest.len() < length {
        return None;
    }
    Some((tag, &rest[..length], &rest[length..]))
}

/// The elements inside a constructed element's content.
pub fn children(mut content: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    while !content.is_empty() {
        let (tag, inner, rest) = read(content)?;
        out.push((tag, inner));
        content = rest;
    }
    Some(out)
}

/// An OBJECT IDENTIFIER's content as dotted text.
pub fn oid_text(content: &[u8]) -> String {
    let mut arcs = Vec::new();
    let mut value = 0u64;
    for byte in content {
        value = value << 7 | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.push(first);
                arcs.push(value - first * 40);
            } else {
                arcs.push(value);
            }
            value = 0;
        }
    }
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// The byte size of a named curve's field elements.
pub fn curve_size(curve_oid: &str) -> Option<usize> {
    match curve_oid {
        P256 => Some(32),
        P384 => Some(48),
        P521 => Some(66),
        _ => None,
    }
}

/// Left-pads `bytes` with zeros to `size`.
pub fn pad(bytes: &[u8], size: usize) -> Vec<u8> {
    let trimmed = &bytes[bytes.len().saturating_sub(size)..];
    let mut out = vec![0; size - trimmed.len()];
    out.extend_from_slice(trimmed);
    out
}
