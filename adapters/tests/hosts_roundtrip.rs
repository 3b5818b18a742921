//! Property: servers written in any host's format load into exactly the `ServerConfig`s (and
//! settings) they describe, with variables substituted once and only where the host expands
//! them; and a loaded configuration, written back as `mcpServers` JSON, loads into the same
//! `ServerConfig`s again.

use std::collections::BTreeMap;
use std::time::Duration;

use mcpwire::hosts::{
    HttpConfig, HttpKind, InheritEnv, Loaded, Loader, ServerConfig, ServerSettings, StdioConfig,
    CODEX_ENV_VARS,
};
use mcpwire::Era;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Characters of literal text: quotes, backslashes, braces, line breaks, non-ASCII; no `$`,
/// which the expanding formats would read as the start of a variable.
const CHARS: &[char] = &[
    'a', 'b', 'Z', '0', '9', ' ', '-', '_', '.', '/', ':', '"', '\\', '{', '}', '#', '@', '\'',
    '%', 'é', '日', '🚀', '\n', '\t',
];

/// Variable values may hold anything, `$` and `${…}` included: they are never expanded again.
const VALUE_CHARS: &[char] = &['a', '$', '{', '}', 'X', ' ', '"', '\\', 'é', '\n'];

/// Characters of a header's literal text: what a header value may hold (visible ASCII, spaces
/// and tabs; a header holding anything else is refused as it is read), no `$`.
const HEADER_CHARS: &[char] = &[
    'a', 'b', 'Z', '0', '9', ' ', '-', '_', '.', '/', ':', '"', '\\', '{', '}', '#', '@', '\'',
    '%', '\t',
];

/// The value of `H0`, the variable headers refer to: anything a header may hold, `$` and `${…}`
/// included.
const HEADER_VALUE_CHARS: &[char] = &['a', '$', '{', '}', 'X', ' ', '"', '\\', '\t'];

/// Characters of a URL's literal text after its `http://h.example/`: what a URL carries as it
/// is (a URL holding a space, a control or a non-ASCII character is refused as it is read), no
/// `$`.
const URL_CHARS: &[char] = &[
    'a', 'b', 'Z', '0', '9', '-', '_', '.', '/', ':', '#', '@', '%', '?', '=', '&', '~',
];

/// The value of `U0`, the variable URLs refer to: what a URL may hold, `$` and `{…}` included.
const URL_VALUE_CHARS: &[char] = &['a', '$', '{', '}', 'X', '/', '?', '=', '%'];

/// The variables; `U0` holds only what a URL may hold, the last, `H0`, only what a header value
/// may hold.
const VARS: [&str; 6] = ["V0", "V1", "V2", "V3", "U0", "H0"];

#[derive(Debug, Clone)]
enum Piece {
    Lit(String),
    Var(usize),
}

type Text = Vec<Piece>;

#[derive(Debug, Clone)]
enum Transport {
    Stdio {
        command: Text,
        args: Vec<Text>,
        env: Vec<(String, Text)>,
        cwd: Option<Text>,
    },
    Http {
        sse: bool,
        url: Text,
        headers: Vec<(String, Text)>,
    },
}

#[derive(Debug, Clone)]
struct Spec {
    name: String,
    transport: Transport,
    enabled: bool,
    era: Option<Era>,
    timeout_secs: Option<u32>,
    include: Option<Vec<String>>,
    exclude: Vec<String>,
}

#[derive(Debug, Clone)]
struct World {
    servers: Vec<Spec>,
    values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Generic,
    ClaudeCode,
    VsCode,
    Gemini,
    Codex,
    Zed,
    Inspector,
}

const FORMATS: [Format; 7] = [
    Format::Generic,
    Format::ClaudeCode,
    Format::VsCode,
    Format::Gemini,
    Format::Codex,
    Format::Zed,
    Format::Inspector,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Command,
    Args,
    Env,
    Cwd,
    Url,
    Headers,
}

