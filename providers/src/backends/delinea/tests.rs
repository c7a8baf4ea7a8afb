//! Store validation with upstream's messages.

use external_secrets_crds::meta::{SecretKeySelector, ValueOrSecretRef};
use external_secrets_crds::v1::DelineaProvider;

use super::Delinea;
use crate::client::Capabilities;
use crate::provider::Provider as _;
use crate::store::StoreId;

fn value(text: &str) -> ValueOrSecretRef {
    ValueOrSecretRef {
        value: Some(text.into()),
        secret_ref: None,
    }
}

fn reference(name: &str, key: &str, namespace: Option<&str>) -> ValueOrSecretRef {
    ValueOrSecretRef {
        value: None,
        secret_ref: Some(SecretKeySelector {
            name: Some(name.into()),
            key: Some(key.into()),
            namespace: namespace.map(str::to_owned),
        }),
    }
}

fn spec() -> DelineaProvider {
    DelineaProvider {
        client_id: value("client"),
        client_secret: reference("dsv", "secret", None),
        tenant: "acme".into(),
        ..DelineaProvider::default()
    }
}

fn message(spec: &DelineaProvider) -> String {
    Delinea
        .validate_store(spec, &StoreId::secret_store("team", "dsv"))
        .expect_err("invalid")
        .message()
        .to_owned()
}

#[test]
fn a_complete_store_is_valid_and_read_only() {
    Delinea
        .validate_store(&spec(), &StoreId::secret_store("team", "dsv"))
        .expect("valid");
    // A ClusterSecretStore's reference may omit the namespace at admission (upstream checks
    // it when the client is built).
    Delinea
        .validate_store(&spec(), &StoreId::cluster_secret_store("dsv"))
        .expect("valid");
    assert_eq!(Delinea.capabilities(&spec()), Capabilities::ReadOnly);
}

#[test]
fn refusals_carry_upstreams_messages() {
    let no_tenant = DelineaProvider {
        tenant: String::new(),
        ..spec()
    };
    assert_eq!(message(&no_tenant), "tenant must not be empty");
    let neither = DelineaProvider {
        client_id: ValueOrSecretRef::default(),
        ..spec()
    };
    assert_eq!(message(&neither), "must specify either value or reference");
    let mut both = spec();
    both.client_secret.value = Some("inline".into());
    assert_eq!(message(&both), "cannot specify both value and reference");
    let no_name = DelineaProvider {
        client_secret: reference("", "secret", None),
        ..spec()
    };
    assert_eq!(message(&no_name), "must specify a secret name");
    let no_key = DelineaProvider {
        client_secret: reference("dsv", "", None),
        ..spec()
    };
    assert_eq!(message(&no_key), "must specify a secret key");
    let elsewhere = DelineaProvider {
        client_secret: reference("dsv", "secret", Some("other")),
        ..spec()
    };
    assert_eq!(
        message(&elsewhere),
        "namespace should either be empty or match the namespace of the SecretStore for a \
         namespaced SecretStore"
    );
}
