//! Arguments from the command line as users type them: `key=value` pairs typed and checked by
//! the input schema, `key:=<json>` for a raw JSON value, one JSON object, or `-` for a JSON
//! object read from stdin; and a tool's name checked against the tools the server lists.
//!
//! One rule holds however the arguments were given: against the schema the client already has
//! (a tool's `inputSchema`, a prompt's declared arguments), a key it does not list is refused
//! naming the closest one, a value outside an `enum` is refused listing the allowed ones, and a
//! required argument left out is reported, all before anything is sent.

use std::io::Read;

use mcpwire::Tool;
use serde_json::{Map, Value};

use crate::exit_codes;
use crate::failure::Failure;

/// The arguments `args` give: `-` alone reads one JSON object from stdin, one word starting
/// with `{` is a JSON object, anything else is `key=value` and `key:=<json>` pairs
/// ([`typed_arguments`]). Whichever it is, the object is then checked against `schema`
/// ([`check`]); `noun` says whose arguments they are (`tool`, `prompt`).
pub(crate) fn arguments(args: &[String], schema: &Value, noun: &str) -> Result<Value, Failure> {
    let value = match args {
        [one] if one == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| usage(format!("cannot read the arguments from stdin: {e}")))?;
            json_object(&text, "the arguments on stdin")?
        }
        [one] if one.trim_start().starts_with('{') => json_object(one, "the arguments")?,
        pairs => typed_arguments(pairs, schema, noun)?,
    };
    if let Value::Object(map) = &value {
        check(map, schema, noun)?;
    }
    Ok(value)
}

fn json_object(text: &str, what: &str) -> Result<Value, Failure> {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(usage(format!("{what} must be one JSON object"))),
        Err(e) => Err(usage(format!("{what} are not JSON: {e}"))),
    }
}

/// Turns `key=value` pairs into arguments, typing each value by its property in `schema`;
/// `key:=<json>` gives a value as raw JSON, untouched by the schema.
///
/// A key given twice is refused; so is a key the schema does not list, when it lists its
/// properties and does not allow others (`additionalProperties` true or a schema).
pub(crate) fn typed_arguments(
    pairs: &[String],
    schema: &Value,
    noun: &str,
) -> Result<Value, Failure> {
    let mut out = Map::new();
    for pair in pairs {
        let (key, raw) = pair.split_once('=').ok_or_else(|| {
            usage(format!(
                "argument {pair:?} is not key=value or key:=<json> (or give one JSON object, \
                 or - to read it from stdin)"
            ))
        })?;
        let (key, json) = match key.strip_suffix(':') {
            Some(key) => (key, true),
            None => (key, false),
        };
        if out.contains_key(key) {
            return Err(usage(format!(
                "{key} is given twice; give each argument once"
            )));
        }
        let property = property(schema, key, noun)?;
        let value = match json {
            true => serde_json::from_str(raw)
                .map_err(|e| usage(format!("{key}:= takes JSON; {raw:?} is not: {e}")))?,
            false => typed_value(key, raw, property)?,
        };
        out.insert(key.to_owned(), value);
    }
    Ok(Value::Object(out))
}

/// The schema of argument `key`: its property, or `additionalProperties` when that is a
/// schema; `None` when the schema says nothing of it. A key the schema does not allow is
/// refused: the schema lists its properties and does not allow others.
fn property<'a>(schema: &'a Value, key: &str, noun: &str) -> Result<Option<&'a Value>, Failure> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(None);
    };
    if let Some(p) = props.get(key) {
        return Ok(Some(p));
    }
    match schema.get("additionalProperties") {
        Some(a @ Value::Object(_)) => Ok(Some(a)),
        Some(Value::Bool(true)) => Ok(None),
        _ => Err(unknown_key(key, props, noun)),
    }
}

