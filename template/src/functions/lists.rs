//! Sprig's list functions (`list.go`, `numeric.go`'s `until`/`untilStep`/`seq`). The `must`
//! variants return the error their plain twin would panic with; in a template both fail the
//! render the same way, so they share an implementation.

use super::builtins::slice;
use super::strings::strslice;
use super::{Arity, Ctx, Entry, FuncError, FuncResult, check_size, int, list};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("list", Arity::AtLeast(0), |_, a| {
        Ok(Value::list(a.to_vec()))
    }),
    ("tuple", Arity::AtLeast(0), |_, a| {
        Ok(Value::list(a.to_vec()))
    }),
    ("append", Arity::Exact(2), push),
    ("push", Arity::Exact(2), push),
    ("mustAppend", Arity::Exact(2), push),
    ("mustPush", Arity::Exact(2), push),
    ("prepend", Arity::Exact(2), prepend),
    ("mustPrepend", Arity::Exact(2), prepend),
    ("first", Arity::Exact(1), first),
    ("mustFirst", Arity::Exact(1), first),
    ("last", Arity::Exact(1), last),
    ("mustLast", Arity::Exact(1), last),
    ("rest", Arity::Exact(1), rest),
    ("mustRest", Arity::Exact(1), rest),
    ("initial", Arity::Exact(1), initial),
    ("mustInitial", Arity::Exact(1), initial),
    ("reverse", Arity::Exact(1), reverse),
    ("mustReverse", Arity::Exact(1), reverse),
    ("uniq", Arity::Exact(1), uniq),
    ("mustUniq", Arity::Exact(1), uniq),
    ("without", Arity::AtLeast(1), without),
    ("mustWithout", Arity::AtLeast(1), without),
    ("has", Arity::Exact(2), has),
    ("mustHas", Arity::Exact(2), has),
    ("slice", Arity::AtLeast(1), slice),
    ("mustSlice", Arity::AtLeast(1), slice),
    ("concat", Arity::AtLeast(0), concat),
    ("chunk", Arity::Exact(2), chunk),
    ("mustChunk", Arity::Exact(2), chunk),
    ("compact", Arity::Exact(1), compact),
    ("mustCompact", Arity::Exact(1), compact),
    ("sortAlpha", Arity::Exact(1), sort_alpha),
    ("until", Arity::Exact(1), |_, a| {
        let count = int(&a[0])?;
        Ok(ints(until_step(0, count, if count < 0 { -1 } else { 1 })?))
    }),
    ("untilStep", Arity::Exact(3), |_, a| {
        Ok(ints(until_step(int(&a[0])?, int(&a[1])?, int(&a[2])?)?))
    }),
    ("seq", Arity::AtLeast(0), seq),
];

fn push(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let mut items = list(&args[0], "push")?.to_vec();
    items.push(args[1].clone());
    Ok(Value::list(items))
}

fn prepend(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let mut items = vec![args[1].clone()];
    items.extend_from_slice(list(&args[0], "prepend")?);
    Ok(Value::list(items))
}

fn first(_: &mut Ctx, args: &[Value]) -> FuncResult {
    Ok(list(&args[0], "find first")?
        .first()
        .cloned()
        .unwrap_or(Value::Nil))
}

fn last(_: &mut Ctx, args: &[Value]) -> FuncResult {
    Ok(list(&args[0], "find last")?
        .last()
        .cloned()
        .unwrap_or(Value::Nil))
}

fn rest(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let items = list(&args[0], "find rest")?;
    Ok(Value::list(items.get(1..).unwrap_or_default().to_vec()))
}

fn initial(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let items = list(&args[0], "find initial")?;
    Ok(Value::list(items[..items.len().saturating_sub(1)].to_vec()))
}

fn reverse(_: &mut Ctx, args: &[Value]) -> FuncResult {
    Ok(Value::list(
        list(&args[0], "find reverse")?
            .iter()
            .rev()
            .cloned()
            .collect(),
    ))
}

