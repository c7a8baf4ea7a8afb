//! The certificates the cert controller keeps in its Secret, and the decision to keep or renew
//! them, without any I/O.
//!
//! As upstream: a self-signed CA named `external-secrets` (organisation `external-secrets`)
//! and a serving certificate for `<service>.<namespace>.svc` it signs, both valid for ten
//! years from an hour ago, renewed when they would not be valid 90 days from now. The CA is
//! kept when only the serving certificate needs renewing (a new Service name, say), so the
//! CA bundle injected into webhook configurations does not change needlessly.
//!
//! Keys are ECDSA P-256 (upstream: RSA 2048): rcgen generates them with ring, and every
//! Kubernetes API server accepts them. A stored CA whose key cannot be read (upstream's
//! PKCS#1 RSA key) is replaced together with the serving certificate when renewal is due.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

use super::verify;

/// Secret key of the CA certificate (also the CA bundle injected into webhooks).
pub const CA_CERT: &str = "ca.crt";
/// Secret key of the CA's private key.
pub const CA_KEY: &str = "ca.key";
/// Secret key of the serving certificate.
pub const TLS_CERT: &str = "tls.crt";
/// Secret key of the serving certificate's private key.
pub const TLS_KEY: &str = "tls.key";

/// How long generated certificates are valid (upstream: ten years).
pub const VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 3600);
/// Certificates that would not be valid this far ahead are renewed (upstream: 90 days).
pub const LOOKAHEAD: Duration = Duration::from_secs(90 * 24 * 3600);
/// Generated certificates are valid from this long ago, for clocks slightly behind.
const BACKDATE: Duration = Duration::from_secs(3600);
/// The CA's common name and organisation (upstream's).
const CA_NAME: &str = "external-secrets";

/// A CA and a serving certificate it signed, PEM-encoded, as the Secret stores them.
#[derive(Clone, PartialEq)]
pub struct Bundle {
    /// `ca.crt`.
    pub ca_cert: String,
    /// `ca.key`.
    pub ca_key: String,
    /// `tls.crt`.
    pub cert: String,
    /// `tls.key`.
    pub key: String,
}

// Keys are secrets: never print them.
impl std::fmt::Debug for Bundle {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Bundle").finish_non_exhaustive()
    }
}

impl Bundle {
    /// The Secret `data` holding this bundle (other keys of the Secret are kept by the caller).
    pub fn entries(&self) -> [(&'static str, &str); 4] {
        [
            (CA_CERT, &self.ca_cert),
            (CA_KEY, &self.ca_key),
            (TLS_CERT, &self.cert),
            (TLS_KEY, &self.key),
        ]
    }
}

/// The DNS names of the webhook Service: `<name>.<namespace>.svc` first (the name upstream
/// issues for and checks), then `<name>.<namespace>.svc.cluster.local`.
pub fn service_dns_names(service: &str, namespace: &str) -> [String; 2] {
    let short = format!("{service}.{namespace}.svc");
    let long = format!("{short}.cluster.local");
    [short, long]
}

/// What to do with the Secret's current content.
#[derive(Debug)]
pub enum Decision {
    /// The stored certificates are valid for the Service for at least the lookahead.
    Keep,
    /// Write these certificates; `new_ca` says whether the CA changed.
    Write {
        /// The certificates to store.
        bundle: Bundle,
        /// Whether a new CA was generated (rather than the stored one reused).
        new_ca: bool,
    },
}

/// Why certificates could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// rcgen refused the parameters or failed to sign.
    #[error("generating certificates: {0}")]
    Rcgen(#[from] rcgen::Error),
    /// A freshly generated certificate did not pass the check it was made for.
    #[error("generated certificate does not verify: {0}")]
    Verify(#[from] verify::InvalidCertificate),
}

/// Keeps the stored certificates when they are valid for `dns_names` at `now + LOOKAHEAD`,
/// else renews the serving certificate with the stored CA when that CA is still good, else
/// renews both. `stored` is the Secret's `data`.
pub fn decide(
    stored: &BTreeMap<String, Vec<u8>>,
    dns_names: &[String; 2],
    now: SystemTime,
) -> Result<Decision, GenerateError> {
    let field = |key: &str| stored.get(key).map(Vec::as_slice).unwrap_or_default();
    let horizon = now + LOOKAHEAD;
    let valid = |bundle_ca: &[u8], cert: &[u8], key: &[u8]| {
        verify::check(bundle_ca, cert, key, &dns_names[0], horizon)
    };
    if valid(field(CA_CERT), field(TLS_CERT), field(TLS_KEY)).is_ok() {
        return Ok(Decision::Keep);
    }
    if let Some(bundle) = reuse_ca(field(CA_CERT), field(CA_KEY), dns_names, now)
        && valid(
            bundle.ca_cert.as_bytes(),
            bundle.cert.as_bytes(),
            bundle.key.as_bytes(),
        )
        .is_ok()
    {
        return Ok(Decision::Write {
            bundle,
            new_ca: false,
        });
    }
    let bundle = generate(dns_names, now)?;
    valid(
        bundle.ca_cert.as_bytes(),
        bundle.cert.as_bytes(),
        bundle.key.as_bytes(),
    )?;
    Ok(Decision::Write {
        bundle,
        new_ca: true,
    })
}

/// A new serving certificate signed by the stored CA, when the stored CA and key can be read.
fn reuse_ca(
    ca_cert: &[u8],
    ca_key: &[u8],
    dns_names: &[String; 2],
    now: SystemTime,
) -> Option<Bundle> {
    let ca_cert = std::str::from_utf8(ca_cert).ok()?;
    let ca_key = std::str::from_utf8(ca_key).ok()?;
    let key = KeyPair::from_pem(ca_key).ok()?;
    let issuer = Issuer::from_ca_cert_pem(ca_cert, key).ok()?;
    let (cert, key) = serving_certificate(&issuer, dns_names, now).ok()?;
    Some(Bundle {
        ca_cert: ca_cert.to_owned(),
        ca_key: ca_key.to_owned(),
        cert,
        key,
    })
}

/// A new CA and a serving certificate for `dns_names` signed by it.
pub fn generate(dns_names: &[String; 2], now: SystemTime) -> Result<Bundle, rcgen::Error> {
    let mut params = CertificateParams::new(vec![CA_NAME.to_owned()])?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, CA_NAME);
    name.push(DnType::OrganizationName, CA_NAME);
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::KeyCertSign,
    ];
    set_validity(&mut params, now)?;
    let key = KeyPair::generate()?;
    let ca_cert = params.self_signed(&key)?.pem();
    let ca_key = key.serialize_pem();
    let issuer = Issuer::new(params, key);
    let (cert, key) = serving_certificate(&issuer, dns_names, now)?;
    Ok(Bundle {
        ca_cert,
        ca_key,
        cert,
        key,
    })
}

