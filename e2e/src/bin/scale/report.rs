//! The benchmark's output: one table (figure, value, ratio to the floor where meaningful)
//! on stdout, and the same rows as JSON.

use std::path::Path;

use serde_json::{Value, json};

/// One row of the report.
pub struct Figure {
    /// What was measured.
    pub name: String,
    /// The value, `None` when it cannot be measured here ("n/a").
    pub value: Option<f64>,
    /// Its unit (`s`, `MiB`, or empty for counts).
    pub unit: &'static str,
    /// The value divided by the floor's, where that comparison means something.
    pub ratio: Option<f64>,
}

impl Figure {
    /// A row without a ratio.
    pub fn new(name: impl Into<String>, value: Option<f64>, unit: &'static str) -> Self {
        Self {
            name: name.into(),
            value,
            unit,
            ratio: None,
        }
    }

    /// A row compared with the floor's `floor` (no ratio when either is missing or zero).
    pub fn against(
        name: impl Into<String>,
        value: Option<f64>,
        unit: &'static str,
        floor: Option<f64>,
    ) -> Self {
        let ratio = match (value, floor) {
            (Some(value), Some(floor)) if floor > 0.0 => Some(value / floor),
            _ => None,
        };
        Self {
            ratio,
            ..Self::new(name, value, unit)
        }
    }
}

/// The table as text.
pub fn table(figures: &[Figure]) -> String {
    let width = figures
        .iter()
        .map(|figure| figure.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut text = format!(
        "{:<width$}  {:>12}  {:<4}  {:>8}\n",
        "figure", "value", "unit", "vs floor"
    );
    for figure in figures {
        let value = match figure.value {
            None => "n/a".to_owned(),
            // `+ 0.0` turns a difference of -0.0 into 0.0, which prints without a sign.
            Some(value) if value.fract() == 0.0 && value.abs() < 1e15 => {
                format!("{:.0}", value + 0.0)
            }
            Some(value) => format!("{value:.3}"),
        };
        let ratio = figure
            .ratio
            .map(|ratio| format!("{ratio:.2}x"))
            .unwrap_or_default();
        text.push_str(&format!(
            "{:<width$}  {value:>12}  {:<4}  {ratio:>8}\n",
            figure.name, figure.unit
        ));
    }
    text
}

/// Writes `figures` and `context` (the run's settings) as JSON to `path`.
pub fn write_json(path: &Path, context: Value, figures: &[Figure]) -> anyhow::Result<()> {
    let rows: Vec<Value> = figures
        .iter()
        .map(|figure| {
            json!({
                "figure": figure.name,
                "value": figure.value,
                "unit": figure.unit,
                "ratio_to_floor": figure.ratio,
            })
        })
        .collect();
    let document = json!({"run": context, "figures": rows});
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&document)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_missing_values_and_ratios() {
        let figures = [
            Figure::against("time until all Ready", Some(3.5), "s", Some(2.0)),
            Figure::new("restart: provider calls", Some(-0.0), ""),
            Figure::new("API writes after restart", None, ""),
            Figure::against("provider calls", Some(10.0), "", Some(0.0)),
        ];
        let text = table(&figures);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[1].contains("3.500") && lines[1].ends_with("1.75x"),
            "{text}"
        );
        assert!(
            lines[2].trim_end().ends_with(" 0"),
            "zero prints unsigned: {text}"
        );
        assert!(lines[3].contains("n/a"), "{text}");
        assert!(lines[4].trim_end().ends_with("10"), "{text}");
    }
}
