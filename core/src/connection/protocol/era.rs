//! Which protocol era a server speaks, and how the `server/discover` probe decides it.
//!
//! The rules (protocol.md §1): a `DiscoverResult` or a recognised modern error (-32020, -32021,
//! -32022) means modern; on -32022 the server's `data.supported` decides, and a list of only
//! handshake-era versions means the handshake. Any other error means the handshake on the same
//! process. No answer in time, or the process dying during the probe, means the handshake on a
//! fresh process (some servers fix their era from the first message, some exit on any request
//! before `initialize`). The fallback is never keyed to one error code.

use serde::Deserialize;
use serde_json::Value;

use crate::jsonrpc::{ErrorObject, RawJson};
use crate::rpc::{LocalError, Outcome, Reply};
use crate::types::codes::{
    HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::types::{InitializeResult, HANDSHAKE_VERSIONS, LATEST_VERSION};

/// Which era to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Era {
    /// Probe with `server/discover` and follow the server (the default).
    #[default]
    Auto,
    /// The handshake era only (`initialize`).
    Handshake,
    /// The stateless era only (2026-07-28).
    Stateless,
}

/// The era a connection settled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChosenEra {
    /// The handshake era.
    Handshake,
    /// The stateless era.
    Stateless,
}

impl std::fmt::Display for ChosenEra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChosenEra::Handshake => "handshake",
            ChosenEra::Stateless => "stateless",
        })
    }
}

/// Why a connection speaks the era it settled on
/// ([`Connection::era_reason`](crate::Connection::era_reason)). Its `Display` says it in a few
/// words, as `mcpwire info` shows it ("answered server/discover", "refused the probe with
/// JSON-RPC error code -32601", "pinned").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraReason {
    /// The era was pinned ([`Era::Handshake`] or [`Era::Stateless`]), not detected.
    Pinned,
    /// The server answered the `server/discover` probe: the stateless era.
    Discovered,
    /// The server answered the probe with a stateless-era error (-32020, -32021; -32022 with a
    /// 2026-07-28 version among those it supports): the stateless era.
    ModernError {
        /// The error's code.
        code: i64,
    },
    /// The server refused the probe with a JSON-RPC error, as a server older than 2026-07-28
    /// refuses a method it does not know (-32601, or -32602 from Python SDK 1.x servers): the
    /// handshake era.
    Refused {
        /// The error's code.
        code: i64,
    },
    /// The server refused the probe with an HTTP status (400, 404, 405) and no JSON-RPC
    /// answer, as older Streamable HTTP servers do: the handshake era.
    RefusedHttp {
        /// The status.
        status: u16,
    },
    /// The server supports only handshake-era versions (it listed them in its discover result
    /// or in a -32022 error): the handshake era.
    OnlyHandshakeVersions,
    /// The probe went unanswered, or the server exited during it: a new process was started
    /// for `initialize` (stdio only).
    Unanswered,
}

impl std::fmt::Display for EraReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EraReason::Pinned => f.write_str("pinned"),
            EraReason::Discovered => f.write_str("answered server/discover"),
            EraReason::ModernError { code } => {
                write!(
                    f,
                    "answered server/discover with JSON-RPC error code {code}"
                )
            }
            EraReason::Refused { code } => {
                write!(f, "refused the probe with JSON-RPC error code {code}")
            }
            EraReason::RefusedHttp { status } => {
                write!(f, "refused the probe with HTTP {status}")
            }
            EraReason::OnlyHandshakeVersions => f.write_str("supports only handshake-era versions"),
            EraReason::Unanswered => {
                f.write_str("did not answer the probe; started again for initialize")
            }
        }
    }
}

impl EraReason {
    /// Why `verdict` (the probe's `outcome` judged with `era`) chose its era.
    pub(crate) fn of(outcome: &Outcome, era: Era, verdict: &Verdict) -> Option<EraReason> {
        if era != Era::Auto {
            return Some(EraReason::Pinned);
        }
        Some(match (verdict, outcome) {
            (Verdict::Stateless(_), Ok(Reply::Error(e))) => EraReason::ModernError { code: e.code },
            (Verdict::Stateless(_), _) => EraReason::Discovered,
            (Verdict::Handshake(_), Ok(Reply::Result(_))) => EraReason::OnlyHandshakeVersions,
            (Verdict::Handshake(_), Ok(Reply::Error(e)))
                if e.code == UNSUPPORTED_PROTOCOL_VERSION =>
            {
                EraReason::OnlyHandshakeVersions
            }
            (Verdict::Handshake(_), Ok(Reply::Error(e))) => EraReason::Refused { code: e.code },
            (Verdict::HandshakeOnNewProcess, _) => EraReason::Unanswered,
            _ => return None,
        })
    }
}