/// Checks arguments against the schema, however they were given: every key allowed
/// ([`property`]), every value with an `enum` (or `const`) one of its values (for an array,
/// each item against its items' `enum`), and every `required` argument there. `noun` says
/// whose arguments they are.
pub(crate) fn check(
    arguments: &Map<String, Value>,
    schema: &Value,
    noun: &str,
) -> Result<(), Failure> {
    for (key, value) in arguments {
        let Some(p) = property(schema, key, noun)? else {
            continue;
        };
        allowed_value(key, value, p)?;
        if let (Value::Array(items), Some(each)) = (value, p.get("items")) {
            for item in items {
                allowed_value(key, item, each)?;
            }
        }
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let missing: Vec<&str> = required
        .into_iter()
        .filter(|k| !arguments.contains_key(*k))
        .collect();
    match missing.as_slice() {
        [] => Ok(()),
        [one] => Err(usage(format!("the required argument {one} is missing"))),
        many => Err(usage(format!(
            "the required arguments {} are missing",
            many.join(", ")
        ))),
    }
}

/// Refuses `value` when `property` has an `enum` (or a `const`) it is not among, listing the
/// allowed values (and naming the closest when it looks like a typo of one).
fn allowed_value(key: &str, value: &Value, property: &Value) -> Result<(), Failure> {
    let allowed: Vec<&Value> = match (property.get("enum"), property.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().collect(),
        (_, Some(one)) => vec![one],
        _ => return Ok(()),
    };
    if allowed.contains(&value) {
        return Ok(());
    }
    let words: Vec<String> = allowed.iter().map(|v| v.to_string()).collect();
    let hint = match value {
        // A value of a letter or two is like too many others to name one.
        Value::String(s) if s.chars().count() >= 3 => {
            let names: Vec<&str> = allowed.iter().filter_map(|v| v.as_str()).collect();
            closest(s, &names)
                .map(|n| format!(" (did you mean {n:?}?)"))
                .unwrap_or_default()
        }
        _ => String::new(),
    };
    Err(usage(format!(
        "{key}: {value} is not one of: {}{hint}",
        words.join(", ")
    )))
}

fn usage(message: String) -> Failure {
    Failure::new(exit_codes::USAGE, message)
}

fn unknown_key(key: &str, props: &Map<String, Value>, noun: &str) -> Failure {
    if props.is_empty() {
        return usage(format!(
            "unknown argument {key}: this {noun} takes no arguments"
        ));
    }
    let known: Vec<&str> = props.keys().map(String::as_str).collect();
    let hint = did_you_mean(key, &known);
    usage(format!(
        "unknown argument {key}{hint}; the {noun}'s arguments: {}",
        known.join(", ")
    ))
}

/// The type a property declares: its `type`, or the first of a list of types other than
/// `null`.
fn declared_type(property: &Value) -> Option<&str> {
    match property.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

/// Every JSON type a property allows, from its `type` (one or a list), else the alternatives
/// of its `anyOf`/`oneOf`, else the values of its `enum` or `const`. Empty: it says nothing.
fn allowed_types(property: &Value) -> Vec<&'static str> {
    // In the order a value is tried as each: a string takes anything, so it comes last.
    const NAMES: [&str; 7] = [
        "null", "boolean", "integer", "number", "array", "object", "string",
    ];
    let known = |t: &str| NAMES.iter().find(|n| **n == t).copied();
    let mut types: Vec<&'static str> = match property.get("type") {
        Some(Value::String(t)) => known(t).into_iter().collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .filter_map(known)
            .collect(),
        _ => {
            let alternatives = ["anyOf", "oneOf"]
                .iter()
                .filter_map(|k| property.get(*k)?.as_array())
                .flatten();
            let mut all: Vec<&'static str> = alternatives.flat_map(allowed_types).collect();
            if all.is_empty() {
                let values = match (property.get("enum"), property.get("const")) {
                    (Some(Value::Array(values)), _) => values.iter().collect(),
                    (_, Some(one)) => vec![one],
                    _ => Vec::new(),
                };
                all = values.into_iter().map(type_of_value).collect();
            }
            all
        }
    };
    // An integer is a number too.
    if types.contains(&"number") {
        types.retain(|t| *t != "integer");
    }
    types.sort_by_key(|t| NAMES.iter().position(|n| n == t));
    types.dedup();
    types
}

