//! The messages: requests, notifications and responses, owned ([`Message`]) or borrowed from
//! the input bytes ([`MessageRef`]), with their raw JSON members and compact encoding.

use std::borrow::Cow;
use std::fmt;

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::id::Id;

/// The value of the `jsonrpc` member in every message.
pub const VERSION: &str = "2.0";

/// typed view only on demand. Two values are equal when their texts are byte for byte equal.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// Serializes `value` compactly.
    pub fn new<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Self> {
        serde_json::value::to_raw_value(value).map(RawJson)
    }

    /// Checks that `text` is valid JSON and keeps it as it is.
    pub fn from_string(text: String) -> serde_json::Result<Self> {
        RawValue::from_string(text).map(RawJson)
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The underlying [`RawValue`].
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// The underlying boxed [`RawValue`].
    pub fn into_raw(self) -> Box<RawValue> {
        self.0
    }

    /// A typed view, parsed now.
    pub fn parse<'a, T: Deserialize<'a>>(&'a self) -> serde_json::Result<T> {
        serde_json::from_str(self.0.get())
    }
}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        RawJson(raw)
    }
}

impl From<&RawValue> for RawJson {
    fn from(raw: &RawValue) -> Self {
        RawJson(raw.to_owned())
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawJson {}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

/// A JSON-RPC error object, as carried by an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Additional information, kept raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<RawJson>,
}

impl ErrorObject {
    /// An error object without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// A typed view of `data`, parsed on demand.
    pub fn data_as<'a, T: Deserialize<'a>>(&'a self) -> Option<serde_json::Result<T>> {
        self.data.as_ref().map(RawJson::parse)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// A request: a method call that expects a response with the same id.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id.
    pub id: Id,
    /// The method name (borrowed when it is one of ours, so sending costs no copy).
    pub method: Cow<'static, str>,
    /// The parameters, raw.
    pub params: Option<RawJson>,
}

/// A notification: a method call without an id, never answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The parameters, raw.
    pub params: Option<RawJson>,
}

/// A response: the outcome of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request this answers. `None` only for an error response whose id was missing
    /// or `null` (a peer that could not read the request's id).
    pub id: Option<Id>,
    /// The result, raw, or the error.
    pub outcome: Result<RawJson, ErrorObject>,
}

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response.
    Response(Response),
}

/// A message borrowing from the bytes it was parsed from.
#[derive(Debug, Clone)]
pub enum MessageRef<'a> {
    /// A request.
    Request {
        /// The request id.
        id: Id,
        /// The method name.
        method: Cow<'a, str>,
        /// The parameters, raw.
        params: Option<&'a RawValue>,
    },
    /// A notification.
    Notification {
        /// The method name.
        method: Cow<'a, str>,
        /// The parameters, raw.
        params: Option<&'a RawValue>,
    },
    /// A response with a result.
    Result {
        /// The id of the request this answers.
        id: Id,
        /// The result, raw.
        result: &'a RawValue,
    },
    /// A response with an error.
    Error {
        /// The id of the request this answers, if the peer gave one.
        id: Option<Id>,
        /// The error code.
        code: i64,
        /// The error message.
        message: Cow<'a, str>,
        /// The error data, raw.
        data: Option<&'a RawValue>,
    },
}

impl MessageRef<'_> {
    /// Copies the borrowed parts into an owned [`Message`].
    pub fn to_owned_message(&self) -> Message {
        match self {
            MessageRef::Request { id, method, params } => Message::Request(Request {
                id: id.clone(),
                method: Cow::Owned(method.to_string()),
                params: params.map(RawJson::from),
            }),
            MessageRef::Notification { method, params } => Message::Notification(Notification {
                method: method.to_string(),
                params: params.map(RawJson::from),
            }),
            MessageRef::Result { id, result } => Message::Response(Response {
                id: Some(id.clone()),
                outcome: Ok(RawJson::from(*result)),
            }),
            MessageRef::Error {
                id,
                code,
                message,
                data,
            } => Message::Response(Response {
                id: id.clone(),
                outcome: Err(ErrorObject {
                    code: *code,
                    message: message.to_string(),
                    data: data.map(RawJson::from),
                }),
            }),
        }
    }

    /// The method name, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            MessageRef::Request { method, .. } | MessageRef::Notification { method, .. } => {
                Some(method)
            }
            _ => None,
        }
    }
}

