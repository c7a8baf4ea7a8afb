//! `spec.dataTo`: bulk pushes, expanded per store into `spec.data`-shaped entries as upstream
//! expands them. An entry targets the stores its `storeRef` names (it must be one of
//! `secretStoreRefs`) or selects by label (it must select one of them). Its keys are the source
//! Secret's (after `conversionStrategy`), filtered by `match.regexp`; without `remoteKey` each
//! key is pushed on its own, renamed by `rewrite`; with `remoteKey` the matched keys are pushed
//! together as one secret (and `rewrite` is refused). Explicit `spec.data` entries win over
//! dataTo ones for the same source key; two entries may never write the same remote location.

use std::collections::BTreeMap;

use external_secrets_crds::v1alpha1::{
    PushSecretConversionStrategy, PushSecretData, PushSecretDataTo, PushSecretMatch,
    PushSecretRemoteRef, PushSecretStoreRef,
};

use super::error::DataToError;
use super::plan::{reverse_keys, status_ref};
use crate::controllers::rewrite::KeyRewrite;
use crate::labels::selector_matches;
use crate::stores::{StoreIdentity, is_listed};

/// A source Secret's data.
pub type Data = BTreeMap<String, Vec<u8>>;

/// What to push to one store: the entries, and for bundle entries (by status ref) the matched
/// data they push instead of the whole source.
#[derive(Debug, Default, PartialEq)]
pub struct Expanded {
    /// `spec.data` and the expanded `spec.dataTo` entries.
    pub entries: Vec<PushSecretData>,
    /// The data each bundle entry pushes.
    pub bundles: BTreeMap<String, Data>,
}

/// Checks every entry's `storeRef` against `secretStoreRefs`, before any store is read.
pub fn validate_store_refs(
    data_to: &[PushSecretDataTo],
    store_refs: &[PushSecretStoreRef],
) -> Result<(), DataToError> {
    for (index, entry) in data_to.iter().enumerate() {
        let field = format!("spec.dataTo[{index}]");
        let Some(store_ref) = entry.store_ref.as_ref() else {
            return Err(DataToError::StoreRefRequired { field });
        };
        let name = store_ref.name.as_deref().filter(|name| !name.is_empty());
        match (name, &store_ref.label_selector) {
            (None, None) => return Err(DataToError::StoreRefEmpty { field }),
            (Some(name), _) => {
                if !is_listed(name, store_ref.kind, store_refs) {
                    return Err(DataToError::NotListed {
                        field,
                        name: name.to_owned(),
                    });
                }
            }
            (None, Some(_)) => {}
        }
        if entry
            .remote_key
            .as_deref()
            .is_some_and(|key| !key.is_empty())
            && !entry.rewrite.is_empty()
        {
            return Err(DataToError::RemoteKeyAndRewrite { field });
        }
    }
    Ok(())
}

