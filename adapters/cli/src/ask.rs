//! Asking the user on a terminal: an elicitation's form, field by field from its requested
//! schema, then accept, decline or cancel.

use std::io::{self, BufRead, Write};

use mcpwire::{ElicitAction, ElicitResult};
use serde_json::{Map, Value};

/// One line of input without its line ending; `None` at the end of input.
fn read_line(input: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\r', '\n']).to_owned()))
}

/// The choices of an enum field: each value with its title, if it has one (`enum` with the
/// legacy `enumNames`, or titled `oneOf`/`anyOf` consts).
fn choices(prop: &Value) -> Option<Vec<(Value, Option<String>)>> {
    if let Some(values) = prop.get("enum").and_then(Value::as_array) {
        let titles = prop.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let title = titles
                        .and_then(|t| t.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    (v.clone(), title)
                })
                .collect(),
        );
    }
    let options = prop
        .get("oneOf")
        .or_else(|| prop.get("anyOf"))
        .and_then(Value::as_array)?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                let value = o.get("const")?.clone();
                let title = o.get("title").and_then(Value::as_str).map(str::to_owned);
                Some((value, title))
            })
            .collect(),
    )
}

/// The choices of a multi-select field (`type: array` whose `items` are an enum).
fn multi_choices(prop: &Value) -> Option<Vec<(Value, Option<String>)>> {
    if prop.get("type").and_then(Value::as_str) != Some("array") {
        return None;
    }
    choices(prop.get("items")?)
}

/// The one choice `text` names: its number (from 1) or its value.
fn pick(choices: &[(Value, Option<String>)], text: &str) -> Result<Value, String> {
    if let Ok(n) = text.parse::<usize>() {
        if (1..=choices.len()).contains(&n) {
            return Ok(choices[n - 1].0.clone());
        }
    }
    choices
        .iter()
        .find(|(v, _)| shown(v) == text)
        .map(|(v, _)| v.clone())
        .ok_or_else(|| format!("choose a number from 1 to {}, or a value", choices.len()))
}

/// The choices `text` names, separated by commas, each once, within the field's `minItems`
/// and `maxItems`.
fn pick_several(
    prop: &Value,
    choices: &[(Value, Option<String>)],
    text: &str,
) -> Result<Value, String> {
    let mut picked: Vec<Value> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v = pick(choices, part)?;
        if !picked.contains(&v) {
            picked.push(v);
        }
    }
    let count = picked.len() as u64;
    if let Some(min) = prop.get("minItems").and_then(Value::as_u64) {
        if count < min {
            return Err(format!("choose at least {min}"));
        }
    }
    if let Some(max) = prop.get("maxItems").and_then(Value::as_u64) {
        if count > max {
            return Err(format!("choose at most {max}"));
        }
    }
    Ok(Value::Array(picked))
}

/// A value as the user would type it (several choices separated by commas).
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The value typed for a field, or why it does not fit.
fn parse(prop: &Value, text: &str) -> Result<Value, String> {
    if let Some(choices) = multi_choices(prop) {
        return pick_several(prop, &choices, text);
    }
    if let Some(choices) = choices(prop) {
        return pick(&choices, text);
    }
    let number_bounds = |n: f64| -> Result<(), String> {
        if let Some(min) = prop.get("minimum").and_then(Value::as_f64) {
            if n < min {
                return Err(format!("at least {min}"));
            }
        }
        if let Some(max) = prop.get("maximum").and_then(Value::as_f64) {
            if n > max {
                return Err(format!("at most {max}"));
            }
        }
        Ok(())
    };
    match prop.get("type").and_then(Value::as_str) {
        Some("boolean") => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer y or n".into()),
        },
        Some("integer") => {
            let n: i64 = text.parse().map_err(|_| "a whole number, please")?;
            number_bounds(n as f64)?;
            Ok(Value::from(n))
        }
        Some("number") => {
            let n: f64 = text.parse().map_err(|_| "a number, please")?;
            number_bounds(n)?;
            serde_json::Number::from_f64(n)
                .map(Value::Number)
                .ok_or_else(|| "a finite number, please".into())
        }
        _ => {
            let len = text.chars().count() as u64;
            if let Some(min) = prop.get("minLength").and_then(Value::as_u64) {
                if len < min {
                    return Err(format!("at least {min} characters"));
                }
            }
            if let Some(max) = prop.get("maxLength").and_then(Value::as_u64) {
                if len > max {
                    return Err(format!("at most {max} characters"));
                }
            }
            Ok(Value::String(text.to_owned()))
        }
    }
}

