//! Go's `fmt` as templates reach it: `%v` printing of values (actions, `print`, `println`),
//! `printf` with Go's verbs, flags, width and precision, Go's float formatting and
//! `strconv.Quote`. Output is bytes because Go strings are.

use super::limits::MAX_VALUE_DEPTH;
use super::value::{MapKind, Value};

/// `fmt.Sprint(value)`: `%v` of one value.
pub fn sprint_value(value: &Value, out: &mut Vec<u8>) {
    write_v(value, out, 0);
}

/// `fmt.Sprint(args...)`: spaces between operands when neither is a string.
pub fn sprint(args: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (index, arg) in args.iter().enumerate() {
        let is_string = matches!(arg, Value::Str(_));
        if index > 0 && !is_string && !matches!(args[index - 1], Value::Str(_)) {
            out.push(b' ');
        }
        write_v(arg, &mut out, 0);
    }
    out
}

/// `fmt.Sprintln(args...)`: spaces between all operands and a final newline.
pub fn sprintln(args: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (index, arg) in args.iter().enumerate() {
        if index > 0 {
            out.push(b' ');
        }
        write_v(arg, &mut out, 0);
    }
    out.push(b'\n');
    out
}

fn write_v(value: &Value, out: &mut Vec<u8>, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        out.extend_from_slice(b"...");
        return;
    }
    match value {
        Value::Nil => out.extend_from_slice(b"<nil>"),
        Value::Bool(value) => out.extend_from_slice(value.to_string().as_bytes()),
        Value::Int(value) => out.extend_from_slice(value.to_string().as_bytes()),
        Value::Float(value) => out.extend_from_slice(format_float_shortest(*value).as_bytes()),
        Value::Str(bytes) => out.extend_from_slice(bytes),
        Value::List(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b' ');
                }
                write_v(item, out, depth + 1);
            }
            out.push(b']');
        }
        Value::Map(map) if map.borrow().kind == MapKind::Certificate => {
            out.push(b'{');
            for (index, item) in map.borrow().entries.values().enumerate() {
                if index > 0 {
                    out.push(b' ');
                }
                write_v(item, out, depth + 1);
            }
            out.push(b'}');
        }
        Value::Map(map) => {
            out.extend_from_slice(b"map[");
            for (index, (key, item)) in map.borrow().entries.iter().enumerate() {
                if index > 0 {
                    out.push(b' ');
                }
                out.extend_from_slice(key.as_bytes());
                out.push(b':');
                write_v(item, out, depth + 1);
            }
            out.push(b']');
        }
        Value::Time(nanos, offset) => {
            out.extend_from_slice(super::functions::date::time_string(*nanos, *offset).as_bytes())
        }
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which `%v` uses: the shortest digits that
/// round-trip, in exponent form when the decimal exponent is below -4 or at least 6
/// (so `1e+06`, while `123456` stays fixed).
pub fn format_float_shortest(value: f64) -> String {
    if let Some(special) = special_float(value) {
        return special;
    }
    shortest_g(value.is_sign_negative(), &format!("{:e}", value.abs()))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`: as [`format_float_shortest`], with the shortest
/// digits that round-trip the value as a float32.
pub fn format_float32_shortest(value: f64) -> String {
    let single = value as f32;
    if let Some(special) = special_float(f64::from(single)) {
        return special;
    }
    shortest_g(single.is_sign_negative(), &format!("{:e}", single.abs()))
}

/// `%g` of shortest digits, given as Rust's `{:e}` of the magnitude.
fn shortest_g(negative: bool, scientific: &str) -> String {
    let (digits, exp) = split_scientific(scientific);
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        format!("{sign}{}", exp_form(&digits, exp, None))
    } else {
        format!("{sign}{}", fixed_form(&digits, exp))
    }
}

fn special_float(value: f64) -> Option<String> {
    if value.is_nan() {
        Some("NaN".into())
    } else if value.is_infinite() {
        Some(if value > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else {
        None
    }
}

/// Shortest round-trip decimal digits and the decimal exponent of the first digit.
pub fn shortest_digits(value: f64) -> (bool, String, i32) {
    let (digits, exp) = split_scientific(&format!("{:e}", value.abs()));
    (value.is_sign_negative(), digits, exp)
}

/// The digits and decimal exponent of Rust's `{:e}` output (`1.5e3` is `15`, 3).
fn split_scientific(text: &str) -> (String, i32) {
    let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = if digits.chars().all(|c| c == '0') {
        "0".to_owned()
    } else {
        digits
    };
    (digits, exp.parse().unwrap_or(0))
}

fn exp_form(digits: &str, exp: i32, upper: Option<bool>) -> String {
    let mut out = String::new();
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push(if upper == Some(true) { 'E' } else { 'e' });
    out.push(if exp < 0 { '-' } else { '+' });
    let magnitude = exp.unsigned_abs();
    if magnitude < 10 {
        out.push('0');
    }
    out.push_str(&magnitude.to_string());
    out
}

fn fixed_form(digits: &str, exp: i32) -> String {
    if exp < 0 {
        let zeros = "0".repeat((-exp - 1) as usize);
        return format!("0.{zeros}{digits}");
    }
    let point = exp as usize + 1;
    if digits.len() <= point {
        format!("{digits}{}", "0".repeat(point - digits.len()))
    } else {
        format!("{}.{}", &digits[..point], &digits[point..])
    }
}

/// `%e` with a precision (digits after the point), Go style exponent (`e+06`).
pub fn format_float_e(value: f64, precision: usize, upper: bool) -> String {
    if let Some(special) = special_float(value) {
        return special;
    }
    let text = format!("{:.*e}", precision, value);
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let magnitude = exp.unsigned_abs();
    format!(
        "{mantissa}{}{}{}{magnitude}",
        if upper { 'E' } else { 'e' },
        if exp < 0 { '-' } else { '+' },
        if magnitude < 10 { "0" } else { "" }
    )
}

/// `%g` with an explicit precision (significant digits), trailing zeros removed as Go does.
pub fn format_float_g(value: f64, precision: usize, upper: bool) -> String {
    if let Some(special) = special_float(value) {
        return special;
    }
    let precision = precision.max(1);
    let text = format!("{:.*e}", precision - 1, value.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let sign = if value.is_sign_negative() { "-" } else { "" };
    let mut eprec = precision as i32;
    if eprec > digits.len() as i32 && digits.len() as i32 > exp {
        eprec = digits.len() as i32;
    }
    if exp < -4 || exp >= eprec {
        format!("{sign}{}", exp_form(&digits, exp, Some(upper)))
    } else {
        format!("{sign}{}", fixed_form(&digits, exp))
    }
}

/// Go's `strconv.Quote`: a double-quoted Go string literal, invalid UTF-8 as `\x` escapes.
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    quote_into(bytes, b'"', &mut out);
    out.push('"');
    out
}

/// Escapes `bytes` as Go's `strconv` quoting does, for the given quote character.
pub fn quote_into(bytes: &[u8], quote: u8, out: &mut String) {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            quote_char(c, quote, out);
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
}

fn quote_char(c: char, quote: u8, out: &mut String) {
    match c {
        _ if c as u32 == quote as u32 || c == '\\' => {
            out.push('\\');
            out.push(c);
        }
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x0b' => out.push_str("\\v"),
        _ if is_print(c) => out.push(c),
        _ if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        _ if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
        _ => out.push_str(&format!("\\U{:08x}", c as u32)),
    }
}

/// An approximation of Go's `unicode.IsPrint`: graphic characters and the ASCII space.
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !(c.is_control()
        || c.is_whitespace()
        || matches!(c as u32, 0xad | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb)
        || (0xe000..=0xf8ff).contains(&(c as u32))
        || (0xd800..=0xdfff).contains(&(c as u32)))
}
