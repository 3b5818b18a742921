//! The command line's OTLP export (`--otlp URL`, `OTEL_EXPORTER_OTLP_*`): a small OTLP/HTTP
//! receiver on 127.0.0.1 decodes each `ExportTraceServiceRequest` (protobuf, by hand); the
//! command runs against the built-in demo server, which echoes the `traceparent` each request
//! carried in its result's `_meta`.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{stderr, stdout, BIN};

/// `mcpwire ARGS` with `env`, none of the environment's own `OTEL_*` variables or proxies.
fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.to_ascii_lowercase().ends_with("_proxy") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    command(args, env).output().expect("the binary runs")
}

/// How the receiver answers.
#[derive(Clone, Copy)]
enum Answer {
    /// `200`, an empty `ExportTraceServiceResponse`.
    Ok,
    /// This status.
    Status(u16),
    /// Nothing, ever (the connection is held open).
    Silent,
}

/// One request the receiver took.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name));
        found.map(|(_, v)| v.as_str())
    }
}

/// A small OTLP/HTTP receiver on 127.0.0.1.
struct Collector {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Collector {
    fn start(answer: Answer) -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let kept = got.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let kept = kept.clone();
                std::thread::spawn(move || serve(stream, answer, &kept));
            }
        });
        Collector { url, got }
    }

    fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }
}

/// Reads each request on `stream` and answers it as `answer` says.
fn serve(stream: TcpStream, answer: Answer, got: &Mutex<Vec<Received>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_owned();
        let path = parts.next().unwrap_or_default().to_owned();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_owned(), v.trim().to_owned()));
            }
        }
        let find = |name: &str| {
            let found = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name));
            found.map(|(_, v)| v.clone())
        };
        let mut body = Vec::new();
        if let Some(len) = find("content-length") {
            body.resize(len.parse().unwrap(), 0);
            reader.read_exact(&mut body).unwrap();
        } else if find("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size).unwrap();
                let n = usize::from_str_radix(size.trim(), 16).unwrap();
                let mut chunk = vec![0; n + 2];
                reader.read_exact(&mut chunk).unwrap();
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        }
        got.lock().unwrap().push(Received {
            method,
            path,
            headers,
            body,
        });
        let reply = match answer {
            Answer::Ok => "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n\
                           Content-Length: 0\r\n\r\n"
                .to_owned(),
            Answer::Status(s) => format!(
                "HTTP/1.1 {s} Unavailable\r\nContent-Type: text/plain\r\n\
                 Content-Length: 4\r\n\r\nbusy"
            ),
            Answer::Silent => {
                std::thread::sleep(Duration::from_secs(60));
                return;
            }
        };
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// One protobuf field's value.
#[derive(Debug, Clone)]
enum Pb {
    Varint(u64),
    Fixed64(u64),
    Bytes(Vec<u8>),
    Fixed32,
}

/// The fields of a protobuf message, in order (a hand decoder: varints, fixed and
/// length-delimited fields).
fn fields(mut b: &[u8]) -> Vec<(u32, Pb)> {
    fn varint(b: &mut &[u8]) -> u64 {
        let (mut n, mut shift) = (0u64, 0);
        loop {
            let byte = b[0];
            *b = &b[1..];
            n |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return n;
            }
            shift += 7;
        }
    }
    let mut out = Vec::new();
    while !b.is_empty() {
        let key = varint(&mut b);
        let (field, wire) = ((key >> 3) as u32, key & 7);
        let value = match wire {
            0 => Pb::Varint(varint(&mut b)),
            1 => {
                let v = u64::from_le_bytes(b[..8].try_into().unwrap());
                b = &b[8..];
                Pb::Fixed64(v)
            }
            2 => {
                let len = varint(&mut b) as usize;
                let v = b[..len].to_vec();
                b = &b[len..];
                Pb::Bytes(v)
            }
            5 => {
                b = &b[4..];
                Pb::Fixed32
            }
            w => panic!("wire type {w}"),
        };
        out.push((field, value));
    }
    out
}

/// Every length-delimited field `n` of `msg`.
fn all(msg: &[u8], n: u32) -> Vec<Vec<u8>> {
    let found = fields(msg).into_iter().filter(|(f, _)| *f == n);
    found
        .filter_map(|(_, v)| match v {
            Pb::Bytes(b) => Some(b),
            _ => None,
        })
        .collect()
}

