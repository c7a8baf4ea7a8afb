//! The webhook provider over HTTPS: `caBundle` and `caProvider` decide which server certificates
//! are trusted (a real TLS server on 127.0.0.1 with a test CA from `tests/data`).

#![cfg(feature = "webhook")]

mod support;

use std::sync::Arc;

use base64::Engine as _;
use external_secrets_crds::v1::{
    CaProviderType, SecretStoreProvider, WebhookCaProvider, WebhookProvider,
};
use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::request::RemoteRef;
use external_secrets_providers::{ErrorKind, SharedClient};
use k8s_openapi::ByteString;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const CA: &str = include_str!("data/ca.crt");
const CERTIFICATE: &str = include_str!("data/server.crt");
const KEY: &str = include_str!("data/server.key");

/// Serves `HTTP/1.1 200` with body `from-tls` to every TLS connection; returns the base URL.
async fn tls_server() -> String {
    let certificates = CertificateDer::pem_slice_iter(CERTIFICATE.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(KEY.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certificates, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client that does not trust the certificate aborts the handshake.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|window| window == b"\r\n\r\n") {
                    match tls.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => request.extend_from_slice(&buffer[..read]),
                    }
                }
                let response =
                    "HTTP/1.1 200 OK\r\ncontent-length: 8\r\nconnection: close\r\n\r\nfrom-tls";
                let _ = tls.write_all(response.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    format!("https://127.0.0.1:{}", address.port())
}

async fn client(provider: WebhookProvider, source: MemorySecretSource) -> SharedClient {
    let store = support::secret_store(
        &support::unique_name("tls"),
        SecretStoreProvider {
            webhook: Some(Box::new(provider)),
            ..SecretStoreProvider::default()
        },
    );
    support::client_for(&store, Arc::new(source)).await
}

fn provider(base: &str) -> WebhookProvider {
    WebhookProvider {
        url: format!("{base}/secrets/{{{{ .remoteRef.key }}}}"),
        timeout: Some("5s".into()),
        ..WebhookProvider::default()
    }
}

async fn get(client: &SharedClient) -> external_secrets_providers::Result<String> {
    let value = client.get_secret(&RemoteRef::new("k")).await?;
    Ok(String::from_utf8(value.into_bytes()).unwrap())
}

#[tokio::test]
async fn a_ca_bundle_is_trusted_as_pem_or_base64() {
    let base = tls_server().await;
    for bundle in [
        CA.as_bytes().to_vec(),
        base64::engine::general_purpose::STANDARD
            .encode(CA)
            .into_bytes(),
    ] {
        let mut spec = provider(&base);
        spec.ca_bundle = Some(ByteString(bundle));
        let client = client(spec, MemorySecretSource::default()).await;
        assert_eq!(get(&client).await.unwrap(), "from-tls");
    }
}

#[tokio::test]
async fn without_the_ca_the_server_is_not_trusted() {
    let base = tls_server().await;
    let client = client(provider(&base), MemorySecretSource::default()).await;
    let error = get(&client).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig, "{error}");
    assert!(error.is_temporary());
    assert!(
        error
            .message()
            .starts_with("failed to call endpoint: tls handshake failed: "),
        "{error}"
    );
}

#[tokio::test]
async fn a_ca_provider_reads_the_bundle_from_a_secret_or_config_map() {
    let base = tls_server().await;
    let source = || {
        MemorySecretSource::default()
            .with_secret(support::NAMESPACE, "ca-secret", &[], &[("ca.crt", CA)])
            .with_config_map(support::NAMESPACE, "ca-config", &[("ca.crt", CA)])
    };
    for (kind, name) in [
        (CaProviderType::Secret, "ca-secret"),
        (CaProviderType::ConfigMap, "ca-config"),
    ] {
        let mut spec = provider(&base);
        spec.ca_provider = Some(WebhookCaProvider {
            r#type: kind,
            name: name.into(),
            key: Some("ca.crt".into()),
            namespace: None,
        });
        let client = client(spec, source()).await;
        assert_eq!(get(&client).await.unwrap(), "from-tls", "{kind:?}");
    }
}
