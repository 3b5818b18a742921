//! The request id: an integer or a string, read the way every message reads it.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

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
#[derive(Default)]
pub(super) enum IdField {
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
