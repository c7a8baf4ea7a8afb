//! The function map templates see: Go's builtins, the Sprig functions upstream vendors (all of
//! `sprig.TxtFuncMap()` except `env`, `expandenv` and `getHostByName`, which upstream removed so
//! templates cannot read the controller's environment or the network), and ESO's own helpers.
//! As in Go, a template naming a function outside this map fails to parse.

pub mod aes_cbc;
pub mod builtins;
pub mod certs;
pub mod crypto;
pub mod date;
pub mod defaults;
pub mod der;
pub mod dicts;
pub mod encoding;
pub mod jwk;
pub mod keys;
pub mod lists;
pub mod master_password;
pub mod math;
pub mod paths;
pub mod pem;
pub mod pkcs12;
pub mod pkcs12_write;
pub mod pkix_name;
pub mod regex;
pub mod semver;
pub mod serialize;
pub mod strings;
pub mod text;
pub mod x509;
pub mod yaml_emit;
pub mod yaml_read;

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use super::limits::{COSTLY_CALL, MAX_WORK};
use super::value::{Bytes, Map, MapKind, Value, lossy};

/// What a function may touch besides its arguments: the render's map arena and work budget.
pub struct Ctx {
    /// Every map created during the render; emptied when it ends.
    pub arena: Vec<Map>,
    /// Work units left of [`MAX_WORK`].
    pub budget: u64,
}

/// Functions whose every call costs [`COSTLY_CALL`].
const COSTLY: &[&str] = &[
    "bcrypt",
    "htpasswd",
    "pkcs12key",
    "pkcs12keyPass",
    "pkcs12cert",
    "pkcs12certPass",
    "pemToPkcs12",
    "pemToPkcs12Pass",
    "fullPemToPkcs12",
    "fullPemToPkcs12Pass",
    "pemTruststoreToPKCS12",
    "pemTruststoreToPKCS12Pass",
    "jwkPrivateKeyPem",
    "rsaDecrypt",
    // Sprig's key generation (RSA up to 4096 bits), certificate signing, and scrypt with 32 MiB.
    "genPrivateKey",
    "derivePassword",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
];

impl Ctx {
    /// A context with `budget` work units left (at most [`MAX_WORK`]).
    pub fn new(arena: Vec<Map>, budget: u64) -> Ctx {
        Ctx {
            arena,
            budget: budget.min(MAX_WORK),
        }
    }

    /// Spends `units` of the budget, failing once it is exhausted.
    pub fn charge(&mut self, units: u64) -> Result<(), FuncError> {
        match self.budget.checked_sub(units) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => {
                self.budget = 0;
                Err(FuncError(format!(
                    "render exceeds its work budget of {MAX_WORK} units"
                )))
            }
        }
    }

    /// Spends the size of `value` (see [`MAX_WORK`]).
    pub fn charge_value(&mut self, value: &Value) -> Result<(), FuncError> {
        let size = value.size(self.budget);
        self.charge(size)
    }

    /// Spends what calling `name` with `args` costs up front: the call itself, its
    /// arguments, and [`COSTLY_CALL`] for costly functions.
    pub fn charge_call(&mut self, name: &str, args: &[Value]) -> Result<(), FuncError> {
        self.charge(1)?;
        if COSTLY.contains(&name) {
            self.charge(COSTLY_CALL)?;
        }
        args.iter().try_for_each(|arg| self.charge_value(arg))
    }

    /// A new `map[string]interface{}` registered with the arena.
    pub fn map(&mut self, entries: BTreeMap<String, Value>) -> Value {
        let map = Value::new_map(entries, MapKind::Any);
        self.arena.push(map.clone());
        Value::Map(map)
    }
}

/// A function failure; the evaluator prefixes `error calling NAME: `. Never carries argument
/// values.
#[derive(Debug)]
pub struct FuncError(pub String);

impl<T: std::fmt::Display> From<T> for FuncError {
    fn from(message: T) -> Self {
        FuncError(message.to_string())
    }
}

/// A function's result.
pub type FuncResult = Result<Value, FuncError>;

/// How many arguments a function takes.
#[derive(Clone, Copy, Debug)]
pub enum Arity {
    Exact(usize),
    AtLeast(usize),
}

impl Arity {
    /// Go's arity check, with Go's message.
    pub fn check(self, name: &str, got: usize) -> Result<(), String> {
        match self {
            Arity::Exact(want) if got != want => Err(format!(
                "wrong number of args for {name}: want {want} got {got}"
            )),
            Arity::AtLeast(want) if got < want => Err(format!(
                "wrong number of args for {name}: want at least {want} got {got}"
            )),
            _ => Ok(()),
        }
    }
}

/// A template function.
pub struct Function {
    pub arity: Arity,
    pub call: fn(&mut Ctx, &[Value]) -> FuncResult,
}

