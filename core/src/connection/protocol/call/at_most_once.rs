//! At most once: a request is never sent twice behind the caller's back.
//!
//! When a connection or stream is lost after a request may have reached the server, the one rule
//! of this module decides: a request that is safe to repeat is re-issued once, with a new id, as a
//! new request; any other ends with [`LocalError::MaybeExecuted`](crate::LocalError), and only
//! the caller may choose to re-issue it. (A request that never left is simply sent again: that is
//! the transport's business, not a repeat.)

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::connection::protocol::vocabulary::events::CallOptions;
use crate::types::REPEATABLE_READS;

/// Whether a call of `method` with these options may be re-issued by the connection itself.
pub(crate) fn safe_to_repeat(method: &str, opts: &CallOptions) -> bool {
    opts.safe_to_repeat || REPEATABLE_READS.contains(&method)
}

/// The tools a `tools/list` result annotates as read-only or idempotent.
pub(crate) fn repeatable_tools(list: &crate::jsonrpc::RawJson) -> HashSet<String> {
    #[derive(serde::Deserialize)]
    struct Listed {
        #[serde(default)]
        tools: Vec<ToolHints>,
    }
    #[derive(serde::Deserialize)]
    struct ToolHints {
        name: String,
        #[serde(default)]
        annotations: Option<Hints>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Hints {
        #[serde(default)]
        read_only_hint: Option<bool>,
        #[serde(default)]
        idempotent_hint: Option<bool>,
    }
    let Ok(listed) = list.parse::<Listed>() else {
        return HashSet::new();
    };
    listed
        .tools
        .into_iter()
        .filter(|t| {
            t.annotations
                .as_ref()
                .is_some_and(|h| h.read_only_hint == Some(true) || h.idempotent_hint == Some(true))
        })
        .map(|t| t.name)
        .collect()
}

/// What a safe call needs to be sent again: the request now in flight, and whether the one
/// re-issue it is allowed was used.
#[derive(Debug, Clone)]
pub(crate) struct Repeat {
    pub(crate) method: Cow<'static, str>,
    pub(crate) params: Option<Map<String, Value>>,
    pub(crate) opts: CallOptions,
    pub(crate) used: bool,
}

impl Repeat {
    /// A request not yet re-issued.
    pub(crate) fn new(
        method: Cow<'static, str>,
        params: Option<Map<String, Value>>,
        opts: CallOptions,
    ) -> Self {
        Repeat {
            method,
            params,
            opts,
            used: false,
        }
    }
}

/// What becomes of a request lost after it may have reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lost {
    /// Re-issue it once, with a new id.
    Reissue,
    /// End it: it may have been executed.
    End,
}

/// The rule: a safe call is re-issued once; anything else, or a second loss, ends.
pub(crate) fn decide(repeat: Option<&Repeat>) -> Lost {
    match repeat {
        Some(r) if !r.used => Lost::Reissue,
        _ => Lost::End,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_calls_are_reissued_and_only_once() {
        let opts = CallOptions::default();
        assert!(safe_to_repeat("resources/read", &opts));
        assert!(safe_to_repeat("tools/list", &opts));
        assert!(!safe_to_repeat("tools/call", &opts));
        let marked = CallOptions {
            safe_to_repeat: true,
            ..CallOptions::default()
        };
        assert!(safe_to_repeat("tools/call", &marked));
        let mut r = Repeat::new("tools/list".into(), None, CallOptions::default());
        assert_eq!(decide(Some(&r)), Lost::Reissue);
        r.used = true;
        assert_eq!(decide(Some(&r)), Lost::End);
        assert_eq!(decide(None), Lost::End);
    }

    #[test]
    fn read_only_and_idempotent_tools_are_told_apart_from_the_rest() {
        let list = crate::jsonrpc::RawJson::new(&serde_json::json!({"tools": [
            {"name": "get", "inputSchema": {}, "annotations": {"readOnlyHint": true}},
            {"name": "put", "inputSchema": {}, "annotations": {"idempotentHint": true}},
            {"name": "charge", "inputSchema": {}, "annotations": {"destructiveHint": true}},
            {"name": "plain", "inputSchema": {}}
        ]}))
        .unwrap();
        let mut tools: Vec<String> = repeatable_tools(&list).into_iter().collect();
        tools.sort();
        assert_eq!(tools, ["get", "put"]);
    }
}
