//! Unbiased choices from the operating system's cryptographic random source, for generated
//! secrets.

use ring::rand::{SecureRandom, SystemRandom};

/// A uniformly random index below `bound` (> 0), by rejection sampling.
pub fn index(bound: usize) -> Result<usize, String> {
    let bound = u64::try_from(bound).map_err(|_| "bound out of range".to_owned())?;
    // The largest multiple of `bound` that fits: draws above it would favour small indexes.
    let limit = u64::MAX - u64::MAX % bound;
    loop {
        let draw = u64::from_le_bytes(bytes::<8>()?);
        if draw < limit {
            return usize::try_from(draw % bound).map_err(|_| "index out of range".to_owned());
        }
    }
}

/// `N` random bytes.
pub fn bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut buffer = [0u8; N];
    SystemRandom::new()
        .fill(&mut buffer)
        .map_err(|_| "the system random source failed".to_owned())?;
    Ok(buffer)
}
