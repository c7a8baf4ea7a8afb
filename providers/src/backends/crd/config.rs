//! `spec.provider.crd` checked statically (upstream's `ValidateStore`), its connection fields
//! seen as a kubernetes provider's, and `remoteRef.key` parsed per store kind.

use external_secrets_crds::v1::{CrdProvider, CrdProviderResource, KubernetesProvider};

use crate::backends::kubernetes;
use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

use super::whitelist::Whitelist;

/// The connection fields (`server`, `auth`, `authRef`) as the kubernetes provider's spec, whose
/// connection code and checks the crd provider shares (as upstream shares them via esutils).
pub(super) fn connection(spec: &CrdProvider) -> KubernetesProvider {
    KubernetesProvider {
        server: spec.server.clone(),
        auth: spec.auth.clone(),
        auth_ref: spec.auth_ref.clone(),
        ..KubernetesProvider::default()
    }
}

/// Whether the resource is the core v1 Secret (any case of the kind), which this provider
/// refuses: the kubernetes provider reads Secrets. A custom kind named `Secret` in another group
/// is fine.
fn is_core_secret(resource: &CrdProviderResource) -> bool {
    resource.kind.eq_ignore_ascii_case("Secret")
        && resource.version == "v1"
        && (resource.group.is_empty() || resource.group == "core")
}

/// Checks `spec` statically, with upstream's messages and in upstream's order.
pub(super) fn validate_store(spec: &CrdProvider, store: &StoreId) -> Result<()> {
    let server_url = spec
        .server
        .as_ref()
        .is_some_and(|server| !server.url.is_empty());
    if server_url && spec.auth.is_none() && spec.auth_ref.is_none() {
        return Err(ProviderError::invalid_config(
            "server.url requires auth or authRef when set",
        ));
    }
    kubernetes::validate_store(&connection(spec), store)?;
    if spec.resource.version.is_empty() {
        return Err(ProviderError::invalid_config(
            "resource.version is required",
        ));
    }
    if spec.resource.kind.is_empty() {
        return Err(ProviderError::invalid_config("resource.kind is required"));
    }
    if is_core_secret(&spec.resource) {
        return Err(ProviderError::invalid_config(
            "kind \"Secret\" is not allowed: use the Kubernetes provider to read Kubernetes Secrets",
        ));
    }
    Whitelist::compile(spec.whitelist.as_ref())?;
    if store.kind == StoreKind::SecretStore
        && let Some(whitelist) = &spec.whitelist
        && let Some(index) = whitelist
            .rules
            .iter()
            .position(|rule| rule.namespace.as_deref().is_some_and(|ns| !ns.is_empty()))
    {
        return Err(ProviderError::invalid_config(format!(
            "crd: whitelist.rules[{index}].namespace is not supported for a SecretStore (it only \
             reads its own namespace); remove it or use a ClusterSecretStore"
        )));
    }
    Ok(())
}

/// An object addressed by `remoteRef.key`: its name, and the namespace the key named.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Key<'a> {
    /// The object's name.
    pub name: &'a str,
    /// `Some` when the key was `namespace/name` (ClusterSecretStore only).
    pub namespace: Option<&'a str>,
}

