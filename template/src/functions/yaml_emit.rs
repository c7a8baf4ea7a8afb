//! The YAML that ESO's `toYaml` writes: sigs.k8s.io/yaml marshals to JSON and re-emits it with
//! go-yaml v2 (a port of libyaml). This emitter reproduces that output for JSON-shaped values:
//! block style, keys in go-yaml's "natural" order, sequences not indented under their key,
//! strings plain when libyaml allows it, double-quoted when they would read back as another type
//! (`"true"`, `"1.5"`, `"2001-12-14"`), single-quoted when plain is not allowed, literal blocks for
//! multi-line text, and libyaml's folding of long lines at spaces past column 80.

use std::cmp::Ordering;
use std::sync::LazyLock;

use super::FuncError;
use super::serialize::json_float;
use crate::gofmt::format_float_shortest;
use crate::limits::MAX_VALUE_DEPTH;
use crate::value::{Value, lossy};

const BEST_WIDTH: usize = 80;

/// `yaml.Marshal(v)` as sigs.k8s.io/yaml does it (with the final newline).
pub fn to_yaml(value: &Value) -> Result<String, FuncError> {
    let mut emitter = Emitter {
        out: String::new(),
        column: 0,
    };
    match value {
        Value::Map(map) if !map.borrow().entries.is_empty() => {
            emitter.mapping(value, 0, false, 0)?
        }
        Value::List(items) if !items.is_empty() => emitter.sequence(items, 0, false, 0)?,
        other => emitter.scalar(other, 2, false)?,
    }
    emitter.out.push('\n');
    Ok(emitter.out)
}

struct Emitter {
    out: String,
    column: usize,
}

fn sorted_entries(value: &Value) -> Vec<(String, Value)> {
    let Value::Map(map) = value else {
        return Vec::new();
    };
    let mut entries: Vec<(String, Value)> = map
        .borrow()
        .entries
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    entries.sort_by(|a, b| natural(&a.0, &b.0));
    entries
}

