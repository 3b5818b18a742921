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

/// Why a value given for a field (`--answer`) does not fit it, in the words the form uses.
fn misfit(prop: &Value, value: &Value) -> Option<String> {
    let typed = |want: bool, words: &str| (!want).then(|| words.to_owned());
    let several = multi_choices(prop).is_some();
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if several => items.iter().map(shown).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    };
    let wrong_type = match prop.get("type").and_then(Value::as_str) {
        _ if several => typed(value.is_array(), "one or more of the choices, as a list"),
        _ if choices(prop).is_some() => None,
        Some("boolean") => typed(value.is_boolean(), "answer y or n"),
        Some("integer") => typed(value.is_i64() || value.is_u64(), "a whole number, please"),
        Some("number") => typed(value.is_number(), "a number, please"),
        Some("string") => typed(value.is_string(), "text, please"),
        _ => None,
    };
    if wrong_type.is_some() {
        return wrong_type;
    }
    match parse(prop, &text) {
        Ok(parsed) if choices(prop).is_some() && !several && &parsed != value => Some(format!(
            "one of {}",
            shown(&Value::Array(choice_values(prop)))
        )),
        Ok(_) => None,
        Err(why) => Some(why),
    }
}

/// The values an enum field allows.
fn choice_values(prop: &Value) -> Vec<Value> {
    choices(prop)
        .unwrap_or_default()
        .into_iter()
        .map(|(v, _)| v)
        .collect()
}

/// Checks an answer given ahead (`--answer`) against the form it answers, as the form checks
/// what is typed: each field it gives fits, and every required field is there or has a
/// default. The content to send (the form's fields given, and the defaults of those it leaves
/// out, as the form takes them), or the problems, one a field, in the form's order.
pub(crate) fn check(
    schema: &Value,
    fields: &[&str],
    content: &Map<String, Value>,
) -> Result<Map<String, Value>, Vec<String>> {
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut problems = Vec::new();
    let mut filled = content.clone();
    for name in ordered(schema, fields) {
        let Some(prop) = props.and_then(|p| p.get(name)) else {
            continue;
        };
        match (content.get(name), prop.get("default")) {
            (None, Some(default)) => {
                filled.insert(name.to_owned(), default.clone());
            }
            (None, None) if required.contains(&name) => problems.push(format!("{name}: required")),
            (None, None) => {}
            (Some(value), _) => {
                if let Some(why) = misfit(prop, value) {
                    problems.push(format!("{name}: {why}"));
                }
            }
        }
    }
    // A key the form does not have is left out: one `--answer` may answer several forms of
    // one call, each taking its own fields.
    filled.retain(|name, _| props.is_some_and(|p| p.contains_key(name)));
    match problems.is_empty() {
        true => Ok(filled),
        false => Err(problems),
    }
}

/// The form's fields in the order to ask them: `fields` (the server's order), then any the
/// schema has that it does not name.
fn ordered<'a>(schema: &'a Value, fields: &[&'a str]) -> Vec<&'a str> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out: Vec<&str> = fields
        .iter()
        .copied()
        .filter(|f| props.contains_key(*f))
        .collect();
    for name in props.keys() {
        if !out.contains(&name.as_str()) {
            out.push(name);
        }
    }
    out
}

/// Asks a form-mode elicitation: the message, each field of `schema` in the server's order
/// (`fields`; required ones marked `*`, defaults in brackets, Enter takes the default), then
/// accept (Enter), decline (`d`) or cancel (`c`). The end of input cancels.
pub(crate) fn form(
    message: &str,
    schema: &Value,
    fields: &[&str],
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
        for name in ordered(schema, fields) {
            let needed = required.contains(&name);
            match ask_field(name, &props[name], needed, input, out)? {
                None => return Ok(cancel),
                Some(Some(v)) => {
                    content.insert(name.to_owned(), v);
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
        let r = form("hello?", &schema, &[], &mut typed.as_bytes(), &mut out).unwrap();
        (r, String::from_utf8(out).unwrap())
    }

    #[test]
    fn fields_are_asked_in_the_servers_order() {
        let schema = json!({"type": "object", "properties": {
            "zip": {"type": "string"}, "name": {"type": "string"}, "age": {"type": "integer"}
        }});
        let mut out = Vec::new();
        let fields = ["zip", "name", "age"];
        let typed = "z\nn\n3\n\n";
        let r = form("?", &schema, &fields, &mut typed.as_bytes(), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let at = |f: &str| out.find(&format!("{f}: ")).unwrap();
        assert!(at("zip") < at("name") && at("name") < at("age"), "{out}");
        let content = r.content.unwrap();
        assert_eq!(content["zip"], "z");
        assert_eq!(content["age"], 3);
    }

    #[test]
    fn an_answer_given_ahead_is_checked_with_the_forms_words() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 3},
            "age": {"type": "integer", "minimum": 1},
            "ok": {"type": "boolean"},
            "color": {"type": "string", "enum": ["r", "g"]},
            "tags": {"type": "array", "items": {"enum": ["a", "b"]}}
        }, "required": ["name", "ok"]});
        let fields = ["name", "age", "ok", "color", "tags"];
        let content = |v: Value| v.as_object().unwrap().clone();
        let good =
            content(json!({"name": "Ada", "age": 3, "ok": true, "color": "g", "tags": ["a"]}));
        assert_eq!(check(&schema, &fields, &good), Ok(good.clone()));
        // Another form's field is not sent to this one.
        let mut more = good.clone();
        more.insert("colour".into(), json!("blue"));
        assert_eq!(check(&schema, &fields, &more), Ok(good.clone()));
        let bad =
            content(json!({"name": "Al", "age": "3", "color": "x", "tags": ["c"], "extra": 1}));
        assert_eq!(
            check(&schema, &fields, &bad).unwrap_err(),
            [
                "name: at least 3 characters",
                "age: a whole number, please",
                "ok: required",
                "color: choose a number from 1 to 2, or a value",
                "tags: choose a number from 1 to 2, or a value",
            ]
        );
        let bad = content(json!({"name": "Ada", "ok": "yes", "age": 0}));
        assert_eq!(
            check(&schema, &fields, &bad).unwrap_err(),
            ["age: at least 1", "ok: answer y or n"]
        );
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
