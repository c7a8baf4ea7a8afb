//! One behaviour suite for every compiled provider, each against its real server.
//!
//! Every case runs against every harness of `support::harnesses()`; a failure names the
//! provider. Optional operations are checked only where the backend offers them, and otherwise
//! must fail with a permanent `Unsupported` error.

mod support;

use external_secrets_providers::request::{Find, PushRequest};
use external_secrets_providers::{ErrorKind, SecretValue, SharedClient, ValidationResult};

const JSON: &str = r#"{"user":"admin","pass":"s3cret"}"#;

fn text(value: SecretValue) -> String {
    String::from_utf8(value.into_bytes()).unwrap()
}

/// Pushes `value` where `harness` keeps the suite's secret `remote_key`.
fn push(harness: &dyn support::Harness, remote_key: &str, value: &str) -> PushRequest {
    PushRequest {
        remote_ref: harness.push_ref(remote_key),
        metadata: harness.push_metadata(),
        ..PushRequest::single(
            [("source".to_owned(), SecretValue::from(value))].into(),
            "source",
            remote_key,
        )
    }
}

#[tokio::test]
async fn at_least_one_provider_is_tested_when_any_is_compiled() {
    let count = support::harnesses().await.len();
    assert_eq!(
        count > 0,
        cfg!(any(
            feature = "fake",
            feature = "webhook",
            feature = "kubernetes",
            feature = "vault",
            feature = "aws",
            feature = "crd",
            feature = "gcpsm",
            feature = "azurekv",
            feature = "onepassword",
            feature = "infisical",
            feature = "akeyless",
            feature = "doppler",
            feature = "gitlab",
            feature = "delinea",
            feature = "secretserver",
            feature = "bitwardensecretsmanager",
            feature = "github"
        ))
    );
}

/// Whether `harness` reads; if not (write-only), checks that a read is refused as permanently
/// unsupported.
async fn reads(harness: &dyn support::Harness, client: &SharedClient) -> bool {
    if harness.capabilities().can_read() {
        return true;
    }
    let error = client
        .get_secret(&harness.value_ref("any"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported, "{}", harness.name());
    assert!(!error.is_temporary(), "{}", harness.name());
    false
}

#[tokio::test]
async fn get_existing_secret() {
    for harness in support::harnesses().await {
        let client = harness.client(&[("db-password", "hunter2")]).await;
        if !reads(harness.as_ref(), &client).await {
            continue;
        }
        let value = client.get_secret(&harness.value_ref("db-password")).await;
        assert_eq!(text(value.unwrap()), "hunter2", "{}", harness.name());
    }
}

#[tokio::test]
async fn get_missing_secret_is_not_found() {
    for harness in support::harnesses().await {
        let client = harness.client(&[("present", "x")]).await;
        if !reads(harness.as_ref(), &client).await {
            continue;
        }
        let error = client
            .get_secret(&harness.value_ref("absent"))
            .await
            .unwrap_err();
        assert_eq!(
            error.kind(),
            ErrorKind::NotFound,
            "{}: {error}",
            harness.name()
        );
        assert!(!error.is_temporary(), "{}", harness.name());
    }
}

#[tokio::test]
async fn get_property_of_a_json_secret() {
    for harness in support::harnesses().await {
        let client = harness.client(&[("json", JSON)]).await;
        if !reads(harness.as_ref(), &client).await {
            continue;
        }
        let value = client
            .get_secret(&harness.json_ref("json", Some("user")))
            .await;
        assert_eq!(text(value.unwrap()), "admin", "{}", harness.name());
    }
}

#[tokio::test]
async fn get_secret_map() {
    for harness in support::harnesses().await {
        let client = harness.client(&[("json", JSON)]).await;
        if !reads(harness.as_ref(), &client).await {
            continue;
        }
        let map = client
            .get_secret_map(&harness.json_ref("json", None))
            .await
            .unwrap();
        let map: Vec<(String, String)> = map.into_iter().map(|(k, v)| (k, text(v))).collect();
        assert_eq!(
            map,
            [
                ("pass".to_owned(), "s3cret".to_owned()),
                ("user".to_owned(), "admin".to_owned())
            ],
            "{}",
            harness.name()
        );
    }
}

#[tokio::test]
async fn find_by_name_regexp() {
    for harness in support::harnesses().await {
        let client = harness
            .client(&[("db-one", "1"), ("db-two", "2"), ("cache", "3")])
            .await;
        let find = Find::by_name(harness.remote_name("^db-"));
        let result = client.get_all_secrets(&find).await;
        if harness.features().find_by_name {
            let found: Vec<(String, String)> = result
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k, harness.seed_of_found(&text(v))))
                .collect();
            assert_eq!(
                found,
                [
                    (harness.found_key("db-one"), harness.found_value("1")),
                    (harness.found_key("db-two"), harness.found_value("2"))
                ],
                "{}",
                harness.name()
            );
        } else {
            let error = result.unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Unsupported, "{}", harness.name());
            assert!(!error.is_temporary());
        }
    }
}

