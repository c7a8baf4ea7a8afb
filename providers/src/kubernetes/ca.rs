//! The CA bundle the remote API server's certificate is checked against: `server.caBundle`
//! inline, or `server.caProvider` (a key of a Secret or ConfigMap), as upstream's
//! `FetchCACertFromSource`. Neither set: the system roots.

use base64::Engine as _;
use external_secrets_crds::v1::{CaProviderType, KubernetesServer};

use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::store::StoreKind;

/// The PEM bundle configured for `server`, if any.
pub(super) async fn ca_bundle(
    server: &KubernetesServer,
    credentials: &CredentialResolver,
) -> Result<Option<Vec<u8>>> {
    if let Some(bundle) = server
        .ca_bundle
        .as_ref()
        .filter(|bundle| !bundle.0.is_empty())
    {
        return Ok(Some(decode_bundle(&bundle.0)));
    }
    let Some(provider) = &server.ca_provider else {
        return Ok(None);
    };
    if credentials.store().kind == StoreKind::ClusterSecretStore && provider.namespace.is_none() {
        return Err(ProviderError::invalid_config(
            "missing namespace on caProvider secret",
        ));
    }
    let key = provider.key.as_deref().unwrap_or_default();
    let namespace = provider.namespace.as_deref();
    let pem = match provider.r#type {
        CaProviderType::Secret => credentials
            .secret_key(&provider.name, key, namespace, Referent::Forbidden)
            .await
            .map_err(|error| error.context("failed to get cert from secret"))?
            .into_bytes(),
        CaProviderType::ConfigMap => credentials
            .config_map_key(&provider.name, key, namespace, Referent::Forbidden)
            .await
            .map_err(|error| error.context("failed to get cert from configmap"))?
            .into_bytes(),
    };
    Ok(Some(decode_bundle(&pem)))
}

/// A bundle is PEM, or base64 of PEM (upstream accepts both).
fn decode_bundle(bytes: &[u8]) -> Vec<u8> {
    if bytes.windows(5).any(|window| window == b"-----") {
        return bytes.to_vec();
    }
    let compact: Vec<u8> = bytes
        .iter()
        .copied()
        .filter(|byte| !byte.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(&compact)
        .unwrap_or_else(|_| bytes.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_may_be_pem_or_base64_of_pem() {
        let pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        assert_eq!(decode_bundle(pem), pem);
        let encoded = base64::engine::general_purpose::STANDARD.encode(pem);
        assert_eq!(decode_bundle(encoded.as_bytes()), pem);
    }
}
