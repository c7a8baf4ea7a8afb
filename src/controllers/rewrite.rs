//! Key rewrites shared by ExternalSecret `dataFrom[].rewrite` and PushSecret
//! `dataTo[].rewrite`, as upstream applies them: `regexp` replaces every match in a key (Go's
//! `ReplaceAllString`: `$1` and `${name}` expand) and `transform` renders a template with the
//! key as `.value`. Each rule is compiled once, then applied to every key, rules in order.
//! ExternalSecrets also have `merge` ([`merge`]), which combines JSON values rather than
//! renaming keys.

use std::collections::BTreeMap;

use external_secrets_crds::v1::{
    ExternalSecretRewriteMerge, ExternalSecretRewriteMergeConflictPolicy,
    ExternalSecretRewriteMergePriorityPolicy, ExternalSecretRewriteMergeStrategy,
    ExternalSecretRewriteRegexp, ExternalSecretRewriteTransform,
};
use external_secrets_providers::redact::json_error;
use external_secrets_template::{Data, Delimiters, MissingKey, Options, Template, TemplateError};

/// Why a `regexp` or `transform` rule cannot be compiled or applied; `field` is the rule's
/// field (`spec.dataFrom[0].rewrite[1]`), keys are named, values never.
#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    /// `regexp.source` is not a regular expression.
    #[error("{field}.regexp.source: invalid regular expression: {source}")]
    Regexp {
        /// The rule's field.
        field: String,
        /// The parser's error.
        source: regex::Error,
    },
    /// `transform.template` does not parse.
    #[error("{field}.transform.template: {source}")]
    Template {
        /// The rule's field.
        field: String,
        /// The engine's error (boxed: it is large and errors are rare).
        source: Box<TemplateError>,
    },
    /// The rule sets neither or both of `regexp` and `transform`.
    #[error("{field}: exactly one of regexp or transform must be set")]
    NoRule {
        /// The rule's field.
        field: String,
    },
    /// The transform failed on `key`.
    #[error("transform of key {key:?}: {source}")]
    Transform {
        /// The key being renamed.
        key: String,
        /// The engine's error (boxed: it is large and errors are rare).
        source: Box<TemplateError>,
    },
    /// The transform of `key` produced bytes that are not UTF-8.
    #[error("transform of key {key:?}: the result is not UTF-8")]
    NotUtf8 {
        /// The key being renamed.
        key: String,
    },
}

/// Why a `merge` rule failed, as upstream words it; keys are named, values never.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A `priority` key is not in the data (and `priorityPolicy` is not `IgnoreNotFound`).
    #[error("merge failed with key {key:?} not found in input map")]
    KeyNotFound {
        /// The priority key.
        key: String,
    },
    /// A value is not a JSON object.
    #[error("merge failed with failed to unmarshal JSON of key {key:?}: {}", json_error(.source))]
    NotAnObject {
        /// Its key.
        key: String,
        /// The parser's error (printed by category and position only).
        source: serde_json::Error,
    },
    /// Members conflict (and `conflictPolicy` is not `Ignore`).
    #[error("merge failed with conflicts: {}", .members.join(", "))]
    Conflicts {
        /// The conflicting member names.
        members: Vec<String>,
    },
    /// `strategy: JSON` without `into`.
    #[error("merge failed with missing 'into' field")]
    MissingInto,
}

/// One compiled rewrite rule.
pub enum KeyRewrite {
    /// `regexp`: every match of `pattern` becomes `target`.
    Regexp {
        /// The compiled `source`.
        pattern: regex::Regex,
        /// The replacement, with `$1`/`${name}` references.
        target: String,
    },
    /// `transform`: the template's output is the new key.
    Transform(Box<Template>),
}

impl KeyRewrite {
    /// Compiles the rule at `field` that sets `regexp` or `transform` (exactly one).
    pub fn compile(
        field: &str,
        regexp: Option<&ExternalSecretRewriteRegexp>,
        transform: Option<&ExternalSecretRewriteTransform>,
    ) -> Result<Self, RewriteError> {
        match (regexp, transform) {
            (Some(regexp), None) => {
                let pattern =
                    regex::Regex::new(&regexp.source).map_err(|source| RewriteError::Regexp {
                        field: field.to_owned(),
                        source,
                    })?;
                Ok(KeyRewrite::Regexp {
                    pattern,
                    target: regexp.target.clone(),
                })
            }
            (None, Some(transform)) => {
                let options = Options {
                    delimiters: Delimiters::default(),
                    missing_key: MissingKey::Error,
                };
                Template::parse("transform", &transform.template, &options)
                    .map(|template| KeyRewrite::Transform(Box::new(template)))
                    .map_err(|source| RewriteError::Template {
                        field: field.to_owned(),
                        source: Box::new(source),
                    })
            }
            _ => Err(RewriteError::NoRule {
                field: field.to_owned(),
            }),
        }
    }

