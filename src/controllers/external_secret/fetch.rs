//! Reading an ExternalSecret's data from its providers: `spec.data` entries and
//! `spec.dataFrom` extract/find, each distinct remote read done once per sync, decoded,
//! converted and rewritten as upstream does.

use std::time::Duration;

use external_secrets_crds::v1::{
    ExternalSecret, ExternalSecretData, ExternalSecretDataFromRemoteRef,
    ExternalSecretDataRemoteRef, ExternalSecretDeletionPolicy, ExternalSecretFind,
    ExternalSecretNullBytePolicy, ExternalSecretRewrite, GeneratorRef, SecretStoreRef,
};
use external_secrets_providers::request::{
    ConversionStrategy, DecodingStrategy, Find, RemoteRef, convert_keys,
};
use external_secrets_providers::{
    Backend, ClientManager, ProviderError, SecretMap, SecretValue, SharedClient, StoreId,
};

use super::dedup::Coalescer;
use super::error::{EntryProblem, Error};
use crate::controllers::rewrite::KeyRewrite;
use crate::controllers::template::{SecretData, decode};
use crate::generators::{self, GeneratorSource};
use crate::metrics::Metrics;
use crate::stores::FoundStore;
use crate::stores::api_calls::Operation;

/// Everything one sync needs to reach providers.
pub struct Fetcher<'a> {
    /// Cached provider clients.
    pub clients: &'a ClientManager,
    /// Provider call counters.
    pub metrics: &'a Metrics,
    /// Reads shared with other ExternalSecrets' syncs.
    pub shared: &'a SharedReads,
    /// The ExternalSecret being synced.
    pub es: &'a ExternalSecret,
    /// Resolves (and checks) the store of an entry's `sourceRef.storeRef`, or the default.
    pub resolve: &'a (dyn Fn(Option<&SecretStoreRef>) -> Result<FoundStore, Error> + Sync),
    /// Where `sourceRef.generatorRef` objects are found.
    pub generators: &'a dyn GeneratorSource,
}

/// One remote read: the store as configured now, who asks (a ClusterSecretStore may
/// authenticate per namespace), and what is read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReadKey {
    store: StoreId,
    store_version: String,
    caller_namespace: Option<String>,
    remote_ref: RemoteRef,
}

/// Provider reads shared across the syncs of all ExternalSecrets (see [`Coalescer`]).
pub struct SharedReads {
    secrets: Coalescer<ReadKey, Result<SecretValue, ProviderError>>,
    maps: Coalescer<ReadKey, Result<SecretMap, ProviderError>>,
}

impl SharedReads {
    /// Shares reads starting within `window` of each other (zero: none).
    pub fn new(window: Duration) -> Self {
        Self {
            secrets: Coalescer::new(window),
            maps: Coalescer::new(window),
        }
    }
}

/// What a fetch produced: the data, and the entries skipped because their remote secret does
/// not exist (upstream's `MissingProviderSecret` events).
#[derive(Debug, Default)]
pub struct Fetched {
    /// Secret key to value.
    pub data: SecretData,
    /// One upstream event message per skipped entry.
    pub missing: Vec<String>,
}

