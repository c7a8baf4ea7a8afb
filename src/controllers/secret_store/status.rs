//! Pure decisions of the store reconciler: the status to write, which stores this controller
//! serves, and when to look at a store again. No I/O here.

use std::time::Duration;

use external_secrets_crds::v1::{SecretStoreSpec, SecretStoreStatus, SecretStoreStatusCondition};
use external_secrets_providers::Capabilities;
use external_secrets_providers::duration::parse_go_duration;
use external_secrets_providers::registry::Backend;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

/// Upstream's `SecretStoreReady` condition type.
pub const CONDITION_READY: &str = "Ready";
/// Upstream's `ReasonStoreValid`.
pub const REASON_VALID: &str = "Valid";
/// Upstream's `ReasonInvalidProviderConfig`.
pub const REASON_INVALID_PROVIDER_CONFIG: &str = "InvalidProviderConfig";
/// Upstream's `msgStoreValidated`.
pub const MESSAGE_STORE_VALIDATED: &str = "store validated";
/// Upstream's `errUnableCreateClient`.
pub const MESSAGE_UNABLE_CREATE_CLIENT: &str = "unable to create client";
/// Upstream's `errUnableValidateStore`.
pub const MESSAGE_UNABLE_VALIDATE_STORE: &str = "unable to validate store";
/// Upstream's `ReasonValidationUnknown`.
pub const REASON_VALIDATION_UNKNOWN: &str = "ValidationUnknown";
/// Upstream's `errValidationUnknownMsg`.
pub const MESSAGE_VALIDATION_UNKNOWN: &str = "could not determine validation status";

/// Upstream's annotation that silences the maintenance warning of a store.
pub const ANNOTATION_IGNORE_MAINTENANCE: &str = "external-secrets.io/ignore-maintenance-checks";
/// Upstream's `StoreUnmaintained` event reason.
pub const REASON_UNMAINTAINED: &str = "StoreUnmaintained";
/// Upstream's `msgStoreNotMaintained`.
pub const MESSAGE_UNMAINTAINED: &str =
    "store isn't currently maintained. Please plan and prepare accordingly.";

/// Whether a validated store gets upstream's maintenance warning: its provider is one upstream
/// marks unmaintained and the store lacks the ignore annotation (its presence is enough, as
/// upstream checks only the key).
pub fn warn_unmaintained(spec: &SecretStoreSpec, meta: &ObjectMeta) -> bool {
    let ignored = meta
        .annotations
        .as_ref()
        .is_some_and(|annotations| annotations.contains_key(ANNOTATION_IGNORE_MAINTENANCE));
    !ignored && Backend::of(&spec.provider).is_ok_and(|backend| !backend.maintained())
}

/// The maintenance warning event: (reason, note).
pub fn unmaintained_event() -> (&'static str, &'static str) {
    (REASON_UNMAINTAINED, MESSAGE_UNMAINTAINED)
}

/// What validating a store found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Static checks and the provider's validation passed, or the provider could not tell
    /// (upstream treats `ValidationResultUnknown` as valid).
    Valid(Capabilities),
    /// The configuration is unusable (bad config, provider not in this build); carries the
    /// error message, which never holds secret values.
    InvalidProviderConfig(String),
    /// The provider's validation call failed; upstream reports it with the
    /// `InvalidProviderConfig` reason too (`ReasonValidationFailed` is declared but unused).
    ValidationFailed(String),
    /// The provider could not tell whether the store works (upstream's
    /// `ValidationResultUnknown` with an error): Ready, reason `ValidationUnknown`, and a
    /// Warning event carrying the error; capabilities are not updated.
    ValidationUnknown(String),
}

impl Outcome {
    /// Whether the event is a warning, its reason and its message, as upstream records them
    /// (`validateStore` in pkg/controllers/secretstore/common.go): the error goes to the
    /// event, never to the condition.
    pub fn event(&self) -> (bool, &'static str, String) {
        match self {
            Outcome::Valid(_) => (false, REASON_VALID, MESSAGE_STORE_VALIDATED.to_owned()),
            Outcome::InvalidProviderConfig(message) | Outcome::ValidationFailed(message) => {
                (true, REASON_INVALID_PROVIDER_CONFIG, message.clone())
            }
            Outcome::ValidationUnknown(message) => {
                (true, REASON_VALIDATION_UNKNOWN, message.clone())
            }
        }
    }

    /// The `Ready` condition for this outcome (without a transition time): upstream's fixed
    /// messages, without the error.
    fn condition(&self) -> (&'static str, &'static str, &'static str) {
        match self {
            Outcome::Valid(_) => ("True", REASON_VALID, MESSAGE_STORE_VALIDATED),
            Outcome::InvalidProviderConfig(_) => (
                "False",
                REASON_INVALID_PROVIDER_CONFIG,
                MESSAGE_UNABLE_CREATE_CLIENT,
            ),
            Outcome::ValidationFailed(_) => (
                "False",
                REASON_INVALID_PROVIDER_CONFIG,
                MESSAGE_UNABLE_VALIDATE_STORE,
            ),
            Outcome::ValidationUnknown(_) => (
                "True",
                REASON_VALIDATION_UNKNOWN,
                MESSAGE_VALIDATION_UNKNOWN,
            ),
        }
    }

