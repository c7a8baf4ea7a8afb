//! The evaluator of Go's `text/template` (`exec.go`), with upstream's `missingkey=error`:
//! walks the tree writing text and action values, evaluates pipelines (the previous command's
//! value becomes the last argument of the next), fields on maps, variables and their scopes,
//! control structures, `{{template}}` calls, and short-circuit `and`/`or`. Every walk is bounded
//! by [`super::limits`].

use std::rc::Rc;

use super::ast::{Arg, Command, Control, ControlKind, List, Node, Pipe};
use super::functions::{self, Ctx};
use super::gofmt::sprint_value;
use super::limits::{Budget, Left, MAX_EXEC_DEPTH, MAX_OUTPUT, MAX_STEPS, MAX_VALUE_DEPTH};
use super::literal::is_float_literal;
use super::parse::Templates;
use super::value::{MapKind, Value};
use super::{Data, MissingKey};

/// A failure while executing, at a node of the template named `template`.
#[derive(Debug)]
pub struct ExecError {
    pub template: String,
    pub pos: usize,
    pub node: String,
    pub message: String,
}

enum Flow {
    Normal,
    Break,
    Continue,
}

type Result<T> = std::result::Result<T, ExecError>;

/// Runs the template `name` of `templates` with `data` as dot, drawing on `budget`. Every
/// map of the render (the data's included) is kept in the state's arena and emptied
/// afterwards, so cycles that `set` can build cannot leak.
pub fn execute(
    templates: &Templates,
    name: &str,
    data: &Data,
    missing_key: MissingKey,
    budget: &Budget,
) -> Result<Vec<u8>> {
    let mut arena = Vec::new();
    let root = data.to_value(&mut arena);
    let left = budget.left();
    let mut state = State {
        templates,
        template: name.to_owned(),
        vars: vec![("$".into(), root.clone())],
        out: Vec::new(),
        steps: MAX_STEPS - left.steps.min(MAX_STEPS),
        output_limit: left.output,
        depth: 0,
        missing_key,
        ctx: Ctx::new(arena, left.work),
    };
    let result = match templates.trees.get(name) {
        Some(tree) => state.walk(&root, tree).map(|_| ()),
        None => Err(state.error(0, "", format!("no such template {name:?}"))),
    };
    drop(root);
    state.vars.clear();
    for map in state.ctx.arena.drain(..) {
        let entries = std::mem::take(&mut map.borrow_mut().entries);
        drop(entries);
    }
    budget.spent(Left {
        steps: MAX_STEPS.saturating_sub(state.steps),
        output: state.output_limit.saturating_sub(state.out.len()),
        work: state.ctx.budget,
    });
    result.map(|()| state.out)
}

struct State<'t> {
    templates: &'t Templates,
    template: String,
    vars: Vec<(String, Value)>,
    out: Vec<u8>,
    /// Steps taken, counting those of earlier renders sharing the budget.
    steps: u64,
    /// Bytes this render may write: what earlier renders sharing the budget left.
    output_limit: usize,
    depth: usize,
    missing_key: MissingKey,
    ctx: Ctx,
}

