//! JSON and YAML in templates: Sprig's `toJson toPrettyJson toRawJson fromJson` (and `must`
//! twins) with Go's `encoding/json` output (sorted keys, HTML-safe escapes, Go's float format),
//! and ESO's `toYaml`/`fromYaml` (sigs.k8s.io/yaml: go-yaml v2, then JSON, so numbers are
//! float64).

use std::collections::BTreeMap;

use super::yaml_emit::to_yaml;
use super::yaml_read;
use super::{Arity, Ctx, Entry, FuncError, FuncResult, string};
use crate::error::YamlError;
use crate::gofmt::{format_float_shortest, shortest_digits};
use crate::limits::MAX_VALUE_DEPTH;
use crate::value::{Value, lossy};

pub const FUNCTIONS: &[Entry] = &[
    ("toJson", Arity::Exact(1), |_, a| {
        Ok(Value::str(json(&a[0], true, None).unwrap_or_default()))
    }),
    ("mustToJson", Arity::Exact(1), |_, a| {
        Ok(Value::str(json(&a[0], true, None)?))
    }),
    ("toPrettyJson", Arity::Exact(1), |_, a| {
        Ok(Value::str(
            json(&a[0], true, Some("  ")).unwrap_or_default(),
        ))
    }),
    ("mustToPrettyJson", Arity::Exact(1), |_, a| {
        Ok(Value::str(json(&a[0], true, Some("  "))?))
    }),
    ("toRawJson", Arity::Exact(1), |_, a| {
        Ok(Value::str(json(&a[0], false, None)?))
    }),
    ("mustToRawJson", Arity::Exact(1), |_, a| {
        Ok(Value::str(json(&a[0], false, None)?))
    }),
    ("fromJson", Arity::Exact(1), |ctx, a| {
        Ok(from_json(ctx, &string(&a[0])?).unwrap_or(Value::Nil))
    }),
    ("mustFromJson", Arity::Exact(1), |ctx, a| {
        from_json(ctx, &string(&a[0])?)
    }),
    ("toYaml", Arity::Exact(1), |_, a| {
        let text = to_yaml(&a[0]).unwrap_or_default();
        Ok(Value::str(text.strip_suffix('\n').unwrap_or(&text)))
    }),
    ("fromYaml", Arity::Exact(1), from_yaml),
];

/// Go's `json.Marshal` (`html`: escape `<>&`; `indent`: `MarshalIndent` with that indent).
pub fn json(value: &Value, html: bool, indent: Option<&str>) -> Result<Vec<u8>, FuncError> {
    let mut out = Vec::new();
    write_json(value, html, indent, 0, &mut out)?;
    Ok(out)
}

fn newline(indent: Option<&str>, depth: usize, out: &mut Vec<u8>) {
    if let Some(unit) = indent {
        out.push(b'\n');
        for _ in 0..depth {
            out.extend_from_slice(unit.as_bytes());
        }
    }
}

