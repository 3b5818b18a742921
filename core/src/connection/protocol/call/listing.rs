//! A list call over all its pages: the items gathered, the next cursor (an empty string is a
//! cursor), the caching hints of the pages. A server that sends a cursor it sent before, or
//! whose list runs to [`MAX_PAGES`] pages, has its list ended there: the items of the pages
//! read, and the reason ([`PageStep::Cut`]).

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::params::raw;
use crate::connection::protocol::vocabulary::events::{CallError, CallOptions};
use crate::jsonrpc::RawJson;

/// How many pages one list call reads at most: a list that goes on past them is ended there,
/// with a diagnostic.
pub const MAX_PAGES: usize = 10_000;

/// A list call in progress: the pages gathered so far.
#[derive(Debug)]
pub(crate) struct Listing {
    pub(crate) method: &'static str,
    key: &'static str,
    items: Vec<Box<RawValue>>,
    pages: usize,
    /// A hash of each cursor sent so far (its length too): a cursor sent again would repeat
    /// pages for ever. Hashes, not the cursors, so that the memory stays small whatever the
    /// server's cursors weigh (at most [`MAX_PAGES`] of them).
    cursors: HashSet<(usize, u64)>,
    /// The smallest `ttlMs` of the pages, and whether any page was private.
    ttl_ms: Option<u64>,
    private: bool,
    pub(crate) opts: CallOptions,
}

/// What one page leads to.
pub(crate) enum PageStep {
    /// The list is complete: `{key: [...]}` with the caching hints.
    Done(RawJson),
    /// The list is ended before the server said it was complete, for the reason given: the
    /// items of the pages read, as [`PageStep::Done`] has them.
    Cut(RawJson, String),
    /// Another page is due: the params of its request.
    Next(Map<String, Value>),
}

impl Listing {
    /// A list of `method`, whose items are under `key`.
    pub(crate) fn new(method: &'static str, key: &'static str, opts: CallOptions) -> Self {
        Listing {
            method,
            key,
            items: Vec::new(),
            pages: 0,
            cursors: HashSet::new(),
            ttl_ms: None,
            private: false,
            opts,
        }
    }

    /// Takes one page. `stateless`: the era's caching rules apply (a missing `ttlMs` is 0).
    pub(crate) fn take_page(
        &mut self,
        page: &RawJson,
        stateless: bool,
    ) -> Result<PageStep, CallError> {
        let parsed = parse_page(page.get(), self.key)
            .map_err(|e| CallError::InvalidResult(format!("{}: {e}", self.method)))?;
        let items = parsed.items.ok_or_else(|| {
            CallError::InvalidResult(format!("{} result has no {}", self.method, self.key))
        })?;
        // Caching hints: a missing or negative ttl is 0; the list is as fresh as its stalest
        // page, and private if any page is.
        if stateless || parsed.ttl_ms.is_some() {
            let ttl = parsed.ttl_ms.unwrap_or(0).max(0) as u64;
            self.ttl_ms = Some(self.ttl_ms.map_or(ttl, |t| t.min(ttl)));
        }
        self.private |= parsed.cache_scope.as_deref() == Some("private");
        if self.pages == 0 && parsed.next_cursor.is_none() {
            // The whole list in one page (the usual case): its items as they came, not taken
            // apart and put together again.
            if !items.get().starts_with('[') {
                let e = format!("{}: {} is not an array", self.method, self.key);
                return Err(CallError::InvalidResult(e));
            }
            self.pages = 1;
            return Ok(PageStep::Done(self.whole_of(items)));
        }
        let items: Vec<Box<RawValue>> = serde_json::from_str(items.get())
            .map_err(|e| CallError::InvalidResult(format!("{}: {e}", self.method)))?;
        self.items.extend(items);
        self.pages += 1;
        let Some(cursor) = parsed.next_cursor else {
            return Ok(PageStep::Done(self.whole()));
        };
        if !self.cursors.insert(cursor_hash(&cursor)) {
            let reason = format!(
                "page {} gave a cursor an earlier page gave: its pages would repeat for ever",
                self.pages
            );
            return Ok(PageStep::Cut(self.whole(), reason));
        }
        if self.pages >= MAX_PAGES {
            let reason = format!("the list did not end after {MAX_PAGES} pages");
            return Ok(PageStep::Cut(self.whole(), reason));
        }
        let mut p = Map::new();
        p.insert("cursor".into(), Value::String(cursor));
        Ok(PageStep::Next(p))
    }

    /// How many pages were read.
    pub(crate) fn pages(&self) -> usize {
        self.pages
    }

    /// The list of the items gathered, with the pages' caching hints.
    fn whole(&mut self) -> RawJson {
        let items = std::mem::take(&mut self.items);
        self.whole_of(&items)
    }

    /// The list of `items` (an array, or the items themselves), with the pages' caching hints.
    fn whole_of<I: serde::Serialize + ?Sized>(&self, items: &I) -> RawJson {
        let all = Whole {
            key: self.key,
            items,
            ttl_ms: self.ttl_ms,
            private: self.private,
        };
        raw(&all)
    }
}

