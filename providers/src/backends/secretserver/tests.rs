//! Store validation with upstream's messages.

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{SecretServerProvider, SecretServerProviderRef};

use super::{SecretServer, depends_on_namespace};
use crate::client::Capabilities;
use crate::provider::Provider as _;
use crate::store::StoreId;

fn value(text: &str) -> Option<SecretServerProviderRef> {
    Some(SecretServerProviderRef {
        value: Some(text.into()),
        secret_ref: None,
    })
}

fn reference(name: &str, key: &str, namespace: Option<&str>) -> Option<SecretServerProviderRef> {
    Some(SecretServerProviderRef {
        value: None,
        secret_ref: Some(SecretKeySelector {
            name: Some(name.into()),
            key: Some(key.into()),
            namespace: namespace.map(str::to_owned),
        }),
    })
}

fn spec() -> SecretServerProvider {
    SecretServerProvider {
        username: value("user"),
        password: reference("tss", "password", None),
        server_url: "https://tss.example.com/SecretServer".into(),
        ..SecretServerProvider::default()
    }
}

fn message(spec: &SecretServerProvider) -> String {
    SecretServer
        .validate_store(spec, &StoreId::secret_store("team", "tss"))
        .expect_err("invalid")
        .message()
        .to_owned()
}

#[test]
fn password_and_token_stores_are_valid_and_read_write() {
    let store = StoreId::secret_store("team", "tss");
    SecretServer.validate_store(&spec(), &store).expect("valid");
    let token_only = SecretServerProvider {
        token: reference("tss", "token", None),
        username: None,
        password: None,
        ..spec()
    };
    SecretServer
        .validate_store(&token_only, &store)
        .expect("valid");
    // A token takes precedence: broken username/password are not looked at.
    let token_first = SecretServerProvider {
        token: value("t"),
        username: value(""),
        ..spec()
    };
    SecretServer
        .validate_store(&token_first, &store)
        .expect("valid");
    assert_eq!(SecretServer.capabilities(&spec()), Capabilities::ReadWrite);
}

#[test]
fn refusals_carry_upstreams_messages() {
    let cases = [
        (
            SecretServerProvider {
                server_url: String::new(),
                ..spec()
            },
            "serverURL must be set",
        ),
        (
            SecretServerProvider {
                username: None,
                ..spec()
            },
            "username must not be empty",
        ),
        (
            SecretServerProvider {
                password: None,
                ..spec()
            },
            "password must be set",
        ),
        (
            SecretServerProvider {
                username: value(""),
                ..spec()
            },
            "must specify either value or reference",
        ),
        (
            SecretServerProvider {
                token: Some(SecretServerProviderRef {
                    value: Some("t".into()),
                    secret_ref: reference("a", "b", None).and_then(|r| r.secret_ref),
                }),
                ..spec()
            },
            "cannot specify both value and reference",
        ),
        (
            SecretServerProvider {
                password: reference("", "password", None),
                ..spec()
            },
            "must specify a secret name",
        ),
        (
            SecretServerProvider {
                password: reference("tss", "", None),
                ..spec()
            },
            "must specify a secret key",
        ),
        (
            SecretServerProvider {
                password: reference("tss", "password", Some("other")),
                ..spec()
            },
            "namespace should either be empty or match the namespace of the SecretStore for a \
             namespaced SecretStore",
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(message(&spec), expected);
    }
}

#[test]
fn only_used_references_without_namespace_depend_on_it() {
    assert!(depends_on_namespace(&spec()));
    let token = SecretServerProvider {
        token: reference("tss", "token", Some("ops")),
        ..spec()
    };
    assert!(!depends_on_namespace(&token));
    let inline = SecretServerProvider {
        password: value("p"),
        ..spec()
    };
    assert!(!depends_on_namespace(&inline));
}
