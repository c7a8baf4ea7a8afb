//! The client of the remote API server, kept for the lifetime of the provider client and
//! reconnected before expiring credentials (ServiceAccount tokens) run out.
//!
//! Upstream builds a client, and requests a ServiceAccount token, on every reconcile. Here the
//! client cache keeps provider clients for as long as their store is unchanged, so the session
//! requests a fresh token after four fifths of the previous one's lifetime instead.

use external_secrets_crds::v1::KubernetesProvider;
use tokio::sync::Mutex;
use tokio::time::Instant;

use super::connect::{Connection, connect};
use crate::credentials::CredentialResolver;
use crate::error::Result;

struct Current {
    client: kube::Client,
    renew_at: Option<Instant>,
}

/// A connection to the remote API server that renews itself.
pub(crate) struct Session {
    spec: KubernetesProvider,
    credentials: CredentialResolver,
    current: Mutex<Current>,
}

impl Session {
    /// Connects once, so a broken configuration fails when the client is built.
    pub(crate) async fn open(
        spec: &KubernetesProvider,
        credentials: CredentialResolver,
    ) -> Result<Self> {
        let current = fresh(connect(spec, &credentials).await?);
        Ok(Self {
            spec: spec.clone(),
            credentials,
            current: Mutex::new(current),
        })
    }

    /// The client, reconnected first if its credentials are due for renewal.
    pub(crate) async fn client(&self) -> Result<kube::Client> {
        let mut current = self.current.lock().await;
        if current
            .renew_at
            .is_some_and(|renew_at| Instant::now() >= renew_at)
        {
            *current = fresh(connect(&self.spec, &self.credentials).await?);
            tracing::debug!("renewed the kubernetes provider's service account token");
        }
        Ok(current.client.clone())
    }
}

fn fresh(connection: Connection) -> Current {
    Current {
        client: connection.client,
        renew_at: connection
            .renew_after
            .map(|renew_after| Instant::now() + renew_after),
    }
}
