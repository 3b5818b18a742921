//! What went over the wire between the client and a scripted server, in order, both ways.

use std::fmt;

use serde_json::Value;

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// From the client to the server.
    ToServer,
    /// From the server to the client.
    ToClient,
}

/// One message on the wire, as it went.
#[derive(Debug, Clone, PartialEq)]
pub struct WireMessage {
    /// Which way it went.
    pub way: Way,
    /// The JSON-RPC message, as parsed.
    pub message: Value,
}

impl WireMessage {
    /// The method of a request or notification; `None` for a response.
    pub fn method(&self) -> Option<&str> {
        self.message.get("method").and_then(Value::as_str)
    }

    /// The id of a request or response; `None` for a notification.
    pub fn id(&self) -> Option<&Value> {
        self.message.get("id")
    }

    /// The params of a request or notification.
    pub fn params(&self) -> Option<&Value> {
        self.message.get("params")
    }

    /// The result of a success response.
    pub fn result(&self) -> Option<&Value> {
        self.message.get("result")
    }

    /// The error of an error response.
    pub fn error(&self) -> Option<&Value> {
        self.message.get("error")
    }

    /// Whether it is a request (a method and an id).
    pub fn is_request(&self) -> bool {
        self.method().is_some() && self.id().is_some()
    }
}

impl fmt::Display for WireMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let arrow = match self.way {
            Way::ToServer => "client → server",
            Way::ToClient => "server → client",
        };
        let id = self.id().map(|id| format!(" #{id}")).unwrap_or_default();
        match (self.method(), self.result(), self.error()) {
            (Some(method), _, _) => {
                let params = self.params().map(|p| format!(" {p}")).unwrap_or_default();
                write!(f, "{arrow}{id} {method}{params}")
            }
            (None, Some(result), _) => write!(f, "{arrow}{id} result {result}"),
            (None, None, Some(error)) => write!(f, "{arrow}{id} error {error}"),
            (None, None, None) => write!(f, "{arrow}{id} {}", self.message),
        }
    }
}

/// Every message between the client and a scripted server, in the order the server read or
/// wrote it. Its `Display` is one line per message (`client → server #1 tools/call {…}`), for a
/// failing test's output: `assert!(…, "{transcript}")`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// The messages, in order.
    pub messages: Vec<WireMessage>,
}

impl Transcript {
    /// The methods of the requests and notifications that went `way`, in order.
    pub fn methods(&self, way: Way) -> Vec<&str> {
        let going = self.messages.iter().filter(|m| m.way == way);
        going.filter_map(WireMessage::method).collect()
    }

    /// The requests and notifications named `method`, both ways, in order.
    pub fn named<'a>(&'a self, method: &'a str) -> impl Iterator<Item = &'a WireMessage> + 'a {
        self.messages
            .iter()
            .filter(move |m| m.method() == Some(method))
    }

    /// The response to the request with `id` that went `way` (the response went the other way).
    pub fn response_to(&self, way: Way, id: &Value) -> Option<&WireMessage> {
        self.messages
            .iter()
            .find(|m| m.way != way && m.method().is_none() && m.id() == Some(id))
    }

    /// How many messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether nothing went over the wire.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

impl fmt::Display for Transcript {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.messages {
            writeln!(f, "{m}")?;
        }
        Ok(())
    }
}
