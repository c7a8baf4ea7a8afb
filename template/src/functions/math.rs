//! Sprig's numeric functions (`numeric.go`). Integer functions convert with spf13/cast and
//! wrap like Go's int64; the `*f` functions compute in decimal as shopspring/decimal does
//! (`addf 1.1 2.2` is `3.3`, not `3.3000000000000003`), dividing to 16 decimal places.

use super::{Arity, Ctx, Entry, FuncError, FuncResult, cast_float, cast_int, int};
use crate::gofmt::shortest_digits;
use crate::value::Value;

pub const FUNCTIONS: &[Entry] = &[
    ("add1", Arity::Exact(1), |_, a| {
        Ok(Value::Int(cast_int(&a[0]).wrapping_add(1)))
    }),
    ("add", Arity::AtLeast(0), |_, a| {
        Ok(Value::Int(
            a.iter().map(cast_int).fold(0, i64::wrapping_add),
        ))
    }),
    ("sub", Arity::Exact(2), |_, a| {
        Ok(Value::Int(cast_int(&a[0]).wrapping_sub(cast_int(&a[1]))))
    }),
    ("mul", Arity::AtLeast(1), |_, a| {
        Ok(Value::Int(
            a.iter().map(cast_int).fold(1, i64::wrapping_mul),
        ))
    }),
    ("div", Arity::Exact(2), |_, a| {
        let divisor = cast_int(&a[1]);
        if divisor == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(Value::Int(cast_int(&a[0]).wrapping_div(divisor)))
    }),
    ("mod", Arity::Exact(2), |_, a| {
        let divisor = cast_int(&a[1]);
        if divisor == 0 {
            return Err("runtime error: integer divide by zero".into());
        }
        Ok(Value::Int(cast_int(&a[0]).wrapping_rem(divisor)))
    }),
    ("max", Arity::AtLeast(1), |_, a| {
        Ok(Value::Int(a.iter().map(cast_int).max().unwrap_or(0)))
    }),
    ("biggest", Arity::AtLeast(1), |_, a| {
        Ok(Value::Int(a.iter().map(cast_int).max().unwrap_or(0)))
    }),
    ("min", Arity::AtLeast(1), |_, a| {
        Ok(Value::Int(a.iter().map(cast_int).min().unwrap_or(0)))
    }),
    ("maxf", Arity::AtLeast(1), |_, a| {
        Ok(Value::Float(
            a.iter().map(cast_float).fold(f64::NEG_INFINITY, go_max),
        ))
    }),
    ("minf", Arity::AtLeast(1), |_, a| {
        Ok(Value::Float(
            a.iter().map(cast_float).fold(f64::INFINITY, go_min),
        ))
    }),
    ("ceil", Arity::Exact(1), |_, a| {
        Ok(Value::Float(cast_float(&a[0]).ceil()))
    }),
    ("floor", Arity::Exact(1), |_, a| {
        Ok(Value::Float(cast_float(&a[0]).floor()))
    }),
    ("round", Arity::AtLeast(2), round),
    ("int", Arity::Exact(1), |_, a| {
        Ok(Value::Int(cast_int(&a[0])))
    }),
    ("int64", Arity::Exact(1), |_, a| {
        Ok(Value::Int(cast_int(&a[0])))
    }),
    ("float64", Arity::Exact(1), |_, a| {
        Ok(Value::Float(cast_float(&a[0])))
    }),
    ("toDecimal", Arity::Exact(1), |_, a| {
        let text = super::strval(&a[0]);
        let text = String::from_utf8_lossy(&text);
        Ok(Value::Int(i64::from_str_radix(&text, 8).unwrap_or(0)))
    }),
    ("randInt", Arity::Exact(2), |_, a| {
        let (low, high) = (int(&a[0])?, int(&a[1])?);
        if high <= low {
            return Err("invalid argument to Intn".into());
        }
        let span = (i128::from(high) - i128::from(low)) as u64;
        Ok(Value::Int(
            low.wrapping_add(super::crypto::random_below(span)? as i64),
        ))
    }),
    ("add1f", Arity::Exact(1), |_, a| {
        decimal_fold(&a[0], &[Value::Int(1)], Op::Add)
    }),
    ("addf", Arity::AtLeast(0), |_, a| {
        decimal_fold(&Value::Float(0.0), a, Op::Add)
    }),
    ("subf", Arity::AtLeast(1), |_, a| {
        decimal_fold(&a[0], &a[1..], Op::Sub)
    }),
    ("mulf", Arity::AtLeast(1), |_, a| {
        decimal_fold(&a[0], &a[1..], Op::Mul)
    }),
    ("divf", Arity::AtLeast(1), |_, a| {
        decimal_fold(&a[0], &a[1..], Op::Div)
    }),
];

fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

fn round(_: &mut Ctx, args: &[Value]) -> FuncResult {
    let round_on = args.get(2).map_or(0.5, cast_float);
    let value = cast_float(&args[0]);
    let places = int(&args[1])? as f64;
    let pow = 10f64.powf(places);
    let digit = pow * value;
    let fraction = digit.fract();
    let rounded = if fraction >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(Value::Float(rounded / pow))
}

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// A decimal `mantissa * 10^-scale`.
#[derive(Clone, Copy)]
struct Decimal {
    mantissa: i128,
    scale: u32,
}

const DIVISION_PRECISION: u32 = 16;

impl Decimal {
    /// shopspring's `NewFromFloat`: the shortest decimal that reads back as the float.
    fn from_float(value: f64) -> Option<Decimal> {
        if !value.is_finite() {
            return None;
        }
        let (negative, digits, exp) = shortest_digits(value);
        let mut mantissa: i128 = digits.parse().ok()?;
        if negative {
            mantissa = -mantissa;
        }
        let shift = exp - (digits.len() as i32 - 1);
        if shift >= 0 {
            Some(Decimal {
                mantissa: mantissa.checked_mul(10i128.checked_pow(shift as u32)?)?,
                scale: 0,
            })
        } else {
            Some(Decimal {
                mantissa,
                scale: (-shift) as u32,
            })
        }
    }

    fn rescale(self, scale: u32) -> Option<i128> {
        self.mantissa
            .checked_mul(10i128.checked_pow(scale.checked_sub(self.scale)?)?)
    }

    fn apply(self, other: Decimal, op: Op) -> Option<Decimal> {
        let scale = self.scale.max(other.scale);
        match op {
            Op::Add => Some(Decimal {
                mantissa: self.rescale(scale)?.checked_add(other.rescale(scale)?)?,
                scale,
            }),
            Op::Sub => Some(Decimal {
                mantissa: self.rescale(scale)?.checked_sub(other.rescale(scale)?)?,
                scale,
            }),
            Op::Mul => Some(Decimal {
                mantissa: self.mantissa.checked_mul(other.mantissa)?,
                scale: self.scale.checked_add(other.scale)?,
            }),
            Op::Div => {
                // Quotient to DIVISION_PRECISION places, rounded half away from zero.
                let scale = self.scale.max(other.scale);
                let numerator = self
                    .rescale(scale)?
                    .checked_mul(10i128.checked_pow(DIVISION_PRECISION + 1)?)?;
                let denominator = other.rescale(scale)?;
                let quotient = numerator.checked_div(denominator)?;
                let rounded = quotient.checked_add(quotient.signum() * 5)? / 10;
                Some(Decimal {
                    mantissa: rounded,
                    scale: DIVISION_PRECISION,
                })
            }
        }
    }

    fn to_float(self) -> f64 {
        format!("{}e-{}", self.mantissa, self.scale)
            .parse()
            .unwrap_or(f64::NAN)
    }
}

fn decimal_fold(first: &Value, rest: &[Value], op: Op) -> FuncResult {
    let mut float = cast_float(first);
    let mut decimal = Decimal::from_float(float);
    for value in rest {
        let operand = cast_float(value);
        if matches!(op, Op::Div) && operand == 0.0 {
            return Err(FuncError("decimal division by zero".into()));
        }
        decimal = decimal
            .zip(Decimal::from_float(operand))
            .and_then(|(a, b)| a.apply(b, op));
        float = match op {
            Op::Add => float + operand,
            Op::Sub => float - operand,
            Op::Mul => float * operand,
            Op::Div => float / operand,
        };
    }
    Ok(Value::Float(decimal.map_or(float, Decimal::to_float)))
}
