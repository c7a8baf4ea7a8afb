//! Sprig's defaults, flow control and reflection functions: `default empty coalesce all any
//! ternary fail typeOf typeIs typeIsLike kindOf kindIs deepEqual`.

use super::{Arity, Entry, FuncError, boolean, text};
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("default", Arity::AtLeast(1), |_, a| {
        Ok(match a.get(1) {
            Some(given) if !given.is_empty() => given.clone(),
            _ => a[0].clone(),
        })
    }),
    ("empty", Arity::Exact(1), |_, a| {
        Ok(Value::Bool(a[0].is_empty()))
    }),
    ("coalesce", Arity::AtLeast(0), |_, a| {
        Ok(a.iter()
            .find(|v| !v.is_empty())
            .cloned()
            .unwrap_or(Value::Nil))
    }),
    ("all", Arity::AtLeast(0), |_, a| {
        Ok(Value::Bool(a.iter().all(|v| !v.is_empty())))
    }),
    ("any", Arity::AtLeast(0), |_, a| {
        Ok(Value::Bool(a.iter().any(|v| !v.is_empty())))
    }),
    ("ternary", Arity::Exact(3), |_, a| {
        Ok(if boolean(&a[2])? {
            a[0].clone()
        } else {
            a[1].clone()
        })
    }),
    ("fail", Arity::Exact(1), |_, a| Err(FuncError(text(&a[0])?))),
    ("typeOf", Arity::Exact(1), |_, a| {
        Ok(Value::str(a[0].type_name()))
    }),
    ("typeIs", Arity::Exact(2), |_, a| {
        Ok(Value::Bool(text(&a[0])? == a[1].type_name()))
    }),
    ("typeIsLike", Arity::Exact(2), |_, a| {
        let target = text(&a[0])?;
        let name = a[1].type_name();
        Ok(Value::Bool(target == name || format!("*{target}") == name))
    }),
    ("kindOf", Arity::Exact(1), |_, a| {
        Ok(Value::str(a[0].kind_name()))
    }),
    ("kindIs", Arity::Exact(2), |_, a| {
        Ok(Value::Bool(text(&a[0])? == a[1].kind_name()))
    }),
    ("deepEqual", Arity::Exact(2), |_, a| {
        Ok(Value::Bool(a[0].deep_equal(&a[1])))
    }),
];