/// The only (or last) field `n` of `msg`.
fn one(msg: &[u8], n: u32) -> Option<Pb> {
    let mut found = fields(msg).into_iter().filter(|(f, _)| *f == n);
    found.next_back().map(|(_, v)| v)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A span as the test reads it.
#[derive(Debug)]
struct Span {
    trace_id: String,
    span_id: String,
    parent: String,
    name: String,
    kind: u64,
    start: u64,
    end: u64,
    /// Each attribute's value, as text.
    attributes: Vec<(String, String)>,
    links: Vec<(String, String)>,
    status: u64,
}

impl Span {
    fn attr(&self, key: &str) -> Option<&str> {
        let found = self.attributes.iter().find(|(k, _)| k == key);
        found.map(|(_, v)| v.as_str())
    }
}

/// `KeyValue`s as (key, value as text).
fn key_values(list: Vec<Vec<u8>>) -> Vec<(String, String)> {
    list.iter()
        .map(|kv| {
            let key = String::from_utf8(all(kv, 1).remove(0)).unwrap();
            let any = all(kv, 2).remove(0);
            let value = match fields(&any).remove(0) {
                (1, Pb::Bytes(s)) => String::from_utf8(s).unwrap(),
                (2, Pb::Varint(b)) => (b != 0).to_string(),
                (3, Pb::Varint(i)) => (i as i64).to_string(),
                (4, Pb::Fixed64(d)) => f64::from_bits(d).to_string(),
                other => panic!("value {other:?}"),
            };
            (key, value)
        })
        .collect()
}

/// The resource's attributes and the spans of an `ExportTraceServiceRequest`.
fn decode(body: &[u8]) -> (Vec<(String, String)>, Vec<Span>) {
    let mut resource = Vec::new();
    let mut spans = Vec::new();
    for rs in all(body, 1) {
        for r in all(&rs, 1) {
            resource.extend(key_values(all(&r, 1)));
        }
        for ss in all(&rs, 2) {
            for s in all(&ss, 2) {
                let bytes = |n| all(&s, n).first().map(|b| hex(b)).unwrap_or_default();
                let fixed = |n| match one(&s, n) {
                    Some(Pb::Fixed64(v)) => v,
                    other => panic!("field {n}: {other:?}"),
                };
                let links = all(&s, 13).into_iter().map(|l| {
                    let get = |n| hex(&all(&l, n)[0]);
                    (get(1), get(2))
                });
                let status = all(&s, 15).first().map_or(0, |st| match one(st, 3) {
                    Some(Pb::Varint(c)) => c,
                    _ => 0,
                });
                spans.push(Span {
                    trace_id: bytes(1),
                    span_id: bytes(2),
                    parent: bytes(4),
                    name: String::from_utf8(all(&s, 5).remove(0)).unwrap(),
                    kind: match one(&s, 6) {
                        Some(Pb::Varint(k)) => k,
                        _ => 0,
                    },
                    start: fixed(7),
                    end: fixed(8),
                    attributes: key_values(all(&s, 9)),
                    links: links.collect(),
                    status,
                });
            }
        }
    }
    (resource, spans)
}

/// The one export `collector` received, checked as OTLP/HTTP has it, decoded.
fn the_export(collector: &Collector) -> (Received, Vec<(String, String)>, Vec<Span>) {
    let received = collector.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let r = received[0].clone();
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/traces"));
    assert_eq!(r.header("content-type"), Some("application/x-protobuf"));
    let (resource, spans) = decode(&r.body);
    (r, resource, spans)
}

/// The span named `name`.
fn named<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found = spans.iter().find(|s| s.name == name);
    found.unwrap_or_else(|| panic!("no span {name:?} in {spans:#?}"))
}

/// `traceparent`'s trace id and parent id.
fn ids(traceparent: &str) -> (&str, &str) {
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    assert_eq!((parts[0], parts[3]), ("00", "01"), "{traceparent}");
    (parts[1], parts[2])
}

