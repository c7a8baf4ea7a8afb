//! Why a PushSecret sync failed, each variant naming the field, store or remote key at fault.
//! The message is the status condition's (upstream's wording); `reason()` is a bounded label
//! for logs; `is_temporary()` decides between backoff and waiting for a change of the
//! PushSecret: a spec that can only be fixed by editing it is not retried.

use external_secrets_crds::v1::SecretStoreRefKind;
use external_secrets_providers::ProviderError;
use external_secrets_providers::duration::DurationError;

use super::plan::KeyCollision;
use crate::controllers::rewrite::RewriteError;

/// Why a sync failed (the status already says so).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `spec.refreshInterval` is not a duration.
    #[error("spec.refreshInterval: {0}")]
    RefreshInterval(#[source] DurationError),
    /// A `spec.dataTo` entry's `storeRef` is unusable as written.
    #[error("{0}")]
    DataToStoreRef(#[source] DataToError),
    /// A `spec.dataTo` entry's selector selects none of the stores (their labels may change).
    #[error("{0}")]
    DataToSelector(#[source] DataToError),
    /// `spec.secretStoreRefs[index]` has neither a name nor a label selector.
    #[error("spec.secretStoreRefs[{index}]: name or labelSelector is required")]
    StoreRef {
        /// The entry's index.
        index: usize,
    },
    /// A store named in `spec.secretStoreRefs` does not exist (yet).
    #[error("could not get {kind:?} {name:?}, not found")]
    StoreNotFound {
        /// SecretStore or ClusterSecretStore.
        kind: SecretStoreRefKind,
        /// The store's name.
        name: String,
    },
    /// Reading the stores from the API failed.
    #[error("{0}")]
    StoreLookup(#[source] kube::Error),
    /// A store may not be used from this namespace (ClusterSecretStore conditions).
    #[error(transparent)]
    Store(#[from] crate::stores::Error),
    /// The source Secrets could not be read or generated.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Pushing to a store failed.
    #[error("set secret failed: {0}")]
    Push(#[source] PushError),
    /// Deleting what is no longer pushed failed.
    #[error("Failed to Delete Secrets from Provider: {0}")]
    DeleteStale(#[source] DeleteError),
    /// Cleaning up after the source Secret was deleted failed.
    #[error("failed to cleanup provider secrets: {0}")]
    Cleanup(#[source] DeleteError),
    /// Writing status or finalizers failed.
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The reconcile ran past its deadline.
    #[error(transparent)]
    Deadline(#[from] crate::controllers::deadline::DeadlineExceeded),
}

/// Why the source Secrets could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The Secret named by `selector.secret.name` does not exist.
    #[error("could not get source secret: secret {0:?} not found")]
    Missing(String),
    /// `spec.selector.secret` names no Secret and has no selector.
    #[error("spec.selector.secret: name or selector is required")]
    NoSelector,
    /// Reading the source Secrets failed.
    #[error("could not get source secret: {0}")]
    Read(#[source] kube::Error),
    /// `spec.selector.generatorRef` could not generate.
    #[error("spec.selector.generatorRef: {0}")]
    Generator(#[source] crate::generators::Error),
}

/// Why pushing one source Secret failed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The ConfigMaps and Secrets `spec.template` names could not be read (yet).
    #[error("{0}")]
    TemplateSource(#[source] crate::controllers::template::SourcesError),
    /// `spec.template` could not be rendered (its sources or the data may change).
    #[error("spec.template: {0}")]
    Template(#[source] crate::controllers::template::Error),
    /// Expanding `spec.dataTo` against the source data failed.
    #[error("{0}")]
    DataTo(#[source] DataToError),
    /// No provider client for the store.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// `conversionStrategy` could not be reversed on the source keys.
    #[error("could not apply conversion strategy to keys: {0}")]
    Conversion(#[source] KeyCollision),
    /// `match.secretKey` names a key the source does not have.
    #[error("secret key {0} does not exist")]
    MissingKey(String),
    /// `updatePolicy: IfNotExists` could not ask whether the secret exists.
    #[error("could not verify if secret exists in store: {0}")]
    Exists(#[source] ProviderError),
    /// The provider refused the write.
    #[error("could not write remote ref {key} to target secretstore {store}: {source}")]
    Write {
        /// `match.secretKey` (empty for the whole Secret).
        key: String,
        /// The store's name.
        store: String,
        /// The provider's error.
        source: ProviderError,
    },
}

/// Why `spec.dataTo` cannot be used: an entry's store reference, its match or rewrite rules,
/// or the remote keys it produces (each names the entry's field and the keys, never values).
#[derive(Debug, thiserror::Error)]
pub enum DataToError {
    /// The entry has no `storeRef`.
    #[error("{field}: storeRef is required")]
    StoreRefRequired {
        /// E.g. `spec.dataTo[0]`.
        field: String,
    },
    /// The `storeRef` has neither a name nor a label selector.
    #[error("{field}: storeRef must have name or labelSelector")]
    StoreRefEmpty {
        /// The entry's field.
        field: String,
    },
    /// The `storeRef` names a store `secretStoreRefs` does not list.
    #[error("{field}: storeRef {name:?} not found in secretStoreRefs")]
    NotListed {
        /// The entry's field.
        field: String,
        /// The store's name.
        name: String,
    },
    /// `remoteKey` and `rewrite` are both set.
    #[error(
        "{field}: remoteKey and rewrite are mutually exclusive: rewrite is only supported in \
         per-key mode (without remoteKey)"
    )]
    RemoteKeyAndRewrite {
        /// The entry's field.
        field: String,
    },
    /// The label selector selects none of the stores.
    #[error("spec.dataTo[{index}]: labelSelector does not match any store in secretStoreRefs")]
    SelectsNone {
        /// The entry's index.
        index: usize,
    },
    /// `conversionStrategy` could not be reversed on the source keys.
    #[error("{field}: conversion failed: {source}")]
    Conversion {
        /// The entry's field.
        field: String,
        /// Why.
        source: KeyCollision,
    },
    /// `match.regexp` is not a regular expression.
    #[error("{field}.match.regexp: invalid regular expression: {source}")]
    Regexp {
        /// The entry's field.
        field: String,
        /// The parser's error.
        source: regex::Error,
    },
    /// A `rewrite` rule is unusable or failed on a key.
    #[error(transparent)]
    Rewrite(#[from] RewriteError),
    /// The rewrites turned a source key into an empty remote key.
    #[error("{field}: empty remote key produced for source key {key:?}")]
    EmptyRemoteKey {
        /// The entry's field.
        field: String,
        /// The source key (converted).
        key: String,
    },
    /// Two dataTo writers claim the same remote key.
    #[error("duplicate remote key {remote_key:?} from {origin} (conflicts with {existing})")]
    Claimed {
        /// The remote key.
        remote_key: String,
        /// The second writer (`spec.dataTo[i]:<key>`).
        origin: String,
        /// The first writer.
        existing: String,
    },
    /// Two entries write the same remote key and property.
    #[error("{}: source keys {existing:?} and {source_key:?} both map to the same destination", destination(.remote_key, .property))]
    SameDestination {
        /// The remote key.
        remote_key: String,
        /// The property (empty for none).
        property: String,
        /// The first entry's source key.
        existing: String,
        /// The second entry's source key.
        source_key: String,
    },
}

/// `duplicate remote key "k"`, with ` with property "p"` when there is one.
fn destination(remote_key: &str, property: &str) -> String {
    if property.is_empty() {
        format!("duplicate remote key {remote_key:?}")
    } else {
        format!("duplicate remote key {remote_key:?} with property {property:?}")
    }
}

/// Why deleting pushed secrets failed.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    /// The store could not be read from the API.
    #[error("{0}")]
    Lookup(#[source] kube::Error),
    /// No provider client for the store.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The provider refused the deletion.
    #[error("{0}")]
    Provider(#[source] ProviderError),
}

/// No provider client could be built for a store.
#[derive(Debug, thiserror::Error)]
#[error("could not get secrets client for store {store}: {source}")]
pub struct ClientError {
    /// The store's name.
    pub store: String,
    /// The provider's error.
    pub source: ProviderError,
}

impl Error {
    /// A bounded PascalCase reason for logs and metric labels.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::RefreshInterval(_) => "InvalidRefreshInterval",
            Error::DataToStoreRef(_) => "InvalidDataToStoreRef",
            Error::DataToSelector(_) => "DataToSelectsNoStore",
            Error::StoreRef { .. } => "InvalidStoreRef",
            Error::StoreNotFound { .. } => "StoreNotFound",
            Error::StoreLookup(_) => "StoreLookupFailed",
            Error::Store(error) => error.reason(),
            Error::Source(SourceError::Missing(_)) => "SourceSecretMissing",
            Error::Source(SourceError::NoSelector) => "InvalidSourceSelector",
            Error::Source(SourceError::Read(_)) => "SourceSecretReadFailed",
            Error::Source(SourceError::Generator(_)) => "GeneratorFailed",
            Error::Push(_) => "PushFailed",
            Error::DeleteStale(_) | Error::Cleanup(_) => "DeleteFailed",
            Error::Kube(_) => "KubernetesAPIError",
            Error::Deadline(_) => "ReconcileDeadlineExceeded",
        }
    }

    /// Whether retrying with backoff may help. Permanent: a spec that only an edit of the
    /// PushSecret fixes (which triggers a reconcile anyway). Everything that depends on
    /// source Secrets (not watched), stores or providers is retried: a provider's answer of any
    /// kind (a 401 from a token revoked for a while) can change without any object changing.
    pub fn is_temporary(&self) -> bool {
        match self {
            Error::RefreshInterval(_)
            | Error::DataToStoreRef(_)
            | Error::StoreRef { .. }
            | Error::Source(SourceError::NoSelector) => false,
            Error::Store(error) => error.is_temporary(),
            Error::Push(PushError::Client(client))
            | Error::DeleteStale(DeleteError::Client(client))
            | Error::Cleanup(DeleteError::Client(client)) => client.source.is_temporary(),
            Error::DataToSelector(_)
            | Error::StoreNotFound { .. }
            | Error::StoreLookup(_)
            | Error::Source(_)
            | Error::Push(_)
            | Error::DeleteStale(_)
            | Error::Cleanup(_)
            | Error::Kube(_)
            | Error::Deadline(_) => true,
        }
    }
}