/// Asks one field until it has a fitting answer. `Ok(None)` at the end of input;
/// `Ok(Some(None))` when an optional field is left empty.
fn ask_field(
    name: &str,
    prop: &Value,
    required: bool,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> io::Result<Option<Option<Value>>> {
    let title = prop.get("title").and_then(Value::as_str);
    let mut head = match title {
        Some(t) if t != name => format!("{name} ({t})"),
        _ => name.to_owned(),
    };
    if required {
        head.push_str(" *");
    }
    if let Some(d) = prop.get("description").and_then(Value::as_str) {
        writeln!(out, "  {d}")?;
    }
    let several = multi_choices(prop);
    if several.is_some() {
        head.push_str(" (one or more, separated by commas)");
    }
    if let Some(choices) = several.or_else(|| choices(prop)) {
        for (i, (value, title)) in choices.iter().enumerate() {
            match title {
                Some(t) => writeln!(out, "    {}) {} — {t}", i + 1, shown(value))?,
                None => writeln!(out, "    {}) {}", i + 1, shown(value))?,
            }
        }
    } else if prop.get("type").and_then(Value::as_str) == Some("boolean") {
        head.push_str(" (y/n)");
    }
    let default = prop.get("default");
    if let Some(d) = default {
        head.push_str(&format!(" [{}]", shown(d)));
    }
    loop {
        write!(out, "{head}: ")?;
        out.flush()?;
        let Some(text) = read_line(input)? else {
            return Ok(None);
        };
        let text = text.trim();
        if text.is_empty() {
            match (default, required) {
                (Some(d), _) => return Ok(Some(Some(d.clone()))),
                (None, false) => return Ok(Some(None)),
                (None, true) => {
                    writeln!(out, "  required")?;
                    continue;
                }
            }
        }
        match parse(prop, text) {
            Ok(v) => return Ok(Some(Some(v))),
            Err(why) => writeln!(out, "  {why}")?,
        }
    }
}

/// Asks a form-mode elicitation: the message, each field of `schema` (required ones marked
/// `*`, defaults in brackets, Enter takes the default), then accept (Enter), decline (`d`) or
/// cancel (`c`). The end of input cancels.
pub(crate) fn form(
    message: &str,
    schema: &Value,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> io::Result<ElicitResult> {
    let cancel = ElicitResult {
        meta: None,
        action: ElicitAction::Cancel,
        content: None,
    };
    writeln!(out, "The server asks: {message}")?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let needed = required.contains(&name.as_str());
            match ask_field(name, prop, needed, input, out)? {
                None => return Ok(cancel),
                Some(Some(v)) => {
                    content.insert(name.clone(), v);
                }
                Some(None) => {}
            }
        }
    }
    loop {
        write!(out, "accept / decline / cancel? [Enter = accept, d, c]: ")?;
        out.flush()?;
        let Some(text) = read_line(input)? else {
            return Ok(cancel);
        };
        let action = match text.trim().to_ascii_lowercase().as_str() {
            "" | "a" | "accept" => ElicitAction::Accept,
            "d" | "decline" => ElicitAction::Decline,
            "c" | "cancel" => ElicitAction::Cancel,
            _ => continue,
        };
        let content = (action == ElicitAction::Accept).then_some(content);
        return Ok(ElicitResult {
            action,
            content,
            meta: None,
        });
    }
}