/// Whether `harness` writes; if not, checks that a push is refused as permanently unsupported.
async fn writes(harness: &dyn support::Harness, client: &SharedClient) -> bool {
    if harness.capabilities().can_write() {
        return true;
    }
    let error = client
        .push_secret(&push(harness, "refused", "v"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unsupported, "{}", harness.name());
    assert!(!error.is_temporary(), "{}", harness.name());
    false
}

#[tokio::test]
async fn push_then_get() {
    for harness in support::harnesses().await {
        let client = harness.client(&[]).await;
        let harness = harness.as_ref();
        if !writes(harness, &client).await {
            continue;
        }
        client
            .push_secret(&push(harness, "pushed", "first"))
            .await
            .unwrap();
        client
            .push_secret(&push(harness, "pushed", "second"))
            .await
            .unwrap();
        let value = harness.read_back(&client, "pushed").await.unwrap();
        assert_eq!(text(value), "second", "{}", harness.name());
    }
}

#[tokio::test]
async fn delete_then_not_found() {
    for harness in support::harnesses().await {
        if !harness.features().delete_removes {
            continue;
        }
        let client = harness.client(&[]).await;
        let harness = harness.as_ref();
        client
            .push_secret(&push(harness, "doomed", "v"))
            .await
            .unwrap();
        client
            .delete_secret(&harness.push_ref("doomed"))
            .await
            .unwrap();
        let error = harness.read_back(&client, "doomed").await.unwrap_err();
        assert!(error.is_not_found(), "{}: {error}", harness.name());
        // Deleting what is already gone succeeds.
        client
            .delete_secret(&harness.push_ref("doomed"))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn secret_exists() {
    for harness in support::harnesses().await {
        let client = harness.client(&[("seeded", "v")]).await;
        let exists = |key: &'static str| {
            let client = client.clone();
            let remote_ref = harness.push_ref(key);
            async move { client.secret_exists(&remote_ref).await.unwrap() }
        };
        assert!(exists("seeded").await, "{}", harness.name());
        assert!(!exists("pushed").await, "{}", harness.name());
        if !writes(harness.as_ref(), &client).await {
            continue;
        }
        client
            .push_secret(&push(harness.as_ref(), "pushed", "v"))
            .await
            .unwrap();
        assert!(exists("pushed").await, "{}", harness.name());
    }
}

#[tokio::test]
async fn validate_and_capabilities() {
    for harness in support::harnesses().await {
        let client = harness.client(&[]).await;
        assert_eq!(
            client.validate().await.unwrap(),
            ValidationResult::Ready,
            "{}",
            harness.name()
        );
        assert_eq!(
            client.capabilities(),
            harness.capabilities(),
            "{}",
            harness.name()
        );
        client.close().await.unwrap();
    }
}
