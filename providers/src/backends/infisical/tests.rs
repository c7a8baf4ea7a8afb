//! Store validation with upstream's messages.

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{CaProvider, InfisicalProvider, UniversalAuthCredentials};

use super::Infisical;
use crate::provider::Provider as _;
use crate::store::StoreId;

fn selector(key: &str, namespace: Option<&str>) -> SecretKeySelector {
    SecretKeySelector {
        name: Some("infisical".into()),
        key: Some(key.into()),
        namespace: namespace.map(Into::into),
    }
}

fn spec() -> InfisicalProvider {
    let mut spec = InfisicalProvider::default();
    spec.secrets_scope.project_slug = "first-project".into();
    spec.secrets_scope.environment_slug = "dev".into();
    spec.auth.universal_auth_credentials = Some(UniversalAuthCredentials {
        client_id: selector("clientId", None),
        client_secret: selector("clientSecret", None),
    });
    spec
}

fn message(spec: &InfisicalProvider, store: &StoreId) -> String {
    Infisical
        .validate_store(spec, store)
        .expect_err("invalid")
        .message()
        .to_owned()
}

fn ca_provider(namespace: Option<&str>) -> CaProvider {
    serde_json::from_value(serde_json::json!({
        "type": "Secret", "name": "ca", "key": "ca.crt", "namespace": namespace,
    }))
    .expect("ca provider")
}

#[test]
fn a_complete_store_is_valid_and_defaults_as_upstream() {
    let store = StoreId::secret_store("team", "infisical");
    Infisical.validate_store(&spec(), &store).expect("valid");
    let parsed: InfisicalProvider = serde_json::from_value(serde_json::json!({
        "auth": {},
        "secretsScope": {"projectSlug": "p", "environmentSlug": "dev"},
    }))
    .expect("parses");
    assert_eq!(parsed.host_api, "https://app.infisical.com/api");
    assert_eq!(parsed.secrets_scope.secrets_path, "/");
    assert!(parsed.secrets_scope.expand_secret_references);
}

#[test]
fn refusals_carry_upstreams_messages() {
    let store = StoreId::secret_store("team", "infisical");
    let mut no_scope = spec();
    no_scope.secrets_scope.project_slug.clear();
    assert_eq!(
        message(&no_scope, &store),
        "secretsScope.projectSlug and secretsScope.environmentSlug cannot be empty"
    );
    let mut no_key = spec();
    if let Some(universal) = no_key.auth.universal_auth_credentials.as_mut() {
        universal.client_secret.key = None;
    }
    assert_eq!(
        message(&no_key, &store),
        "universalAuthCredentials.clientId and universalAuthCredentials.clientSecret cannot be empty"
    );
    let mut other_namespace = spec();
    if let Some(universal) = other_namespace.auth.universal_auth_credentials.as_mut() {
        universal.client_id = selector("clientId", Some("other"));
    }
    assert_eq!(
        message(&other_namespace, &store),
        "namespace should either be empty or match the namespace of the SecretStore for a \
         namespaced SecretStore"
    );
}

#[test]
fn ca_provider_namespaces_follow_the_store_kind() {
    let mut namespaced = spec();
    namespaced.ca_provider = Some(ca_provider(Some("team")));
    assert_eq!(
        message(&namespaced, &StoreId::secret_store("team", "infisical")),
        "caProvider.namespace must be empty with SecretStore"
    );
    let mut bare = spec();
    bare.ca_provider = Some(ca_provider(None));
    let cluster = StoreId::cluster_secret_store("infisical");
    assert_eq!(
        message(&bare, &cluster),
        "caProvider.namespace is required for ClusterSecretStore"
    );
    Infisical
        .validate_store(&namespaced, &cluster)
        .expect("cluster store with a namespace");
}
