//! Target paths of generic targets (`templateFrom[].target: spec.rules[0].host`), parsed and
//! applied as upstream's template engine does: dotted keys with optional `[index]` steps,
//! intermediate maps and lists created on the way, indexes capped so a path cannot allocate
//! without bound.

use serde_json::{Map, Value};

/// Upstream's cap on a list index in a target path.
const MAX_INDEX: usize = 10_000;

/// Steps one path may have. Upstream has no cap; without one a long path nests the object
/// (and the recursion setting it) without bound, and every index step may grow a list to
/// [`MAX_INDEX`] entries. Real paths have a handful of steps.
const MAX_STEPS: usize = 32;

/// One step of a target path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A map key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// Why a target path is unusable: it does not parse, or a step meets a value of another kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// `path` does not parse; `problem` says where.
    #[error("invalid path {path:?}: {problem}")]
    Invalid {
        /// The path as written.
        path: String,
        /// What is wrong with it.
        problem: Problem,
    },
    /// `path` has no step at all.
    #[error("invalid path: {0}")]
    Empty(String),
    /// A key step meets a value that is not a map.
    #[error("expected map at key {key:?} but found {found}")]
    NotAMap {
        /// The key.
        key: String,
        /// The kind of value found.
        found: &'static str,
    },
    /// An index step meets a value that is not a list.
    #[error("expected array at index {index} but found {found}")]
    NotAList {
        /// The index.
        index: usize,
        /// The kind of value found.
        found: &'static str,
    },
}

/// What is wrong with a path that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// Two dots in a row, or a trailing dot.
    #[error("empty segment")]
    EmptySegment,
    /// Text after an index that is not another `[`.
    #[error("expected '[' near {0:?}")]
    ExpectedBracket(String),
    /// A `[` without its `]`.
    #[error("unterminated '['")]
    Unterminated,
    /// An index that is not a number.
    #[error("bad index {0:?}")]
    BadIndex(String),
    /// A negative index.
    #[error("negative index {0}")]
    Negative(i64),
    /// An index above [`MAX_INDEX`].
    #[error("index {0} exceeds maximum ({MAX_INDEX})")]
    TooLarge(usize),
    /// A path starting with an index.
    #[error("path must start with a key")]
    StartsWithIndex,
    /// More than [`MAX_STEPS`] keys and indexes.
    #[error("more than {MAX_STEPS} steps")]
    TooDeep,
}

/// Parses `target` (e.g. `spec.rules[0].from[0].source`); errors say what is wrong with it.
pub fn parse(target: &str) -> Result<Vec<Step>, PathError> {
    let invalid = |problem: Problem| PathError::Invalid {
        path: target.to_owned(),
        problem,
    };
    let mut steps = Vec::new();
    for segment in target.split('.') {
        if segment.is_empty() {
            return Err(invalid(Problem::EmptySegment));
        }
        let (name, mut rest) = segment
            .find('[')
            .map_or((segment, ""), |at| segment.split_at(at));
        if !name.is_empty() {
            steps.push(Step::Key(name.to_owned()));
        }
        while !rest.is_empty() {
            let Some(body) = rest.strip_prefix('[') else {
                return Err(invalid(Problem::ExpectedBracket(rest.to_owned())));
            };
            let Some(end) = body.find(']') else {
                return Err(invalid(Problem::Unterminated));
            };
            let text = &body[..end];
            let index: i64 = text
                .parse()
                .map_err(|_| invalid(Problem::BadIndex(text.to_owned())))?;
            let index = usize::try_from(index).map_err(|_| invalid(Problem::Negative(index)))?;
            if index > MAX_INDEX {
                return Err(invalid(Problem::TooLarge(index)));
            }
            steps.push(Step::Index(index));
            rest = &body[end + 1..];
        }
        if steps.len() > MAX_STEPS {
            return Err(invalid(Problem::TooDeep));
        }
    }
    match steps.first() {
        Some(Step::Key(_)) => Ok(steps),
        Some(Step::Index(_)) => Err(invalid(Problem::StartsWithIndex)),
        None => Err(PathError::Empty(target.to_owned())),
    }
}