/// One registration: name, arity, implementation.
pub type Entry = (&'static str, Arity, fn(&mut Ctx, &[Value]) -> FuncResult);

static FUNCTIONS: LazyLock<HashMap<&'static str, Function>> = LazyLock::new(|| {
    let tables: [&[Entry]; 22] = [
        builtins::FUNCTIONS,
        strings::FUNCTIONS,
        text::FUNCTIONS,
        paths::FUNCTIONS,
        defaults::FUNCTIONS,
        lists::FUNCTIONS,
        dicts::FUNCTIONS,
        math::FUNCTIONS,
        encoding::FUNCTIONS,
        serialize::FUNCTIONS,
        regex::FUNCTIONS,
        crypto::FUNCTIONS,
        date::FUNCTIONS,
        semver::FUNCTIONS,
        pem::FUNCTIONS,
        pkcs12::FUNCTIONS,
        jwk::FUNCTIONS,
        x509::FUNCTIONS,
        keys::FUNCTIONS,
        certs::FUNCTIONS,
        master_password::FUNCTIONS,
        aes_cbc::FUNCTIONS,
    ];
    let mut map = HashMap::new();
    for table in tables {
        for (name, arity, call) in table {
            map.insert(
                *name,
                Function {
                    arity: *arity,
                    call: *call,
                },
            );
        }
    }
    map
});

/// Whether `name` is a function templates may call.
pub fn exists(name: &str) -> bool {
    FUNCTIONS.contains_key(name)
}

/// Every function name templates may call (tests compare it with upstream's exact list).
#[cfg(test)]
pub fn names() -> impl Iterator<Item = &'static str> {
    FUNCTIONS.keys().copied()
}

/// The function called `name`.
pub fn lookup(name: &str) -> Option<&'static Function> {
    FUNCTIONS.get(name)
}

/// Go's error for an argument of the wrong type.
pub fn wrong_type(expected: &str, got: &Value) -> FuncError {
    match got {
        Value::Nil => FuncError(format!("invalid value; expected {expected}")),
        other => FuncError(format!(
            "wrong type for value; expected {expected}; got {}",
            other.type_name()
        )),
    }
}

/// A `string` parameter.
pub fn string(value: &Value) -> Result<Bytes, FuncError> {
    match value {
        Value::Str(bytes) => Ok(bytes.clone()),
        other => Err(wrong_type("string", other)),
    }
}

/// A `string` parameter as text (invalid UTF-8 replaced, as Go's rune-wise functions do).
pub fn text(value: &Value) -> Result<String, FuncError> {
    string(value).map(|bytes| lossy(&bytes))
}

/// An `int` parameter (integral floats from literals such as `3.0` are accepted).
pub fn int(value: &Value) -> Result<i64, FuncError> {
    match value {
        Value::Int(n) => Ok(*n),
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(*f as i64),
        other => Err(wrong_type("int", other)),
    }
}

/// A `bool` parameter.
pub fn boolean(value: &Value) -> Result<bool, FuncError> {
    match value {
        Value::Bool(b) => Ok(*b),
        other => Err(wrong_type("bool", other)),
    }
}

/// A `map[string]interface{}` parameter.
pub fn map(value: &Value) -> Result<Map, FuncError> {
    match value {
        Value::Map(map) if map.borrow().kind != MapKind::Certificate => Ok(map.clone()),
        other => Err(wrong_type("map[string]interface {}", other)),
    }
}

/// spf13/cast's `ToInt64`: numbers truncate, strings parse in base 0 (after dropping a `.0`
/// fraction), booleans are 1/0, anything else is 0.
pub fn cast_int(value: &Value) -> i64 {
    match value {
        Value::Int(n) => *n,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => i64::from(*b),
        Value::Str(bytes) => {
            let text = lossy(bytes);
            let trimmed = trim_zero_decimal(&text);
            super::literal::parse_int(trimmed).unwrap_or(0)
        }
        _ => 0,
    }
}

fn trim_zero_decimal(text: &str) -> &str {
    match text.split_once('.') {
        Some((whole, fraction)) if !whole.is_empty() && fraction.bytes().all(|b| b == b'0') => {
            whole
        }
        _ => text,
    }
}

/// spf13/cast's `ToFloat64`.
pub fn cast_float(value: &Value) -> f64 {
    match value {
        Value::Int(n) => *n as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(bytes) => lossy(bytes).parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Sprig's `strval`: strings as they are, anything else as `%v`.
pub fn strval(value: &Value) -> Bytes {
    match value {
        Value::Str(bytes) => bytes.clone(),
        other => {
            let mut out = Vec::new();
            super::gofmt::sprint_value(other, &mut out);
            out.into()
        }
    }
}

/// The elements of a list parameter (sprig functions taking `interface{}` lists).
pub fn list<'a>(value: &'a Value, what: &str) -> Result<&'a [Value], FuncError> {
    match value {
        Value::List(items) => Ok(items),
        Value::Nil => Err(FuncError(format!("Cannot {what} on type invalid"))),
        other => Err(FuncError(format!(
            "Cannot {what} on type {}",
            other.kind_name()
        ))),
    }
}

/// Refuses a result larger than [`super::limits::MAX_ITEMS`] before building it.
pub fn check_size(size: usize) -> Result<(), FuncError> {
    if size > super::limits::MAX_ITEMS {
        return Err(FuncError(format!(
            "result of {size} items exceeds the limit of {}",
            super::limits::MAX_ITEMS
        )));
    }
    Ok(())
}