impl Fetcher<'_> {
    /// Reads all data in upstream's order: `spec.dataFrom` entries merged in order, then
    /// `spec.data` entries over them. A remote secret that does not exist skips its entry
    /// unless the deletion policy is Retain, which fails the sync instead, as upstream does.
    pub async fn fetch(&self) -> Result<Fetched, Error> {
        let mut fetched = Fetched::default();
        for (index, entry) in self.es.spec.data_from.iter().enumerate() {
            self.fetch_data_from(index, entry, &mut fetched).await?;
        }
        for (index, entry) in self.es.spec.data.iter().enumerate() {
            self.fetch_data(index, entry, &mut fetched).await?;
        }
        Ok(fetched)
    }

    fn namespace(&self) -> &str {
        self.es.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// Whether a missing remote secret fails the sync (`deletionPolicy: Retain`).
    fn retain(&self) -> bool {
        matches!(
            self.es.spec.target.deletion_policy,
            ExternalSecretDeletionPolicy::Retain
        )
    }

    /// One `spec.dataFrom` entry: generated, extracted or found.
    async fn fetch_data_from(
        &self,
        index: usize,
        entry: &ExternalSecretDataFromRemoteRef,
        fetched: &mut Fetched,
    ) -> Result<(), Error> {
        let generator = entry
            .source_ref
            .as_ref()
            .and_then(|s| s.generator_ref.as_ref());
        let (what, read) = match (generator, &entry.extract, &entry.find) {
            (Some(reference), None, None) => {
                return self.generate(index, entry, reference, fetched).await;
            }
            (_, Some(extract), None) => (
                format!("error processing spec.dataFrom[{index}].extract, err"),
                MapRead::Extract(extract),
            ),
            (_, None, Some(find)) => (
                format!("error processing spec.dataFrom[{index}].find, err"),
                MapRead::Find(find),
            ),
            _ => return Err(Error::DataFromSource { index }),
        };
        let store_ref = entry.source_ref.as_ref().and_then(|s| s.store_ref.as_ref());
        let store = (self.resolve)(store_ref)?;
        let client = self.client(&store, &what).await?;
        let (found, shape) = self.read_map(&store, client, &read).await;
        let found = match found {
            Ok(found) => found,
            Err(source) if source.is_not_found() && !self.retain() => {
                fetched.missing.push(format!(
                    "secret does not exist at provider using spec.dataFrom[{index}]"
                ));
                return Ok(());
            }
            Err(source) => return Err(Error::Provider { what, source }),
        };
        let invalid = |problem: EntryProblem| Error::InvalidEntry {
            what: what.clone(),
            problem,
        };
        let strategy = shape.conversion;
        let keyed = if entry.rewrite.is_empty() {
            convert_keys(strategy, found)
                .map_err(|source| invalid(EntryProblem::Conversion { strategy, source }))?
        } else {
            rewrite(&entry.rewrite, found, &format!("spec.dataFrom[{index}]"))?
        };
        for key in keyed.keys() {
            check_key(key).map_err(invalid)?;
        }
        for (key, value) in keyed {
            let value = decoded(shape.decoding, value.into_bytes()).map_err(invalid)?;
            check_null_bytes(shape.null_bytes, &key, &value).map_err(invalid)?;
            fetched.data.insert(key, value);
        }
        Ok(())
    }

    /// A `dataFrom` entry's generator: its keys, rewritten and checked.
    async fn generate(
        &self,
        index: usize,
        entry: &ExternalSecretDataFromRemoteRef,
        reference: &GeneratorRef,
        fetched: &mut Fetched,
    ) -> Result<(), Error> {
        let field = format!("spec.dataFrom[{index}]");
        let generated = generators::generate(self.generators, self.namespace(), reference)
            .await
            .map_err(|source| Error::Generator {
                field: field.clone(),
                source,
            })?
            .into_iter()
            .map(|(key, value)| (key, SecretValue::new(value)))
            .collect();
        for (key, value) in rewrite(&entry.rewrite, generated, &field)? {
            check_key(&key).map_err(|problem| Error::InvalidEntry {
                what: field.clone(),
                problem,
            })?;
            fetched.data.insert(key, value.into_bytes());
        }
        Ok(())
    }

    /// Reads an `extract` (shared with other syncs) or `find`; the result and how to shape it.
    async fn read_map(
        &self,
        store: &FoundStore,
        client: SharedClient,
        read: &MapRead<'_>,
    ) -> (Result<SecretMap, ProviderError>, Shape) {
        match read {
            MapRead::Extract(extract) => {
                let remote_ref = RemoteRef::from(*extract);
                let key = read_key(store, self.namespace(), &remote_ref);
                let request = remote_ref.clone();
                let (result, performed) = self
                    .shared
                    .maps
                    .read(key, async move { client.get_secret_map(&request).await })
                    .await;
                if performed {
                    self.count(store, Operation::GetSecretMap(&remote_ref.key), &result);
                }
                let shape = Shape {
                    conversion: remote_ref.conversion_strategy,
                    decoding: remote_ref.decoding_strategy,
                    null_bytes: extract.null_byte_policy,
                };
                (result, shape)
            }
            MapRead::Find(find_spec) => {
                let find = Find::from(*find_spec);
                let result = client.get_all_secrets(&find).await;
                self.count(store, Operation::GetAllSecrets, &result);
                let shape = Shape {
                    conversion: find.conversion_strategy,
                    decoding: find.decoding_strategy,
                    null_bytes: find_spec.null_byte_policy,
                };
                (result, shape)
            }
        }
    }

    /// One `spec.data` entry: one remote value under its `secretKey`.
    async fn fetch_data(
        &self,
        index: usize,
        entry: &ExternalSecretData,
        fetched: &mut Fetched,
    ) -> Result<(), Error> {
        let what = format!(
            "error processing spec.data[{index}] (key: {}), err",
            entry.remote_ref.key
        );
        // `sourceRef.generatorRef` is deprecated and not implemented in `data` upstream: it
        // is ignored (the entry reads from its store), never an error.
        let store_ref = entry.source_ref.as_ref().and_then(|s| s.store_ref.as_ref());
        let store = (self.resolve)(store_ref)?;
        let remote_ref = RemoteRef::from(&entry.remote_ref);
        let client = self.client(&store, &what).await?;
        let key = read_key(&store, self.namespace(), &remote_ref);
        let request = remote_ref.clone();
        let (result, performed) = self
            .shared
            .secrets
            .read(key, async move { client.get_secret(&request).await })
            .await;
        if performed {
            self.count(&store, Operation::GetSecret(&remote_ref.key), &result);
        }
        let value = match result {
            Ok(value) => value.into_bytes(),
            Err(source) if source.is_not_found() && !self.retain() => {
                fetched.missing.push(format!(
                    "secret does not exist at provider using spec.dataFrom[{index}] (key={})",
                    entry.remote_ref.key
                ));
                return Ok(());
            }
            Err(source) => return Err(Error::Provider { what, source }),
        };
        let invalid = |problem: EntryProblem| Error::InvalidEntry {
            what: what.clone(),
            problem,
        };
        let value = decoded(remote_ref.decoding_strategy, value).map_err(invalid)?;
        check_null_bytes(entry.remote_ref.null_byte_policy, &entry.secret_key, &value)
            .map_err(invalid)?;
        fetched.data.insert(entry.secret_key.clone(), value);
        Ok(())
    }

    async fn client(&self, store: &FoundStore, what: &str) -> Result<SharedClient, Error> {
        store
            .client(self.clients, self.namespace())
            .await
            .map_err(|source| Error::Provider {
                what: format!("{what}: {}", store.describe()),
                source,
            })
    }

    fn count<T>(
        &self,
        store: &FoundStore,
        operation: Operation<'_>,
        result: &Result<T, ProviderError>,
    ) {
        let (provider, call) = store.api_call(operation);
        self.metrics
            .count_provider_call(provider, call, result.is_ok());
    }
}

