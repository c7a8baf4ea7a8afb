//! The config's conditions from the outcome of a reconcile: `Ready` only when every operand
//! Deployment is Available, `Progressing` while they roll out, `Degraded` with the failing
//! object and why. Pure, so it is unit-tested; the controller writes the status only when these
//! change.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// What a reconcile achieved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every object applied; these Deployments are not Available yet.
    Applied {
        /// Names of the Deployments still rolling out.
        unavailable: Vec<String>,
    },
    /// Applying failed.
    Failed {
        /// The object that failed (`Kind name`), or what was missing.
        object: String,
        /// Why.
        reason: String,
    },
}

/// Condition types.
pub const READY: &str = "Ready";
/// Condition types.
pub const PROGRESSING: &str = "Progressing";
/// Condition types.
pub const DEGRADED: &str = "Degraded";

/// The three conditions for `outcome`; a condition whose status did not change keeps its
/// `lastTransitionTime` from `previous`.
pub fn conditions(
    outcome: &Outcome,
    generation: Option<i64>,
    previous: &[Condition],
    now: &Time,
) -> Vec<Condition> {
    let (ready, progressing, degraded) = match outcome {
        Outcome::Applied { unavailable } if unavailable.is_empty() => (
            ("True", "Ready", "reconciliation successful".to_owned()),
            (
                "False",
                "Completed",
                "every Deployment is Available".to_owned(),
            ),
            ("False", "Ready", String::new()),
        ),
        Outcome::Applied { unavailable } => {
            let waiting = format!(
                "waiting for Deployments to become Available: {}",
                unavailable.join(", ")
            );
            (
                ("False", "Progressing", waiting.clone()),
                ("True", "Progressing", waiting),
                ("False", "Ready", String::new()),
            )
        }
        Outcome::Failed { object, reason } => {
            let message = format!("{object}: {reason}");
            (
                ("False", "Failed", message.clone()),
                ("False", "Failed", String::new()),
                ("True", "Failed", message),
            )
        }
    };
    [
        (READY, ready),
        (PROGRESSING, progressing),
        (DEGRADED, degraded),
    ]
    .into_iter()
    .map(|(kind, (status, reason, message))| {
        let since = previous
            .iter()
            .find(|old| old.type_ == kind && old.status == status)
            .map_or_else(|| now.clone(), |old| old.last_transition_time.clone());
        Condition {
            type_: kind.into(),
            status: status.into(),
            reason: reason.into(),
            message: bounded(message),
            observed_generation: generation,
            last_transition_time: since,
        }
    })
    .collect()
}

/// The API's limit on a condition message.
const MAX_MESSAGE: usize = 32768;

fn bounded(mut message: String) -> String {
    if message.len() > MAX_MESSAGE {
        let mut end = MAX_MESSAGE;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
    }
    message
}

/// Whether `new` says anything `old` did not (times aside).
pub fn changed(old: &[Condition], new: &[Condition]) -> bool {
    let key = |condition: &Condition| {
        (
            condition.type_.clone(),
            condition.status.clone(),
            condition.reason.clone(),
            condition.message.clone(),
            condition.observed_generation,
        )
    };
    old.len() != new.len() || old.iter().zip(new).any(|(a, b)| key(a) != key(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(seconds: i64) -> Time {
        Time(k8s_openapi::jiff::Timestamp::from_second(seconds).expect("a valid timestamp"))
    }

    fn find<'a>(conditions: &'a [Condition], kind: &str) -> &'a Condition {
        conditions
            .iter()
            .find(|condition| condition.type_ == kind)
            .expect("condition present")
    }

    #[test]
    fn ready_only_when_every_deployment_is_available() {
        let rolling = Outcome::Applied {
            unavailable: vec!["external-secrets-webhook".into()],
        };
        let conditions = conditions(&rolling, Some(2), &[], &time(1));
        assert_eq!(find(&conditions, READY).status, "False");
        assert_eq!(find(&conditions, PROGRESSING).status, "True");
        assert!(
            find(&conditions, PROGRESSING)
                .message
                .contains("external-secrets-webhook")
        );
        assert_eq!(find(&conditions, DEGRADED).status, "False");
        assert_eq!(find(&conditions, READY).observed_generation, Some(2));

        let done = Outcome::Applied {
            unavailable: vec![],
        };
        let after = super::conditions(&done, Some(2), &conditions, &time(5));
        assert_eq!(find(&after, READY).status, "True");
        assert_eq!(find(&after, PROGRESSING).status, "False");
        // Degraded stayed False: its transition time is kept.
        assert_eq!(find(&after, DEGRADED).last_transition_time, time(1));
        assert_eq!(find(&after, READY).last_transition_time, time(5));
    }

    #[test]
    fn degraded_names_the_failing_object_and_reason() {
        let failed = Outcome::Failed {
            object: "Deployment external-secrets".into(),
            reason: "admission webhook denied the request".into(),
        };
        let conditions = conditions(&failed, None, &[], &time(1));
        let degraded = find(&conditions, DEGRADED);
        assert_eq!(degraded.status, "True");
        assert_eq!(
            degraded.message,
            "Deployment external-secrets: admission webhook denied the request"
        );
        assert_eq!(find(&conditions, READY).status, "False");
    }

    #[test]
    fn an_unchanged_outcome_is_not_a_change() {
        let done = Outcome::Applied {
            unavailable: vec![],
        };
        let first = conditions(&done, Some(1), &[], &time(1));
        let second = conditions(&done, Some(1), &first, &time(9));
        assert!(!changed(&first, &second));
        assert_eq!(first, second, "times kept as well");
        let third = conditions(&done, Some(2), &second, &time(9));
        assert!(changed(&second, &third));
    }
}
