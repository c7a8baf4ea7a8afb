//! From a remote key to the Vault API path of its data or metadata (upstream's `buildPath` and
//! `buildMetadataPath`).
//!
//! With `path` (the KV mount) set, a key may repeat the mount (and for KV v2 the `data/`
//! segment), which is removed before the mount (and `data/` or `metadata/`) is put back in front.
//! Without `path`, the key must contain the mount itself: for KV v2 `data` is inserted after its
//! first segment unless the key already contains `/data/`, and metadata paths are only known when
//! the key names its `data` segment.

use external_secrets_crds::v1::VaultKvStoreVersion;

use crate::error::{ProviderError, Result};

/// The KV engine a store reads: its mount and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Kv {
    /// `path`: the mount, if the store names it.
    pub mount: Option<String>,
    /// `version`.
    pub version: VaultKvStoreVersion,
}

impl Kv {
    /// Whether the engine is KV v2 (versions, metadata, check-and-set).
    pub(super) fn is_v2(&self) -> bool {
        self.version == VaultKvStoreVersion::V2
    }

    /// The API path of the data of `key`.
    pub(super) fn data_path(&self, key: &str) -> String {
        match &self.mount {
            Some(mount) => {
                let mut rest = key;
                if let Some(stripped) = key.strip_prefix(&format!("{mount}/")) {
                    rest = stripped;
                    if self.is_v2() {
                        rest = rest.strip_prefix("data/").unwrap_or(rest);
                    }
                }
                if self.is_v2() {
                    format!("{mount}/data/{rest}")
                } else {
                    format!("{mount}/{rest}")
                }
            }
            None if self.is_v2() && !key.contains("/data/") => match key.split_once('/') {
                Some((mount, rest)) => format!("{mount}/data/{rest}"),
                None => format!("{key}/data"),
            },
            None => key.to_owned(),
        }
    }

    /// The API path of the metadata of `key` (KV v2), or of the secret itself (KV v1, whose
    /// ownership marker lives in the data).
    pub(super) fn metadata_path(&self, key: &str) -> Result<String> {
        match (&self.mount, self.is_v2()) {
            (Some(mount), false) => Ok(format!("{mount}/{key}")),
            (None, false) => Ok(key.to_owned()),
            (Some(mount), true) => Ok(format!("{mount}/metadata/{key}")),
            (None, true) if key.contains("data") => Ok(key.replacen("/data/", "/metadata/", 1)),
            (None, true) => Err(ProviderError::invalid_request(
                "provided Path isn't a valid kv v2 path",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(mount: Option<&str>, version: VaultKvStoreVersion) -> Kv {
        Kv {
            mount: mount.map(str::to_owned),
            version,
        }
    }

    #[test]
    fn data_paths_follow_upstreams_examples() {
        use VaultKvStoreVersion::{V1, V2};
        let cases = [
            (Some("secret/path"), V2, "foo", "secret/path/data/foo"),
            (Some("secret/path"), V1, "foo", "secret/path/foo"),
            (
                Some("secret/path"),
                V2,
                "secret/path/foo",
                "secret/path/data/foo",
            ),
            (
                Some("secret/path"),
                V2,
                "secret/path/data/foo",
                "secret/path/data/foo",
            ),
            (
                Some("secret/path"),
                V1,
                "secret/path/foo",
                "secret/path/foo",
            ),
            (None, V2, "secret/path/foo", "secret/data/path/foo"),
            (None, V2, "secret/path/data/foo", "secret/path/data/foo"),
            (None, V1, "secret/path/foo", "secret/path/foo"),
            (Some("secret"), V2, "a/b/c", "secret/data/a/b/c"),
        ];
        for (mount, version, key, expected) in cases {
            assert_eq!(kv(mount, version).data_path(key), expected, "{key}");
        }
    }

    #[test]
    fn metadata_paths() {
        use VaultKvStoreVersion::{V1, V2};
        assert_eq!(
            kv(Some("secret"), V2).metadata_path("a/b").unwrap(),
            "secret/metadata/a/b"
        );
        assert_eq!(kv(Some("kv1"), V1).metadata_path("a").unwrap(), "kv1/a");
        assert_eq!(
            kv(None, V2).metadata_path("secret/data/a").unwrap(),
            "secret/metadata/a"
        );
        assert_eq!(
            kv(None, V2)
                .metadata_path("secret/a")
                .unwrap_err()
                .message(),
            "provided Path isn't a valid kv v2 path"
        );
    }
}
