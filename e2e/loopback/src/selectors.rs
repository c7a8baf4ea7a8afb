//! Label selectors (`=`, `==`, `!=`, `in`, `notin`, exists, `!`exists) and field selectors
//! (`metadata.name`, `metadata.namespace`, and `type` for Secrets), parsed from list and
//! watch query parameters and matched against stored objects.

use crate::errors::ApiError;
use serde_json::Value;

/// One label requirement.
#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector; empty matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses the `labelSelector` query parameter.
    pub(crate) fn parse(text: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(part).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "unable to parse requirement: {part:?} in label selector {text:?}"
                ))
            })?);
        }
        Ok(Self(requirements))
    }

    /// Whether an object with these labels (`metadata.labels`, possibly absent) matches.
    pub(crate) fn matches(&self, labels: Option<&Value>) -> bool {
        let label = |key: &str| {
            labels
                .and_then(|labels| labels.get(key))
                .and_then(Value::as_str)
        };
        self.0.iter().all(|requirement| match requirement {
            Requirement::Equals(key, value) => label(key) == Some(value.as_str()),
            Requirement::NotEquals(key, value) => label(key) != Some(value.as_str()),
            Requirement::In(key, values) => {
                label(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            Requirement::NotIn(key, values) => {
                !label(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            Requirement::Exists(key) => label(key).is_some(),
            Requirement::NotExists(key) => label(key).is_none(),
        })
    }

    /// Whether the selector is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Splits on commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (index, character) in text.char_indices() {
        match character {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_requirement(part: &str) -> Option<Requirement> {
    if let Some(key) = part.strip_prefix('!') {
        return valid_key(key.trim()).then(|| Requirement::NotExists(key.trim().to_owned()));
    }
    for (operator, build) in [
        (
            "!=",
            Requirement::NotEquals as fn(String, String) -> Requirement,
        ),
        ("==", Requirement::Equals),
        ("=", Requirement::Equals),
    ] {
        if let Some((key, value)) = part.split_once(operator) {
            let (key, value) = (key.trim(), value.trim());
            return valid_key(key).then(|| build(key.to_owned(), value.to_owned()));
        }
    }
    for (operator, negated) in [(" notin ", true), (" in ", false)] {
        if let Some((key, values)) = part.split_once(operator) {
            let values = values.trim().strip_prefix('(')?.strip_suffix(')')?;
            let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
            let key = key.trim().to_owned();
            return Some(if negated {
                Requirement::NotIn(key, values)
            } else {
                Requirement::In(key, values)
            });
        }
    }
    valid_key(part).then(|| Requirement::Exists(part.to_owned()))
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

/// A parsed field selector: `field=value` / `field==value` / `field!=value` terms.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses the `fieldSelector` query parameter; `extra_fields` are the kind's own
    /// selectable fields beyond `metadata.name` and `metadata.namespace`.
    pub(crate) fn parse(text: &str, kind: &str, extra_fields: &[&str]) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for part in text
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
        {
            let (field, equal, value) = if let Some((field, value)) = part.split_once("!=") {
                (field, false, value)
            } else if let Some((field, value)) = part.split_once("==") {
                (field, true, value)
            } else if let Some((field, value)) = part.split_once('=') {
                (field, true, value)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if !matches!(field, "metadata.name" | "metadata.namespace")
                && !extra_fields.contains(&field)
            {
                return Err(
                    ApiError::bad_request(format!("field label not supported: {field}"))
                        .with_kind(kind),
                );
            }
            terms.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(Self(terms))
    }

    /// Whether the object matches every term.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, expected)| {
            let actual = field
                .split('.')
                .try_fold(object, |node, key| node.get(key))
                .and_then(Value::as_str)
                .unwrap_or("");
            (actual == expected) == *equal
        })
    }

    /// The single `metadata.name=` value, used to answer by key instead of scanning.
    pub(crate) fn exact_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|(field, equal, _)| field == "metadata.name" && *equal)
            .map(|(_, _, value)| value.as_str())
    }
}

impl ApiError {
    /// Prefixes a bad-request message with the kind, like kube's field-label conversion error.
    fn with_kind(mut self, kind: &str) -> Self {
        self.message = format!("{} for {kind}", self.message);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_operators() {
        let labels = json!({"app": "web", "tier": "front"});
        let matches = |selector: &str| {
            LabelSelector::parse(selector)
                .unwrap()
                .matches(Some(&labels))
        };
        assert!(matches("app=web"));
        assert!(matches("app==web,tier"));
        assert!(matches("app!=db"));
        assert!(matches("app in (web, db)"));
        assert!(matches("app notin (db),!missing"));
        assert!(!matches("tier notin (front)"));
        assert!(!matches("missing"));
        assert!(matches(""));
        assert!(LabelSelector::parse("a in b").is_err());
    }

    #[test]
    fn field_selectors() {
        let secret = json!({"metadata": {"name": "a", "namespace": "n"}, "type": "Opaque"});
        let selector = FieldSelector::parse(
            "metadata.name=a,type!=kubernetes.io/tls",
            "Secret",
            &["type"],
        )
        .unwrap();
        assert!(selector.matches(&secret));
        assert_eq!(selector.exact_name(), Some("a"));
        assert!(FieldSelector::parse("spec.x=1", "Secret", &["type"]).is_err());
    }
}