/// Replaces the value at `steps` in `object` with `leaf(current value)`, creating maps and
/// growing lists on the way; a step through a value of the wrong kind fails.
pub fn set(
    object: &mut Value,
    steps: &[Step],
    leaf: impl FnOnce(Value) -> Value,
) -> Result<(), PathError> {
    let Some((step, rest)) = steps.split_first() else {
        *object = leaf(object.take());
        return Ok(());
    };
    let child = match step {
        Step::Key(key) => {
            if object.is_null() {
                *object = Value::Object(Map::new());
            }
            let Value::Object(map) = object else {
                return Err(PathError::NotAMap {
                    key: key.clone(),
                    found: kind(object),
                });
            };
            map.entry(key.clone()).or_insert(Value::Null)
        }
        Step::Index(index) => {
            if object.is_null() {
                *object = Value::Array(Vec::new());
            }
            let Value::Array(list) = object else {
                return Err(PathError::NotAList {
                    index: *index,
                    found: kind(object),
                });
            };
            if *index >= list.len() {
                list.resize(index + 1, Value::Null);
            }
            &mut list[*index]
        }
    };
    set(child, rest, leaf)
}

/// The kind of a JSON value, as errors name it.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_parse_into_keys_and_indexes() {
        assert_eq!(
            parse("spec.rules[0].from[12].source").unwrap(),
            vec![
                Step::Key("spec".into()),
                Step::Key("rules".into()),
                Step::Index(0),
                Step::Key("from".into()),
                Step::Index(12),
                Step::Key("source".into()),
            ]
        );
        assert_eq!(
            parse("spec.matrix[1][2]").unwrap()[2..],
            [Step::Index(1), Step::Index(2)]
        );
    }

    #[test]
    fn bad_paths_are_refused_with_the_reason() {
        for (path, why) in [
            ("spec..data", "empty segment"),
            ("spec.", "empty segment"),
            ("[0].spec", "path must start with a key"),
            ("spec.items[x]", "bad index \"x\""),
            ("spec.items[-1]", "negative index -1"),
            ("spec.items[10001]", "exceeds maximum (10000)"),
            ("spec.items[1", "unterminated '['"),
            ("spec.items[1]x", "expected '[' near \"x\""),
            // Bounded depth: each step nests the object and may grow a list to 10001 items.
            (
                format!("spec{}", "[10000]".repeat(40)).as_str(),
                "more than 32 steps",
            ),
            (["a"; 33].join(".").as_str(), "more than 32 steps"),
        ] {
            let error = parse(path).unwrap_err().to_string();
            assert!(error.contains(why), "{path}: {error}");
        }
        assert_eq!(parse(&["a"; 32].join(".")).unwrap().len(), 32);
    }

    #[test]
    fn set_creates_maps_and_grows_lists() {
        let mut object = json!({"spec": {"keep": 1}});
        let steps = parse("spec.rules[2].host").unwrap();
        set(&mut object, &steps, |_| json!("example.org")).unwrap();
        assert_eq!(
            object,
            json!({"spec": {"keep": 1, "rules": [null, null, {"host": "example.org"}]}})
        );
    }

    #[test]
    fn set_sees_the_current_value_and_refuses_wrong_kinds() {
        let mut object = json!({"spec": {"count": 2, "list": "text"}});
        set(&mut object, &parse("spec.count").unwrap(), |old| {
            json!(old.as_i64().unwrap() + 1)
        })
        .unwrap();
        assert_eq!(object["spec"]["count"], 3);
        let error = set(&mut object, &parse("spec.list[0]").unwrap(), |v| v)
            .unwrap_err()
            .to_string();
        assert_eq!(error, "expected array at index 0 but found string");
        let error = set(&mut object, &parse("spec.count.x").unwrap(), |v| v)
            .unwrap_err()
            .to_string();
        assert_eq!(error, "expected map at key \"x\" but found number");
    }
}
