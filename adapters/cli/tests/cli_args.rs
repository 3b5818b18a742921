//! One rule for arguments, from what the client already knows, and lists that are empty or not
//! offered at all. Against the demo server, and a stand-in (`fixtures/shapes.py`) whose tool
//! takes a string or a boolean, and which offers empty lists, or no resources and prompts at
//! all.

mod common;

use std::process::Output;

use common::{assert_contains, mcpwire, stderr, stdout};

const SHAPES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/shapes.py");

/// `mcpwire --stdio "python3 shapes.py MODE" ARGS…`.
fn shapes(mode: &str, args: &[&str]) -> Output {
    let server = format!("python3 {SHAPES} {mode}");
    let mut all = vec!["--stdio", server.as_str()];
    all.extend_from_slice(args);
    mcpwire(&all)
}

/// Asserts a usage error (exit 2) refused before anything was sent, with `message`.
#[track_caller]
fn refused(o: &Output, message: &str) {
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(o), stderr(o));
    assert_contains(&stderr(o), message);
    assert_eq!(stdout(o), "");
}

#[test]
fn a_string_or_boolean_argument_takes_any_word() {
    let o = shapes("empty", &["call", "pick", "mode=maybe"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"{"mode": "maybe"}"#);
    // A word that reads as a boolean is one.
    let o = shapes("empty", &["call", "pick", "mode=true", "level=high"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"{"level": "high", "mode": true}"#);
}

#[test]
fn missing_required_arguments_are_told_before_sending() {
    // A tool's `required`.
    refused(
        &mcpwire(&["call", "add", "a=1"]),
        "mcpwire: the required argument b is missing",
    );
    refused(
        &mcpwire(&["call", "add"]),
        "mcpwire: the required arguments a, b are missing",
    );
    refused(
        &shapes("empty", &["call", "pick", "level=low"]),
        "the required argument mode is missing",
    );
    // A prompt's required arguments.
    refused(
        &mcpwire(&["prompts", "get", "greet"]),
        "mcpwire: the required argument name is missing",
    );
    let o = mcpwire(&["prompts", "get", "greet", "name=Ada"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // An unknown one is named as the prompt's.
    refused(
        &mcpwire(&["prompts", "get", "greet", "nme=Ada"]),
        "unknown argument nme (did you mean name?); the prompt's arguments: name",
    );
}

#[test]
fn a_json_object_is_checked_as_key_values_are() {
    // An unknown key names the closest known one, however the arguments came.
    let message = "unknown argument brek (did you mean break?); the tool's arguments: break, city";
    refused(
        &mcpwire(&["call", "forecast", r#"{"city": "Oslo", "brek": "type"}"#]),
        message,
    );
    refused(
        &mcpwire(&["call", "forecast", "city=Oslo", "brek=type"]),
        message,
    );
    let o = common::mcpwire_with_stdin(
        &["call", "forecast", "-"],
        br#"{"city": "Oslo", "brek": "type"}"#,
    );
    refused(&o, message);
    // A value outside an enum lists the allowed ones.
    let message = r#"break: "nope" is not one of: "type", "missing""#;
    refused(
        &mcpwire(&["call", "forecast", r#"{"city": "Oslo", "break": "nope"}"#]),
        message,
    );
    refused(
        &mcpwire(&["call", "forecast", "city=Oslo", "break=nope"]),
        message,
    );
    refused(
        &shapes(
            "empty",
            &["call", "pick", r#"{"mode": "x", "level": "hihg"}"#],
        ),
        r#"level: "hihg" is not one of: "low", "high" (did you mean "high"?)"#,
    );
    // Required ones too.
    refused(
        &mcpwire(&["call", "forecast", r#"{"break": "type"}"#]),
        "the required argument city is missing",
    );
    // What the schema allows goes.
    let o = mcpwire(&["call", "forecast", r#"{"city": "Oslo", "break": "type"}"#]);
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
}

#[test]
fn an_environment_variable_given_twice_is_refused() {
    let o = mcpwire(&["--env", "K=1", "--env", "K=2", "tools"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_contains(
        &stderr(&o),
        "mcpwire: --env K is given twice; give each variable once",
    );
    let o = mcpwire(&["--env", "K=1", "--env", "L=1", "tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn lists_a_server_does_not_offer_are_empty_not_failures() {
    for (args, what) in [
        (&["resources"][..], "resources"),
        (&["resources", "templates"][..], "resources"),
        (&["prompts"][..], "prompts"),
    ] {
        let o = shapes("bare", args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), format!("(the server offers no {what})\n"));
        assert_eq!(stderr(&o), "");
        // As JSON, an empty list.
        let json = [args, &["--json"][..]].concat();
        let o = shapes("bare", &json);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v, serde_json::json!([]));
    }
    // A prompt of a server without prompts: there is none to get.
    refused(
        &shapes("bare", &["prompts", "get", "greet"]),
        "no prompt greet: the server offers no prompts",
    );
}

#[test]
fn an_empty_list_says_none() {
    for args in [
        &["resources"][..],
        &["resources", "templates"][..],
        &["prompts"][..],
    ] {
        let o = shapes("empty", args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), "(none)\n", "{args:?}");
    }
    refused(
        &shapes("empty", &["prompts", "get", "greet"]),
        "no prompt greet: the server lists no prompts",
    );
}

#[test]
fn tools_of_a_server_without_them_or_with_none() {
    let o = shapes("toolless", &["tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "(the server offers no tools)\n");
    let o = shapes("toolless", &["tools", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "[]");
    let o = shapes("no-tools", &["tools"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "(none)\n");
}
