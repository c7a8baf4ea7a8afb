//! `auth.jwt` (IRSA): ServiceAccount tokens of a loopback API server exchanged at moto's STS
//! (`AssumeRoleWithWebIdentity`, which moto grants for any token) for the role the
//! ServiceAccount's annotation names, and the configuration errors around it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use external_secrets_providers::credentials::{
    KubeSecret, KubeSecretSource, SecretSource, ServiceAccountToken,
};
use external_secrets_providers::{ErrorKind, ProviderError, StoreId, ValidationResult};
use serde_json::json;

use super::support::aws::{MotoServer, client};
use super::support::{NAMESPACE, cluster_with_service_account, unique_name};
use super::{remote, text, with};

/// A Kubernetes source that records the audiences of the tokens it is asked for.
struct RecordingSource {
    inner: KubeSecretSource,
    audiences: Arc<Mutex<Vec<Vec<String>>>>,
}

#[async_trait]
impl SecretSource for RecordingSource {
    async fn secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<KubeSecret>, ProviderError> {
        self.inner.secret(namespace, name).await
    }

    async fn config_map(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BTreeMap<String, String>>, ProviderError> {
        self.inner.config_map(namespace, name).await
    }

    async fn service_account_annotations(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BTreeMap<String, String>>, ProviderError> {
        self.inner
            .service_account_annotations(namespace, name)
            .await
    }

    async fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
        audiences: &[String],
        lifetime: Duration,
    ) -> Result<ServiceAccountToken, ProviderError> {
        self.audiences.lock().unwrap().push(audiences.to_vec());
        self.inner
            .service_account_token(namespace, name, audiences, lifetime)
            .await
    }
}

#[tokio::test]
async fn a_service_account_token_is_exchanged_for_the_role_its_annotation_names() {
    let server = MotoServer::shared();
    let account = server.account().await;
    let name = unique_name("irsa");
    account.create_secret(&name, "read through IRSA").await;
    let (_loopback, admin) = cluster_with_service_account(
        "eso",
        &[
            ("eks.amazonaws.com/role-arn", &account.role_arn),
            ("eks.amazonaws.com/audience", "custom.example"),
        ],
    )
    .await;
    let spec = with(
        &account.provider("SecretsManager"),
        json!({"role": null, "auth": {"jwt": {"serviceAccountRef":
            {"name": "eso", "audiences": ["extra"]}}}}),
    );
    let audiences = Arc::new(Mutex::new(Vec::new()));
    let source = RecordingSource {
        inner: KubeSecretSource::new(admin),
        audiences: audiences.clone(),
    };
    let store = StoreId::secret_store(NAMESPACE, "irsa");
    let client = client(&spec, store, Some(NAMESPACE), source, server.endpoints())
        .await
        .unwrap();

    // The secret lives in the role's account only: reading it proves the role was assumed.
    let value = client.get_secret(&remote(&name)).await.unwrap();
    assert_eq!(text(value), "read through IRSA");
    assert_eq!(client.validate().await.unwrap(), ValidationResult::Ready);
    assert_eq!(
        audiences.lock().unwrap().first(),
        Some(&vec!["custom.example".to_owned(), "extra".to_owned()])
    );
    let sessions: Vec<_> = server
        .assumed_roles()
        .into_iter()
        .filter(|role| role["role_arn"] == account.role_arn.as_str())
        .map(|role| role["session_name"].clone())
        .collect();
    assert!(
        sessions.contains(&json!("external-secrets-provider-aws")),
        "sessions of {}: {sessions:?}",
        account.role_arn
    );
}

#[tokio::test]
async fn a_service_account_without_a_role_or_missing_is_a_configuration_error() {
    let server = MotoServer::shared();
    let account = server.account().await;
    let (_loopback, admin) = cluster_with_service_account("plain", &[]).await;
    let jwt = |name: &str| {
        with(
            &account.provider("SecretsManager"),
            json!({"role": null, "auth": {"jwt": {"serviceAccountRef": {"name": name}}}}),
        )
    };
    let store = StoreId::secret_store(NAMESPACE, "irsa");
    let source = || KubeSecretSource::new(admin.clone());

    let error = client(
        &jwt("plain"),
        store.clone(),
        None,
        source(),
        server.endpoints(),
    )
    .await
    .err()
    .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert_eq!(
        error.message(),
        format!(
            "an IAM role must be associated with service account plain (namespace: {NAMESPACE})"
        )
    );

    let error = client(&jwt("absent"), store, None, source(), server.endpoints())
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), ErrorKind::InvalidConfig);
    assert!(error.is_temporary(), "it may be created later");
    assert!(
        error.message().contains("\"absent\""),
        "{}",
        error.message()
    );
}
