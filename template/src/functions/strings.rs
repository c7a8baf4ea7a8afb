//! Sprig's string functions (`strings.go`): trimming, case, substrings, quoting, indenting,
//! splitting and joining. Byte-oriented where Go is (`trunc`, `substr` count bytes), rune-wise
//! where Go is.

use std::collections::BTreeMap;

use super::builtins::count;
use super::{Arity, Ctx, Entry, FuncError, FuncResult, check_size, int, string, strval, text};
use crate::gofmt::quote;
use crate::value::{MapKind, Value};

pub const FUNCTIONS: &[Entry] = &[
    ("hello", Arity::Exact(0), |_, _| Ok(Value::str("Hello!"))),
    ("trim", Arity::Exact(1), |_, a| {
        map_text(&a[0], |s| s.trim().to_owned())
    }),
    ("upper", Arity::Exact(1), |_, a| map_text(&a[0], upper)),
    ("lower", Arity::Exact(1), |_, a| map_text(&a[0], lower)),
    ("title", Arity::Exact(1), |_, a| map_text(&a[0], title)),
    ("untitle", Arity::Exact(1), |_, a| map_text(&a[0], untitle)),
    ("substr", Arity::Exact(3), substr),
    ("trunc", Arity::Exact(2), trunc),
    ("repeat", Arity::Exact(2), repeat),
    ("trimall", Arity::Exact(2), trim_all),
    ("trimAll", Arity::Exact(2), trim_all),
    ("trimSuffix", Arity::Exact(2), |_, a| {
        let (suffix, s) = (string(&a[0])?, string(&a[1])?);
        Ok(Value::str(s.strip_suffix(&suffix[..]).unwrap_or(&s)))
    }),
    ("trimPrefix", Arity::Exact(2), |_, a| {
        let (prefix, s) = (string(&a[0])?, string(&a[1])?);
        Ok(Value::str(s.strip_prefix(&prefix[..]).unwrap_or(&s)))
    }),
    ("nospace", Arity::Exact(1), |_, a| {
        map_text(&a[0], |s| {
            s.chars().filter(|c| !c.is_whitespace()).collect()
        })
    }),
    ("contains", Arity::Exact(2), |_, a| {
        let (needle, s) = (string(&a[0])?, string(&a[1])?);
        Ok(Value::Bool(find(&s, &needle).is_some()))
    }),
    ("hasPrefix", Arity::Exact(2), |_, a| {
        Ok(Value::Bool(string(&a[1])?.starts_with(&string(&a[0])?)))
    }),
    ("hasSuffix", Arity::Exact(2), |_, a| {
        Ok(Value::Bool(string(&a[1])?.ends_with(&string(&a[0])?)))
    }),
    ("quote", Arity::AtLeast(0), |_, a| {
        let quoted: Vec<String> = a
            .iter()
            .filter(|v| !matches!(v, Value::Nil))
            .map(|v| quote(&strval(v)))
            .collect();
        Ok(Value::str(quoted.join(" ")))
    }),
    ("squote", Arity::AtLeast(0), |_, a| {
        let quoted: Vec<Vec<u8>> = a
            .iter()
            .filter(|v| !matches!(v, Value::Nil))
            .map(|v| [b"'".as_slice(), &strval(v), b"'"].concat())
            .collect();
        Ok(Value::str(quoted.join(&b' ')))
    }),
    ("cat", Arity::AtLeast(0), |_, a| {
        let parts: Vec<Vec<u8>> = a
            .iter()
            .filter(|v| !matches!(v, Value::Nil))
            .map(|v| strval(v).to_vec())
            .collect();
        Ok(Value::str(parts.join(&b' ')))
    }),
    ("indent", Arity::Exact(2), |_, a| {
        Ok(Value::str(indent(&a[0], &a[1])?))
    }),
    ("nindent", Arity::Exact(2), |_, a| {
        Ok(Value::str(
            [b"\n".as_slice(), &indent(&a[0], &a[1])?].concat(),
        ))
    }),
    ("replace", Arity::Exact(3), |_, a| {
        let (old, new, s) = (string(&a[0])?, string(&a[1])?, string(&a[2])?);
        Ok(Value::str(replace_all(&s, &old, &new)?))
    }),
    ("plural", Arity::Exact(3), |_, a| {
        Ok(if int(&a[2])? == 1 {
            a[0].clone()
        } else {
            a[1].clone()
        })
    }),
    ("toString", Arity::Exact(1), |_, a| {
        Ok(Value::Str(strval(&a[0])))
    }),
    ("atoi", Arity::Exact(1), |_, a| {
        Ok(Value::Int(text(&a[0])?.parse::<i64>().unwrap_or(0)))
    }),
    ("split", Arity::Exact(2), |ctx, a| {
        split_map(ctx, &a[0], -1, &a[1])
    }),
    ("splitn", Arity::Exact(3), |ctx, a| {
        split_map(ctx, &a[0], int(&a[1])?, &a[2])
    }),
    ("splitList", Arity::Exact(2), |_, a| {
        let parts = split(&string(&a[1])?, &string(&a[0])?, -1)?;
        Ok(Value::list(parts.into_iter().map(Value::str).collect()))
    }),
    ("toStrings", Arity::Exact(1), |_, a| {
        Ok(Value::list(
            strslice(&a[0]).into_iter().map(Value::Str).collect(),
        ))
    }),
    ("join", Arity::Exact(2), |_, a| {
        let separator = string(&a[0])?;
        let parts: Vec<Vec<u8>> = strslice(&a[1]).iter().map(|p| p.to_vec()).collect();
        Ok(Value::str(parts.join(&separator[..])))
    }),
];

