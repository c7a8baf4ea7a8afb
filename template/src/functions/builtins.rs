//! Go's `text/template` builtins: `and or not len index print printf println html js urlquery
//! eq ne lt le gt ge call` (`slice` is Sprig's, which replaces Go's in upstream's function map).
//! `and`/`or` short-circuit in the evaluator; the entries here only declare them.

use super::{Arity, Ctx, Entry, FuncError, FuncResult, int, string};
use crate::gofmt::{is_print, sprint};
use crate::limits::MAX_OUTPUT;
use crate::printf::sprintf;
use crate::value::{MapKind, Value};

pub const FUNCTIONS: &[Entry] = &[
    ("and", Arity::AtLeast(1), |_, args| Ok(args[0].clone())),
    ("or", Arity::AtLeast(1), |_, args| Ok(args[0].clone())),
    ("not", Arity::Exact(1), |_, args| {
        Ok(Value::Bool(!args[0].is_true()))
    }),
    ("len", Arity::Exact(1), length),
    ("index", Arity::AtLeast(1), index),
    ("print", Arity::AtLeast(0), |_, args| {
        Ok(Value::str(sprint(args)))
    }),
    ("printf", Arity::AtLeast(1), printf),
    ("println", Arity::AtLeast(0), |_, args| {
        Ok(Value::str(crate::gofmt::sprintln(args)))
    }),
    ("html", Arity::AtLeast(0), |_, args| {
        Ok(Value::str(html_escape(&joined(args))))
    }),
    ("js", Arity::AtLeast(0), |_, args| {
        Ok(Value::str(js_escape(&joined(args))))
    }),
    ("urlquery", Arity::AtLeast(0), |_, args| {
        Ok(Value::str(query_escape(&joined(args))))
    }),
    ("eq", Arity::AtLeast(1), eq),
    ("ne", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(!equal(&args[0], &args[1])?))
    }),
    ("lt", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(less(&args[0], &args[1])?))
    }),
    ("le", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(
            less(&args[0], &args[1])? || equal(&args[0], &args[1])?,
        ))
    }),
    ("gt", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(
            !(less(&args[0], &args[1])? || equal(&args[0], &args[1])?),
        ))
    }),
    ("ge", Arity::Exact(2), |_, args| {
        Ok(Value::Bool(!less(&args[0], &args[1])?))
    }),
    ("call", Arity::AtLeast(1), |_, args| {
        Err(FuncError(format!(
            "non-function of type {}",
            args[0].type_name()
        )))
    }),
];

fn joined(args: &[Value]) -> Vec<u8> {
    match args {
        [Value::Str(bytes)] => bytes.to_vec(),
        _ => sprint(args),
    }
}

fn printf(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let format = string(&args[0])?;
    let printed = sprintf(&format, &args[1..], MAX_OUTPUT)
        .map_err(|too_large| FuncError(format!("printf output exceeds {} bytes", too_large.0)))?;
    Ok(Value::str(printed))
}

fn length(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let count = match &args[0] {
        Value::Str(bytes) => bytes.len(),
        Value::List(items) => items.len(),
        Value::Map(map) if map.borrow().kind != MapKind::Certificate => map.borrow().entries.len(),
        Value::Nil => return Err(FuncError("len of nil pointer".into())),
        other => return Err(FuncError(format!("len of type {}", other.type_name()))),
    };
    Ok(Value::Int(count as i64))
}

fn index_position(index: &Value, length: usize) -> Result<usize, FuncError> {
    let position = match index {
        Value::Int(n) => *n,
        Value::Nil => return Err(FuncError("cannot index slice/array with nil".into())),
        other => {
            let message = format!("cannot index slice/array with type {}", other.type_name());
            return Err(FuncError(message));
        }
    };
    if position < 0 || position as usize >= length {
        return Err(FuncError(format!("index out of range: {position}")));
    }
    Ok(position as usize)
}

fn index(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let mut item = args[0].clone();
    if let Value::Nil = item {
        return Err(FuncError("index of untyped nil".into()));
    }
    for index in &args[1..] {
        item = match &item {
            Value::Nil => return Err(FuncError("index of nil pointer".into())),
            Value::List(items) => items[index_position(index, items.len())?].clone(),
            Value::Str(bytes) => Value::Int(i64::from(bytes[index_position(index, bytes.len())?])),
            Value::Map(map) if map.borrow().kind != MapKind::Certificate => {
                let Value::Str(key) = index else {
                    let message = format!("value has type {}; should be string", index.type_name());
                    return Err(FuncError(message));
                };
                let map = map.borrow();
                let key = String::from_utf8_lossy(key);
                match map.entries.get(key.as_ref()) {
                    Some(value) => value.clone(),
                    None if map.kind == MapKind::Strings => Value::str(""),
                    None => Value::Nil,
                }
            }
            other => {
                let message = format!("can't index item of type {}", other.type_name());
                return Err(FuncError(message));
            }
        };
    }
    Ok(item)
}

