//! `spec.provider.aws` checked statically (upstream's `ValidateStore`): the service, the region,
//! the Secrets Manager deletion settings, and whether the credential references follow the store
//! kind's namespace rules.

use external_secrets_crds::v1::{AwsAuth, AwsProvider, AwsServiceType, SecretsManager};

use crate::error::{ProviderError, Result};
use crate::store::{StoreId, StoreKind};

/// The AWS API a store reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Service {
    /// `service: SecretsManager`.
    SecretsManager,
    /// `service: ParameterStore`.
    ParameterStore,
}

impl Service {
    /// The service `spec` configures, if this build offers it.
    pub(super) fn of(spec: &AwsProvider) -> Result<Self> {
        match spec.service {
            AwsServiceType::SecretsManager => Ok(Service::SecretsManager),
            AwsServiceType::ParameterStore => Ok(Service::ParameterStore),
            AwsServiceType::CertificateManager => Err(ProviderError::unsupported(
                "AWS service CertificateManager is not supported by this build",
            )),
        }
    }
}

/// How a Secrets Manager secret is deleted (store `secretsManager`): upstream's
/// `DeleteSecretInput` fields, checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Deletion {
    /// `forceDeleteWithoutRecovery`.
    pub force_without_recovery: bool,
    /// `recoveryWindowInDays`, when set to something other than 0.
    pub recovery_window_in_days: Option<i64>,
}

impl Deletion {
    /// The deletion settings of `settings`, with upstream's checks and messages.
    pub(super) fn of(settings: Option<&SecretsManager>) -> Result<Self> {
        let Some(settings) = settings else {
            return Ok(Self::default());
        };
        let force_without_recovery = settings.force_delete_without_recovery.unwrap_or(false);
        let recovery_window_in_days = settings.recovery_window_in_days.filter(|days| *days != 0);
        let invalid = |detail: &str| {
            ProviderError::invalid_config(format!(
                "invalid SecretsManager settings: invalid DeleteSecretInput: {detail}"
            ))
        };
        if let Some(days) = recovery_window_in_days {
            if !(7..=30).contains(&days) {
                return Err(invalid(
                    "RecoveryWindowInDays must be between 7 and 30 days",
                ));
            }
            if force_without_recovery {
                return Err(invalid(
                    "ForceDeleteWithoutRecovery conflicts with RecoveryWindowInDays",
                ));
            }
        }
        Ok(Self {
            force_without_recovery,
            recovery_window_in_days,
        })
    }
}

/// Checks `spec` statically, with upstream's messages.
pub fn validate_store(spec: &AwsProvider, store: &StoreId) -> Result<()> {
    Service::of(spec)?;
    validate_region(&spec.region)?;
    Deletion::of(spec.secrets_manager.as_ref())?;
    let Some(auth) = &spec.auth else {
        return Ok(());
    };
    if let Some(secret_ref) = &auth.secret_ref {
        let access_key_id = secret_ref.access_key_id_secret_ref.as_ref();
        let secret_access_key = secret_ref.secret_access_key_secret_ref.as_ref();
        for (field, selector) in [
            ("Auth.SecretRef.AccessKeyID", access_key_id),
            ("Auth.SecretRef.SecretAccessKey", secret_access_key),
        ] {
            let selector = selector.ok_or_else(|| {
                ProviderError::invalid_config(format!("invalid {field}: it must be set"))
            })?;
            check_namespace(field, selector.namespace.as_deref(), store)?;
        }
        if let Some(session_token) = &secret_ref.session_token_secret_ref {
            let namespace = session_token.namespace.as_deref();
            check_namespace("Auth.SecretRef.SessionToken", namespace, store)?;
        }
    }
    if let Some(account) = auth
        .jwt
        .as_ref()
        .and_then(|jwt| jwt.service_account_ref.as_ref())
    {
        let namespace = account.namespace.as_deref();
        check_namespace("Auth.JWT.ServiceAccountRef", namespace, store)?;
    }
    Ok(())
}

/// Whether a ClusterSecretStore's credentials resolve in the namespace of the object using it
/// (upstream's `IsReferentSpec`): a selected credential names no namespace.
pub(super) fn is_referent(auth: Option<&AwsAuth>) -> bool {
    let Some(auth) = auth else {
        return false;
    };
    let account_referent = auth
        .jwt
        .as_ref()
        .and_then(|jwt| jwt.service_account_ref.as_ref())
        .is_some_and(|account| account.namespace.is_none());
    let secret_referent = auth.secret_ref.as_ref().is_some_and(|secret_ref| {
        [
            secret_ref.access_key_id_secret_ref.as_ref(),
            secret_ref.secret_access_key_secret_ref.as_ref(),
        ]
        .into_iter()
        .any(|selector| selector.is_none_or(|selector| selector.namespace.is_none()))
            || secret_ref
                .session_token_secret_ref
                .as_ref()
                .is_some_and(|selector| selector.namespace.is_none())
    });
    account_referent || secret_referent
}

