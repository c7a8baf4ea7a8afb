//! The functions the webhook templates may call: Go's builtins and the sprig functions upstream
//! manifests use for credentials and URLs. See [`super::template`] for the list.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::Value;

const FUNCTIONS: &[&str] = &[
    "and",
    "b64dec",
    "b64enc",
    "contains",
    "default",
    "empty",
    "eq",
    "fromJson",
    "hasPrefix",
    "hasSuffix",
    "index",
    "len",
    "lower",
    "ne",
    "not",
    "or",
    "print",
    "printf",
    "println",
    "quote",
    "replace",
    "squote",
    "toJson",
    "trim",
    "trimPrefix",
    "trimSuffix",
    "upper",
    "urlquery",
];

/// Fails like Go's parser does for a function that is not defined.
pub fn check_defined(name: &str) -> Result<(), String> {
    if FUNCTIONS.contains(&name) {
        Ok(())
    } else {
        Err(format!("function {name:?} not defined"))
    }
}

/// Calls function `name` with evaluated `arguments` (a piped value comes last).
pub fn call(name: &str, arguments: Vec<Value>) -> Result<Value, String> {
    let text = |value: &Value| -> Result<String, String> {
        match value {
            Value::Str(text) => Ok(text.clone()),
            Value::Int(_) | Value::Bool(_) => Ok(value.render()),
            _ => Err(format!("{name}: invalid value; expected string")),
        }
    };
    let arity = |count: usize| -> Result<(), String> {
        if arguments.len() == count {
            Ok(())
        } else {
            Err(format!(
                "wrong number of args for {name}: want {count} got {}",
                arguments.len()
            ))
        }
    };
    Ok(match name {
        "print" => Value::Str(sprint(&arguments)),
        "println" => Value::Str(
            arguments
                .iter()
                .map(Value::render)
                .collect::<Vec<_>>()
                .join(" ")
                + "\n",
        ),
        "printf" => {
            let (format, rest) = arguments.split_first().ok_or("printf: missing format")?;
            Value::Str(printf(&text(format)?, rest)?)
        }
        "urlquery" => Value::Str(query_escape(&sprint(&arguments))),
        "index" => {
            let (collection, keys) = arguments.split_first().ok_or("index: missing map")?;
            let mut current = collection.clone();
            for key in keys {
                current = match current {
                    Value::Map(mut entries) => entries
                        .remove(&text(key)?)
                        .unwrap_or_else(|| Value::Str(String::new())),
                    _ => return Err("index of a non-map value".to_owned()),
                };
            }
            current
        }
        "len" => {
            arity(1)?;
            Value::Int(match &arguments[0] {
                Value::Str(text) => text.len() as i64,
                Value::Map(entries) => entries.len() as i64,
                _ => return Err("len of an invalid value".to_owned()),
            })
        }
        "eq" | "ne" => {
            let (first, others) = arguments.split_first().ok_or("missing argument")?;
            if others.is_empty() {
                return Err(format!("missing argument for {name}"));
            }
            let equal = others.iter().any(|other| other == first);
            Value::Bool(if name == "eq" { equal } else { !equal })
        }
        "not" => {
            arity(1)?;
            Value::Bool(!arguments[0].is_true())
        }
        "and" => arguments
            .iter()
            .find(|value| !value.is_true())
            .or(arguments.last())
            .cloned()
            .ok_or("and: missing argument")?,
        "or" => arguments
            .iter()
            .find(|value| value.is_true())
            .or(arguments.last())
            .cloned()
            .ok_or("or: missing argument")?,
        "b64enc" => {
            arity(1)?;
            Value::Str(STANDARD.encode(text(&arguments[0])?))
        }
        "b64dec" => {
            arity(1)?;
            let decoded = STANDARD
                .decode(text(&arguments[0])?)
                .map_err(|_| "b64dec: illegal base64 data".to_owned())?;
            Value::Str(String::from_utf8_lossy(&decoded).into_owned())
        }
        "upper" => {
            arity(1)?;
            Value::Str(text(&arguments[0])?.to_uppercase())
        }
        "lower" => {
            arity(1)?;
            Value::Str(text(&arguments[0])?.to_lowercase())
        }
        "trim" => {
            arity(1)?;
            Value::Str(text(&arguments[0])?.trim().to_owned())
        }
        "trimPrefix" | "trimSuffix" => {
            arity(2)?;
            let (affix, subject) = (text(&arguments[0])?, text(&arguments[1])?);
            let trimmed = if name == "trimPrefix" {
                subject.strip_prefix(affix.as_str())
            } else {
                subject.strip_suffix(affix.as_str())
            };
            Value::Str(trimmed.unwrap_or(&subject).to_owned())
        }
        "replace" => {
            arity(3)?;
            let (old, new, subject) = (
                text(&arguments[0])?,
                text(&arguments[1])?,
                text(&arguments[2])?,
            );
            Value::Str(subject.replace(&old, &new))
        }
        "contains" | "hasPrefix" | "hasSuffix" => {
            arity(2)?;
            let (needle, subject) = (text(&arguments[0])?, text(&arguments[1])?);
            Value::Bool(match name {
                "contains" => subject.contains(&needle),
                "hasPrefix" => subject.starts_with(&needle),
                _ => subject.ends_with(&needle),
            })
        }
        "quote" | "squote" => {
            let mark = if name == "quote" { '"' } else { '\'' };
            let quoted: Vec<String> = arguments
                .iter()
                .filter(|value| !matches!(value, Value::Missing | Value::Nil))
                .map(|value| {
                    let rendered = value.render();
                    if mark == '"' {
                        format!("{rendered:?}")
                    } else {
                        format!("'{rendered}'")
                    }
                })
                .collect();
            Value::Str(quoted.join(" "))
        }
        "default" => {
            arity(2)?;
            if arguments[1].is_true() {
                arguments[1].clone()
            } else {
                arguments[0].clone()
            }
        }
        "empty" => {
            arity(1)?;
            Value::Bool(!arguments[0].is_true())
        }
        "fromJson" => {
            arity(1)?;
            let parsed: serde_json::Value = serde_json::from_str(&text(&arguments[0])?)
                .map_err(|_| "fromJson: invalid json".to_owned())?;
            from_json(parsed)?
        }
        "toJson" => {
            arity(1)?;
            Value::Str(to_json(&arguments[0]).to_string())
        }
        other => return Err(format!("function {other:?} not defined")),
    })
}

