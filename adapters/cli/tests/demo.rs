//! `mcpwire demo` as a subprocess: every step of the tour is printed with a value that came over
//! the wire, it exits 0, and it finishes quickly.

use std::process::Command;
use std::time::{Duration, Instant};

/// The paragraph under the title that starts with `title` (up to the blank line after it).
fn paragraph<'a>(out: &'a str, title: &str) -> &'a str {
    out.split("\n\n")
        .find(|p| p.starts_with(title))
        .unwrap_or_else(|| panic!("no step titled {title:?} in:\n{out}"))
}

#[test]
fn demo_tours_every_step_with_real_values_and_exits_0_quickly() {
    let started = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .arg("demo")
        .output()
        .expect("run mcpwire demo");
    let took = started.elapsed();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "exit {:?}\n{out}\n{err}", o.status);
    let steps: [(&str, &[&str]); 11] = [
        (
            "1. The handshake era (pinned",
            &[
                "→ initialize #0 · ← result #0 · → notifications/initialized",
                "protocol 2025-11-25 with mcpwire-demo",
                "era: handshake",
            ],
        ),
        (
            "2. Era detection (Era::Auto): the stateless era, else initialize",
            &[
                "→ server/discover #0 · ← result #0",
                "\"2026-07-28\"",
                "the era is stateless: protocol 2026-07-28",
                // Against serve-demo --handshake-only: the probe refused, then initialize.
                "Against `serve-demo --handshake-only`",
                "→ server/discover #0 · ← error #0 (-32601) · → initialize #1 · ← result #1",
                "the probe was refused (-32601 \"Method not found\")",
                "fell back to initialize: the era is handshake, protocol 2025-11-25.",
            ],
        ),
        (
            "3. Tools",
            &[
                "→ tools/list",
                "14 tools: echo, add, slow, ask, survey, fail, big, build, crawl, approve, doomed, ask-task, forecast, forecast-refresh.",
            ],
        ),
        (
            "4. A call with progress",
            &[
                "→ tools/call slow",
                "← notifications/progress ×3",
                "1/3, 2/3, 3/3",
                "\"done after 3 steps\"",
            ],
        ),
        (
            "5. An elicitation",
            &[
                "← elicitation/create #0 · → result #0",
                "\"What is your name?\"",
                "{\"name\":\"world\"}",
                "\"hello, world\"",
            ],
        ),
        (
            "6. Two input_required rounds",
            &[
                "← result #1 (input_required) · → tools/call survey #2",
                "← result #2 (input_required) · → tools/call survey #3",
                "round 1: asked \"Your name?\"",
                "round 2: asked \"Your favourite colour?\"",
                "requestState \"survey:1\"",
                "\"world likes world\"",
            ],
        ),
        (
            "7. A cancelled slow call",
            &[
                "→ notifications/cancelled",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"",
                "calls still in flight: 0",
            ],
        ),
        (
            "8. Resources",
            &[
                "→ resources/read",
                "demo://readme (text/plain)",
                "demo://readme → \"mcpwire demo server\"",
                "demo://echo/hello → \"hello\"",
            ],
        ),
        (
            "9. Prompts",
            &[
                "→ prompts/get",
                "greet {\"name\":\"Ada\"} → user: \"Say hello to Ada.\"",
            ],
        ),
        (
            "10. A server notification",
            &[
                "→ logging/setLevel",
                "← notifications/message ×2",
                "[info] \"step 1 of 2 done\", [info] \"step 2 of 2 done\"",
            ],
        ),
        (
            "11. A clean close",
            &[
                "handshake: close()",
                "stateless: close()",
                "(closed by the client)",
                "is gone",
            ],
        ),
    ];
    let mut at = 0;
    for (title, values) in steps {
        let p = paragraph(&out, title);
        for value in values {
            assert!(p.contains(value), "step {title:?} lacks {value:?}:\n{p}");
        }
        // The steps come in order.
        let here = out.find(title).expect("the title");
        assert!(here >= at, "step {title:?} is out of order:\n{out}");
        at = here;
    }
    assert!(err.is_empty(), "stderr: {err}");
    assert!(took < Duration::from_secs(20), "the tour took {took:?}");
}

#[test]
fn demo_takes_no_server() {
    let o = Command::new(env!("CARGO_BIN_EXE_mcpwire"))
        .args(["--stdio", "cat", "demo"])
        .output()
        .expect("run mcpwire demo");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("demo runs against the built-in demo server"),
        "{err}"
    );
}
