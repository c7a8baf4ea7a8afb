//! Sprig's date functions (`now date dateInZone htmlDate htmlDateInZone dateModify toDate
//! unixEpoch ago duration durationRound` and their aliases) with Go's reference-time layouts
//! (`2006-01-02T15:04:05Z07:00`), Go's `Duration` text, and a few `time.Time` methods
//! (`.Unix`, `.UTC`, `.Format`, `.Year`, ...). The controller's local zone is UTC (as in its
//! container); named zones other than `UTC`/`Local` are not loaded and fall back to UTC, as Go
//! does for a zone it cannot find.

use chrono::{DateTime, Datelike as _, NaiveDate, Timelike as _};

use super::{Arity, Ctx, Entry, FuncError, FuncResult, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("now", Arity::Exact(0), |_, _| Ok(now())),
    ("date", Arity::Exact(2), |_, a| {
        Ok(Value::str(format(&text(&a[0])?, &a[1])))
    }),
    ("dateInZone", Arity::Exact(3), |_, a| {
        Ok(Value::str(format(&text(&a[0])?, &a[1])))
    }),
    ("date_in_zone", Arity::Exact(3), |_, a| {
        Ok(Value::str(format(&text(&a[0])?, &a[1])))
    }),
    ("htmlDate", Arity::Exact(1), |_, a| {
        Ok(Value::str(format("2006-01-02", &a[0])))
    }),
    ("htmlDateInZone", Arity::Exact(2), |_, a| {
        Ok(Value::str(format("2006-01-02", &a[0])))
    }),
    ("dateModify", Arity::Exact(2), |c, a| modify(c, a, false)),
    ("date_modify", Arity::Exact(2), |c, a| modify(c, a, false)),
    ("mustDateModify", Arity::Exact(2), |c, a| modify(c, a, true)),
    ("must_date_modify", Arity::Exact(2), |c, a| {
        modify(c, a, true)
    }),
    ("toDate", Arity::Exact(2), |_, a| {
        Ok(parse(&text(&a[0])?, &text(&a[1])?).unwrap_or(Value::Time(ZERO_TIME, 0)))
    }),
    ("mustToDate", Arity::Exact(2), |_, a| {
        parse(&text(&a[0])?, &text(&a[1])?).map_err(FuncError)
    }),
    ("unixEpoch", Arity::Exact(1), |_, a| match a[0] {
        Value::Time(nanos, _) => Ok(Value::str(nanos.div_euclid(NANOS).to_string())),
        ref other => Err(FuncError(format!(
            "wrong type for value; expected time.Time; got {}",
            other.type_name()
        ))),
    }),
    ("ago", Arity::Exact(1), |_, a| {
        let then = instant(&a[0]);
        let elapsed = now_nanos() - then;
        let rounded = (elapsed + NANOS / 2).div_euclid(NANOS) * NANOS;
        Ok(Value::str(duration_string(rounded)))
    }),
    ("duration", Arity::Exact(1), |_, a| {
        let seconds = match &a[0] {
            Value::Str(bytes) => String::from_utf8_lossy(bytes).parse::<i64>().unwrap_or(0),
            Value::Int(n) => *n,
            _ => 0,
        };
        Ok(Value::str(duration_string(i128::from(seconds) * NANOS)))
    }),
    ("durationRound", Arity::Exact(1), |_, a| {
        let nanos = match &a[0] {
            Value::Str(bytes) => parse_duration(&String::from_utf8_lossy(bytes)).unwrap_or(0),
            Value::Int(n) => i128::from(*n),
            Value::Time(t, _) => now_nanos() - t,
            _ => 0,
        };
        Ok(Value::str(duration_round(nanos)))
    }),
];

const NANOS: i128 = 1_000_000_000;
/// Go's zero `time.Time` (January 1, year 1, UTC) in Unix nanoseconds.
const ZERO_TIME: i128 = -62_135_596_800 * NANOS;