    /// The key `key` becomes.
    pub fn apply(&self, key: &str) -> Result<String, RewriteError> {
        match self {
            KeyRewrite::Regexp { pattern, target } => {
                Ok(pattern.replace_all(key, target.as_str()).into_owned())
            }
            KeyRewrite::Transform(template) => {
                let data = Data::strings([("value", key)]);
                let output = crate::controllers::template::with_budget(|budget| {
                    template.execute_within(&data, budget)
                })
                .map_err(|source| RewriteError::Transform {
                    key: key.to_owned(),
                    source: Box::new(source),
                })?;
                String::from_utf8(output).map_err(|_| RewriteError::NotUtf8 {
                    key: key.to_owned(),
                })
            }
        }
    }
}

/// Upstream's `RewriteMerge`: every value is a JSON object; they are merged in key order
/// (alphabetical, then `priority` in its order, so a priority key wins), conflicts failing
/// unless `conflictPolicy: Ignore`. `Extract` makes each merged member a key (strings as they
/// are, other values as JSON); `JSON` keeps the input and adds the merged object under `into`.
pub fn merge(
    operation: &ExternalSecretRewriteMerge,
    data: BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, Vec<u8>>, MergeError> {
    let mut keys: Vec<&String> = data
        .keys()
        .filter(|key| !operation.priority.contains(key))
        .collect();
    keys.extend(operation.priority.iter());
    let mut merged = serde_json::Map::new();
    let mut conflicts = Vec::new();
    for key in keys {
        let Some(value) = data.get(key) else {
            if operation.priority_policy == ExternalSecretRewriteMergePriorityPolicy::IgnoreNotFound
            {
                continue;
            }
            return Err(MergeError::KeyNotFound { key: key.clone() });
        };
        let members: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(value)
            .map_err(|source| MergeError::NotAnObject {
                key: key.clone(),
                source,
            })?;
        for (member, value) in members {
            if merged.insert(member.clone(), value).is_some() {
                conflicts.push(member);
            }
        }
    }
    if operation.conflict_policy != ExternalSecretRewriteMergeConflictPolicy::Ignore
        && !conflicts.is_empty()
    {
        return Err(MergeError::Conflicts { members: conflicts });
    }
    match operation.strategy {
        ExternalSecretRewriteMergeStrategy::Extract => Ok(merged
            .into_iter()
            .map(|(key, value)| {
                let bytes = match value {
                    serde_json::Value::String(text) => text.into_bytes(),
                    other => other.to_string().into_bytes(),
                };
                (key, bytes)
            })
            .collect()),
        ExternalSecretRewriteMergeStrategy::Json => {
            if operation.into.is_empty() {
                return Err(MergeError::MissingInto);
            }
            let mut out = data;
            let object = serde_json::Value::Object(merged).to_string();
            out.insert(operation.into.clone(), object.into_bytes());
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regexp(source: &str, target: &str) -> ExternalSecretRewriteRegexp {
        ExternalSecretRewriteRegexp {
            source: source.into(),
            target: target.into(),
        }
    }

    fn transform(template: &str) -> ExternalSecretRewriteTransform {
        ExternalSecretRewriteTransform {
            template: template.into(),
        }
    }

    #[test]
    fn regexps_replace_every_match_with_group_references() {
        let rule = KeyRewrite::compile("r", Some(&regexp("^app/(.*)$", "APP_${1}")), None).unwrap();
        assert_eq!(rule.apply("app/db").unwrap(), "APP_db");
        assert_eq!(rule.apply("other").unwrap(), "other");
        let dashes = KeyRewrite::compile("r", Some(&regexp("-", "_")), None).unwrap();
        assert_eq!(dashes.apply("a-b-c").unwrap(), "a_b_c");
    }

    #[test]
    fn transforms_render_the_key_as_value() {
        let rule =
            KeyRewrite::compile("r", None, Some(&transform("{{ .value | upper }}"))).unwrap();
        assert_eq!(rule.apply("db-user").unwrap(), "DB-USER");
        let prefixed =
            KeyRewrite::compile("r", None, Some(&transform("prod_{{ .value }}"))).unwrap();
        assert_eq!(prefixed.apply("key").unwrap(), "prod_key");
    }

    #[test]
    fn bad_rules_name_their_field() {
        let error = KeyRewrite::compile("spec.dataTo[0].rewrite[1]", Some(&regexp("(", "")), None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with("spec.dataTo[0].rewrite[1].regexp.source: invalid"),
            "{error}"
        );
        let error = KeyRewrite::compile("f", None, Some(&transform("{{ .value")))
            .err()
            .unwrap()
            .to_string();
        assert!(error.starts_with("f.transform.template: "), "{error}");
        let error = KeyRewrite::compile("f", None, None)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(error, "f: exactly one of regexp or transform must be set");
        let missing = KeyRewrite::compile("f", None, Some(&transform("{{ .other }}"))).unwrap();
        assert!(missing.apply("k").is_err());
    }

    fn merge_op(spec: serde_json::Value) -> ExternalSecretRewriteMerge {
        serde_json::from_value(spec).unwrap()
    }

    fn json_data() -> BTreeMap<String, Vec<u8>> {
        [
            ("a", r#"{"host":"db-a","port":5432}"#),
            ("b", r#"{"host":"db-b","user":"app"}"#),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value.as_bytes().to_vec()))
        .collect()
    }

    #[test]
    fn merges_extract_members_with_priority_and_conflict_policy() {
        let error = merge(&merge_op(serde_json::json!({})), json_data())
            .unwrap_err()
            .to_string();
        assert_eq!(error, "merge failed with conflicts: host");
        let ignore = merge_op(serde_json::json!({"conflictPolicy": "Ignore", "priority": ["a"]}));
        let merged = merge(&ignore, json_data()).unwrap();
        assert_eq!(
            merged["host"], b"db-a",
            "the priority key is merged last and wins"
        );
        assert_eq!(merged["port"], b"5432");
        assert_eq!(merged["user"], b"app");
        assert!(!merged.contains_key("a"));
        let strict = merge_op(serde_json::json!({"conflictPolicy": "Ignore", "priority": ["c"]}));
        assert_eq!(
            merge(&strict, json_data()).unwrap_err().to_string(),
            "merge failed with key \"c\" not found in input map"
        );
        let lenient = merge_op(
            serde_json::json!({"conflictPolicy": "Ignore", "priority": ["c"],
            "priorityPolicy": "IgnoreNotFound"}),
        );
        assert!(merge(&lenient, json_data()).is_ok());
    }

    #[test]
    fn merges_into_one_json_key_keeping_the_input() {
        let into = merge_op(serde_json::json!({"strategy": "JSON", "into": "all",
            "conflictPolicy": "Ignore"}));
        let merged = merge(&into, json_data()).unwrap();
        assert_eq!(
            String::from_utf8(merged["all"].clone()).unwrap(),
            r#"{"host":"db-b","port":5432,"user":"app"}"#
        );
        assert!(merged.contains_key("a") && merged.contains_key("b"));
        let missing = merge_op(serde_json::json!({"strategy": "JSON", "conflictPolicy": "Ignore"}));
        assert_eq!(
            merge(&missing, json_data()).unwrap_err().to_string(),
            "merge failed with missing 'into' field"
        );
        let not_json: BTreeMap<String, Vec<u8>> = [("x".to_owned(), b"plain".to_vec())].into();
        assert!(
            merge(&into, not_json)
                .unwrap_err()
                .to_string()
                .starts_with("merge failed with failed to unmarshal JSON")
        );
        let quoted: BTreeMap<String, Vec<u8>> =
            [("x".to_owned(), br#""hunter2-s3cr3t""#.to_vec())].into();
        assert_eq!(
            merge(&into, quoted).unwrap_err().to_string(),
            "merge failed with failed to unmarshal JSON of key \"x\": a value of the wrong type \
             at line 1 column 16",
            "the value is never quoted"
        );
    }
}