impl Format {
    fn file_name(self) -> &'static str {
        match self {
            Format::Generic => "servers.json",
            Format::ClaudeCode => ".mcp.json",
            Format::VsCode => ".vscode/mcp.json",
            Format::Gemini => ".gemini/settings.json",
            Format::Codex => ".codex/config.toml",
            Format::Zed => ".zed/settings.json",
            Format::Inspector => ".mcp-inspector/mcp.json",
        }
    }

    /// How the format writes a reference to variable `name`, if it expands `field`.
    fn reference(self, field: Field, name: &str) -> Option<String> {
        match self {
            Format::Generic | Format::Gemini => Some(format!("${{{name}}}")),
            Format::ClaudeCode if field != Field::Cwd => Some(format!("${{{name}}}")),
            Format::VsCode => Some(format!("${{env:{name}}}")),
            _ => None,
        }
    }

    fn has_cwd(self) -> bool {
        self != Format::Zed
    }
}

fn chars(set: &'static [char], max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(set), 0..max)
        .prop_map(|v| v.into_iter().collect())
}

fn text() -> impl Strategy<Value = Text> {
    let piece = prop_oneof![
        chars(CHARS, 6).prop_map(Piece::Lit),
        (0..VARS.len()).prop_map(Piece::Var),
    ];
    proptest::collection::vec(piece, 0..4)
}

/// A URL's text: `http://h.example/`, then literal text a URL may hold and references to `U0`.
fn url_text() -> BoxedStrategy<Text> {
    let piece = prop_oneof![
        chars(URL_CHARS, 6).prop_map(Piece::Lit),
        Just(Piece::Var(VARS.len() - 2)),
    ];
    proptest::collection::vec(piece, 0..4)
        .prop_map(|mut text| {
            text.insert(0, Piece::Lit("http://h.example/".into()));
            text
        })
        .boxed()
}

fn any_text() -> BoxedStrategy<Text> {
    text().boxed()
}

/// A header's text: literal text a header may hold, and references to `H0`.
fn header_text() -> BoxedStrategy<Text> {
    let piece = prop_oneof![
        chars(HEADER_CHARS, 6).prop_map(Piece::Lit),
        Just(Piece::Var(VARS.len() - 1)),
    ];
    proptest::collection::vec(piece, 0..4).boxed()
}

fn named(
    names: &'static [&'static str],
    text: fn() -> BoxedStrategy<Text>,
) -> impl Strategy<Value = Vec<(String, Text)>> {
    proptest::sample::subsequence(names, 0..=names.len()).prop_flat_map(move |picked| {
        let n = picked.len();
        proptest::collection::vec(text(), n).prop_map(move |texts| {
            picked
                .iter()
                .map(|k| k.to_string())
                .zip(texts)
                .collect::<Vec<_>>()
        })
    })
}

fn transport() -> impl Strategy<Value = Transport> {
    let stdio = (
        text(),
        proptest::collection::vec(text(), 0..4),
        named(&["API_KEY", "A", "PATH_X", "Z_1"], any_text),
        proptest::option::of(text()),
    )
        .prop_map(|(command, args, env, cwd)| Transport::Stdio {
            command,
            args,
            env,
            cwd,
        });
    let http = (
        any::<bool>(),
        url_text(),
        named(
            &["Authorization", "X-Team", "X-Api-Key", "Accept"],
            header_text,
        ),
    )
        .prop_map(|(sse, url, headers)| Transport::Http { sse, url, headers });
    prop_oneof![stdio, http]
}

fn tools() -> impl Strategy<Value = Vec<String>> {
    proptest::sample::subsequence(&["search", "fetch", "write", "a b"][..], 0..=4)
        .prop_map(|v| v.into_iter().map(str::to_owned).collect())
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        chars(CHARS, 5),
        transport(),
        any::<bool>(),
        proptest::option::of(prop_oneof![
            Just(Era::Auto),
            Just(Era::Handshake),
            Just(Era::Stateless)
        ]),
        proptest::option::of(1u32..100_000),
        proptest::option::of(tools()),
        tools(),
    )
        .prop_map(
            |(name, transport, enabled, era, timeout_secs, include, exclude)| Spec {
                name,
                transport,
                enabled,
                era,
                timeout_secs,
                include,
                exclude,
            },
        )
}