fn now_nanos() -> i128 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(elapsed) => elapsed.as_nanos() as i128,
        Err(error) => -(error.duration().as_nanos() as i128),
    }
}

fn now() -> Value {
    Value::Time(now_nanos(), 0)
}

/// The instant a date argument stands for: a time, Unix seconds, or now (as Sprig).
fn instant(value: &Value) -> i128 {
    match value {
        Value::Time(nanos, _) => *nanos,
        Value::Int(seconds) => i128::from(*seconds) * NANOS,
        _ => now_nanos(),
    }
}

fn format(layout: &str, value: &Value) -> String {
    let (nanos, offset) = match value {
        Value::Time(nanos, _) => (*nanos, 0),
        other => (instant(other), 0),
    };
    format_time(layout, nanos, offset)
}

fn modify(_: &mut Ctx, args: &[Value], must: bool) -> FuncResult {
    let Value::Time(nanos, offset) = args[1] else {
        let message = format!(
            "wrong type for value; expected time.Time; got {}",
            args[1].type_name()
        );
        return Err(FuncError(message));
    };
    match parse_duration(&text(&args[0])?) {
        Some(delta) => Ok(Value::Time(nanos + delta, offset)),
        None if must => Err("time: invalid duration".into()),
        None => Ok(Value::Time(nanos, offset)),
    }
}

fn civil(nanos: i128, offset: i32) -> Option<chrono::NaiveDateTime> {
    let local = nanos + i128::from(offset) * NANOS;
    let seconds = i64::try_from(local.div_euclid(NANOS)).ok()?;
    let fraction = local.rem_euclid(NANOS) as u32;
    DateTime::from_timestamp(seconds, fraction).map(|t| t.naive_utc())
}

fn zone_name(offset: i32) -> String {
    if offset == 0 {
        "UTC".into()
    } else {
        offset_text(offset, "", false)
    }
}

fn offset_text(offset: i32, separator: &str, seconds: bool) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let magnitude = offset.unsigned_abs();
    let mut out = format!(
        "{sign}{:02}{separator}{:02}",
        magnitude / 3600,
        magnitude / 60 % 60
    );
    if seconds {
        out.push_str(&format!("{separator}{:02}", magnitude % 60));
    }
    out
}

/// Layout elements of Go's reference time, longest first within each leading character.
const TOKENS: &[&str] = &[
    "January",
    "Jan",
    "Monday",
    "Mon",
    "MST",
    "2006",
    "002",
    "01",
    "02",
    "03",
    "04",
    "05",
    "06",
    "15",
    "1",
    "2",
    "3",
    "4",
    "5",
    "__2",
    "_2",
    "PM",
    "pm",
    "Z07:00:00",
    "Z070000",
    "Z07:00",
    "Z0700",
    "Z07",
    "-07:00:00",
    "-070000",
    "-07:00",
    "-0700",
    "-07",
];

fn next_token(layout: &str) -> Option<(usize, &'static str, usize)> {
    for (index, _) in layout.char_indices() {
        let rest = &layout[index..];
        if let Some(fraction) = fraction_token(rest) {
            return Some((
                index,
                if rest.as_bytes()[1] == b'0' {
                    ".0"
                } else {
                    ".9"
                },
                fraction,
            ));
        }
        for token in TOKENS {
            if let Some(after) = rest.strip_prefix(token) {
                if *token == "Jan" || *token == "Mon" {
                    let after = after.chars().next();
                    if after.is_some_and(|c| c.is_ascii_lowercase())
                        && !rest.starts_with("January")
                        && !rest.starts_with("Monday")
                    {
                        continue;
                    }
                }
                return Some((index, token, token.len()));
            }
        }
    }
    None
}

