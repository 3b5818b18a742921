//! URLs as the core reads them (RFC 3986 §5.2): the HTTP+SSE `endpoint` event's URL, resolved
//! against the stream's URL and accepted only on the same origin (scheme, host and port); a
//! redirect's `Location`, resolved for an error's words.

/// A URL split into what resolution needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parts<'a> {
    scheme: &'a str,
    authority: &'a str,
    path: &'a str,
    /// From `?` on (with the `?`), or empty.
    query: &'a str,
}

fn split(url: &str) -> Option<Parts<'_>> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return None;
    }
    let rest = rest.split('#').next().unwrap_or("");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(end);
    let q = rest.find('?').unwrap_or(rest.len());
    let (path, query) = rest.split_at(q);
    Some(Parts {
        scheme,
        authority,
        path,
        query,
    })
}

/// Removes `.` and `..` segments (RFC 3986 §5.2.4).
fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len() - 1;
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if path.starts_with('/') && !joined.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `reference` resolved against `base` (an absolute `http(s)://` URL); `None` when either
/// cannot be read.
pub(crate) fn resolve(base: &str, reference: &str) -> Option<String> {
    let reference = reference.trim();
    if reference.contains("://") {
        let r = split(reference)?;
        let path = remove_dots(if r.path.is_empty() { "/" } else { r.path });
        return Some(format!("{}://{}{path}{}", r.scheme, r.authority, r.query));
    }
    let b = split(base)?;
    if let Some(rest) = reference.strip_prefix("//") {
        return resolve(base, &format!("{}://{rest}", b.scheme));
    }
    let (path_part, query) = match reference.find('?') {
        Some(i) => reference.split_at(i),
        None => (reference, ""),
    };
    let path_part = path_part.split('#').next().unwrap_or("");
    let query = query.split('#').next().unwrap_or("");
    let path = if path_part.is_empty() {
        b.path.to_owned()
    } else if path_part.starts_with('/') {
        path_part.to_owned()
    } else {
        let dir = match b.path.rfind('/') {
            Some(i) => &b.path[..=i],
            None => "/",
        };
        format!("{dir}{path_part}")
    };
    let query = if path_part.is_empty() && query.is_empty() {
        b.query
    } else {
        query
    };
    let path = remove_dots(if path.is_empty() { "/" } else { &path });
    Some(format!("{}://{}{path}{query}", b.scheme, b.authority))
}

/// `reference` (a redirect's `Location`) resolved against `base`, as RFC 3986 section 5.2 reads it: an
/// absolute URL as it is; `//host/…` with the base's scheme; `/path`, `?query`, `#fragment` and
/// relative paths against the base, dot segments removed. Unlike [`resolve`], the fragment
/// stays and any `scheme:` is absolute: it is shown to a person, not fetched.
pub(crate) fn resolve_location(base: &str, reference: &str) -> String {
    let has_scheme = reference.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if has_scheme {
        return reference.to_owned();
    }
    let Some((scheme, rest)) = base.split_once("://") else {
        return reference.to_owned();
    };
    if let Some(network) = reference.strip_prefix("//") {
        return format!("{scheme}://{network}");
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let tail = tail.split('#').next().unwrap_or("");
    let path = tail.split('?').next().unwrap_or("");
    let origin = format!("{scheme}://{authority}");
    if reference.is_empty() {
        return format!("{origin}{tail}");
    }
    if reference.starts_with('#') {
        return format!("{origin}{tail}{reference}");
    }
    if reference.starts_with('?') {
        return format!("{origin}{path}{reference}");
    }
    let (ref_path, ref_rest) = match reference.find(['?', '#']) {
        Some(i) => reference.split_at(i),
        None => (reference, ""),
    };
    let merged = if ref_path.starts_with('/') {
        ref_path.to_owned()
    } else {
        let dir = match path.rfind('/') {
            Some(i) => &path[..=i],
            None => "/",
        };
        format!("{dir}{ref_path}")
    };
    format!("{origin}{}{ref_rest}", remove_dots(&merged))
}

/// Scheme, host and port, lower-cased, with the scheme's default port made explicit.
fn origin(url: &str) -> Option<(String, String)> {
    let p = split(url)?;
    let scheme = p.scheme.to_ascii_lowercase();
    let host_port = p
        .authority
        .rsplit('@')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let has_port = match host_port.rfind(':') {
        Some(i) => !host_port[i..].contains(']'),
        None => false,
    };
    let host_port = if has_port {
        host_port
    } else {
        let port = match scheme.as_str() {
            "https" => 443,
            _ => 80,
        };
        format!("{host_port}:{port}")
    };
    Some((scheme, host_port))
}

/// Whether `a` and `b` have the same origin.
pub(crate) fn same_origin(a: &str, b: &str) -> bool {
    matches!((origin(a), origin(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_as_rfc_3986_says() {
        let base = "http://127.0.0.1:3001/sse?x=1";
        let cases = [
            (
                "/message?sessionId=abc",
                "http://127.0.0.1:3001/message?sessionId=abc",
            ),
            (
                "message?sessionId=abc",
                "http://127.0.0.1:3001/message?sessionId=abc",
            ),
            ("?sessionId=abc", "http://127.0.0.1:3001/sse?sessionId=abc"),
            ("./a/../b", "http://127.0.0.1:3001/b"),
            ("http://127.0.0.1:3001/m", "http://127.0.0.1:3001/m"),
            ("//other:9/m", "http://other:9/m"),
        ];
        for (reference, want) in cases {
            assert_eq!(
                resolve(base, reference).as_deref(),
                Some(want),
                "{reference}"
            );
        }
        assert_eq!(
            resolve("http://h/api/mcp/sse", "messages/").as_deref(),
            Some("http://h/api/mcp/messages/")
        );
        assert_eq!(resolve("not a url", "/m"), None);
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert!(same_origin("http://h:80/a", "http://H/b"));
        assert!(same_origin("https://h/a", "https://h:443/b?q"));
        assert!(!same_origin("http://h/a", "https://h/a"));
        assert!(!same_origin("http://h:1/a", "http://h:2/a"));
        assert!(!same_origin("http://h/a", "http://evil/a"));
        assert!(same_origin("http://[::1]:8/a", "http://[::1]:8/b"));
        assert!(!same_origin("http://[::1]/a", "http://[::1]:8/b"));
    }
}