fn world() -> impl Strategy<Value = World> {
    (
        proptest::collection::vec(spec(), 0..5),
        proptest::collection::vec(chars(VALUE_CHARS, 6), VARS.len() - 2),
        chars(URL_VALUE_CHARS, 6),
        chars(HEADER_VALUE_CHARS, 6),
    )
        .prop_map(|(mut servers, mut values, url_value, header_value)| {
            values.push(url_value);
            values.push(header_value);
            for (i, s) in servers.iter_mut().enumerate() {
                s.name = format!("s{i}{}", s.name);
            }
            World { servers, values }
        })
}

/// The text as the format writes it.
fn written(format: Format, field: Field, text: &Text, values: &[String]) -> String {
    text.iter()
        .map(|p| match p {
            Piece::Lit(s) => s.clone(),
            Piece::Var(i) => format
                .reference(field, VARS[*i])
                .unwrap_or_else(|| values[*i].clone()),
        })
        .collect()
}

/// The text as it must load.
fn value(text: &Text, values: &[String]) -> String {
    text.iter()
        .map(|p| match p {
            Piece::Lit(s) => s.clone(),
            Piece::Var(i) => values[*i].clone(),
        })
        .collect()
}

fn map_of(format: Format, field: Field, pairs: &[(String, Text)], values: &[String]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, t)| (k.clone(), json!(written(format, field, t, values))))
            .collect(),
    )
}

fn era_name(era: Era) -> &'static str {
    match era {
        Era::Handshake => "legacy",
        Era::Stateless => "modern",
        _ => "auto",
    }
}

/// One server as a JSON entry of `format`.
fn json_entry(format: Format, s: &Spec, values: &[String]) -> Value {
    let mut e = Map::new();
    match &s.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if format == Format::VsCode || format == Format::Inspector {
                e.insert("type".into(), json!("stdio"));
            }
            e.insert(
                "command".into(),
                json!(written(format, Field::Command, command, values)),
            );
            let args: Vec<String> = args
                .iter()
                .map(|a| written(format, Field::Args, a, values))
                .collect();
            e.insert("args".into(), json!(args));
            e.insert("env".into(), map_of(format, Field::Env, env, values));
            if let (Some(cwd), true) = (cwd, format.has_cwd()) {
                e.insert(
                    "cwd".into(),
                    json!(written(format, Field::Cwd, cwd, values)),
                );
            }
        }
        Transport::Http { sse, url, headers } => {
            let url = json!(written(format, Field::Url, url, values));
            match format {
                Format::Gemini => {
                    e.insert((if *sse { "url" } else { "httpUrl" }).into(), url);
                }
                Format::Zed => {
                    e.insert("url".into(), url);
                }
                Format::Inspector => {
                    let kind = if *sse { "sse" } else { "streamable-http" };
                    e.insert("type".into(), json!(kind));
                    e.insert("url".into(), url);
                }
                _ => {
                    e.insert("type".into(), json!(if *sse { "sse" } else { "http" }));
                    e.insert("url".into(), url);
                }
            }
            e.insert(
                "headers".into(),
                map_of(format, Field::Headers, headers, values),
            );
        }
    }
    match format {
        Format::Generic | Format::ClaudeCode => {
            e.insert("disabled".into(), json!(!s.enabled));
        }
        Format::Zed => {
            e.insert("enabled".into(), json!(s.enabled));
        }
        _ => {}
    }
    if let (Some(era), Format::Generic | Format::Inspector | Format::VsCode) = (s.era, format) {
        e.insert("protocolEra".into(), json!(era_name(era)));
    }
    if let Some(secs) = s.timeout_secs {
        match format {
            Format::Gemini => {
                e.insert("timeout".into(), json!(u64::from(secs) * 1000));
            }
            Format::Inspector => {
                e.insert("requestTimeout".into(), json!(u64::from(secs) * 1000));
            }
            _ => {}
        }
    }
    if format == Format::Gemini {
        if let Some(include) = &s.include {
            e.insert("includeTools".into(), json!(include));
        }
        e.insert("excludeTools".into(), json!(s.exclude));
    }
    Value::Object(e)
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The whole file: servers in order (built by hand: a JSON map would sort them).
fn file(format: Format, world: &World) -> String {
    let values = &world.values;
    if format == Format::Codex {
        return toml_file(world);
    }
    let entries: Vec<String> = world
        .servers
        .iter()
        .map(|s| {
            format!(
                "{}: {}",
                json_string(&s.name),
                json_entry(format, s, values)
            )
        })
        .collect();
    let root = match format {
        Format::VsCode => "servers",
        Format::Zed => "context_servers",
        _ => "mcpServers",
    };
    let mut text = format!("{{\"{root}\": {{{}}}", entries.join(",\n"));
    if format == Format::Gemini {
        let excluded: Vec<&str> = world
            .servers
            .iter()
            .filter(|s| !s.enabled)
            .map(|s| s.name.as_str())
            .collect();
        text.push_str(&format!(", \"mcp\": {{\"excluded\": {}}}", json!(excluded)));
    }
    text.push('}');
    text
}