fn fraction_token(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    if !matches!(bytes.first(), Some(b'.' | b',')) {
        return None;
    }
    let digit = *bytes.get(1)?;
    if digit != b'0' && digit != b'9' {
        return None;
    }
    let count = bytes[1..].iter().take_while(|b| **b == digit).count();
    if bytes.get(1 + count).is_some_and(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(1 + count)
}

/// Go's `Time.Format(layout)`.
pub fn format_time(layout: &str, nanos: i128, offset: i32) -> String {
    let Some(t) = civil(nanos, offset) else {
        return String::new();
    };
    let mut out = String::new();
    let mut rest = layout;
    while let Some((index, token, length)) = next_token(rest) {
        out.push_str(&rest[..index]);
        let hour12 = if t.hour() % 12 == 0 {
            12
        } else {
            t.hour() % 12
        };
        let piece = match token {
            "January" => t.format("%B").to_string(),
            "Jan" => t.format("%b").to_string(),
            "Monday" => t.format("%A").to_string(),
            "Mon" => t.format("%a").to_string(),
            "MST" => zone_name(offset),
            "2006" => format!("{:04}", t.year()),
            "06" => format!("{:02}", t.year().rem_euclid(100)),
            "01" => format!("{:02}", t.month()),
            "1" => t.month().to_string(),
            "02" => format!("{:02}", t.day()),
            "2" => t.day().to_string(),
            "_2" => format!("{:>2}", t.day()),
            "__2" => format!("{:>3}", t.ordinal()),
            "002" => format!("{:03}", t.ordinal()),
            "15" => format!("{:02}", t.hour()),
            "03" => format!("{hour12:02}"),
            "3" => hour12.to_string(),
            "04" => format!("{:02}", t.minute()),
            "4" => t.minute().to_string(),
            "05" => format!("{:02}", t.second()),
            "5" => t.second().to_string(),
            "PM" => (if t.hour() >= 12 { "PM" } else { "AM" }).into(),
            "pm" => (if t.hour() >= 12 { "pm" } else { "am" }).into(),
            ".0" | ".9" => {
                let digits = format!("{:09}", t.nanosecond());
                let mut shown = digits[..(length - 1).min(9)].to_owned();
                if token == ".9" {
                    shown = shown.trim_end_matches('0').to_owned();
                    if shown.is_empty() {
                        String::new()
                    } else {
                        format!("{}{shown}", &rest[index..index + 1])
                    }
                } else {
                    format!("{}{shown}", &rest[index..index + 1])
                }
            }
            token if token.starts_with('Z') && offset == 0 => "Z".into(),
            token => {
                let separator = if token.contains(':') { ":" } else { "" };
                let seconds =
                    token.len() >= 7 && !token.ends_with("07:00") || token.ends_with(":00:00");
                let text = offset_text(offset, separator, seconds);
                if token.ends_with("07") {
                    text[..3].to_owned()
                } else {
                    text
                }
            }
        };
        out.push_str(&piece);
        rest = &rest[index + length..];
    }
    out.push_str(rest);
    out
}

/// Go's `time.Time.String()`.
pub fn time_string(nanos: i128, offset: i32) -> String {
    format_time("2006-01-02 15:04:05.999999999 -0700 MST", nanos, offset)
}

/// RFC 3339 with nanoseconds, as `encoding/json` writes a time.
pub fn rfc3339_nano(nanos: i128, offset: i32) -> String {
    format_time("2006-01-02T15:04:05.999999999Z07:00", nanos, offset)
}

/// Go's `time.ParseInLocation(layout, value, UTC)` for the common layout elements.
fn parse(layout: &str, value: &str) -> Result<Value, String> {
    // Go quotes the value too; it may be secret data, so only the layout is named.
    let fail = || format!("parsing time as {layout:?}: cannot parse");
    let (mut year, mut month, mut day, mut hour, mut minute, mut second) =
        (1i32, 1u32, 1u32, 0u32, 0u32, 0u32);
    let (mut nanos, mut offset, mut pm) = (0u32, 0i32, None);
    let (mut rest_layout, mut rest) = (layout, value);
    while let Some((index, token, length)) = next_token(rest_layout) {
        rest = rest.strip_prefix(&rest_layout[..index]).ok_or_else(fail)?;
        let number = |rest: &mut &str, min: usize, max: usize| -> Result<u32, String> {
            let digits = rest
                .bytes()
                .take(max)
                .take_while(u8::is_ascii_digit)
                .count();
            if digits < min {
                return Err(fail());
            }
            let parsed = rest[..digits].parse().map_err(|_| fail())?;
            *rest = &rest[digits..];
            Ok(parsed)
        };
        match token {
            "2006" => year = number(&mut rest, 4, 4)? as i32,
            "06" => {
                let short = number(&mut rest, 2, 2)? as i32;
                year = if short >= 69 {
                    1900 + short
                } else {
                    2000 + short
                };
            }
            "01" => month = number(&mut rest, 2, 2)?,
            "1" => month = number(&mut rest, 1, 2)?,
            "02" => day = number(&mut rest, 2, 2)?,
            "2" | "_2" => {
                rest = rest.trim_start_matches(' ');
                day = number(&mut rest, 1, 2)?
            }
            "15" => hour = number(&mut rest, 1, 2)?,
            "03" | "3" => hour = number(&mut rest, 1, 2)?,
            "04" | "4" => minute = number(&mut rest, 1, 2)?,
            "05" | "5" => second = number(&mut rest, 1, 2)?,
            "PM" | "pm" => {
                let upper = rest
                    .get(..2)
                    .map(str::to_ascii_uppercase)
                    .ok_or_else(fail)?;
                pm = Some(upper == "PM");
                rest = &rest[2..];
            }
            ".0" | ".9" => {
                if let Some(after) = rest.strip_prefix(['.', ',']) {
                    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
                    let text = format!("{:0<9}", &after[..digits.min(9)]);
                    nanos = text.parse().map_err(|_| fail())?;
                    rest = &after[digits..];
                }
            }
            "Jan" | "January" | "Mon" | "Monday" => {
                let names: Vec<String> = match token {
                    "Jan" | "January" => (1..=12)
                        .map(|m| {
                            NaiveDate::from_ymd_opt(2000, m, 1)
                                .map(|d| {
                                    d.format(if token == "Jan" { "%b" } else { "%B" })
                                        .to_string()
                                })
                                .unwrap_or_default()
                        })
                        .collect(),
                    _ => (0..7)
                        .map(|d| {
                            NaiveDate::from_ymd_opt(2000, 1, 3 + d)
                                .map(|d| {
                                    d.format(if token == "Mon" { "%a" } else { "%A" })
                                        .to_string()
                                })
                                .unwrap_or_default()
                        })
                        .collect(),
                };
                let found = names
                    .iter()
                    .position(|n| rest.starts_with(n.as_str()))
                    .ok_or_else(fail)?;
                if token.starts_with('J') {
                    month = found as u32 + 1;
                }
                rest = &rest[names[found].len()..];
            }
            "MST" => {
                let letters = rest.bytes().take_while(u8::is_ascii_uppercase).count();
                rest = &rest[letters..];
            }
            token => {
                if token.starts_with('Z')
                    && let Some(after) = rest.strip_prefix('Z')
                {
                    rest = after;
                } else {
                    let sign = match rest.as_bytes().first() {
                        Some(b'+') => 1,
                        Some(b'-') => -1,
                        _ => return Err(fail()),
                    };
                    rest = &rest[1..];
                    let hours = number(&mut rest, 2, 2)? as i32;
                    rest = rest.strip_prefix(':').unwrap_or(rest);
                    let minutes = if token.ends_with("07") {
                        0
                    } else {
                        number(&mut rest, 2, 2)? as i32
                    };
                    offset = sign * (hours * 3600 + minutes * 60);
                }
            }
        }
        rest_layout = &rest_layout[index + length..];
    }
    if rest != rest_layout {
        return Err(fail());
    }
    if let Some(pm) = pm {
        hour = hour % 12 + if pm { 12 } else { 0 };
    }
    let date = NaiveDate::from_ymd_opt(year, month, day).ok_or_else(fail)?;
    let time = date
        .and_hms_nano_opt(hour, minute, second, nanos)
        .ok_or_else(fail)?;
    let utc = i128::from(time.and_utc().timestamp()) * NANOS + i128::from(nanos)
        - i128::from(offset) * NANOS;
    Ok(Value::Time(utc, offset))
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub fn parse_duration(text: &str) -> Option<i128> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_length = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        let number: f64 = rest[..number_length].parse().ok()?;
        rest = &rest[number_length..];
        let unit_length = rest
            .bytes()
            .take_while(|b| !b.is_ascii_digit() && *b != b'.')
            .count();
        let scale = match &rest[..unit_length] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_length..];
    }
    let nanos = total.round() as i128;
    Some(if negative { -nanos } else { nanos })
}

