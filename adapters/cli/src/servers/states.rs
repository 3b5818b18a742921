//! Each server of a configuration file as it settles (ready, failed, disabled), and a server
//! that is not ready in words: its state, its reason, where it runs and the end of its stderr.

use std::collections::HashSet;
use std::time::Instant;

use futures_lite::future;
use mcpwire::hosts::Loaded;
use mcpwire::manager::{Manager, ServerState};
use mcpwire::ServerConfig;

use crate::exit_codes;
use crate::failure::Failure;

/// How many of the last lines of a failed server's stderr the text output shows.
const TAIL_LINES: usize = 5;

/// Every server's name in `loaded`: those read (disabled ones too) and those that could not
/// be.
pub(crate) fn all_names(loaded: &Loaded) -> Vec<&str> {
    let mut names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
    names.extend(loaded.failed.iter().filter_map(|e| e.server()));
    names
}

/// Calls `each` with every server and its state as it settles (ready, failed, disabled), in
/// the order they do; at `until`, with those still starting.
pub(crate) async fn as_each_settles(
    manager: &Manager,
    until: Instant,
    mut each: impl FnMut(&str, &ServerState),
) {
    let mut told: HashSet<String> = HashSet::new();
    let mut limit = smol::Timer::at(until);
    loop {
        let states = manager.states();
        for (name, state) in &states {
            if state.settled() && told.insert(name.clone()) {
                each(name, state);
            }
        }
        if told.len() >= states.len() {
            return;
        }
        let told_now = &told;
        let newly = manager.wait_until(|states| {
            states
                .iter()
                .any(|(n, s)| s.settled() && !told_now.contains(n))
        });
        let late = future::or(
            async {
                newly.await;
                false
            },
            async {
                (&mut limit).await;
                true
            },
        )
        .await;
        if late {
            for (name, state) in manager.states() {
                if told.insert(name.clone()) {
                    each(&name, &state);
                }
            }
            return;
        }
    }
}

/// Why a server is not ready, when it is not: its failure (without the command line or URL it
/// may begin with, and without the end of its stderr, both told apart), or that it is still
/// starting.
pub(crate) fn reason(state: &ServerState, config: Option<&ServerConfig>) -> Option<String> {
    match state {
        ServerState::Failed {
            reason,
            stderr_tail,
        } => Some(without_target(without_tail(reason, stderr_tail), config)),
        ServerState::Restarting { reason, .. } => Some(without_target(reason, config)),
        ServerState::Starting { .. } => Some("still starting".into()),
        _ => None,
    }
}

/// `reason` without the command line or URL of `config` it begins with (`` `cmd args`: ``,
/// or `` cannot start `cmd args`: ``): told apart, as it may be printed.
fn without_target(reason: &str, config: Option<&ServerConfig>) -> String {
    let targets = match config {
        Some(ServerConfig::Stdio(s)) => vec![std::iter::once(s.command.as_str())
            .chain(s.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")],
        Some(ServerConfig::Http(h)) => {
            vec![h.url.clone(), mcpwire::core::error::redact_url(&h.url)]
        }
        None => Vec::new(),
    };
    for target in targets {
        if let Some(rest) = reason.strip_prefix(&format!("cannot start `{target}`: ")) {
            return format!("cannot start: {rest}");
        }
        if let Some(rest) = reason.strip_prefix(&format!("`{target}`: ")) {
            return rest.to_owned();
        }
    }
    reason.to_owned()
}

/// `reason` without the `; stderr: …` a connection error ends with, when it is the end of
/// `tail` (shown on its own).
fn without_tail<'a>(reason: &'a str, tail: &str) -> &'a str {
    let Some(last) = tail.lines().rev().find(|l| !l.trim().is_empty()) else {
        return reason;
    };
    match reason.find("; stderr: ") {
        Some(at) if reason.trim_end().ends_with(last.trim_end()) => &reason[..at],
        _ => reason,
    }
}

/// The end of a failed server's stderr, if it wrote any.
pub(crate) fn stderr_tail(state: &ServerState) -> Option<&str> {
    match state {
        ServerState::Failed { stderr_tail, .. } if !stderr_tail.trim().is_empty() => {
            Some(stderr_tail)
        }
        _ => None,
    }
}

/// The last `TAIL_LINES` lines of `text`.
fn last_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec()
}

/// Where server `name` runs, as it may be printed (secrets as `***`, URLs without
/// credentials), with what it is: `("command", …)` or `("url", …)`.
pub(crate) fn shown_target(loaded: &Loaded, name: &str) -> Option<(&'static str, String)> {
    let server = loaded.get(name)?;
    let what = match server.config {
        ServerConfig::Stdio(_) => "command",
        ServerConfig::Http(_) => "url",
    };
    Some((what, server.target()))
}

/// The lines told under a server that is not ready: where it runs (when it failed), then the
/// rest of a long reason and the end of its stderr.
pub(crate) fn details(
    state: &ServerState,
    reason: &str,
    target: Option<(&str, String)>,
) -> Vec<String> {
    let mut lines = Vec::new();
    if matches!(state, ServerState::Failed { .. }) {
        if let Some((what, target)) = target {
            lines.push(format!("{what}: {target}"));
        }
    }
    lines.extend(reason.lines().skip(1).map(str::to_owned));
    let tail = stderr_tail(state).map(last_lines).unwrap_or_default();
    lines.extend(tail.into_iter().map(|l| format!("stderr: {l}")));
    lines
}

