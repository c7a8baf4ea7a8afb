//! YAML read as upstream reads it: sigs.k8s.io/yaml's `Unmarshal`, which decodes with go-yaml
//! v2 into `interface{}` and converts the result to JSON. go-yaml v2 resolves plain scalars by
//! YAML 1.1: `y Y yes Yes YES on On ON` are true and `n N no No NO off Off OFF` false, `0755`
//! is octal and `1_000` is 1000 (Go's `strconv.ParseInt` with base 0, underscores removed),
//! `<<` merges maps, and a repeated key keeps its last value. The JSON step turns keys into
//! strings (`1.5` printed as a float32, `true`, ...), refuses null keys and non-finite floats.
//! Errors say where or what kind of thing failed, never the content (upstream's show the key
//! and value).
//!
//! libyaml (through serde_yaml) does the parsing; serde_yaml resolves scalars by YAML 1.2, so
//! the plain ones it leaves as strings are resolved again here. A scalar is plain when serde_yaml
//! lends it straight from the input (it lends quoted ones from one byte past their quote, and
//! block or escaped ones not at all). Explicit tags (`!!str 1`, `!!binary`) are not honoured.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

use crate::error::YamlError;
use crate::gofmt::{format_float_shortest, format_float32_shortest};

/// A YAML value as go-yaml v2 decodes it into `interface{}`.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// `~`, `null`, an empty scalar.
    Null,
    /// A boolean, YAML 1.1 spellings included.
    Bool(bool),
    /// An integer that fits Go's `int`.
    Int(i64),
    /// An integer above `int`'s range (Go's `uint64`).
    Uint(u64),
    /// A float, `.inf` and `.nan` included.
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping in document order, keys unique.
    Map(Vec<(Node, Node)>),
}

/// The first document of `text` (Null when there is none), as go-yaml v2 decodes it. The error
/// says where parsing failed, never what the text holds.
pub fn parse(text: &str) -> Result<Node, String> {
    let Some(document) = serde_yaml::Deserializer::from_str(text).next() else {
        return Ok(Node::Null);
    };
    let failure = RefCell::new(None);
    let seed = NodeSeed {
        text,
        tagged: false,
        failure: &failure,
    };
    match seed.deserialize(document) {
        Ok(parsed) => Ok(parsed.node()),
        Err(error) => Err(match (failure.take(), error.location()) {
            (Some(message), _) => message,
            (None, Some(location)) => format!("yaml: line {}: invalid YAML", location.line()),
            (None, None) => "yaml: invalid YAML".into(),
        }),
    }
}

/// The merge key.
const MERGE: &str = "<<";

/// go-yaml's refusal of a sequence or mapping as a key (upstream's message goes on to show it).
const INVALID_KEY: &str = "yaml: invalid map key";

