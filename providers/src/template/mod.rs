//! A small Go `text/template` engine, so upstream manifests work unchanged: the webhook
//! provider's `url`, `headers`, `body` and `result.jsonPath`, and ExternalSecret target
//! templates (`spec.target.template`), which upstream renders with `missingkey=error`.
//!
//! Supported subset:
//! * text with `{{ ... }}` actions, the `{{-` / `-}}` whitespace trim markers, `{{/* comments */}}`;
//! * fields `.a.b`, `.` and `$` (the data root), `$.a.b`, and fields of a parenthesised pipeline;
//! * string (`"..."` with Go escapes, `` `raw` ``), integer, `true`/`false` and `nil` literals;
//! * pipelines `a | f x` (the left value becomes the last argument), nested `( ... )`;
//! * `if` / `else if` / `else`, `range` over maps (keys sorted, `$k, $v :=`, `else`), `with`
//!   (and `else`), variables (`$x := ...`, `$x = ...`, `$x.field`; no `define`/`template`);
//! * functions — Go builtins: `print`, `printf` (`%s %v %d %q %%`), `println`, `urlquery`,
//!   `index`, `len`, `eq`, `ne`, `and`, `or`, `not`; sprig: `b64enc`, `b64dec`, `upper`, `lower`,
//!   `trim`, `trimPrefix`, `trimSuffix`, `replace`, `quote`, `squote`, `default`, `empty`,
//!   `contains`, `hasPrefix`, `hasSuffix`, `toJson`, `fromJson` (objects and scalars).
//!
//! As in Go, a missing map key prints `<no value>` and is false in `if`; `index` of a missing key
//! is the empty string. Secret values are handled as text (invalid UTF-8 is replaced).
//! Error messages never include data values.

use std::collections::BTreeMap;
use std::fmt::Write as _;

mod functions;
mod lex;

pub use functions::query_escape;
pub use functions::string_map;

use functions::call;
use lex::{Piece, Token, split_actions};

/// A value inside a template.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A missing map entry (Go's invalid value).
    Missing,
    /// `nil`.
    Nil,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// Text.
    Str(String),
    /// A map (the data and its `remoteRef` and secret entries).
    Map(BTreeMap<String, Value>),
}

impl Value {
    /// Go's truth: false, 0, "", an empty map, nil and missing values are false.
    pub fn is_true(&self) -> bool {
        match self {
            Value::Missing | Value::Nil => false,
            Value::Bool(value) => *value,
            Value::Int(value) => *value != 0,
            Value::Str(value) => !value.is_empty(),
            Value::Map(value) => !value.is_empty(),
        }
    }

    /// How Go prints the value (`fmt.Sprint`).
    pub fn render(&self) -> String {
        match self {
            Value::Missing => "<no value>".to_owned(),
            Value::Nil => "<nil>".to_owned(),
            Value::Bool(value) => value.to_string(),
            Value::Int(value) => value.to_string(),
            Value::Str(value) => value.clone(),
            Value::Map(entries) => {
                let mut out = String::from("map[");
                for (position, (key, value)) in entries.iter().enumerate() {
                    if position > 0 {
                        out.push(' ');
                    }
                    let _ = write!(out, "{key}:{}", value.render());
                }
                out.push(']');
                out
            }
        }
    }
}

/// A parsed template.
#[derive(Debug, Clone)]
pub struct Template {
    nodes: Vec<Node>,
    missing_key_error: bool,
}

/// What rendering sees: dot, the variables in scope (`$` first) and Go's `missingkey`.
struct Scope {
    dot: Value,
    variables: Vec<(String, Value)>,
    missing_key_error: bool,
}

