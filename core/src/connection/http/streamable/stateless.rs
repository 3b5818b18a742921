//! The stateless era (2026-07-28) over HTTP: the request-metadata headers each POST carries, and
//! how a refused probe is read.
//!
//! Every request carries `MCP-Protocol-Version` (the version its `_meta` names: the body stays
//! authoritative), `Mcp-Method`, and for `tools/call`, `prompts/get` and `resources/read`
//! `Mcp-Name` (the tool or prompt name, or the resource URI). A value that is not safe plain
//! ASCII goes as `=?base64?…?=`.

use std::borrow::Cow;
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::exchange::{Exchange, ExchangeKind, Role};
use super::StreamableHttp;
use crate::connection::http::ExchangeId;
use crate::connection::protocol::call::tool_headers::{header_value, ToolHeaders};
use crate::connection::protocol::client::{ClientProtocol, TransportSignal};
use crate::connection::protocol::vocabulary::events::Event;
use crate::connection::protocol::ChosenEra;
use crate::jsonrpc::{self, Message, Parsed, Request, StrRef};
use crate::rpc::LocalError;

/// What the headers need from a request's params: each member read on its own, so a member of
/// an unexpected type (a caller's `name: 5`) loses only its own header.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Peek<'a> {
    #[serde(rename = "_meta", borrow)]
    meta: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    uri: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    task_id: Option<&'a RawValue>,
}

/// The one member of `_meta` the headers need: the version it names (the key is
/// `params::META_VERSION`, spelled out for serde; a test holds them equal).
#[derive(Deserialize)]
struct MetaPeek<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow)]
    version: Option<&'a RawValue>,
}

/// A member as a string, when it is one (borrowed unless it holds escapes).
fn text(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    raw.and_then(|r| serde_json::from_str::<StrRef<'_>>(r.get()).ok())
        .map(|s| s.0)
}

/// The stateless era's headers for `request`, added to `out`: with `marks`, a `tools/call`'s
/// `Mcp-Param-*` too (its params are read once, its arguments only for a tool with marks).
pub(crate) fn request_headers(
    request: &Request,
    marks: &ToolHeaders,
    out: &mut Vec<(String, String)>,
) {
    let peek: Option<Peek<'_>> = request.params.as_ref().and_then(|p| p.parse().ok());
    let meta: Option<MetaPeek<'_>> = peek
        .as_ref()
        .and_then(|p| p.meta)
        .and_then(|m| serde_json::from_str(m.get()).ok());
    if let Some(v) = text(meta.and_then(|m| m.version)) {
        out.push(("MCP-Protocol-Version".into(), header_value(&v)));
    }
    out.push(("Mcp-Method".into(), header_value(&request.method)));
    let name = match request.method.as_ref() {
        "tools/call" | "prompts/get" => text(peek.as_ref().and_then(|p| p.name)),
        "resources/read" => text(peek.as_ref().and_then(|p| p.uri)),
        // The tasks extension routes by the task.
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            text(peek.as_ref().and_then(|p| p.task_id))
        }
        _ => None,
    };
    if let Some(name) = name {
        out.push(("Mcp-Name".into(), header_value(&name)));
        if request.method == "tools/call" && marks.has(&name) {
            let arguments: Option<Value> = peek
                .as_ref()
                .and_then(|p| p.arguments)
                .and_then(|a| serde_json::from_str(a.get()).ok());
            out.extend(marks.for_call(&name, arguments.as_ref()));
        }
    }
}

/// Whether a probe answered `status`, with a body that is not its answer, means a server of
/// the handshake era (400, 404 and 405; never 401, 403 or a 5xx).
pub(crate) fn refused_by_an_older_server(status: u16) -> bool {
    matches!(status, 400 | 404 | 405)
}

impl StreamableHttp {
    /// Whether the connection has settled on the stateless era.
    pub(super) fn stateless(&self, protocol: &ClientProtocol) -> bool {
        protocol.era() == Some(ChosenEra::Stateless)
    }

    /// Whether request `r` goes as a stateless-era request: every request once that era is
    /// chosen, and the probe before any is.
    pub(super) fn speaks_stateless(&self, protocol: &ClientProtocol, r: &Request) -> bool {
        match protocol.era() {
            Some(ChosenEra::Stateless) => true,
            None => r.method == "server/discover",
            Some(ChosenEra::Handshake) => false,
        }
    }