/// Converts a node to JSON as sigs.k8s.io/yaml does: map keys become strings, and null keys,
/// integer keys beyond `int` and non-finite floats fail. A number is what Go's JSON text of it
/// reads back as with `UseNumber` (apimachinery's `yaml.Unmarshal`): an integer when the text
/// is one that fits `int64`, else a float; plain `json.Unmarshal` reads both as float64.
pub fn to_json(node: Node) -> Result<serde_json::Value, String> {
    Ok(match node {
        Node::Null => serde_json::Value::Null,
        Node::Bool(b) => serde_json::Value::Bool(b),
        Node::Int(i) => serde_json::Value::from(i),
        Node::Uint(u) => serde_json::Value::from(u as f64),
        Node::Float(f) if !f.is_finite() => {
            return Err(format!(
                "json: unsupported value: {}",
                format_float_shortest(f)
            ));
        }
        // Go writes integral floats below 1e21 without a point or exponent.
        Node::Float(f) if f.fract() == 0.0 && (-TWO_TO_63..TWO_TO_63).contains(&f) => {
            serde_json::Value::from(f as i64)
        }
        Node::Float(f) => serde_json::Value::from(f),
        Node::Str(s) => serde_json::Value::String(s),
        Node::Seq(items) => {
            serde_json::Value::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Node::Map(entries) => {
            let mut object = serde_json::Map::new();
            for (key, value) in entries {
                object.insert(json_key(&key)?, to_json(value)?);
            }
            serde_json::Value::Object(object)
        }
    })
}

/// 2^63: integral floats below it in magnitude are `int64`s once printed.
const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;

/// A node as sigs.k8s.io/yaml's `Unmarshal` into `map[string]string` reads it: scalars are
/// printed (floats as float32 `%g`, null as ""), sequences and mappings fail.
pub fn to_string_map(node: Node) -> Result<BTreeMap<String, String>, YamlError> {
    let cannot = |node: &Node, into: &'static str| {
        let kind = match node {
            Node::Seq(_) => "array",
            Node::Map(_) => "object",
            Node::Str(_) => "string",
            Node::Bool(_) => "bool",
            _ => "number",
        };
        YamlError::Unmarshal { kind, into }
    };
    let convert = YamlError::Convert;
    let entries = match node {
        Node::Map(entries) => entries,
        Node::Null => return Ok(BTreeMap::new()),
        Node::Float(f) if !f.is_finite() => {
            return Err(convert(to_json(node).err().unwrap_or_default()));
        }
        other => return Err(cannot(&other, "map[string]string")),
    };
    let mut map = BTreeMap::new();
    for (key, value) in entries {
        let key = json_key(&key).map_err(convert)?;
        let text = match value {
            Node::Null => String::new(),
            Node::Bool(b) => b.to_string(),
            Node::Int(i) => i.to_string(),
            Node::Uint(u) => u.to_string(),
            Node::Float(f) => format_float32_shortest(f),
            Node::Str(s) => s,
            other @ (Node::Seq(_) | Node::Map(_)) => return Err(cannot(&other, "string")),
        };
        map.insert(key, text);
    }
    Ok(map)
}

/// A map key as sigs.k8s.io/yaml writes it into JSON.
fn json_key(key: &Node) -> Result<String, String> {
    Ok(match key {
        Node::Str(s) => s.clone(),
        Node::Int(i) => i.to_string(),
        Node::Bool(b) => b.to_string(),
        Node::Float(f) => match format_float32_shortest(*f).as_str() {
            "+Inf" => ".inf".into(),
            "-Inf" => "-.inf".into(),
            "NaN" => ".nan".into(),
            other => other.into(),
        },
        Node::Null => return Err("unsupported map key of type: %!s(<nil>)".into()),
        Node::Uint(_) => return Err("unsupported map key of type: uint64".into()),
        // go-yaml refuses these keys while decoding.
        Node::Seq(_) | Node::Map(_) => return Err(INVALID_KEY.into()),
    })
}

/// go-yaml v2's `resolve` for a plain scalar.
fn resolve(plain: &str) -> Parsed {
    let node = match plain.as_bytes().first() {
        None => Node::Null,
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => {
            match plain {
                "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On"
                | "ON" => Node::Bool(true),
                "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off"
                | "OFF" => Node::Bool(false),
                "~" | "null" | "Null" | "NULL" => Node::Null,
                _ => Node::Str(plain.into()),
            }
        }
        Some(b'.') => match plain {
            ".inf" | ".Inf" | ".INF" => Node::Float(f64::INFINITY),
            ".nan" | ".NaN" | ".NAN" => Node::Float(f64::NAN),
            _ => finite_float(plain).map_or_else(|| Node::Str(plain.into()), Node::Float),
        },
        Some(b'+' | b'-' | b'0'..=b'9') => match plain {
            "+.inf" | "+.Inf" | "+.INF" => Node::Float(f64::INFINITY),
            "-.inf" | "-.Inf" | "-.INF" => Node::Float(f64::NEG_INFINITY),
            _ => resolve_number(plain),
        },
        Some(b'<') if plain == MERGE => return Parsed::MergeKey,
        Some(_) => Node::Str(plain.into()),
    };
    Parsed::Node(node)
}

