//! The JSON-RPC 2.0 message model, as MCP uses it.
//!
//! A received message is parsed once. Its `params`, `result` and `error.data` stay raw JSON
//! ([`RawValue`]) until someone asks for a typed view with [`Request::params_as`] and friends, so a
//! large payload is never parsed twice or copied into an intermediate tree.
//!
//! Two views exist: [`MessageRef`] borrows from the input bytes (no allocation beyond what serde
//! needs for escaped strings), and [`Message`] owns its parts. [`parse`] gives owned messages;
//! [`parse_ref`] gives borrowed ones.
//!
//! Encoding is compact and never contains a newline, so one encoded message is one JSONL line.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The value of the `jsonrpc` member in every message.
pub const VERSION: &str = "2.0";

/// Standard JSON-RPC error codes.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// A request id: an integer or a string. `0` is a valid id; `null` is not a request id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// An integer id. mcpwire always sends these.
    Num(i64),
    /// A string id, as some peers send.
    Str(String),
}

impl Id {
    /// The integer this id stands for, if any: a number, or a string holding a canonical decimal
    /// integer (some peers echo a numeric id back as a string; it still matches its request).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Id::Num(n) => Some(*n),
            Id::Str(s) => parse_canonical_i64(s),
        }
    }
}

/// Parses `s` as a decimal integer written the way a number id would be (no sign but `-`, no
/// leading zeros, no spaces), so that `"007"` does not match request `7`.
fn parse_canonical_i64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Num(n) => write!(f, "{n}"),
            Id::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Num(n)
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::Str(s.to_owned())
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Num(n) => s.serialize_i64(*n),
            Id::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match IdField::deserialize(d)? {
            IdField::Valid(id) => Ok(id),
            _ => Err(de::Error::custom("a request id is an integer or a string")),
        }
    }
}

/// A raw JSON value, owned: text that has been checked to be valid JSON and is parsed into a
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
    /// The method name.
    pub method: String,
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

/// Why some bytes are not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The bytes are not JSON (or not UTF-8).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The JSON is valid but is not an object (nor, at the top level, an array of messages).
    #[error("not a JSON object")]
    NotObject,
    /// A batch array with no elements.
    #[error("empty batch")]
    EmptyBatch,
    /// The `jsonrpc` member is missing or is not `"2.0"`.
    #[error("the jsonrpc member is missing or not \"2.0\"")]
    WrongVersion,
    /// The `id` member is neither an integer nor a string (nor, for an error response, `null`).
    #[error("invalid id: {0}")]
    InvalidId(String),
    /// A member has the wrong type (for example a method that is not a string).
    #[error("invalid member: {0}")]
    InvalidMember(String),
    /// The members do not make exactly one kind of message (for example both `result` and
    /// `error`, a `method` together with `result`, or none of them).
    #[error("ambiguous message shape: {0}")]
    AmbiguousShape(&'static str),
}

/// What one parsed JSON text held: one message, or a batch (an array, allowed by 2025-03-26 when
/// received; mcpwire never sends one) split into its messages, each parsed on its own.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed<M> {
    /// A single message.
    Single(M),
    /// A batch, split into its elements.
    Batch(Vec<Result<M, ParseError>>),
}

/// The id of a message from its first bytes alone (a line too long to keep whole): found when
/// the top-level `"id"` member comes before any `"result"`, `"error"` or `"params"` (as servers
/// write it), read as an integer or a plain string; `None` otherwise.
pub fn sniff_id(text: &[u8]) -> Option<Id> {
    const LOOK: usize = 512;
    let head = &text[..text.len().min(LOOK)];
    let at = memchr::memmem::find(head, b"\"id\"")?;
    let before = &head[..at];
    for key in [&b"\"result\""[..], b"\"error\"", b"\"params\""] {
        if memchr::memmem::find(before, key).is_some() {
            return None;
        }
    }
    let rest = &head[at + 4..];
    let rest = rest
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start();
    if let Some(s) = rest.strip_prefix(b"\"") {
        let end = memchr::memchr2(b'"', b'\\', s)?;
        if s[end] != b'"' {
            return None;
        }
        return std::str::from_utf8(&s[..end])
            .ok()
            .map(|s| Id::Str(s.into()));
    }
    let digits = rest
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'-')
        .count();
    std::str::from_utf8(&rest[..digits])
        .ok()?
        .parse::<i64>()
        .ok()
        .map(Id::Num)
}

