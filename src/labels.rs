//! Kubernetes label selectors: matching labels the way the API server does, and turning a
//! selector into a list query. Used by the cluster fan-out controllers, PushSecret `dataTo`
//! and store lookups.

use std::collections::BTreeMap;

use external_secrets_crds::meta::LabelSelector;

/// Kubernetes label selector semantics (matchLabels and matchExpressions, ANDed).
pub fn selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let by_label = selector
        .match_labels
        .iter()
        .all(|(key, value)| labels.get(key) == Some(value));
    let by_expression = selector.match_expressions.iter().all(|expr| {
        let value = labels.get(&expr.key);
        let values = &expr.values;
        match expr.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    by_label && by_expression
}

/// A label selector as a list query (`a=b,c in (d,e),!f`).
pub fn selector_query(selector: &LabelSelector) -> String {
    let labels = selector
        .match_labels
        .iter()
        .map(|(key, value)| format!("{key}={value}"));
    let expressions = selector.match_expressions.iter().map(|expression| {
        let values = expression.values.join(",");
        match expression.operator.as_str() {
            "In" => format!("{} in ({values})", expression.key),
            "NotIn" => format!("{} notin ({values})", expression.key),
            "DoesNotExist" => format!("!{}", expression.key),
            _ => expression.key.clone(),
        }
    });
    labels.chain(expressions).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use external_secrets_crds::meta::LabelSelectorRequirement;
    use serde_json::json;

    #[test]
    fn label_selectors_follow_kubernetes_semantics() {
        let labels: BTreeMap<String, String> =
            [("env".into(), "prod".into()), ("team".into(), "a".into())].into();
        let expression = |key: &str, operator: &str, values: &[&str]| LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        };
        let selector = |expressions: Vec<LabelSelectorRequirement>| LabelSelector {
            match_labels: [("team".to_owned(), "a".to_owned())].into(),
            match_expressions: expressions,
        };
        assert!(selector_matches(&selector(vec![]), &labels));
        assert!(selector_matches(
            &selector(vec![expression("env", "In", &["prod", "stage"])]),
            &labels
        ));
        assert!(!selector_matches(
            &selector(vec![expression("env", "NotIn", &["prod"])]),
            &labels
        ));
        assert!(selector_matches(
            &selector(vec![expression("owner", "DoesNotExist", &[])]),
            &labels
        ));
        assert!(!selector_matches(
            &selector(vec![expression("owner", "Exists", &[])]),
            &labels
        ));
    }

    #[test]
    fn selectors_become_list_queries() {
        let selector: LabelSelector = serde_json::from_value(json!({
            "matchLabels": {"app": "db"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }))
        .unwrap();
        assert_eq!(selector_query(&selector), "app=db,tier in (a,b),!legacy");
    }
}