/// Server `name` that is not ready, in words: `github failed: …`, `github is disabled…`,
/// with its reason's first line (`None`: it is ready).
fn status(name: &str, state: &ServerState, reason: Option<&str>) -> Option<String> {
    let first = reason.and_then(|r| r.lines().next()).unwrap_or("");
    Some(match state {
        ServerState::Ready { .. } => return None,
        ServerState::Failed { .. } => format!("{name} failed: {first}"),
        ServerState::Restarting { .. } => format!("{name} is restarting: {first}"),
        ServerState::Starting { .. } => format!("{name} is still starting"),
        ServerState::Disabled => format!(
            "{name} is disabled in the configuration (--server {name} starts it all the same)"
        ),
        other => format!("{name} is {}", other.word()),
    })
}

/// Server `name` that is not ready, told in full: its state and reason, then where it runs
/// and the end of its stderr, each line after the first indented and named.
fn not_ready_text(
    name: &str,
    state: &ServerState,
    config: Option<&ServerConfig>,
    target: Option<(&str, String)>,
) -> Option<String> {
    let why = reason(state, config);
    let mut text = status(name, state, why.as_deref())?;
    for line in details(state, why.as_deref().unwrap_or(""), target) {
        text.push_str(&format!("\n  {name} {line}"));
    }
    Some(text)
}

/// Tells on stderr that server `name` is not ready (a disabled one is not told), with its
/// reason, where it runs and the end of its stderr.
pub(crate) fn report(manager: &Manager, loaded: &Loaded, name: &str, state: &ServerState) {
    if matches!(state, ServerState::Disabled) {
        return;
    }
    let config = manager.config(name);
    if let Some(text) = not_ready_text(name, state, config.as_ref(), shown_target(loaded, name)) {
        errln!("mcpwire: {text}");
    }
}

/// Tells on stderr each server that is not ready, and each the file could not give.
pub(crate) fn report_failures(manager: &Manager, loaded: &Loaded) {
    for (name, state) in manager.states() {
        report(manager, loaded, &name, &state);
    }
    for e in &loaded.failed {
        errln!("mcpwire: {e}");
    }
}

/// Server `name` is not ready: its state, reason, where it runs and the end of its stderr
/// (exit 3).
pub(crate) fn not_ready(
    manager: &Manager,
    loaded: &Loaded,
    name: &str,
    state: &ServerState,
) -> Failure {
    let config = manager.config(name);
    let text = not_ready_text(name, state, config.as_ref(), shown_target(loaded, name))
        .unwrap_or_else(|| format!("{name} is {}", state.word()));
    Failure::new(exit_codes::CONNECT, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_of_a_tail() {
        assert_eq!(last_lines("a\nb"), ["a", "b"]);
        assert_eq!(last_lines("1\n2\n3\n4\n5\n6\n7"), ["3", "4", "5", "6", "7"]);
        assert!(last_lines("").is_empty());
    }

    #[test]
    fn reasons_of_states() {
        let failed = ServerState::Failed {
            reason: "cannot start".into(),
            stderr_tail: "boom".into(),
        };
        assert_eq!(reason(&failed, None).as_deref(), Some("cannot start"));
        assert_eq!(stderr_tail(&failed), Some("boom"));
        let ready = ServerState::Ready {
            era: None,
            tools: 3,
        };
        assert_eq!(reason(&ready, None), None);
        assert_eq!(
            not_ready_text("c", &failed, None, None).as_deref(),
            Some("c failed: cannot start\n  c stderr: boom")
        );
        let failed = ServerState::Failed {
            reason: "handshake failed: exited; stderr: a\nboom".into(),
            stderr_tail: "a\nboom\n".into(),
        };
        assert_eq!(
            not_ready_text("c", &failed, None, None).as_deref(),
            Some("c failed: handshake failed: exited\n  c stderr: a\n  c stderr: boom")
        );
        assert_eq!(without_tail("x; stderr: other", "boom"), "x; stderr: other");
        assert_eq!(
            not_ready_text("off", &ServerState::Disabled, None, None).as_deref(),
            Some("off is disabled in the configuration (--server off starts it all the same)")
        );
    }

    #[test]
    fn the_reason_first_and_where_it_runs_below() {
        let config = ServerConfig::stdio("run-it", ["--token", "s3cret"]);
        let failed = ServerState::Failed {
            reason: "`run-it --token s3cret`: handshake failed: connection closed".into(),
            stderr_tail: String::new(),
        };
        let shown = Some(("command", "run-it --token ***".to_owned()));
        assert_eq!(
            not_ready_text("x", &failed, Some(&config), shown.clone()).as_deref(),
            Some("x failed: handshake failed: connection closed\n  x command: run-it --token ***")
        );
        assert_eq!(
            without_target(
                "cannot start `run-it --token s3cret`: not found",
                Some(&config)
            ),
            "cannot start: not found"
        );
        // Another command line is left as it is.
        assert_eq!(
            without_target("`other`: handshake failed", Some(&config)),
            "`other`: handshake failed"
        );
        let http = ServerConfig::Http(mcpwire::core::config::HttpConfig {
            kind: mcpwire::core::config::HttpKind::Streamable,
            url: "https://u:p@h/mcp".into(),
            headers: Default::default(),
            extra: Default::default(),
        });
        assert_eq!(
            without_target("`https://u:p@h/mcp`: handshake failed: 500", Some(&http)),
            "handshake failed: 500"
        );
    }
}