/// Parses one JSON text into owned messages.
pub fn parse(bytes: &[u8]) -> Result<Parsed<Message>, ParseError> {
    Ok(match parse_ref(bytes)? {
        Parsed::Single(m) => Parsed::Single(m.to_owned_message()),
        Parsed::Batch(items) => Parsed::Batch(
            items
                .into_iter()
                .map(|r| r.map(|m| m.to_owned_message()))
                .collect(),
        ),
    })
}

/// Parses one JSON text into messages borrowing from `bytes`.
pub fn parse_ref(bytes: &[u8]) -> Result<Parsed<MessageRef<'_>>, ParseError> {
    let input = Input::new(bytes);
    match first_significant(bytes) {
        Some(b'[') => {
            let items: Vec<&RawValue> = input.read().map_err(|e| classify(&e))?;
            if items.is_empty() {
                return Err(ParseError::EmptyBatch);
            }
            Ok(Parsed::Batch(
                items
                    .into_iter()
                    .map(|raw| parse_input(Input::Text(raw.get())))
                    .collect(),
            ))
        }
        _ => parse_input(input).map(Parsed::Single),
    }
}

/// Parses exactly one message (no batch) borrowing from `bytes`.
pub fn parse_one(bytes: &[u8]) -> Result<MessageRef<'_>, ParseError> {
    parse_input(Input::new(bytes))
}

fn parse_input(input: Input<'_>) -> Result<MessageRef<'_>, ParseError> {
    if first_significant(input.bytes()) != Some(b'{') {
        return Err(match input.read::<de::IgnoredAny>() {
            Ok(_) => ParseError::NotObject,
            Err(e) => ParseError::NotJson(e.to_string()),
        });
    }
    let env: Envelope<'_> = input.read().map_err(|e| classify(&e))?;
    env.into_message()
}

/// A JSON text to read: checked UTF-8, or bytes that are not.
///
/// `serde_json` reading bytes checks their UTF-8 as it goes, with the standard library's scalar
/// check, which costs a few nanoseconds per byte of text that is not ASCII: it takes a third of
/// the parse of a typical message. Checking the whole text at once with SIMD, then reading it as
/// `str` (which `serde_json` does not check again), gives the same result faster. Bytes that are
/// not UTF-8 are read as bytes, so that their error is the one `serde_json` gives.
#[derive(Clone, Copy)]
enum Input<'a> {
    Text(&'a str),
    Bytes(&'a [u8]),
}

impl<'a> Input<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => Input::Text(text),
            Err(_) => Input::Bytes(bytes),
        }
    }

    fn bytes(self) -> &'a [u8] {
        match self {
            Input::Text(text) => text.as_bytes(),
            Input::Bytes(bytes) => bytes,
        }
    }

    fn read<T: Deserialize<'a>>(self) -> serde_json::Result<T> {
        match self {
            Input::Text(text) => serde_json::from_str(text),
            Input::Bytes(bytes) => serde_json::from_slice(bytes),
        }
    }
}

fn first_significant(bytes: &[u8]) -> Option<u8> {
    bytes
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

fn classify(e: &serde_json::Error) -> ParseError {
    match e.classify() {
        serde_json::error::Category::Data => ParseError::InvalidMember(e.to_string()),
        _ => ParseError::NotJson(e.to_string()),
    }
}

/// The members of a message object as received, before its shape is judged.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    id: IdField,
    #[serde(default, borrow, deserialize_with = "borrowed_str")]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    error: Option<&'a RawValue>,
}

/// A string member, borrowed from the input unless it holds escapes.
fn borrowed_str<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v.to_owned()))
        }
        fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v))
        }
    }
    d.deserialize_str(V).map(Some)
}

