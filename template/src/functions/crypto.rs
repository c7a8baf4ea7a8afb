//! Sprig's hashing and randomness (`sha1sum sha256sum sha512sum adler32sum bcrypt htpasswd
//! randBytes uuidv4 randAlphaNum randAlpha randAscii randNumeric`) and ESO's `rsaDecrypt`.
//! Randomness comes from the operating system, as Go's `crypto/rand`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rsa::pkcs1::DecodeRsaPrivateKey as _;
use rsa::pkcs8::DecodePrivateKey as _;
use sha1::Sha1;
use sha2::{Digest as _, Sha256, Sha512};

use super::builtins::count;
use super::{Arity, Ctx, Entry, FuncError, FuncResult, check_size, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("sha1sum", Arity::Exact(1), |_, a| {
        Ok(Value::str(hex(&Sha1::digest(&*string(&a[0])?))))
    }),
    ("sha256sum", Arity::Exact(1), |_, a| {
        Ok(Value::str(hex(&Sha256::digest(&*string(&a[0])?))))
    }),
    ("sha512sum", Arity::Exact(1), |_, a| {
        Ok(Value::str(hex(&Sha512::digest(&*string(&a[0])?))))
    }),
    ("adler32sum", Arity::Exact(1), |_, a| {
        Ok(Value::str(adler32(&string(&a[0])?).to_string()))
    }),
    ("bcrypt", Arity::Exact(1), |_, a| {
        Ok(Value::str(bcrypt(&string(&a[0])?)))
    }),
    ("htpasswd", Arity::Exact(3), htpasswd),
    ("randBytes", Arity::Exact(1), |_, a| {
        let size = count(&a[0])?;
        check_size(size)?;
        Ok(Value::str(STANDARD.encode(random_bytes(size)?)))
    }),
    ("uuidv4", Arity::Exact(0), |_, _| {
        Ok(Value::str(uuid::Uuid::new_v4().to_string()))
    }),
    ("randAlphaNum", Arity::Exact(1), |_, a| {
        random_string(
            &a[0],
            b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        )
    }),
    ("randAlpha", Arity::Exact(1), |_, a| {
        random_string(
            &a[0],
            b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        )
    }),
    ("randNumeric", Arity::Exact(1), |_, a| {
        random_string(&a[0], b"0123456789")
    }),
    ("randAscii", Arity::Exact(1), |_, a| {
        let printable: Vec<u8> = (32u8..=126).collect();
        random_string(&a[0], &printable)
    }),
    ("rsaDecrypt", Arity::Exact(4), rsa_decrypt),
];

/// Lower-case hex, as Go's `hex.EncodeToString`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for byte in bytes {
        a = (a + u32::from(*byte)) % 65521;
        b = (b + a) % 65521;
    }
    b << 16 | a
}

fn bcrypt(password: &[u8]) -> String {
    if password.len() > 72 {
        return "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes"
            .into();
    }
    match bcrypt::hash_with_result(password, 10) {
        Ok(parts) => parts.format_for_version(bcrypt::Version::TwoA),
        Err(error) => format!("failed to encrypt string with bcrypt: {error}"),
    }
}

fn htpasswd(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (user, password, algorithm) = (string(&args[0])?, string(&args[1])?, text(&args[2])?);
    if user.contains(&b':') {
        return Ok(Value::str(
            [b"invalid username: ".as_slice(), &user].concat(),
        ));
    }
    let hash = if algorithm == "sha" {
        format!("{{SHA}}{}", STANDARD.encode(Sha1::digest(&*password)))
    } else {
        bcrypt(&password)
    };
    Ok(Value::str([&user[..], b":", hash.as_bytes()].concat()))
}

/// `count` random bytes from the operating system.
pub fn random_bytes(count: usize) -> Result<Vec<u8>, FuncError> {
    let mut buffer = vec![0; count];
    getrandom::fill(&mut buffer).map_err(|_| FuncError("no randomness available".into()))?;
    Ok(buffer)
}

/// A uniform random number below `bound` (> 0).
pub fn random_below(bound: u64) -> Result<u64, FuncError> {
    let zone = u64::MAX - u64::MAX % bound;
    loop {
        let bytes = random_bytes(8)?;
        let value = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
        if value < zone {
            return Ok(value % bound);
        }
    }
}

fn random_string(length: &Value, alphabet: &[u8]) -> FuncResult {
    let length = super::int(length)?;
    if length < 0 {
        return Ok(Value::str(""));
    }
    check_size(length as usize)?;
    let mut out = Vec::with_capacity(length as usize);
    for _ in 0..length {
        out.push(alphabet[random_below(alphabet.len() as u64)? as usize]);
    }
    Ok(Value::str(out))
}

fn rsa_decrypt(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (scheme, hash) = (text(&args[0])?, text(&args[1])?);
    let (ciphertext, key) = (string(&args[2])?, string(&args[3])?);
    match scheme.as_str() {
        "None" => return Ok(Value::Str(ciphertext)),
        "RSA-OAEP" => {}
        other => {
            return Err(FuncError(format!(
                "decryption scheme {other} is not supported"
            )));
        }
    }
    let Some((block, _)) = super::pem::decode(&key) else {
        return Err("failed to decode PEM block".into());
    };
    let private_key = rsa::RsaPrivateKey::from_pkcs1_der(&block.bytes)
        .or_else(|_| rsa::RsaPrivateKey::from_pkcs8_der(&block.bytes))
        .map_err(|_| {
            if super::pkcs12::is_private_key(&block.bytes) {
                FuncError("could not parse RSA private key".into())
            } else {
                FuncError("could not parse private key: unable to parse private key type".into())
            }
        })?;
    let padding = match hash.as_str() {
        "SHA1" => rsa::Oaep::new::<Sha1>(),
        "SHA512" => rsa::Oaep::new::<Sha512>(),
        _ => rsa::Oaep::new::<Sha256>(),
    };
    let plaintext = private_key.decrypt(padding, &ciphertext).map_err(|_| {
        FuncError("error decrypting data with RSA: crypto/rsa: decryption error".into())
    })?;
    Ok(Value::str(plaintext))
}
