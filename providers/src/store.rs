//! Which store a client belongs to: kind, namespace and name, independent of the API types.

use std::fmt;

/// The two store kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// A namespaced `SecretStore`: reads credentials from its own namespace only.
    SecretStore,
    /// A cluster-scoped `ClusterSecretStore`: credentials name their namespace (or use the
    /// caller's, with referent auth).
    ClusterSecretStore,
}

impl StoreKind {
    /// The Kubernetes kind.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::SecretStore => "SecretStore",
            StoreKind::ClusterSecretStore => "ClusterSecretStore",
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The identity of one store object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreId {
    /// Its kind.
    pub kind: StoreKind,
    /// Its namespace (`None` for a ClusterSecretStore).
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl StoreId {
    /// A namespaced SecretStore.
    pub fn secret_store(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            kind: StoreKind::SecretStore,
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }

    /// A ClusterSecretStore.
    pub fn cluster_secret_store(name: impl Into<String>) -> Self {
        Self {
            kind: StoreKind::ClusterSecretStore,
            namespace: None,
            name: name.into(),
        }
    }
}

impl fmt::Display for StoreId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(formatter, "{} {namespace}/{}", self.kind, self.name),
            None => write!(formatter, "{} {}", self.kind, self.name),
        }
    }
}
