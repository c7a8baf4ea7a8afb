//! Instance principal auth: the identity of the OCI compute instance the operator runs on, as the
//! OCI SDKs' `InstancePrincipalConfigurationProvider` obtains it.
//!
//! * The instance metadata service (`http://169.254.169.254/opc/v2`, or `OCI_METADATA_BASE_URL`
//!   as the SDKs read it), every request with `Authorization: Bearer Oracle`, answers
//!   `/instance/region`, the instance's leaf certificate `/identity/cert.pem`, its key
//!   `/identity/key.pem` and `/identity/intermediate.pem`. The tenancy is the leaf's subject
//!   attribute `opc-tenant:<tenancy OCID>`.
//! * A fresh 2048-bit RSA session key is federated at the identity service
//!   (`https://auth.<region>.oraclecloud.com/v1/x509`, or `OCI_SDK_AUTH_CLIENT_REGION_URL` as
//!   the SDKs read it): a POST signed by the leaf key (key id `<tenancy>/fed-x509-sha256/<SHA-256
//!   of the leaf, colon-separated hex>`, headers `date (request-target) content-length
//!   content-type x-content-sha256`) carrying `{"certificate","publicKey",
//!   "intermediateCertificates","fingerprintAlgorithm":"SHA256"}` (base64 DER, as the SDKs'
//!   PEM bodies without armour) answers `{"token"}`, a JWT.
//! * Vault requests are signed by the session key with key id `ST$<token>` (see `session`);
//!   each renewal reads the certificates and key again; the region is read once.
//!
//! Tokens, keys and certificates never appear in errors.

use super::session::{Session, SessionCache, session_key};
use super::signer::Signer;
use crate::error::{ProviderError, Result};
use crate::transport::{read_body, transport_error};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

/// The metadata service as the SDKs reach it without `OCI_METADATA_BASE_URL`.
const METADATA_BASE_URL: &str = "http://169.254.169.254/opc/v2";

/// Longest metadata or federation answer read (certificates, a key, a token).
const MAX_BODY_BYTES: usize = 64 * 1024;

/// The instance's identity, federated on first use and renewed before expiry.
pub struct InstancePrincipal {
    http: reqwest::Client,
    metadata: String,
    federation: reqwest::Url,
    tenancy: String,
    /// The current session, renewed by [`Self::federate`].
    pub sessions: SessionCache,
}

impl InstancePrincipal {
    /// Reads the instance's region and tenancy from the metadata service (as the SDKs do when
    /// the configuration provider is built).
    pub async fn new(http: reqwest::Client) -> Result<Self> {
        let metadata = std::env::var("OCI_METADATA_BASE_URL")
            .ok()
            .filter(|value| !value.is_empty())
            .unwrap_or_else(|| METADATA_BASE_URL.to_owned());
        let metadata = metadata.trim_end_matches('/').to_owned();
        let region = get(&http, &metadata, "/instance/region").await?;
        let region = region_name(String::from_utf8_lossy(&region).trim());
        let federation = std::env::var("OCI_SDK_AUTH_CLIENT_REGION_URL")
            .ok()
            .filter(|value| !value.is_empty())
            .unwrap_or_else(|| format!("https://auth.{region}.oraclecloud.com"));
        let federation =
            reqwest::Url::parse(&format!("{}/v1/x509", federation.trim_end_matches('/')))
                .map_err(|failure| setup(format!("invalid identity endpoint: {failure}")))?;
        let leaf = certificate(&get(&http, &metadata, "/identity/cert.pem").await?)?;
        let tenancy = tenancy_of(&leaf)?;
        Ok(Self {
            http,
            metadata,
            federation,
            tenancy,
            sessions: SessionCache::default(),
        })
    }

