//! `readYourWrites`: the replication states (`X-Vault-Index`) seen in responses, sent back with
//! every request so a performance standby answers only once it has caught up with our writes.
//!
//! As the Go client's replication state store: a state is base64 of
//! `v1:<cluster>:<local index>:<replicated index>:<hmac>`; a new state replaces the kept states it
//! supersedes (both indexes at least as high), is kept beside those it neither supersedes nor is
//! superseded by, and is dropped when a kept one supersedes it. States that cannot be compared
//! (unparsable, another cluster) and more than two kept states restart from the new state alone.

use std::sync::Mutex;

use base64::Engine as _;

/// The response and request header carrying replication states.
pub(super) const INDEX_HEADER: &str = "X-Vault-Index";

/// The replication states to require, updated from every response.
#[derive(Debug, Default)]
pub(super) struct ReplicationStates {
    states: Mutex<Vec<String>>,
}

impl ReplicationStates {
    /// The states to send with the next request.
    pub(super) fn current(&self) -> Vec<String> {
        self.states.lock().expect("replication states lock").clone()
    }

    /// Records the state of a response, if it carried one.
    pub(super) fn record(&self, state: Option<&str>) {
        let Some(state) = state.filter(|state| !state.is_empty()) else {
            return;
        };
        let mut states = self.states.lock().expect("replication states lock");
        *states = merge(&states, state);
    }
}

/// Upstream's `MergeReplicationStates`.
fn merge(old: &[String], new: &str) -> Vec<String> {
    if old.is_empty() || old.len() > 2 {
        return vec![new.to_owned()];
    }
    let mut merged: Vec<String> = Vec::with_capacity(old.len() + 1);
    for kept in old {
        let Some(order) = compare(kept, new) else {
            return vec![new.to_owned()];
        };
        match order {
            Order::Newer => merged.push(kept.clone()),
            Order::Older => merged.push(new.to_owned()),
            Order::Concurrent => merged.extend([kept.clone(), new.to_owned()]),
        }
    }
    // Sorted and without duplicates, as Go's `strutil.RemoveDuplicates`.
    merged.sort();
    merged.dedup();
    merged
}

enum Order {
    /// The first state has both indexes at least as high as the second.
    Newer,
    /// The first state has both indexes at most as high.
    Older,
    /// Neither.
    Concurrent,
}

/// Compares two states of the same cluster; `None` if either is unparsable or they differ in
/// cluster.
fn compare(first: &str, second: &str) -> Option<Order> {
    let first = parse(first)?;
    let second = parse(second)?;
    if first.cluster != second.cluster {
        return None;
    }
    Some(
        if first.local >= second.local && first.replicated >= second.replicated {
            Order::Newer
        } else if first.local <= second.local && first.replicated <= second.replicated {
            Order::Older
        } else {
            Order::Concurrent
        },
    )
}

struct State {
    cluster: String,
    local: u64,
    replicated: u64,
}

fn parse(raw: &str) -> Option<State> {
    let decoded = base64::engine::general_purpose::STANDARD.decode(raw).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (state, _hmac) = text.rsplit_once(':')?;
    let mut parts = state.split(':');
    let (Some("v1"), Some(cluster), Some(local), Some(replicated), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    Some(State {
        cluster: cluster.to_owned(),
        local: local.parse().ok()?,
        replicated: replicated.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(cluster: &str, local: u64, replicated: u64) -> String {
        base64::engine::general_purpose::STANDARD
            .encode(format!("v1:{cluster}:{local}:{replicated}:abcd"))
    }

    #[test]
    fn newer_states_replace_older_ones() {
        let states = ReplicationStates::default();
        states.record(None);
        assert!(states.current().is_empty());
        states.record(Some(&state("c", 5, 5)));
        states.record(Some(&state("c", 6, 5)));
        assert_eq!(states.current(), [state("c", 6, 5)]);
        // An older state does not replace a newer one.
        states.record(Some(&state("c", 4, 4)));
        assert_eq!(states.current(), [state("c", 6, 5)]);
    }

    #[test]
    fn concurrent_states_are_both_kept_and_incomparable_ones_restart() {
        let states = ReplicationStates::default();
        states.record(Some(&state("c", 6, 1)));
        states.record(Some(&state("c", 1, 6)));
        let mut both = [state("c", 6, 1), state("c", 1, 6)];
        both.sort();
        assert_eq!(states.current(), both);
        states.record(Some(&state("other", 1, 1)));
        assert_eq!(states.current(), [state("other", 1, 1)]);
        states.record(Some("not base64!"));
        assert_eq!(states.current(), ["not base64!"]);
    }
}
