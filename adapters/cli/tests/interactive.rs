//! On a terminal: elicitations asked field by field, progress drawn as a bar. The binary runs
//! on a pseudo-terminal (a small Python driver types the answers).

// This test says on stderr what it skipped or how long it took; the rule that everything is
// printed through `out` (clippy.toml) is for the binary.
#![allow(clippy::disallowed_macros)]

mod common;

use std::process::{Command, Stdio};

use common::mcpwire;
use common::peers::{everything_stdio, skipped};

/// Runs `mcpwire ARGS` on a pseudo-terminal, typing `answers` at its prompts.
fn on_terminal(answers: &[&str], args: &[&str]) -> (Option<i32>, String) {
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pty_run.py");
    let o = Command::new("python3")
        .arg(driver)
        .args(answers)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_mcpwire"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&o.stdout).replace("\r\n", "\n");
    (o.status.code(), text)
}

#[test]
fn an_elicitation_is_asked_and_accepted() {
    for era in ["legacy", "modern"] {
        let (code, out) = on_terminal(&["Ada", ""], &["--era", era, "call", "ask"]);
        assert_eq!(code, Some(0), "{era}: {out}");
        assert!(out.contains("The server asks: What is your name?"), "{out}");
        // Required marked, the default shown.
        assert!(out.contains("name * [world]: "), "{out}");
        assert!(out.contains("accept / decline / cancel?"), "{out}");
        assert!(out.ends_with("hello, Ada\n"), "{era}: {out}");
    }
}

