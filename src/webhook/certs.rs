//! The serving certificate, read from `--cert-dir` (`tls.crt`, `tls.key`, and `ca.crt` for
//! the readiness check) and swapped in place when the files change, so a rotated certificate
//! (a renewed Secret volume) is served without a restart. Every TLS handshake asks
//! [`CertStore`] for the current certificate.
//!
//! Files that do not form a valid pair (mid-rotation, say) are refused and the previous
//! certificate stays in use until the next check.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::certcontroller::verify::{self, InvalidCertificate};

/// The file names in `--cert-dir` (upstream's, those of a `kubernetes.io/tls` Secret).
const CERT_FILE: &str = "tls.crt";
const KEY_FILE: &str = "tls.key";
const CA_FILE: &str = "ca.crt";

/// The certificate being served and what it was loaded from.
pub struct CertStore {
    directory: PathBuf,
    cert_file: String,
    key_file: String,
    provider: Arc<CryptoProvider>,
    current: RwLock<Option<Loaded>>,
}

/// The files last loaded and the key built from them.
struct Loaded {
    files: Files,
    key: Arc<CertifiedKey>,
}

/// The raw content of the three files, to notice changes.
#[derive(PartialEq)]
struct Files {
    cert: Vec<u8>,
    key: Vec<u8>,
    ca: Option<Vec<u8>>,
}

/// What a reload found.
#[derive(Debug, PartialEq, Eq)]
pub enum Reload {
    /// The files are the ones already served.
    Unchanged,
    /// A new certificate is served from now on.
    Loaded,
}

/// Why the files could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The files do not form a usable certificate and key.
    #[error("{0}")]
    Invalid(#[from] InvalidCertificate),
}

/// Why the served certificate is not valid (readiness reports it).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Nothing was loaded from the directory (named).
    #[error("no certificate loaded from {0}")]
    NotLoaded(String),
    /// The directory (named) has no CA file.
    #[error("{CA_FILE} missing in {0}")]
    CaMissing(String),
    /// The certificate does not chain to the CA or is not valid for the name and time.
    #[error("{0}")]
    Invalid(#[from] InvalidCertificate),
}

impl CertStore {
    /// A store serving nothing yet; call [`CertStore::reload`] to load `directory`.
    pub fn new(directory: PathBuf, provider: Arc<CryptoProvider>) -> Self {
        Self::with_names(directory, CERT_FILE, KEY_FILE, provider)
    }

    /// A store loading `cert_file` and `key_file` of `directory` (the metrics server's
    /// `--metrics-cert-name` and `--metrics-key-name`).
    pub fn with_names(
        directory: PathBuf,
        cert_file: &str,
        key_file: &str,
        provider: Arc<CryptoProvider>,
    ) -> Self {
        Self {
            directory,
            cert_file: cert_file.to_owned(),
            key_file: key_file.to_owned(),
            provider,
            current: RwLock::new(None),
        }
    }

    /// Reads the files and serves them when they changed and form a valid pair.
    pub fn reload(&self) -> Result<Reload, LoadError> {
        let files = Files {
            cert: read(&self.directory.join(&self.cert_file))?,
            key: read(&self.directory.join(&self.key_file))?,
            ca: read(&self.directory.join(CA_FILE)).ok(),
        };
        let unchanged = self
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|loaded| loaded.files == files);
        if unchanged {
            return Ok(Reload::Unchanged);
        }
        let key = verify::certified_key(&files.cert, &files.key, &self.provider)?;
        let loaded = Loaded {
            files,
            key: Arc::new(key),
        };
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(loaded);
        Ok(Reload::Loaded)
    }

    /// Whether the served certificate chains to `ca.crt` and is valid for `dns_name` at `at`
    /// (upstream's readiness: now + 1 hour; its periodic check: now + lookahead).
    pub fn check(&self, dns_name: &str, at: SystemTime) -> Result<(), CheckError> {
        let guard = self.current.read().unwrap_or_else(|e| e.into_inner());
        let directory = || self.directory.display().to_string();
        let loaded = guard
            .as_ref()
            .ok_or_else(|| CheckError::NotLoaded(directory()))?;
        let ca = loaded
            .files
            .ca
            .as_deref()
            .ok_or_else(|| CheckError::CaMissing(directory()))?;
        Ok(verify::check_chain(
            ca,
            &loaded.key.cert,
            dns_name,
            at,
            self.provider.clone(),
        )?)
    }
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let guard = self.current.read().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().map(|loaded| loaded.key.clone())
    }
}

impl fmt::Debug for CertStore {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("CertStore")
            .field("directory", &self.directory)
            .finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path).map_err(|source| LoadError::Read {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::certcontroller::bundle::{self, Bundle};

    fn directory(name: &str) -> PathBuf {
        let directory = std::env::temp_dir().join(format!(
            "eso-webhook-certs-{name}-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        std::fs::create_dir_all(&directory).unwrap();
        directory
    }

    fn write(directory: &Path, bundle: &Bundle) {
        std::fs::write(directory.join(CA_FILE), &bundle.ca_cert).unwrap();
        std::fs::write(directory.join(CERT_FILE), &bundle.cert).unwrap();
        std::fs::write(directory.join(KEY_FILE), &bundle.key).unwrap();
    }

    fn bundle() -> Bundle {
        let names = ["localhost".to_owned(), "webhook.eso.svc".to_owned()];
        bundle::generate(&names, SystemTime::now()).unwrap()
    }

    fn served(store: &CertStore) -> Vec<u8> {
        let guard = store.current.read().unwrap();
        guard.as_ref().unwrap().key.cert[0].to_vec()
    }

    #[test]
    fn loads_reloads_on_change_and_keeps_the_last_good_certificate() {
        let directory = directory("reload");
        let store = CertStore::new(directory.clone(), verify::crypto_provider());
        assert!(matches!(store.reload(), Err(LoadError::Read { .. })));
        assert!(store.check("localhost", SystemTime::now()).is_err());

        let first = bundle();
        write(&directory, &first);
        assert_eq!(store.reload().unwrap(), Reload::Loaded);
        assert_eq!(store.reload().unwrap(), Reload::Unchanged);
        let in_an_hour = SystemTime::now() + Duration::from_secs(3600);
        store.check("localhost", in_an_hour).unwrap();
        assert!(store.check("elsewhere", in_an_hour).is_err());
        let first_served = served(&store);

        // A key that does not belong to the certificate is refused; the old pair stays.
        let second = bundle();
        std::fs::write(directory.join(KEY_FILE), &second.key).unwrap();
        assert!(matches!(
            store.reload(),
            Err(LoadError::Invalid(InvalidCertificate::KeyMismatch(_)))
        ));
        assert_eq!(served(&store), first_served);

        write(&directory, &second);
        assert_eq!(store.reload().unwrap(), Reload::Loaded);
        assert_ne!(served(&store), first_served);
        store.check("webhook.eso.svc", in_an_hour).unwrap();

        // Without ca.crt the certificate is served but not ready.
        std::fs::remove_file(directory.join(CA_FILE)).unwrap();
        assert_eq!(store.reload().unwrap(), Reload::Loaded);
        assert!(
            store
                .check("localhost", in_an_hour)
                .unwrap_err()
                .to_string()
                .contains("ca.crt missing")
        );
        std::fs::remove_dir_all(directory).unwrap();
    }
}
