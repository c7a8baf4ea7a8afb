//! The `gcp` auth method's IAM login with a service-account key from a Secret.
//!
//! The OpenBao binary installed here has no `gcp` auth plugin (`bao auth enable gcp`: "plugin
//! not found in the catalog"), so the login endpoint is OpenBao's `jwt` auth method mounted
//! where the `gcp` method would be, configured as the gcp method's IAM login checks the same
//! request (`POST auth/<path>/login` with `role` and an RS256 JWT): the key's public half as
//! validation key, `aud` bound to `vault/<role>`, `sub` bound to the service account, `exp`
//! checked. Not exercised: the gcp plugin's lookup of the key at Google and its 15-minute cap
//! on `exp`.

use external_secrets_crds::v1::{VaultAuth, VaultGcpAuth};
use external_secrets_providers::ErrorKind;
use serde_json::json;

use super::auth::{CREDENTIALS, credentials, read_db, readable_mount};
use super::client;
use super::support::gcp::{ACCOUNT, key_file};
use super::support::unique_name;
use super::support::vault::BaoServer;

/// The test key's public half, as PEM.
fn public_key_pem() -> String {
    let key: serde_json::Value =
        serde_json::from_str(&key_file("https://oauth2.googleapis.com/token")).unwrap();
    let private = key["private_key"].as_str().unwrap();
    rcgen::KeyPair::from_pem(private).unwrap().public_key_pem()
}

#[tokio::test]
async fn gcp_logs_in_with_a_jwt_signed_by_the_service_account_key() {
    let server = BaoServer::shared();
    let (mount, policy) = readable_mount(server).await;
    let path = unique_name("gcp");
    server.enable_auth(&path, "jwt").await;
    server
        .write(
            &format!("auth/{path}/config"),
            json!({"jwt_validation_pubkeys": [public_key_pem()]}),
        )
        .await;
    for (role, subject) in [
        ("eso", ACCOUNT),
        ("other", "someone@else.iam.gserviceaccount.com"),
    ] {
        server
            .write(
                &format!("auth/{path}/role/{role}"),
                json!({"role_type": "jwt", "user_claim": "sub",
                    "bound_audiences": [format!("vault/{role}")], "bound_subject": subject,
                    "token_policies": [policy]}),
            )
            .await;
    }
    let gcp = |role: &str| VaultAuth {
        gcp: Some(VaultGcpAuth {
            path: path.clone(),
            role: role.to_owned(),
            secret_ref: Some(
                serde_json::from_value(json!({"secretAccessKeySecretRef":
                    {"name": CREDENTIALS, "key": "key.json"}}))
                .unwrap(),
            ),
            ..VaultGcpAuth::default()
        }),
        ..VaultAuth::default()
    };
    let key = key_file("https://oauth2.googleapis.com/token");
    let logged_in = client(
        server.provider(&mount, Some(gcp("eso"))),
        credentials(&[("key.json", &key)]),
    )
    .await
    .unwrap();
    assert_eq!(read_db(&logged_in).await.unwrap(), "v");

    // A role bound to another service account refuses the JWT.
    let error = client(
        server.provider(&mount, Some(gcp("other"))),
        credentials(&[("key.json", &key)]),
    )
    .await
    .err()
    .expect("refused");
    assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    assert!(
        error.message().starts_with(&format!(
            "cannot log in to vault with gcp auth at auth/{path}/login"
        )),
        "{error}"
    );

    // Without the key Secret the login is not attempted.
    let error = client(server.provider(&mount, Some(gcp("eso"))), credentials(&[]))
        .await
        .err()
        .expect("refused");
    assert!(
        error
            .message()
            .starts_with("failed to set up GCP authentication"),
        "{error}"
    );
}