impl Scope {
    fn variable(&self, name: &str) -> Result<Value, String> {
        self.variables
            .iter()
            .rev()
            .find(|(candidate, _)| candidate == name)
            .map(|(_, value)| value.clone())
            .ok_or_else(|| format!("undefined variable: ${name}"))
    }
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Output(Pipeline),
    If {
        branches: Vec<(Pipeline, Vec<Node>)>,
        otherwise: Vec<Node>,
    },
    /// `$name := pipeline` (declare) or `$name = pipeline` (assign).
    Variable {
        name: String,
        declare: bool,
        pipeline: Pipeline,
    },
    Range {
        key: Option<String>,
        value: Option<String>,
        pipeline: Pipeline,
        body: Vec<Node>,
        otherwise: Vec<Node>,
    },
    With {
        variable: Option<String>,
        pipeline: Pipeline,
        body: Vec<Node>,
        otherwise: Vec<Node>,
    },
}

#[derive(Debug, Clone)]
struct Pipeline(Vec<Command>);

#[derive(Debug, Clone)]
struct Command(Vec<Term>);

#[derive(Debug, Clone)]
enum Term {
    Literal(Value),
    Function(String),
    Field { base: Base, path: Vec<String> },
}

#[derive(Debug, Clone)]
enum Base {
    Dot,
    Variable(String),
    Pipeline(Box<Pipeline>),
}

impl Template {
    /// Parses `source`; errors describe the problem without echoing the template.
    pub fn parse(source: &str) -> Result<Self, String> {
        let actions = split_actions(source)?;
        let mut position = 0;
        let (nodes, terminator) = parse_nodes(&actions, &mut position)?;
        match terminator {
            None => Ok(Self {
                nodes,
                missing_key_error: false,
            }),
            Some(keyword) => Err(format!("unexpected {{{{{keyword}}}}}")),
        }
    }

    /// Go's `Option("missingkey=error")`: reading a missing map key fails instead of
    /// printing `<no value>` (upstream's ExternalSecret templates are strict).
    pub fn with_missing_key_error(mut self) -> Self {
        self.missing_key_error = true;
        self
    }

    /// Renders the template with `data` as `.`.
    pub fn render(&self, data: &Value) -> Result<String, String> {
        let mut scope = Scope {
            dot: data.clone(),
            variables: vec![(String::new(), data.clone())],
            missing_key_error: self.missing_key_error,
        };
        let mut out = String::new();
        render_nodes(&self.nodes, &mut scope, &mut out)?;
        Ok(out)
    }
}

/// Parses nodes until `end`/`else` (returned as terminator) or the end of input.
fn parse_nodes(
    pieces: &[Piece],
    position: &mut usize,
) -> Result<(Vec<Node>, Option<String>), String> {
    let mut nodes = Vec::new();
    while let Some(piece) = pieces.get(*position) {
        *position += 1;
        let tokens = match piece {
            Piece::Text(text) => {
                nodes.push(Node::Text(text.clone()));
                continue;
            }
            Piece::Action(tokens) => tokens,
        };
        match tokens.first().map(|(token, _)| token) {
            Some(Token::Ident(keyword)) if keyword == "end" || keyword == "else" => {
                return Ok((nodes, Some(render_keyword(tokens))));
            }
            Some(Token::Ident(keyword)) if keyword == "if" => {
                nodes.push(parse_if(&tokens[1..], pieces, position)?);
            }
            Some(Token::Ident(keyword)) if keyword == "range" || keyword == "with" => {
                nodes.push(parse_block(keyword, &tokens[1..], pieces, position)?);
            }
            Some(Token::Ident(keyword))
                if matches!(
                    keyword.as_str(),
                    "define" | "template" | "block" | "break" | "continue"
                ) =>
            {
                return Err(format!("{{{{{keyword}}}}} is not supported"));
            }
            Some(Token::Variable(name))
                if matches!(
                    tokens.get(1).map(|(token, _)| token),
                    Some(Token::Declare | Token::Assign)
                ) =>
            {
                nodes.push(Node::Variable {
                    name: name.clone(),
                    declare: tokens[1].0 == Token::Declare,
                    pipeline: parse_pipeline(&tokens[2..])?,
                });
            }
            None => return Err("missing value for command".to_owned()),
            Some(_) => nodes.push(Node::Output(parse_pipeline(tokens)?)),
        }
    }
    Ok((nodes, None))
}