    /// A new session: fresh certificates from the metadata service and a fresh session key
    /// federated at the identity service.
    pub async fn federate(&self) -> Result<Session> {
        let leaf_pem = get(&self.http, &self.metadata, "/identity/cert.pem").await?;
        let leaf = certificate(&leaf_pem)?;
        let tenancy = tenancy_of(&leaf)?;
        if tenancy != self.tenancy {
            return Err(setup(format!(
                "unexpected update of tenancy OCID in the leaf certificate. Previous tenancy: \
                 {}, Updated: {tenancy}",
                self.tenancy
            )));
        }
        let leaf_key = get(&self.http, &self.metadata, "/identity/key.pem").await?;
        let intermediate =
            certificate(&get(&self.http, &self.metadata, "/identity/intermediate.pem").await?)?;
        let key_id = format!("{}/fed-x509-sha256/{}", self.tenancy, fingerprint(&leaf));
        let leaf_signer =
            Signer::from_pem(key_id, &leaf_key, "the instance's leaf key")?.without_host();
        let (session_key, public_key) = session_key()?;
        let body = serde_json::json!({
            "certificate": STANDARD.encode(leaf.as_ref()),
            "publicKey": STANDARD.encode(public_key),
            "intermediateCertificates": [STANDARD.encode(intermediate.as_ref())],
            "fingerprintAlgorithm": "SHA256",
        })
        .to_string()
        .into_bytes();
        let mut headers = reqwest::header::HeaderMap::new();
        leaf_signer.sign(&Method::POST, &self.federation, Some(&body), &mut headers)?;
        let action = "failed to get security token";
        let response = self
            .http
            .post(self.federation.clone())
            .headers(headers)
            .body(body)
            .send()
            .await
            .map_err(|failure| transport_error(action, failure))?;
        let status = response.status();
        let answer = read_body(response, MAX_BODY_BYTES, action).await?;
        if !status.is_success() {
            let error = format!("{action}: error {status} returned by auth service");
            return Err(if status.is_client_error() {
                ProviderError::permission_denied(error)
            } else {
                ProviderError::unavailable(error)
            });
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            token: String,
        }
        let token = serde_json::from_slice::<Answer>(&answer)
            .map_err(|_| ProviderError::invalid_data(format!("{action}: malformed answer")))?
            .token;
        Session::new(&token, session_key, action)
    }
}

/// A configuration error of the instance principal.
fn setup(message: String) -> ProviderError {
    ProviderError::invalid_config(message)
}

/// The body of the metadata service's `path`, bounded.
async fn get(http: &reqwest::Client, base: &str, path: &str) -> Result<Vec<u8>> {
    let action = format!("failed to read {path} from the instance metadata service");
    let response = http
        .get(format!("{base}{path}"))
        .header("authorization", "Bearer Oracle")
        .send()
        .await
        .map_err(|failure| transport_error(&action, failure))?;
    let status = response.status();
    let body = read_body(response, MAX_BODY_BYTES, &action).await?;
    if !status.is_success() {
        return Err(ProviderError::unavailable(format!(
            "{action}: status {status}; instance principals authentication can only be used on \
             OCI compute instances"
        )));
    }
    Ok(body)
}

/// The first certificate of `pem`.
fn certificate(pem: &[u8]) -> Result<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem)
        .next()
        .and_then(std::result::Result::ok)
        .ok_or_else(|| {
            ProviderError::invalid_data("the instance metadata service answered no PEM certificate")
        })
}

/// The tenancy OCID of the leaf certificate's subject (`opc-tenant:<OCID>`).
fn tenancy_of(leaf: &CertificateDer<'_>) -> Result<String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(leaf.as_ref()).map_err(|_| {
        ProviderError::invalid_data("the instance's leaf certificate is not X.509 DER")
    })?;
    parsed
        .subject()
        .iter_attributes()
        .filter_map(|attribute| attribute.as_str().ok())
        .find_map(|value| value.strip_prefix("opc-tenant:"))
        .map(str::to_owned)
        .ok_or_else(|| {
            ProviderError::invalid_data(
                "the instance's leaf certificate names no tenancy (opc-tenant:)",
            )
        })
}

/// The SHA-256 fingerprint of `certificate` as the SDKs write it: lowercase hex bytes joined
/// by colons.
pub(super) fn fingerprint(certificate: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, certificate)
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The region name of a metadata answer: the SDKs map the short codes of the first regions to
/// their names; others are names already.
fn region_name(region: &str) -> String {
    let region = region.to_ascii_lowercase();
    match region.as_str() {
        "phx" => "us-phoenix-1".to_owned(),
        "iad" => "us-ashburn-1".to_owned(),
        "fra" => "eu-frankfurt-1".to_owned(),
        "lhr" => "uk-london-1".to_owned(),
        _ => region,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_colon_separated_lowercase_sha256() {
        let expected = "ba:78:16:bf:8f:01:cf:ea:41:41:40:de:5d:ae:22:23:b0:03:61:a3:96:17:7a:\
                        9c:b4:10:ff:61:f2:00:15:ad";
        assert_eq!(fingerprint(b"abc"), expected);
    }

    #[test]
    fn short_region_codes_become_names() {
        assert_eq!(region_name("PHX"), "us-phoenix-1");
        assert_eq!(region_name("eu-zurich-1"), "eu-zurich-1");
    }
}