#[test]
fn a_calls_span_arrives_with_its_attributes_in_the_trace_the_server_saw() {
    let collector = Collector::start(Answer::Ok);
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.as_str()),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s%20cret"),
        ("OTEL_SERVICE_NAME", "otlp-test"),
    ];
    let o = run(&["-v", "call", "echo", "message=hi", "--json"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The traceparent the demo server received and echoed.
    let traceparent = result["_meta"]["traceparent"].as_str().expect("echoed");
    let (trace_id, parent_id) = ids(traceparent);
    // --verbose shows it as the request carried it.
    common::assert_contains(
        &stderr(&o),
        &format!("· tools/call echo: traceparent {traceparent}"),
    );
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));

    let (request, resource, spans) = the_export(&collector);
    assert_eq!(request.header("x-api-key"), Some("s cret"));
    assert!(resource.contains(&("service.name".into(), "otlp-test".into())));
    let call = named(&spans, "tools/call echo");
    assert_eq!(call.kind, 3, "client");
    assert_eq!(
        (call.trace_id.as_str(), call.span_id.as_str()),
        (trace_id, parent_id)
    );
    assert_eq!(call.attr("mcp.method.name"), Some("tools/call"));
    assert_eq!(call.attr("gen_ai.tool.name"), Some("echo"));
    assert_eq!(call.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(call.attr("network.transport"), Some("pipe"));
    assert!(call.attr("jsonrpc.request.id").is_some(), "{call:?}");
    assert!(call.attr("mcp.protocol.version").is_some(), "{call:?}");
    assert_eq!((call.status, call.attr("error.type")), (0, None));
    assert!(call.end >= call.start && call.start > 0, "{call:?}");
    // Its parent: the command's span, which holds the whole trace (the tools/list before it).
    let root = named(&spans, "mcpwire call");
    assert_eq!((root.kind, root.parent.as_str()), (1, ""));
    assert_eq!(
        (call.parent.as_str(), root.trace_id.as_str()),
        (root.span_id.as_str(), trace_id)
    );
    assert_eq!(root.attr("process.exit.code"), Some("0"));
    assert_eq!(named(&spans, "tools/list").trace_id, trace_id);
    // The connection's span, linked from the call.
    let conn = named(&spans, "mcp connection");
    assert_eq!(conn.attr("mcp.server.name"), Some("mcpwire-demo"));
    assert!(call
        .links
        .contains(&(conn.trace_id.clone(), conn.span_id.clone())));
}

#[test]
fn without_an_endpoint_nothing_is_sent_and_requests_carry_no_trace_context() {
    let o = run(&["call", "echo", "message=hi", "--json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(result.get("_meta"), None, "{result}");
}

/// Starts `mcpwire -v ARGS`, and waits until the `--verbose` line of `tools/call`'s
/// `traceparent`: the call is being sent. Its `traceparent`.
fn started_call(args: &[&str], env: &[(&str, &str)]) -> (Child, String, Arc<Mutex<String>>) {
    let mut child = command(args, env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let kept = seen.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { return };
            kept.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(tp) = line.split("tools/call slow: traceparent ").nth(1) {
                let _ = tx.send(tp.to_owned());
            }
        }
    });
    let traceparent = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("no traceparent: {}", seen.lock().unwrap()));
    (child, traceparent, seen)
}

#[cfg(unix)]
#[test]
fn a_call_cut_short_by_sigterm_or_ctrl_c_is_exported_before_the_process_ends() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let collector = Collector::start(Answer::Ok);
        let args = [
            "-v",
            "--otlp",
            collector.url.as_str(),
            "call",
            "slow",
            "steps=600",
            "interval_ms=100",
        ];
        let (child, traceparent, seen) = started_call(&args, &[]);
        // The request goes out just after its trace context is read.
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: kill(2) signals the child this test started, by its PID.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let started = Instant::now();
        let status = child.wait_with_output().unwrap().status;
        assert_eq!(status.code(), Some(code), "{}", seen.lock().unwrap());
        assert!(started.elapsed() < Duration::from_secs(20));
        let (_, _, spans) = the_export(&collector);
        let call = named(&spans, "tools/call slow");
        let (trace_id, span_id) = ids(&traceparent);
        assert_eq!(
            (call.trace_id.as_str(), call.span_id.as_str()),
            (trace_id, span_id)
        );
        assert!(call.end >= call.start, "{call:?}");
        let root = named(&spans, "mcpwire call");
        assert_eq!(
            root.attr("process.exit.code"),
            Some(code.to_string().as_str())
        );
        assert_eq!(root.status, 2, "{root:?}");
    }
}

