//! Store validation with upstream's messages, and the signing string.

use external_secrets_crds::meta::SecretKeySelector;
use external_secrets_crds::v1::{OracleAuth, OracleProvider, OracleSecretRef};

use super::signer::signing_string;
use super::validate_store;
use crate::store::StoreId;

fn selector(name: &str, key: &str, namespace: Option<&str>) -> SecretKeySelector {
    SecretKeySelector {
        name: Some(name.into()),
        key: Some(key.into()),
        namespace: namespace.map(str::to_owned),
    }
}

fn spec(configure: impl FnOnce(&mut OracleProvider)) -> OracleProvider {
    let mut spec = OracleProvider {
        region: "us-ashburn-1".into(),
        vault: "ocid1.vault.oc1..v".into(),
        auth: Some(OracleAuth {
            tenancy: "ocid1.tenancy.oc1..t".into(),
            user: "ocid1.user.oc1..u".into(),
            secret_ref: OracleSecretRef {
                privatekey: selector("oci", "privateKey", None),
                fingerprint: selector("oci", "fingerprint", None),
            },
        }),
        ..OracleProvider::default()
    };
    configure(&mut spec);
    spec
}

#[test]
fn validation_messages_are_upstreams() {
    let store = StoreId::secret_store("team", "oracle");
    let check = |spec: OracleProvider| validate_store(&spec, &store).err();
    assert_eq!(check(spec(|_| {})), None);
    assert_eq!(
        check(spec(|s| s.vault.clear())).as_deref(),
        Some("vault cannot be empty")
    );
    assert_eq!(
        check(spec(|s| s.region.clear())).as_deref(),
        Some("region cannot be empty")
    );
    assert_eq!(check(spec(|s| s.auth = None)), None);
    let auth = |change: fn(&mut OracleAuth)| {
        spec(move |s| {
            if let Some(auth) = s.auth.as_mut() {
                change(auth);
            }
        })
    };
    assert_eq!(
        check(auth(|a| a.user.clear())).as_deref(),
        Some("user cannot be empty")
    );
    assert_eq!(
        check(auth(|a| a.tenancy.clear())).as_deref(),
        Some("tenant cannot be empty")
    );
    assert_eq!(
        check(auth(|a| a.secret_ref.privatekey.name = None)).as_deref(),
        Some("privateKey.name cannot be empty")
    );
    assert_eq!(
        check(auth(|a| a.secret_ref.privatekey.key = None)).as_deref(),
        Some("privateKey.key cannot be empty")
    );
    assert_eq!(
        check(auth(|a| a.secret_ref.fingerprint.name = None)).as_deref(),
        Some("fingerprint.name cannot be empty")
    );
    assert_eq!(
        check(auth(|a| a.secret_ref.fingerprint.key = None)).as_deref(),
        Some("fingerprint.key cannot be empty")
    );
    assert!(
        check(auth(
            |a| a.secret_ref.fingerprint.namespace = Some("other".into())
        ))
        .unwrap()
        .starts_with("namespace should either be empty")
    );
    let cluster = StoreId::cluster_secret_store("oracle");
    assert_eq!(
        validate_store(&spec(|_| {}), &cluster).err().as_deref(),
        Some("cluster scope requires namespace")
    );
}

#[test]
fn the_signing_string_is_one_line_per_header() {
    let values = [
        ("date", "Thu, 05 Jan 2014 21:31:40 GMT".to_owned()),
        ("(request-target)", "get /20180608/vaults/v".to_owned()),
        ("host", "kms.us-ashburn-1.oraclecloud.com".to_owned()),
    ];
    assert_eq!(
        signing_string(&values),
        "date: Thu, 05 Jan 2014 21:31:40 GMT\n(request-target): get /20180608/vaults/v\nhost: kms.us-ashburn-1.oraclecloud.com"
    );
}
