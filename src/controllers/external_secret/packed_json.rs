//! The watch caches' JSON buffers ([`super::cached_external_secret`], [`super::cached_secret`]),
//! LZ4-compressed against a dictionary of the API's own words.
//!
//! Why: at 10,000 ExternalSecrets the two buffers were most of the controller's heap (issue 24:
//! 607 bytes of spec and status per ExternalSecret, 789 bytes of trimmed metadata per managed
//! Secret), and most of each is field names and well-known keys and values that every object
//! repeats: `"secretStoreRef"`, `"reconcile.external-secrets.io/data-hash"`, `"SecretSynced"`.
//! A buffer too small to compress on its own shrinks to what is particular to its object when
//! those words are a dictionary both sides share. A dictionary holds words of the API, never
//! values of any one cluster, so it helps every user alike; a buffer with words it lacks still
//! packs and unpacks, only less small.

use lz4_flex::block::{compress_prepend_size_with_dict, decompress_with_dict};

/// No cached object's JSON comes near this (the API server stores objects of at most
/// 1.5 MiB); a buffer claiming more is not unpacked, so nothing allocates on its word.
const LARGEST_JSON: usize = 16 * 1024 * 1024;

/// `json` packed against `dictionary`.
pub fn pack(json: &[u8], dictionary: &[u8]) -> Box<[u8]> {
    compress_prepend_size_with_dict(json, dictionary).into_boxed_slice()
}

/// The JSON of a buffer [`pack`] made with the same `dictionary`; `None` if `packed` is not
/// one (it always is: only this module writes the buffers).
pub fn unpack(packed: &[u8], dictionary: &[u8]) -> Option<Vec<u8>> {
    let (size, compressed) = packed.split_first_chunk::<4>()?;
    let size = usize::try_from(u32::from_le_bytes(*size)).ok()?;
    if size > LARGEST_JSON {
        return None;
    }
    decompress_with_dict(compressed, size, dictionary).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: &[u8] = br#"{"spec":{"secretStoreRef":{"name":"","kind":"SecretStore"}}}"#;

    #[test]
    fn a_buffer_unpacks_to_its_json_and_the_dictionary_makes_it_smaller() {
        let json = br#"{"spec":{"secretStoreRef":{"name":"vault","kind":"SecretStore"}}}"#;
        let packed = pack(json, WORDS);
        assert_eq!(unpack(&packed, WORDS).as_deref(), Some(&json[..]));
        assert!(packed.len() < json.len() / 2, "{} bytes", packed.len());
        assert!(pack(json, b"").len() > packed.len());
    }

    #[test]
    fn a_buffer_with_words_the_dictionary_lacks_still_round_trips() {
        let json = "{\"ünïcode\":[1,2,3],\"\\n\":null}".as_bytes();
        assert_eq!(unpack(&pack(json, WORDS), WORDS).as_deref(), Some(json));
        assert_eq!(unpack(&pack(b"", WORDS), WORDS).as_deref(), Some(&b""[..]));
    }

    #[test]
    fn garbage_does_not_unpack() {
        assert_eq!(unpack(b"\xff\xff\xff\x7f\x00", WORDS), None);
        assert_eq!(unpack(b"", WORDS), None);
    }
}
