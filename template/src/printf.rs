//! Go's `fmt.Sprintf` for template values: verbs `%v %s %q %d %x %X %o %O %b %c %U %e %E %f %F
//! %g %G %t %T %%`, flags `+ - # 0` and space, width and precision (also `*`), explicit argument
//! indexes (`%[2]s`), and Go's in-band error notation (`%!d(string=x)`, `%!s(MISSING)`,
//! `%!(EXTRA ...)`), which Go writes into the output rather than failing.

use super::gofmt::{
    format_float_e, format_float_g, format_float_shortest, quote, quote_into, sprint_value,
};
use super::value::{MapKind, Value};

/// A `printf` whose output would pass its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputTooLarge(pub usize);

#[derive(Default, Clone, Copy)]
struct Spec {
    plus: bool,
    minus: bool,
    sharp: bool,
    zero: bool,
    space: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

/// `fmt.Sprintf(format, args...)`, failing once the output passes `limit` bytes: one verb writes
/// at most a million bytes of padding (Go's own width cap), so a format repeating a wide verb
/// stops at the limit instead of allocating without bound.
pub fn sprintf(format: &[u8], args: &[Value], limit: usize) -> Result<Vec<u8>, OutputTooLarge> {
    let mut out = Vec::new();
    let mut next_arg = 0;
    let mut index = 0;
    let mut reordered = false;
    while index < format.len() {
        let byte = format[index];
        if byte != b'%' {
            out.push(byte);
            index += 1;
            continue;
        }
        index += 1;
        let mut spec = Spec::default();
        while index < format.len() {
            match format[index] {
                b'+' => spec.plus = true,
                b'-' => spec.minus = true,
                b'#' => spec.sharp = true,
                b'0' => spec.zero = true,
                b' ' => spec.space = true,
                _ => break,
            }
            index += 1;
        }
        reordered |= arg_index(format, &mut index, &mut next_arg);
        spec.width = number_or_star(format, &mut index, args, &mut next_arg);
        if format.get(index) == Some(&b'.') {
            index += 1;
            reordered |= arg_index(format, &mut index, &mut next_arg);
            spec.precision =
                Some(number_or_star(format, &mut index, args, &mut next_arg).unwrap_or(0));
        }
        reordered |= arg_index(format, &mut index, &mut next_arg);
        let Some(verb) = next_char(format, &mut index) else {
            out.extend_from_slice(b"%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push(b'%');
            continue;
        }
        match args.get(next_arg) {
            Some(arg) => {
                format_arg(verb, spec, arg, &mut out, 0);
                next_arg += 1;
            }
            None => out.extend_from_slice(format!("%!{verb}(MISSING)").as_bytes()),
        }
        if out.len() > limit {
            return Err(OutputTooLarge(limit));
        }
    }
    if !reordered && next_arg < args.len() {
        out.extend_from_slice(b"%!(EXTRA ");
        for (position, arg) in args[next_arg..].iter().enumerate() {
            if position > 0 {
                out.extend_from_slice(b", ");
            }
            if matches!(arg, Value::Nil) {
                out.extend_from_slice(b"<nil>");
            } else {
                out.extend_from_slice(arg.type_name().as_bytes());
                out.push(b'=');
                sprint_value(arg, &mut out);
            }
        }
        out.push(b')');
    }
    if out.len() > limit {
        return Err(OutputTooLarge(limit));
    }
    Ok(out)
}

fn next_char(format: &[u8], index: &mut usize) -> Option<char> {
    let rest = &format[*index..];
    let chunk = rest.utf8_chunks().next()?;
    match chunk.valid().chars().next() {
        Some(c) => {
            *index += c.len_utf8();
            Some(c)
        }
        None => {
            *index += 1;
            Some(char::REPLACEMENT_CHARACTER)
        }
    }
}

fn arg_index(format: &[u8], index: &mut usize, next_arg: &mut usize) -> bool {
    if format.get(*index) != Some(&b'[') {
        return false;
    }
    let Some(end) = format[*index..].iter().position(|b| *b == b']') else {
        return false;
    };
    let number = std::str::from_utf8(&format[*index + 1..*index + end])
        .ok()
        .and_then(|text| text.parse::<usize>().ok());
    match number {
        Some(n) if n >= 1 => {
            *next_arg = n - 1;
            *index += end + 1;
            true
        }
        _ => false,
    }
}

fn number_or_star(
    format: &[u8],
    index: &mut usize,
    args: &[Value],
    next_arg: &mut usize,
) -> Option<usize> {
    if format.get(*index) == Some(&b'*') {
        *index += 1;
        let value = match args.get(*next_arg) {
            Some(Value::Int(n)) => Some((*n).clamp(0, 1_000_000) as usize),
            _ => None,
        };
        *next_arg += 1;
        return value;
    }
    let start = *index;
    while *index < format.len() && format[*index].is_ascii_digit() {
        *index += 1;
    }
    if *index == start {
        return None;
    }
    std::str::from_utf8(&format[start..*index])
        .ok()?
        .parse::<usize>()
        .ok()
        .map(|n| n.min(1_000_000))
}

fn format_arg(verb: char, spec: Spec, arg: &Value, out: &mut Vec<u8>, depth: usize) {
    if verb == 'T' {
        return pad(spec, arg.type_name().as_bytes(), out);
    }
    match arg {
        Value::List(items) if matches!(verb, 'v' | 's' | 'd' | 'q' | 'x' | 'X') && depth < 100 => {
            out.push(b'[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(b' ');
                }
                format_arg(verb, spec, item, out, depth + 1);
            }
            out.push(b']');
        }
        Value::Map(map)
            if map.borrow().kind == MapKind::Certificate
                && matches!(verb, 'v' | 's' | 'd' | 'q' | 'x' | 'X')
                && depth < 100 =>
        {
            out.push(b'{');
            for (position, item) in map.borrow().entries.values().enumerate() {
                if position > 0 {
                    out.push(b' ');
                }
                format_arg(verb, spec, item, out, depth + 1);
            }
            out.push(b'}');
        }
        Value::Map(map) if matches!(verb, 'v' | 's' | 'd' | 'q' | 'x' | 'X') && depth < 100 => {
            out.extend_from_slice(b"map[");
            for (position, (key, item)) in map.borrow().entries.iter().enumerate() {
                if position > 0 {
                    out.push(b' ');
                }
                format_arg(verb, spec, &Value::str(key), out, depth + 1);
                out.push(b':');
                format_arg(verb, spec, item, out, depth + 1);
            }
            out.push(b']');
        }
        Value::Str(bytes) => match verb {
            'v' | 's' => pad(spec, truncate(bytes, spec.precision), out),
            'q' => pad(spec, quote(truncate(bytes, spec.precision)).as_bytes(), out),
            'x' | 'X' => pad(spec, hex_bytes(bytes, spec, verb == 'X').as_bytes(), out),
            _ => bad_verb(verb, arg, out),
        },
        Value::Int(n) => match verb {
            'v' | 'd' => pad_number(spec, integer(*n, 10, spec, false), out),
            'b' => pad_number(spec, integer(*n, 2, spec, false), out),
            'o' | 'O' => pad_number(spec, integer(*n, 8, spec, verb == 'O'), out),
            'x' => pad_number(spec, integer(*n, 16, spec, false), out),
            'X' => pad_number(spec, integer(*n, 16, spec, false).to_uppercase(), out),
            'c' => pad(spec, rune(*n).to_string().as_bytes(), out),
            'q' => {
                let mut text = String::from("'");
                quote_into(rune(*n).to_string().as_bytes(), b'\'', &mut text);
                text.push('\'');
                pad(spec, text.as_bytes(), out)
            }
            'U' => pad(spec, format!("U+{:04X}", n).as_bytes(), out),
            _ => bad_verb(verb, arg, out),
        },
        Value::Float(f) => {
            let text = match verb {
                'v' => match spec.precision {
                    Some(precision) => format_float_g(*f, precision, false),
                    None => format_float_shortest(*f),
                },
                'g' | 'G' => match spec.precision {
                    Some(precision) => format_float_g(*f, precision, verb == 'G'),
                    None if verb == 'G' => format_float_shortest(*f).to_uppercase(),
                    None => format_float_shortest(*f),
                },
                'e' | 'E' => format_float_e(*f, spec.precision.unwrap_or(6), verb == 'E'),
                'f' | 'F' => format!("{:.*}", spec.precision.unwrap_or(6), f),
                _ => return bad_verb(verb, arg, out),
            };
            pad_number(spec, signed(text, spec), out)
        }
        Value::Bool(b) if matches!(verb, 'v' | 't') => pad(spec, b.to_string().as_bytes(), out),
        Value::Nil if verb == 'v' => pad(spec, b"<nil>", out),
        Value::Time(..) if matches!(verb, 'v' | 's') => {
            let mut text = Vec::new();
            sprint_value(arg, &mut text);
            pad(spec, &text, out)
        }
        _ => bad_verb(verb, arg, out),
    }
}

fn bad_verb(verb: char, arg: &Value, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("%!{verb}(").as_bytes());
    if matches!(arg, Value::Nil) {
        out.extend_from_slice(b"<nil>");
    } else {
        out.extend_from_slice(arg.type_name().as_bytes());
        out.push(b'=');
        sprint_value(arg, out);
    }
    out.push(b')');
}

