//! Certificates in templates: ESO's `filterCertChain` and `certSANs`, and the chain ordering
//! `pkcs12cert` uses (upstream's `fetchX509CertChains`: leaf, intermediates, root, linked by
//! authority and subject key identifiers; a formatting helper, not a trust check).

use x509_parser::extensions::{GeneralName, ParsedExtension};

use super::pem::{decode, encode_der, trim_junk};
use super::{Arity, Entry, FuncError, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("filterCertChain", Arity::Exact(2), |_, a| {
        Ok(Value::str(filter_cert_chain(
            &text(&a[0])?,
            &string(&a[1])?,
        )?))
    }),
    ("certSANs", Arity::Exact(1), |_, a| {
        let names = cert_sans(&string(&a[0])?)?;
        Ok(Value::list(names.into_iter().map(Value::str).collect()))
    }),
];

/// What chain building needs from a certificate.
pub struct Cert {
    pub der: Vec<u8>,
    /// The authority key identifier (empty when absent, as Go's nil compares).
    pub authority_key_id: Option<Vec<u8>>,
    pub subject_key_id: Option<Vec<u8>>,
}

impl Cert {
    fn is_root(&self) -> bool {
        self.authority_key_id.is_none() || self.authority_key_id == self.subject_key_id
    }
}

/// Parses one DER certificate (Go's `x509.ParseCertificate`: trailing data is an error).
pub fn parse(der: &[u8]) -> Result<Cert, FuncError> {
    let (rest, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|_| FuncError::from("x509: malformed certificate"))?;
    if !rest.is_empty() {
        return Err("x509: trailing data".into());
    }
    let mut parsed = Cert {
        der: der.to_vec(),
        authority_key_id: None,
        subject_key_id: None,
    };
    for extension in cert.extensions() {
        match extension.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(id) => {
                parsed.subject_key_id = Some(id.0.to_vec())
            }
            ParsedExtension::AuthorityKeyIdentifier(aki) => {
                parsed.authority_key_id = aki.key_identifier.as_ref().map(|id| id.0.to_vec())
            }
            _ => {}
        }
    }
    Ok(parsed)
}

fn same_id(a: &Option<Vec<u8>>, b: &Option<Vec<u8>>) -> bool {
    a.as_deref().unwrap_or_default() == b.as_deref().unwrap_or_default()
}

/// Every PEM block of `data` parsed as a certificate.
pub fn parse_pem_certs(mut data: &[u8]) -> Result<Vec<Cert>, FuncError> {
    let mut certs = Vec::new();
    while let Some((block, rest)) = decode(data) {
        certs.push(parse(&block.bytes)?);
        data = rest;
    }
    Ok(certs)
}

/// Orders certificates leaf first, then each one's issuer.
pub fn order_chain(certs: Vec<Cert>) -> Result<Vec<Cert>, FuncError> {
    let count = certs.len();
    let mut parent: Vec<Option<usize>> = vec![None; count];
    let mut is_parent = vec![false; count];
    for i in 0..count {
        for j in 0..count {
            if i != j && same_id(&certs[i].authority_key_id, &certs[j].subject_key_id) {
                is_parent[j] = true;
                parent[i] = Some(j);
                break;
            }
        }
    }
    let mut leaf = None;
    for (index, parent_of_something) in is_parent.iter().enumerate() {
        if !parent_of_something {
            if leaf.is_some() {
                return Err("found multiple leaf or disjunct certificates".into());
            }
            leaf = Some(index);
        }
    }
    let Some(mut current) = leaf else {
        return Err("no leaf certificate found".into());
    };
    let mut order = vec![current];
    while let Some(next) = parent[current] {
        if order.len() >= count {
            return Err("constructing chain resulted in cycle".into());
        }
        order.push(next);
        current = next;
    }
    let mut slots: Vec<Option<Cert>> = certs.into_iter().map(Some).collect();
    Ok(order
        .into_iter()
        .filter_map(|index| slots[index].take())
        .collect())
}

fn filter_cert_chain(kind: &str, input: &[u8]) -> Result<Vec<u8>, FuncError> {
    let ordered = order_chain(parse_pem_certs(input)?)?;
    let pem = |cert: &Cert| encode_der("CERTIFICATE", &cert.der);
    Ok(match kind {
        "leaf" => {
            let cert = &ordered[0];
            if cert.authority_key_id.is_some()
                && !same_id(&cert.authority_key_id, &cert.subject_key_id)
            {
                pem(cert)
            } else {
                Vec::new()
            }
        }
        "intermediate" => ordered
            .iter()
            .skip(1)
            .take_while(|cert| !cert.is_root())
            .flat_map(pem)
            .collect(),
        "root" => match ordered.last() {
            Some(cert) if cert.is_root() => pem(cert),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    })
}

fn cert_sans(input: &[u8]) -> Result<Vec<String>, FuncError> {
    let Some((block, _)) = decode(trim_junk(input)) else {
        return Err("failed to decode PEM block".into());
    };
    let (_, cert) = x509_parser::parse_x509_certificate(&block.bytes)
        .map_err(|_| FuncError::from("failed to parse certificate: x509: malformed certificate"))?;
    let Ok(Some(san)) = cert.subject_alternative_name() else {
        return Ok(Vec::new());
    };
    let names = &san.value.general_names;
    let mut out: Vec<String> = Vec::new();
    out.extend(names.iter().filter_map(|n| match n {
        GeneralName::DNSName(name) => Some(name.to_string()),
        _ => None,
    }));
    out.extend(names.iter().filter_map(|n| match n {
        GeneralName::IPAddress(bytes) => ip_string(bytes),
        _ => None,
    }));
    out.extend(names.iter().filter_map(|n| match n {
        GeneralName::RFC822Name(email) => Some(email.to_string()),
        _ => None,
    }));
    out.extend(names.iter().filter_map(|n| match n {
        GeneralName::URI(uri) => Some(uri.to_string()),
        _ => None,
    }));
    Ok(out)
}

/// Go's `net.IP.String` for 4- and 16-byte addresses (IPv4-mapped IPv6 prints as IPv4).
fn ip_string(bytes: &[u8]) -> Option<String> {
    match bytes.len() {
        4 => Some(std::net::Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()),
        16 => {
            let octets: [u8; 16] = bytes.try_into().ok()?;
            let address = std::net::Ipv6Addr::from(octets);
            Some(match address.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => address.to_string(),
            })
        }
        _ => None,
    }
}
