//! `mcpwire call` and the demo server's `forecast` tool, in both eras: a result that meets the
//! tool's `outputSchema` is printed; one that breaks it (a wrong type, or no
//! `structuredContent`) exits 7 naming the tool and where it broke; an app-only tool and the
//! App's `ui://` resource are there like any other.

mod common;

use std::process::Output;

use common::{assert_contains, mcpwire, stderr, stdout};

/// Runs `args` in each era (auto, which picks stateless against the demo server, and
/// handshake).
fn both_eras(args: &[&str]) -> [Output; 2] {
    ["auto", "handshake"].map(|era| {
        let mut all = vec!["--era", era];
        all.extend_from_slice(args);
        mcpwire(&all)
    })
}

#[test]
fn a_result_that_meets_its_schema_is_printed() {
    for o in both_eras(&["call", "forecast", "city=Oslo", "--json"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["structuredContent"]["city"], "Oslo");
    }
}

#[test]
fn a_result_that_breaks_its_schema_exits_7_and_says_where() {
    for o in both_eras(&["call", "forecast", "city=Oslo", "break=type"]) {
        assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
        let err = stderr(&o);
        assert_contains(
            &err,
            "tool `forecast`: structured output does not match the schema",
        );
        assert_contains(&err, "/temperature");
        assert_eq!(stdout(&o), "");
    }
    for o in both_eras(&["call", "forecast", "city=Oslo", "break=missing"]) {
        assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
        assert_contains(&stderr(&o), "has no structuredContent");
    }
}

#[test]
fn the_app_s_tools_and_ui_resource_are_listed_and_read() {
    for o in both_eras(&["tools", "--json"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let refresh = v
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "forecast-refresh")
            .unwrap();
        assert_eq!(refresh["_meta"]["ui"]["visibility"][0], "app");
    }
    for o in both_eras(&["resources", "read", "ui://demo/forecast.html"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_contains(&stdout(&o), "<h1>Forecast</h1>");
    }
}

#[test]
fn a_tool_s_app_is_named_in_its_detail() {
    for o in both_eras(&["tools", "forecast-refresh"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_contains(
            &stdout(&o),
            "app: ui://demo/forecast.html (app only: not for the model)\n",
        );
    }
    for o in both_eras(&["tools", "forecast"]) {
        let out = stdout(&o);
        assert_contains(&out, "forecast (Weather forecast)\n");
        assert_contains(&out, "app: ui://demo/forecast.html\n");
        assert_contains(
            &out,
            "structured output: city (string), conditions (string), temperature (number)",
        );
    }
}
