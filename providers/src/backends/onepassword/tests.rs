//! Store validation with upstream's messages.

use std::collections::BTreeMap;

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{OnePasswordAuth, OnePasswordAuthSecretRef, OnePasswordProvider};

use super::OnePassword;
use crate::provider::Provider as _;
use crate::store::StoreId;

fn spec() -> OnePasswordProvider {
    OnePasswordProvider {
        auth: OnePasswordAuth {
            secret_ref: OnePasswordAuthSecretRef {
                connect_token_secret_ref: SecretKeySelector {
                    name: Some("connect".into()),
                    key: Some("token".into()),
                    namespace: None,
                },
            },
        },
        connect_host: "https://connect.example:8443".into(),
        vaults: BTreeMap::from([("prod".into(), 1), ("shared".into(), 2)]),
    }
}

fn message(spec: &OnePasswordProvider, store: &StoreId) -> String {
    OnePassword
        .validate_store(spec, store)
        .expect_err("invalid")
        .message()
        .to_owned()
}

#[test]
fn a_complete_store_is_valid() {
    let store = StoreId::secret_store("team", "op");
    OnePassword.validate_store(&spec(), &store).expect("valid");
}

#[test]
fn refusals_carry_upstreams_messages() {
    let store = StoreId::secret_store("team", "op");
    let prefix = "received invalid 1Password SecretStore resource: ";
    let mut no_name = spec();
    no_name.auth.secret_ref.connect_token_secret_ref.name = None;
    assert_eq!(
        message(&no_name, &store),
        format!(
            "{prefix}missing: spec.provider.onepassword.auth.secretRef.connectTokenSecretRef.name"
        )
    );
    let mut no_key = spec();
    no_key.auth.secret_ref.connect_token_secret_ref.key = Some(String::new());
    assert_eq!(
        message(&no_key, &store),
        format!(
            "{prefix}missing: spec.provider.onepassword.auth.secretRef.connectTokenSecretRef.key"
        )
    );
    let mut no_vaults = spec();
    no_vaults.vaults.clear();
    assert_eq!(
        message(&no_vaults, &store),
        format!("{prefix}must be at least one vault: spec.provider.onepassword.vaults")
    );
    let mut same_order = spec();
    same_order.vaults.insert("shared".into(), 1);
    assert_eq!(
        message(&same_order, &store),
        format!("{prefix}vault order numbers must be unique")
    );
    let mut bad_host = spec();
    bad_host.connect_host = "https://exa mple".into();
    assert!(message(&bad_host, &store).starts_with(&format!(
        "{prefix}unable to parse URL: spec.provider.onepassword.connectHost: "
    )));
}

#[test]
fn namespaces_follow_the_store_kind() {
    let mut other = spec();
    other.auth.secret_ref.connect_token_secret_ref.namespace = Some("other".into());
    assert!(
        message(&other, &StoreId::secret_store("team", "op")).ends_with(
            "namespace should either be empty or match the namespace of the SecretStore for a \
         namespaced SecretStore"
        )
    );
    let cluster = StoreId::cluster_secret_store("op");
    assert!(message(&spec(), &cluster).ends_with("cluster scope requires namespace"));
    OnePassword
        .validate_store(&other, &cluster)
        .expect("named namespace");
}