    fn capabilities(&self) -> Option<Capabilities> {
        match self {
            Outcome::Valid(capabilities) => Some(*capabilities),
            _ => None,
        }
    }
}

/// The status after `outcome`: the `Ready` condition replaced (its transition time kept when
/// status, reason and message did not change), other conditions kept, capabilities set when known.
pub fn next_status(
    previous: Option<&SecretStoreStatus>,
    outcome: &Outcome,
    now: Timestamp,
) -> SecretStoreStatus {
    let (status, reason, message) = outcome.condition();
    let mut next = previous.cloned().unwrap_or_default();
    let old = next.conditions.iter().find(|c| c.r#type == CONDITION_READY);
    let unchanged = old.is_some_and(|c| {
        c.status == status
            && c.reason.as_deref() == Some(reason)
            && c.message.as_deref() == Some(message)
    });
    let last_transition_time = match old {
        Some(old) if unchanged => old.last_transition_time.clone(),
        _ => Some(Time(now)),
    };
    next.conditions.retain(|c| c.r#type != CONDITION_READY);
    next.conditions.push(SecretStoreStatusCondition {
        r#type: CONDITION_READY.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_transition_time,
    });
    if let Some(capabilities) = outcome.capabilities() {
        next.capabilities = Some(capabilities.as_str().to_owned());
    }
    next
}

/// The `Ready` condition's status and reason, if any.
pub fn ready(status: Option<&SecretStoreStatus>) -> Option<(&str, Option<&str>)> {
    status?
        .conditions
        .iter()
        .find(|c| c.r#type == CONDITION_READY)
        .map(|c| (c.status.as_str(), c.reason.as_deref()))
}

/// The store's refresh interval: `spec.refreshInterval` (seconds or a Go duration) when set and
/// not zero, else the controller's default.
pub fn refresh_interval(spec: &SecretStoreSpec, default: Duration) -> Duration {
    let configured = match &spec.refresh_interval {
        Some(IntOrString::Int(seconds)) if *seconds > 0 => {
            Some(Duration::from_secs(u64::from(seconds.unsigned_abs())))
        }
        Some(IntOrString::String(text)) => parse_go_duration(text).ok(),
        _ => None,
    };
    configured.filter(|d| !d.is_zero()).unwrap_or(default)
}

/// Whether the store must be validated again (the provider called): its spec changed since the
/// last validation, that validation is due, or the status has no `Ready` condition yet.
/// Everything else (e.g. the watch event of our own status patch) only requeues.
pub fn needs_validation(
    last: Option<&Validated>,
    version: &str,
    has_ready: bool,
    now: std::time::Instant,
) -> bool {
    match last {
        Some(last) => !has_ready || last.version != version || now >= last.due,
        None => true,
    }
}

/// The memory of a store's last validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// The store version (uid and generation) that was validated.
    pub version: String,
    /// When to validate again even without a change.
    pub due: std::time::Instant,
    /// Consecutive temporary failures, for the backoff.
    pub failures: u32,
}

/// `interval` plus up to 10% random jitter, so stores created together spread out.
pub fn with_jitter(interval: Duration, random_fraction: f64) -> Duration {
    interval + interval.mul_f64(0.1 * random_fraction.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        Timestamp::from_second(1_700_000_000).unwrap()
    }

    #[test]
    fn valid_store_is_ready_with_capabilities() {
        let status = next_status(None, &Outcome::Valid(Capabilities::ReadWrite), now());
        assert_eq!(status.capabilities.as_deref(), Some("ReadWrite"));
        let condition = &status.conditions[0];
        assert_eq!(condition.r#type, "Ready");
        assert_eq!(condition.status, "True");
        assert_eq!(condition.reason.as_deref(), Some("Valid"));
        assert_eq!(condition.message.as_deref(), Some("store validated"));
        assert_eq!(condition.last_transition_time, Some(Time(now())));
    }

    #[test]
    fn transition_time_kept_while_condition_unchanged() {
        let first = next_status(None, &Outcome::Valid(Capabilities::ReadOnly), now());
        let later = Timestamp::from_second(1_700_000_600).unwrap();
        let second = next_status(Some(&first), &Outcome::Valid(Capabilities::ReadOnly), later);
        assert_eq!(first, second);
        let failed = Outcome::ValidationFailed("connection refused".into());
        let third = next_status(Some(&second), &failed, later);
        assert_eq!(third.conditions.len(), 1);
        assert_eq!(third.conditions[0].status, "False");
        assert_eq!(
            third.conditions[0].reason.as_deref(),
            Some("InvalidProviderConfig")
        );
        assert_eq!(
            third.conditions[0].message.as_deref(),
            Some("unable to validate store")
        );
        assert_eq!(
            failed.event(),
            (true, "InvalidProviderConfig", "connection refused".into())
        );
        assert_eq!(third.conditions[0].last_transition_time, Some(Time(later)));
        assert_eq!(third.capabilities.as_deref(), Some("ReadOnly"));
    }

    #[test]
    fn invalid_provider_config_names_the_provider() {
        let outcome = Outcome::InvalidProviderConfig(
            "provider \"aws\" is not supported by this build".into(),
        );
        let status = next_status(None, &outcome, now());
        let condition = &status.conditions[0];
        assert_eq!(condition.status, "False");
        assert_eq!(condition.reason.as_deref(), Some("InvalidProviderConfig"));
        assert_eq!(
            condition.message.as_deref(),
            Some("unable to create client")
        );
        assert_eq!(status.capabilities, None);
        assert_eq!(
            ready(Some(&status)),
            Some(("False", Some("InvalidProviderConfig")))
        );
        let (warning, reason, message) = outcome.event();
        assert!(warning);
        assert_eq!(reason, "InvalidProviderConfig");
        assert!(message.contains("\"aws\" is not supported"), "{message}");
    }

    /// Upstream `validateStore` (pkg/controllers/secretstore/common.go): a
    /// `ValidationResultUnknown` with an error sets Ready=True, reason `ValidationUnknown`,
    /// message `errValidationUnknownMsg`, and a Warning event with the error.
    #[test]
    fn validation_unknown_is_ready_with_a_warning() {
        let valid = next_status(None, &Outcome::Valid(Capabilities::ReadOnly), now());
        let unknown = Outcome::ValidationUnknown("unable to validate".into());
        let status = next_status(Some(&valid), &unknown, now());
        let condition = &status.conditions[0];
        assert_eq!(condition.status, "True");
        assert_eq!(condition.reason.as_deref(), Some("ValidationUnknown"));
        assert_eq!(
            condition.message.as_deref(),
            Some("could not determine validation status")
        );
        assert_eq!(status.capabilities.as_deref(), Some("ReadOnly"), "kept");
        assert_eq!(
            unknown.event(),
            (true, "ValidationUnknown", "unable to validate".into())
        );
    }

    /// Upstream `reconcile` (pkg/controllers/secretstore/common.go): stores of a provider
    /// registered `MaintenanceStatusNotMaintained` (v2.9: the fake) get a `StoreUnmaintained`
    /// Warning unless annotated `external-secrets.io/ignore-maintenance-checks`.
    #[test]
    fn unmaintained_providers_warn_unless_ignored() {
        let spec: SecretStoreSpec =
            serde_json::from_value(serde_json::json!({"provider": {"fake": {"data": []}}}))
                .unwrap();
        let mut meta = ObjectMeta::default();
        assert!(warn_unmaintained(&spec, &meta));
        meta.annotations = Some([(ANNOTATION_IGNORE_MAINTENANCE.to_owned(), String::new())].into());
        assert!(
            !warn_unmaintained(&spec, &meta),
            "the key alone silences it"
        );
        assert!(!warn_unmaintained(
            &SecretStoreSpec::default(),
            &ObjectMeta::default()
        ));
        assert_eq!(
            unmaintained_event(),
            (
                "StoreUnmaintained",
                "store isn't currently maintained. Please plan and prepare accordingly."
            )
        );
    }

    #[test]
    fn refresh_interval_prefers_the_store() {
        let default = Duration::from_secs(300);
        let mut spec = SecretStoreSpec::default();
        assert_eq!(refresh_interval(&spec, default), default);
        spec.refresh_interval = Some(IntOrString::Int(0));
        assert_eq!(refresh_interval(&spec, default), default);
        spec.refresh_interval = Some(IntOrString::Int(30));
        assert_eq!(refresh_interval(&spec, default), Duration::from_secs(30));
        spec.refresh_interval = Some(IntOrString::String("1h".into()));
        assert_eq!(refresh_interval(&spec, default), Duration::from_secs(3600));
        spec.refresh_interval = Some(IntOrString::String("nonsense".into()));
        assert_eq!(refresh_interval(&spec, default), default);
    }

    #[test]
    fn validation_only_on_change_or_when_due() {
        let now = std::time::Instant::now();
        let last = Validated {
            version: "uid/1".into(),
            due: now + Duration::from_secs(60),
            failures: 0,
        };
        assert!(needs_validation(None, "uid/1", true, now));
        assert!(!needs_validation(Some(&last), "uid/1", true, now));
        assert!(needs_validation(Some(&last), "uid/2", true, now));
        assert!(needs_validation(Some(&last), "uid/1", false, now));
        assert!(needs_validation(
            Some(&last),
            "uid/1",
            true,
            now + Duration::from_secs(61)
        ));
    }

    #[test]
    fn jitter_is_bounded() {
        let base = Duration::from_secs(100);
        assert_eq!(with_jitter(base, 0.0), base);
        assert_eq!(with_jitter(base, 1.0), Duration::from_secs(110));
        assert_eq!(with_jitter(base, 7.0), Duration::from_secs(110));
    }
}