/// go-yaml v2's key order: runs of digits compare as numbers, letters after non-letters.
fn natural(a: &str, b: &str) -> Ordering {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (al, bl) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if al && bl {
            return a[i].cmp(&b[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if (a[i] == '0' || b[i] == '0')
            && a[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .any(|c| *c != '0')
        {
            an = 1;
            bn = 1;
        }
        let digits = |s: &[char], mut n: i64| {
            let mut end = i;
            while end < s.len() && s[end].is_ascii_digit() {
                n = n
                    .wrapping_mul(10)
                    .wrapping_add(i64::from(s[end] as u8 - b'0'));
                end += 1;
            }
            (n, end)
        };
        let ((an, ai), (bn, bi)) = (digits(&a, an), digits(&b, bn));
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return a[i].cmp(&b[i]);
    }
    a.len().cmp(&b.len())
}

fn is_collection(value: &Value) -> bool {
    match value {
        Value::Map(map) => !map.borrow().entries.is_empty(),
        Value::List(items) => !items.is_empty(),
        _ => false,
    }
}

impl Emitter {
    fn write(&mut self, text: &str) {
        self.out.push_str(text);
        self.column += text.chars().count();
    }

    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        self.column = 0;
        self.write(&" ".repeat(indent));
    }

    /// A block mapping whose keys sit at `indent`; `inline`: the first key continues the
    /// current line (after `- `).
    fn mapping(
        &mut self,
        value: &Value,
        indent: usize,
        inline: bool,
        depth: usize,
    ) -> Result<(), FuncError> {
        if depth > MAX_VALUE_DEPTH {
            return Err("yaml: value nests too deeply".into());
        }
        for (index, (key, item)) in sorted_entries(value).into_iter().enumerate() {
            if (index > 0 || !inline) && !self.out.is_empty() {
                self.newline(indent);
            }
            self.string(&key, indent, true);
            self.write(":");
            match &item {
                Value::Map(_) if is_collection(&item) => {
                    self.newline(indent + 2);
                    self.mapping(&item, indent + 2, true, depth + 1)?;
                }
                Value::List(items) if is_collection(&item) => {
                    self.newline(indent);
                    self.sequence(items, indent, true, depth + 1)?;
                }
                _ => {
                    self.write(" ");
                    self.scalar(&item, indent + 2, false)?;
                }
            }
        }
        Ok(())
    }

    fn sequence(
        &mut self,
        items: &[Value],
        indent: usize,
        inline: bool,
        depth: usize,
    ) -> Result<(), FuncError> {
        if depth > MAX_VALUE_DEPTH {
            return Err("yaml: value nests too deeply".into());
        }
        for (index, item) in items.iter().enumerate() {
            if (index > 0 || !inline) && !self.out.is_empty() {
                self.newline(indent);
            }
            self.write("- ");
            match item {
                Value::Map(_) if is_collection(item) => {
                    self.mapping(item, indent + 2, true, depth + 1)?
                }
                Value::List(inner) if is_collection(item) => {
                    self.sequence(inner, indent + 2, true, depth + 1)?
                }
                _ => self.scalar(item, indent + 2, false)?,
            }
        }
        Ok(())
    }

    fn scalar(&mut self, value: &Value, indent: usize, key: bool) -> Result<(), FuncError> {
        match value {
            Value::Nil => self.write("null"),
            Value::Bool(b) => self.write(&b.to_string()),
            Value::Int(n) => self.write(&n.to_string()),
            Value::Float(f) => {
                let json = json_float(*f)?;
                match json.parse::<i64>() {
                    Ok(n) => self.write(&n.to_string()),
                    Err(_) => self.write(&format_float_shortest(*f)),
                }
            }
            Value::Str(bytes) => self.string(&lossy(bytes), indent, key),
            Value::Time(nanos, offset) => {
                self.string(&super::date::rfc3339_nano(*nanos, *offset), indent, key)
            }
            Value::Map(_) => self.write("{}"),
            Value::List(_) => self.write("[]"),
        }
        Ok(())
    }

    fn string(&mut self, s: &str, indent: usize, key: bool) {
        let analysis = analyze(s);
        let mut style = if s.contains('\n') {
            Style::Literal
        } else if resolves_to_other_type(s) {
            Style::Double
        } else {
            Style::Plain
        };
        if style == Style::Plain && (!analysis.plain || (s.is_empty() && key)) {
            style = Style::Single;
        }
        if style == Style::Single && !analysis.single {
            style = Style::Double;
        }
        if style == Style::Literal && (!analysis.block || key) {
            style = Style::Double;
        }
        match style {
            Style::Plain => self.folded(s, indent, !key, None),
            Style::Single => self.folded(s, indent, !key, Some('\'')),
            Style::Double => self.double(s, indent, !key),
            Style::Literal => self.literal(s, indent),
        }
    }

    /// Plain or single-quoted text, folded at spaces past the best width.
    fn folded(&mut self, s: &str, indent: usize, allow_breaks: bool, quote: Option<char>) {
        if let Some(q) = quote {
            self.write(&q.to_string());
        }
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (index, c) in chars.iter().copied().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(index + 1) == Some(&' ');
                let inner = quote.is_none() || (index != 0 && index + 1 != chars.len());
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !next_is_space && inner {
                    self.newline(indent);
                } else {
                    self.write(" ");
                }
                spaces = true;
            } else {
                if quote == Some('\'') && c == '\'' {
                    self.write("'");
                }
                self.write(&c.to_string());
                spaces = false;
            }
        }
        if let Some(q) = quote {
            self.write(&q.to_string());
        }
    }

    fn double(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.write("\"");
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (index, c) in chars.iter().copied().enumerate() {
            if !is_printable(c) || is_break(c) || c == '"' || c == '\\' || c == '\u{feff}' {
                let escaped = match c {
                    '\0' => "\\0".to_owned(),
                    '\x07' => "\\a".to_owned(),
                    '\x08' => "\\b".to_owned(),
                    '\t' => "\\t".to_owned(),
                    '\n' => "\\n".to_owned(),
                    '\x0b' => "\\v".to_owned(),
                    '\x0c' => "\\f".to_owned(),
                    '\r' => "\\r".to_owned(),
                    '\x1b' => "\\e".to_owned(),
                    '"' => "\\\"".to_owned(),
                    '\\' => "\\\\".to_owned(),
                    '\u{85}' => "\\N".to_owned(),
                    '\u{a0}' => "\\_".to_owned(),
                    '\u{2028}' => "\\L".to_owned(),
                    '\u{2029}' => "\\P".to_owned(),
                    c if (c as u32) <= 0xff => format!("\\x{:02X}", c as u32),
                    c if (c as u32) <= 0xffff => format!("\\u{:04X}", c as u32),
                    c => format!("\\U{:08X}", c as u32),
                };
                self.write(&escaped);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && index != 0
                    && index + 1 != chars.len()
                {
                    self.newline(indent);
                    if chars.get(index + 1) == Some(&' ') {
                        self.write("\\");
                    }
                } else {
                    self.write(" ");
                }
                spaces = true;
            } else {
                self.write(&c.to_string());
                spaces = false;
            }
        }
        self.write("\"");
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.write("|");
        if s.starts_with([' ', '\n']) {
            self.write("2");
        }
        let trailing = s.len() - s.trim_end_matches('\n').len();
        match trailing {
            0 => self.write("-"),
            1 if s.len() > 1 => {}
            _ => self.write("+"),
        }
        let mut at_line_start = true;
        self.out.push('\n');
        self.column = 0;
        for c in s.chars() {
            if c == '\n' {
                self.out.push('\n');
                self.column = 0;
                at_line_start = true;
            } else {
                if at_line_start {
                    self.write(&" ".repeat(indent));
                    at_line_start = false;
                }
                self.write(&c.to_string());
            }
        }
        if s.ends_with('\n') {
            self.out.pop();
        }
    }
}