/// Shows a url-mode elicitation's URL (never opened here) and waits for Enter.
pub(crate) fn url(
    message: &str,
    url: &str,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> io::Result<ElicitResult> {
    writeln!(out, "The server asks: {message}")?;
    writeln!(out, "Open this URL to continue: {url}")?;
    write!(
        out,
        "Press Enter when done (or type d to decline, c to cancel): "
    )?;
    out.flush()?;
    let action = match read_line(input)?.map(|t| t.trim().to_ascii_lowercase()) {
        None => ElicitAction::Cancel,
        Some(t) if t == "d" || t == "decline" => ElicitAction::Decline,
        Some(t) if t == "c" || t == "cancel" => ElicitAction::Cancel,
        Some(_) => ElicitAction::Accept,
    };
    Ok(ElicitResult {
        meta: None,
        action,
        content: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, typed: &str) -> (ElicitResult, String) {
        let mut out = Vec::new();
        let r = form("hello?", &schema, &mut typed.as_bytes(), &mut out).unwrap();
        (r, String::from_utf8(out).unwrap())
    }

    #[test]
    fn fields_of_every_kind_are_asked_and_typed() {
        let schema = json!({"type": "object", "properties": {
            "age": {"type": "integer", "minimum": 1, "maximum": 150},
            "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            "name": {"type": "string", "default": "world"},
            "ok": {"type": "boolean"},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}
        }, "required": ["age", "ok"]});
        let (r, out) = run(schema, "\nx\n200\n42\n2\n\nmaybe\ny\nl\n\n");
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(
            Value::Object(r.content.unwrap()),
            json!({"age": 42, "color": "g", "name": "world", "ok": true, "size": "l"})
        );
        assert!(out.contains("age *: "), "{out}");
        assert!(out.contains("required"), "{out}");
        assert!(out.contains("a whole number"), "{out}");
        assert!(out.contains("at most 150"), "{out}");
        assert!(out.contains("2) g — Green"), "{out}");
        assert!(out.contains("name [world]: "), "{out}");
        assert!(out.contains("answer y or n"), "{out}");
        assert!(out.contains("1) s — Small"), "{out}");
    }

    #[test]
    fn multi_select_fields_take_several_choices_as_a_list() {
        let schema = json!({"type": "object", "properties": {
            "fish": {"type": "array", "minItems": 1, "maxItems": 2, "default": ["t"],
                     "items": {"anyOf": [{"const": "t", "title": "Tuna"},
                                         {"const": "s", "title": "Salmon"},
                                         {"const": "r", "title": "Trout"}]}},
            "tools": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}
        }});
        // Too many, an unknown one, then two by number; then values, one given twice.
        let (r, out) = run(schema.clone(), "1,2,3\n1, x\n3, 1\nc,a,c\n\n");
        assert_eq!(r.action, ElicitAction::Accept);
        assert_eq!(
            Value::Object(r.content.unwrap()),
            json!({"fish": ["r", "t"], "tools": ["c", "a"]})
        );
        assert!(
            out.contains("fish (one or more, separated by commas) [t]: "),
            "{out}"
        );
        assert!(out.contains("    2) s — Salmon"), "{out}");
        assert!(out.contains("    3) c\n"), "{out}");
        assert!(out.contains("choose at most 2"), "{out}");
        assert!(
            out.contains("choose a number from 1 to 3, or a value"),
            "{out}"
        );
        // Enter takes the default list; nothing chosen is too few.
        let (r, _) = run(schema.clone(), "\n\n\n");
        assert_eq!(Value::Object(r.content.unwrap()), json!({"fish": ["t"]}));
        let no_default = json!({"properties": {"fish": {"type": "array", "minItems": 1,
            "items": {"enum": ["t", "s"]}}}, "required": ["fish"]});
        let (r, out) = run(no_default, " , \n2\n\n");
        assert!(out.contains("choose at least 1"), "{out}");
        assert_eq!(Value::Object(r.content.unwrap()), json!({"fish": ["s"]}));
    }

    #[test]
    fn optional_fields_left_empty_are_left_out() {
        let schema = json!({"properties": {"n": {"type": "number"}}});
        let (r, _) = run(schema, "\n\n");
        assert_eq!(r.content.unwrap(), Map::new());
    }

    #[test]
    fn decline_cancel_and_end_of_input() {
        let schema = json!({"properties": {"n": {"type": "string"}}});
        assert_eq!(run(schema.clone(), "x\nd\n").0, ElicitResult::decline());
        assert_eq!(run(schema.clone(), "x\nc\n").0.action, ElicitAction::Cancel);
        assert_eq!(run(schema, "x\n").0.action, ElicitAction::Cancel);
    }

    #[test]
    fn string_lengths_are_checked() {
        let schema =
            json!({"properties": {"s": {"type": "string", "minLength": 2, "maxLength": 3}}});
        let (r, out) = run(schema, "a\nabcd\nabc\n\n");
        assert_eq!(r.content.unwrap()["s"], "abc");
        assert!(out.contains("at least 2 characters") && out.contains("at most 3"));
    }

    #[test]
    fn a_url_waits_for_enter() {
        let mut out = Vec::new();
        let r = url(
            "sign in",
            "https://x.test/a",
            &mut "\n".as_bytes(),
            &mut out,
        )
        .unwrap();
        assert_eq!(r.action, ElicitAction::Accept);
        assert!(String::from_utf8(out).unwrap().contains("https://x.test/a"));
    }
}