/// Go's `fmt.Sprint`: operands concatenated, with a space between two that are not strings.
fn sprint(arguments: &[Value]) -> String {
    let mut out = String::new();
    for (position, value) in arguments.iter().enumerate() {
        let is_string = matches!(value, Value::Str(_));
        if position > 0 && !is_string && !matches!(arguments[position - 1], Value::Str(_)) {
            out.push(' ');
        }
        out.push_str(&value.render());
    }
    out
}

fn printf(format: &str, arguments: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut remaining = arguments.iter();
    let mut characters = format.chars();
    while let Some(character) = characters.next() {
        if character != '%' {
            out.push(character);
            continue;
        }
        let verb = characters.next().ok_or("printf: format ends with %")?;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(argument) = remaining.next() else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        match verb {
            's' | 'v' | 'd' => out.push_str(&argument.render()),
            'q' => out.push_str(&format!("{:?}", argument.render())),
            other => return Err(format!("printf: verb %{other} is not supported")),
        }
    }
    Ok(out)
}

fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Missing | Value::Nil => serde_json::Value::Null,
        Value::Bool(value) => (*value).into(),
        Value::Int(value) => (*value).into(),
        Value::Str(value) => value.clone().into(),
        Value::Map(entries) => serde_json::Value::Object(
            entries
                .iter()
                .map(|(key, value)| (key.clone(), to_json(value)))
                .collect::<serde_json::Map<_, _>>(),
        ),
    }
}

fn from_json(value: serde_json::Value) -> Result<Value, String> {
    Ok(match value {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(flag) => Value::Bool(flag),
        serde_json::Value::Number(number) => match number.as_i64() {
            Some(integer) => Value::Int(integer),
            None => Value::Str(number.to_string()),
        },
        serde_json::Value::String(text) => Value::Str(text),
        serde_json::Value::Array(_) => return Err("fromJson: arrays are not supported".to_owned()),
        serde_json::Value::Object(members) => Value::Map(
            members
                .into_iter()
                .map(|(key, member)| Ok((key, from_json(member)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// Go's `url.QueryEscape`: unreserved bytes kept, space as `+`, everything else `%XX`.
pub fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char);
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// Builds a template map from string pairs.
pub fn string_map<'a>(pairs: impl IntoIterator<Item = (&'a str, String)>) -> Value {
    Value::Map(
        pairs
            .into_iter()
            .map(|(key, value)| (key.to_owned(), Value::Str(value)))
            .collect::<BTreeMap<_, _>>(),
    )
}
