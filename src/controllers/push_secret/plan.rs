//! PushSecret decisions without I/O: how upstream keys the pushed entries in
//! `status.syncedPushSecrets`, which of them a new sync no longer covers, key conversion and
//! label selectors as list queries.

use std::collections::BTreeMap;

use external_secrets_crds::v1alpha1::{PushSecretConversionStrategy, PushSecretData};

/// Upstream's finalizer, present while `deletionPolicy: Delete` may have to clean up.
pub const FINALIZER: &str = "pushsecret.externalsecrets.io/finalizer";
/// Upstream's reasons and messages.
pub const REASON_SYNCED: &str = "Synced";
/// Upstream's reason for any failure.
pub const REASON_ERRORED: &str = "Errored";
/// Upstream's reason when the named source Secret is gone and what it pushed was removed.
pub const REASON_SOURCE_DELETED: &str = "SourceDeleted";
/// Upstream's message for [`REASON_SOURCE_DELETED`].
pub const MESSAGE_SOURCE_DELETED: &str = "source secret deleted; provider secrets cleaned up";
/// Upstream's message when every entry was pushed.
pub const MESSAGE_SYNCED: &str = "PushSecret synced successfully";

/// What was pushed, by store (`Kind/name`) and entry (`remoteKey[/property]`).
pub type Synced = BTreeMap<String, BTreeMap<String, PushSecretData>>;

/// Upstream's `statusRef`: the remote key, plus `/property` when one is set.
pub fn status_ref(data: &PushSecretData) -> String {
    let remote_ref = &data.r#match.remote_ref;
    match remote_ref.property.as_deref().filter(|p| !p.is_empty()) {
        Some(property) => format!("{}/{property}", remote_ref.remote_key),
        None => remote_ref.remote_key.clone(),
    }
}

/// The entries of `previous` that `current` no longer has, by store: what `deletionPolicy:
/// Delete` removes from the providers.
pub fn stale_entries(previous: &Synced, current: &Synced) -> Vec<(String, PushSecretData)> {
    previous
        .iter()
        .flat_map(|(store, entries)| {
            entries
                .iter()
                .filter(move |(key, _)| {
                    current
                        .get(store)
                        .is_none_or(|entries| !entries.contains_key(*key))
                })
                .map(move |(_, data)| (store.clone(), data.clone()))
        })
        .collect()
}

/// Two source keys became the same key when their conversion was reversed (the key named).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("secret name collision during conversion: {0}")]
pub struct KeyCollision(pub String);

/// Upstream's `ReverseKeys`: under `ReverseUnicode`, `_UXXXX_` sequences in keys become the
/// characters they encode (undoing the Unicode conversion of ExternalSecrets).
pub fn reverse_keys(
    strategy: PushSecretConversionStrategy,
    data: BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, Vec<u8>>, KeyCollision> {
    if strategy == PushSecretConversionStrategy::None {
        return Ok(data);
    }
    let pattern = regex::Regex::new("_U([0-9a-fA-F]{4})_").expect("valid pattern");
    let mut out = BTreeMap::new();
    for (key, value) in data {
        let reversed = pattern
            .replace_all(&key, |captures: &regex::Captures<'_>| {
                u32::from_str_radix(&captures[1], 16)
                    .ok()
                    .and_then(char::from_u32)
                    .map_or_else(|| captures[0].to_owned(), String::from)
            })
            .into_owned();
        if out.insert(reversed.clone(), value).is_some() {
            return Err(KeyCollision(reversed));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(remote_key: &str, property: Option<&str>) -> PushSecretData {
        serde_json::from_value(
            json!({"match": {"remoteRef": {"remoteKey": remote_key, "property": property}}}),
        )
        .unwrap()
    }

    #[test]
    fn status_refs_and_stale_entries() {
        assert_eq!(status_ref(&data("db", None)), "db");
        assert_eq!(status_ref(&data("db", Some("password"))), "db/password");
        let previous: Synced = [
            (
                "SecretStore/a".to_owned(),
                [
                    ("db".to_owned(), data("db", None)),
                    ("old".to_owned(), data("old", None)),
                ]
                .into(),
            ),
            (
                "SecretStore/gone".to_owned(),
                [("db".to_owned(), data("db", None))].into(),
            ),
        ]
        .into();
        let current: Synced = [(
            "SecretStore/a".to_owned(),
            [("db".to_owned(), data("db", None))].into(),
        )]
        .into();
        let stale: Vec<(String, String)> = stale_entries(&previous, &current)
            .into_iter()
            .map(|(store, data)| (store, status_ref(&data)))
            .collect();
        assert_eq!(
            stale,
            [
                ("SecretStore/a".to_owned(), "old".to_owned()),
                ("SecretStore/gone".to_owned(), "db".to_owned())
            ]
        );
    }

    #[test]
    fn reverse_unicode_restores_characters_and_detects_collisions() {
        let data: BTreeMap<String, Vec<u8>> = [("db_U002F_user".to_owned(), b"x".to_vec())].into();
        let reversed =
            reverse_keys(PushSecretConversionStrategy::ReverseUnicode, data.clone()).unwrap();
        assert!(reversed.contains_key("db/user"));
        assert_eq!(
            reverse_keys(PushSecretConversionStrategy::None, data.clone()).unwrap(),
            data
        );
        let colliding: BTreeMap<String, Vec<u8>> = [
            ("a_U002F_b".to_owned(), b"1".to_vec()),
            ("a/b".to_owned(), b"2".to_vec()),
        ]
        .into();
        assert!(reverse_keys(PushSecretConversionStrategy::ReverseUnicode, colliding).is_err());
    }
}