/// A present member is kept raw even when it is `null` (so `"result": null` is a result).
fn present_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Default)]
enum IdField {
    #[default]
    Missing,
    Null,
    Valid(Id),
    Invalid(String),
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IdField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an id")
            }
            fn visit_i64<E>(self, v: i64) -> Result<IdField, E> {
                Ok(IdField::Valid(Id::Num(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<IdField, E> {
                Ok(match i64::try_from(v) {
                    Ok(n) => IdField::Valid(Id::Num(n)),
                    Err(_) => IdField::Invalid(v.to_string()),
                })
            }
            fn visit_f64<E>(self, v: f64) -> Result<IdField, E> {
                Ok(IdField::Invalid(v.to_string()))
            }
            fn visit_str<E>(self, v: &str) -> Result<IdField, E> {
                Ok(IdField::Valid(Id::Str(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<IdField, E> {
                Ok(IdField::Valid(Id::Str(v)))
            }
            fn visit_bool<E>(self, v: bool) -> Result<IdField, E> {
                Ok(IdField::Invalid(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_none<E>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<IdField, D::Error> {
                d.deserialize_any(V)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid("an array".into()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid("an object".into()))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct ErrorRef<'a> {
    code: i64,
    #[serde(borrow)]
    message: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    data: Option<&'a RawValue>,
}

impl<'a> Envelope<'a> {
    fn into_message(self) -> Result<MessageRef<'a>, ParseError> {
        if self.jsonrpc.as_deref() != Some(VERSION) {
            return Err(ParseError::WrongVersion);
        }
        let (id, id_was_null) = match self.id {
            IdField::Invalid(what) => return Err(ParseError::InvalidId(what)),
            IdField::Valid(id) => (Some(id), false),
            IdField::Null => (None, true),
            IdField::Missing => (None, false),
        };
        match (self.method, self.result, self.error) {
            (Some(method), None, None) => match id {
                Some(id) => Ok(MessageRef::Request {
                    id,
                    method,
                    params: self.params,
                }),
                None if id_was_null => Err(ParseError::InvalidId("null".into())),
                None => Ok(MessageRef::Notification {
                    method,
                    params: self.params,
                }),
            },
            (None, Some(result), None) => match id {
                Some(id) => Ok(MessageRef::Result { id, result }),
                None => Err(ParseError::InvalidId(
                    "a result response needs an id".into(),
                )),
            },
            (None, None, Some(error)) => {
                let e: ErrorRef<'a> = serde_json::from_str(error.get())
                    .map_err(|e| ParseError::InvalidMember(format!("error: {e}")))?;
                Ok(MessageRef::Error {
                    id,
                    code: e.code,
                    message: e.message,
                    data: e.data,
                })
            }
            (None, Some(_), Some(_)) => Err(ParseError::AmbiguousShape("both result and error")),
            (Some(_), _, _) => Err(ParseError::AmbiguousShape(
                "a method together with result or error",
            )),
            (None, None, None) => Err(ParseError::AmbiguousShape(
                "none of method, result or error",
            )),
        }
    }
}

impl MessageRef<'_> {
    /// Copies the borrowed parts into an owned [`Message`].
    pub fn to_owned_message(&self) -> Message {
        match self {
            MessageRef::Request { id, method, params } => Message::Request(Request {
                id: id.clone(),
                method: method.to_string(),
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
    pub fn request(id: impl Into<Id>, method: impl Into<String>, params: Option<RawJson>) -> Self {
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

    /// Appends the compact JSON encoding of this message to `out`. The encoding never contains a
    /// newline or carriage return byte, so it is safe as one JSONL line.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let start = out.len();
        // Writing to a Vec cannot fail, and every part is valid JSON (raw values were validated
        // when they were made), so serialization cannot fail either.
        serde_json::to_writer(&mut *out, self).expect("a message always serializes");
        strip_raw_newlines(out, start);
    }

    /// The compact JSON encoding of this message.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
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