/// go-yaml v2's number resolution: underscores removed, then Go's `ParseInt(s, 0, 64)`,
/// `ParseUint(s, 0, 64)` (no sign), and a YAML-style float (`ParseFloat`, finite only).
fn resolve_number(plain: &str) -> Node {
    let digits = plain.replace('_', "");
    if let Some((sign, magnitude)) = parse_go_uint(&digits) {
        let int = match sign {
            Some(b'-') => 0i64.checked_sub_unsigned(magnitude),
            _ => i64::try_from(magnitude).ok(),
        };
        match (int, sign) {
            (Some(int), _) => return Node::Int(int),
            (None, None) => return Node::Uint(magnitude),
            (None, Some(_)) => {}
        }
    }
    finite_float(&digits).map_or_else(|| Node::Str(plain.into()), Node::Float)
}

/// `text` as a float if it has go-yaml's float syntax and Go's `ParseFloat` takes it.
fn finite_float(text: &str) -> Option<f64> {
    let float: f64 = text.parse().ok().filter(|_| is_go_float(text))?;
    float.is_finite().then_some(float)
}

/// Go's base-0 integer syntax after an optional sign: `0x`, `0o`, `0b` prefixes (any case), a
/// leading `0` for octal, decimal otherwise. Returns the sign byte and the magnitude.
fn parse_go_uint(text: &str) -> Option<(Option<u8>, u64)> {
    let (sign, unsigned) = match text.as_bytes().first()? {
        sign @ (b'-' | b'+') => (Some(*sign), &text[1..]),
        _ => (None, text),
    };
    let lower = unsigned.to_ascii_lowercase();
    let (radix, digits) = if let Some(rest) = lower.strip_prefix("0x") {
        (16, rest)
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (8, rest)
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (2, rest)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    Some((sign, magnitude))
}

/// go-yaml v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_go_float(text: &str) -> bool {
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let some_digits = |s: &str| !s.is_empty() && all_digits(s);
    let text = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, Some(exponent)),
        None => (text, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => some_digits(fraction),
        Some((whole, fraction)) => some_digits(whole) && all_digits(fraction),
        None => some_digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| some_digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// What reading one node gives: a value, or the plain `<<` that merges maps as a key.
enum Parsed {
    Node(Node),
    MergeKey,
}

impl Parsed {
    /// The value this is outside key position (a plain `<<` value is the string).
    fn node(self) -> Node {
        match self {
            Parsed::Node(node) => node,
            Parsed::MergeKey => Node::Str(MERGE.into()),
        }
    }
}

/// Reads one node; `text` is the whole input, to tell plain scalars from quoted ones.
#[derive(Clone, Copy)]
struct NodeSeed<'de, 'f> {
    text: &'de str,
    /// Under an explicit tag: go-yaml leaves such scalars unresolved.
    tagged: bool,
    /// The go-yaml error that stopped reading, worded as go-yaml words it.
    failure: &'f RefCell<Option<String>>,
}

impl<'de, 'f> NodeSeed<'de, 'f> {
    fn child(self) -> NodeSeed<'de, 'f> {
        NodeSeed {
            tagged: false,
            ..self
        }
    }

    /// Records `message` as the failure and stops reading.
    fn fail<E: de::Error>(&self, message: String) -> E {
        *self.failure.borrow_mut() = Some(message);
        E::custom("go-yaml error")
    }

    /// Whether `scalar`, lent by serde_yaml, is a plain scalar of the input.
    fn is_plain(&self, scalar: &str) -> bool {
        let start = self.text.as_ptr() as usize;
        let at = scalar.as_ptr() as usize;
        if at < start || at + scalar.len() > start + self.text.len() {
            return false;
        }
        let offset = at - start;
        offset == 0 || !matches!(self.text.as_bytes()[offset - 1], b'\'' | b'"')
    }
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'de, '_> {
    type Value = Parsed;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Parsed, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'de, '_> {
    type Value = Parsed;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a YAML node")
    }

    fn visit_unit<E>(self) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Null))
    }

    fn visit_none<E>(self) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Null))
    }

    fn visit_bool<E>(self, value: bool) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Bool(value)))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Int(value)))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Parsed, E> {
        Ok(Parsed::Node(
            i64::try_from(value).map_or(Node::Uint(value), Node::Int),
        ))
    }

    // Beyond 64 bits go-yaml reads decimal digits as a float.
    fn visit_i128<E>(self, value: i128) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Float(value as f64)))
    }

    fn visit_u128<E>(self, value: u128) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Float(value as f64)))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Float(value)))
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Parsed, E> {
        if !self.tagged && self.is_plain(value) {
            Ok(resolve(value))
        } else {
            Ok(Parsed::Node(Node::Str(value.into())))
        }
    }

    fn visit_str<E>(self, value: &str) -> Result<Parsed, E> {
        Ok(Parsed::Node(Node::Str(value.into())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.child())? {
            items.push(item.node());
        }
        Ok(Parsed::Node(Node::Seq(items)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut entries = Entries::default();
        while let Some(key) = map.next_key_seed(self.child())? {
            let value = map.next_value_seed(self.child())?.node();
            let added = match key {
                Parsed::MergeKey => entries.merge(value),
                Parsed::Node(key) => entries.insert(key, value),
            };
            added.map_err(|message| self.fail(message))?;
        }
        Ok(Parsed::Node(Node::Map(entries.list)))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Parsed, A::Error> {
        let (_tag, variant): (de::IgnoredAny, _) = data.variant()?;
        variant.newtype_variant_seed(NodeSeed {
            tagged: true,
            ..self
        })
    }
}

/// A mapping being read: entries in document order, a later equal key replacing the value.
#[derive(Default)]
struct Entries {
    list: Vec<(Node, Node)>,
    index: HashMap<KeyId, usize>,
}

/// A scalar key's identity, as Go compares `interface{}` map keys (type, then value).
#[derive(Hash, PartialEq, Eq)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(u64),
    Str(String),
}

impl Entries {
    fn insert(&mut self, key: Node, value: Node) -> Result<(), String> {
        let id = match &key {
            Node::Null => KeyId::Null,
            Node::Bool(b) => KeyId::Bool(*b),
            Node::Int(i) => KeyId::Int(*i),
            Node::Uint(u) => KeyId::Uint(*u),
            // NaN never equals itself: every NaN key is a new entry, as in Go.
            Node::Float(f) if f.is_nan() => {
                self.list.push((key, value));
                return Ok(());
            }
            // + 0.0 makes -0.0 the same key as 0.0.
            Node::Float(f) => KeyId::Float((f + 0.0).to_bits()),
            Node::Str(s) => KeyId::Str(s.clone()),
            Node::Seq(_) | Node::Map(_) => return Err(INVALID_KEY.into()),
        };
        match self.index.get(&id) {
            Some(&at) => self.list[at].1 = value,
            None => {
                self.index.insert(id, self.list.len());
                self.list.push((key, value));
            }
        }
        Ok(())
    }

    /// go-yaml's merge: a map's entries, or those of each map of a sequence, earlier maps
    /// winning.
    fn merge(&mut self, value: Node) -> Result<(), String> {
        let wrong = || "yaml: map merge requires map or sequence of maps as the value".to_owned();
        match value {
            Node::Map(entries) => entries
                .into_iter()
                .try_for_each(|(key, value)| self.insert(key, value)),
            Node::Seq(maps) => maps.into_iter().rev().try_for_each(|map| match map {
                Node::Map(_) => self.merge(map),
                _ => Err(wrong()),
            }),
            _ => Err(wrong()),
        }
    }
}