/// Upstream's check that a region names an endpoint: one or more DNS labels of letters, digits
/// and `-`, separated by dots.
fn validate_region(region: &str) -> Result<()> {
    let label = |label: &str| {
        (1..=63).contains(&label.len())
            && !label.starts_with('-')
            && label
                .chars()
                .all(|character| character.is_ascii_alphanumeric() || character == '-')
    };
    if region.split('.').all(label) {
        Ok(())
    } else {
        Err(ProviderError::invalid_config(format!(
            "region not found: {region}"
        )))
    }
}

/// Upstream's `ValidateReferentSecretSelector`: a SecretStore may only name its own namespace; a
/// ClusterSecretStore may omit it (referent auth).
fn check_namespace(field: &str, namespace: Option<&str>, store: &StoreId) -> Result<()> {
    match (store.kind, namespace) {
        (StoreKind::SecretStore, Some(namespace))
            if Some(namespace) != store.namespace.as_deref() =>
        {
            Err(ProviderError::invalid_config(format!(
                "invalid {field}: namespace should either be empty or match the namespace of \
                 the SecretStore for a namespaced SecretStore"
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn spec(json: serde_json::Value) -> AwsProvider {
        serde_json::from_value(json).unwrap()
    }

    fn store() -> StoreId {
        StoreId::secret_store("team", "aws")
    }

    #[test]
    fn services_and_regions_are_checked() {
        let valid = spec(serde_json::json!({"service": "ParameterStore", "region": "eu-west-1"}));
        validate_store(&valid, &store()).unwrap();
        let acm = spec(serde_json::json!({"service": "CertificateManager", "region": "eu-west-1"}));
        assert_eq!(
            validate_store(&acm, &store()).unwrap_err().kind(),
            ErrorKind::Unsupported
        );
        for region in ["", "eu west", "-eu", "eu..west"] {
            let bad = spec(serde_json::json!({"service": "SecretsManager", "region": region}));
            let error = validate_store(&bad, &store()).unwrap_err();
            assert_eq!(error.message(), format!("region not found: {region}"));
        }
    }

    #[test]
    fn deletion_settings_follow_upstreams_rules() {
        let deletion =
            |json: serde_json::Value| Deletion::of(Some(&serde_json::from_value(json).unwrap()));
        assert_eq!(
            deletion(serde_json::json!({"recoveryWindowInDays": 7})).unwrap(),
            Deletion {
                force_without_recovery: false,
                recovery_window_in_days: Some(7)
            }
        );
        assert_eq!(
            deletion(
                serde_json::json!({"forceDeleteWithoutRecovery": true, "recoveryWindowInDays": 0})
            )
            .unwrap(),
            Deletion {
                force_without_recovery: true,
                recovery_window_in_days: None
            }
        );
        let error = deletion(serde_json::json!({"recoveryWindowInDays": 31})).unwrap_err();
        assert!(
            error
                .message()
                .ends_with("RecoveryWindowInDays must be between 7 and 30 days")
        );
        let error = deletion(
            serde_json::json!({"forceDeleteWithoutRecovery": true, "recoveryWindowInDays": 7}),
        )
        .unwrap_err();
        assert!(
            error
                .message()
                .ends_with("ForceDeleteWithoutRecovery conflicts with RecoveryWindowInDays")
        );
    }

    #[test]
    fn credential_references_follow_the_namespace_rules() {
        let with_namespace = |namespace: &str| {
            spec(
                serde_json::json!({"service": "SecretsManager", "region": "eu-west-1", "auth": {
                "secretRef": {
                    "accessKeyIDSecretRef": {"name": "aws", "key": "id", "namespace": namespace},
                    "secretAccessKeySecretRef": {"name": "aws", "key": "secret"},
                }}}),
            )
        };
        validate_store(&with_namespace("team"), &store()).unwrap();
        let error = validate_store(&with_namespace("other"), &store()).unwrap_err();
        assert!(
            error
                .message()
                .starts_with("invalid Auth.SecretRef.AccessKeyID: namespace should")
        );
        let cluster = StoreId::cluster_secret_store("aws");
        validate_store(&with_namespace("other"), &cluster).unwrap();

        let missing = spec(
            serde_json::json!({"service": "SecretsManager", "region": "eu-west-1",
            "auth": {"secretRef": {"accessKeyIDSecretRef": {"name": "aws", "key": "id"}}}}),
        );
        let error = validate_store(&missing, &store()).unwrap_err();
        assert_eq!(
            error.message(),
            "invalid Auth.SecretRef.SecretAccessKey: it must be set"
        );
    }

    #[test]
    fn referent_specs_are_those_with_a_reference_without_namespace() {
        let auth = |json: serde_json::Value| -> AwsAuth { serde_json::from_value(json).unwrap() };
        assert!(!is_referent(None));
        assert!(is_referent(Some(&auth(serde_json::json!({"secretRef": {
            "accessKeyIDSecretRef": {"name": "a", "key": "id", "namespace": "x"},
            "secretAccessKeySecretRef": {"name": "a", "key": "secret"}}})))));
        assert!(!is_referent(Some(&auth(serde_json::json!({"secretRef": {
            "accessKeyIDSecretRef": {"name": "a", "key": "id", "namespace": "x"},
            "secretAccessKeySecretRef": {"name": "a", "key": "secret", "namespace": "x"}}})))));
        assert!(is_referent(Some(&auth(
            serde_json::json!({"jwt": {"serviceAccountRef": {"name": "sa"}}})
        ))));
    }
}