#[derive(PartialEq)]
enum Basic {
    Bool,
    Int,
    Float,
    Str,
    Other,
}

fn basic(value: &Value) -> Basic {
    match value {
        Value::Bool(_) => Basic::Bool,
        Value::Int(_) => Basic::Int,
        Value::Float(_) => Basic::Float,
        Value::Str(_) => Basic::Str,
        _ => Basic::Other,
    }
}

fn eq(_: &mut Ctx, args: &[Value]) -> FuncResult {
    if args.len() < 2 {
        return Err(FuncError("missing argument for comparison".into()));
    }
    for other in &args[1..] {
        if equal(&args[0], other)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

/// Go's `eq` for two values: basic kinds must match; nil equals only nil.
pub fn equal(left: &Value, right: &Value) -> Result<bool, FuncError> {
    match (left, right) {
        (Value::Nil, Value::Nil) => return Ok(true),
        (Value::Nil, _) | (_, Value::Nil) => return Ok(false),
        _ => {}
    }
    let (kind, other) = (basic(left), basic(right));
    if kind != other {
        return Err(FuncError("incompatible types for comparison".into()));
    }
    Ok(match (left, right) {
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Float(a), Value::Float(b)) => a == b,
        (Value::Str(a), Value::Str(b)) => a == b,
        (Value::Time(a, _), Value::Time(b, _)) => a == b,
        _ => {
            let message = format!("non-comparable type {}", right.type_name());
            return Err(FuncError(message));
        }
    })
}

fn less(left: &Value, right: &Value) -> Result<bool, FuncError> {
    let (kind, other) = (basic(left), basic(right));
    if kind == Basic::Other || other == Basic::Other {
        return Err(FuncError("invalid type for comparison".into()));
    }
    if kind != other {
        return Err(FuncError("incompatible types for comparison".into()));
    }
    match (left, right) {
        (Value::Int(a), Value::Int(b)) => Ok(a < b),
        (Value::Float(a), Value::Float(b)) => Ok(a < b),
        (Value::Str(a), Value::Str(b)) => Ok(a < b),
        _ => Err(FuncError("invalid type for comparison".into())),
    }
}

/// Go's `template.HTMLEscapeString`.
pub fn html_escape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for byte in bytes {
        match byte {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'\'' => out.extend_from_slice(b"&#39;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&#34;"),
            0 => out.extend_from_slice("\u{FFFD}".as_bytes()),
            other => out.push(*other),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
pub fn js_escape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.extend_from_slice(b"\\\\"),
                '\'' => out.extend_from_slice(b"\\'"),
                '"' => out.extend_from_slice(b"\\\""),
                '<' => out.extend_from_slice(b"\\u003C"),
                '>' => out.extend_from_slice(b"\\u003E"),
                '&' => out.extend_from_slice(b"\\u0026"),
                '=' => out.extend_from_slice(b"\\u003D"),
                c if (c as u32) < 0x20 => {
                    out.extend_from_slice(format!("\\u00{:02X}", c as u32).as_bytes())
                }
                c if c.is_ascii() || is_print(c) => {
                    let mut buffer = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
                }
                c => out.extend_from_slice(format!("\\u{:04X}", c as u32).as_bytes()),
            }
        }
        for _ in chunk.invalid() {
            out.extend_from_slice(b"\\uFFFD");
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub fn query_escape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for byte in bytes {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(*byte),
            b' ' => out.push(b'+'),
            other => out.extend_from_slice(format!("%{other:02X}").as_bytes()),
        }
    }
    out
}

/// Sprig's `slice`/`mustSlice`: a sub-list `[start:end]` of a list.
pub fn slice(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let items = match &args[0] {
        Value::List(items) => items,
        other => {
            let message = format!(
                "list should be type of slice or array but {}",
                other.kind_name()
            );
            return Err(FuncError(message));
        }
    };
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    let start = args.get(1).map(super::cast_int).unwrap_or(0);
    let end = args
        .get(2)
        .map(super::cast_int)
        .unwrap_or(items.len() as i64);
    if start < 0 || end < start || end as usize > items.len() {
        return Err(FuncError("reflect: slice index out of range".into()));
    }
    Ok(Value::list(items[start as usize..end as usize].to_vec()))
}

/// Checks an `int` argument is not negative (counts and sizes).
pub fn count(value: &Value) -> Result<usize, FuncError> {
    let n = int(value)?;
    Ok(n.max(0) as usize)
}
