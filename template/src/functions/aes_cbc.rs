//! Sprig's `encryptAES` and `decryptAES` (crypto.go): AES-256-CBC whose key is the password's
//! bytes, zero-padded or cut to 32; PKCS#7 padding; a random IV written before the ciphertext;
//! standard base64 with padding. Decryption checks no padding bytes: it drops as many bytes as
//! the last one says, and fails with Go's runtime messages where Go panics.

use aes::cipher::{BlockCipherDecrypt as _, KeyInit as _};

use super::crypto::random_bytes;
use super::encoding::decode_base64;
use super::pkcs12_write::aes256_cbc;
use super::{Arity, Entry, FuncError, string};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("encryptAES", Arity::Exact(2), |_, a| {
        Ok(Value::str(encrypt(&string(&a[0])?, &string(&a[1])?)?))
    }),
    ("decryptAES", Arity::Exact(2), |_, a| {
        Ok(Value::str(decrypt(&string(&a[0])?, &string(&a[1])?)?))
    }),
];

const BLOCK: usize = 16;

/// The password's first 32 bytes, zero-padded.
fn key(password: &[u8]) -> [u8; 32] {
    let mut key = [0; 32];
    key.iter_mut().zip(password).for_each(|(k, p)| *k = *p);
    key
}

fn encrypt(password: &[u8], plaintext: &[u8]) -> Result<String, FuncError> {
    use base64::Engine as _;
    if plaintext.is_empty() {
        return Ok(String::new());
    }
    let iv: [u8; BLOCK] = random_bytes(BLOCK)?
        .try_into()
        .map_err(|_| FuncError::from("short random read"))?;
    let mut out = iv.to_vec();
    out.extend(aes256_cbc(&key(password), iv, plaintext));
    Ok(base64::engine::general_purpose::STANDARD.encode(out))
}

fn decrypt(password: &[u8], encoded: &[u8]) -> Result<Vec<u8>, FuncError> {
    if encoded.is_empty() {
        return Ok(Vec::new());
    }
    let crypt = decode_base64(encoded, false)?;
    if crypt.len() < BLOCK {
        // Go slices a buffer of base64's DecodedLen.
        let capacity = encoded.len() / 4 * 3;
        return Err(FuncError(format!(
            "runtime error: slice bounds out of range [:{BLOCK}] with capacity {capacity}"
        )));
    }
    let (iv, blocks) = crypt.split_at(BLOCK);
    if blocks.len() % BLOCK != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    let cipher = aes::Aes256::new(&key(password).into());
    let mut previous: [u8; BLOCK] = iv.try_into().map_err(|_| FuncError::from("short IV"))?;
    let mut plain = Vec::with_capacity(blocks.len());
    for chunk in blocks.chunks_exact(BLOCK) {
        let mut block = aes::Block::try_from(chunk).map_err(|_| FuncError::from("short block"))?;
        cipher.decrypt_block(&mut block);
        plain.extend(block.iter().zip(previous).map(|(byte, prev)| byte ^ prev));
        previous.copy_from_slice(chunk);
    }
    let Some(&last) = plain.last() else {
        return Err("runtime error: index out of range [-1]".into());
    };
    let keep = plain.len() as i64 - i64::from(last);
    if keep < 0 {
        return Err(FuncError(format!(
            "runtime error: slice bounds out of range [:{keep}]"
        )));
    }
    plain.truncate(keep as usize);
    Ok(plain)
}