/// Applies a rune-wise text function (invalid UTF-8 is replaced first, as Go's would).
fn map_text(value: &Value, f: impl Fn(&str) -> String) -> FuncResult {
    Ok(Value::str(f(&text(value)?)))
}

/// Go's `unicode.ToUpper` rune by rune (simple case mapping: `ß` stays `ß`).
pub fn upper(s: &str) -> String {
    s.chars().map(|c| single(c.to_uppercase(), c)).collect()
}

/// Go's `strings.ToLower`.
pub fn lower(s: &str) -> String {
    s.chars().map(|c| single(c.to_lowercase(), c)).collect()
}

fn single(mut mapped: impl Iterator<Item = char>, original: char) -> char {
    match (mapped.next(), mapped.next()) {
        (Some(c), None) => c,
        _ => original,
    }
}

/// Go's deprecated `strings.Title`: the first letter of each word upper-cased.
fn title(s: &str) -> String {
    let mut previous = ' ';
    s.chars()
        .map(|c| {
            let separator = if previous.is_ascii() {
                !(previous.is_ascii_alphanumeric() || previous == '_')
            } else {
                previous.is_whitespace()
            };
            previous = c;
            if separator {
                single(c.to_uppercase(), c)
            } else {
                c
            }
        })
        .collect()
}

/// goutils' `Uncapitalize`: the first letter of each space-separated word lower-cased.
fn untitle(s: &str) -> String {
    let mut at_start = true;
    s.chars()
        .map(|c| {
            let out = if at_start {
                single(c.to_lowercase(), c)
            } else {
                c
            };
            at_start = c.is_whitespace();
            out
        })
        .collect()
}

fn substr(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (start, end, s) = (int(&args[0])?, int(&args[1])?, string(&args[2])?);
    let length = s.len() as i64;
    let out_of_range = || FuncError::from("runtime error: slice bounds out of range");
    let (from, to) = if start < 0 {
        (0, end)
    } else if end < 0 || end > length {
        (start, length)
    } else {
        (start, end)
    };
    if from > to || to > length || to < 0 {
        return Err(out_of_range());
    }
    Ok(Value::str(&s[from as usize..to as usize]))
}

fn trunc(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (c, s) = (int(&args[0])?, string(&args[1])?);
    let length = s.len() as i64;
    Ok(if c < 0 && length + c > 0 {
        Value::str(&s[(length + c) as usize..])
    } else if c >= 0 && length > c {
        Value::str(&s[..c as usize])
    } else {
        Value::Str(s)
    })
}