fn render_keyword(tokens: &[(Token, bool)]) -> String {
    match tokens {
        [(Token::Ident(first), _), (Token::Ident(second), _), ..] if second == "if" => {
            format!("{first} if")
        }
        [(Token::Ident(first), _), ..] => first.clone(),
        _ => String::new(),
    }
}

fn parse_if(
    condition: &[(Token, bool)],
    pieces: &[Piece],
    position: &mut usize,
) -> Result<Node, String> {
    let mut branches = vec![(parse_pipeline(condition)?, Vec::new())];
    loop {
        let (nodes, terminator) = parse_nodes(pieces, position)?;
        branches.last_mut().expect("one branch").1 = nodes;
        let Some(terminator) = terminator else {
            return Err("unexpected EOF: missing {{end}}".to_owned());
        };
        let Piece::Action(tokens) = &pieces[*position - 1] else {
            unreachable!("a terminator is an action");
        };
        match Some(terminator.as_str()) {
            Some("end") => {
                return Ok(Node::If {
                    branches,
                    otherwise: Vec::new(),
                });
            }
            Some("else if") => branches.push((parse_pipeline(&tokens[2..])?, Vec::new())),
            Some("else") => {
                let (otherwise, terminator) = parse_nodes(pieces, position)?;
                if terminator.as_deref() != Some("end") {
                    return Err("expected {{end}} after {{else}}".to_owned());
                }
                return Ok(Node::If {
                    branches,
                    otherwise,
                });
            }
            _ => return Err("unexpected EOF: missing {{end}}".to_owned()),
        }
    }
}

/// `range` and `with`: an optional `$k, $v :=` (range) or `$v :=` declaration, the pipeline,
/// the body, an optional `else` body, `end`.
fn parse_block(
    keyword: &str,
    tokens: &[(Token, bool)],
    pieces: &[Piece],
    position: &mut usize,
) -> Result<Node, String> {
    let (variables, rest) = match tokens {
        [
            (Token::Variable(key), _),
            (Token::Comma, _),
            (Token::Variable(value), _),
            (Token::Declare, _),
            rest @ ..,
        ] if keyword == "range" => ((Some(key.clone()), Some(value.clone())), rest),
        [(Token::Variable(value), _), (Token::Declare, _), rest @ ..] => {
            ((None, Some(value.clone())), rest)
        }
        _ => ((None, None), tokens),
    };
    let pipeline = parse_pipeline(rest)?;
    let (body, terminator) = parse_nodes(pieces, position)?;
    let otherwise = match terminator.as_deref() {
        Some("end") => Vec::new(),
        Some("else") => {
            let (otherwise, terminator) = parse_nodes(pieces, position)?;
            if terminator.as_deref() != Some("end") {
                return Err("expected {{end}} after {{else}}".to_owned());
            }
            otherwise
        }
        _ => return Err("unexpected EOF: missing {{end}}".to_owned()),
    };
    Ok(if keyword == "range" {
        Node::Range {
            key: variables.0,
            value: variables.1,
            pipeline,
            body,
            otherwise,
        }
    } else {
        Node::With {
            variable: variables.1,
            pipeline,
            body,
            otherwise,
        }
    })
}

fn parse_pipeline(tokens: &[(Token, bool)]) -> Result<Pipeline, String> {
    let mut position = 0;
    let pipeline = parse_pipeline_at(tokens, &mut position)?;
    if position != tokens.len() {
        return Err("unexpected ) in command".to_owned());
    }
    Ok(pipeline)
}