/// What the probe's outcome means.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Verdict {
    /// The server speaks 2026-07-28; its discover result when it gave one.
    Stateless(Option<RawJson>),
    /// Use `initialize` on the same process, offering this version.
    Handshake(String),
    /// Use `initialize` on a fresh process (the probe went unanswered or killed the server).
    HandshakeOnNewProcess,
    /// No version in common, or the era was pinned and the server does not speak it.
    Fail(String),
}

#[derive(Deserialize)]
struct Supported {
    #[serde(default)]
    supported: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiscoverHead {
    #[serde(default)]
    supported_versions: Vec<String>,
}

/// Chooses among the versions a server supports: ours when it has it, else its newest
/// handshake-era version we speak.
fn choose(supported: &[String], era: Era) -> Verdict {
    if supported.iter().any(|v| v == LATEST_VERSION) {
        return match era {
            Era::Handshake => Verdict::Fail(
                "the era is pinned to the handshake but the server answered the probe".into(),
            ),
            _ => Verdict::Stateless(None),
        };
    }
    let handshake = HANDSHAKE_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s == *v));
    match (handshake, era) {
        (Some(v), Era::Auto) => Verdict::Handshake((*v).to_owned()),
        (Some(_), _) => Verdict::Fail(format!(
            "the server supports only handshake-era versions ({}) and the era is pinned to {LATEST_VERSION}",
            supported.join(", ")
        )),
        (None, _) => Verdict::Fail(format!(
            "no protocol version in common: the server supports {:?}, this client {} and {}",
            supported,
            LATEST_VERSION,
            HANDSHAKE_VERSIONS.join(", ")
        )),
    }
}

/// Judges the outcome of the `server/discover` probe.
pub fn judge_probe(outcome: &Outcome, era: Era) -> Verdict {
    match outcome {
        Ok(Reply::Result(raw)) => {
            let head: DiscoverHead = match raw.parse() {
                Ok(h) => h,
                Err(e) => return Verdict::Fail(format!("server/discover result: {e}")),
            };
            if head.supported_versions.is_empty() {
                // A server that answers discover is modern, whatever it failed to list.
                return Verdict::Stateless(Some(raw.clone()));
            }
            match choose(&head.supported_versions, era) {
                Verdict::Stateless(None) => Verdict::Stateless(Some(raw.clone())),
                other => other,
            }
        }
        Ok(Reply::Error(e)) => judge_error(e, era),
        Err(LocalError::Timeout { .. })
        | Err(LocalError::StreamLost)
        | Err(LocalError::Closed(_)) => match era {
            Era::Auto => Verdict::HandshakeOnNewProcess,
            _ => Verdict::Fail(format!(
                "the server did not answer server/discover: {}",
                outcome
                    .as_ref()
                    .err()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            )),
        },
        Err(other) => Verdict::Fail(other.to_string()),
    }
}

fn judge_error(e: &ErrorObject, era: Era) -> Verdict {
    match e.code {
        UNSUPPORTED_PROTOCOL_VERSION => {
            let supported = e
                .data
                .as_ref()
                .and_then(|d| d.parse::<Supported>().ok())
                .map(|s| s.supported)
                .unwrap_or_default();
            choose(&supported, era)
        }
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY => match era {
            Era::Handshake => Verdict::Fail(format!("the server answered the probe: {e}")),
            _ => Verdict::Stateless(None),
        },
        _ => match era {
            Era::Auto => Verdict::Handshake(crate::types::LATEST_HANDSHAKE_VERSION.into()),
            _ => Verdict::Fail(format!(
                "the server does not speak {LATEST_VERSION}: server/discover failed with {e}"
            )),
        },
    }
}

/// What a stateless-era server said about itself in its `server/discover` result, in the shape
/// of an `initialize` answer (version 2026-07-28), so the application reads both eras alike.
pub(crate) fn described_server(discover: Option<&RawJson>) -> InitializeResult {
    let described = discover
        .and_then(|raw| raw.parse::<Value>().ok())
        .unwrap_or(Value::Null);
    InitializeResult {
        protocol_version: LATEST_VERSION.into(),
        capabilities: described
            .get("capabilities")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default(),
        server_info: server_info_of(&described)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default(),
        instructions: described
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
        extra: serde_json::Map::new(),
    }
}

