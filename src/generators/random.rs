//! Unbiased choices from the operating system's cryptographic random source, for generated
//! secrets.

use ring::rand::{SecureRandom, SystemRandom};

/// Why no random choice could be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RandomError {
    /// The bound does not fit 64 bits.
    #[error("bound out of range")]
    Bound,
    /// The drawn index does not fit `usize`.
    #[error("index out of range")]
    Index,
    /// The operating system's random source failed.
    #[error("the system random source failed")]
    Source,
}

/// A uniformly random index below `bound` (> 0), by rejection sampling.
pub fn index(bound: usize) -> Result<usize, RandomError> {
    let bound = u64::try_from(bound).map_err(|_| RandomError::Bound)?;
    // The largest multiple of `bound` that fits: draws above it would favour small indexes.
    let limit = u64::MAX - u64::MAX % bound;
    loop {
        let draw = u64::from_le_bytes(bytes::<8>()?);
        if draw < limit {
            return usize::try_from(draw % bound).map_err(|_| RandomError::Index);
        }
    }
}

/// `N` random bytes.
pub fn bytes<const N: usize>() -> Result<[u8; N], RandomError> {
    let mut buffer = [0u8; N];
    SystemRandom::new()
        .fill(&mut buffer)
        .map_err(|_| RandomError::Source)?;
    Ok(buffer)
}
