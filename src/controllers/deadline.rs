//! A deadline on every reconcile (issue 23): one slow backend must not hold a worker forever.
//! Each provider call already ends within `CALL_DEADLINE` (retries included), but a reconcile
//! may make many calls in a row (one per `data` entry, one per store of a PushSecret), and a
//! Kubernetes write can stall too. Upstream has no equivalent (controller-runtime's reconciles
//! run as long as they take), hence no flag.
//!
//! On expiry the reconcile's future is dropped where it waits: no further write happens (no
//! status, no Secret, no provider delete), so what it did before stays as it was, the error
//! says why, and the controller retries the object with its per-object backoff.

use std::time::Duration;

use external_secrets_providers::resilient::CALL_DEADLINE;

/// How long one reconcile may run: one provider call running to its own deadline, plus five
/// minutes for everything else (further calls, reads and writes of Kubernetes objects).
pub const RECONCILE_DEADLINE: Duration = Duration::from_secs(CALL_DEADLINE.as_secs() + 300);

/// A reconcile ran past [`RECONCILE_DEADLINE`].
#[derive(Debug, thiserror::Error)]
#[error("reconcile did not finish within {}s and was stopped; retried with backoff", RECONCILE_DEADLINE.as_secs())]
pub struct DeadlineExceeded;

/// `reconcile`'s result, or [`DeadlineExceeded`] once it has run for [`RECONCILE_DEADLINE`].
pub async fn within<T, E: From<DeadlineExceeded>>(
    reconcile: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    within_after(RECONCILE_DEADLINE, reconcile).await
}

async fn within_after<T, E: From<DeadlineExceeded>>(
    deadline: Duration,
    reconcile: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    tokio::time::timeout(deadline, reconcile)
        .await
        .unwrap_or_else(|_| Err(DeadlineExceeded.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[derive(Debug)]
    struct Failed(String);

    impl From<DeadlineExceeded> for Failed {
        fn from(error: DeadlineExceeded) -> Self {
            Failed(error.to_string())
        }
    }

    #[tokio::test]
    async fn a_hanging_reconcile_ends_at_the_deadline_and_writes_nothing_after_it() {
        let wrote = Arc::new(AtomicBool::new(false));
        let writer = Arc::clone(&wrote);
        let result: Result<(), Failed> = within_after(Duration::from_millis(20), async move {
            // A provider that never answers, then the write that would follow it.
            std::future::pending::<()>().await;
            writer.store(true, Ordering::SeqCst);
            Ok(())
        })
        .await;
        let Err(Failed(message)) = result else {
            panic!("a hanging reconcile succeeded")
        };
        assert_eq!(
            message,
            "reconcile did not finish within 900s and was stopped; retried with backoff"
        );
        // The dropped reconcile can do nothing more.
        assert!(!wrote.load(Ordering::SeqCst));
        assert_eq!(Arc::strong_count(&wrote), 1, "the reconcile future is gone");
    }

    #[tokio::test]
    async fn a_reconcile_within_the_deadline_keeps_its_result() {
        let slow = within_after(Duration::from_secs(60), async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok::<_, Failed>(7)
        });
        assert_eq!(slow.await.unwrap(), 7);
        let failing = within(async { Err::<(), _>(Failed("provider said no".into())) });
        assert_eq!(failing.await.unwrap_err().0, "provider said no");
    }
}
