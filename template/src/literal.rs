//! Go literal syntax inside actions: `strconv.Unquote` for `"..."`, `` `...` `` and `'c'`, and
//! the number readings of Go's `parse.NumberNode` (integer in base 0 with `_`, float, char).

use super::ast::Number;

/// Unquotes a string literal (interpreted or raw) to its bytes.
pub fn unquote_string(text: &str) -> Result<Vec<u8>, String> {
    if let Some(raw) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
        return Ok(raw.replace('\r', "").into_bytes());
    }
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or_else(|| "invalid syntax".to_owned())?;
    let mut out = Vec::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buffer = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            continue;
        }
        unescape(&mut chars, '"', &mut out)?;
    }
    Ok(out)
}

/// Unquotes a character constant to its code point.
pub fn unquote_char(text: &str) -> Result<i64, String> {
    let inner = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .ok_or_else(|| "invalid syntax".to_owned())?;
    let mut chars = inner.chars().peekable();
    let value = match chars.next() {
        Some('\\') => {
            let mut out = Vec::new();
            let code = unescape(&mut chars, '\'', &mut out)?;
            code.map(i64::from)
                .unwrap_or_else(|| out.first().copied().map_or(0, i64::from))
        }
        Some(c) => c as i64,
        None => return Err("empty character constant".into()),
    };
    if chars.next().is_some() {
        return Err(format!("malformed character constant: {text}"));
    }
    Ok(value)
}

/// Decodes one escape after a backslash into `out`; returns the code point for `\u`, `\U` and
/// simple escapes (None for byte escapes `\x` and octal).
fn unescape(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    quote: char,
    out: &mut Vec<u8>,
) -> Result<Option<u32>, String> {
    let simple = |c: char, out: &mut Vec<u8>| {
        let mut buffer = [0; 4];
        out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
        Ok(Some(c as u32))
    };
    match chars.next() {
        Some('a') => simple('\x07', out),
        Some('b') => simple('\x08', out),
        Some('f') => simple('\x0c', out),
        Some('n') => simple('\n', out),
        Some('r') => simple('\r', out),
        Some('t') => simple('\t', out),
        Some('v') => simple('\x0b', out),
        Some('\\') => simple('\\', out),
        Some(c) if c == quote => simple(c, out),
        Some('x') => {
            let value = hex_digits(chars, 2)?;
            out.push(value as u8);
            Ok(None)
        }
        Some(c @ '0'..='7') => {
            let mut value = c.to_digit(8).unwrap_or(0);
            for _ in 0..2 {
                let digit = chars
                    .next()
                    .and_then(|c| c.to_digit(8))
                    .ok_or("invalid syntax")?;
                value = value * 8 + digit;
            }
            if value > 255 {
                return Err("invalid syntax".into());
            }
            out.push(value as u8);
            Ok(None)
        }
        Some(c @ ('u' | 'U')) => {
            let value = hex_digits(chars, if c == 'u' { 4 } else { 8 })?;
            let c = char::from_u32(value).ok_or("invalid syntax")?;
            simple(c, out)
        }
        _ => Err("invalid syntax".into()),
    }
}

fn hex_digits(chars: &mut impl Iterator<Item = char>, count: usize) -> Result<u32, String> {
    let mut value = 0u32;
    for _ in 0..count {
        let digit = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or("invalid syntax")?;
        value = value * 16 + digit;
    }
    Ok(value)
}

/// Reads a number token as Go's parser does.
pub fn parse_number(text: &str, is_char: bool) -> Result<Number, String> {
    if is_char {
        let value = unquote_char(text)?;
        return Ok(Number {
            text: text.into(),
            int: Some(value),
            float: Some(value as f64),
        });
    }
    if text.ends_with('i') {
        return Err(format!("complex numbers are not supported: {text:?}"));
    }
    let int = parse_int(text);
    let mut number = Number {
        text: text.into(),
        int,
        float: int.map(|i| i as f64),
    };
    if int.is_none() {
        let float = parse_float(text).ok_or_else(|| format!("illegal number syntax: {text:?}"))?;
        if !text.contains(['.', 'e', 'E', 'p', 'P']) || is_hex_int(text) {
            return Err(format!("integer overflow: {text:?}"));
        }
        number.float = Some(float);
        if float.fract() == 0.0 && float.abs() < 9.2e18 {
            number.int = Some(float as i64);
        }
    }
    Ok(number)
}

/// Whether Go would give an interface argument this constant as a float64 rather than an int.
pub fn is_float_literal(number: &Number) -> bool {
    number.float.is_some()
        && !is_hex_int(&number.text)
        && !number.text.starts_with('\'')
        && number.text.contains(['.', 'e', 'E', 'p', 'P'])
}

fn is_hex_int(text: &str) -> bool {
    let digits = text.trim_start_matches(['+', '-']);
    (digits.starts_with("0x") || digits.starts_with("0X")) && !digits.contains(['p', 'P'])
}

/// Whether Go's `strconv.ParseInt(text, 0, 64)` or `ParseUint` accepts `text`.
pub fn parse_go_int(text: &str) -> bool {
    parse_wide(text).is_some_and(|n| n >= i128::from(i64::MIN) && n <= i128::from(u64::MAX))
}

/// Go's `strconv.ParseInt(text, 0, 64)`.
pub fn parse_int(text: &str) -> Option<i64> {
    parse_wide(text).and_then(|n| i64::try_from(n).ok())
}

fn parse_wide(text: &str) -> Option<i128> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(rest) = lower.strip_prefix("0x") {
        (16, rest.to_owned())
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (8, rest.to_owned())
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (2, rest.to_owned())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_owned())
    } else {
        (10, lower.clone())
    };
    if body.starts_with('_') && radix == 10 || body.ends_with('_') || body.contains("__") {
        return None;
    }
    let body: String = body.chars().filter(|c| *c != '_').collect();
    if body.is_empty() {
        return None;
    }
    let magnitude = i128::from_str_radix(&body, radix).ok()?;
    Some(if negative { -magnitude } else { magnitude })
}

fn parse_float(text: &str) -> Option<f64> {
    let cleaned: String = text.chars().filter(|c| *c != '_').collect();
    let lower = cleaned.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if unsigned.starts_with("0x") || unsigned.starts_with("inf") || unsigned.starts_with("nan") {
        return None;
    }
    cleaned.parse::<f64>().ok()
}