/// The JSON type of a value, as a schema names it.
fn type_of_value(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// One value typed by its property (none: JSON if it parses, else a string).
///
/// When the property allows several types, the value is the first it reads as, in this
/// order: `null`, `true`/`false`, an integer, a number, a JSON array or object, and else a
/// string when strings are allowed (`k:=<json>` gives any value as written).
fn typed_value(key: &str, raw: &str, property: Option<&Value>) -> Result<Value, Failure> {
    let untyped = || serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()));
    let Some(property) = property else {
        return Ok(untyped());
    };
    let types = allowed_types(property);
    if types.is_empty() {
        return Ok(untyped());
    }
    let mut refusals = Vec::new();
    for kind in &types {
        match read_as(kind, raw, property) {
            Ok(value) => return Ok(value),
            Err(refusal) => refusals.push(refusal),
        }
    }
    // Every type refused it: with one type (beside null), its own words.
    let useful: Vec<Refusal> = refusals
        .into_iter()
        .filter(|r| !matches!(r, Refusal::Not("null")))
        .collect();
    Err(match useful.as_slice() {
        [one] => one.failure(key, raw),
        many => {
            let words: Vec<&str> = many
                .iter()
                .map(|r| match r {
                    Refusal::Not(what) | Refusal::Shaped { what, .. } => *what,
                    Refusal::TooLarge => "an integer",
                })
                .collect();
            usage(format!("{key}: {raw:?} is not {}", words.join(", nor ")))
        }
    })
}