/// The sharing key of reading `remote_ref` from `store` for an object in `namespace`.
fn read_key(store: &FoundStore, namespace: &str, remote_ref: &RemoteRef) -> ReadKey {
    let store_ref = store.store_ref();
    // A ClusterSecretStore may act per caller namespace (referent auth): then reads of
    // different namespaces are different reads.
    let per_caller = matches!(store, FoundStore::Cluster(_))
        && Backend::of(&store.spec().provider).is_ok_and(|backend| backend.depends_on_caller());
    let caller_namespace = per_caller.then(|| namespace.to_owned());
    ReadKey {
        store: store_ref.id,
        store_version: store_ref.version,
        caller_namespace,
        remote_ref: remote_ref.clone(),
    }
}

/// What a `dataFrom` entry reads: one remote map, or every secret a `find` matches.
enum MapRead<'a> {
    Extract(&'a ExternalSecretDataRemoteRef),
    Find(&'a ExternalSecretFind),
}

/// How the values of a `dataFrom` read are shaped: key conversion, value decoding, NUL bytes.
struct Shape {
    conversion: ConversionStrategy,
    decoding: DecodingStrategy,
    null_bytes: Option<ExternalSecretNullBytePolicy>,
}

/// A value decoded by `strategy`, failing with upstream's message.
fn decoded(strategy: DecodingStrategy, value: Vec<u8>) -> Result<Vec<u8>, EntryProblem> {
    decode(strategy, value).map_err(|source| EntryProblem::Decoding { strategy, source })
}

/// Upstream's rule for keys from `dataFrom`: only alphanumerics, `-`, `_` and `.`.
fn check_key(key: &str) -> Result<(), EntryProblem> {
    let valid = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(())
    } else {
        Err(EntryProblem::InvalidKey(key.to_owned()))
    }
}

/// `nullBytePolicy: Fail` refuses values containing NUL bytes (binary data is otherwise fine).
fn check_null_bytes(
    policy: Option<ExternalSecretNullBytePolicy>,
    key: &str,
    value: &[u8],
) -> Result<(), EntryProblem> {
    if policy == Some(ExternalSecretNullBytePolicy::Fail) && value.contains(&0) {
        return Err(EntryProblem::NullBytes(key.to_owned()));
    }
    Ok(())
}