#[test]
fn an_empty_answer_takes_the_default() {
    let (code, out) = on_terminal(&["", ""], &["call", "ask"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("hello, world\n"), "{out}");
}

#[test]
fn an_elicitation_is_declined_or_cancelled() {
    for era in ["legacy", "modern"] {
        let (code, out) = on_terminal(&["Ada", "d"], &["--era", era, "call", "ask"]);
        assert!(out.ends_with("the user chose decline\n"), "{era}: {out}");
        assert_eq!(code, Some(0), "{era}: {out}");
        let (_, out) = on_terminal(&["Ada", "c"], &["--era", era, "call", "ask"]);
        assert!(out.ends_with("the user chose cancel\n"), "{era}: {out}");
    }
}

#[test]
fn without_a_terminal_an_elicitation_is_declined_saying_how_to_answer() {
    let o = mcpwire(&["call", "ask"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "the user chose decline\n"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("declined (answer with --answer JSON or --answer-defaults)"),
        "{err}"
    );
}

#[test]
fn flags_answer_on_a_terminal_too() {
    let (code, out) = on_terminal(&[], &["call", "ask", "--answer", r#"{"name":"Bo"}"#]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("The server asks"), "{out}");
    assert!(out.ends_with("hello, Bo\n"), "{out}");
}

#[test]
fn progress_is_a_bar_on_a_terminal() {
    let (code, out) = on_terminal(&[], &["call", "slow", "steps=2", "interval_ms=10"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!("\r[{}] 2/2", "#".repeat(20))),
        "{out:?}"
    );
    assert!(!out.contains("progress 2/2"), "{out:?}");
    // Cleared before the result.
    assert!(out.ends_with("\r\x1b[Kdone after 2 steps\n"), "{out:?}");
}

#[test]
fn sampling_answer_is_accepted_as_a_flag() {
    // The demo server does not sample (the answer itself is unit-tested); the flag is taken.
    let o = mcpwire(&["call", "echo", "message=hi", "--sampling-answer", "ok"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hi\n");
}

/// server-everything over stdio, or `None` when `MCPWIRE_SKIP_PEERS=1` skips `test`.
fn everything(test: &str) -> Option<String> {
    (!skipped(test)).then(everything_stdio)
}

/// The JSON after `Raw result: ` in server-everything's answer to an elicitation.
fn raw_result(out: &str) -> serde_json::Value {
    let (_, raw) = out
        .split_once("Raw result: ")
        .unwrap_or_else(|| panic!("no raw result: {out}"));
    serde_json::from_str(raw.trim()).unwrap_or_else(|e| panic!("{e}: {raw}"))
}

#[test]
fn a_form_of_every_field_kind_is_asked_on_a_terminal() {
    let Some(server) = everything("a_form_of_every_field_kind_is_asked_on_a_terminal") else {
        return;
    };
    let args = ["--stdio", &server, "call", "trigger-elicitation-request"];
    // The fields come in the order the server wrote them in its schema, then accept / decline
    // / cancel.
    let fields = [
        ("name", "Ada"),
        ("check", "y"),
        ("firstLine", ""), // its default
        ("email", ""),
        ("homepage", ""),
        ("birthdate", ""),
        ("integer", "7"),
        ("number", "12.5"),
        ("untitledSingleSelectEnum", "4"),
        ("untitledMultipleSelectEnum", "Piano,1"),
        ("titledSingleSelectEnum", "hero-2"),      // by value
        ("titledMultipleSelectEnum", "2, fish-3"), // by number and by value
        ("legacyTitledEnum", "3"),                 // by number
    ];
    let mut answers: Vec<&str> = fields.iter().map(|(_, answer)| *answer).collect();
    answers.push(""); // accept
    let (code, out) = on_terminal(&answers, &args);
    assert_eq!(code, Some(0), "{out}");
    // Each kind of choice is listed with its titles: legacy enumNames, oneOf, anyOf items.
    for listed in [
        "    3) pet-3 — Birds",
        "    2) hero-2 — Green Lantern",
        "    2) fish-2 — Salmon",
        "    4) Chandler",
        "    2) Piano",
        "untitledMultipleSelectEnum (Untitled Multiple Select Enum) (one or more, separated by \
         commas) [Guitar]: ",
        "check (Boolean) (y/n): ",
        "name (String) *: ",
    ] {
        assert!(out.contains(listed), "{listed:?} not in:\n{out}");
    }
    // Asked in that order.
    let mut at = 0;
    for (field, _) in fields {
        let found = out[at..]
            .find(&format!("\n{field} "))
            .unwrap_or_else(|| panic!("{field} not asked after the one before it:\n{out}"));
        at += found + 1;
    }
    let raw = raw_result(&out);
    assert_eq!(raw["action"], "accept", "{out}");
    assert_eq!(
        raw["content"],
        serde_json::json!({
            "check": true,
            "firstLine": "It was a dark and stormy night.",
            "integer": 7,
            "legacyTitledEnum": "pet-3",
            "name": "Ada",
            "number": 12.5,
            "titledMultipleSelectEnum": ["fish-2", "fish-3"],
            "titledSingleSelectEnum": "hero-2",
            "untitledMultipleSelectEnum": ["Piano", "Guitar"],
            "untitledSingleSelectEnum": "Chandler"
        }),
        "{out}"
    );
    assert!(out.contains("- Name: Ada"), "{out}");
    // The same form declined and cancelled at its end.
    for (choice, action) in [("d", "decline"), ("c", "cancel")] {
        let mut typed: Vec<&str> = vec![""; fields.len()];
        typed[0] = "Bo"; // name, the one required field
        typed.push(choice);
        let (code, out) = on_terminal(&typed, &args);
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(raw_result(&out)["action"], action, "{out}");
        assert!(!out.contains("- Name: Bo"), "{out}");
    }
}

#[test]
fn the_python_server_s_questions_are_asked_on_a_terminal_in_both_eras() {
    if std::env::var_os("MCPWIRE_SKIP_PEERS").is_some_and(|v| v == "1") {
        eprintln!("skipped because MCPWIRE_SKIP_PEERS=1");
        return;
    }
    let peers = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/peers");
    let python = format!("{peers}/pyvenv/bin/python");
    assert!(
        std::path::Path::new(&python).exists(),
        "the Python peer is missing: run tests/peers/install-python.sh (or MCPWIRE_SKIP_PEERS=1)"
    );
    let server = format!("{python} {peers}/py_server.py stdio");
    // Two questions, the second naming the first answer: two input_required rounds in the
    // stateless era, two elicitation/create requests during the call in the handshake era.
    for era in ["modern", "legacy"] {
        let args = ["--era", era, "--stdio", &server, "call", "two_questions"];
        let (code, out) = on_terminal(&["Ada", "", "blue", ""], &args);
        assert_eq!(code, Some(0), "{era}: {out}");
        assert!(out.contains("The server asks: What is your name?"), "{out}");
        assert!(out.contains("name (Name) *: "), "{out}");
        assert!(
            out.contains("The server asks: Which colour do you like, Ada?"),
            "{era}: {out}"
        );
        assert!(out.ends_with("Ada likes blue\n"), "{era}: {out}");
    }
    // Declined, in the middle of the call (handshake era).
    let args = ["--era", "legacy", "--stdio", &server, "call", "ask_name"];
    let (code, out) = on_terminal(&["Ada", "d"], &args);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("decline\n"), "{out}");
}

#[test]
fn a_url_elicitation_shows_the_url_and_waits_for_enter() {
    let Some(server) = everything("a_url_elicitation_shows_the_url_and_waits_for_enter") else {
        return;
    };
    let call = [
        "call",
        "trigger-url-elicitation",
        "url=https://example.test/auth",
    ];
    let mut args = vec!["--stdio", &server];
    args.extend(call);
    let (code, out) = on_terminal(&[""], &args);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("Open this URL to continue: https://example.test/auth"),
        "{out}"
    );
    assert!(out.contains(r#""action": "accept""#), "{out}");
    let (_, out) = on_terminal(&["d"], &args);
    assert!(out.contains(r#""action": "decline""#), "{out}");
}

#[test]
fn log_lines_are_not_printed_over_the_bar() {
    let args = [
        "--log-level",
        "info",
        "call",
        "slow",
        "steps=2",
        "interval_ms=50",
    ];
    let (code, out) = on_terminal(&[], &args);
    assert_eq!(code, Some(0), "{out:?}");
    // A log line never follows a drawn bar on its line: the bar is cleared first.
    assert!(out.contains("[info] demo: step 1 of 2 done"), "{out:?}");
    assert!(out.contains("[info] demo: step 2 of 2 done"), "{out:?}");
    assert!(!out.contains("of 2\x1b[K\x1b[2m"), "{out:?}");
    assert!(
        out.contains(&format!("\r[{}] 2/2", "#".repeat(20))),
        "{out:?}"
    );
}