/// The server's identity from a result: its `_meta` (`io.modelcontextprotocol/serverInfo`), or
/// `serverInfo` beside the result's other members.
pub fn server_info_of(result: &Value) -> Option<&Value> {
    result
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
        // Some servers put it in the result itself, as `initialize` did.
        .or_else(|| result.get("serverInfo"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(v: Value) -> Outcome {
        Ok(Reply::Result(RawJson::new(&v).unwrap()))
    }

    fn error(code: i64, data: Option<Value>) -> Outcome {
        Ok(Reply::Error(ErrorObject {
            code,
            message: "x".into(),
            data: data.map(|d| RawJson::new(&d).unwrap()),
        }))
    }

    #[test]
    fn a_discover_result_means_modern() {
        let v = judge_probe(
            &result(json!({"supportedVersions": ["2026-07-28"], "capabilities": {}})),
            Era::Auto,
        );
        assert!(matches!(v, Verdict::Stateless(Some(_))));
    }

    #[test]
    fn unsupported_version_follows_the_servers_list() {
        let only_old = error(
            -32022,
            Some(json!({"supported": ["2025-06-18", "2025-03-26"]})),
        );
        assert_eq!(
            judge_probe(&only_old, Era::Auto),
            Verdict::Handshake("2025-06-18".into())
        );
        assert!(matches!(
            judge_probe(&only_old, Era::Stateless),
            Verdict::Fail(_)
        ));
        let unknown = error(-32022, Some(json!({"supported": ["2099-01-01"]})));
        assert!(matches!(judge_probe(&unknown, Era::Auto), Verdict::Fail(_)));
    }

    #[test]
    fn any_other_error_means_the_handshake_whatever_its_code() {
        for code in [-32601, -32602, -32600, -32000, -32603, 1] {
            assert_eq!(
                judge_probe(&error(code, None), Era::Auto),
                Verdict::Handshake("2025-11-25".into()),
                "{code}"
            );
            assert!(matches!(
                judge_probe(&error(code, None), Era::Stateless),
                Verdict::Fail(_)
            ));
        }
    }

    #[test]
    fn recognised_modern_errors_mean_modern() {
        for code in [-32020, -32021] {
            assert_eq!(
                judge_probe(&error(code, None), Era::Auto),
                Verdict::Stateless(None)
            );
        }
    }

    #[test]
    fn the_reason_for_the_era_in_words() {
        let reason = |outcome: &Outcome, era: Era| {
            let verdict = judge_probe(outcome, era);
            EraReason::of(outcome, era, &verdict).map(|r| r.to_string())
        };
        let discovered = result(json!({"supportedVersions": ["2026-07-28"]}));
        let cases = [
            (&discovered, Era::Auto, Some("answered server/discover")),
            (&discovered, Era::Stateless, Some("pinned")),
            (
                &error(-32601, None),
                Era::Auto,
                Some("refused the probe with JSON-RPC error code -32601"),
            ),
            (
                &error(-32602, None),
                Era::Auto,
                Some("refused the probe with JSON-RPC error code -32602"),
            ),
            (
                &error(-32021, None),
                Era::Auto,
                Some("answered server/discover with JSON-RPC error code -32021"),
            ),
            (
                &error(-32022, Some(json!({"supported": ["2025-06-18"]}))),
                Era::Auto,
                Some("supports only handshake-era versions"),
            ),
            (
                &result(json!({"supportedVersions": ["2025-06-18"]})),
                Era::Auto,
                Some("supports only handshake-era versions"),
            ),
            (
                &Err(LocalError::StreamLost),
                Era::Auto,
                Some("did not answer the probe; started again for initialize"),
            ),
            (
                &error(-32022, Some(json!({"supported": ["2099-01-01"]}))),
                Era::Auto,
                None,
            ),
        ];
        for (outcome, era, words) in cases {
            assert_eq!(reason(outcome, era).as_deref(), words, "{outcome:?}");
        }
        assert_eq!(
            EraReason::RefusedHttp { status: 405 }.to_string(),
            "refused the probe with HTTP 405"
        );
    }

    #[test]
    fn silence_or_death_means_the_handshake_on_a_new_process() {
        let timeout = Err(LocalError::Timeout {
            which: crate::rpc::Deadline::Idle,
            despite_progress: false,
            method: "server/discover".into(),
            after: std::time::Duration::from_secs(10),
        });
        assert_eq!(
            judge_probe(&timeout, Era::Auto),
            Verdict::HandshakeOnNewProcess
        );
        assert_eq!(
            judge_probe(&Err(LocalError::StreamLost), Era::Auto),
            Verdict::HandshakeOnNewProcess
        );
        assert!(matches!(
            judge_probe(&timeout, Era::Stateless),
            Verdict::Fail(_)
        ));
    }
}