/// `rewrite[]`, in order: `regexp` and `transform` rename every key, `merge` combines the
/// JSON values.
fn rewrite(
    rules: &[ExternalSecretRewrite],
    data: SecretMap,
    what: &str,
) -> Result<SecretMap, Error> {
    let mut data = data;
    for (index, rule) in rules.iter().enumerate() {
        let field = format!("{what}.rewrite[{index}]");
        if let Some(operation) = &rule.merge {
            let bytes = data
                .into_iter()
                .map(|(key, value)| (key, value.into_bytes()))
                .collect();
            data = crate::controllers::rewrite::merge(operation, bytes)
                .map_err(|problem| Error::InvalidEntry {
                    what: field.clone(),
                    problem: problem.into(),
                })?
                .into_iter()
                .map(|(key, value)| (key, SecretValue::new(value)))
                .collect();
            continue;
        }
        let rule = KeyRewrite::compile(&field, rule.regexp.as_ref(), rule.transform.as_ref())?;
        data = data
            .into_iter()
            .map(|(key, value)| Ok((rule.apply(&key)?, value)))
            .collect::<Result<_, Error>>()?;
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::v1::ExternalSecretRewriteRegexp;
    use external_secrets_providers::SecretValue;

    #[test]
    fn regexp_transform_and_merge_rewrites_apply_in_order() {
        let rule = |source: &str, target: &str| ExternalSecretRewrite {
            regexp: Some(ExternalSecretRewriteRegexp {
                source: source.into(),
                target: target.into(),
            }),
            ..ExternalSecretRewrite::default()
        };
        let data: SecretMap = [("path/db_user".to_owned(), SecretValue::new("u"))].into();
        let rewritten = rewrite(
            &[rule("^path/", ""), rule("db_(.*)", "database-$1")],
            data.clone(),
            "spec.dataFrom[0]",
        )
        .unwrap();
        assert_eq!(rewritten.keys().collect::<Vec<_>>(), ["database-user"]);
        let transform: ExternalSecretRewrite = serde_json::from_value(
            serde_json::json!({"transform": {"template": "{{ .value | upper }}"}}),
        )
        .unwrap();
        let upper = rewrite(
            &[rule("^path/", ""), transform],
            data.clone(),
            "spec.dataFrom[0]",
        )
        .unwrap();
        assert_eq!(upper.keys().collect::<Vec<_>>(), ["DB_USER"]);
        let error = rewrite(
            &[ExternalSecretRewrite::default()],
            data.clone(),
            "spec.dataFrom[0]",
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("spec.dataFrom[0].rewrite[0]:"), "{error}");
        let merge = ExternalSecretRewrite {
            merge: Some(Default::default()),
            ..ExternalSecretRewrite::default()
        };
        let error = rewrite(std::slice::from_ref(&merge), data, "spec.dataFrom[1]")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("spec.dataFrom[1].rewrite[0]: merge failed with failed to unmarshal"),
            "{error}"
        );
        let objects: SecretMap = [
            ("one".to_owned(), SecretValue::new(r#"{"a":"1"}"#)),
            ("two".to_owned(), SecretValue::new(r#"{"b":"2"}"#)),
        ]
        .into();
        let merged = rewrite(&[merge], objects, "spec.dataFrom[1]").unwrap();
        assert_eq!(merged.keys().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn data_from_keys_must_be_valid_secret_keys() {
        assert!(check_key("db.user-1_x").is_ok());
        let error = check_key("a/b").unwrap_err().to_string();
        assert!(error.contains("invalid secret keys"), "{error}");
    }

    #[test]
    fn null_bytes_fail_only_under_the_fail_policy() {
        let binary = b"A\x00B";
        assert!(check_null_bytes(None, "k", binary).is_ok());
        assert!(check_null_bytes(Some(ExternalSecretNullBytePolicy::Ignore), "k", binary).is_ok());
        assert!(check_null_bytes(Some(ExternalSecretNullBytePolicy::Fail), "k", b"AB").is_ok());
        let error = check_null_bytes(Some(ExternalSecretNullBytePolicy::Fail), "k", binary)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("fetched secret value for key \"k\" contains null bytes"));
    }
}
