//! Leader election (`--enable-leader-election`), so several replicas can run for availability
//! while only one reconciles: the replicas compete for a coordination.k8s.io Lease named by
//! `--leader-election-id`, with the timings and semantics of client-go's lease lock that
//! upstream's controller-runtime manager uses (15 s lease, renew every 2 s, give up after
//! failing to renew for 10 s, release on shutdown so a successor takes over within 2 s).
//!
//! Written here rather than taken from a crate: the Lease crates for kube-rs let waiting
//! replicas sleep until the lease expires, so a released lease was only taken over after the
//! full lease duration.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::PostParams;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The validity assumed for a Lease record that states none (controller-runtime's default).
const UNSTATED_LEASE_DURATION: Duration = Duration::from_secs(15);

/// The lease to compete for.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    /// The Lease's name (upstream's `--leader-election-id`).
    pub name: String,
    /// The Lease's namespace; `None` means the client's default namespace, which in a pod is
    /// the pod's own namespace, as controller-runtime picks it.
    pub namespace: Option<String>,
    /// How long a lease stays valid after its last renewal (controller-runtime: 15 s).
    pub lease_duration: Duration,
    /// How long the holder keeps trying to renew before it gives leadership up (10 s).
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the holder renews (2 s).
    pub retry_period: Duration,
}

/// Leadership held by this process: renewed in the background until released or lost.
pub struct Leadership {
    leading: watch::Receiver<bool>,
    release: Option<tokio::sync::oneshot::Sender<()>>,
    renewal: JoinHandle<()>,
    /// `<namespace>/<name>` of the lease, for logs.
    pub lease: String,
}

/// Waits until this process holds the lease. Every replica calls it at start; all but one
/// wait here (serving probes and metrics meanwhile) until the holder stops or stops renewing.
pub async fn acquire(client: kube::Client, settings: &LeaseSettings) -> anyhow::Result<Leadership> {
    let namespace = settings
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let mut lock = LeaseLock {
        api: Api::namespaced(client, &namespace),
        name: settings.name.clone(),
        lease_duration: settings.lease_duration,
        renew_deadline: settings.renew_deadline,
        retry_period: settings.retry_period,
        identity: identity(),
        observed: None,
    };
    let lease = format!("{namespace}/{}", settings.name);
    tracing::info!(%lease, identity = %lock.identity, "attempting to acquire leader lease");
    loop {
        match lock.try_acquire_or_renew().await {
            Ok(true) => break,
            Ok(false) => {}
            Err(error) => tracing::warn!(%lease, %error, "error acquiring leader lease"),
        }
        tokio::time::sleep(jittered(settings.retry_period)).await;
    }
    tracing::info!(%lease, identity = %lock.identity, "successfully acquired lease");
    let (leading_sender, leading) = watch::channel(true);
    let (release, released) = tokio::sync::oneshot::channel();
    let renewal = tokio::spawn(lock.keep(leading_sender, released, lease.clone()));
    Ok(Leadership {
        leading,
        release: Some(release),
        renewal,
        lease,
    })
}

impl Leadership {
    /// Completes when leadership is lost (another replica took the lease, or renewing failed
    /// for longer than the renew deadline); the caller must stop reconciling then.
    pub async fn lost(&mut self) {
        let _ = self.leading.wait_for(|leading| !*leading).await;
    }

    /// Gives the lease up so another replica takes over at once instead of after it expires
    /// (upstream's `LeaderElectionReleaseOnCancel`).
    pub async fn release(mut self) {
        if let Some(release) = self.release.take() {
            let _ = release.send(());
        }
        if tokio::time::timeout(Duration::from_secs(5), &mut self.renewal)
            .await
            .is_err()
        {
            tracing::warn!(lease = %self.lease, "releasing leader lease timed out");
            self.renewal.abort();
        }
    }
}

/// One replica's view of the Lease, as client-go's `LeaderElector` keeps it.
struct LeaseLock {
    api: Api<Lease>,
    name: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    identity: String,
    /// The lease record last seen and when it was first seen with that content: expiry is
    /// judged by this replica's own clock, so clock skew between nodes does not matter.
    observed: Option<(LeaseSpec, Instant)>,
}

impl LeaseLock {
    /// Renews every retry period until released or until renewing failed for the renew
    /// deadline, then reports leadership lost.
    async fn keep(
        mut self,
        leading: watch::Sender<bool>,
        mut released: tokio::sync::oneshot::Receiver<()>,
        lease: String,
    ) {
        let mut last_renewed = Instant::now();
        loop {
            tokio::select! {
                _ = &mut released => {
                    match self.release().await {
                        Ok(()) => tracing::info!(%lease, "released leader lease"),
                        Err(error) => tracing::warn!(%lease, %error, "could not release leader lease"),
                    }
                    return;
                }
                () = tokio::time::sleep(self.retry_period) => {}
            }
            match self.try_acquire_or_renew().await {
                Ok(true) => last_renewed = Instant::now(),
                Ok(false) => {
                    tracing::error!(%lease, "leader lease taken by another replica");
                    let _ = leading.send(false);
                    return;
                }
                Err(error) => tracing::warn!(%lease, %error, "error renewing leader lease"),
            }
            if last_renewed.elapsed() > self.renew_deadline {
                tracing::error!(%lease, "failed to renew leader lease within the renew deadline");
                let _ = leading.send(false);
                return;
            }
        }
    }

