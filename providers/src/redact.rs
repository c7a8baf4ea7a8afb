//! Parser errors with the input left out.
//!
//! serde_json's messages quote the input they choke on (`invalid type: string "hunter2",
//! expected a map`), and the input of every parse in this operator is a secret value. A message
//! that reaches a status condition, an event or a log line is built here instead: what kind of
//! failure it was and where, never what was there.

/// `error` described by its category and position only (`a value of the wrong type at line 1
/// column 9`), for messages that must not carry the parsed text.
pub fn json_error(error: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match error.classify() {
        Category::Io => "a read error",
        Category::Syntax => "invalid JSON syntax",
        Category::Data => "a value of the wrong type",
        Category::Eof => "unexpected end of input",
    };
    format!("{what} at line {} column {}", error.line(), error.column())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_failure_and_position_but_not_the_input() {
        let secret = "hunter2-s3cr3t";
        let cases = [
            (
                format!("\"{secret}\""),
                "a value of the wrong type at line 1 column 16",
            ),
            (
                format!("{{\"k\": {secret}}}"),
                "invalid JSON syntax at line 1 column 7",
            ),
            (
                format!("{{\"{secret}\": 1"),
                "unexpected end of input at line 1 column 20",
            ),
        ];
        for (input, expected) in cases {
            let raw = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&input)
                .unwrap_err();
            assert_eq!(json_error(&raw), expected, "{input}");
            assert!(!json_error(&raw).contains("hunter2"));
        }
        let quoted = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&format!(
            "\"{secret}\""
        ))
        .unwrap_err();
        assert!(
            quoted.to_string().contains(secret),
            "serde_json quotes the input, which is why this module exists"
        );
    }
}
