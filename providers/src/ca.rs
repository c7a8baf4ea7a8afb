//! The CA bundle a provider checks its server's certificate against: `caBundle` inline, or
//! `caProvider` (a key of a Secret or ConfigMap), as upstream's `FetchCACertFromSource`. Neither
//! set: the system roots. Shared by every provider whose spec has the pair (kubernetes
//! `server`, vault, webhook, gitlab, infisical, akeyless): always compiled, so a backend adding
//! the pair edits no list.

use base64::Engine as _;
use external_secrets_crds::v1::{CaProvider, CaProviderType};
use k8s_openapi::ByteString;

use crate::credentials::{CredentialResolver, Referent};
use crate::error::{ProviderError, Result};
use crate::store::StoreKind;

/// The PEM bundle configured by `bundle` or `provider`, if any.
pub async fn ca_bundle(
    bundle: Option<&ByteString>,
    provider: Option<&CaProvider>,
    credentials: &CredentialResolver,
) -> Result<Option<Vec<u8>>> {
    if let Some(bundle) = bundle.filter(|bundle| !bundle.0.is_empty()) {
        return Ok(Some(decode_bundle(&bundle.0)));
    }
    let Some(provider) = provider else {
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
    use std::sync::Arc;

    use super::*;
    use crate::credentials::MemorySecretSource;
    use crate::store::StoreId;

    const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn resolver(store: StoreId) -> CredentialResolver {
        let source = MemorySecretSource::default()
            .with_config_map("ns", "ca", &[("ca.crt", PEM)])
            .with_secret("ns", "ca", &[], &[("ca.crt", PEM)]);
        CredentialResolver::new(Arc::new(source), store, None)
    }

    fn provider(r#type: CaProviderType, namespace: Option<&str>) -> CaProvider {
        CaProvider {
            r#type,
            name: "ca".into(),
            key: Some("ca.crt".into()),
            namespace: namespace.map(str::to_owned),
        }
    }

    #[test]
    fn bundles_may_be_pem_or_base64_of_pem() {
        let encoded = base64::engine::general_purpose::STANDARD.encode(PEM);
        assert_eq!(decode_bundle(PEM.as_bytes()), PEM.as_bytes());
        assert_eq!(decode_bundle(encoded.as_bytes()), PEM.as_bytes());
    }

    #[tokio::test]
    async fn inline_bundles_win_and_may_be_base64() {
        let credentials = resolver(StoreId::secret_store("ns", "s"));
        let encoded = base64::engine::general_purpose::STANDARD.encode(PEM);
        let bundle = ByteString(encoded.into_bytes());
        let secret = provider(CaProviderType::Secret, None);
        let pem = ca_bundle(Some(&bundle), Some(&secret), &credentials).await;
        assert_eq!(pem.unwrap().unwrap(), PEM.as_bytes());
        assert_eq!(ca_bundle(None, None, &credentials).await.unwrap(), None);
    }

    #[tokio::test]
    async fn providers_read_secrets_or_config_maps_under_the_namespace_rules() {
        let namespaced = resolver(StoreId::secret_store("ns", "s"));
        for kind in [CaProviderType::Secret, CaProviderType::ConfigMap] {
            let pem = ca_bundle(None, Some(&provider(kind, None)), &namespaced).await;
            assert_eq!(pem.unwrap().unwrap(), PEM.as_bytes());
        }
        let cluster = resolver(StoreId::cluster_secret_store("s"));
        let error = ca_bundle(
            None,
            Some(&provider(CaProviderType::Secret, None)),
            &cluster,
        )
        .await
        .unwrap_err();
        assert_eq!(error.message(), "missing namespace on caProvider secret");
        let named = provider(CaProviderType::ConfigMap, Some("ns"));
        assert!(ca_bundle(None, Some(&named), &cluster).await.is_ok());
    }
}