/// A cursor's length and hash (std's hasher made with `new`: fixed keys, no randomness).
fn cursor_hash(cursor: &str) -> (usize, u64) {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    cursor.hash(&mut h);
    (cursor.len(), h.finish())
}

/// The parts of one list page a listing needs; the items stay raw.
struct Page<'a> {
    items: Option<&'a RawValue>,
    next_cursor: Option<String>,
    ttl_ms: Option<i64>,
    cache_scope: Option<String>,
}

/// Reads one page of a list result whose items are under `key`.
fn parse_page<'a>(text: &'a str, key: &str) -> serde_json::Result<Page<'a>> {
    struct V<'k>(&'k str);
    impl<'de> serde::de::Visitor<'de> for V<'_> {
        type Value = Page<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list result object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Page<'de>, A::Error> {
            let mut page = Page {
                items: None,
                next_cursor: None,
                ttl_ms: None,
                cache_scope: None,
            };
            while let Some(k) = m.next_key::<Cow<'de, str>>()? {
                match &*k {
                    k if k == self.0 => page.items = Some(m.next_value()?),
                    "nextCursor" => page.next_cursor = m.next_value()?,
                    "ttlMs" => page.ttl_ms = m.next_value::<Option<f64>>()?.map(|t| t as i64),
                    "cacheScope" => page.cache_scope = m.next_value()?,
                    _ => {
                        m.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
            }
            Ok(page)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let page = serde::Deserializer::deserialize_map(&mut de, V(key))?;
    de.end()?;
    Ok(page)
}

/// The whole list: every page's items as the server sent them (each kept verbatim), and the
/// caching hints.
struct Whole<'a, I: ?Sized> {
    key: &'static str,
    items: &'a I,
    ttl_ms: Option<u64>,
    private: bool,
}

impl<I: serde::Serialize + ?Sized> serde::Serialize for Whole<'_, I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry(self.key, self.items)?;
        if let Some(ttl) = self.ttl_ms {
            m.serialize_entry("ttlMs", &ttl)?;
            let scope = if self.private { "private" } else { "public" };
            m.serialize_entry("cacheScope", scope)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(v: Value) -> RawJson {
        RawJson::new(&v).unwrap()
    }

    fn done(step: PageStep) -> Value {
        match step {
            PageStep::Done(all) => serde_json::from_str(all.get()).unwrap(),
            _ => panic!("the list is not complete"),
        }
    }

    #[test]
    fn a_list_of_one_page_is_its_items_as_they_came_with_its_hints() {
        let text = r#"{"tools": [ {"name":"a", "x": "\u00e9"} ,{"name":"b"}], "ttlMs": 5,
                       "cacheScope": "private", "other": 1}"#;
        let one = RawJson::from_string(text.to_owned()).unwrap();
        let mut listing = Listing::new("tools/list", "tools", CallOptions::default());
        let step = listing.take_page(&one, false).unwrap();
        assert_eq!(listing.pages(), 1);
        let PageStep::Done(all) = step else {
            panic!("the list is not complete")
        };
        // The items' text is the server's, escapes and all.
        assert!(
            all.get().contains(r#"{"name":"a", "x": "\u00e9"}"#),
            "{}",
            all.get()
        );
        let all: Value = serde_json::from_str(all.get()).unwrap();
        assert_eq!(
            all,
            json!({"tools": [{"name": "a", "x": "é"}, {"name": "b"}], "ttlMs": 5,
                   "cacheScope": "private"})
        );
        // The same items over two pages make the same list.
        let mut two = Listing::new("tools/list", "tools", CallOptions::default());
        let first = page(
            json!({"tools": [{"name": "a", "x": "é"}], "nextCursor": "c",
                                "ttlMs": 5, "cacheScope": "private"}),
        );
        assert!(matches!(
            two.take_page(&first, false),
            Ok(PageStep::Next(_))
        ));
        let second = page(json!({"tools": [{"name": "b"}], "ttlMs": 9}));
        assert_eq!(done(two.take_page(&second, false).unwrap()), all);
    }

    #[test]
    fn a_page_whose_items_are_no_array_or_missing_is_an_invalid_result() {
        for (text, says) in [
            (
                json!({"tools": {"name": "a"}}),
                "tools/list: tools is not an array",
            ),
            (
                json!({"tools": 3, "nextCursor": "c"}),
                "tools/list: invalid type",
            ),
            (json!({"prompts": []}), "tools/list result has no tools"),
        ] {
            let mut listing = Listing::new("tools/list", "tools", CallOptions::default());
            let Err(CallError::InvalidResult(e)) = listing.take_page(&page(text), false) else {
                panic!("not refused")
            };
            assert!(e.starts_with(says), "{e}");
        }
    }

    #[test]
    fn a_stateless_page_without_a_ttl_is_stale_at_once() {
        let mut listing = Listing::new("tools/list", "tools", CallOptions::default());
        let all = done(
            listing
                .take_page(&page(json!({"tools": []})), true)
                .unwrap(),
        );
        assert_eq!(
            all,
            json!({"tools": [], "ttlMs": 0, "cacheScope": "public"})
        );
    }
}
