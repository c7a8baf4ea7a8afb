//! The `SSHKey` generator: a fresh SSH key pair, as upstream's `sshkey` generator makes it.
//!
//! * `keyType` `rsa` (default; `keySize` bits, default 2048), `ecdsa` (`keySize` 256 — the
//!   default, and what any other size falls back to, as upstream — 384 or 521) or `ed25519`
//!   (`keySize` ignored).
//! * Keys: `privateKey`, the OpenSSH private key format (`-----BEGIN OPENSSH PRIVATE KEY-----`,
//!   unencrypted, carrying the comment), and `publicKey`, one `authorized_keys` line
//!   (`<type> <base64>[ <comment>]`) ending in a newline.
//!
//! Difference from upstream: RSA keys shorter than 2048 bits are refused (upstream's Go accepts
//! 1024); the base64 lines of the private key are 70 characters long, as `ssh-keygen` writes
//! them, where Go writes 64 (both read the same).

use async_trait::async_trait;
use external_secrets_crds::generators::{SshKey, SshKeySpec, SshKeyType};
use external_secrets_providers::credentials::CredentialResolver;
use ssh_key::private::{EcdsaKeypair, Ed25519Keypair, KeypairData, RsaKeypair};
use ssh_key::rand_core::OsRng;
use ssh_key::{EcdsaCurve, LineEnding, PrivateKey};

use super::{Error, Generated, Generator};

/// RSA key size when `keySize` is unset, upstream's.
const DEFAULT_RSA_BITS: i64 = 2048;

/// Why no key pair could be generated.
#[derive(Debug, thiserror::Error)]
pub enum SshKeyError {
    /// The blocking task generating the key did not finish.
    #[error("unable to generate SSH key: the key generation task failed")]
    Task,
    /// `keySize` is outside what RSA keys may have here.
    #[error("keySize: RSA keys must be 2048 to 8192 bits long, got {0}")]
    RsaSize(i64),
    /// The key library failed.
    #[error("unable to generate SSH key: {0}")]
    Key(#[from] ssh_key::Error),
}

/// Generates a key pair as `spec` says; the (CPU-bound) key generation runs off the async
/// workers.
pub async fn generate(spec: &SshKeySpec) -> Result<Generated, SshKeyError> {
    let spec = spec.clone();
    tokio::task::spawn_blocking(move || generate_now(&spec))
        .await
        .map_err(|_| SshKeyError::Task)?
}

fn generate_now(spec: &SshKeySpec) -> Result<Generated, SshKeyError> {
    let keypair = keypair(spec.key_type, spec.key_size)?;
    let comment = spec.comment.clone().unwrap_or_default();
    let private = PrivateKey::new(keypair, comment)?;
    let private_pem = private.to_openssh(LineEnding::LF)?;
    let mut public = private.public_key().to_openssh()?;
    public.push('\n');
    Ok([
        ("privateKey".to_owned(), private_pem.as_bytes().to_vec()),
        ("publicKey".to_owned(), public.into_bytes()),
    ]
    .into())
}

/// A new key pair of `key_type` and `key_size`.
fn keypair(key_type: SshKeyType, key_size: Option<i64>) -> Result<KeypairData, SshKeyError> {
    Ok(match key_type {
        SshKeyType::Rsa => {
            let bits = key_size.unwrap_or(DEFAULT_RSA_BITS);
            let bits = usize::try_from(bits)
                .ok()
                .filter(|bits| (2048..=8192).contains(bits))
                .ok_or(SshKeyError::RsaSize(bits))?;
            RsaKeypair::random(&mut OsRng, bits)?.into()
        }
        SshKeyType::Ecdsa => {
            let curve = match key_size {
                Some(384) => EcdsaCurve::NistP384,
                Some(521) => EcdsaCurve::NistP521,
                _ => EcdsaCurve::NistP256,
            };
            EcdsaKeypair::random(&mut OsRng, curve)?.into()
        }
        SshKeyType::Ed25519 => Ed25519Keypair::random(&mut OsRng).into(),
    })
}

/// Generates SSH key pairs.
pub struct SshKeyGenerator;

#[async_trait]
impl Generator for SshKeyGenerator {
    type Object = SshKey;
    type Spec = SshKeySpec;
    const CLUSTER_FIELD: &'static str = "sshKeySpec";

    async fn generate(&self, spec: SshKeySpec, _: CredentialResolver) -> Result<Generated, Error> {
        Ok(generate(&spec).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::{Algorithm, PublicKey};

    fn spec(key_type: SshKeyType, key_size: Option<i64>, comment: Option<&str>) -> SshKeySpec {
        SshKeySpec {
            key_type,
            key_size,
            comment: comment.map(str::to_owned),
        }
    }

    /// Parses both halves, checks they are one pair, and returns the private key's algorithm.
    fn parsed(generated: &Generated) -> (PrivateKey, String) {
        let private = std::str::from_utf8(&generated["privateKey"]).unwrap();
        assert!(
            private.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----\n"),
            "{private}"
        );
        let private = PrivateKey::from_openssh(private).unwrap();
        let public = String::from_utf8(generated["publicKey"].clone()).unwrap();
        assert!(public.ends_with('\n'), "{public:?}");
        let parsed_public = PublicKey::from_openssh(public.trim_end()).unwrap();
        assert_eq!(parsed_public.key_data(), private.public_key().key_data());
        (private, public)
    }

    #[tokio::test]
    async fn each_type_makes_a_matching_pair_with_the_comment() {
        let ed = generate(&spec(SshKeyType::Ed25519, None, Some("me@host")))
            .await
            .unwrap();
        let (private, public) = parsed(&ed);
        assert_eq!(private.algorithm(), Algorithm::Ed25519);
        assert_eq!(private.comment(), "me@host");
        assert!(public.starts_with("ssh-ed25519 AAAA"), "{public}");
        assert!(public.ends_with(" me@host\n"), "{public}");

        for (size, curve) in [
            (None, EcdsaCurve::NistP256),
            (Some(384), EcdsaCurve::NistP384),
            (Some(521), EcdsaCurve::NistP521),
            (Some(300), EcdsaCurve::NistP256),
        ] {
            let ecdsa = generate(&spec(SshKeyType::Ecdsa, size, None))
                .await
                .unwrap();
            let (private, public) = parsed(&ecdsa);
            assert_eq!(private.algorithm(), Algorithm::Ecdsa { curve });
            assert_eq!(public.split(' ').count(), 2, "no comment: {public}");
        }

        let rsa = generate(&spec(SshKeyType::Rsa, None, Some("c")))
            .await
            .unwrap();
        let (private, public) = parsed(&rsa);
        assert!(matches!(private.algorithm(), Algorithm::Rsa { .. }));
        let ssh_key::private::KeypairData::Rsa(keypair) = private.key_data() else {
            panic!("not an RSA key");
        };
        assert_eq!(
            keypair.public.n.as_positive_bytes().unwrap().len() * 8,
            2048
        );
        assert!(public.starts_with("ssh-rsa AAAA"), "{public}");
    }

    #[tokio::test]
    async fn two_runs_make_different_keys() {
        let spec = spec(SshKeyType::Ed25519, None, None);
        let first = generate(&spec).await.unwrap();
        let second = generate(&spec).await.unwrap();
        assert_ne!(first["publicKey"], second["publicKey"]);
    }

    #[tokio::test]
    async fn short_rsa_keys_are_refused_naming_the_field() {
        let error = generate(&spec(SshKeyType::Rsa, Some(1024), None))
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "keySize: RSA keys must be 2048 to 8192 bits long, got 1024"
        );
    }
}
