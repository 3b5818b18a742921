//! The demo server's `completion/complete`: suggestions for the `greet` prompt's `name` and the
//! `demo://echo/{text}` template's `text`, the names that start with what was typed.

use serde_json::{json, Value};

/// The names the demo server suggests.
const NAMES: [&str; 5] = ["Ada", "Alan", "Barbara", "Grace", "Linus"];

/// The result of a `completion/complete` request with these params, or why it is refused.
pub(super) fn complete(params: &Value) -> Result<Value, &'static str> {
    let reference = params.get("ref").ok_or("completion/complete needs a ref")?;
    let argument = params
        .pointer("/argument/name")
        .and_then(Value::as_str)
        .ok_or("completion/complete needs an argument name")?;
    let typed = params
        .pointer("/argument/value")
        .and_then(Value::as_str)
        .unwrap_or("");
    let known = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => reference.get("name") == Some(&json!("greet")) && argument == "name",
        Some("ref/resource") => {
            reference.get("uri") == Some(&json!("demo://echo/{text}")) && argument == "text"
        }
        _ => return Err("ref must be a ref/prompt or a ref/resource"),
    };
    if !known {
        return Err("no such prompt, template or argument");
    }
    let lower = typed.to_lowercase();
    let values: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|n| n.to_lowercase().starts_with(&lower))
        .collect();
    Ok(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_names_that_start_with_what_was_typed() {
        let p = json!({"ref": {"type": "ref/prompt", "name": "greet"},
                       "argument": {"name": "name", "value": "a"}});
        let r = complete(&p).unwrap();
        assert_eq!(r["completion"]["values"], json!(["Ada", "Alan"]));
        let p = json!({"ref": {"type": "ref/prompt", "name": "other"},
                       "argument": {"name": "name", "value": ""}});
        assert!(complete(&p).is_err());
    }
}