fn write_json(
    value: &Value,
    html: bool,
    indent: Option<&str>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), FuncError> {
    if depth > MAX_VALUE_DEPTH {
        return Err("json: unsupported value: encountered a cycle or too deep nesting".into());
    }
    match value {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(b.to_string().as_bytes()),
        Value::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Float(f) => out.extend_from_slice(json_float(*f)?.as_bytes()),
        Value::Str(bytes) => json_string(bytes, html, out),
        Value::Time(nanos, offset) => {
            let text = super::date::rfc3339_nano(*nanos, *offset);
            json_string(text.as_bytes(), html, out)
        }
        Value::List(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                newline(indent, depth + 1, out);
                write_json(item, html, indent, depth + 1, out)?;
            }
            if !items.is_empty() {
                newline(indent, depth, out);
            }
            out.push(b']');
        }
        Value::Map(map) => {
            let map = map.borrow();
            out.push(b'{');
            for (index, (key, item)) in map.entries.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                newline(indent, depth + 1, out);
                json_string(key.as_bytes(), html, out);
                out.push(b':');
                if indent.is_some() {
                    out.push(b' ');
                }
                write_json(item, html, indent, depth + 1, out)?;
            }
            if !map.entries.is_empty() {
                newline(indent, depth, out);
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// Go's JSON number format for a float64: fixed notation unless the magnitude is below 1e-6 or
/// at least 1e21, then `1e+21` / `1e-7` style.
pub fn json_float(value: f64) -> Result<String, FuncError> {
    if !value.is_finite() {
        let shown = format_float_shortest(value);
        return Err(FuncError(format!("json: unsupported value: {shown}")));
    }
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        let text = format_float_shortest(value);
        return Ok(text.replace("e-0", "e-").replace("e+0", "e+"));
    }
    let (negative, digits, exp) = shortest_digits(value);
    let sign = if negative && value != 0.0 { "-" } else { "" };
    let body = if exp < 0 {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    } else if digits.len() as i32 <= exp + 1 {
        format!("{digits}{}", "0".repeat((exp + 1) as usize - digits.len()))
    } else {
        let point = (exp + 1) as usize;
        format!("{}.{}", &digits[..point], &digits[point..])
    };
    Ok(format!("{sign}{body}"))
}

/// A JSON string as Go writes it.
pub fn json_string(bytes: &[u8], html: bool, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\x08' => out.extend_from_slice(b"\\b"),
                '\x0c' => out.extend_from_slice(b"\\f"),
                '<' | '>' | '&' if html => {
                    let code = c as u8;
                    out.extend_from_slice(b"\\u00");
                    out.push(HEX[(code >> 4) as usize]);
                    out.push(HEX[(code & 15) as usize]);
                }
                '\u{2028}' => out.extend_from_slice(b"\\u2028"),
                '\u{2029}' => out.extend_from_slice(b"\\u2029"),
                c if (c as u32) < 0x20 => {
                    let code = c as u8;
                    out.extend_from_slice(b"\\u00");
                    out.push(HEX[(code >> 4) as usize]);
                    out.push(HEX[(code & 15) as usize]);
                }
                c => {
                    let mut buffer = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
                }
            }
        }
        for _ in chunk.invalid() {
            out.extend_from_slice(b"\\ufffd");
        }
    }
    out.push(b'"');
}

fn from_json(ctx: &mut Ctx, bytes: &[u8]) -> FuncResult {
    let text = lossy(bytes);
    let parsed: serde_json::Value = serde_json::from_str(&text).map_err(|error| {
        FuncError(format!(
            "invalid JSON at line {} column {}",
            error.line(),
            error.column()
        ))
    })?;
    Ok(from_serde_json(ctx, parsed))
}

/// Converts parsed JSON as Go's `json.Unmarshal` into `interface{}` would type it.
pub fn from_serde_json(ctx: &mut Ctx, value: serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::str(s),
        serde_json::Value::Array(items) => Value::list(
            items
                .into_iter()
                .map(|item| from_serde_json(ctx, item))
                .collect(),
        ),
        serde_json::Value::Object(entries) => {
            let entries: BTreeMap<String, Value> = entries
                .into_iter()
                .map(|(key, item)| (key, from_serde_json(ctx, item)))
                .collect();
            ctx.map(entries)
        }
    }
}

/// YAML text as sigs.k8s.io/yaml's `Unmarshal` reads it into `interface{}` (go-yaml v2's YAML
/// 1.1, then JSON: keys become strings; integral numbers are JSON integers, which `fromYaml`
/// reads as float64 like the rest). The error names where parsing failed, never the content.
pub fn yaml_to_json(text: &str) -> Result<serde_json::Value, YamlError> {
    yaml_read::parse(text)
        .and_then(yaml_read::to_json)
        .map_err(YamlError::Convert)
}

fn from_yaml(ctx: &mut Ctx, args: &[Value]) -> FuncResult {
    let text = lossy(&string(&args[0])?);
    let result = yaml_to_json(&text);
    let mut entries = BTreeMap::new();
    match result {
        Ok(serde_json::Value::Object(object)) => {
            for (key, item) in object {
                entries.insert(key, from_serde_json(ctx, item));
            }
        }
        Ok(serde_json::Value::Null) => {}
        Ok(other) => {
            let kind = match other {
                serde_json::Value::Array(_) => "array",
                serde_json::Value::String(_) => "string",
                serde_json::Value::Number(_) => "number",
                _ => "bool",
            };
            let message = format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            );
            entries.insert("Error".into(), Value::str(message));
        }
        Err(error) => {
            entries.insert("Error".into(), Value::str(error.to_string()));
        }
    }
    Ok(ctx.map(entries))
}