fn repeat(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (times, s) = (int(&args[0])?, string(&args[1])?);
    if times < 0 {
        return Err("strings: negative Repeat count".into());
    }
    check_size((times as usize).saturating_mul(s.len()))?;
    Ok(Value::str(s.repeat(times as usize)))
}

fn trim_all(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let cutset: Vec<char> = text(&args[0])?.chars().collect();
    map_text(&args[1], |s| s.trim_matches(cutset.as_slice()).to_owned())
}

fn indent(spaces: &Value, value: &Value) -> Result<Vec<u8>, FuncError> {
    let spaces = count(spaces)?;
    let s = string(value)?;
    let lines = s.iter().filter(|b| **b == b'\n').count() + 1;
    check_size(lines.saturating_mul(spaces).saturating_add(s.len()))?;
    let pad = vec![b' '; spaces];
    let mut out = pad.clone();
    for byte in s.iter() {
        out.push(*byte);
        if *byte == b'\n' {
            out.extend_from_slice(&pad);
        }
    }
    Ok(out)
}

/// The first index of `needle` in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Go's `strings.Replace(s, old, new, -1)`.
pub fn replace_all(s: &[u8], old: &[u8], new: &[u8]) -> Result<Vec<u8>, FuncError> {
    if old.is_empty() {
        let parts = split(s, b"", -1)?;
        check_size(
            (parts.len() + 1)
                .saturating_mul(new.len())
                .saturating_add(s.len()),
        )?;
        let mut out = new.to_vec();
        for part in parts {
            out.extend_from_slice(&part);
            out.extend_from_slice(new);
        }
        return Ok(out);
    }
    let parts = split(s, old, -1)?;
    check_size(
        parts
            .len()
            .saturating_mul(new.len())
            .saturating_add(s.len()),
    )?;
    Ok(parts.join(new))
}

/// Go's `strings.SplitN` (`n < 0`: all; an empty separator splits into UTF-8 sequences).
pub fn split(s: &[u8], separator: &[u8], n: i64) -> Result<Vec<Vec<u8>>, FuncError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let mut parts = Vec::new();
    if separator.is_empty() {
        let mut rest = s;
        while !rest.is_empty() {
            if parts.len() + 1 == limit {
                parts.push(rest.to_vec());
                break;
            }
            let length = utf8_sequence_length(rest);
            parts.push(rest[..length].to_vec());
            rest = &rest[length..];
        }
        check_size(parts.len())?;
        return Ok(parts);
    }
    let mut rest = s;
    while parts.len() + 1 < limit {
        let Some(position) = find(rest, separator) else {
            break;
        };
        parts.push(rest[..position].to_vec());
        rest = &rest[position + separator.len()..];
        check_size(parts.len())?;
    }
    parts.push(rest.to_vec());
    Ok(parts)
}

fn utf8_sequence_length(bytes: &[u8]) -> usize {
    match bytes.utf8_chunks().next() {
        Some(chunk) if !chunk.valid().is_empty() => {
            chunk.valid().chars().next().map_or(1, char::len_utf8)
        }
        _ => 1,
    }
}

fn split_map(ctx: &mut Ctx, separator: &Value, n: i64, s: &Value) -> FuncResult {
    let parts = split(&string(s)?, &string(separator)?, n)?;
    let entries: BTreeMap<String, Value> = parts
        .into_iter()
        .enumerate()
        .map(|(index, part)| (format!("_{index}"), Value::str(part)))
        .collect();
    let value = ctx.map(entries);
    if let Value::Map(map) = &value {
        map.borrow_mut().kind = MapKind::Strings;
    }
    Ok(value)
}

/// Sprig's `strslice`: a list's non-nil elements as strings, or a scalar as a one-element list.
pub fn strslice(value: &Value) -> Vec<crate::value::Bytes> {
    match value {
        Value::List(items) => items
            .iter()
            .filter(|item| !matches!(item, Value::Nil))
            .map(strval)
            .collect(),
        Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}
