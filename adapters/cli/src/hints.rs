//! What a person may try when a command fails in a way that looks like a known mistake, in the
//! command line's words: the library's hints ([`Hint`]) with this program's flags in place of
//! the library's options, and the hints only the command line gives (a server whose
//! elicitation fails in the stateless era).

use mcpwire::core::error::{Hint, HttpError};
use mcpwire::{ChosenEra, Client};

/// `text` (an error's words, holding `http`'s) with the library's hint said with this
/// program's flags.
pub(super) fn in_cli_words(text: String, http: Option<&HttpError>) -> String {
    let Some(hint) = http.and_then(HttpError::suggestion) else {
        return text;
    };
    let cli = match &hint {
        Hint::TrustCa => "trust its CA with --cacert FILE (PEM)".to_owned(),
        Hint::NoH2c => "does it speak h2c? It gave no HTTP/2 answer to HTTP/2 with prior \
                        knowledge; without --http2-prior-knowledge, HTTP/1.1 is spoken"
            .to_owned(),
        _ => return text,
    };
    text.replace(&hint.to_string(), &cli)
}

/// The hint for a tool's failure (`text`: its error's message, or an `isError` result's text)
/// when the connection speaks the stateless era and the server says its elicitation cannot be
/// made there: FastMCP 4 says "elicitation via server-initiated requests is unavailable on
/// 2026-07-28 connections" (a server that asks for input with a server-initiated request,
/// which only the handshake era carries).
pub(super) fn stateless_elicitation(client: &Client, text: &str) -> Option<&'static str> {
    if client.era() != Some(ChosenEra::Stateless) {
        return None;
    }
    let text = text.to_ascii_lowercase();
    let unavailable = [
        "unavailable",
        "not available",
        "not supported",
        "unsupported",
    ]
    .iter()
    .any(|w| text.contains(w));
    (text.contains("elicit") && unavailable).then_some(
        "this server asks for input with a request of its own, which the stateless era \
         (2026-07-28) does not carry: try --era handshake",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpwire::core::error::HttpErrorKind;

    fn http(kind: HttpErrorKind, hint: Option<Hint>) -> HttpError {
        HttpError {
            kind,
            url: "https://h/mcp".into(),
            status: None,
            content_type: None,
            body_excerpt: String::new(),
            challenge: None,
            reason: "the TLS handshake failed".into(),
            hint,
        }
    }

    #[test]
    fn the_library_s_options_become_flags() {
        let unknown = http(
            HttpErrorKind::Tls(mcpwire::core::error::TlsFailure::UnknownIssuer),
            None,
        );
        let text = in_cli_words(unknown.to_string(), Some(&unknown));
        assert!(
            text.ends_with("; trust its CA with --cacert FILE (PEM)"),
            "{text}"
        );
        assert!(!text.contains("extra_ca_files"), "{text}");
        let h2c = http(HttpErrorKind::HeadCutShort, Some(Hint::NoH2c));
        let text = in_cli_words(h2c.to_string(), Some(&h2c));
        assert!(text.contains("without --http2-prior-knowledge"), "{text}");
        // A hint whose words name no option is kept as it is.
        let https = Hint::Https {
            url: "https://h:80/mcp".into(),
        };
        let tls_port = http(HttpErrorKind::HeadCutShort, Some(https));
        let text = in_cli_words(tls_port.to_string(), Some(&tls_port));
        assert_eq!(text, tls_port.to_string());
        assert!(text.contains("is it https?"), "{text}");
    }
}
