//! `spec.syncWindows`: cron-scheduled windows that allow or deny periodic refreshes, evaluated
//! in UTC exactly as upstream does (robfig/cron's 5-field syntax and descriptors, `@every`).
//! Only periodic refreshes are gated; a changed spec or a broken target still syncs at once.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds};
use external_secrets_crds::v1::{ExternalSecretSyncWindowKind, ExternalSecretSyncWindows};
use external_secrets_providers::duration::parse_go_duration;
use k8s_openapi::jiff::Timestamp;

/// A window's start times.
enum Schedule {
    /// A cron pattern.
    Cron(Box<Cron>),
    /// `@every <duration>`: robfig fires `delay` after whatever time it is asked about.
    Every(Duration),
}

impl Schedule {
    /// Parses a schedule; `None` for one upstream could not parse either (upstream ignores
    /// such windows rather than blocking syncs forever).
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if let Some(delay) = text.strip_prefix("@every ") {
            let delay = parse_go_duration(delay.trim()).ok()?;
            // robfig rounds the delay down to whole seconds, with a one-second minimum.
            return Some(Self::Every(Duration::from_secs(delay.as_secs().max(1))));
        }
        let pattern = if text.eq_ignore_ascii_case("@midnight") {
            "@daily"
        } else {
            text
        };
        let parser = CronParser::builder().seconds(Seconds::Disallowed).build();
        parser
            .parse(pattern)
            .ok()
            .map(|cron| Self::Cron(Box::new(cron)))
    }

    /// The first start strictly after `after`, at whole seconds.
    fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Self::Cron(cron) => cron.find_next_occurrence(&after, false).ok(),
            Self::Every(delay) => {
                let whole = Utc.timestamp_opt(after.timestamp(), 0).single()?;
                Some(whole + chrono::Duration::from_std(*delay).ok()?)
            }
        }
    }

    /// Whether `at` is inside the window opened by the last start before it: upstream asks for
    /// the next start after `at - duration - 1s` and checks it is not later than `at`.
    fn is_open(&self, duration: Duration, at: DateTime<Utc>) -> bool {
        let Ok(span) = chrono::Duration::from_std(duration + Duration::from_secs(1)) else {
            return false;
        };
        let Some(start) = self.next_after(at - span) else {
            return false;
        };
        let Ok(open_for) = chrono::Duration::from_std(duration) else {
            return false;
        };
        start <= at && at <= start + open_for
    }
}

/// Whether the windows permit a periodic refresh at `now`: always without windows; under
/// `deny`, unless a window is open; under `allow`, only while one is.
pub fn allows_refresh(windows: Option<&ExternalSecretSyncWindows>, now: Timestamp) -> bool {
    let Some(windows) = windows.filter(|w| !w.windows.is_empty()) else {
        return true;
    };
    let Some(at) = Utc.timestamp_opt(now.as_second(), 0).single() else {
        return true;
    };
    let any_open = windows.windows.iter().any(|window| {
        let duration = parse_go_duration(&window.duration).unwrap_or_default();
        Schedule::parse(&window.schedule).is_some_and(|schedule| schedule.is_open(duration, at))
    });
    match windows.kind {
        ExternalSecretSyncWindowKind::Deny => !any_open,
        ExternalSecretSyncWindowKind::Allow => any_open,
    }
}

/// When a refresh blocked at `now` may next be allowed: the first minute boundary within the
/// coming week at which the windows allow one (windows open and close on cron minutes or
/// `@every` seconds; a minute's resolution is enough to requeue), else a week from now.
pub fn next_allowed(windows: Option<&ExternalSecretSyncWindows>, now: Timestamp) -> Duration {
    const WEEK_MINUTES: i64 = 7 * 24 * 60;
    let first_minute = now.as_second() / 60 + 1;
    (first_minute..first_minute + WEEK_MINUTES)
        .find(|minute| {
            Timestamp::from_second(minute * 60)
                .is_ok_and(|candidate| allows_refresh(windows, candidate))
        })
        .map_or(Duration::from_secs(7 * 24 * 3600), |minute| {
            Duration::from_secs(u64::try_from(minute * 60 - now.as_second()).unwrap_or(60))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::ExternalSecretSyncWindowEntry;

    fn windows(
        kind: ExternalSecretSyncWindowKind,
        entries: &[(&str, &str)],
    ) -> ExternalSecretSyncWindows {
        ExternalSecretSyncWindows {
            kind,
            windows: entries
                .iter()
                .map(|(schedule, duration)| ExternalSecretSyncWindowEntry {
                    schedule: (*schedule).to_owned(),
                    duration: (*duration).to_owned(),
                })
                .collect(),
        }
    }

    /// 2026-11-23 (a Monday) at `hour:minute` UTC.
    fn monday(hour: i64, minute: i64) -> Timestamp {
        Timestamp::from_second(1_795_392_000 + hour * 3600 + minute * 60).unwrap()
    }

    #[test]
    fn the_fixture_day_is_a_monday_at_midnight() {
        assert_eq!(monday(0, 0).to_string(), "2026-11-23T00:00:00Z");
    }

    #[test]
    fn deny_windows_block_while_open() {
        // Weekdays 22:00 for 8 hours, as in upstream's field documentation.
        let deny = windows(
            ExternalSecretSyncWindowKind::Deny,
            &[("0 22 * * 1-5", "8h")],
        );
        assert!(allows_refresh(Some(&deny), monday(21, 59)));
        assert!(!allows_refresh(Some(&deny), monday(22, 0)));
        assert!(!allows_refresh(Some(&deny), monday(23, 30)));
        // Still open at 05:59 on Tuesday, closed after 06:00.
        assert!(!allows_refresh(Some(&deny), monday(29, 59)));
        assert!(allows_refresh(Some(&deny), monday(30, 1)));
    }

    #[test]
    fn allow_windows_permit_only_while_open() {
        let allow = windows(
            ExternalSecretSyncWindowKind::Allow,
            &[("@daily", "1h"), ("not a schedule", "1h")],
        );
        assert!(allows_refresh(Some(&allow), monday(0, 30)));
        assert!(!allows_refresh(Some(&allow), monday(1, 1)));
        assert_eq!(
            next_allowed(Some(&allow), monday(1, 1)),
            Duration::from_secs(22 * 3600 + 59 * 60)
        );
        let midnight = windows(ExternalSecretSyncWindowKind::Allow, &[("@midnight", "10m")]);
        assert!(allows_refresh(Some(&midnight), monday(0, 5)));
        assert!(!allows_refresh(Some(&midnight), monday(0, 11)));
    }

    #[test]
    fn no_windows_always_allow() {
        assert!(allows_refresh(None, monday(3, 0)));
        let empty = windows(ExternalSecretSyncWindowKind::Allow, &[]);
        assert!(allows_refresh(Some(&empty), monday(3, 0)));
    }

    #[test]
    fn every_follows_robfig_constant_delay() {
        // robfig: next(at - duration - 1s) = at - duration - 1s + delay, open when the delay
        // does not exceed duration + 1s.
        let short = windows(ExternalSecretSyncWindowKind::Allow, &[("@every 30m", "1h")]);
        assert!(allows_refresh(Some(&short), monday(5, 0)));
        let long = windows(ExternalSecretSyncWindowKind::Allow, &[("@every 2h", "1h")]);
        assert!(!allows_refresh(Some(&long), monday(5, 0)));
    }
}
