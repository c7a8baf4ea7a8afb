//! A certificate subject as Go's `pkix.Name.String` prints it (roughly RFC 2253), which
//! go-pkcs12's `EncodeTrustStore` uses as each certificate's friendly name: attributes Go has
//! no field for first (so last once reversed, as `OID=#hex-of-DER`), then C, ST, L, STREET,
//! POSTALCODE, O, OU, the last CN and the last SERIALNUMBER, all in reverse, RDNs joined by
//! `,`, values of one RDN by `+`.

use x509_parser::x509::{AttributeTypeAndValue, X509Name};

use super::FuncError;
use super::crypto::hex;
use super::der::tlv;

/// The `2.5.4.N` attributes Go parses into `pkix.Name` fields, in `ToRDNSequence` order.
const FIELDS: [(&str, &str); 9] = [
    ("2.5.4.6", "C"),
    ("2.5.4.8", "ST"),
    ("2.5.4.7", "L"),
    ("2.5.4.9", "STREET"),
    ("2.5.4.17", "POSTALCODE"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.3", "CN"),
    ("2.5.4.5", "SERIALNUMBER"),
];

/// The subject of DER certificate `der`.
pub fn subject(der: &[u8]) -> Result<String, FuncError> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|_| FuncError::from("x509: malformed certificate"))?;
    Ok(name_string(cert.subject()))
}

fn name_string(name: &X509Name) -> String {
    let attributes: Vec<(String, String)> = name
        .iter_rdn()
        .flat_map(|rdn| rdn.iter())
        .map(|atv| (atv.attr_type().to_id_string(), value_string(atv)))
        .collect();
    // Each RDN as its printed attributes.
    let mut rdns: Vec<Vec<String>> = attributes
        .iter()
        .filter(|(oid, _)| FIELDS.iter().all(|(field, _)| field != oid))
        .map(|(oid, value)| vec![format!("{oid}=#{}", hex(&go_der_string(value)))])
        .collect();
    for (field, label) in FIELDS {
        let values: Vec<&str> = attributes
            .iter()
            .filter(|(oid, _)| oid == field)
            .map(|(_, value)| value.as_str())
            .collect();
        // Go keeps one CommonName and one SerialNumber, the last, and only when not empty.
        let values = match (label, values.last()) {
            ("CN" | "SERIALNUMBER", Some(last)) if !last.is_empty() => vec![*last],
            ("CN" | "SERIALNUMBER", _) => Vec::new(),
            _ => values,
        };
        if !values.is_empty() {
            let printed = values
                .iter()
                .map(|value| format!("{label}={}", escape(value)));
            rdns.push(printed.collect());
        }
    }
    let rdns: Vec<String> = rdns.iter().rev().map(|rdn| rdn.join("+")).collect();
    rdns.join(",")
}

/// Go's `asn1.Marshal` of a string: a PrintableString when every byte is one, else UTF8String.
fn go_der_string(value: &str) -> Vec<u8> {
    const PRINTABLE_STRING: u8 = 0x13;
    const UTF8_STRING: u8 = 0x0c;
    let printable = value.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'\''..=b')' | b'+'..=b'/' | b' ' | b':' | b'=' | b'?')
    });
    let tag = if printable {
        PRINTABLE_STRING
    } else {
        UTF8_STRING
    };
    tlv(tag, value.as_bytes())
}

/// An attribute value as Go's `parseASN1String` reads it: UTF-16 for BMPString, the bytes as
/// they are for the others.
fn value_string(atv: &AttributeTypeAndValue) -> String {
    const BMP_STRING: u32 = 30;
    let bytes = atv.as_slice();
    if atv.attr_value().tag().0 == BMP_STRING {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// RFC 2253 escaping as Go does it: `,+"\<>;` anywhere, a space first or last, `#` first.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for (at, c) in value.char_indices() {
        let escaped = match c {
            ',' | '+' | '"' | '\\' | '<' | '>' | ';' => true,
            ' ' => at == 0 || at == value.len() - 1,
            '#' => at == 0,
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
