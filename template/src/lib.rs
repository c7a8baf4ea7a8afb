//! Go `text/template` as upstream External Secrets Operator runs it: the parser and evaluator
//! of Go's `text/template`, Sprig's function map minus `env`/`expandenv`/`getHostByName`, and
//! ESO's helpers (PKCS#12, PEM, JWK, YAML, RSA). Upstream's `spec.target.template` and the
//! webhook provider's requests are rendered with it; what a template *means* for a Secret
//! (`template.data`, `templateFrom`, `mergePolicy`) is the controller's business, not this
//! crate's.
//!
//! Why an own interpreter: templates must render byte for byte as Go renders them, including
//! Go's number printing, map ordering, `<no value>`, byte-string semantics (`b64dec | pkcs12key`
//! handles binary) and the exact error on a missing key. The Rust Go-template crate (`gtmpl`) is
//! unmaintained, has no `missingkey=error`, and works on UTF-8 strings only.
//!
//! Resource use is bounded ([`limits`]), and no function reads files, the environment or the
//! network.

mod ast;
mod data;
mod error;
mod exec;
mod functions;
mod gofmt;
mod lex;
pub mod limits;
mod literal;
mod parse;
mod printf;
mod value;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use data::Data;
pub use error::{TemplateError, YamlError};
pub use limits::Budget;

use error::line_column;

/// The action delimiters (upstream's `--template-left-delimiter` / `--template-right-delimiter`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delimiters {
    /// Opens an action; `{{` by default.
    pub left: String,
    /// Closes an action; `}}` by default.
    pub right: String,
}

impl Default for Delimiters {
    fn default() -> Self {
        Delimiters {
            left: "{{".into(),
            right: "}}".into(),
        }
    }
}

/// What reading a map key that does not exist does: Go's `missingkey` option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingKey {
    /// `missingkey=error`: execution fails naming the key. Upstream's target templates.
    #[default]
    Error,
    /// Go's default: the value is missing, prints as `<no value>`, and fields of it are
    /// missing too. Upstream's webhook templates.
    Default,
}

/// How a template is parsed and run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The action delimiters.
    pub delimiters: Delimiters,
    /// What a missing map key does.
    pub missing_key: MissingKey,
}

/// A parsed template, ready to run any number of times. `Send + Sync`: callers parse once
/// (when a store is configured, say) and render per request.
#[derive(Clone, Debug)]
pub struct Template {
    name: String,
    source: String,
    templates: parse::Templates,
    missing_key: MissingKey,
}

impl Template {
    /// Parses `source` as the template called `name` (which errors name, as Go's do).
    pub fn parse(name: &str, source: &str, options: &Options) -> Result<Template, TemplateError> {
        let Delimiters { left, right } = &options.delimiters;
        let templates = parse::parse(name, source, left, right).map_err(|error| {
            let (line, column) = line_column(source, error.pos);
            TemplateError::Parse {
                name: name.to_owned(),
                line,
                column,
                message: error.message,
            }
        })?;
        Ok(Template {
            name: name.to_owned(),
            source: source.to_owned(),
            templates,
            missing_key: options.missing_key,
        })
    }

    /// The name errors use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs the template with `data` as dot and returns what it wrote, with the whole of
    /// [`limits`] to itself.
    pub fn execute(&self, data: &Data) -> Result<Vec<u8>, TemplateError> {
        self.execute_within(data, &Budget::default())
    }

    /// As [`Template::execute`], drawing on `budget`, which other renders of the same object
    /// share.
    pub fn execute_within(&self, data: &Data, budget: &Budget) -> Result<Vec<u8>, TemplateError> {
        let result = exec::execute(&self.templates, &self.name, data, self.missing_key, budget);
        result.map_err(|error| {
            let (line, column) = line_column(&self.source, error.pos);
            TemplateError::Execute {
                name: self.name.clone(),
                line,
                column,
                template: error.template,
                node: error.node,
                message: error.message,
            }
        })
    }
}

/// Renders `source` against secret `data` as upstream's target templates do: the template is
/// named `name` (the key it produces), the data is a `map[string]string` whatever bytes the
/// values hold, and a missing key is an error.
pub fn render(
    name: &str,
    source: &str,
    data: &BTreeMap<String, Vec<u8>>,
    delimiters: &Delimiters,
) -> Result<Vec<u8>, TemplateError> {
    render_within(name, source, data, delimiters, &Budget::default())
}

/// As [`render`], drawing on `budget`, which the other templates of the same object share.
pub fn render_within(
    name: &str,
    source: &str,
    data: &BTreeMap<String, Vec<u8>>,
    delimiters: &Delimiters,
    budget: &Budget,
) -> Result<Vec<u8>, TemplateError> {
    let options = Options {
        delimiters: delimiters.clone(),
        missing_key: MissingKey::Error,
    };
    Template::parse(name, source, &options)?.execute_within(&Data::from(data), budget)
}

/// YAML text read as sigs.k8s.io/yaml reads it into `interface{}`: go-yaml v2's YAML 1.1
/// (`yes`/`no`/`on`/`off`/`y`/`n` are booleans, `0755` octal, `<<` merges, the last of repeated
/// keys wins), then through JSON (keys become strings). Numbers are as apimachinery's
/// `yaml.Unmarshal` gives them (`UseNumber`): integers when Go's JSON text of them is one that
/// fits `int64` (`42`, `1.0`, `1e6`), floats otherwise; `fromYaml` reads all as float64.
/// The error names where parsing failed, never the content.
pub fn yaml_to_json(text: &str) -> Result<serde_json::Value, YamlError> {
    functions::serialize::yaml_to_json(text)
}

/// YAML text read as sigs.k8s.io/yaml's `Unmarshal` into `map[string]string` reads it (as
/// upstream reads a `KeysAndValues` template's output for `data`, `labels`, `annotations`):
/// go-yaml v2's YAML 1.1, then every scalar value printed (`5432`, `true` for `yes`, floats as
/// float32 `%g`, null as ""), while a sequence or mapping value fails. Errors leave the
/// content out.
pub fn yaml_to_string_map(text: &str) -> Result<BTreeMap<String, String>, YamlError> {
    functions::yaml_read::parse(text)
        .map_err(YamlError::Convert)
        .and_then(functions::yaml_read::to_string_map)
}

/// Whether templates may call a function called `name`.
pub fn is_function(name: &str) -> bool {
    functions::exists(name)
}

/// Go's `url.QueryEscape` (the `urlquery` builtin): unreserved bytes kept, space as `+`,
/// every other byte as `%XX`.
pub fn query_escape(text: &[u8]) -> String {
    // Every byte of the result is ASCII.
    String::from_utf8_lossy(&functions::builtins::query_escape(text)).into_owned()
}
