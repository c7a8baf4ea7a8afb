//! Reading a projected token file (a Kubernetes service-account token, a compute-resource token)
//! with a size bound, for backends that authenticate with a token the kubelet mounts and
//! rotates: read on every login, never cached, so a rotated token is picked up.

use std::io::Read as _;
use std::path::Path;

use crate::error::{ProviderError, Result};

/// Longest token file read: projected tokens are a few KiB.
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// The token at `path`, trimmed of surrounding whitespace. `what` names the token in messages
/// ("service account token"). A file that cannot be read is a configuration error that may heal
/// (the kubelet may not have written it yet), so it is temporary; a file over
/// [`MAX_TOKEN_FILE_BYTES`] is refused before more of it is read.
pub fn read_token_file(path: &Path, what: &str) -> Result<String> {
    let failure = |error: std::io::Error| {
        ProviderError::invalid_config(format!(
            "failed to read {what} from {}: {error}",
            path.display()
        ))
        .with_temporary(true)
    };
    let file = std::fs::File::open(path).map_err(failure)?;
    let mut token = String::new();
    file.take(MAX_TOKEN_FILE_BYTES + 1)
        .read_to_string(&mut token)
        .map_err(failure)?;
    if token.len() as u64 > MAX_TOKEN_FILE_BYTES {
        return Err(ProviderError::invalid_config(format!(
            "{what} at {} exceeds {MAX_TOKEN_FILE_BYTES} bytes",
            path.display()
        )));
    }
    Ok(token.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn reads_trimmed_and_bounds_the_size() {
        let dir = std::env::temp_dir().join(format!("token-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = dir.join("small");
        std::fs::write(&small, " tok\n").unwrap();
        assert_eq!(read_token_file(&small, "token").unwrap(), "tok");
        let large = dir.join("large");
        std::fs::write(&large, vec![b'a'; MAX_TOKEN_FILE_BYTES as usize + 1]).unwrap();
        let error = read_token_file(&large, "token").unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidConfig);
        assert!(!error.is_temporary());
        let error = read_token_file(&dir.join("absent"), "cr token").unwrap_err();
        assert!(error.is_temporary());
        assert!(
            error.message().starts_with("failed to read cr token from "),
            "{error}"
        );
    }
}