fn parse_pipeline_at(tokens: &[(Token, bool)], position: &mut usize) -> Result<Pipeline, String> {
    let mut commands = vec![Command(Vec::new())];
    while let Some((token, spaced)) = tokens.get(*position) {
        let current = &mut commands.last_mut().expect("one command").0;
        match token {
            Token::Close => break,
            Token::Pipe => {
                if current.is_empty() {
                    return Err("missing command before |".to_owned());
                }
                *position += 1;
                commands.push(Command(Vec::new()));
                continue;
            }
            _ => {}
        }
        if !current.is_empty() && !spaced {
            return Err("missing space between arguments".to_owned());
        }
        *position += 1;
        let term = match token {
            Token::Dot => field_chain(Base::Dot, tokens, position),
            Token::Root => field_chain(Base::Variable(String::new()), tokens, position),
            Token::Variable(name) => field_chain(Base::Variable(name.clone()), tokens, position),
            Token::Declare | Token::Assign | Token::Comma => {
                return Err("unexpected declaration or comma in command".to_owned());
            }
            Token::Field(name) => {
                let mut term = field_chain(Base::Dot, tokens, position);
                if let Term::Field { path, .. } = &mut term {
                    path.insert(0, name.clone());
                }
                term
            }
            Token::Open => {
                let inner = parse_pipeline_at(tokens, position)?;
                if tokens.get(*position).map(|(token, _)| token) != Some(&Token::Close) {
                    return Err("unclosed left paren".to_owned());
                }
                *position += 1;
                field_chain(Base::Pipeline(Box::new(inner)), tokens, position)
            }
            Token::Ident(name) => Term::Function(name.clone()),
            Token::Literal(value) => Term::Literal(value.clone()),
            Token::Pipe | Token::Close => unreachable!("handled above"),
        };
        commands.last_mut().expect("one command").0.push(term);
    }
    if commands.iter().any(|command| command.0.is_empty()) {
        return Err("missing value for command".to_owned());
    }
    for command in &commands {
        if command.0.len() > 1 && !matches!(command.0[0], Term::Function(_)) {
            return Err("can't give argument to non-function".to_owned());
        }
        if let Term::Function(name) = &command.0[0] {
            functions::check_defined(name)?;
        }
    }
    Ok(Pipeline(commands))
}

/// Fields directly following (no space) a base: `.a.b`, `$.a`, `(x).a`.
fn field_chain(base: Base, tokens: &[(Token, bool)], position: &mut usize) -> Term {
    let mut path = Vec::new();
    while let Some((Token::Field(name), false)) = tokens.get(*position) {
        path.push(name.clone());
        *position += 1;
    }
    Term::Field { base, path }
}

fn render_nodes(nodes: &[Node], scope: &mut Scope, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Output(pipeline) => out.push_str(&evaluate(pipeline, scope)?.render()),
            Node::If {
                branches,
                otherwise,
            } => {
                let mut taken = false;
                for (condition, body) in branches {
                    if evaluate(condition, scope)?.is_true() {
                        render_block(body, scope, out)?;
                        taken = true;
                        break;
                    }
                }
                if !taken {
                    render_block(otherwise, scope, out)?;
                }
            }
            Node::Variable {
                name,
                declare,
                pipeline,
            } => {
                let value = evaluate(pipeline, scope)?;
                if *declare {
                    scope.variables.push((name.clone(), value));
                } else {
                    let slot = scope
                        .variables
                        .iter_mut()
                        .rev()
                        .find(|(candidate, _)| candidate == name)
                        .ok_or_else(|| format!("undefined variable: ${name}"))?;
                    slot.1 = value;
                }
            }
            Node::Range {
                key,
                value,
                pipeline,
                body,
                otherwise,
            } => {
                let entries = match evaluate(pipeline, scope)? {
                    Value::Map(entries) => entries,
                    Value::Missing | Value::Nil => BTreeMap::new(),
                    _ => return Err("range can't iterate over a non-map value".to_owned()),
                };
                if entries.is_empty() {
                    render_block(otherwise, scope, out)?;
                }
                for (entry_key, entry_value) in entries {
                    let mut bindings = Vec::new();
                    if let Some(name) = key {
                        bindings.push((name.clone(), Value::Str(entry_key)));
                    }
                    if let Some(name) = value {
                        bindings.push((name.clone(), entry_value.clone()));
                    }
                    render_with_dot(body, entry_value, bindings, scope, out)?;
                }
            }
            Node::With {
                variable,
                pipeline,
                body,
                otherwise,
            } => {
                let value = evaluate(pipeline, scope)?;
                if value.is_true() {
                    // `with $x := p` binds $x as well as dot.
                    let bindings = variable
                        .iter()
                        .map(|name| (name.clone(), value.clone()))
                        .collect();
                    render_with_dot(body, value, bindings, scope, out)?;
                } else {
                    render_block(otherwise, scope, out)?;
                }
            }
        }
    }
    Ok(())
}

