//! The `MFA` generator: an RFC 6238 TOTP code from a base32 seed kept in a Secret, with
//! upstream's keys `token` and `timeLeft` (seconds until the code changes). As upstream, the
//! seed's spaces are dropped and it is upper-cased, `length` (6) and `timePeriod` (30 s) have
//! defaults, `when` pins the time, and `algorithm` is read but not applied: upstream always
//! signs with HMAC-SHA-1, so codes here match the ones its users already rely on.

use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use external_secrets_crds::generators::{Mfa, MfaSpec};
use external_secrets_providers::ProviderError;
use external_secrets_providers::credentials::{CredentialResolver, Referent};
use ring::hmac;

use super::{Error, Generated, Generator};

const DEFAULT_LENGTH: i64 = 6;
const DEFAULT_PERIOD: i64 = 30;
/// The longest code accepted (upstream has no limit; longer codes are only zero padding).
const MAX_LENGTH: i64 = 64;

/// Why no code could be generated (upstream's messages; the seed is never named).
#[derive(Debug, thiserror::Error)]
pub enum MfaError {
    /// The Secret `spec.secret` names could not be read.
    #[error("failed to find secret for token key: {0}")]
    Secret(#[source] ProviderError),
    /// The Secret has no such key.
    #[error("secret key {0} does not exist in secret data map")]
    MissingKey(String),
    /// `spec.length` above [`MAX_LENGTH`].
    #[error("spec.length: must be at most {MAX_LENGTH}")]
    TooLong,
    /// The seed does not decode.
    #[error("failed to generate code for token key: {0}")]
    Code(#[source] InvalidSeed),
}

/// The seed is not base32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("failed to generate OTP code: the seed is not valid base32")]
pub struct InvalidSeed;

/// Generates the current code of the seed `spec.secret` names, read through `credentials`.
pub async fn generate(
    spec: &MfaSpec,
    credentials: CredentialResolver,
) -> Result<Generated, MfaError> {
    let name = spec.secret.name.as_deref().unwrap_or_default();
    let key = spec.secret.key.as_deref().unwrap_or_default();
    let mut secret = credentials
        .secret(name, None, Referent::Allowed)
        .await
        .map_err(MfaError::Secret)?;
    let seed = secret
        .data
        .remove(key)
        .ok_or_else(|| MfaError::MissingKey(key.to_owned()))?;
    let length = spec
        .length
        .filter(|length| *length > 0)
        .unwrap_or(DEFAULT_LENGTH);
    if length > MAX_LENGTH {
        return Err(MfaError::TooLong);
    }
    let period = spec
        .time_period
        .filter(|period| *period > 0)
        .unwrap_or(DEFAULT_PERIOD);
    let when = match &spec.when {
        Some(time) => time.0.as_second(),
        None => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs() as i64),
    };
    let (token, time_left) =
        totp(seed.expose(), length as usize, period, when).map_err(MfaError::Code)?;
    Ok([
        ("token".to_owned(), token.into_bytes()),
        ("timeLeft".to_owned(), time_left.to_string().into_bytes()),
    ]
    .into())
}

/// The `length`-digit code of `seed` (base32, spaces allowed) for the period holding the Unix
/// time `when`, and the seconds left in that period.
fn totp(seed: &[u8], length: usize, period: i64, when: i64) -> Result<(String, i64), InvalidSeed> {
    let cleaned: Vec<u8> = seed
        .iter()
        .filter(|byte| **byte != b' ')
        .map(u8::to_ascii_uppercase)
        .collect();
    let key = data_encoding::BASE32_NOPAD
        .decode(&cleaned)
        .map_err(|_| InvalidSeed)?;
    let counter = when.div_euclid(period) as u64;
    let tag = hmac::sign(
        &hmac::Key::new(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, &key),
        &counter.to_be_bytes(),
    );
    let sum = tag.as_ref();
    // RFC 4226 section 5.4: dynamic truncation.
    let offset = usize::from(sum[sum.len() - 1] & 0x0f);
    let value = u64::from(u32::from_be_bytes([
        sum[offset] & 0x7f,
        sum[offset + 1],
        sum[offset + 2],
        sum[offset + 3],
    ]));
    // The value is below 2^31, so lengths from 10 on only pad with zeros.
    let code = match u32::try_from(length)
        .ok()
        .and_then(|l| 10u64.checked_pow(l))
    {
        Some(modulus) => value % modulus,
        None => value,
    };
    Ok((format!("{code:0length$}"), period - when.rem_euclid(period)))
}

/// Generates TOTP codes.
pub struct MfaGenerator;

#[async_trait]
impl Generator for MfaGenerator {
    type Object = Mfa;
    type Spec = MfaSpec;
    const CLUSTER_FIELD: &'static str = "mfaSpec";

    async fn generate(
        &self,
        spec: MfaSpec,
        credentials: CredentialResolver,
    ) -> Result<Generated, Error> {
        Ok(generate(&spec, credentials).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 appendix B, SHA-1: the ASCII seed "12345678901234567890" in base32.
    const RFC_SEED: &[u8] = b"GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";

    #[test]
    fn rfc_6238_sha1_vectors() {
        for (when, code) in [
            (59, "94287082"),
            (1_111_111_109, "07081804"),
            (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"),
            (20_000_000_000, "65353130"),
        ] {
            assert_eq!(totp(RFC_SEED, 8, 30, when).unwrap().0, code, "at {when}");
        }
    }

    #[test]
    fn seeds_are_cleaned_and_codes_padded() {
        let spaced = b"gezd gnbv gy3t qojq gezd gnbv gy3t qojq";
        assert_eq!(totp(spaced, 8, 30, 59).unwrap(), ("94287082".into(), 1));
        // Six digits: the last six of the eight, with the seconds left in the period.
        assert_eq!(
            totp(RFC_SEED, 6, 30, 1_111_111_109).unwrap(),
            ("081804".into(), 1)
        );
        assert_eq!(totp(RFC_SEED, 12, 30, 59).unwrap().0, "001094287082");
        assert!(
            totp(b"not base32!", 6, 30, 0)
                .unwrap_err()
                .to_string()
                .contains("not valid base32")
        );
    }
}