#[derive(PartialEq, Clone, Copy)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Analysis {
    plain: bool,
    single: bool,
    block: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_printable(c: char) -> bool {
    let code = c as u32;
    code == 0x0a
        || (0x20..=0x7e).contains(&code)
        || code == 0x85
        || (0xa0..=0xd7ff).contains(&code)
        || ((0xe000..=0xfffd).contains(&code) && code != 0xfeff)
        || (0x10000..=0x10ffff).contains(&code)
}

/// libyaml's `yaml_emitter_analyze_scalar`, for block context.
fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            plain: true,
            single: true,
            block: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut special, mut line_breaks) = (false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    for (i, c) in chars.iter().copied().enumerate() {
        let followed_by_whitespace = chars.get(i + 1).is_none_or(|n| *n == ' ' || *n == '\t');
        if i == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) || (c == '-' && followed_by_whitespace) {
                block_indicators = true;
            }
            if (c == '?' || c == ':') && followed_by_whitespace {
                block_indicators = true;
            }
        } else if (c == ':' && followed_by_whitespace) || (c == '#' && preceded_by_whitespace) {
            block_indicators = true;
        }
        if !is_printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        let last = i + 1 == chars.len();
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            (previous_space, previous_break) = (true, false);
        } else if is_break(c) {
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            (previous_space, previous_break) = (false, true);
        } else {
            (previous_space, previous_break) = (false, false);
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c);
    }
    let mut analysis = Analysis {
        plain: true,
        single: true,
        block: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        analysis.plain = false;
    }
    if trailing_space {
        analysis.block = false;
    }
    if break_space {
        analysis.plain = false;
        analysis.single = false;
    }
    if space_break || special {
        analysis = Analysis {
            plain: false,
            single: false,
            block: false,
        };
    }
    if line_breaks || block_indicators {
        analysis.plain = false;
    }
    analysis
}

static FLOAT: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$").expect("valid")
});
static BASE60: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$").expect("valid")
});
static TIMESTAMP: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]| )[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]*)?(Z|[-+][0-9]{1,2}:[0-9]{2})?)?$",
    )
    .expect("valid")
});

/// Whether go-yaml v2 would read this plain scalar as something other than a string.
fn resolves_to_other_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
        ".NaN", ".NAN", "<<",
    ];
    if WORDS.contains(&s) || BASE60.is_match(s) {
        return true;
    }
    match s.as_bytes().first() {
        Some(b'.') => s.parse::<f64>().is_ok(),
        Some(b'+' | b'-' | b'0'..=b'9') => {
            if TIMESTAMP.is_match(s) {
                return true;
            }
            let plain = s.replace('_', "");
            crate::literal::parse_go_int(&plain)
                || (FLOAT.is_match(&plain) && plain.parse::<f64>().is_ok())
                || plain
                    .strip_prefix("0b")
                    .or_else(|| plain.strip_prefix("-0b"))
                    .is_some_and(|digits| {
                        !digits.is_empty() && digits.bytes().all(|b| b == b'0' || b == b'1')
                    })
        }
        _ => false,
    }
}
