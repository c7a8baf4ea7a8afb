//! Sprig's word-level text helpers from goutils and xstrings: `abbrev`, `abbrevboth`,
//! `initials`, `swapcase`, `shuffle`, `wrap`, `wrapWith`, `snakecase`, `camelcase`,
//! `kebabcase`. The case converters follow xstrings' word splitting for the common shapes
//! (`FirstName`, `HTTPServer`, `first_name`, `first-name`); exotic mixes of digits and
//! punctuation may differ.

use super::{Arity, Ctx, Entry, FuncResult, int, string, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("abbrev", Arity::Exact(2), |_, a| {
        let (width, s) = (int(&a[0])?, string(&a[1])?);
        if width < 4 {
            return Ok(Value::Str(s));
        }
        Ok(Value::str(abbreviate(&s, 0, width as usize)))
    }),
    ("abbrevboth", Arity::Exact(3), |_, a| {
        let (left, right, s) = (int(&a[0])?, int(&a[1])?, string(&a[2])?);
        if right < 4 || left > 0 && right < 7 {
            return Ok(Value::Str(s));
        }
        Ok(Value::str(abbreviate(
            &s,
            left.max(0) as usize,
            right as usize,
        )))
    }),
    ("initials", Arity::Exact(1), |_, a| {
        let s = text(&a[0])?;
        Ok(Value::str(
            s.split_whitespace()
                .filter_map(|w| w.chars().next())
                .collect::<String>(),
        ))
    }),
    ("swapcase", Arity::Exact(1), |_, a| {
        let s = text(&a[0])?;
        Ok(Value::str(
            s.chars()
                .map(|c| {
                    if c.is_uppercase() {
                        super::strings::lower(&c.to_string())
                    } else if c.is_lowercase() {
                        super::strings::upper(&c.to_string())
                    } else {
                        c.to_string()
                    }
                })
                .collect::<String>(),
        ))
    }),
    ("shuffle", Arity::Exact(1), shuffle),
    ("wrap", Arity::Exact(2), |_, a| {
        let (width, s) = (int(&a[0])?, string(&a[1])?);
        Ok(Value::str(wrap(&s, width, b"\n", false)))
    }),
    ("wrapWith", Arity::Exact(3), |_, a| {
        let (width, separator, s) = (int(&a[0])?, string(&a[1])?, string(&a[2])?);
        Ok(Value::str(wrap(&s, width, &separator, true)))
    }),
    ("snakecase", Arity::Exact(1), |_, a| {
        Ok(Value::str(joined_lower(&text(&a[0])?, "_")))
    }),
    ("kebabcase", Arity::Exact(1), |_, a| {
        Ok(Value::str(joined_lower(&text(&a[0])?, "-")))
    }),
    ("camelcase", Arity::Exact(1), |_, a| {
        Ok(Value::str(pascal(&text(&a[0])?)))
    }),
];

/// goutils' `AbbreviateFull` (byte offsets, as Go's).
fn abbreviate(s: &[u8], offset: usize, width: usize) -> Vec<u8> {
    if s.len() <= width {
        return s.to_vec();
    }
    let mut offset = offset.min(s.len());
    if s.len() - offset < width - 3 {
        offset = s.len() - (width - 3);
    }
    if offset <= 4 {
        return [&s[..width - 3], b"..."].concat();
    }
    if width < 7 {
        return Vec::new();
    }
    if offset + width - 3 < s.len() {
        return [b"...".as_slice(), &abbreviate(&s[offset..], 0, width - 3)].concat();
    }
    [b"...".as_slice(), &s[s.len() - (width - 3)..]].concat()
}

/// goutils' `WrapCustom`: breaks at spaces so lines are at most `width` bytes.
fn wrap(s: &[u8], width: i64, newline: &[u8], wrap_long_words: bool) -> Vec<u8> {
    if s.is_empty() {
        return Vec::new();
    }
    let newline = if newline.is_empty() {
        b"\n".as_slice()
    } else {
        newline
    };
    let width = width.max(1) as usize;
    let mut offset = 0;
    let mut out = Vec::new();
    while s.len() - offset > width {
        if s[offset] == b' ' {
            offset += 1;
            continue;
        }
        let end = (width + offset + 1).min(s.len());
        match s[offset..end].iter().rposition(|b| *b == b' ') {
            Some(space) => {
                out.extend_from_slice(&s[offset..offset + space]);
                out.extend_from_slice(newline);
                offset += space + 1;
            }
            None if wrap_long_words => {
                out.extend_from_slice(&s[offset..offset + width]);
                out.extend_from_slice(newline);
                offset += width;
            }
            None => {
                let end = width + offset;
                match s[end..].iter().position(|b| *b == b' ') {
                    None => {
                        out.extend_from_slice(&s[offset..]);
                        offset = s.len();
                    }
                    Some(index) => {
                        out.extend_from_slice(&s[offset..end + index]);
                        out.extend_from_slice(newline);
                        offset = end + index + 1;
                    }
                }
            }
        }
    }
    out.extend_from_slice(&s[offset..]);
    out
}

fn shuffle(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let mut chars: Vec<char> = text(&args[0])?.chars().collect();
    for index in (1..chars.len()).rev() {
        let other = super::crypto::random_below(index as u64 + 1)? as usize;
        chars.swap(index, other);
    }
    Ok(Value::str(chars.into_iter().collect::<String>()))
}

/// Splits on separators and case changes: `HTTPServer2xx` -> `HTTP`, `Server`, `2xx`.
fn words(s: &str) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (index, c) in chars.iter().copied().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if let Some(previous) = current.chars().last() {
            let next_is_lower = chars.get(index + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (previous.is_lowercase() && c.is_uppercase())
                || (previous.is_uppercase() && c.is_uppercase() && next_is_lower)
                || (previous.is_alphabetic() && c.is_numeric() && previous.is_uppercase());
            if boundary {
                words.push(std::mem::take(&mut current));
            }
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn joined_lower(s: &str, connector: &str) -> String {
    words(s)
        .iter()
        .map(|w| super::strings::lower(w))
        .collect::<Vec<_>>()
        .join(connector)
}

fn pascal(s: &str) -> String {
    words(s)
        .iter()
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => {
                    super::strings::upper(&first.to_string())
                        + &super::strings::lower(chars.as_str())
                }
                None => String::new(),
            }
        })
        .collect()
}