fn toml_file(world: &World) -> String {
    let v = &world.values;
    let q = |s: &str| json_string(s); // a JSON string is a TOML basic string for these characters
    let list = |items: Vec<String>| {
        format!(
            "[{}]",
            items.iter().map(|i| q(i)).collect::<Vec<_>>().join(", ")
        )
    };
    let table = |pairs: &[(String, Text)]| {
        format!(
            "{{ {} }}",
            pairs
                .iter()
                .map(|(k, t)| format!(
                    "{} = {}",
                    q(k),
                    q(&written(Format::Codex, Field::Env, t, v))
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut out = String::from("model = \"m\"\n");
    for s in &world.servers {
        out.push_str(&format!("\n[mcp_servers.{}]\n", q(&s.name)));
        match &s.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                out.push_str(&format!("command = {}\n", q(&value(command, v))));
                out.push_str(&format!(
                    "args = {}\n",
                    list(args.iter().map(|a| value(a, v)).collect())
                ));
                out.push_str(&format!("env = {}\n", table(env)));
                if let Some(cwd) = cwd {
                    out.push_str(&format!("cwd = {}\n", q(&value(cwd, v))));
                }
            }
            Transport::Http { url, headers, .. } => {
                out.push_str(&format!("url = {}\n", q(&value(url, v))));
                out.push_str(&format!("http_headers = {}\n", table(headers)));
            }
        }
        out.push_str(&format!("enabled = {}\n", s.enabled));
        if let Some(secs) = s.timeout_secs {
            out.push_str(&format!("tool_timeout_sec = {secs}\n"));
        }
        if let Some(include) = &s.include {
            out.push_str(&format!("enabled_tools = {}\n", list(include.clone())));
        }
        out.push_str(&format!("disabled_tools = {}\n", list(s.exclude.clone())));
    }
    out
}

/// What the server must load as.
fn expected(format: Format, s: &Spec, values: &[String]) -> (ServerConfig, ServerSettings) {
    let pairs = |pairs: &[(String, Text)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, t)| (k.clone(), value(t, values)))
            .collect()
    };
    let config = match &s.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut env = pairs(env);
            if format == Format::Inspector {
                // The Inspector's empty values are left out (its secret store holds them).
                env.retain(|_, v| !v.is_empty());
            }
            ServerConfig::Stdio(StdioConfig {
                command: value(command, values),
                args: args.iter().map(|a| value(a, values)).collect(),
                env,
                cwd: cwd
                    .as_ref()
                    .filter(|_| format.has_cwd())
                    .map(|c| value(c, values).into()),
                // Codex gives its servers its own list of variables, not its environment.
                inherit_env: match format {
                    Format::Codex => {
                        InheritEnv::Only(CODEX_ENV_VARS.iter().map(|n| n.to_string()).collect())
                    }
                    _ => InheritEnv::All,
                },
                ..StdioConfig::default()
            })
        }
        Transport::Http { sse, url, headers } => ServerConfig::Http(HttpConfig {
            kind: if *sse && !matches!(format, Format::Codex | Format::Zed) {
                HttpKind::Sse
            } else {
                HttpKind::Streamable
            },
            url: value(url, values),
            headers: pairs(headers),
            extra: Map::new(),
        }),
    };
    let mut settings = ServerSettings::default();
    settings.enabled = s.enabled || matches!(format, Format::VsCode | Format::Inspector);
    if matches!(format, Format::Generic | Format::Inspector | Format::VsCode) {
        settings.era = s.era;
    }
    if matches!(format, Format::Gemini | Format::Inspector | Format::Codex) {
        settings.tool_timeout = s.timeout_secs.map(|t| Duration::from_secs(t.into()));
    }
    if matches!(format, Format::Gemini | Format::Codex) {
        settings.tools.include = s.include.clone();
        settings.tools.exclude = s.exclude.clone();
    }
    (config, settings)
}

