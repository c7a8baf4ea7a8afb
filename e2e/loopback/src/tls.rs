//! A throwaway certificate authority and serving certificate (for `localhost`, `127.0.0.1`
//! and `::1`), generated at start, and the rustls server configuration using them. Clients
//! trust the CA through the kubeconfig's `certificate-authority-data`.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;

/// The generated CA and serving certificate.
pub(crate) struct Certificates {
    /// PEM of the CA certificate, for kubeconfigs.
    pub ca_pem: String,
    /// rustls configuration serving the leaf certificate.
    pub server_config: Arc<rustls::ServerConfig>,
}

/// Generates a CA and a serving certificate signed by it.
pub(crate) fn generate() -> anyhow::Result<Certificates> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "loopback-apiserver-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;

    let mut leaf_params = CertificateParams::new(vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
        "kubernetes.default.svc".to_owned(),
    ])?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "loopback-apiserver");
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf_params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let leaf_key = KeyPair::generate()?;
    let leaf = leaf_params.signed_by(&leaf_key, &ca)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone(), ca.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let mut server_config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    server_config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Certificates {
        ca_pem: ca.pem(),
        server_config: Arc::new(server_config),
    })
}
