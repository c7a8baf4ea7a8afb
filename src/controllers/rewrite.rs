//! Key rewrites shared by ExternalSecret `dataFrom[].rewrite` and PushSecret
//! `dataTo[].rewrite`, as upstream applies them: `regexp` replaces every match in a key (Go's
//! `ReplaceAllString`: `$1` and `${name}` expand) and `transform` renders a template with the
//! key as `.value`. Each rule is compiled once, then applied to every key, rules in order.

use external_secrets_crds::v1::{ExternalSecretRewriteRegexp, ExternalSecretRewriteTransform};
use external_secrets_template::{Data, Delimiters, MissingKey, Options, Template};

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
    ) -> Result<Self, String> {
        match (regexp, transform) {
            (Some(regexp), None) => {
                let pattern = regex::Regex::new(&regexp.source).map_err(|error| {
                    format!("{field}.regexp.source: invalid regular expression: {error}")
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
                    .map_err(|error| format!("{field}.transform.template: {error}"))
            }
            _ => Err(format!(
                "{field}: exactly one of regexp or transform must be set"
            )),
        }
    }

    /// The key `key` becomes.
    pub fn apply(&self, key: &str) -> Result<String, String> {
        match self {
            KeyRewrite::Regexp { pattern, target } => {
                Ok(pattern.replace_all(key, target.as_str()).into_owned())
            }
            KeyRewrite::Transform(template) => {
                let data = Data::strings([("value", key)]);
                let output = template
                    .execute(&data)
                    .map_err(|error| format!("transform of key {key:?}: {error}"))?;
                String::from_utf8(output)
                    .map_err(|_| format!("transform of key {key:?}: the result is not UTF-8"))
            }
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
            .unwrap();
        assert!(
            error.starts_with("spec.dataTo[0].rewrite[1].regexp.source: invalid"),
            "{error}"
        );
        let error = KeyRewrite::compile("f", None, Some(&transform("{{ .value")))
            .err()
            .unwrap();
        assert!(error.starts_with("f.transform.template: "), "{error}");
        let error = KeyRewrite::compile("f", None, None).err().unwrap();
        assert_eq!(error, "f: exactly one of regexp or transform must be set");
        let missing = KeyRewrite::compile("f", None, Some(&transform("{{ .other }}"))).unwrap();
        assert!(missing.apply("k").is_err());
    }
}
