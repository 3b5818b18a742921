//! What a person may try when a command fails in a way that looks like a known mistake, in the
//! command line's words: the library's hints ([`Hint`]) with this program's flags in place of
//! the library's options, and the hints only the command line gives (a server whose
//! elicitation fails in the stateless era); and where a token refused came from.

use mcpwire::core::error::{Hint, HttpError, CONFIGURED_TOKEN};
use mcpwire::oauth::STATIC_TOKEN_ADVICE;
use mcpwire::{ChosenEra, Client};

/// How to give a server a token in this command line's words: for the library's advice to a
/// server that offers no OAuth sign-in.
const TOKEN_ADVICE: &str = "give it a token with --bearer-env VAR (the token read from that \
    environment variable) or --header 'Authorization: Bearer <token>' (for a server from a \
    configuration file: an `Authorization` header among its `headers` there)";

/// Where the token given on the command line came from, in its words (`--bearer-env NAME`),
/// once it is known.
static TOKEN_FROM: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The token sent comes from `words` (`--bearer-env NAME`, `--header`): a server's refusal of
/// it says so.
pub(crate) fn token_from(words: String) {
    let _ = TOKEN_FROM.set(words);
}

/// A failure's words with the library's advice on giving a token, and where a refused token
/// came from, said with this command line's options.
pub(crate) fn token_in_cli_words(text: String) -> String {
    let text = if text.contains(STATIC_TOKEN_ADVICE) {
        text.replace(STATIC_TOKEN_ADVICE, TOKEN_ADVICE)
    } else {
        text
    };
    match TOKEN_FROM.get() {
        Some(from) if text.contains(CONFIGURED_TOKEN) => text.replace(CONFIGURED_TOKEN, from),
        _ => text,
    }
}

/// `text` (an error's words, holding `http`'s) with the library's hint said with this
/// program's flags.
pub(crate) fn in_cli_words(text: String, http: Option<&HttpError>) -> String {
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
pub(crate) fn stateless_elicitation(client: &Client, text: &str) -> Option<&'static str> {
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
