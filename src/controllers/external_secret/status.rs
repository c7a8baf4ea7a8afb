//! The ExternalSecret status the reconciler writes: upstream's `Ready` condition reasons and
//! messages, `refreshTime`, `syncedResourceVersion` and `binding`.

use external_secrets_crds::meta::LocalObjectReference;
use external_secrets_crds::v1::{
    ExternalSecretConditionType, ExternalSecretStatus, ExternalSecretStatusCondition,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// Reason: the Secret was written (or was already right).
pub const REASON_SYNCED: &str = "SecretSynced";
/// Reason: syncing failed.
pub const REASON_SYNCED_ERROR: &str = "SecretSyncedError";
/// Reason: the provider data is gone and `deletionPolicy: Delete` removed the Secret.
pub const REASON_DELETED: &str = "SecretDeleted";
/// Reason: `creationPolicy: Merge` and the Secret to merge into does not exist.
pub const REASON_MISSING: &str = "SecretMissing";
/// Reason (generic targets): the resource was written (or was already right).
pub const REASON_RESOURCE_SYNCED: &str = "ResourceSynced";
/// Reason (generic targets): syncing failed.
pub const REASON_RESOURCE_SYNCED_ERROR: &str = "ResourceSyncedError";
/// Reason (generic targets): `deletionPolicy: Delete` removed the resource.
pub const REASON_RESOURCE_DELETED: &str = "ResourceDeleted";
/// Reason (generic targets): `creationPolicy: Merge` and the resource does not exist.
pub const REASON_RESOURCE_MISSING: &str = "ResourceMissing";
/// Upstream's message for [`REASON_RESOURCE_MISSING`].
pub const MESSAGE_RESOURCE_MISSING: &str =
    "resource will not be created due to CreationPolicy=Merge";
/// Upstream's `msgSynced`.
pub const MESSAGE_SYNCED: &str = "secret synced";
/// Upstream's `msgSyncedRetain`.
pub const MESSAGE_SYNCED_RETAIN: &str = "secret retained due to DeletionPolicy=Retain";
/// Upstream's `msgDeleted`.
pub const MESSAGE_DELETED: &str = "secret deleted due to DeletionPolicy=Delete";
/// Upstream's `msgMissing`.
pub const MESSAGE_MISSING: &str = "secret will not be created due to CreationPolicy=Merge";
/// Upstream's `msgErrorGetSecretData`.
pub const MESSAGE_GET_DATA_FAILED: &str = "could not get secret data from provider";
/// Upstream's `msgErrorUpdateSecret`.
pub const MESSAGE_UPDATE_FAILED: &str = "could not update secret";
/// Upstream's `msgErrorDeleteSecret`.
pub const MESSAGE_DELETE_FAILED: &str = "could not delete secret";

/// The `Ready` condition to set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    /// `True` or `False`.
    pub status: &'static str,
    /// One of the reasons above.
    pub reason: &'static str,
    /// Upstream's message for the reason (plus the error, for failures).
    pub message: String,
}

impl Ready {
    /// A successful outcome.
    pub fn done(reason: &'static str, message: &str) -> Self {
        Self {
            status: "True",
            reason,
            message: message.to_owned(),
        }
    }

    /// A failure whose error speaks for itself (store checks, which upstream words alone).
    pub fn failed_plain(error: &dyn std::fmt::Display) -> Self {
        Self {
            status: "False",
            reason: REASON_SYNCED_ERROR,
            message: error.to_string(),
        }
    }

    /// A failure: upstream's message for the step, then the error.
    pub fn failed(step: &str, error: &dyn std::fmt::Display) -> Self {
        Self::failed_as(REASON_SYNCED_ERROR, step, error)
    }

    /// A failure with its own reason (generic targets report `ResourceSyncedError`).
    pub fn failed_as(reason: &'static str, step: &str, error: &dyn std::fmt::Display) -> Self {
        Self {
            status: "False",
            reason,
            message: format!("{step}: {error}"),
        }
    }
}

/// What a successful sync records besides the condition.
#[derive(Debug, Clone)]
pub struct Synced {
    /// When the provider was read.
    pub refresh_time: Timestamp,
    /// The synced resource version of the ExternalSecret.
    pub resource_version: String,
    /// The target Secret's name, when one was written.
    pub binding: Option<String>,
}

/// The status after an outcome: the `Ready` condition replaced (its transition time kept
/// while status, reason and message stay the same), sync bookkeeping set on success.
pub fn next_status(
    previous: Option<&ExternalSecretStatus>,
    ready: &Ready,
    synced: Option<&Synced>,
    now: Timestamp,
) -> ExternalSecretStatus {
    let mut next = previous.cloned().unwrap_or_default();
    let old = next
        .conditions
        .iter()
        .find(|c| c.r#type == ExternalSecretConditionType::Ready);
    let unchanged = old.is_some_and(|c| {
        c.status == ready.status
            && c.reason.as_deref() == Some(ready.reason)
            && c.message.as_deref() == Some(ready.message.as_str())
    });
    let last_transition_time = match old {
        Some(old) if unchanged => old.last_transition_time.clone(),
        _ => Some(Time(now)),
    };
    next.conditions
        .retain(|c| c.r#type != ExternalSecretConditionType::Ready);
    next.conditions.push(ExternalSecretStatusCondition {
        r#type: ExternalSecretConditionType::Ready,
        status: ready.status.to_owned(),
        reason: Some(ready.reason.to_owned()),
        message: Some(ready.message.clone()),
        last_transition_time,
    });
    if let Some(synced) = synced {
        next.refresh_time = Some(Time(synced.refresh_time));
        next.synced_resource_version = Some(synced.resource_version.clone());
        if let Some(name) = &synced.binding {
            next.binding = Some(LocalObjectReference { name: name.clone() });
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_records_the_sync_and_failure_keeps_it() {
        let t0 = Timestamp::from_second(1_700_000_000).unwrap();
        let synced = Synced {
            refresh_time: t0,
            resource_version: "1-abc".into(),
            binding: Some("db".into()),
        };
        let ok = next_status(
            None,
            &Ready::done(REASON_SYNCED, MESSAGE_SYNCED),
            Some(&synced),
            t0,
        );
        let condition = &ok.conditions[0];
        assert_eq!(condition.status, "True");
        assert_eq!(condition.reason.as_deref(), Some("SecretSynced"));
        assert_eq!(condition.message.as_deref(), Some("secret synced"));
        assert_eq!(ok.binding.as_ref().map(|b| b.name.as_str()), Some("db"));
        assert_eq!(ok.synced_resource_version.as_deref(), Some("1-abc"));

        let t1 = Timestamp::from_second(1_700_000_100).unwrap();
        let failure = Ready::failed(MESSAGE_GET_DATA_FAILED, &"connection refused");
        let failed = next_status(Some(&ok), &failure, None, t1);
        assert_eq!(failed.conditions.len(), 1);
        assert_eq!(failed.conditions[0].status, "False");
        assert_eq!(
            failed.conditions[0].reason.as_deref(),
            Some("SecretSyncedError")
        );
        assert_eq!(
            failed.conditions[0].message.as_deref(),
            Some("could not get secret data from provider: connection refused")
        );
        assert_eq!(failed.conditions[0].last_transition_time, Some(Time(t1)));
        // The last good sync stays recorded: the Secret still holds its data.
        assert_eq!(failed.refresh_time, Some(Time(t0)));
        let again = next_status(Some(&failed), &failure, None, t0);
        assert_eq!(again.conditions[0].last_transition_time, Some(Time(t1)));
    }
}