fn rune(n: i64) -> char {
    u32::try_from(n)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}

fn truncate(bytes: &[u8], precision: Option<usize>) -> &[u8] {
    let Some(limit) = precision else {
        return bytes;
    };
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(limit) {
        Some((end, _)) if text.len() == bytes.len() => &bytes[..end],
        Some(_) => &bytes[..limit.min(bytes.len())],
        None => bytes,
    }
}

fn hex_bytes(bytes: &[u8], spec: Spec, upper: bool) -> String {
    let mut text = String::new();
    for (position, byte) in bytes.iter().enumerate() {
        if spec.space && position > 0 {
            text.push(' ');
        }
        if spec.sharp && (spec.space || position == 0) {
            text.push_str(if upper { "0X" } else { "0x" });
        }
        if upper {
            text.push_str(&format!("{byte:02X}"));
        } else {
            text.push_str(&format!("{byte:02x}"));
        }
    }
    text
}

fn integer(n: i64, base: u32, spec: Spec, big_o: bool) -> String {
    let magnitude = n.unsigned_abs();
    let mut digits = match base {
        2 => format!("{magnitude:b}"),
        8 => format!("{magnitude:o}"),
        16 => format!("{magnitude:x}"),
        _ => magnitude.to_string(),
    };
    if let Some(precision) = spec.precision {
        if precision == 0 && n == 0 {
            digits.clear();
        } else if digits.len() < precision {
            digits = format!("{}{digits}", "0".repeat(precision - digits.len()));
        }
    }
    let prefix = match base {
        _ if big_o => "0o",
        2 if spec.sharp => "0b",
        8 if spec.sharp && !digits.starts_with('0') => "0",
        16 if spec.sharp => "0x",
        _ => "",
    };
    let sign = if n < 0 {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    format!("{sign}{prefix}{digits}")
}

fn signed(text: String, spec: Spec) -> String {
    if text.starts_with(['-', '+']) || !(spec.plus || spec.space) {
        text
    } else if spec.plus {
        format!("+{text}")
    } else {
        format!(" {text}")
    }
}

fn pad_number(spec: Spec, text: String, out: &mut Vec<u8>) {
    let width = spec.width.unwrap_or(0);
    let length = text.chars().count();
    if spec.zero && !spec.minus && spec.precision.is_none() && length < width {
        let split = text
            .find(|c: char| !matches!(c, '+' | '-' | ' '))
            .unwrap_or(0);
        let (sign, digits) = text.split_at(split);
        out.extend_from_slice(sign.as_bytes());
        out.extend_from_slice("0".repeat(width - length).as_bytes());
        out.extend_from_slice(digits.as_bytes());
        return;
    }
    pad(spec, text.as_bytes(), out)
}

fn pad(spec: Spec, text: &[u8], out: &mut Vec<u8>) {
    let width = spec.width.unwrap_or(0);
    let length: usize = text
        .utf8_chunks()
        .map(|chunk| chunk.valid().chars().count() + chunk.invalid().len())
        .sum();
    if length >= width {
        out.extend_from_slice(text);
    } else if spec.minus {
        out.extend_from_slice(text);
        out.extend(std::iter::repeat_n(b' ', width - length));
    } else {
        let fill = if spec.zero { b'0' } else { b' ' };
        out.extend(std::iter::repeat_n(fill, width - length));
        out.extend_from_slice(text);
    }
}