fn load(format: Format, text: &str, world: &World) -> Loaded {
    let env: BTreeMap<String, String> = VARS
        .iter()
        .map(|v| v.to_string())
        .zip(world.values.iter().cloned())
        .collect();
    let path = std::path::Path::new("/work/p").join(format.file_name());
    Loader::new("/home/u", env)
        .project("/work/p")
        .load_str(text, &path, None)
        .unwrap_or_else(|e| panic!("{format:?}: {e}\n{text}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_format_loads_into_the_servers_it_describes(world in world()) {
        for format in FORMATS {
            let text = file(format, &world);
            let loaded = load(format, &text, &world);
            let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
            let want: Vec<&str> = world.servers.iter().map(|s| s.name.as_str()).collect();
            prop_assert_eq!(names, want, "{:?}: servers in file order\n{}", format, text);
            for (spec, got) in world.servers.iter().zip(&loaded.servers) {
                let (config, settings) = expected(format, spec, &world.values);
                prop_assert_eq!(&got.config, &config, "{:?}\n{}", format, text);
                prop_assert_eq!(got.settings.enabled, settings.enabled, "{:?}", format);
                prop_assert_eq!(got.settings.era, settings.era, "{:?}", format);
                prop_assert_eq!(got.settings.tool_timeout, settings.tool_timeout, "{:?}", format);
                prop_assert_eq!(&got.settings.tools, &settings.tools, "{:?}", format);
                prop_assert!(got.settings.unknown.is_empty(), "{:?}: {:?}", format, got.settings);
            }
        }
    }

    #[test]
    fn a_loaded_configuration_written_back_loads_into_the_same_configs(world in world()) {
        for format in FORMATS {
            let loaded = load(format, &file(format, &world), &world);
            // The core's own serialisation, one `mcpServers` entry per server.
            let entries: Vec<String> = loaded
                .servers
                .iter()
                .map(|s| {
                    format!(
                        "{}: {}",
                        json_string(&s.name),
                        serde_json::to_string(&s.config).unwrap()
                    )
                })
                .collect();
            let text = format!("{{\"mcpServers\": {{{}}}}}", entries.join(", "));
            let parsed = mcpwire::core::config::parse_mcp_servers(&text).unwrap();
            let again = Loader::new("/home/u", BTreeMap::<String, String>::new())
                .load_str(&text, "claude_desktop_config.json", None)
                .unwrap();
            prop_assert_eq!(again.servers.len(), loaded.servers.len());
            for (a, b) in loaded.servers.iter().zip(&again.servers) {
                prop_assert_eq!(&a.name, &b.name);
                // A Claude Desktop file cannot say which variables to inherit (the core's
                // own parse keeps it, below).
                let mut whole = a.config.clone();
                if let ServerConfig::Stdio(s) = &mut whole {
                    s.inherit_env = InheritEnv::All;
                }
                prop_assert_eq!(&whole, &b.config, "{}", text);
                prop_assert_eq!(&parsed[&a.name], &a.config);
            }
        }
    }
}
