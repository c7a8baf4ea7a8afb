//! Checks several kinds share: problems collected per field, regular expressions, templates,
//! Go durations, label selectors, and the template rules for Secrets.

use external_secrets_crds::meta::LabelSelector;
use external_secrets_crds::v1::ExternalSecretTemplate;
use external_secrets_providers::duration::parse_go_duration;
use external_secrets_template::{Options, Template};

/// Everything wrong with an object, one message per problem, each starting with the path of
/// the field it concerns (`spec.dataFrom[0].find.name.regexp: ...`).
#[derive(Debug, Default)]
pub struct Problems(Vec<String>);

impl Problems {
    /// Records a problem of `field`.
    pub fn add(&mut self, field: impl std::fmt::Display, message: impl std::fmt::Display) {
        self.0.push(format!("{field}: {message}"));
    }

    /// `Ok` when nothing was recorded, else every message in the order found.
    pub fn into_result(self) -> Result<(), Vec<String>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }
}

/// The regular expression must compile (the controllers compile it with the same engine).
pub fn regex(field: &str, pattern: &str, problems: &mut Problems) {
    if let Err(error) = regex::Regex::new(pattern) {
        // The parser's message draws the pattern over several lines; its last line says why.
        let text = error.to_string();
        let reason = text.lines().last().unwrap_or_default();
        let reason = reason.strip_prefix("error: ").unwrap_or(reason);
        problems.add(
            field,
            format!("invalid regular expression {pattern:?}: {reason}"),
        );
    }
}

/// The template must parse (with the default delimiters), so a typo fails at admission
/// rather than at the next sync.
pub fn template(field: &str, source: &str, problems: &mut Problems) {
    if let Err(error) = Template::parse(field, source, &Options::default()) {
        problems.add(field, format!("unable to parse template: {error}"));
    }
}

/// The text must be a Go duration such as `1h30m`.
pub fn go_duration(field: &str, text: &str, problems: &mut Problems) {
    if let Err(error) = parse_go_duration(text) {
        problems.add(field, error);
    }
}

/// The operators and values must make a valid selector, as the API server checks for built-in
/// kinds (custom resources get no such check).
pub fn label_selector(field: &str, selector: &LabelSelector, problems: &mut Problems) {
    for (index, requirement) in selector.match_expressions.iter().enumerate() {
        let field = format!("{field}.matchExpressions[{index}]");
        if requirement.key.is_empty() {
            problems.add(format!("{field}.key"), "must not be empty");
        }
        match requirement.operator.as_str() {
            "In" | "NotIn" if requirement.values.is_empty() => problems.add(
                format!("{field}.values"),
                format!(
                    "must be specified when operator is {}",
                    requirement.operator
                ),
            ),
            "Exists" | "DoesNotExist" if !requirement.values.is_empty() => problems.add(
                format!("{field}.values"),
                format!(
                    "may not be specified when operator is {}",
                    requirement.operator
                ),
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => problems.add(
                format!("{field}.operator"),
                format!("{other:?} is not a valid label selector operator"),
            ),
        }
    }
}

/// Every template in `template` must parse: `data` values, metadata labels and annotations,
/// and literal `templateFrom` entries.
pub fn template_sources(field: &str, template: &ExternalSecretTemplate, problems: &mut Problems) {
    for (key, source) in &template.data {
        self::template(&format!("{field}.data[{key}]"), source, problems);
    }
    if let Some(metadata) = &template.metadata {
        for (key, source) in &metadata.labels {
            self::template(&format!("{field}.metadata.labels[{key}]"), source, problems);
        }
        for (key, source) in &metadata.annotations {
            self::template(
                &format!("{field}.metadata.annotations[{key}]"),
                source,
                problems,
            );
        }
    }
    for (index, from) in template.template_from.iter().enumerate() {
        if let Some(literal) = &from.literal {
            self::template(
                &format!("{field}.templateFrom[{index}].literal"),
                literal,
                problems,
            );
        }
    }
}