/// Checks that every label-selecting entry selects at least one of the resolved `stores`, so a
/// mistyped selector is an error rather than a silent no-op.
pub fn validate_selectors_match(
    data_to: &[PushSecretDataTo],
    stores: &[StoreIdentity<'_>],
) -> Result<(), DataToError> {
    for (index, entry) in data_to.iter().enumerate() {
        let selects_by_label = entry.store_ref.as_ref().is_some_and(|store_ref| {
            store_ref.name.as_deref().is_none_or(str::is_empty)
                && store_ref.label_selector.is_some()
        });
        if selects_by_label && !stores.iter().any(|store| targets(entry, store)) {
            return Err(DataToError::SelectsNone { index });
        }
    }
    Ok(())
}

/// Whether `entry` pushes to `store`.
fn targets(entry: &PushSecretDataTo, store: &StoreIdentity<'_>) -> bool {
    let Some(store_ref) = &entry.store_ref else {
        return false;
    };
    if store_ref.kind != store.kind {
        return false;
    }
    match (
        store_ref.name.as_deref().filter(|name| !name.is_empty()),
        &store_ref.label_selector,
    ) {
        (Some(name), _) => name == store.name,
        (None, Some(selector)) => selector_matches(selector, store.labels),
        (None, None) => false,
    }
}

/// The entries to push to `store` from a source Secret holding `data`: the dataTo entries that
/// target it, expanded, merged with the explicit `data` entries.
pub fn expand(
    data_to: &[PushSecretDataTo],
    explicit: &[PushSecretData],
    store: &StoreIdentity<'_>,
    data: &Data,
) -> Result<Expanded, DataToError> {
    let mut expanded = Expanded::default();
    // remote key -> where it came from, across this store's dataTo entries.
    let mut claimed: BTreeMap<String, String> = BTreeMap::new();
    for (index, entry) in data_to.iter().enumerate() {
        if !targets(entry, store) {
            continue;
        }
        let field = format!("spec.dataTo[{index}]");
        let matched = matched_keys(entry, &field, data)?;
        if matched.is_empty() {
            continue;
        }
        if let Some(remote_key) = entry.remote_key.as_deref().filter(|key| !key.is_empty()) {
            claim(&mut claimed, remote_key, &format!("{field}:<bundle>"))?;
            let bundle = entry_for(None, remote_key, entry);
            expanded.bundles.insert(status_ref(&bundle), matched);
            expanded.entries.push(bundle);
        } else {
            let per_key = per_key_entries(entry, &field, &matched, data, &mut claimed)?;
            expanded.entries.extend(per_key);
        }
    }
    merge_explicit(&mut expanded.entries, explicit, data);
    check_destinations(&expanded.entries)?;
    Ok(expanded)
}

/// The source data of `entry` (the field `field`), its keys converted back and filtered by
/// `match.regexp`.
fn matched_keys(entry: &PushSecretDataTo, field: &str, data: &Data) -> Result<Data, DataToError> {
    let converted = reverse_keys(entry.conversion_strategy, data.clone()).map_err(|source| {
        DataToError::Conversion {
            field: field.to_owned(),
            source,
        }
    })?;
    let pattern = entry
        .r#match
        .as_ref()
        .and_then(|matching| matching.regexp.as_deref())
        .filter(|regexp| !regexp.is_empty())
        .map(regex::Regex::new)
        .transpose()
        .map_err(|source| DataToError::Regexp {
            field: field.to_owned(),
            source,
        })?;
    Ok(converted
        .into_iter()
        .filter(|(key, _)| pattern.as_ref().is_none_or(|pattern| pattern.is_match(key)))
        .collect())
}

/// One entry per matched key, renamed by the entry's `rewrite` rules; every remote key is
/// claimed in `claimed`.
fn per_key_entries(
    entry: &PushSecretDataTo,
    field: &str,
    matched: &Data,
    data: &Data,
    claimed: &mut BTreeMap<String, String>,
) -> Result<Vec<PushSecretData>, DataToError> {
    let rules = entry
        .rewrite
        .iter()
        .enumerate()
        .map(|(position, rule)| {
            KeyRewrite::compile(
                &format!("{field}.rewrite[{position}]"),
                rule.regexp.as_ref(),
                rule.transform.as_ref(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut entries = Vec::new();
    for converted_key in matched.keys() {
        let mut remote_key = converted_key.clone();
        for rule in &rules {
            remote_key = rule.apply(&remote_key)?;
        }
        if remote_key.is_empty() {
            return Err(DataToError::EmptyRemoteKey {
                field: field.to_owned(),
                key: converted_key.clone(),
            });
        }
        claim(claimed, &remote_key, &format!("{field}:{converted_key}"))?;
        let source_key = original_key(entry.conversion_strategy, converted_key, data);
        entries.push(entry_for(Some(source_key), &remote_key, entry));
    }
    Ok(entries)
}

/// Explicit entries win over dataTo entries reading the same source key.
fn merge_explicit(entries: &mut Vec<PushSecretData>, explicit: &[PushSecretData], data: &Data) {
    let explicit_keys: Vec<String> = explicit
        .iter()
        .filter_map(|entry| entry.r#match.secret_key.as_deref())
        .map(|key| original_key(explicit_strategy(explicit, key), key, data))
        .collect();
    entries.retain(|entry| {
        entry
            .r#match
            .secret_key
            .as_ref()
            .is_none_or(|key| !explicit_keys.contains(key))
    });
    entries.extend(explicit.iter().cloned());
}

/// No two entries may write the same remote key and property.
fn check_destinations(entries: &[PushSecretData]) -> Result<(), DataToError> {
    let mut locations: BTreeMap<(String, String), String> = BTreeMap::new();
    for entry in entries {
        let remote_ref = &entry.r#match.remote_ref;
        let property = remote_ref.property.clone().unwrap_or_default();
        let source = entry.r#match.secret_key.clone().unwrap_or_default();
        if let Some(existing) = locations.insert(
            (remote_ref.remote_key.clone(), property.clone()),
            source.clone(),
        ) {
            return Err(DataToError::SameDestination {
                remote_key: remote_ref.remote_key.clone(),
                property,
                existing,
                source_key: source,
            });
        }
    }
    Ok(())
}

/// Records that `origin` writes `remote_key`, refusing a second writer.
fn claim(
    claimed: &mut BTreeMap<String, String>,
    remote_key: &str,
    origin: &str,
) -> Result<(), DataToError> {
    if let Some(existing) = claimed.insert(remote_key.to_owned(), origin.to_owned()) {
        return Err(DataToError::Claimed {
            remote_key: remote_key.to_owned(),
            origin: origin.to_owned(),
            existing,
        });
    }
    Ok(())
}

/// A `spec.data`-shaped entry of dataTo `entry` (conversion already applied).
fn entry_for(
    secret_key: Option<String>,
    remote_key: &str,
    entry: &PushSecretDataTo,
) -> PushSecretData {
    PushSecretData {
        r#match: PushSecretMatch {
            secret_key,
            remote_ref: PushSecretRemoteRef {
                remote_key: remote_key.to_owned(),
                property: None,
            },
        },
        metadata: entry.metadata.clone(),
        conversion_strategy: PushSecretConversionStrategy::None,
    }
}

/// The conversion strategy of the explicit entry reading `key`.
fn explicit_strategy(explicit: &[PushSecretData], key: &str) -> PushSecretConversionStrategy {
    explicit
        .iter()
        .find(|entry| entry.r#match.secret_key.as_deref() == Some(key))
        .map_or(PushSecretConversionStrategy::None, |entry| {
            entry.conversion_strategy
        })
}

/// The source key that `converted` came from under `strategy`.
fn original_key(strategy: PushSecretConversionStrategy, converted: &str, data: &Data) -> String {
    if strategy == PushSecretConversionStrategy::None {
        return converted.to_owned();
    }
    data.keys()
        .find(|key| {
            let single: Data = [((*key).clone(), Vec::new())].into();
            reverse_keys(strategy, single)
                .ok()
                .is_some_and(|reversed| reversed.contains_key(converted))
        })
        .cloned()
        .unwrap_or_else(|| converted.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::SecretStoreRefKind;
    use serde_json::json;

    fn data_to(entries: serde_json::Value) -> Vec<PushSecretDataTo> {
        serde_json::from_value(entries).unwrap()
    }

    fn explicit(entries: serde_json::Value) -> Vec<PushSecretData> {
        serde_json::from_value(entries).unwrap()
    }

    fn store_refs() -> Vec<PushSecretStoreRef> {
        serde_json::from_value(
            json!([{"name": "vault"}, {"name": "shared", "kind": "ClusterSecretStore"}]),
        )
        .unwrap()
    }

    fn source() -> Data {
        [("APP_TOKEN", "t"), ("APP_ENV", "prod"), ("db-user", "u")]
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.as_bytes().to_vec()))
            .collect()
    }

    fn remote_keys(expanded: &Expanded) -> Vec<(Option<String>, String)> {
        expanded
            .entries
            .iter()
            .map(|entry| {
                (
                    entry.r#match.secret_key.clone(),
                    entry.r#match.remote_ref.remote_key.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn store_refs_must_be_listed_and_remote_key_excludes_rewrite() {
        assert!(
            validate_store_refs(
                &data_to(json!([{"storeRef": {"name": "vault"}}])),
                &store_refs()
            )
            .is_ok()
        );
        let cases = [
            (json!([{}]), "spec.dataTo[0]: storeRef is required"),
            (
                json!([{"storeRef": {}}]),
                "spec.dataTo[0]: storeRef must have name or labelSelector",
            ),
            (
                json!([{"storeRef": {"name": "vault"}}, {"storeRef": {"name": "shared"}}]),
                "spec.dataTo[1]: storeRef \"shared\" not found in secretStoreRefs",
            ),
        ];
        for (entries, message) in cases {
            assert_eq!(
                validate_store_refs(&data_to(entries), &store_refs())
                    .unwrap_err()
                    .to_string(),
                message
            );
        }
        let both = data_to(json!([{"storeRef": {"name": "vault"}, "remoteKey": "all",
            "rewrite": [{"regexp": {"source": "a", "target": "b"}}]}]));
        assert!(
            validate_store_refs(&both, &store_refs())
                .unwrap_err()
                .to_string()
                .contains("mutually exclusive")
        );
    }

    #[test]
    fn per_key_entries_are_matched_and_rewritten() {
        let labels = BTreeMap::new();
        let vault = StoreIdentity {
            name: "vault",
            kind: SecretStoreRefKind::SecretStore,
            labels: &labels,
        };
        let entries = data_to(
            json!([{"storeRef": {"name": "vault"}, "match": {"regexp": "^APP_"},
            "rewrite": [{"regexp": {"source": "^APP_", "target": "app/"}},
                        {"transform": {"template": "{{ .value | lower }}"}}]}]),
        );
        let expanded = expand(&entries, &[], &vault, &source()).unwrap();
        assert_eq!(
            remote_keys(&expanded),
            [
                (Some("APP_ENV".into()), "app/env".into()),
                (Some("APP_TOKEN".into()), "app/token".into())
            ]
        );
        assert!(expanded.bundles.is_empty());
        // Another store is not targeted.
        let other = StoreIdentity {
            name: "other",
            kind: SecretStoreRefKind::SecretStore,
            labels: &labels,
        };
        assert!(
            expand(&entries, &[], &other, &source())
                .unwrap()
                .entries
                .is_empty()
        );
    }

    #[test]
    fn a_bundle_pushes_only_the_matched_keys_under_one_remote_key() {
        let labels: BTreeMap<String, String> = [("tier".to_owned(), "prod".to_owned())].into();
        let shared = StoreIdentity {
            name: "shared",
            kind: SecretStoreRefKind::ClusterSecretStore,
            labels: &labels,
        };
        let entries = data_to(json!([{"storeRef": {"kind": "ClusterSecretStore",
            "labelSelector": {"matchLabels": {"tier": "prod"}}}, "match": {"regexp": "^APP_"},
            "remoteKey": "config/app"}]));
        assert!(validate_selectors_match(&entries, &[shared]).is_ok());
        let shared = StoreIdentity {
            name: "shared",
            kind: SecretStoreRefKind::ClusterSecretStore,
            labels: &labels,
        };
        let expanded = expand(&entries, &[], &shared, &source()).unwrap();
        assert_eq!(remote_keys(&expanded), [(None, "config/app".into())]);
        assert_eq!(
            expanded.bundles["config/app"].keys().collect::<Vec<_>>(),
            ["APP_ENV", "APP_TOKEN"]
        );
        let empty = BTreeMap::new();
        let unlabelled = StoreIdentity {
            name: "shared",
            kind: SecretStoreRefKind::ClusterSecretStore,
            labels: &empty,
        };
        assert_eq!(
            validate_selectors_match(&entries, &[unlabelled])
                .unwrap_err()
                .to_string(),
            "spec.dataTo[0]: labelSelector does not match any store in secretStoreRefs"
        );
    }

    #[test]
    fn explicit_entries_win_and_destinations_stay_unique() {
        let labels = BTreeMap::new();
        let vault = StoreIdentity {
            name: "vault",
            kind: SecretStoreRefKind::SecretStore,
            labels: &labels,
        };
        let all = data_to(json!([{"storeRef": {"name": "vault"}}]));
        let own = explicit(
            json!([{"match": {"secretKey": "db-user", "remoteRef": {"remoteKey": "db/user"}}}]),
        );
        let expanded = expand(&all, &own, &vault, &source()).unwrap();
        assert_eq!(
            remote_keys(&expanded),
            [
                (Some("APP_ENV".into()), "APP_ENV".into()),
                (Some("APP_TOKEN".into()), "APP_TOKEN".into()),
                (Some("db-user".into()), "db/user".into()),
            ]
        );
        let clash = explicit(
            json!([{"match": {"secretKey": "db-user", "remoteRef": {"remoteKey": "APP_ENV"}}}]),
        );
        let error = expand(&all, &clash, &vault, &source())
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("duplicate remote key \"APP_ENV\""),
            "{error}"
        );
        let collapsing = data_to(json!([{"storeRef": {"name": "vault"},
            "rewrite": [{"regexp": {"source": ".*", "target": "same"}}]}]));
        let error = expand(&collapsing, &[], &vault, &source())
            .unwrap_err()
            .to_string();
        assert!(error.contains("duplicate remote key \"same\""), "{error}");
        let bad = data_to(json!([{"storeRef": {"name": "vault"}, "match": {"regexp": "("}}]));
        let error = expand(&bad, &[], &vault, &source())
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("spec.dataTo[0].match.regexp: invalid"),
            "{error}"
        );
    }
}
