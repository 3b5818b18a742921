//! `mcpwire call` of a tool that runs as a task, and `mcpwire tasks`, against the built-in demo
//! server in both eras: the call waits for its task and prints its result, the task's status
//! changes go to stderr, a failed task is a failed call, and `tasks` lists, shows and refuses
//! as each era allows.

mod common;

use common::{assert_contains, mcpwire, stderr, stdout};

#[test]
fn a_call_that_runs_as_a_task_waits_for_it_and_tells_its_status() {
    for era in ["auto", "handshake"] {
        let o = mcpwire(&["--era", era, "call", "build", "ms=100"]);
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), "build: done after 100 ms", "{era}");
        let err = stderr(&o);
        assert_contains(&err, "task task-1: working");
        assert_contains(&err, "task task-1: completed");

        let o = mcpwire(&["--era", era, "call", "doomed", "ms=50"]);
        assert_eq!(o.status.code(), Some(4), "{era}: {}", stderr(&o));
        assert_contains(&stderr(&o), "doomed failed");

        let o = mcpwire(&[
            "--era",
            era,
            "call",
            "approve",
            "ms=50",
            "--answer",
            r#"{"approve": true}"#,
        ]);
        assert_eq!(o.status.code(), Some(0), "{era}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), "approve: done after 50 ms", "{era}");
    }
}

#[test]
fn tasks_lists_shows_and_refuses_as_each_era_allows() {
    let o = mcpwire(&["--era", "handshake", "tasks"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "(none)");
    let o = mcpwire(&["--era", "handshake", "tasks", "--json"]);
    assert_eq!(
        stdout(&o).trim(),
        r#"{
  "tasks": []
}"#
    );
    let o = mcpwire(&["tasks"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "tasks get ID");
    for era in ["auto", "handshake"] {
        let o = mcpwire(&["--era", era, "tasks", "get", "nope"]);
        assert_eq!(o.status.code(), Some(4), "{era}: {}", stderr(&o));
        assert_contains(&stderr(&o), "unknown task");
    }
}

#[test]
fn a_question_the_server_asks_as_a_task_is_answered_and_its_answer_comes_back() {
    // The client declares that it runs elicitations as tasks (it has a handler for them): the
    // demo's `ask-task` asks its question as a task, looks at it, and fetches its result.
    let o = mcpwire(&[
        "--era",
        "handshake",
        "call",
        "ask-task",
        "--answer",
        r#"{"name": "Ada"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The answer comes at once: the look may find the task working or already completed.
    let out = stdout(&o);
    assert!(
        out.starts_with("hello, Ada (asked through task task-1, ")
            && out.trim_end().ends_with(" when looked at)"),
        "{out}"
    );
    // The stateless era has no requests from the server: the tool says what it needs.
    let o = mcpwire(&["call", "ask-task", "--answer", r#"{"name": "Ada"}"#]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_contains(&stdout(&o), "runs elicitations as tasks");
}