/// Sprig compares each element with every one kept so far: charged as such.
fn uniq(ctx: &mut Ctx, args: &[Value]) -> FuncResult {
    let items = list(&args[0], "find uniq")?;
    ctx.charge(args[0].size(ctx.budget).saturating_mul(items.len() as u64))?;
    let mut out: Vec<Value> = Vec::new();
    for item in items {
        if !out.iter().any(|seen| seen.deep_equal(item)) {
            out.push(item.clone());
        }
    }
    Ok(Value::list(out))
}

fn without(ctx: &mut Ctx, args: &[Value]) -> FuncResult {
    let omit = &args[1..];
    let items = list(&args[0], "find without")?;
    ctx.charge(args[0].size(ctx.budget).saturating_mul(omit.len() as u64))?;
    Ok(Value::list(
        items
            .iter()
            .filter(|item| !omit.iter().any(|o| o.deep_equal(item)))
            .cloned()
            .collect(),
    ))
}

fn has(_: &mut Ctx, args: &[Value]) -> FuncResult {
    if let Value::Nil = args[1] {
        return Ok(Value::Bool(false));
    }
    let items = list(&args[1], "find has")?;
    Ok(Value::Bool(
        items.iter().any(|item| args[0].deep_equal(item)),
    ))
}

fn concat(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let mut out = Vec::new();
    for arg in args {
        let Value::List(items) = arg else {
            let message = format!("Cannot concat type {} as list", arg.kind_name());
            return Err(FuncError(message));
        };
        check_size(out.len() + items.len())?;
        out.extend(items.iter().cloned());
    }
    Ok(Value::list(out))
}

fn chunk(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let size = int(&args[0])?;
    let items = list(&args[1], "chunk")?;
    if size <= 0 {
        return Err("chunk size must be positive".into());
    }
    Ok(Value::list(
        items
            .chunks(size as usize)
            .map(|chunk| Value::list(chunk.to_vec()))
            .collect(),
    ))
}

fn compact(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let items = list(&args[0], "compact")?;
    Ok(Value::list(
        items
            .iter()
            .filter(|item| !item.is_empty())
            .cloned()
            .collect(),
    ))
}

fn sort_alpha(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let mut items = match &args[0] {
        Value::List(_) => strslice(&args[0]),
        other => vec![super::strval(other)],
    };
    items.sort();
    Ok(Value::list(items.into_iter().map(Value::Str).collect()))
}

fn ints(values: Vec<i64>) -> Value {
    Value::list(values.into_iter().map(Value::Int).collect())
}

/// Sprig's `untilStep`: `start` towards `stop` (exclusive) by `step`.
pub fn until_step(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, FuncError> {
    let span = (i128::from(stop) - i128::from(start)).unsigned_abs();
    let steps = if step == 0 {
        0
    } else {
        span / i128::from(step).unsigned_abs()
    };
    if (stop < start && step < 0) || (stop >= start && step > 0) {
        check_size(steps.min(usize::MAX as u128) as usize)?;
    }
    let mut out = Vec::new();
    if stop < start {
        if step >= 0 {
            return Ok(out);
        }
        let mut i = start;
        while i > stop {
            out.push(i);
            i = i.saturating_add(step);
        }
        return Ok(out);
    }
    if step <= 0 {
        return Ok(out);
    }
    let mut i = start;
    while i < stop {
        out.push(i);
        i = match i.checked_add(step) {
            Some(next) => next,
            None => break,
        };
    }
    Ok(out)
}

fn seq(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let params = args.iter().map(int).collect::<Result<Vec<_>, _>>()?;
    let values = match params.as_slice() {
        [end] => {
            let increment = if *end < 1 { -1 } else { 1 };
            until_step(1, end.wrapping_add(increment), increment)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            until_step(*start, end.wrapping_add(step), step)?
        }
        [start, step, end] => {
            let increment = if end < start { -1 } else { 1 };
            if end < start && *step > 0 {
                Vec::new()
            } else {
                until_step(*start, end.wrapping_add(increment), *step)?
            }
        }
        _ => Vec::new(),
    };
    let text: Vec<String> = values.iter().map(i64::to_string).collect();
    Ok(Value::str(text.join(" ")))
}
