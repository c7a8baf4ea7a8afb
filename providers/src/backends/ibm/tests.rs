//! Store validation with upstream's messages, and key parsing.

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{IbmAuth, IbmAuthContainerAuth, IbmAuthSecretRef, IbmProvider};

use super::client::Reference;
use super::validate_store;
use crate::store::StoreId;

fn api_key(name: &str, key: &str, namespace: Option<&str>) -> IbmAuthSecretRef {
    IbmAuthSecretRef {
        secret_api_key_secret_ref: Some(SecretKeySelector {
            name: Some(name.into()),
            key: Some(key.into()),
            namespace: namespace.map(str::to_owned),
        }),
        iam_endpoint: None,
    }
}

fn container(profile: &str) -> IbmAuthContainerAuth {
    IbmAuthContainerAuth {
        profile: profile.into(),
        token_location: None,
        iam_endpoint: None,
    }
}

fn spec(
    url: Option<&str>,
    secret_ref: Option<IbmAuthSecretRef>,
    container_auth: Option<IbmAuthContainerAuth>,
) -> IbmProvider {
    IbmProvider {
        service_url: url.map(str::to_owned),
        auth: IbmAuth {
            secret_ref,
            container_auth,
        },
    }
}

#[test]
fn validation_messages_are_upstreams() {
    let store = StoreId::secret_store("team", "ibm");
    let url = Some("https://sm.example");
    let check = |spec: IbmProvider| validate_store(&spec, &store).err();
    assert_eq!(
        check(spec(None, Some(api_key("a", "b", None)), None)).as_deref(),
        Some("serviceURL is required")
    );
    assert_eq!(
        check(spec(url, None, None)).as_deref(),
        Some("missing auth method")
    );
    assert_eq!(
        check(spec(
            url,
            Some(api_key("a", "b", None)),
            Some(container("p"))
        ))
        .as_deref(),
        Some("too many auth methods defined")
    );
    assert_eq!(
        check(spec(url, None, Some(container("")))).as_deref(),
        Some("container auth profile cannot be empty")
    );
    assert_eq!(check(spec(url, None, Some(container("p")))), None);
    assert_eq!(
        check(spec(url, Some(api_key("", "b", None)), None)).as_deref(),
        Some("secretAPIKey.name cannot be empty")
    );
    assert_eq!(
        check(spec(url, Some(api_key("a", "", None)), None)).as_deref(),
        Some("secretAPIKey.key cannot be empty")
    );
    assert!(
        check(spec(url, Some(api_key("a", "b", Some("other"))), None))
            .unwrap()
            .starts_with("namespace should either be empty")
    );
    assert_eq!(check(spec(url, Some(api_key("a", "b", None)), None)), None);
    let cluster = StoreId::cluster_secret_store("ibm");
    let without_namespace = spec(url, Some(api_key("a", "b", None)), None);
    assert_eq!(
        validate_store(&without_namespace, &cluster)
            .err()
            .as_deref(),
        Some("cluster scope requires namespace")
    );
}

#[test]
fn keys_split_into_group_type_and_name() {
    let parse = Reference::parse;
    assert_eq!(
        parse("db"),
        Reference {
            group: "",
            secret_type: "arbitrary",
            name: "db"
        }
    );
    assert_eq!(
        parse("kv/db"),
        Reference {
            group: "",
            secret_type: "kv",
            name: "db"
        }
    );
    assert_eq!(
        parse("team/username_password/db"),
        Reference {
            group: "team",
            secret_type: "username_password",
            name: "db"
        }
    );
    assert_eq!(parse("a/b/c/d").name, "a/b/c/d");
    assert_eq!(parse("a/b/c/d").secret_type, "arbitrary");
}