#[test]
fn a_collector_down_refusing_or_silent_costs_one_warning_never_the_outcome() {
    // Down: a port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let down = format!("http://127.0.0.1:{port}/custom/traces");
    let refusing = Collector::start(Answer::Status(503));
    let silent = Collector::start(Answer::Silent);
    let cases = [
        (down.clone(), "refused"),
        (format!("{}/v1/traces", refusing.url), "HTTP 503"),
        (
            format!("{}/v1/traces", silent.url),
            "no answer within 500 ms",
        ),
    ];
    for (url, why) in cases {
        let env = [
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url.as_str()),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
        ];
        let started = Instant::now();
        let o = run(&["call", "add", "a=2", "b=40"], &env);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o).trim(), "42");
        let err = stderr(&o);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(lines[0].starts_with("mcpwire: warning: "), "{err}");
        assert!(
            lines[0].contains(&format!("not exported to {url}")),
            "{err}"
        );
        assert!(lines[0].contains(why), "{why}: {err}");
        assert!(started.elapsed() < Duration::from_secs(15), "{why}");
    }
    // The collector that refused did get the request, at the traces URL as given.
    assert_eq!(refusing.received().len(), 1);
    assert_eq!(silent.received()[0].path, "/v1/traces");
}

#[test]
fn a_call_through_a_file_of_several_servers_is_exported_with_its_servers_name_on_its_line() {
    let collector = Collector::start(Answer::Ok);
    let home = common::temp("otlp-home");
    let file = home.join("servers.json");
    let servers = r#"{"mcpServers": {
        "a": {"command": "{BIN}", "args": ["serve-demo"]},
        "b": {"command": "{BIN}", "args": ["serve-demo", "--handshake-only"]}
    }}"#;
    std::fs::write(&file, common::with_bin(servers)).unwrap();
    let home_env = home.to_string_lossy().into_owned();
    let cache = home.join("cache").to_string_lossy().into_owned();
    let env = [
        ("HOME", home_env.as_str()),
        ("XDG_CACHE_HOME", cache.as_str()),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.as_str()),
    ];
    let file = file.to_string_lossy().into_owned();
    let args = [
        "--config",
        &file,
        "-v",
        "call",
        "a__echo",
        "message=hi",
        "--json",
    ];
    let o = run(&args, &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let result: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let traceparent = result["_meta"]["traceparent"].as_str().expect("echoed");
    common::assert_contains(
        &stderr(&o),
        &format!("· a: tools/call echo: traceparent {traceparent}"),
    );
    let (_, _, spans) = the_export(&collector);
    let call = named(&spans, "tools/call echo");
    let (trace_id, span_id) = ids(traceparent);
    assert_eq!(
        (call.trace_id.as_str(), call.span_id.as_str()),
        (trace_id, span_id)
    );
    let root = named(&spans, "mcpwire call");
    assert_eq!(call.parent, root.span_id);
    // The Manager's start-up listings, each server's, are in the command's trace, under its
    // span (its supervisors run in the span current where the servers were added).
    let under_root = |s: &Span| {
        let mut at = s;
        loop {
            if at.span_id == root.span_id {
                return true;
            }
            match spans.iter().find(|p| p.span_id == at.parent) {
                Some(up) => at = up,
                None => return false,
            }
        }
    };
    let listings: Vec<&Span> = spans.iter().filter(|s| s.name == "tools/list").collect();
    assert_eq!(listings.len(), 2, "one tools/list a server: {spans:?}");
    for listing in listings {
        assert_eq!(listing.trace_id, root.trace_id);
        assert!(
            under_root(listing),
            "{listing:?} is not under the command's span"
        );
    }
    let _ = std::fs::remove_dir_all(&home);
}

/// A collector that does not answer holds the command no longer than a stop request: SIGTERM
/// during the export ends it at once, with the command's own exit code and a warning.
#[cfg(unix)]
#[test]
fn a_stop_request_during_the_export_ends_it_with_the_commands_own_exit_code() {
    let silent = Collector::start(Answer::Silent);
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", silent.url.as_str()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "60000"),
    ];
    let mut child = command(&["call", "add", "a=2", "b=40"], &env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The result is printed before the export starts; the export is under way once the
    // collector has its request.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "42");
    let deadline = Instant::now() + Duration::from_secs(20);
    while silent.received().is_empty() {
        assert!(Instant::now() < deadline, "no export");
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    // SAFETY: kill(2) signals the child this test started, by its PID.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let o = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    common::assert_contains(&err, "terminated (SIGTERM) before the collector answered");
}