impl Message {
    /// A request (`None` params leave the member out).
    pub fn request(
        id: impl Into<Id>,
        method: impl Into<Cow<'static, str>>,
        params: Option<RawJson>,
    ) -> Self {
        Message::Request(Request {
            id: id.into(),
            method: method.into(),
            params,
        })
    }

    /// A notification.
    pub fn notification(method: impl Into<String>, params: Option<RawJson>) -> Self {
        Message::Notification(Notification {
            method: method.into(),
            params,
        })
    }

    /// A result response.
    pub fn result(id: Id, result: RawJson) -> Self {
        Message::Response(Response {
            id: Some(id),
            outcome: Ok(result),
        })
    }

    /// An error response.
    pub fn error(id: Option<Id>, error: ErrorObject) -> Self {
        Message::Response(Response {
            id,
            outcome: Err(error),
        })
    }

    /// The method name, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }

    /// The integer id of a request (the ids mcpwire sends); `None` for anything else.
    pub fn request_id(&self) -> Option<i64> {
        match self {
            Message::Request(r) => r.id.as_i64(),
            _ => None,
        }
    }

    /// Appends the compact JSON encoding of this message to `out`. The encoding never contains a
    /// newline or carriage return byte, so it is safe as one JSONL line.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let start = out.len();
        // Writing to a Vec cannot fail, and every part is valid JSON (raw values were validated
        // when they were made), so serialization cannot fail either.
        serde_json::to_writer(&mut *out, self).expect("a message always serializes");
        strip_raw_newlines(out, start);
    }

    /// The compact JSON encoding of this message, in a buffer sized for it at once (a large
    /// argument is not copied from buffer to doubled buffer on its way, nor left in one twice
    /// its size).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len_hint());
        self.encode_into(&mut out);
        out
    }

    /// About the length of the encoding: its raw parts' own lengths (kept verbatim) and room
    /// for the envelope, so most messages fit in one allocation.
    fn encoded_len_hint(&self) -> usize {
        let raw = |r: Option<&RawJson>| r.map_or(0, |r| r.get().len());
        let (name, raw_len) = match self {
            Message::Request(r) => (r.method.len(), raw(r.params.as_ref())),
            Message::Notification(n) => (n.method.len(), raw(n.params.as_ref())),
            Message::Response(r) => match &r.outcome {
                Ok(result) => (0, result.get().len()),
                Err(e) => (e.message.len(), raw(e.data.as_ref())),
            },
        };
        // `{"jsonrpc":"2.0","id":…,"method":"…","params":…}` and a few escapes.
        name + raw_len + 96
    }
}

/// Removes CR and LF bytes that raw values written verbatim may contain (for example a
/// pretty-printed params value). In valid JSON these bytes can only be whitespace between tokens,
/// since strings must escape them, so removing them keeps the meaning.
fn strip_raw_newlines(out: &mut Vec<u8>, start: usize) {
    if memchr::memchr2(b'\n', b'\r', &out[start..]).is_none() {
        return;
    }
    let mut w = start;
    for r in start..out.len() {
        let b = out[r];
        if b != b'\n' && b != b'\r' {
            out[w] = b;
            w += 1;
        }
    }
    out.truncate(w);
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", VERSION)?;
        match self {
            Message::Request(r) => {
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("method", &r.method)?;
                if let Some(p) = &r.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Message::Notification(n) => {
                m.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Message::Response(r) => {
                match &r.id {
                    Some(id) => m.serialize_entry("id", id)?,
                    None => m.serialize_entry("id", &())?,
                }
                match &r.outcome {
                    Ok(result) => m.serialize_entry("result", result)?,
                    Err(e) => m.serialize_entry("error", e)?,
                }
            }
        }
        m.end()
    }
}

impl Request {
    /// A typed view of the params, parsed on demand (absent params read as JSON `null`).
    pub fn params_as<'a, T: Deserialize<'a>>(&'a self) -> serde_json::Result<T> {
        serde_json::from_str(self.params.as_ref().map_or("null", RawJson::get))
    }
}

impl Notification {
    /// A typed view of the params, parsed on demand (absent params read as JSON `null`).
    pub fn params_as<'a, T: Deserialize<'a>>(&'a self) -> serde_json::Result<T> {
        serde_json::from_str(self.params.as_ref().map_or("null", RawJson::get))
    }
}

impl Response {
    /// A typed view of the result, parsed on demand; `None` for an error response.
    pub fn result_as<'a, T: Deserialize<'a>>(&'a self) -> Option<serde_json::Result<T>> {
        self.outcome.as_ref().ok().map(RawJson::parse)
    }
}
