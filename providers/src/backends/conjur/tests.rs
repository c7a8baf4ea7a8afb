//! Store validation, with upstream's messages (`validate_test.go`).

use external_secrets_crds::meta::{SecretKeySelector, ServiceAccountSelector};
use external_secrets_crds::v1::{ConjurApiKey, ConjurAuth, ConjurCert, ConjurJwt, ConjurProvider};

use super::validate_store;
use crate::store::StoreId;

fn selector(name: &str, namespace: Option<&str>) -> SecretKeySelector {
    SecretKeySelector {
        name: Some(name.into()),
        key: Some("k".into()),
        namespace: namespace.map(str::to_owned),
    }
}

fn api_key() -> ConjurApiKey {
    ConjurApiKey {
        account: "acme".into(),
        user_ref: selector("user", None),
        api_key_ref: selector("key", None),
    }
}

fn jwt() -> ConjurJwt {
    ConjurJwt {
        account: "acme".into(),
        service_id: "k8s".into(),
        secret_ref: Some(selector("jwt", None)),
        ..ConjurJwt::default()
    }
}

fn cert() -> ConjurCert {
    ConjurCert {
        account: "acme".into(),
        service_id: "certs".into(),
        client_cert_ref: selector("tls", None),
        client_key_ref: selector("tls", None),
        ..ConjurCert::default()
    }
}

fn spec(auth: ConjurAuth) -> ConjurProvider {
    ConjurProvider {
        url: "https://conjur.example.com".into(),
        auth,
        ..ConjurProvider::default()
    }
}

fn check(provider: &ConjurProvider) -> Result<(), String> {
    validate_store(provider, &StoreId::secret_store("team", "store"))
}

#[test]
fn each_method_is_accepted_when_complete() {
    for auth in [
        ConjurAuth {
            apikey: Some(api_key()),
            ..ConjurAuth::default()
        },
        ConjurAuth {
            jwt: Some(jwt()),
            ..ConjurAuth::default()
        },
        ConjurAuth {
            cert: Some(cert()),
            ..ConjurAuth::default()
        },
    ] {
        assert_eq!(check(&spec(auth)), Ok(()));
    }
}

#[test]
fn url_and_method_count_are_checked_first() {
    let mut no_url = spec(ConjurAuth {
        apikey: Some(api_key()),
        ..ConjurAuth::default()
    });
    no_url.url.clear();
    assert_eq!(check(&no_url), Err("conjur URL cannot be empty".into()));
    let exactly_one = Err("must specify exactly one Auth.* method".to_owned());
    assert_eq!(check(&spec(ConjurAuth::default())), exactly_one);
    let two = ConjurAuth {
        apikey: Some(api_key()),
        jwt: Some(jwt()),
        cert: None,
    };
    assert_eq!(check(&spec(two)), exactly_one);
}

#[test]
fn missing_fields_are_named_as_upstream() {
    let apikey = |edit: fn(&mut ConjurApiKey)| {
        let mut auth = api_key();
        edit(&mut auth);
        check(&spec(ConjurAuth {
            apikey: Some(auth),
            ..ConjurAuth::default()
        }))
    };
    assert_eq!(
        apikey(|auth| auth.account.clear()),
        Err("missing Auth.ApiKey.Account".into())
    );
    let jwt = |edit: fn(&mut ConjurJwt)| {
        let mut auth = jwt();
        edit(&mut auth);
        check(&spec(ConjurAuth {
            jwt: Some(auth),
            ..ConjurAuth::default()
        }))
    };
    assert_eq!(
        jwt(|auth| auth.account.clear()),
        Err("missing Auth.Jwt.Account".into())
    );
    assert_eq!(
        jwt(|auth| auth.service_id.clear()),
        Err("missing Auth.Jwt.ServiceID".into())
    );
    assert_eq!(
        jwt(|auth| auth.secret_ref = None),
        Err("must specify Auth.Jwt.SecretRef or Auth.Jwt.ServiceAccountRef".into())
    );
    let cert = |edit: fn(&mut ConjurCert)| {
        let mut auth = cert();
        edit(&mut auth);
        check(&spec(ConjurAuth {
            cert: Some(auth),
            ..ConjurAuth::default()
        }))
    };
    assert_eq!(
        cert(|auth| auth.account.clear()),
        Err("missing Auth.Cert.Account".into())
    );
    assert_eq!(
        cert(|auth| auth.service_id.clear()),
        Err("missing Auth.Cert.ServiceID".into())
    );
    assert_eq!(
        cert(|auth| auth.client_cert_ref.name = None),
        Err("missing Auth.Cert.ClientCertRef.Name".into())
    );
    assert_eq!(
        cert(|auth| auth.client_key_ref.name = Some(String::new())),
        Err("missing Auth.Cert.ClientKeyRef.Name".into())
    );
}

#[test]
fn references_follow_the_referent_namespace_rules() {
    let foreign = "invalid Auth.Apikey.ApiKeyRef: namespace should either be empty or match the \
                   namespace of the SecretStore for a namespaced SecretStore";
    let mut auth = api_key();
    auth.api_key_ref = selector("key", Some("other"));
    let provider = spec(ConjurAuth {
        apikey: Some(auth),
        ..ConjurAuth::default()
    });
    assert_eq!(check(&provider), Err(foreign.into()));
    // A ClusterSecretStore may name any namespace, or none (the caller's).
    let cluster = StoreId::cluster_secret_store("store");
    assert_eq!(validate_store(&provider, &cluster), Ok(()));

    let mut auth = jwt();
    auth.service_account_ref = Some(ServiceAccountSelector {
        name: "reader".into(),
        namespace: Some("other".into()),
        audiences: vec!["conjur".into()],
    });
    let provider = spec(ConjurAuth {
        jwt: Some(auth),
        ..ConjurAuth::default()
    });
    let error = check(&provider).unwrap_err();
    assert!(
        error.starts_with("invalid Auth.Jwt.ServiceAccountRef: namespace should"),
        "{error}"
    );
    assert_eq!(validate_store(&provider, &cluster), Ok(()));
}