/// Why a value does not read as one type.
enum Refusal {
    /// It is not `what` (`an integer`, `true or false`).
    Not(&'static str),
    /// An integer out of range.
    TooLarge,
    /// Not the JSON array or object `what` says; `example` is what to write.
    Shaped { what: &'static str, example: String },
}

impl Refusal {
    fn failure(&self, key: &str, raw: &str) -> Failure {
        match self {
            Refusal::Not(what) => usage(format!("{key}: {raw:?} is not {what}")),
            Refusal::TooLarge => usage(format!(
                "{key}: {raw} is too large for an integer (the range is {} to {})",
                i64::MIN,
                u64::MAX
            )),
            Refusal::Shaped { what, example } => usage(format!(
                "{key}: {raw:?} is not {what}; write {key}='{example}'"
            )),
        }
    }
}

/// `raw` read as a value of JSON type `kind`.
fn read_as(kind: &str, raw: &str, property: &Value) -> Result<Value, Refusal> {
    Ok(match kind {
        "null" if raw == "null" => Value::Null,
        "null" => return Err(Refusal::Not("null")),
        "string" => Value::String(raw.to_owned()),
        "integer" => match integer(raw) {
            Some(n) => n,
            None if looks_like_integer(raw) => return Err(Refusal::TooLarge),
            None => return Err(Refusal::Not("an integer")),
        },
        "number" => match integer(raw) {
            Some(n) => n,
            None => {
                let n: f64 = raw.trim().parse().map_err(|_| Refusal::Not("a number"))?;
                serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or(Refusal::Not("a finite number"))?
            }
        },
        "boolean" => Value::Bool(raw.parse().map_err(|_| Refusal::Not("true or false"))?),
        _ => {
            let parsed = serde_json::from_str::<Value>(raw).ok();
            match parsed {
                Some(v @ Value::Array(_)) if kind == "array" => v,
                Some(v @ Value::Object(_)) if kind == "object" => v,
                _ if kind == "array" => {
                    return Err(Refusal::Shaped {
                        what: "a JSON array",
                        example: array_example(raw, property),
                    })
                }
                _ => {
                    return Err(Refusal::Shaped {
                        what: "a JSON object",
                        example: object_example(property),
                    })
                }
            }
        }
    })
}

/// An integer that fits `i64` or `u64`.
fn integer(raw: &str) -> Option<Value> {
    let raw = raw.trim();
    raw.parse::<i64>()
        .map(Value::from)
        .or_else(|_| raw.parse::<u64>().map(Value::from))
        .ok()
}

fn looks_like_integer(raw: &str) -> bool {
    let digits = raw.trim().strip_prefix(['-', '+']).unwrap_or(raw.trim());
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The array a user most likely meant by `raw` (`a,b` → `["a","b"]`), typed by the items'
/// schema where it says.
fn array_example(raw: &str, property: &Value) -> String {
    let items = property.get("items").and_then(declared_type);
    let parts: Vec<&str> = raw
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let parts = if parts.is_empty() {
        vec!["a", "b"]
    } else {
        parts
    };
    let values: Vec<Value> = parts
        .into_iter()
        .map(|p| match items {
            Some("string") => Value::String(p.to_owned()),
            Some("integer" | "number") => integer(p)
                .or_else(|| serde_json::from_str(p).ok())
                .unwrap_or_else(|| Value::from(1)),
            Some("boolean") => Value::Bool(p == "true"),
            _ => match serde_json::from_str::<Value>(p) {
                Ok(v) if !v.is_array() && !v.is_object() => v,
                _ => Value::String(p.to_owned()),
            },
        })
        .collect();
    Value::Array(values).to_string()
}

/// An object of the shape `property` describes, with one of its fields (`{"key":"value"}`
/// when it says none).
fn object_example(property: &Value) -> String {
    let first = property
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.iter().next());
    let (name, value) = match first {
        Some((name, p)) => {
            let value = match declared_type(p) {
                Some("integer" | "number") => Value::from(1),
                Some("boolean") => Value::Bool(true),
                Some("array") => Value::Array(Vec::new()),
                Some("object") => Value::Object(Map::new()),
                _ => Value::from("value"),
            };
            (name.clone(), value)
        }
        None => ("key".to_owned(), Value::from("value")),
    };
    let mut m = Map::new();
    m.insert(name, value);
    Value::Object(m).to_string()
}

/// The failure for a tool the server does not list: the tools it lists, and the closest name.
pub(crate) fn unknown_tool(tool: &str, tools: &[Tool]) -> Failure {
    if tools.is_empty() {
        return usage(format!("no tool named {tool}: the server lists no tools"));
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let hint = did_you_mean(tool, &names);
    let list = shown_names(&names, "; see `mcpwire tools`");
    usage(format!(
        "no tool named {tool}{hint}; the server lists {}: {list}",
        if names.len() == 1 {
            "one tool".to_owned()
        } else {
            format!("{} tools", names.len())
        }
    ))
}

/// The first thirty of `names`, comma-separated, and how many more there are (with `more`
/// after the count).
pub(crate) fn shown_names(names: &[&str], more: &str) -> String {
    const SHOWN: usize = 30;
    let mut list = names
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        list.push_str(&format!(", … ({} more{more})", names.len() - SHOWN));
    }
    list
}

/// " (did you mean NAME?)" when a known name is [`closest`] to `typed`; empty otherwise.
pub(crate) fn did_you_mean(typed: &str, known: &[&str]) -> String {
    closest(typed, known)
        .map(|n| format!(" (did you mean {n}?)"))
        .unwrap_or_default()
}

/// The known name closest to `typed` when it looks like a typo of it: a few edits away
/// (ignoring case), or a prefix of it.
pub(crate) fn closest<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    let typed_lower = typed.to_lowercase();
    let len = typed.chars().count();
    let allowed = (len / 3).max(1);
    known
        .iter()
        .map(|k| (distance(&typed_lower, &k.to_lowercase()), *k))
        .filter(|(d, k)| *d <= allowed || (len >= 3 && k.to_lowercase().starts_with(&typed_lower)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The edit distance between `a` and `b`, in characters: insertions, deletions, substitutions
/// and swaps of two neighbours (optimal string alignment).
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (i, cell) in d.iter_mut().step_by(width).enumerate() {
        *cell = i;
    }
    for (j, cell) in d.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn error(pairs: &[&str], schema: &Value) -> (u8, String) {
        match typed_arguments(&args(pairs), schema, "tool") {
            Ok(v) => panic!("accepted: {v}"),
            Err(f) => (f.code, f.message),
        }
    }

    #[test]
    fn key_values_are_typed_by_the_schema() {
        let schema = json!({"properties": {
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
            "b": {"type": "boolean"}, "a": {"type": "array"}, "o": {"type": "object"},
            "x": {}, "y": {"description": "untyped"}, "m": {"type": ["integer", "null"]}}});
        let v = typed_arguments(
            &args(&[
                "s=42",
                "i=7",
                "n=2.5",
                "b=true",
                "a=[1,2]",
                "o={\"k\":1}",
                "x=null",
                "y=hi",
                "m=null",
            ]),
            &schema,
            "tool",
        )
        .ok()
        .unwrap();
        assert_eq!(
            v,
            json!({"s": "42", "i": 7, "n": 2.5, "b": true, "a": [1, 2], "o": {"k": 1},
                   "x": null, "y": "hi", "m": null})
        );
        // A whole number for a number property goes as an integer, not 2.0.
        let v = typed_arguments(&args(&["n=2"]), &schema, "tool")
            .ok()
            .unwrap();
        assert_eq!(v.to_string(), r#"{"n":2}"#);
        assert_eq!(error(&["i=x"], &schema).0, exit_codes::USAGE);
        assert_eq!(
            error(&["b=yes"], &schema).1,
            r#"b: "yes" is not true or false"#
        );
        assert_eq!(
            error(&["n=inf"], &schema).1,
            r#"n: "inf" is not a finite number"#
        );
        assert!(error(&["novalue"], &schema).1.contains("is not key=value"));
        // Without properties, any key goes, typed as JSON when it parses.
        let v = typed_arguments(&args(&["q=1", "r=x"]), &json!({}), "tool")
            .ok()
            .unwrap();
        assert_eq!(v, json!({"q": 1, "r": "x"}));
    }

    #[test]
    fn a_value_of_several_types_is_the_first_it_reads_as() {
        let schema = json!({"properties": {
            "sb": {"type": ["string", "boolean"]},
            "bs": {"type": ["boolean", "string"]},
            "ni": {"type": ["integer", "null"]},
            "any": {"anyOf": [{"type": "number"}, {"type": "boolean"}]},
            "arr": {"type": ["string", "array"]},
            "e": {"enum": ["1", "2"]}}});
        let v = typed_arguments(
            &args(&[
                "sb=maybe", "bs=true", "ni=null", "any=2.5", "arr=[1]", "e=1",
            ]),
            &schema,
            "tool",
        )
        .ok()
        .unwrap();
        assert_eq!(
            v,
            json!({"sb": "maybe", "bs": true, "ni": null, "any": 2.5, "arr": [1], "e": "1"})
        );
        let v = typed_arguments(&args(&["sb=false", "arr=a,b"]), &schema, "tool")
            .ok()
            .unwrap();
        assert_eq!(v, json!({"sb": false, "arr": "a,b"}));
        // None of them: each type in words.
        assert_eq!(
            error(&["any=maybe"], &schema).1,
            r#"any: "maybe" is not true or false, nor a number"#
        );
        assert_eq!(error(&["ni=x"], &schema).1, r#"ni: "x" is not an integer"#);
    }

    fn checked(value: Value, schema: &Value) -> Result<(), String> {
        let Value::Object(map) = value else {
            panic!("not an object")
        };
        check(&map, schema, "tool").map_err(|f| {
            assert_eq!(f.code, exit_codes::USAGE);
            f.message
        })
    }

    #[test]
    fn one_rule_for_keys_enums_and_required_however_given() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "required": ["city"],
            "properties": {"city": {"type": "string"},
                           "break": {"type": "string", "enum": ["type", "missing"]},
                           "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                           "unit": {"const": "C"}}});
        assert_eq!(
            checked(json!({"city": "Oslo", "break": "type"}), &schema),
            Ok(())
        );
        assert_eq!(
            checked(json!({"city": "Oslo", "brek": "type"}), &schema),
            Err(
                "unknown argument brek (did you mean break?); the tool's arguments: break, \
                 city, tags, unit"
                    .into()
            )
        );
        assert_eq!(
            checked(json!({"city": "Oslo", "break": "tpye"}), &schema),
            Err(r#"break: "tpye" is not one of: "type", "missing" (did you mean "type"?)"#.into())
        );
        assert_eq!(
            checked(json!({"city": "Oslo", "break": 3}), &schema),
            Err(r#"break: 3 is not one of: "type", "missing""#.into())
        );
        assert_eq!(
            checked(json!({"city": "Oslo", "tags": ["a", "c"]}), &schema),
            Err(r#"tags: "c" is not one of: "a", "b""#.into())
        );
        assert_eq!(
            checked(json!({"city": "Oslo", "unit": "F"}), &schema),
            Err(r#"unit: "F" is not one of: "C""#.into())
        );
        assert_eq!(
            checked(json!({}), &schema),
            Err("the required argument city is missing".into())
        );
        let two = json!({"required": ["a", "b"], "properties": {"a": {}, "b": {}}});
        assert_eq!(
            checked(json!({}), &two),
            Err("the required arguments a, b are missing".into())
        );
        // k=v goes by the same rule, from the command line to the check.
        let Err(f) = arguments(&args(&["break=nope", "city=Oslo"]), &schema, "tool") else {
            panic!("accepted")
        };
        assert_eq!(
            f.message,
            r#"break: "nope" is not one of: "type", "missing""#
        );
        let Err(f) = arguments(&args(&[r#"{"brek": 1}"#]), &schema, "tool") else {
            panic!("accepted")
        };
        assert!(f
            .message
            .starts_with("unknown argument brek (did you mean break?)"));
        // A prompt's arguments are named as such.
        let none = json!({"type": "object", "properties": {}});
        let Err(f) = arguments(&args(&["x=1"]), &none, "prompt") else {
            panic!("accepted")
        };
        assert_eq!(
            f.message,
            "unknown argument x: this prompt takes no arguments"
        );
        // Without a schema (the list could not be had), nothing is checked.
        assert!(arguments(&args(&[r#"{"any": 1}"#]), &Value::Null, "tool").is_ok());
    }

    #[test]
    fn raw_json_values_after_colon_equals() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "string"}, "tags": {"type": "array"}, "o": {"type": "object"}}});
        let v = typed_arguments(
            &args(&["n:=42", "tags:=[1,\"a\"]", "o:={\"k\":null}"]),
            &schema,
            "tool",
        );
        assert_eq!(
            v.ok().unwrap(),
            json!({"n": 42, "tags": [1, "a"], "o": {"k": null}})
        );
        // Plain = still types by the schema: a string stays a string.
        let v = typed_arguments(&args(&["n=42"]), &schema, "tool")
            .ok()
            .unwrap();
        assert_eq!(v, json!({"n": "42"}));
        let (code, message) = error(&["n:=nope"], &schema);
        assert_eq!(code, exit_codes::USAGE);
        assert!(message.contains("n:= takes JSON"), "{message}");
        // A value may hold := itself.
        let v = typed_arguments(&args(&["n=a:=b"]), &schema, "tool")
            .ok()
            .unwrap();
        assert_eq!(v, json!({"n": "a:=b"}));
        let (_, message) = error(&["x:=1"], &schema);
        assert!(message.contains("unknown argument x"), "{message}");
    }

    #[test]
    fn one_json_object_or_nothing_else() {
        let v = arguments(&args(&[r#"{"a": 1}"#]), &Value::Null, "tool")
            .ok()
            .unwrap();
        assert_eq!(v, json!({"a": 1}));
        let Err(f) = arguments(&args(&["{nope"]), &Value::Null, "tool") else {
            panic!("not JSON");
        };
        assert!(f.message.contains("not JSON"), "{}", f.message);
    }

    #[test]
    fn a_key_given_twice_is_a_usage_error() {
        let schema = json!({"properties": {"a": {"type": "number"}}});
        let (code, message) = error(&["a=1", "a=2"], &schema);
        assert_eq!(code, exit_codes::USAGE);
        assert_eq!(message, "a is given twice; give each argument once");
        // Also without a schema.
        assert_eq!(error(&["a=1", "a=1"], &json!({})).0, exit_codes::USAGE);
    }

    #[test]
    fn an_unknown_key_lists_the_known_ones_and_suggests_the_closest() {
        let schema = json!({"properties": {"steps": {"type": "integer"},
                                           "interval_ms": {"type": "integer"}}});
        let (code, message) = error(&["stesp=3"], &schema);
        assert_eq!(code, exit_codes::USAGE);
        assert_eq!(
            message,
            "unknown argument stesp (did you mean steps?); the tool's arguments: interval_ms, steps"
        );
        // A prefix is suggested too; a key like none of them is not.
        assert!(error(&["interval=3"], &schema)
            .1
            .contains("(did you mean interval_ms?)"));
        let message = error(&["colour=red"], &schema).1;
        assert!(!message.contains("did you mean"), "{message}");
        assert!(message.contains("interval_ms, steps"), "{message}");
        // A tool without arguments says so.
        let none = json!({"type": "object", "properties": {}});
        assert_eq!(
            error(&["x=1"], &none).1,
            "unknown argument x: this tool takes no arguments"
        );
        // Other keys allowed by additionalProperties go through, typed by its schema.
        let open = json!({"properties": {"a": {}}, "additionalProperties": {"type": "string"}});
        let v = typed_arguments(&args(&["b=1"]), &open, "tool")
            .ok()
            .unwrap();
        assert_eq!(v, json!({"b": "1"}));
        let open = json!({"properties": {"a": {}}, "additionalProperties": true});
        assert!(typed_arguments(&args(&["b=1"]), &open, "tool").is_ok());
        let closed = json!({"properties": {"a": {}}, "additionalProperties": false});
        assert!(typed_arguments(&args(&["b=1"]), &closed, "tool").is_err());
    }

    #[test]
    fn arrays_and_objects_that_are_not_say_what_json_to_write() {
        let schema = json!({"properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "any": {"type": "array"},
            "cfg": {"type": "object", "properties": {"depth": {"type": "integer"}}},
            "meta": {"type": "object"}}});
        assert_eq!(
            error(&["tags=a,b"], &schema).1,
            r#"tags: "a,b" is not a JSON array; write tags='["a","b"]'"#
        );
        assert_eq!(
            error(&["ids=1, 2"], &schema).1,
            r#"ids: "1, 2" is not a JSON array; write ids='[1,2]'"#
        );
        // JSON of the wrong kind is refused the same way.
        assert_eq!(
            error(&["any=5"], &schema).1,
            r#"any: "5" is not a JSON array; write any='[5]'"#
        );
        assert_eq!(
            error(&["tags={}"], &schema).1,
            r#"tags: "{}" is not a JSON array; write tags='["{}"]'"#
        );
        assert_eq!(
            error(&["cfg=deep"], &schema).1,
            r#"cfg: "deep" is not a JSON object; write cfg='{"depth":1}'"#
        );
        assert_eq!(
            error(&["meta=[1]"], &schema).1,
            r#"meta: "[1]" is not a JSON object; write meta='{"key":"value"}'"#
        );
    }

    #[test]
    fn integers_too_large_say_so() {
        let schema = json!({"properties": {"n": {"type": "integer"}}});
        let v = typed_arguments(&args(&["n=18446744073709551615"]), &schema, "tool")
            .ok()
            .unwrap();
        assert_eq!(v["n"].as_u64(), Some(u64::MAX));
        let v = typed_arguments(&args(&["n=-9223372036854775808"]), &schema, "tool")
            .ok()
            .unwrap();
        assert_eq!(v["n"].as_i64(), Some(i64::MIN));
        for big in ["18446744073709551616", "-9223372036854775809"] {
            let (code, message) = error(&[&format!("n={big}")], &schema);
            assert_eq!(code, exit_codes::USAGE);
            assert!(
                message.starts_with(&format!("n: {big} is too large for an integer")),
                "{message}"
            );
        }
        assert_eq!(
            error(&["n=1.5"], &schema).1,
            r#"n: "1.5" is not an integer"#
        );
    }

    #[test]
    fn closest_names() {
        let known = ["echo", "add", "slow", "ask", "survey"];
        assert_eq!(closest("ehco", &known), Some("echo"));
        assert_eq!(closest("Echo", &known), Some("echo"));
        assert_eq!(closest("sruvey", &known), Some("survey"));
        assert_eq!(closest("ad", &known), Some("add"));
        assert_eq!(closest("delete", &known), None);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("même", "meme"), 1);
        assert_eq!(distance("ehco", "echo"), 1);
        assert_eq!(distance("abc", ""), 3);
    }

    #[test]
    fn an_unknown_tool_lists_the_tools() {
        let tool = |name: &str| -> Tool {
            serde_json::from_value(json!({"name": name, "inputSchema": {}})).unwrap()
        };
        let tools = [tool("echo"), tool("add")];
        let f = unknown_tool("ecko", &tools);
        assert_eq!(f.code, exit_codes::USAGE);
        assert_eq!(
            f.message,
            "no tool named ecko (did you mean echo?); the server lists 2 tools: echo, add"
        );
        let f = unknown_tool("x", &[]);
        assert_eq!(f.message, "no tool named x: the server lists no tools");
        let many: Vec<Tool> = (0..40).map(|i| tool(&format!("t{i}"))).collect();
        let f = unknown_tool("nothing-like-it", &many);
        assert!(f.message.contains("40 tools"), "{}", f.message);
        assert!(
            f.message
                .ends_with(", t29, … (10 more; see `mcpwire tools`)"),
            "{}",
            f.message
        );
    }
}
