//! Sprig's `derivePassword` (crypto.go): the Master Password algorithm (Lyndir's "Spectre"):
//! scrypt (N 32768, r 8, p 2, 64 bytes) of the master password salted with
//! `com.lyndir.masterpassword`, the user name's length (big-endian u32) and the user name; an
//! HMAC-SHA-256 seed over the same scope, the site's length and name and the counter; the seed's
//! first byte picks a template of the password type and each next byte a character of the
//! template's character class.

use hmac::{Hmac, Mac as _};
use sha2::Sha256;

use super::{Arity, Entry, FuncError, int, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[("derivePassword", Arity::Exact(5), |_, a| {
    let counter = int(&a[0])?;
    let counter = u32::try_from(counter)
        .map_err(|_| FuncError(format!("{counter} does not fit the counter's uint32")))?;
    let password = derive_password(
        counter,
        &text(&a[1])?,
        &string(&a[2])?,
        &string(&a[3])?,
        &string(&a[4])?,
    )?;
    Ok(Value::str(password))
})];

const SCOPE: &[u8] = b"com.lyndir.masterpassword";

/// The templates of each password type.
fn templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

/// The characters a template letter stands for.
fn characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

/// `SCOPE`, the length of `name` as a big-endian u32, and `name`.
fn scoped(name: &[u8]) -> Result<Vec<u8>, FuncError> {
    let length = u32::try_from(name.len()).map_err(|_| FuncError::from("name too long"))?;
    Ok([SCOPE, &length.to_be_bytes(), name].concat())
}

fn derive_password(
    counter: u32,
    kind: &str,
    password: &[u8],
    user: &[u8],
    site: &[u8],
) -> Result<String, FuncError> {
    let Some(templates) = templates(kind) else {
        return Ok(format!("cannot find password template {kind}"));
    };
    let params = scrypt::Params::new(15, 8, 2).map_err(|error| FuncError(error.to_string()))?;
    let mut key = [0u8; 64];
    if let Err(error) = scrypt::scrypt(password, &scoped(user)?, &params, &mut key) {
        return Ok(format!("failed to derive password: {error}"));
    }
    let mut mac =
        Hmac::<Sha256>::new_from_slice(&key).map_err(|error| FuncError(error.to_string()))?;
    mac.update(&scoped(site)?);
    mac.update(&counter.to_be_bytes());
    let seed = mac.finalize().into_bytes();
    let template = templates[usize::from(seed[0]) % templates.len()];
    Ok(template
        .bytes()
        .zip(seed.iter().skip(1))
        .map(|(class, byte)| {
            let choices = characters(class);
            char::from(choices[usize::from(*byte) % choices.len()])
        })
        .collect())
}
