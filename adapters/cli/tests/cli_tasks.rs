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
