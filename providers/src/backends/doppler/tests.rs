//! Store validation with upstream's messages (its `TestValidateStore` cases) and the wire names
//! of the transformers and formats.

use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::{
    DopplerAuth, DopplerAuthSecretRef, DopplerFormat, DopplerNameTransformer, DopplerOidcAuth,
    DopplerProvider,
};

use super::*;

fn token_spec(name: &str, namespace: Option<&str>) -> DopplerProvider {
    DopplerProvider {
        auth: DopplerAuth {
            secret_ref: Some(DopplerAuthSecretRef {
                doppler_token: SecretKeySelector {
                    name: Some(name.into()),
                    key: None,
                    namespace: namespace.map(str::to_owned),
                },
            }),
            oidc_config: None,
        },
        ..DopplerProvider::default()
    }
}

fn oidc_spec(identity: &str, account: &str, namespace: Option<&str>) -> DopplerProvider {
    DopplerProvider {
        auth: DopplerAuth {
            secret_ref: None,
            oidc_config: Some(DopplerOidcAuth {
                identity: identity.into(),
                service_account_ref: ServiceAccountSelector {
                    name: account.into(),
                    namespace: namespace.map(str::to_owned),
                    audiences: Vec::new(),
                },
                expiration_seconds: 600,
            }),
        },
        ..DopplerProvider::default()
    }
}

fn message(spec: &DopplerProvider, store: &StoreId) -> Option<String> {
    Doppler
        .validate_store(spec, store)
        .err()
        .map(|error| error.to_string())
}

#[test]
fn validation_messages_are_upstreams() {
    let namespaced = StoreId::secret_store("team", "doppler");
    let cluster = StoreId::cluster_secret_store("doppler");
    let cases = [
        (
            token_spec("", None),
            &namespaced,
            Some("invalid store: dopplerToken.name cannot be empty"),
        ),
        (
            token_spec("token", Some("other")),
            &namespaced,
            Some(
                "invalid store: namespace should either be empty or match the namespace of the \
                 SecretStore for a namespaced SecretStore",
            ),
        ),
        (
            token_spec("token", None),
            &cluster,
            Some("invalid store: cluster scope requires namespace"),
        ),
        (token_spec("token", None), &namespaced, None),
        (token_spec("token", Some("team")), &cluster, None),
        (
            DopplerProvider::default(),
            &namespaced,
            Some("invalid store: either auth.secretRef or auth.oidcConfig must be specified"),
        ),
        (
            oidc_spec("", "sa", None),
            &namespaced,
            Some("invalid store: oidcConfig.identity cannot be empty"),
        ),
        (
            oidc_spec("identity", "", None),
            &namespaced,
            Some("invalid store: oidcConfig.serviceAccountRef.name cannot be empty"),
        ),
        (
            oidc_spec("identity", "sa", None),
            &cluster,
            Some("invalid store: cluster scope requires namespace"),
        ),
        (oidc_spec("identity", "sa", None), &namespaced, None),
    ];
    for (spec, store, expected) in cases {
        assert_eq!(message(&spec, store).as_deref(), expected, "{spec:?}");
    }
    let error = Doppler
        .validate_store(&DopplerProvider::default(), &namespaced)
        .unwrap_err();
    assert_eq!(error.kind(), crate::error::ErrorKind::InvalidConfig);
}

#[test]
fn resource_audiences_name_the_store() {
    assert_eq!(
        resource_audience(&StoreId::secret_store("team", "doppler")),
        "secretStore:team:doppler"
    );
    assert_eq!(
        resource_audience(&StoreId::cluster_secret_store("doppler")),
        "clusterSecretStore:doppler"
    );
}

#[test]
fn wire_names_are_the_crd_values() {
    for transformer in [
        DopplerNameTransformer::UpperCamel,
        DopplerNameTransformer::Camel,
        DopplerNameTransformer::LowerSnake,
        DopplerNameTransformer::TfVar,
        DopplerNameTransformer::DotnetEnv,
        DopplerNameTransformer::LowerKebab,
    ] {
        let serialized = serde_json::to_value(transformer).unwrap();
        assert_eq!(serialized, transformer_name(transformer));
    }
    for format in [
        DopplerFormat::Json,
        DopplerFormat::DotnetJson,
        DopplerFormat::Env,
        DopplerFormat::Yaml,
        DopplerFormat::Docker,
    ] {
        assert_eq!(serde_json::to_value(format).unwrap(), format_name(format));
    }
}