impl State<'_> {
    fn error(&self, pos: usize, node: impl ToString, message: impl Into<String>) -> ExecError {
        ExecError {
            template: self.template.clone(),
            pos,
            node: node.to_string(),
            message: message.into(),
        }
    }

    fn step(&mut self, pos: usize) -> Result<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.error(pos, "", format!("execution exceeded {MAX_STEPS} steps")));
        }
        Ok(())
    }

    fn enter(&mut self, pos: usize) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_EXEC_DEPTH {
            let message = format!("exceeded maximum template depth ({MAX_EXEC_DEPTH})");
            return Err(self.error(pos, "", message));
        }
        Ok(())
    }

    fn write(&mut self, bytes: &[u8], pos: usize) -> Result<()> {
        if self.out.len().saturating_add(bytes.len()) > self.output_limit {
            let message = format!("output exceeds {MAX_OUTPUT} bytes");
            return Err(self.error(pos, "", message));
        }
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    fn walk(&mut self, dot: &Value, list: &List) -> Result<Flow> {
        for node in list {
            match node {
                Node::Text(text) => {
                    self.step(0)?;
                    self.write(text.as_bytes(), 0)?;
                }
                Node::Action(pipe) => {
                    self.step(pipe.pos)?;
                    let value = self.eval_pipeline(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        self.ctx
                            .charge_value(&value)
                            .map_err(|error| self.error(pipe.pos, pipe, error.0))?;
                        let mut text = Vec::new();
                        match value {
                            Value::Nil => text.extend_from_slice(b"<no value>"),
                            value => sprint_value(&value, &mut text),
                        }
                        self.write(&text, pipe.pos)?;
                    }
                }
                Node::Control(control) => {
                    self.step(control.pipe.pos)?;
                    self.enter(control.pipe.pos)?;
                    let mark = self.vars.len();
                    let flow = match control.kind {
                        ControlKind::Range => self.walk_range(dot, control),
                        _ => self.walk_if_or_with(dot, control),
                    };
                    self.vars.truncate(mark);
                    self.depth -= 1;
                    match flow? {
                        Flow::Normal => {}
                        other => return Ok(other),
                    }
                }
                Node::Template { pos, name, pipe } => {
                    self.step(*pos)?;
                    self.walk_template(dot, *pos, name, pipe.as_ref())?;
                }
                Node::Break => return Ok(Flow::Break),
                Node::Continue => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    fn walk_if_or_with(&mut self, dot: &Value, control: &Control) -> Result<Flow> {
        let value = self.eval_pipeline(dot, &control.pipe)?;
        if value.is_true() {
            let dot = if control.kind == ControlKind::With {
                &value
            } else {
                dot
            };
            self.walk(dot, &control.list)
        } else if let Some(else_list) = &control.else_list {
            self.walk(dot, else_list)
        } else {
            Ok(Flow::Normal)
        }
    }

    fn walk_range(&mut self, dot: &Value, control: &Control) -> Result<Flow> {
        let pipe = &control.pipe;
        let value = self.eval_pipeline(dot, pipe)?;
        let mut ran = false;
        match &value {
            Value::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    ran = true;
                    if self.iteration(control, Value::Int(index as i64), item.clone())? {
                        break;
                    }
                }
            }
            Value::Map(map) if map.borrow().kind != MapKind::Certificate => {
                let entries: Vec<(String, Value)> = map
                    .borrow()
                    .entries
                    .iter()
                    .map(|(key, item)| (key.clone(), item.clone()))
                    .collect();
                for (key, item) in entries {
                    ran = true;
                    if self.iteration(control, Value::str(key), item)? {
                        break;
                    }
                }
            }
            Value::Int(count) => {
                if pipe.decl.len() > 1 {
                    let message = "can't use an int to iterate over more than one variable";
                    return Err(self.error(pipe.pos, pipe, message));
                }
                for index in 0..*count {
                    ran = true;
                    if self.iteration(control, Value::Int(index), Value::Int(index))? {
                        break;
                    }
                }
            }
            Value::Nil => {}
            other => {
                let message = format!(
                    "range can't iterate over a value of type {}",
                    other.type_name()
                );
                return Err(self.error(pipe.pos, pipe, message));
            }
        }
        if !ran && let Some(else_list) = &control.else_list {
            return self.walk(dot, else_list);
        }
        Ok(Flow::Normal)
    }

    /// One pass of a range body; returns whether it hit `{{break}}`.
    fn iteration(&mut self, control: &Control, key: Value, element: Value) -> Result<bool> {
        let pipe = &control.pipe;
        self.step(pipe.pos)?;
        let declared = pipe.decl.len();
        if pipe.is_assign {
            if let Some(name) = pipe.decl.last() {
                self.set_var(name, element.clone());
            }
            if declared > 1 {
                self.set_var(&pipe.decl[0], key);
            }
        } else {
            let top = self.vars.len();
            if declared > 0 {
                self.vars[top - 1].1 = element.clone();
            }
            if declared > 1 {
                self.vars[top - 2].1 = key;
            }
        }
        let mark = self.vars.len();
        let flow = self.walk(&element, &control.list);
        self.vars.truncate(mark);
        Ok(matches!(flow?, Flow::Break))
    }

    fn walk_template(
        &mut self,
        dot: &Value,
        pos: usize,
        name: &str,
        pipe: Option<&Pipe>,
    ) -> Result<()> {
        let Some(tree) = self.templates.trees.get(name) else {
            return Err(self.error(
                pos,
                format!("template {name:?}"),
                format!("no such template {name:?}"),
            ));
        };
        let new_dot = match pipe {
            Some(pipe) => self.eval_pipeline(dot, pipe)?,
            None => Value::Nil,
        };
        self.enter(pos)?;
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".into(), new_dot.clone())]);
        let saved_name = std::mem::replace(&mut self.template, name.to_owned());
        let result = self.walk(&new_dot, tree);
        self.vars = saved_vars;
        self.template = saved_name;
        self.depth -= 1;
        result.map(|_| ())
    }

    fn set_var(&mut self, name: &str, value: Value) {
        if let Some(slot) = self.vars.iter_mut().rev().find(|(var, _)| var == name) {
            slot.1 = value;
        }
    }

    fn eval_pipeline(&mut self, dot: &Value, pipe: &Pipe) -> Result<Value> {
        let mut value = None;
        for cmd in &pipe.cmds {
            value = Some(self.eval_command(dot, cmd, value)?);
        }
        let value = value.unwrap_or(Value::Nil);
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, value.clone());
            } else {
                self.vars.push((name.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, args: &[Arg], last: &Option<Value>) -> Result<()> {
        if args.len() > 1 || last.is_some() {
            let message = format!("can't give argument to non-function {}", args[0]);
            return Err(self.error(args[0].pos(), &args[0], message));
        }
        Ok(())
    }

    fn eval_command(&mut self, dot: &Value, cmd: &Command, last: Option<Value>) -> Result<Value> {
        let first = &cmd.args[0];
        match first {
            Arg::Field { pos, names } => {
                self.eval_field_chain(dot.clone(), names, *pos, first, &cmd.args, last)
            }
            Arg::Chain { pos, node, fields } => {
                if matches!(node.as_ref(), Arg::Nil(_)) {
                    let message = format!("indirection through explicit nil in {first}");
                    return Err(self.error(*pos, first, message));
                }
                let receiver = self.eval_arg(dot, node)?;
                self.eval_field_chain(receiver, fields, *pos, first, &cmd.args, last)
            }
            Arg::Identifier { pos, name } => {
                self.eval_function(dot, *pos, name, &cmd.args[1..], last)
            }
            Arg::Pipe(pipe) => {
                self.not_a_function(&cmd.args, &last)?;
                self.enter(pipe.pos)?;
                let value = self.eval_pipeline(dot, pipe);
                self.depth -= 1;
                value
            }
            Arg::Variable { pos, name, fields } => {
                let value = self.variable(name);
                if fields.is_empty() {
                    self.not_a_function(&cmd.args, &last)?;
                    return Ok(value);
                }
                self.eval_field_chain(value, fields, *pos, first, &cmd.args, last)
            }
            Arg::Nil(pos) => Err(self.error(*pos, first, "nil is not a command")),
            _ => {
                self.not_a_function(&cmd.args, &last)?;
                self.eval_arg(dot, first)
            }
        }
    }

    fn variable(&self, name: &str) -> Value {
        self.vars
            .iter()
            .rev()
            .find(|(var, _)| var == name)
            .map_or(Value::Nil, |(_, value)| value.clone())
    }

    fn eval_field_chain(
        &mut self,
        mut receiver: Value,
        names: &[String],
        pos: usize,
        node: &Arg,
        args: &[Arg],
        last: Option<Value>,
    ) -> Result<Value> {
        let has_args = args.len() > 1 || last.is_some();
        for (index, name) in names.iter().enumerate() {
            let is_last = index + 1 == names.len();
            receiver = match &receiver {
                Value::Map(map) => {
                    if is_last && has_args {
                        let message = format!("{name} is not a method but has arguments");
                        return Err(self.error(pos, node, message));
                    }
                    let found = map.borrow().entries.get(name).cloned();
                    if found.is_none() && map.borrow().kind == MapKind::Certificate {
                        let message = format!(
                            "can't evaluate field {name} in type {}",
                            receiver.type_name()
                        );
                        return Err(self.error(pos, node, message));
                    }
                    match (found, self.missing_key) {
                        (Some(value), _) => value,
                        (None, MissingKey::Default) => Value::Nil,
                        (None, MissingKey::Error) => {
                            let message = format!("map has no entry for key {name:?}");
                            return Err(self.error(pos, node, message));
                        }
                    }
                }
                // Go keeps following a missing value without complaint (a JSON null, which
                // Go would refuse as a nil interface, is treated the same).
                Value::Nil if self.missing_key == MissingKey::Default => Value::Nil,
                Value::Nil => {
                    let message = format!("nil pointer evaluating interface {{}}.{name}");
                    return Err(self.error(pos, node, message));
                }
                Value::Time(nanos, offset) => {
                    let call_args = if is_last {
                        self.eval_args(&Value::Nil, &args[1..], last.clone())?
                    } else {
                        Vec::new()
                    };
                    functions::date::method(*nanos, *offset, name, &call_args)
                        .map_err(|message| self.error(pos, node, message))?
                }
                other => {
                    let message =
                        format!("can't evaluate field {name} in type {}", other.type_name());
                    return Err(self.error(pos, node, message));
                }
            };
        }
        Ok(receiver)
    }

    fn eval_args(&mut self, dot: &Value, args: &[Arg], last: Option<Value>) -> Result<Vec<Value>> {
        let mut values = Vec::with_capacity(args.len() + 1);
        for arg in args {
            values.push(self.eval_arg(dot, arg)?);
        }
        values.extend(last);
        Ok(values)
    }

    fn eval_function(
        &mut self,
        dot: &Value,
        pos: usize,
        name: &str,
        args: &[Arg],
        last: Option<Value>,
    ) -> Result<Value> {
        let node = name;
        let Some(function) = functions::lookup(name) else {
            return Err(self.error(pos, node, format!("function {name:?} not defined")));
        };
        let count = args.len() + usize::from(last.is_some());
        if let Err(message) = function.arity.check(name, count) {
            return Err(self.error(pos, node, message));
        }
        if name == "and" || name == "or" {
            let want = name == "or";
            let mut value = Value::Nil;
            for arg in args {
                value = self.eval_arg(dot, arg)?;
                if value.is_true() == want {
                    return Ok(value);
                }
            }
            return Ok(last.unwrap_or(value));
        }
        let values = self.eval_args(dot, args, last)?;
        let result = self
            .ctx
            .charge_call(name, &values)
            .and_then(|()| (function.call)(&mut self.ctx, &values))
            .and_then(|result| self.ctx.charge_value(&result).map(|()| result))
            .map_err(|error| self.error(pos, node, format!("error calling {name}: {}", error.0)))?;
        if result.list_depth() > MAX_VALUE_DEPTH {
            let message = format!("value nests deeper than {MAX_VALUE_DEPTH} levels");
            return Err(self.error(pos, node, message));
        }
        Ok(result)
    }

    fn eval_arg(&mut self, dot: &Value, arg: &Arg) -> Result<Value> {
        self.step(arg.pos())?;
        match arg {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(Value::Nil),
            Arg::Bool(_, value) => Ok(Value::Bool(*value)),
            Arg::String { value, .. } => Ok(Value::Str(Rc::from(value.as_slice()))),
            Arg::Number(pos, number) => {
                if is_float_literal(number) {
                    Ok(Value::Float(number.float.unwrap_or_default()))
                } else if let Some(int) = number.int {
                    Ok(Value::Int(int))
                } else {
                    Err(self.error(*pos, arg, format!("{} overflows int", number.text)))
                }
            }
            Arg::Field { pos, names } => self.eval_field_chain(
                dot.clone(),
                names,
                *pos,
                arg,
                std::slice::from_ref(arg),
                None,
            ),
            Arg::Variable { pos, name, fields } => {
                let value = self.variable(name);
                if fields.is_empty() {
                    return Ok(value);
                }
                self.eval_field_chain(value, fields, *pos, arg, std::slice::from_ref(arg), None)
            }
            Arg::Chain { pos, node, fields } => {
                if matches!(node.as_ref(), Arg::Nil(_)) {
                    let message = format!("indirection through explicit nil in {arg}");
                    return Err(self.error(*pos, arg, message));
                }
                let receiver = self.eval_arg(dot, node)?;
                self.eval_field_chain(receiver, fields, *pos, arg, std::slice::from_ref(arg), None)
            }
            Arg::Identifier { pos, name } => self.eval_function(dot, *pos, name, &[], None),
            Arg::Pipe(pipe) => {
                self.enter(pipe.pos)?;
                let value = self.eval_pipeline(dot, pipe);
                self.depth -= 1;
                value
            }
        }
    }
}
