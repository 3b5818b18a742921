//! Where and how spans are exported, from `--otlp` and the environment variables the OTLP
//! exporter specification names: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the URL as it is) or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (a base, to which `/v1/traces` is added), their `_HEADERS`
//! (`key=value,…`, values percent-encoded) and `_TIMEOUT` (milliseconds), `OTEL_SERVICE_NAME`,
//! and `OTEL_SDK_DISABLED` / `OTEL_TRACES_EXPORTER=none` to turn it off.

use std::time::Duration;

/// The default deadline of one export, as the specification has it.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how the spans go.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    /// The URL the request is posted to (`…/v1/traces`).
    pub(crate) url: String,
    /// The headers added to it (`OTEL_EXPORTER_OTLP_HEADERS`).
    pub(crate) headers: Vec<(String, String)>,
    /// How long the export may take in all.
    pub(crate) timeout: Duration,
    /// The resource's `service.name`.
    pub(crate) service_name: String,
    /// What was wrong in the variables (each said once, as a warning; the rest holds).
    pub(crate) warnings: Vec<String>,
}

/// The settings from `flag` (`--otlp URL`) and the variables `var` reads; `None` when nothing
/// asks for an export, or the environment turns it off.
pub(crate) fn read(flag: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Option<Settings> {
    let set = |name: &str| {
        var(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || set("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
    let url = match (flag, set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
        (Some(base), _) => traces_url(base),
        (None, Some(url)) if !disabled => url,
        (None, None) if !disabled => traces_url(&set("OTEL_EXPORTER_OTLP_ENDPOINT")?),
        (None, _) => return None,
    };
    let mut warnings = Vec::new();
    if let Some(protocol) =
        set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"))
    {
        if protocol != "http/protobuf" {
            warnings.push(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: only http/protobuf is spoken; using it"
            ));
        }
    }
    let mut headers = Vec::new();
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Some(list) = set(name) {
            for (key, value) in parse_headers(&list, name, &mut warnings) {
                // The traces' own list wins over the general one.
                headers.retain(|(k, _): &(String, String)| !k.eq_ignore_ascii_case(&key));
                headers.push((key, value));
            }
        }
    }
    let timeout = match set("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .or_else(|| set("OTEL_EXPORTER_OTLP_TIMEOUT"))
    {
        None => DEFAULT_TIMEOUT,
        Some(ms) => match ms.parse::<u64>() {
            Ok(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                warnings.push(format!(
                    "OTEL_EXPORTER_OTLP_TIMEOUT={ms} is not a number of milliseconds; \
                     using {}",
                    DEFAULT_TIMEOUT.as_millis()
                ));
                DEFAULT_TIMEOUT
            }
        },
    };
    Some(Settings {
        url,
        headers,
        timeout,
        service_name: set("OTEL_SERVICE_NAME").unwrap_or_else(|| "mcpwire".to_owned()),
        warnings,
    })
}

/// The traces URL of a base endpoint: `/v1/traces` added to its path.
fn traces_url(base: &str) -> String {
    format!("{}/v1/traces", base.trim().trim_end_matches('/'))
}

/// `key=value,key2=value2`, each value percent-decoded; a pair HTTP cannot carry is left out
/// with a warning that names its key (never its value: a token, most often).
fn parse_headers(list: &str, var: &str, warnings: &mut Vec<String>) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    for pair in list.split(',').filter(|p| !p.trim().is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            warnings.push(format!("{var}: an entry is not key=value; left out"));
            continue;
        };
        let key = key.trim().to_owned();
        let value = percent_decode(value.trim());
        match value {
            Some(value) if mcpwire::core::header::check_configured(&key, &value).is_ok() => {
                headers.push((key, value))
            }
            _ => warnings.push(format!(
                "{var}: header {key:?} cannot be sent over HTTP; left out"
            )),
        }
    }
    headers
}

/// `s` with its `%XX` escapes decoded; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)], flag: Option<&str>) -> Option<Settings> {
        read(flag, |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn the_endpoint_comes_from_the_flag_then_the_traces_variable_then_the_base() {
        assert_eq!(with(&[], None), None);
        let base = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")];
        assert_eq!(
            with(&base, None).unwrap().url,
            "http://collector:4318/v1/traces"
        );
        let both = [
            base[0],
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://other:9/custom",
            ),
        ];
        assert_eq!(with(&both, None).unwrap().url, "http://other:9/custom");
        assert_eq!(
            with(&both, Some("http://flag:1")).unwrap().url,
            "http://flag:1/v1/traces"
        );
        // Turned off by the environment, unless the flag asks.
        let off = [base[0], ("OTEL_SDK_DISABLED", "true")];
        assert_eq!(with(&off, None), None);
        let none = [base[0], ("OTEL_TRACES_EXPORTER", "none")];
        assert_eq!(with(&none, None), None);
        assert!(with(&none, Some("http://flag:1")).is_some());
    }

    #[test]
    fn headers_are_decoded_and_a_bad_one_is_left_out_without_its_value() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=a%20b%2Cc, x-tenant=one,broken,bad=sec%0Aret",
            ),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-Tenant=two"),
            ("OTEL_SERVICE_NAME", "billing"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "250"),
        ];
        let s = with(&vars, None).unwrap();
        let headers: Vec<(&str, &str)> = (s.headers.iter())
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(headers, [("api-key", "a b,c"), ("X-Tenant", "two")]);
        assert_eq!(s.service_name, "billing");
        assert_eq!(s.timeout, Duration::from_millis(250));
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        assert!(
            s.warnings.iter().all(|w| !w.contains("sec")),
            "{:?}",
            s.warnings
        );
    }

    #[test]
    fn another_protocol_or_a_bad_timeout_is_warned_of() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
        ];
        let s = with(&vars, None).unwrap();
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("http/protobuf"));
    }
}
