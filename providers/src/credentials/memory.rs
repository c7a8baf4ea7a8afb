//! An in-memory [`SecretSource`]: referenced Secrets and ConfigMaps for tests, without a cluster.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::{KubeSecret, SecretSource};
use crate::error::Result;
use crate::value::SecretValue;

/// An in-memory [`SecretSource`], for tests here and in the controllers.
#[derive(Default)]
pub struct MemorySecretSource {
    secrets: Mutex<BTreeMap<(String, String), KubeSecret>>,
    config_maps: Mutex<BTreeMap<(String, String), BTreeMap<String, String>>>,
}

impl MemorySecretSource {
    /// Adds a Secret.
    pub fn with_secret(
        self,
        namespace: &str,
        name: &str,
        labels: &[(&str, &str)],
        data: &[(&str, &str)],
    ) -> Self {
        let secret = KubeSecret {
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            data: data
                .iter()
                .map(|(k, v)| ((*k).to_owned(), SecretValue::from(*v)))
                .collect(),
        };
        self.with_kube_secret(namespace, name, secret)
    }

    /// Adds a Secret as read from a manifest (binary values included), for `render`.
    pub fn with_kube_secret(self, namespace: &str, name: &str, secret: KubeSecret) -> Self {
        self.secrets
            .lock()
            .unwrap()
            .insert((namespace.into(), name.into()), secret);
        self
    }

    /// Adds a ConfigMap.
    pub fn with_config_map(self, namespace: &str, name: &str, data: &[(&str, &str)]) -> Self {
        let data = data
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.config_maps
            .lock()
            .unwrap()
            .insert((namespace.into(), name.into()), data);
        self
    }
}

#[async_trait]
impl SecretSource for MemorySecretSource {
    async fn secret(&self, namespace: &str, name: &str) -> Result<Option<KubeSecret>> {
        let key = (namespace.to_owned(), name.to_owned());
        Ok(self.secrets.lock().unwrap().get(&key).cloned())
    }

    async fn config_map(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<BTreeMap<String, String>>> {
        let key = (namespace.to_owned(), name.to_owned());
        Ok(self.config_maps.lock().unwrap().get(&key).cloned())
    }
}