/// Go's `time.Duration.String()`.
pub fn duration_string(nanos: i128) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let magnitude = nanos.unsigned_abs();
    if magnitude < 1_000_000_000 {
        let (unit, scale) = match magnitude {
            m if m < 1_000 => ("ns", 1),
            m if m < 1_000_000 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{sign}{}{unit}", fraction(magnitude, scale));
    }
    let hours = magnitude / 3_600_000_000_000;
    let minutes = magnitude / 60_000_000_000 % 60;
    let seconds = fraction(magnitude % 60_000_000_000, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

fn fraction(value: u128, scale: u128) -> String {
    let whole = value / scale;
    let rest = value % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let width = scale.to_string().len() - 1;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

fn duration_round(nanos: i128) -> String {
    let magnitude = nanos.unsigned_abs();
    let (second, minute, hour) = (1_000_000_000u128, 60_000_000_000u128, 3_600_000_000_000u128);
    let (day, month, year) = (hour * 24, hour * 24 * 30, hour * 24 * 365);
    match magnitude {
        m if m > year => format!("{}y", m / year),
        m if m > month => format!("{}mo", m / month),
        m if m > day => format!("{}d", m / day),
        m if m > hour => format!("{}h", m / hour),
        m if m > minute => format!("{}m", m / minute),
        m if m > second => format!("{}s", m / second),
        _ => "0s".into(),
    }
}

/// `time.Time` methods reachable as fields: `.Unix`, `.UnixMilli`, `.UnixNano`, `.UTC`,
/// `.Local`, `.Year`, `.Month`, `.Day`, `.Hour`, `.Minute`, `.Second`, `.Nanosecond`,
/// `.YearDay`, `.String`, `.Format layout`.
pub fn method(nanos: i128, offset: i32, name: &str, args: &[Value]) -> Result<Value, String> {
    let t = civil(nanos, offset).ok_or("time out of range")?;
    let value = match (name, args) {
        ("Unix", []) => Value::Int(nanos.div_euclid(NANOS) as i64),
        ("UnixMilli", []) => Value::Int(nanos.div_euclid(1_000_000) as i64),
        ("UnixNano", []) => Value::Int(nanos as i64),
        ("UTC" | "Local", []) => Value::Time(nanos, 0),
        ("Year", []) => Value::Int(i64::from(t.year())),
        ("Month", []) => Value::str(t.format("%B").to_string()),
        ("Day", []) => Value::Int(i64::from(t.day())),
        ("Hour", []) => Value::Int(i64::from(t.hour())),
        ("Minute", []) => Value::Int(i64::from(t.minute())),
        ("Second", []) => Value::Int(i64::from(t.second())),
        ("Nanosecond", []) => Value::Int(i64::from(t.nanosecond())),
        ("YearDay", []) => Value::Int(i64::from(t.ordinal())),
        ("String", []) => Value::str(time_string(nanos, offset)),
        ("Format", [Value::Str(layout)]) => {
            Value::str(format_time(&String::from_utf8_lossy(layout), nanos, offset))
        }
        _ => return Err(format!("can't evaluate field {name} in type time.Time")),
    };
    Ok(value)
}