/// A serving certificate and key for `dns_names`, signed by `issuer`.
fn serving_certificate(
    issuer: &Issuer<'_, KeyPair>,
    dns_names: &[String; 2],
    now: SystemTime,
) -> Result<(String, String), rcgen::Error> {
    let mut params = CertificateParams::new(dns_names.to_vec())?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, dns_names[0].as_str());
    params.distinguished_name = name;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    set_validity(&mut params, now)?;
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, issuer)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// Valid from an hour before `now` for [`VALIDITY`].
fn set_validity(params: &mut CertificateParams, now: SystemTime) -> Result<(), rcgen::Error> {
    let at = |time: SystemTime| {
        let seconds = time
            .duration_since(UNIX_EPOCH)
            .map_err(|_| rcgen::Error::Time)?
            .as_secs();
        let seconds = i64::try_from(seconds).map_err(|_| rcgen::Error::Time)?;
        time::OffsetDateTime::from_unix_timestamp(seconds).map_err(|_| rcgen::Error::Time)
    };
    params.not_before = at(now - BACKDATE)?;
    params.not_after = at(now + VALIDITY)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> [String; 2] {
        service_dns_names("external-secrets-webhook", "eso")
    }

    fn stored(bundle: &Bundle) -> BTreeMap<String, Vec<u8>> {
        bundle
            .entries()
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.as_bytes().to_vec()))
            .collect()
    }

    fn written(decision: Decision) -> (Bundle, bool) {
        match decision {
            Decision::Write { bundle, new_ca } => (bundle, new_ca),
            Decision::Keep => panic!("expected new certificates"),
        }
    }

    #[test]
    fn service_names_are_the_svc_names() {
        assert_eq!(
            names(),
            [
                "external-secrets-webhook.eso.svc".to_owned(),
                "external-secrets-webhook.eso.svc.cluster.local".to_owned()
            ]
        );
    }

    #[test]
    fn an_empty_secret_gets_a_ca_and_a_serving_certificate_for_both_names() {
        let now = SystemTime::now();
        let (bundle, new_ca) = written(decide(&BTreeMap::new(), &names(), now).unwrap());
        assert!(new_ca);
        for name in names() {
            verify::check(
                bundle.ca_cert.as_bytes(),
                bundle.cert.as_bytes(),
                bundle.key.as_bytes(),
                &name,
                now,
            )
            .unwrap();
        }
        // Not for another name, and not signed by itself.
        assert!(matches!(
            verify::check(
                bundle.ca_cert.as_bytes(),
                bundle.cert.as_bytes(),
                bundle.key.as_bytes(),
                "other.eso.svc",
                now
            ),
            Err(verify::InvalidCertificate::NotValid { .. })
        ));
        assert!(bundle.ca_key.contains("PRIVATE KEY"));
        assert!(!format!("{bundle:?}").contains("PRIVATE"));
    }

    #[test]
    fn valid_certificates_are_kept() {
        let now = SystemTime::now();
        let (bundle, _) = written(decide(&BTreeMap::new(), &names(), now).unwrap());
        assert!(matches!(
            decide(&stored(&bundle), &names(), now).unwrap(),
            Decision::Keep
        ));
        // Still kept just before the lookahead reaches the end of validity.
        let later = now + VALIDITY - LOOKAHEAD - Duration::from_secs(7200);
        assert!(matches!(
            decide(&stored(&bundle), &names(), later).unwrap(),
            Decision::Keep
        ));
    }

    #[test]
    fn certificates_expiring_within_the_lookahead_are_renewed_with_a_new_ca() {
        let issued = SystemTime::now();
        let (old, _) = written(decide(&BTreeMap::new(), &names(), issued).unwrap());
        let later = issued + VALIDITY - LOOKAHEAD + Duration::from_secs(3600);
        let (new, new_ca) = written(decide(&stored(&old), &names(), later).unwrap());
        // The CA expires with the serving certificate, so it is renewed too.
        assert!(new_ca);
        assert_ne!(new.ca_cert, old.ca_cert);
        verify::check(
            new.ca_cert.as_bytes(),
            new.cert.as_bytes(),
            new.key.as_bytes(),
            &names()[0],
            later + LOOKAHEAD,
        )
        .unwrap();
    }

    #[test]
    fn a_new_service_name_keeps_the_ca() {
        let now = SystemTime::now();
        let (old, _) = written(decide(&BTreeMap::new(), &names(), now).unwrap());
        let renamed = service_dns_names("webhook", "eso");
        let (new, new_ca) = written(decide(&stored(&old), &renamed, now).unwrap());
        assert!(!new_ca);
        assert_eq!(new.ca_cert, old.ca_cert);
        assert_eq!(new.ca_key, old.ca_key);
        assert_ne!(new.cert, old.cert);
        verify::check(
            new.ca_cert.as_bytes(),
            new.cert.as_bytes(),
            new.key.as_bytes(),
            "webhook.eso.svc",
            now,
        )
        .unwrap();
    }

    #[test]
    fn a_mismatched_or_unreadable_secret_is_replaced() {
        let now = SystemTime::now();
        let (first, _) = written(decide(&BTreeMap::new(), &names(), now).unwrap());
        let (second, _) = written(decide(&BTreeMap::new(), &names(), now).unwrap());
        let mut mixed = stored(&first);
        mixed.insert(TLS_KEY.into(), second.key.as_bytes().to_vec());
        assert!(matches!(
            verify::check(
                first.ca_cert.as_bytes(),
                first.cert.as_bytes(),
                second.key.as_bytes(),
                &names()[0],
                now
            ),
            Err(verify::InvalidCertificate::KeyMismatch(_))
        ));
        let (fixed, new_ca) = written(decide(&mixed, &names(), now).unwrap());
        assert!(!new_ca, "the stored CA is still good");
        assert_eq!(fixed.ca_cert, first.ca_cert);

        let mut garbage = stored(&first);
        garbage.insert(CA_KEY.into(), b"not a key".to_vec());
        garbage.insert(TLS_CERT.into(), b"not a cert".to_vec());
        let (_, new_ca) = written(decide(&garbage, &names(), now).unwrap());
        assert!(new_ca);
    }

    #[test]
    fn check_names_the_missing_file() {
        let now = SystemTime::now();
        let (bundle, _) = written(decide(&BTreeMap::new(), &names(), now).unwrap());
        let check = |ca: &str, cert: &str, key: &str| {
            verify::check(
                ca.as_bytes(),
                cert.as_bytes(),
                key.as_bytes(),
                &names()[0],
                now,
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(check("", &bundle.cert, &bundle.key), "ca.crt is empty");
        assert_eq!(check(&bundle.ca_cert, "", &bundle.key), "tls.crt is empty");
        assert_eq!(check(&bundle.ca_cert, &bundle.cert, ""), "tls.key is empty");
        assert!(check(&bundle.ca_cert, "junk", &bundle.key).starts_with("tls.crt: "));
    }
}
