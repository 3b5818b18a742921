//! Parsing: bytes in, a message out (owned or borrowed), each malformed input a typed
//! [`ParseError`].

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::id::{Id, IdField};
use super::message::{Message, MessageRef, VERSION};

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
    if digits == rest.len() {
        // The number runs to the end of what was looked at: it may go on past it.
        return None;
    }
    std::str::from_utf8(&rest[..digits])
        .ok()?
        .parse::<i64>()
        .ok()
        .map(Id::Num)
}

/// Whether a message's first bytes alone (a line too long to keep whole) show a request or a
/// notification: a `"method"` member among its first bytes. Such a message answered nothing:
/// it must not end a request of ours. (A response whose result holds the text `"method"` is
/// taken for one too: its request then ends at its own deadline, never another's.)
pub fn sniff_method(text: &[u8]) -> bool {
    const LOOK: usize = 512;
    memchr::memmem::find(&text[..text.len().min(LOOK)], b"\"method\"").is_some()
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
    StrRef::deserialize(d).map(|s| Some(s.0))
}

/// A string read without a copy where the input allows it (no escapes in it, read from text
/// that outlives the value): for keys and tags compared and dropped.
pub(crate) struct StrRef<'de>(pub(crate) Cow<'de, str>);

impl<'de: 'a, 'a> Deserialize<'de> for StrRef<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = StrRef<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(StrRef(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(StrRef(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(StrRef(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A present member is kept raw even when it is `null` (so `"result": null` is a result).
fn present_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
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