/// Renders a nested block: variables it declares end with it, as in Go.
fn render_block(nodes: &[Node], scope: &mut Scope, out: &mut String) -> Result<(), String> {
    let depth = scope.variables.len();
    let result = render_nodes(nodes, scope, out);
    scope.variables.truncate(depth);
    result
}

/// Renders `nodes` with `dot` as `.` and `bindings` declared, restoring both afterwards.
fn render_with_dot(
    nodes: &[Node],
    dot: Value,
    bindings: Vec<(String, Value)>,
    scope: &mut Scope,
    out: &mut String,
) -> Result<(), String> {
    let depth = scope.variables.len();
    scope.variables.extend(bindings);
    let outer = std::mem::replace(&mut scope.dot, dot);
    let result = render_nodes(nodes, scope, out);
    scope.dot = outer;
    scope.variables.truncate(depth);
    result
}

fn evaluate(pipeline: &Pipeline, scope: &Scope) -> Result<Value, String> {
    let mut previous: Option<Value> = None;
    for Command(terms) in &pipeline.0 {
        let mut arguments = Vec::with_capacity(terms.len());
        for term in &terms[1..] {
            arguments.push(evaluate_term(term, scope)?);
        }
        arguments.extend(previous.take());
        previous = Some(match &terms[0] {
            Term::Function(name) => call(name, arguments)?,
            term if arguments.is_empty() => evaluate_term(term, scope)?,
            _ => return Err("can't give argument to non-function".to_owned()),
        });
    }
    Ok(previous.unwrap_or(Value::Missing))
}

fn evaluate_term(term: &Term, scope: &Scope) -> Result<Value, String> {
    match term {
        Term::Literal(value) => Ok(value.clone()),
        Term::Function(name) => call(name, Vec::new()),
        Term::Field { base, path } => match base {
            Base::Dot => walk(&scope.dot, path, scope.missing_key_error),
            Base::Variable(name) => walk(&scope.variable(name)?, path, scope.missing_key_error),
            Base::Pipeline(pipeline) => {
                walk(&evaluate(pipeline, scope)?, path, scope.missing_key_error)
            }
        },
    }
}

/// Follows `path` from `value`; a missing key yields [`Value::Missing`], as in Go, or an
/// error naming the key under `missingkey=error`.
fn walk(mut value: &Value, path: &[String], missing_key_error: bool) -> Result<Value, String> {
    for name in path {
        value = match value {
            Value::Map(entries) => match entries.get(name) {
                Some(child) => child,
                None if missing_key_error => {
                    return Err(format!("map has no entry for key {name:?}"));
                }
                None => return Ok(Value::Missing),
            },
            Value::Missing | Value::Nil => return Ok(Value::Missing),
            _ => return Err(format!("can't evaluate field {name} in a non-map value")),
        };
    }
    Ok(value.clone())
}

#[cfg(test)]
mod tests;
