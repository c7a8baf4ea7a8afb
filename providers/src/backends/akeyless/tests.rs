//! Store validation with upstream's messages.

use external_secrets_crds::v1::AkeylessProvider;
use serde_json::json;

use super::Akeyless;
use crate::provider::Provider as _;
use crate::store::StoreId;

fn spec(value: serde_json::Value) -> AkeylessProvider {
    serde_json::from_value(value).expect("an akeyless spec")
}

fn access_key(extra: serde_json::Value) -> AkeylessProvider {
    let mut base = json!({
        "akeylessGWApiURL": "https://gw.example:8000",
        "authSecretRef": {"secretRef": {
            "accessID": {"name": "akeyless", "key": "id"},
            "accessType": {"name": "akeyless", "key": "type"},
            "accessTypeParam": {"name": "akeyless", "key": "key"},
        }},
    });
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    spec(base)
}

fn message(spec: &AkeylessProvider, store: &StoreId) -> String {
    Akeyless
        .validate_store(spec, store)
        .expect_err("invalid")
        .message()
        .to_owned()
}

#[test]
fn access_key_stores_are_checked_as_upstream() {
    let store = StoreId::secret_store("team", "akeyless");
    Akeyless
        .validate_store(&access_key(json!({})), &store)
        .expect("valid");
    let bad_url = access_key(json!({"akeylessGWApiURL": "not a url"}));
    assert_eq!(message(&bad_url, &store), "invalid akeyless GW API URL");
    let no_name = access_key(json!({"authSecretRef": {"secretRef": {"accessID": {"key": "id"}}}}));
    assert_eq!(message(&no_name, &store), "missing akeyless accessID name");
    let no_key = access_key(json!({"authSecretRef": {"secretRef": {"accessID": {"name": "a"}}}}));
    assert_eq!(message(&no_key, &store), "missing akeyless accessID key");
    let cluster = StoreId::cluster_secret_store("akeyless");
    assert_eq!(
        message(&access_key(json!({})), &cluster),
        "cluster scope requires namespace"
    );
    let other = access_key(json!({"authSecretRef": {"secretRef": {
        "accessID": {"name": "a", "key": "id", "namespace": "other"},
    }}}));
    assert!(message(&other, &store).starts_with("namespace should either be empty"));
}

#[test]
fn kubernetes_auth_needs_an_access_id_and_a_config_name() {
    let store = StoreId::secret_store("team", "akeyless");
    let kubernetes = |auth: serde_json::Value| {
        spec(json!({"akeylessGWApiURL": "", "authSecretRef": {"kubernetesAuth": auth}}))
    };
    Akeyless
        .validate_store(
            &kubernetes(json!({"accessID": "p-123", "k8sConfName": "cluster"})),
            &store,
        )
        .expect("valid");
    assert_eq!(
        message(
            &kubernetes(json!({"accessID": "", "k8sConfName": "c"})),
            &store
        ),
        "missing kubernetes auth-method access-id"
    );
    assert_eq!(
        message(
            &kubernetes(json!({"accessID": "p-1", "k8sConfName": ""})),
            &store
        ),
        "missing kubernetes config name"
    );
    let other_account = kubernetes(json!({
        "accessID": "p-1", "k8sConfName": "c",
        "serviceAccountRef": {"name": "sa", "namespace": "other"},
    }));
    assert!(
        message(&other_account, &store).starts_with("invalid Auth.Kubernetes.ServiceAccountRef: ")
    );
}
