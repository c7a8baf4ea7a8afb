//! Sprig's dict functions (`dict.go`). Maps are shared: `set`, `unset`, `merge` and
//! `mergeOverwrite` change the map they are given, as in Go. `keys` and `values` return keys in
//! sorted order (Go's order is random, so any order is one Go could produce).

use std::collections::BTreeMap;

use super::{Arity, Ctx, Entry, FuncError, FuncResult, map, string, strval};
use crate::limits::MAX_VALUE_DEPTH;
use crate::value::{Map, Value, lossy};

pub const FUNCTIONS: &[Entry] = &[
    ("dict", Arity::AtLeast(0), dict),
    ("get", Arity::Exact(2), |_, a| {
        let (dict, key) = (map(&a[0])?, key(&a[1])?);
        Ok(dict
            .borrow()
            .entries
            .get(&key)
            .cloned()
            .unwrap_or(Value::str("")))
    }),
    ("set", Arity::Exact(3), |_, a| {
        let (dict, key) = (map(&a[0])?, key(&a[1])?);
        dict.borrow_mut().entries.insert(key, a[2].clone());
        Ok(a[0].clone())
    }),
    ("unset", Arity::Exact(2), |_, a| {
        let (dict, key) = (map(&a[0])?, key(&a[1])?);
        dict.borrow_mut().entries.remove(&key);
        Ok(a[0].clone())
    }),
    ("hasKey", Arity::Exact(2), |_, a| {
        let (dict, key) = (map(&a[0])?, key(&a[1])?);
        Ok(Value::Bool(dict.borrow().entries.contains_key(&key)))
    }),
    ("pluck", Arity::AtLeast(1), |_, a| {
        let key = key(&a[0])?;
        let mut out = Vec::new();
        for dict in &a[1..] {
            if let Some(value) = map(dict)?.borrow().entries.get(&key) {
                out.push(value.clone());
            }
        }
        Ok(Value::list(out))
    }),
    ("keys", Arity::AtLeast(0), |_, a| {
        let mut out = Vec::new();
        for dict in a {
            out.extend(map(dict)?.borrow().entries.keys().map(Value::str));
        }
        Ok(Value::list(out))
    }),
    ("values", Arity::Exact(1), |_, a| {
        Ok(Value::list(
            map(&a[0])?.borrow().entries.values().cloned().collect(),
        ))
    }),
    ("pick", Arity::AtLeast(1), |ctx, a| select(ctx, a, true)),
    ("omit", Arity::AtLeast(1), |ctx, a| select(ctx, a, false)),
    ("merge", Arity::AtLeast(1), |_, a| merge_all(a, false)),
    ("mustMerge", Arity::AtLeast(1), |_, a| merge_all(a, false)),
    ("mergeOverwrite", Arity::AtLeast(1), |_, a| {
        merge_all(a, true)
    }),
    ("mustMergeOverwrite", Arity::AtLeast(1), |_, a| {
        merge_all(a, true)
    }),
    ("deepCopy", Arity::Exact(1), |ctx, a| {
        deep_copy(ctx, &a[0], 0)
    }),
    ("mustDeepCopy", Arity::Exact(1), |ctx, a| {
        deep_copy(ctx, &a[0], 0)
    }),
    ("dig", Arity::AtLeast(3), dig),
];

fn key(value: &Value) -> Result<String, FuncError> {
    string(value).map(|bytes| lossy(&bytes))
}

fn dict(ctx: &mut Ctx, args: &[Value]) -> FuncResult {
    let mut entries = BTreeMap::new();
    for pair in args.chunks(2) {
        let key = lossy(&strval(&pair[0]));
        entries.insert(key, pair.get(1).cloned().unwrap_or(Value::str("")));
    }
    Ok(ctx.map(entries))
}

fn select(ctx: &mut Ctx, args: &[Value], keep: bool) -> FuncResult {
    let dict = map(&args[0])?;
    let names = args[1..].iter().map(key).collect::<Result<Vec<_>, _>>()?;
    let entries = dict
        .borrow()
        .entries
        .iter()
        .filter(|(name, _)| names.contains(name) == keep)
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    Ok(ctx.map(entries))
}

fn merge_all(args: &[Value], overwrite: bool) -> FuncResult {
    let destination = map(&args[0])?;
    for source in &args[1..] {
        merge(&destination, &map(source)?, overwrite, 0)?;
    }
    Ok(args[0].clone())
}

/// mergo's deep merge of `source` into `destination`: nested maps merge; other values fill
/// missing or empty destination entries, or replace them all with `overwrite`.
fn merge(destination: &Map, source: &Map, overwrite: bool, depth: usize) -> Result<(), FuncError> {
    if depth > MAX_VALUE_DEPTH {
        return Err("merge: maps nest too deeply".into());
    }
    if std::rc::Rc::ptr_eq(destination, source) {
        return Ok(());
    }
    let entries: Vec<(String, Value)> = source
        .borrow()
        .entries
        .iter()
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    for (key, value) in entries {
        let existing = destination.borrow().entries.get(&key).cloned();
        match (&existing, &value) {
            (Some(Value::Map(inner)), Value::Map(nested)) => {
                merge(inner, nested, overwrite, depth + 1)?;
            }
            (_, Value::Nil) if !overwrite => {}
            (Some(current), _) if !overwrite && !current.is_empty() => {}
            _ => {
                destination.borrow_mut().entries.insert(key, value);
            }
        }
    }
    Ok(())
}

fn deep_copy(ctx: &mut Ctx, value: &Value, depth: usize) -> FuncResult {
    if depth > MAX_VALUE_DEPTH {
        return Err("deepCopy error: value nests too deeply".into());
    }
    Ok(match value {
        Value::List(items) => Value::list(
            items
                .iter()
                .map(|item| deep_copy(ctx, item, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(map) => {
            let source: Vec<(String, Value)> = map
                .borrow()
                .entries
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let kind = map.borrow().kind;
            let mut entries = BTreeMap::new();
            for (key, item) in source {
                entries.insert(key, deep_copy(ctx, &item, depth + 1)?);
            }
            let copy = ctx.map(entries);
            if let Value::Map(copy) = &copy {
                copy.borrow_mut().kind = kind;
            }
            copy
        }
        other => other.clone(),
    })
}

fn dig(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let (keys, rest) = args.split_at(args.len() - 2);
    let default = rest[0].clone();
    let mut current = map(&rest[1])?;
    for (index, name) in keys.iter().enumerate() {
        let name = key(name)?;
        let step = current.borrow().entries.get(&name).cloned();
        match step {
            None => return Ok(default),
            Some(value) if index + 1 == keys.len() => return Ok(value),
            Some(Value::Map(next)) => current = next,
            Some(other) => {
                let message = format!(
                    "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                    other.type_name()
                );
                return Err(FuncError(message));
            }
        }
    }
    Ok(default)
}
