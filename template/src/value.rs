//! The values a template computes with, modelled on the Go types upstream's templates see:
//! strings are byte strings (Go strings may hold any bytes, and `b64dec | pkcs12key` relies on
//! it), numbers are `int` or `float64` (JSON and YAML numbers decode to `float64`), lists are
//! `[]interface{}`, maps are `map[string]interface{}` or, for the secret data itself,
//! `map[string]string`.
//!
//! Maps are shared and mutable, as Go maps are (sprig's `set`, `unset` and `merge` change the map
//! they are given). The evaluator keeps every map it creates and empties them all when a render
//! ends, so a map that contains itself cannot leak.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::limits::{BYTES_PER_UNIT, MAX_VALUE_DEPTH};

/// A byte string (Go `string`).
pub type Bytes = Rc<[u8]>;

/// How a map's missing keys read through `index` (Go's zero value of the element type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    /// `map[string]string`: the secret data; a missing key indexes as `""`.
    Strings,
    /// `map[string]interface{}`: decoded JSON/YAML and `dict`; a missing key indexes as nil.
    Any,
    /// Not a map: Sprig's `certificate` struct (fields `Cert` and `Key`, in that order, which
    /// is also their sorted order), as `genCA` and friends return it. Its fields read like map
    /// keys; map functions, `range`, `len` and `index` refuse it as Go refuses a struct.
    Certificate,
}

/// A Go map as the template sees it.
#[derive(Debug)]
pub struct MapValue {
    /// Entries, kept sorted as Go's `range`, `fmt` and `encoding/json` order them.
    pub entries: BTreeMap<String, Value>,
    /// The Go element type.
    pub kind: MapKind,
}

/// A shared map handle.
pub type Map = Rc<RefCell<MapValue>>;

/// A template value.
#[derive(Clone, Debug)]
pub enum Value {
    /// Go's nil (a nil `interface{}`); printed as `<no value>` by an action, `<nil>` by fmt.
    Nil,
    /// `bool`.
    Bool(bool),
    /// `int` / `int64`.
    Int(i64),
    /// `float64`.
    Float(f64),
    /// `string`.
    Str(Bytes),
    /// `[]interface{}` (also `[]string`, which behaves the same in templates).
    List(Rc<Vec<Value>>),
    /// A map.
    Map(Map),
    /// `time.Time`, as a Unix time in nanoseconds plus its UTC offset in seconds.
    Time(i128, i32),
}

impl Value {
    /// A string value from text or bytes.
    pub fn str(text: impl AsRef<[u8]>) -> Value {
        Value::Str(Rc::from(text.as_ref()))
    }

    /// A list value.
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items))
    }

    /// A new `map[string]interface{}` (callers register it with the evaluator's arena).
    pub fn new_map(entries: BTreeMap<String, Value>, kind: MapKind) -> Map {
        Rc::new(RefCell::new(MapValue { entries, kind }))
    }

    /// The Go type name, as `%T` and Go's error messages print it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(map) => match map.borrow().kind {
                MapKind::Strings => "map[string]string",
                MapKind::Any => "map[string]interface {}",
                MapKind::Certificate => "sprig.certificate",
            },
            Value::Time(..) => "time.Time",
        }
    }

    /// The Go kind name (`reflect.Kind`), as sprig's `kindOf` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "slice",
            Value::Map(map) if map.borrow().kind == MapKind::Certificate => "struct",
            Value::Map(_) => "map",
            Value::Time(..) => "struct",
        }
    }

    /// Go's template truth: false, 0, "", empty lists and maps, and nil are false.
    pub fn is_true(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(value) => *value,
            Value::Int(value) => *value != 0,
            Value::Float(value) => *value != 0.0,
            Value::Str(value) => !value.is_empty(),
            Value::List(items) => !items.is_empty(),
            Value::Map(map) => !map.borrow().entries.is_empty(),
            Value::Time(..) => true,
        }
    }

    /// Sprig's `empty`: the same as Go's truth, negated (a struct is never empty).
    pub fn is_empty(&self) -> bool {
        !self.is_true()
    }

    /// The size of the value in work units (see [`crate::limits::MAX_WORK`]), counted only
    /// until it exceeds `limit`, so measuring a huge (or shared, or cyclic) value costs no
    /// more than the budget it is measured against.
    pub fn size(&self, limit: u64) -> u64 {
        let mut total = 0;
        add_size(self, 0, limit, &mut total);
        total
    }

    /// How deep lists nest inside this value (maps count as one level; their content is
    /// bounded separately when printed or serialized).
    pub fn list_depth(&self) -> usize {
        match self {
            Value::List(items) => 1 + items.iter().map(Value::list_depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// Go's `reflect.DeepEqual` for template values (sprig's `has`, `uniq`, `without`).
    pub fn deep_equal(&self, other: &Value) -> bool {
        deep_equal(self, other, 0)
    }
}

fn add_size(value: &Value, depth: usize, limit: u64, total: &mut u64) {
    let bytes = |length: usize| length as u64 / BYTES_PER_UNIT;
    *total = total.saturating_add(1);
    match value {
        Value::Str(text) => *total = total.saturating_add(bytes(text.len())),
        Value::List(items) if depth < MAX_VALUE_DEPTH => {
            for item in items.iter() {
                if *total > limit {
                    return;
                }
                add_size(item, depth + 1, limit, total);
            }
        }
        Value::Map(map) if depth < MAX_VALUE_DEPTH => {
            for (key, item) in &map.borrow().entries {
                if *total > limit {
                    return;
                }
                *total = total.saturating_add(bytes(key.len()));
                add_size(item, depth + 1, limit, total);
            }
        }
        _ => {}
    }
}

fn deep_equal(left: &Value, right: &Value, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    match (left, right) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Float(a), Value::Float(b)) => a == b,
        (Value::Str(a), Value::Str(b)) => a == b,
        (Value::Time(a, x), Value::Time(b, y)) => a == b && x == y,
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(a, b)| deep_equal(a, b, depth + 1))
        }
        (Value::Map(a), Value::Map(b)) => {
            if Rc::ptr_eq(a, b) {
                return true;
            }
            let (a, b) = (a.borrow(), b.borrow());
            a.kind == b.kind
                && a.entries.len() == b.entries.len()
                && a.entries
                    .iter()
                    .zip(b.entries.iter())
                    .all(|(x, y)| x.0 == y.0 && deep_equal(x.1, y.1, depth + 1))
        }
        _ => false,
    }
}

/// Text for a byte string, replacing invalid UTF-8 as Go's string functions do.
pub fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