    /// One attempt: creates the Lease, renews it, or takes it over once expired. `Ok(false)`
    /// when another replica holds a valid lease or won the race for it.
    async fn try_acquire_or_renew(&mut self) -> anyhow::Result<bool> {
        let now = Timestamp::now();
        let Some(current) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(claim(&self.identity, None, now, self.lease_duration)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(created.spec.unwrap_or_default());
                    Ok(true)
                }
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error).context("creating the lease"),
            };
        };
        let spec = current.spec.clone().unwrap_or_default();
        self.observe(spec.clone());
        if !self.may_take(&spec) {
            return Ok(false);
        }
        let mut updated = current;
        updated.spec = Some(claim(&self.identity, Some(&spec), now, self.lease_duration));
        match self
            .api
            .replace(&self.name, &PostParams::default(), &updated)
            .await
        {
            Ok(replaced) => {
                self.observe(replaced.spec.unwrap_or_default());
                Ok(true)
            }
            // Someone else wrote the lease since we read it: they won this round.
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error).context("updating the lease"),
        }
    }

    /// Gives the lease up: no holder and a one-second duration, as client-go releases it.
    async fn release(&mut self) -> anyhow::Result<()> {
        let Some(mut current) = self.api.get_opt(&self.name).await? else {
            return Ok(());
        };
        let Some(spec) = current.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        self.api
            .replace(&self.name, &PostParams::default(), &current)
            .await
            .context("releasing the lease")?;
        Ok(())
    }

    fn observe(&mut self, spec: LeaseSpec) {
        let changed = self.observed.as_ref().is_none_or(|(seen, _)| *seen != spec);
        if changed {
            self.observed = Some((spec, Instant::now()));
        }
    }

    /// Whether this replica may write the lease: it holds it, nobody does, or the holder has
    /// not renewed for the lease's duration as measured by this replica's clock.
    fn may_take(&self, spec: &LeaseSpec) -> bool {
        let observed_at = self.observed.as_ref().map(|(_, at)| *at);
        may_take(spec, &self.identity, observed_at, Instant::now())
    }
}

/// The lease spec claiming it for `identity`, counting a transition when the holder changes.
fn claim(
    identity: &str,
    previous: Option<&LeaseSpec>,
    now: Timestamp,
    lease_duration: Duration,
) -> LeaseSpec {
    let held = previous.is_some_and(|p| p.holder_identity.as_deref() == Some(identity));
    let transitions = previous.and_then(|p| p.lease_transitions).unwrap_or(0);
    LeaseSpec {
        holder_identity: Some(identity.to_owned()),
        lease_duration_seconds: Some(i32::try_from(lease_duration.as_secs()).unwrap_or(i32::MAX)),
        acquire_time: match previous {
            Some(previous) if held => previous.acquire_time.clone(),
            _ => Some(MicroTime(now)),
        },
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(if held || previous.is_none() {
            transitions
        } else {
            transitions + 1
        }),
        ..LeaseSpec::default()
    }
}

/// client-go's rule: a lease may be written by its holder, by anyone when it has no holder, or
/// by anyone once it went unchanged for its duration since this replica first saw it.
fn may_take(spec: &LeaseSpec, identity: &str, observed_at: Option<Instant>, now: Instant) -> bool {
    match spec.holder_identity.as_deref() {
        None | Some("") => true,
        Some(holder) if holder == identity => true,
        Some(_) => {
            let duration = spec
                .lease_duration_seconds
                .map_or(UNSTATED_LEASE_DURATION, |seconds| {
                    Duration::from_secs(u64::from(seconds.max(0).unsigned_abs()))
                });
            observed_at.is_some_and(|at| now.duration_since(at) > duration)
        }
    }
}

/// `period` plus up to 20% so replicas started together do not collide on every attempt.
fn jittered(period: Duration) -> Duration {
    period + period.mul_f64(0.2 * fastrand::f64())
}

/// `<host>_<random>`, as controller-runtime forms holder identities: unique per process, and
/// naming the pod for whoever reads the Lease.
fn identity() -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|name| name.trim().to_owned())
        })
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "external-secrets".to_owned());
    format!("{host}_{:016x}", fastrand::u64(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held_by(holder: &str, seconds: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.to_owned()),
            lease_duration_seconds: Some(seconds),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn a_lease_is_taken_only_when_free_own_or_expired_by_our_clock() {
        let seen = Instant::now();
        let later = |seconds| seen + Duration::from_secs(seconds);
        assert!(may_take(&LeaseSpec::default(), "me", None, seen));
        assert!(may_take(&held_by("", 15), "me", Some(seen), seen));
        assert!(may_take(&held_by("me", 15), "me", Some(seen), seen));
        assert!(!may_take(
            &held_by("other", 15),
            "me",
            Some(seen),
            later(14)
        ));
        assert!(may_take(&held_by("other", 15), "me", Some(seen), later(16)));
        // Released leases (duration 1 s) expire quickly even if a holder were left behind.
        assert!(may_take(&held_by("other", 1), "me", Some(seen), later(2)));
        // Never observed: not expired yet, whatever the record's timestamps say.
        assert!(!may_take(&held_by("other", 15), "me", None, later(100)));
    }

    #[test]
    fn claims_count_transitions_only_when_the_holder_changes() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let first = claim("a", None, now, Duration::from_secs(15));
        assert_eq!(first.lease_transitions, Some(0));
        assert_eq!(first.holder_identity.as_deref(), Some("a"));
        assert_eq!(first.lease_duration_seconds, Some(15));
        let renewed = claim("a", Some(&first), now, Duration::from_secs(15));
        assert_eq!(renewed.lease_transitions, Some(0));
        assert_eq!(renewed.acquire_time, first.acquire_time);
        let taken = claim("b", Some(&renewed), now, Duration::from_secs(15));
        assert_eq!(taken.lease_transitions, Some(1));
        assert_eq!(taken.holder_identity.as_deref(), Some("b"));
    }
}
