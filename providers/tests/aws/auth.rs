//! Credentials: static keys from Secrets (with the referent rules), roles assumed through STS
//! (external id, session name, chains of `additionalRoles`), session tags, and what this build
//! refuses.

use external_secrets_providers::credentials::MemorySecretSource;
use external_secrets_providers::{ErrorKind, StoreId, ValidationResult};
use serde_json::json;

use super::stub::StubEndpoint;
use super::support::NAMESPACE;
use super::support::aws::{KEYS_SECRET, MotoServer, client, keys};
use super::{remote, text, with};

#[tokio::test]
async fn static_keys_without_a_role_act_as_themselves() {
    let server = MotoServer::shared();
    let account = server.default_account().await;
    let name = format!("static-{}", std::process::id());
    account.create_secret(&name, "from static keys").await;
    let provider = account.provider("SecretsManager");
    let spec = with(&provider, json!({"role": null}));
    let client = account.client(&spec).await.unwrap();
    let value = client.get_secret(&remote(&name)).await.unwrap();
    assert_eq!(text(value), "from static keys");
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);
}

#[tokio::test]
async fn a_session_token_reference_must_resolve() {
    let server = MotoServer::shared();
    let account = server.account().await;
    let mut spec = account.provider("SecretsManager");
    spec.auth
        .as_mut()
        .unwrap()
        .secret_ref
        .as_mut()
        .unwrap()
        .session_token_secret_ref =
        serde_json::from_value(json!({"name": KEYS_SECRET, "key": "session-token"})).unwrap();
    let error = account.client(&spec).await.err().unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(error.is_temporary(), "the key may be added later");
    assert_eq!(
        error.message(),
        r#"could not fetch SessionToken secret: cannot find secret data for key: "session-token""#
    );
    let with_token = keys().with_secret(
        NAMESPACE,
        KEYS_SECRET,
        &[],
        &[
            ("access-key", "AKID"),
            ("secret-key", "s"),
            ("session-token", "t"),
        ],
    );
    let store = StoreId::secret_store(NAMESPACE, "with-token");
    let client = client(
        &spec,
        store,
        Some(NAMESPACE),
        with_token,
        server.endpoints(),
    )
    .await
    .unwrap();
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);
}

#[tokio::test]
async fn a_missing_keys_secret_fails_the_client_with_a_retryable_config_error() {
    let server = MotoServer::shared();
    let account = server.account().await;
    let spec = account.provider("SecretsManager");
    let store = StoreId::secret_store(NAMESPACE, "no-keys");
    let error = client(
        &spec,
        store,
        Some(NAMESPACE),
        MemorySecretSource::default(),
        server.endpoints(),
    )
    .await
    .err()
    .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(error.is_temporary());
    assert_eq!(
        error.message(),
        r#"could not fetch SecretAccessKey secret: cannot get Kubernetes secret "aws-keys" from namespace "behaviour": not found"#
    );
}

#[tokio::test]
async fn the_role_is_assumed_with_the_external_id_and_the_session_name() {
    let server = MotoServer::shared();
    let account = server.account().await;
    account.create_secret("db", "in the role's account").await;
    let spec = with(
        &account.provider("SecretsManager"),
        json!({"externalID": "ext-42"}),
    );
    let client = account.client(&spec).await.unwrap();
    for _ in 0..2 {
        let value = client.get_secret(&remote("db")).await.unwrap();
        assert_eq!(text(value), "in the role's account");
    }
    let assumed: Vec<_> = server
        .assumed_roles()
        .into_iter()
        .filter(|role| role["role_arn"] == account.role_arn.as_str())
        .filter(|role| role["session_name"] == "external-secrets-provider-aws")
        .collect();
    assert_eq!(assumed.len(), 1, "one AssumeRole, cached for later calls");
    assert_eq!(assumed[0]["external_id"], "ext-42");
    assert_eq!(assumed[0]["account_id"], account.id.as_str());
}

#[tokio::test]
async fn additional_roles_are_assumed_before_the_role() {
    let server = MotoServer::shared();
    let first = server.account().await;
    let second = server.account().await;
    let last = server.account().await;
    for (account, value) in [(&first, "first"), (&second, "second"), (&last, "last")] {
        account.create_secret("where", value).await;
    }
    let spec = with(
        &last.provider("SecretsManager"),
        json!({"additionalRoles": [first.role_arn, second.role_arn]}),
    );
    let client = last.client(&spec).await.unwrap();
    let value = client.get_secret(&remote("where")).await.unwrap();
    assert_eq!(text(value), "last");
    let assumed: Vec<String> = server
        .assumed_roles()
        .into_iter()
        .filter(|role| role["session_name"] == "external-secrets-provider-aws")
        .filter_map(|role| role["role_arn"].as_str().map(str::to_owned))
        .collect();
    for account in [&first, &second, &last] {
        assert!(assumed.contains(&account.role_arn), "{}", account.role_arn);
    }
}

