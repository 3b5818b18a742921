//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1), read in full: several header lines,
//! several challenges per line, `token68` or auth-params, quoted-strings with escapes.
//!
//! The grammar's difficulty is that one comma separates both challenges and the parameters of
//! one challenge. An element of the list is a parameter when it reads `token BWS "=" BWS value`
//! (a value that does not start with `=`, so `Negotiate abc==` stays a token68); any other
//! element starting with a token opens a new challenge. Header lines are read as if joined by
//! commas (RFC 9110 §5.3), so a line that starts with a parameter continues the last challenge.
//!
//! Malformed input yields what can be read: an element that fits no rule is skipped up to the
//! next comma outside a quoted-string. Every byte is looked at a bounded number of times, so the
//! work is linear in the input, and nothing panics.

use crate::header::is_token_byte;

/// One challenge: its scheme and either a `token68` or its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Challenge {
    /// The auth-scheme as sent (`Bearer`); compare it case-insensitively.
    pub scheme: String,
    /// The auth-params in order, names lower-cased, quoted values unescaped.
    pub params: Vec<(String, String)>,
    /// The `token68` form (`Negotiate abc==`), if the challenge has one.
    pub token68: Option<String>,
}

impl Challenge {
    /// The value of the first parameter named `name` (compared case-insensitively).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the scheme is `name` (case-insensitive, as RFC 9110 §11.1 says).
    pub fn is_scheme(&self, name: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(name)
    }

    /// `resource_metadata`: where the Protected Resource Metadata is (RFC 9728 §5.1).
    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata")
    }

    /// `scope`, split on whitespace (RFC 6750 §3); `None` when absent or blank.
    pub fn scope(&self) -> Option<Vec<String>> {
        let scopes: Vec<String> = self
            .param("scope")?
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect();
        (!scopes.is_empty()).then_some(scopes)
    }

    /// `error` (RFC 6750 §3.1): `invalid_token`, `insufficient_scope`, `invalid_request`.
    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }

    /// `error_description`: words for a person, never for decisions.
    pub fn error_description(&self) -> Option<&str> {
        self.param("error_description")
    }

    /// `realm`, if given.
    pub fn realm(&self) -> Option<&str> {
        self.param("realm")
    }

    /// Whether this challenge asks for a step-up: `error="insufficient_scope"`.
    pub fn is_insufficient_scope(&self) -> bool {
        self.error() == Some("insufficient_scope")
    }
}

/// Parses every challenge of the `WWW-Authenticate` header lines given, in order.
///
/// Never panics and never fails: what cannot be read is skipped (see the module docs).
pub fn parse_challenges(header_values: &[&str]) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    for value in header_values {
        Parser {
            s: value.as_bytes(),
            pos: 0,
        }
        .run(&mut out);
    }
    out
}

/// The first `Bearer` challenge, else the first `DPoP` one (a server that takes only
/// DPoP-bound tokens challenges with that scheme, RFC 9449 §7.1); schemes compared
/// case-insensitively.
pub fn bearer(challenges: &[Challenge]) -> Option<&Challenge> {
    challenges
        .iter()
        .find(|c| c.is_scheme("Bearer"))
        .or_else(|| challenges.iter().find(|c| c.is_scheme("DPoP")))
}

/// RFC 9110 §11.2 `token68` characters (before the trailing `=`s).
fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

