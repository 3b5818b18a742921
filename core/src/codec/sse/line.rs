//! One line of an event stream: which field it holds, and a `retry` value read as the standard
//! says (ASCII digits only).

/// The fields the decoder keeps; any other field name is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Data,
    Event,
    Id,
    Retry,
}

impl Field {
    fn from_name(name: &[u8]) -> Option<Self> {
        match name {
            b"data" => Some(Self::Data),
            b"event" => Some(Self::Event),
            b"id" => Some(Self::Id),
            b"retry" => Some(Self::Retry),
            _ => None,
        }
    }
}

/// What the first bytes of a line say about it.
pub(super) enum LineKind {
    /// A comment, or a field the decoder ignores: its bytes are not needed.
    Ignored,
    /// One of the fields the decoder keeps.
    Field(Field, usize),
    /// Too short to tell yet (at most five bytes, no colon).
    Undecided,
}

/// Sorts a line (or the start of one) by its field name. The longest name kept is five bytes, so
/// the first six bytes decide: a colon among them ends the name; none means a longer name.
#[inline]
pub(super) fn line_kind(line: &[u8], complete: bool) -> LineKind {
    if line.starts_with(b"data:") {
        let value = if line.get(5) == Some(&b' ') { 6 } else { 5 };
        return LineKind::Field(Field::Data, value);
    }
    if line.first() == Some(&b':') {
        return LineKind::Ignored;
    }
    let head = &line[..line.len().min(6)];
    let (name, value) = match head.iter().position(|&b| b == b':') {
        Some(colon) => {
            let mut value = colon + 1;
            if line.get(value) == Some(&b' ') {
                value += 1;
            }
            (&line[..colon], value)
        }
        None if line.len() > 5 => return LineKind::Ignored,
        None if complete => (line, line.len()),
        None => return LineKind::Undecided,
    };
    match Field::from_name(name) {
        Some(field) => LineKind::Field(field, value),
        None => LineKind::Ignored,
    }
}

/// A `retry` value: ASCII digits only, base ten, fitting in a `u64`. An empty value has no
/// integer to interpret and is ignored like any other invalid value.
pub(super) fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}