/// Parses `remoteRef.key` as upstream: a SecretStore's key is a bare name; a ClusterSecretStore's
/// is `namespace/name` for a namespaced object or a bare name for a cluster-scoped one.
pub(super) fn parse_key(kind: StoreKind, key: &str) -> Result<Key<'_>> {
    let invalid = |message: String| Err(ProviderError::invalid_request(message));
    if key.is_empty() {
        return invalid("crd: remoteRef.key must not be empty".to_owned());
    }
    match kind {
        StoreKind::SecretStore if key.contains('/') => invalid(
            "crd: remoteRef.key must not contain '/' for SecretStore; namespace is fixed to the \
             store namespace"
                .to_owned(),
        ),
        StoreKind::SecretStore => Ok(Key {
            name: key,
            namespace: None,
        }),
        StoreKind::ClusterSecretStore => match key.split_once('/') {
            None => Ok(Key {
                name: key,
                namespace: None,
            }),
            Some(("", _)) => invalid(format!(
                "crd: invalid remoteRef.key {key:?}: namespace segment before '/' must not be empty"
            )),
            Some((_, "")) => invalid(format!(
                "crd: invalid remoteRef.key {key:?}: object name after '/' must not be empty"
            )),
            Some((_, name)) if name.contains('/') => invalid(format!(
                "crd: invalid remoteRef.key {key:?}: must be in \"namespace/objectName\" form \
                 (exactly one '/')"
            )),
            Some((namespace, name)) => Ok(Key {
                name,
                namespace: Some(namespace),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::meta::SecretKeySelector;
    use external_secrets_crds::v1::{
        CrdProviderWhitelist, CrdProviderWhitelistRule, KubernetesAuth, KubernetesServer, TokenAuth,
    };

    fn spec(group: &str, version: &str, kind: &str) -> CrdProvider {
        CrdProvider {
            server: Some(KubernetesServer::default()),
            auth: Some(KubernetesAuth {
                token: Some(TokenAuth {
                    bearer_token: SecretKeySelector {
                        name: Some("token".into()),
                        key: Some("token".into()),
                        namespace: None,
                    },
                }),
                ..KubernetesAuth::default()
            }),
            auth_ref: None,
            resource: CrdProviderResource {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
            },
            whitelist: None,
        }
    }

    fn message(spec: &CrdProvider, store: &StoreId) -> String {
        validate_store(spec, store)
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn upstream_messages() {
        let store = StoreId::secret_store("team", "store");
        assert!(validate_store(&spec("example.io", "v1", "Thing"), &store).is_ok());
        let mut no_auth = spec("example.io", "v1", "Thing");
        no_auth.auth = None;
        assert_eq!(
            message(&no_auth, &store),
            "server.url requires auth or authRef when set"
        );
        assert_eq!(
            message(&spec("example.io", "", "Thing"), &store),
            "resource.version is required"
        );
        assert_eq!(
            message(&spec("example.io", "v1", ""), &store),
            "resource.kind is required"
        );
        for (group, kind) in [("", "Secret"), ("core", "secret")] {
            assert!(message(&spec(group, "v1", kind), &store).starts_with("kind \"Secret\""));
        }
        assert!(validate_store(&spec("example.io", "v1", "Secret"), &store).is_ok());
        let cluster = StoreId::cluster_secret_store("store");
        assert_eq!(
            message(&spec("example.io", "v1", "Thing"), &cluster),
            "cluster scope requires namespace"
        );
    }

    #[test]
    fn whitelist_rules_are_checked() {
        let with_rule = |rule: CrdProviderWhitelistRule| CrdProvider {
            whitelist: Some(CrdProviderWhitelist { rules: vec![rule] }),
            ..spec("example.io", "v1", "Thing")
        };
        let store = StoreId::secret_store("team", "store");
        assert_eq!(
            message(&with_rule(CrdProviderWhitelistRule::default()), &store),
            "crd: whitelist.rules[0]: whitelist rule must define name, namespace, or properties"
        );
        let bad = with_rule(CrdProviderWhitelistRule {
            name: Some("(".into()),
            ..CrdProviderWhitelistRule::default()
        });
        assert!(message(&bad, &store).starts_with("crd: invalid whitelist.rules[0].name regex"));
        let namespaced = with_rule(CrdProviderWhitelistRule {
            namespace: Some("prod".into()),
            ..CrdProviderWhitelistRule::default()
        });
        assert!(
            message(&namespaced, &store).starts_with("crd: whitelist.rules[0].namespace is not")
        );
    }

    #[test]
    fn keys_follow_the_store_kind() {
        use StoreKind::{ClusterSecretStore, SecretStore};
        let key = |name, namespace| Key { name, namespace };
        assert_eq!(parse_key(SecretStore, "db").unwrap(), key("db", None));
        assert!(parse_key(SecretStore, "ns/db").is_err());
        assert!(parse_key(SecretStore, "").is_err());
        assert_eq!(
            parse_key(ClusterSecretStore, "ns/db").unwrap(),
            key("db", Some("ns"))
        );
        assert_eq!(
            parse_key(ClusterSecretStore, "db").unwrap(),
            key("db", None)
        );
        for bad in ["/db", "ns/", "a/b/c"] {
            assert!(parse_key(ClusterSecretStore, bad).is_err(), "{bad}");
        }
    }
}