fn is_ows(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn at_end_of_element(&self) -> bool {
        matches!(self.peek(), None | Some(b','))
    }

    fn skip_ows(&mut self) {
        while self.peek().is_some_and(is_ows) {
            self.pos += 1;
        }
    }

    /// The end of the run of bytes matching `f` from `from`.
    fn run_end(&self, from: usize, f: fn(u8) -> bool) -> usize {
        let mut i = from;
        while i < self.s.len() && f(self.s[i]) {
            i += 1;
        }
        i
    }

    fn text(&self, from: usize, to: usize) -> String {
        String::from_utf8_lossy(&self.s[from..to]).into_owned()
    }

    fn run(mut self, out: &mut Vec<Challenge>) {
        loop {
            // Empty list elements and the commas between elements.
            while matches!(self.peek(), Some(b',' | b' ' | b'\t')) {
                self.pos += 1;
            }
            if self.peek().is_none() {
                return;
            }
            self.element(out);
        }
    }

    /// One list element: a parameter of the current challenge, or a new challenge.
    fn element(&mut self, out: &mut Vec<Challenge>) {
        let start = self.pos;
        let name_end = self.run_end(start, is_token_byte);
        if name_end == start {
            return self.skip_to_comma();
        }
        if let Some(value_at) = self.param_value_start(name_end) {
            let name = self.text(start, name_end).to_ascii_lowercase();
            self.pos = value_at;
            let value = self.value();
            // A parameter before any challenge has no owner; it is dropped.
            if let Some(current) = out.last_mut() {
                if current.token68.is_none() {
                    current.params.push((name, value));
                }
            }
            return self.end_element();
        }
        out.push(Challenge {
            scheme: self.text(start, name_end),
            ..Challenge::default()
        });
        self.pos = name_end;
        if self.at_end_of_element() {
            return;
        }
        if !self.peek().is_some_and(is_ows) {
            return self.skip_to_comma();
        }
        self.skip_ows();
        if self.at_end_of_element() {
            return;
        }
        // The first thing after the scheme: a parameter (then the list goes on), or a token68.
        let first = self.pos;
        let name_end = self.run_end(first, is_token_byte);
        if name_end > first {
            if let Some(value_at) = self.param_value_start(name_end) {
                let name = self.text(first, name_end).to_ascii_lowercase();
                self.pos = value_at;
                let value = self.value();
                if let Some(current) = out.last_mut() {
                    current.params.push((name, value));
                }
                return self.end_element();
            }
        }
        let t68_end = self.run_end(first, is_token68_char);
        if t68_end > first {
            let end = self.run_end(t68_end, |b| b == b'=');
            let mut after = end;
            while after < self.s.len() && is_ows(self.s[after]) {
                after += 1;
            }
            if matches!(self.s.get(after), None | Some(b',')) {
                let token = self.text(first, end);
                if let Some(current) = out.last_mut() {
                    current.token68 = Some(token);
                }
                self.pos = after;
                return;
            }
        }
        self.skip_to_comma();
    }

    /// Where the value starts if `name_end` is followed by `BWS "=" BWS value`.
    fn param_value_start(&self, name_end: usize) -> Option<usize> {
        let mut i = name_end;
        while i < self.s.len() && is_ows(self.s[i]) {
            i += 1;
        }
        if self.s.get(i) != Some(&b'=') {
            return None;
        }
        i += 1;
        while i < self.s.len() && is_ows(self.s[i]) {
            i += 1;
        }
        match self.s.get(i) {
            None | Some(b',' | b'=') => None,
            Some(_) => Some(i),
        }
    }

    /// A quoted-string (unescaped) or a bare value (leniently: anything up to a comma or
    /// whitespace, since servers send `resource_metadata=https://…` unquoted).
    fn value(&mut self) -> String {
        if self.peek() == Some(b'"') {
            self.pos += 1;
            let mut buf = Vec::new();
            while let Some(b) = self.peek() {
                self.pos += 1;
                match b {
                    b'"' => break,
                    b'\\' => {
                        if let Some(next) = self.peek() {
                            buf.push(next);
                            self.pos += 1;
                        }
                    }
                    _ => buf.push(b),
                }
            }
            // Only ASCII backslashes were removed, so the bytes stay UTF-8.
            return String::from_utf8_lossy(&buf).into_owned();
        }
        let start = self.pos;
        self.pos = self.run_end(start, |b| !matches!(b, b',' | b' ' | b'\t' | b'"'));
        self.text(start, self.pos)
    }

    /// After a parameter: whitespace, then a comma or the end; anything else is skipped.
    fn end_element(&mut self) {
        self.skip_ows();
        if !self.at_end_of_element() {
            self.skip_to_comma();
        }
    }

    /// Skips to the next comma that is not inside a quoted-string (or to the end).
    fn skip_to_comma(&mut self) {
        let mut quoted = false;
        while let Some(b) = self.peek() {
            match b {
                b',' if !quoted => return,
                b'"' => quoted = !quoted,
                b'\\' if quoted => self.pos += 1,
                _ => {}
            }
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn one(value: &str) -> Vec<Challenge> {
        parse_challenges(&[value])
    }

    fn ch(scheme: &str, params: &[(&str, &str)]) -> Challenge {
        Challenge {
            scheme: scheme.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            token68: None,
        }
    }

    #[test]
    fn rfc_9110_example_with_two_challenges_on_one_line() {
        // RFC 9110 §11.6.1.
        let got =
            one(r#"Basic realm="simple", Newauth realm="apps", type=1, title="Login to \"apps\"""#);
        assert_eq!(
            got,
            vec![
                ch("Basic", &[("realm", "simple")]),
                ch(
                    "Newauth",
                    &[
                        ("realm", "apps"),
                        ("type", "1"),
                        ("title", r#"Login to "apps""#)
                    ]
                ),
            ]
        );
    }

    #[test]
    fn rfc_6750_and_mcp_bearer_challenges() {
        let c = &one(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="a b", error="insufficient_scope""#,
        )[0];
        assert!(c.is_scheme("bearer"));
        assert_eq!(
            c.resource_metadata(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.scope(), Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(c.error(), Some("insufficient_scope"));
        assert!(c.is_insufficient_scope());

        // The exact strings the conformance harness sends (oauth.md §1.0).
        let c = &one(
            r#"Bearer error="invalid_token", error_description="Missing Authorization header", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp""#,
        )[0];
        assert_eq!(c.error(), Some("invalid_token"));
        assert_eq!(c.error_description(), Some("Missing Authorization header"));
        assert_eq!(c.scope(), None);
        let c = &one(
            r#"Bearer error="insufficient_scope", scope="mcp:admin", resource_metadata="http://l:1/x", error_description="Scope upgrade will never succeed""#,
        )[0];
        assert_eq!(c.scope(), Some(vec!["mcp:admin".to_string()]));
        assert_eq!(c.resource_metadata(), Some("http://l:1/x"));

        // RFC 6750 §3 example.
        let c = &one(
            r#"Bearer realm="example", error="invalid_token", error_description="The access token expired""#,
        )[0];
        assert_eq!(c.realm(), Some("example"));
        assert_eq!(c.error_description(), Some("The access token expired"));
    }

    #[test]
    fn several_schemes_and_lines() {
        let got = one(r#"Basic realm="x", Bearer scope="y""#);
        assert_eq!(
            got,
            vec![
                ch("Basic", &[("realm", "x")]),
                ch("Bearer", &[("scope", "y")])
            ]
        );
        assert_eq!(bearer(&got).unwrap().param("SCOPE"), Some("y"));

        let got = parse_challenges(&[
            r#"Basic realm="x""#,
            "bearer scope=y",
            "DPoP algs=\"ES256\"",
        ]);
        assert_eq!(got.len(), 3);
        assert_eq!(bearer(&got).unwrap().scheme, "bearer");
        assert_eq!(got[2].param("algs"), Some("ES256"));

        // A line that starts with a parameter continues the last challenge (RFC 9110 §5.3).
        let got = parse_challenges(&["Bearer realm=a", "scope=b"]);
        assert_eq!(got, vec![ch("Bearer", &[("realm", "a"), ("scope", "b")])]);

        // Bare schemes, empty list elements, odd whitespace.
        let got = one(" ,Basic, ,  Bearer\t,Digest  realm = \"r\" ,, nonce=\"n\" ");
        assert_eq!(
            got,
            vec![
                ch("Basic", &[]),
                ch("Bearer", &[]),
                ch("Digest", &[("realm", "r"), ("nonce", "n")])
            ]
        );
        assert!(bearer(&one(r#"Basic realm="Bearer x""#)).is_none());

        // A server that takes only DPoP-bound tokens challenges with `DPoP` (RFC 9449 §7.1).
        let got = one(r#"Basic realm="x", DPoP resource_metadata="https://s/prm""#);
        assert_eq!(
            bearer(&got).unwrap().param("resource_metadata"),
            Some("https://s/prm")
        );
    }

    #[test]
    fn quoted_strings_keep_commas_equals_and_escapes() {
        let c = &one(r#"Bearer error_description="a, b=c, Basic x", scope="q\\r\"s", realm="""#)[0];
        assert_eq!(c.error_description(), Some("a, b=c, Basic x"));
        assert_eq!(c.scope(), Some(vec![r#"q\r"s"#.to_string()]));
        assert_eq!(c.realm(), Some(""));
        assert_eq!(one(r#"Bearer realm="é\ü, ok""#)[0].realm(), Some("éü, ok"));
        // Unterminated: what can be read.
        assert_eq!(one(r#"Bearer realm="abc, d"#)[0].realm(), Some("abc, d"));
    }

    #[test]
    fn token68() {
        let got = one("Negotiate abc==");
        assert_eq!(got[0].token68.as_deref(), Some("abc=="));
        assert!(got[0].params.is_empty());
        let got = one("Basic dXNlcjpwYXNz/+_~.-, Negotiate a=, Bearer scope=x");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].token68.as_deref(), Some("dXNlcjpwYXNz/+_~.-"));
        assert_eq!(got[1].token68.as_deref(), Some("a="));
        assert_eq!(got[2].scope(), Some(vec!["x".to_string()]));
        // A parameter after a token68 has no place in the grammar: dropped.
        let got = one("Negotiate abc, realm=x");
        assert_eq!(got[0].token68.as_deref(), Some("abc"));
        assert!(got[0].params.is_empty());
    }

    #[test]
    fn lenient_bare_values() {
        let c = &one("Bearer resource_metadata=https://h/.well-known/x?a=b, scope=read")[0];
        assert_eq!(c.resource_metadata(), Some("https://h/.well-known/x?a=b"));
        assert_eq!(c.scope(), Some(vec!["read".to_string()]));
        assert_eq!(one("Bearer scope=\"  \"")[0].scope(), None);
    }

    #[test]
    fn garbage_gives_what_can_be_read() {
        assert!(one("").is_empty());
        assert!(one("   ,, ,").is_empty());
        assert!(one("=\"x\", \"y\"").is_empty());
        assert!(one("realm=x").is_empty());
        let got = one("\"junk, with\" comma, Bearer scope=a, ===, @@@ x, Basic");
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].scope(), Some(vec!["a".to_string()]));
        assert_eq!(got[1].scheme, "Basic");
        let got = one("Bearer\"x\", Basic");
        assert_eq!(
            got.iter().map(|c| c.scheme.as_str()).collect::<Vec<_>>(),
            ["Bearer", "Basic"]
        );
        let got = one("Bearer scope=a b c, error=x");
        assert_eq!(got[0].scope(), Some(vec!["a".to_string()]));
        assert_eq!(got[0].error(), Some("x"));
        // Trailing backslash inside a quote.
        assert_eq!(one("Bearer realm=\"a\\")[0].realm(), Some("a"));
    }

    #[test]
    fn hostile_input_is_read_without_a_panic() {
        let inputs = [
            "a ".repeat(200_000),
            ",".repeat(400_000),
            "Bearer ".to_string() + &"x=\"".repeat(100_000),
            "=".repeat(400_000),
            "B x=1, ".repeat(60_000),
            "\"\\".repeat(200_000),
            "Neg ".to_string() + &"a".repeat(400_000) + " b",
        ];
        // Read without a panic, each giving at most one challenge per comma-separated element
        // (a quadratic parser would show here as a test that takes minutes, not as a failure:
        // speed is for the benchmarks).
        for input in &inputs {
            let got = one(input);
            assert!(
                got.len() <= input.matches(',').count() + 1,
                "{:?}…",
                &input[..20]
            );
        }
    }

    fn tchar_token() -> impl Strategy<Value = String> {
        "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,8}"
    }

    proptest! {
        #[test]
        fn never_panics(lines in proptest::collection::vec(any::<String>(), 0..4)) {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let _ = parse_challenges(&refs);
        }

        #[test]
        fn never_panics_on_grammar_soup(s in "[a-zA-Z=,\" \\\\\t/]{0,64}") {
            let got = parse_challenges(&[&s]);
            prop_assert!(got.len() <= s.len());
        }

        #[test]
        fn serialized_challenges_read_back(
            challenges in proptest::collection::vec(
                (tchar_token(), prop_oneof![
                    "[A-Za-z0-9._~+/-]{1,8}={0,2}".prop_map(Err),
                    proptest::collection::vec((tchar_token(), any::<String>()), 0..4).prop_map(Ok),
                ]),
                1..4,
            )
        ) {
            let mut text = Vec::new();
            let mut expected = Vec::new();
            for (scheme, body) in &challenges {
                match body {
                    Err(t68) => {
                        text.push(format!("{scheme} {t68}"));
                        expected.push(Challenge { scheme: scheme.clone(), params: vec![], token68: Some(t68.clone()) });
                    }
                    Ok(params) => {
                        let ps: Vec<String> = params
                            .iter()
                            .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
                            .collect();
                        text.push(if ps.is_empty() { scheme.clone() } else { format!("{scheme} {}", ps.join(", ")) });
                        expected.push(Challenge {
                            scheme: scheme.clone(),
                            params: params.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect(),
                            token68: None,
                        });
                    }
                }
            }
            prop_assert_eq!(parse_challenges(&[&text.join(", ")]), expected);
        }
    }
}