    /// A notification or answer in the stateless era, where only requests are POSTed: a
    /// cancellation aborts its request's exchange (closing the stream is the cancellation);
    /// anything else is not sent, with a note.
    pub(super) fn stateless_message(&mut self, m: &Message) {
        if let Message::Notification(n) = m {
            if n.method == "notifications/cancelled" {
                #[derive(Deserialize)]
                struct Cancelled {
                    #[serde(rename = "requestId")]
                    request_id: Option<i64>,
                }
                let id = n.params.as_ref().and_then(|p| p.parse::<Cancelled>().ok());
                if let Some(id) = id.and_then(|c| c.request_id) {
                    self.abort_request(id);
                }
                return;
            }
        }
        let what = match m {
            Message::Notification(n) => format!("notification {}", n.method),
            _ => "answer to a server request".into(),
        };
        let note = format!("not sent: the stateless era has no {what} from the client over HTTP");
        self.notes.push_back(Event::http_note(note));
    }

    /// Aborts the exchange that carries request `id`, if one does.
    fn abort_request(&mut self, id: i64) {
        let found: Vec<ExchangeId> = self
            .exchanges
            .iter()
            .filter(
                |(_, e)| matches!(e.kind, ExchangeKind::Post { request: Some(r), .. } if r == id),
            )
            .map(|(x, _)| *x)
            .collect();
        for x in found {
            self.abort(x);
        }
    }

    /// Aborts the exchanges whose request left and then ended here before its answer (a
    /// deadline passed, a cancel): an exchange still waiting for a connection is never sent,
    /// and in the stateless era the closed stream tells the server.
    pub(super) fn withdraw_ended(&mut self, protocol: &mut ClientProtocol) {
        while let Some(id) = protocol.poll_withdrawn() {
            self.abort_request(id);
        }
    }

    /// A stateless request was refused (a 4xx) and its body has ended: a JSON-RPC error for
    /// the request is its answer; otherwise, for the probe, a 400, 404 or 405 means an older
    /// server. Returns `false` when neither: the request ends with the HTTP error.
    pub(super) fn refusal_ended(
        &mut self,
        protocol: &mut ClientProtocol,
        now: Instant,
        ex: &Exchange,
        body: &[u8],
    ) -> bool {
        let ExchangeKind::Post {
            request: Some(id),
            role,
            stateless: true,
            ..
        } = ex.kind
        else {
            return false;
        };
        let status = ex.status.unwrap_or(0);
        if !(400..500).contains(&status) || status == 401 || status == 403 {
            // Authorization, a server failure: never an answer, never a sign of the era.
            return false;
        }
        if let Ok(Parsed::Single(Message::Response(r))) = jsonrpc::parse(body) {
            if r.id.as_ref().and_then(|i| i.as_i64()) == Some(id) && r.outcome.is_err() {
                self.deliver_body(protocol, now, Parsed::Single(Message::Response(r)), body);
                return true;
            }
        }
        if role == Role::Probe && refused_by_an_older_server(status) {
            let err = ex.error(
                ex.status_kind(),
                "the server does not speak 2026-07-28".into(),
                body,
            );
            let error = LocalError::Http(Box::new(err));
            let signal = TransportSignal::ProbeRefused { id, error };
            protocol.handle_transport(now, signal);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Id, RawJson};
    use serde_json::json;

    #[test]
    fn a_member_of_an_unexpected_type_loses_only_its_own_header() {
        let params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            "name": 5, "arguments": {}});
        let r = Request {
            id: Id::Num(1),
            method: "tools/call".into(),
            params: Some(RawJson::new(&params).unwrap()),
        };
        let mut h = Vec::new();
        request_headers(&r, &ToolHeaders::default(), &mut h);
        let names: Vec<&str> = h.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["MCP-Protocol-Version", "Mcp-Method"]);
    }

    #[test]
    fn a_tools_call_carries_its_version_method_and_name() {
        let params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            "name": "get_weather", "arguments": {}});
        let r = Request {
            id: Id::Num(1),
            method: "tools/call".into(),
            params: Some(RawJson::new(&params).unwrap()),
        };
        let mut h = Vec::new();
        request_headers(&r, &ToolHeaders::default(), &mut h);
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            h,
            [
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "get_weather")
            ]
        );
        let params = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
            "uri": "file:///tmp/ü"});
        let r = Request {
            id: Id::Num(2),
            method: "resources/read".into(),
            params: Some(RawJson::new(&params).unwrap()),
        };
        let mut h = Vec::new();
        request_headers(&r, &ToolHeaders::default(), &mut h);
        assert_eq!(h[2].1, "=?base64?ZmlsZTovLy90bXAvw7w=?=");
    }
}

#[cfg(test)]
mod meta_peek_tests {
    #[test]
    fn the_peeked_key_is_the_version_key() {
        let meta = format!(
            r#"{{"{}":"2026-07-28","x":1}}"#,
            crate::connection::protocol::call::params::META_VERSION
        );
        let peek: super::MetaPeek<'_> = serde_json::from_str(&meta).unwrap();
        assert_eq!(super::text(peek.version).as_deref(), Some("2026-07-28"));
    }
}