#[tokio::test]
async fn session_tags_external_id_and_transitive_keys_reach_sts() {
    let server = MotoServer::shared();
    let sts = StubEndpoint::sts_assuming_any_role().await;
    let account = server.account().await;
    let spec = with(
        &account.provider("SecretsManager"),
        json!({"externalID": "ext", "sessionTags": [{"key": "team", "value": "payments"}],
               "transitiveTagKeys": ["team"]}),
    );
    let mut endpoints = server.endpoints();
    endpoints.sts = Some(sts.url.clone());
    let store = StoreId::secret_store(NAMESPACE, "tagged");
    let client = client(&spec, store, Some(NAMESPACE), keys(), endpoints)
        .await
        .unwrap();
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);
    let forms = sts.forms();
    assert_eq!(forms.len(), 1);
    let field = |name: &str| forms[0].get(name).map(String::as_str);
    assert_eq!(field("Action"), Some("AssumeRole"));
    assert_eq!(field("RoleArn"), Some(account.role_arn.as_str()));
    assert_eq!(
        field("RoleSessionName"),
        Some("external-secrets-provider-aws")
    );
    assert_eq!(field("DurationSeconds"), Some("900"));
    assert_eq!(field("ExternalId"), Some("ext"));
    assert_eq!(field("Tags.member.1.Key"), Some("team"));
    assert_eq!(field("Tags.member.1.Value"), Some("payments"));
    assert_eq!(field("TransitiveTagKeys.member.1"), Some("team"));
}

#[tokio::test]
async fn the_simple_session_tags_policy_names_the_store_and_the_caller() {
    let server = MotoServer::shared();
    let sts = StubEndpoint::sts_assuming_any_role().await;
    let account = server.account().await;
    let spec = with(
        &account.provider("SecretsManager"),
        json!({"sessionTagsPolicy": "Simple"}),
    );
    let mut endpoints = server.endpoints();
    endpoints.sts = Some(sts.url.clone());
    let store = StoreId::secret_store(NAMESPACE, "simple-tags");
    let client = client(&spec, store, Some(NAMESPACE), keys(), endpoints)
        .await
        .unwrap();
    client.validate().await.unwrap();
    let form = &sts.forms()[0];
    let tags: Vec<(&str, &str)> = (1..=3)
        .map(|index| {
            let key = &form[&format!("Tags.member.{index}.Key")];
            let value = &form[&format!("Tags.member.{index}.Value")];
            (key.as_str(), value.as_str())
        })
        .collect();
    assert_eq!(
        tags,
        [
            ("esoNamespace", NAMESPACE),
            ("esoStoreKind", "SecretStore"),
            ("esoStoreName", "simple-tags"),
        ]
    );
}

#[tokio::test]
async fn a_cluster_store_reads_keys_in_the_callers_namespace_or_waits_for_one() {
    let server = MotoServer::shared();
    let account = server.account().await;
    account.create_secret("db", "v").await;
    let spec = account.provider("SecretsManager");
    let store = StoreId::cluster_secret_store("shared");

    let validating = client(&spec, store.clone(), None, keys(), server.endpoints())
        .await
        .unwrap();
    assert_eq!(
        validating.validate().await.unwrap(),
        ValidationResult::Unknown
    );
    let error = validating.get_secret(&remote("db")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);

    let serving = client(&spec, store, Some(NAMESPACE), keys(), server.endpoints())
        .await
        .unwrap();
    assert_eq!(text(serving.get_secret(&remote("db")).await.unwrap()), "v");
}

#[tokio::test]
async fn what_this_build_does_not_offer_is_unsupported() {
    let server = MotoServer::shared();
    let account = server.account().await;
    let acm = with(
        &account.provider("SecretsManager"),
        json!({"service": "CertificateManager"}),
    );
    let error = account.client(&acm).await.err().unwrap();
    assert_eq!(error.kind(), ErrorKind::Unsupported);
    assert!(!error.is_temporary());
}
