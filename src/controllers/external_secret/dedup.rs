//! Identical provider reads made once across ExternalSecrets: when many ExternalSecrets (or a
//! ClusterExternalSecret's copies) read the same remote key of the same store, the reads that
//! start within a short window share one provider call. Values are held only for that window
//! (`--provider-read-dedup-window`, 0 turns this off), never beyond, so payloads are not
//! cached; a changed store (new version) never shares reads with its old configuration.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

/// One read in flight or just finished, shared by everyone asking for the same thing.
type SharedRead<T> = Shared<BoxFuture<'static, T>>;

/// Coalesces reads keyed by `K` that start within `window` of each other.
pub struct Coalescer<K, T: Clone> {
    window: Duration,
    state: Mutex<State<K, T>>,
}

struct State<K, T: Clone> {
    reads: HashMap<K, (Instant, SharedRead<T>)>,
    last_sweep: Instant,
}

impl<K: Eq + Hash, T: Clone + Send + Sync + 'static> Coalescer<K, T> {
    /// A coalescer sharing reads that start within `window` (zero: never shares).
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            state: Mutex::new(State {
                reads: HashMap::new(),
                last_sweep: Instant::now(),
            }),
        }
    }

    /// The result of `read` for `key`, or of the same read another caller started within the
    /// window. The flag says whether this call performed the read (for call counting).
    pub async fn read<F>(&self, key: K, read: F) -> (T, bool)
    where
        F: Future<Output = T> + Send + 'static,
    {
        if self.window.is_zero() {
            return (read.await, true);
        }
        let (shared, performed) = {
            let mut state = self.state.lock().expect("coalescer lock");
            let now = Instant::now();
            // Sweep at most once per window, so a burst costs no more than one pass each.
            if now.duration_since(state.last_sweep) >= self.window {
                let window = self.window;
                state
                    .reads
                    .retain(|_, (started, _)| now.duration_since(*started) < window);
                state.last_sweep = now;
            }
            match state.reads.get(&key) {
                Some((started, shared)) if now.duration_since(*started) < self.window => {
                    (shared.clone(), false)
                }
                _ => {
                    let shared = read.boxed().shared();
                    state.reads.insert(key, (now, shared.clone()));
                    (shared, true)
                }
            }
        };
        (shared.await, performed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    async fn counted_read(
        coalescer: &Coalescer<&'static str, String>,
        key: &'static str,
        calls: &Arc<AtomicUsize>,
    ) -> (String, bool) {
        let calls = calls.clone();
        coalescer
            .read(key, async move {
                calls.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                format!("value of {key}")
            })
            .await
    }

    #[tokio::test]
    async fn concurrent_and_recent_identical_reads_share_one_call() {
        let coalescer = Coalescer::new(Duration::from_millis(200));
        let calls = Arc::new(AtomicUsize::new(0));
        let (a, b) = tokio::join!(
            counted_read(&coalescer, "db", &calls),
            counted_read(&coalescer, "db", &calls)
        );
        assert_eq!(a.0, "value of db");
        assert_eq!(b.0, "value of db");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(a.1 ^ b.1, "exactly one caller performed the read");
        // Within the window: shared. A different key: its own read.
        assert!(!counted_read(&coalescer, "db", &calls).await.1);
        assert!(counted_read(&coalescer, "api", &calls).await.1);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // After the window: read again.
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(counted_read(&coalescer, "db", &calls).await.1);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_zero_window_never_shares() {
        let coalescer = Coalescer::new(Duration::ZERO);
        let calls = Arc::new(AtomicUsize::new(0));
        let _ = tokio::join!(
            counted_read(&coalescer, "db", &calls),
            counted_read(&coalescer, "db", &calls)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
