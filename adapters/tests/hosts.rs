//! The configuration loader against one fixture file per host (`fixtures/hosts/`, written from
//! each host's documentation as hosts.md summarises it), every expansion form, every error
//! path, and the promise that nothing printed holds a secret.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire::hosts::{
    ConfigError, Detection, Host, HttpConfig, HttpKind, InheritEnv, InputSpec, Loaded,
    LoadedServer, Loader, Scope, ServerConfig, StdioConfig, Warning,
};
use mcpwire::Era;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts")
}

fn home() -> PathBuf {
    fixtures().join("home")
}

fn project() -> PathBuf {
    fixtures().join("project")
}

/// The test environment: every value that stands for a secret holds `SECRET`.
fn env() -> BTreeMap<String, String> {
    [
        ("GITHUB_TOKEN", "ghp-SECRET-github"),
        ("DEFAULT_TEAM", "team-from-default"),
        ("DB_SERVER_BIN", "/opt/db/bin/server"),
        ("DB_USER", "dbuser"),
        ("DB_PASSWORD", "db-SECRET-password"),
        ("CURSOR_API_KEY", "cursor-SECRET-key"),
        ("CURSOR_TOKEN", "cursor-SECRET-token"),
        ("CURSOR_MCP_URL", "https://cursor.example.com/mcp"),
        ("PATH_EXTRA", "/opt/extra"),
        ("REMOTE_URL", "https://windsurf.example.com/mcp"),
        ("FIGMA_TOKEN", "figma-SECRET"),
        ("BAR_VALUE", "bar-SECRET"),
        ("MY_API_TOKEN", "gemini-SECRET"),
        ("DATABASE_URL", "postgres://gem"),
        ("PORT", "8080"),
        ("SSE_TOKEN", "sse-SECRET"),
        ("HTTP_KEY", "http-SECRET"),
        ("COPILOT_KEY", "copilot-SECRET"),
        ("TOOLS_DIR", "/opt/tools"),
        ("USER_NAME", "alice"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

fn loader() -> Loader {
    Loader::new(home(), env()).project(project())
}

fn load(path: &Path) -> Loaded {
    loader()
        .load_file(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn server<'a>(loaded: &'a Loaded, name: &str) -> &'a LoadedServer {
    loaded
        .get(name)
        .unwrap_or_else(|| panic!("no server {name} in {loaded:?}"))
}

fn stdio<'a>(loaded: &'a Loaded, name: &str) -> &'a StdioConfig {
    match &server(loaded, name).config {
        ServerConfig::Stdio(s) => s,
        other => panic!("{name} is not stdio: {other:?}"),
    }
}

fn http<'a>(loaded: &'a Loaded, name: &str) -> &'a HttpConfig {
    match &server(loaded, name).config {
        ServerConfig::Http(h) => h,
        other => panic!("{name} is not HTTP: {other:?}"),
    }
}

fn names(loaded: &Loaded) -> Vec<&str> {
    loaded.servers.iter().map(|s| s.name.as_str()).collect()
}

fn unknown_keys(loaded: &Loaded) -> Vec<(String, String)> {
    loaded
        .warnings
        .iter()
        .filter_map(|w| match w {
            Warning::UnknownKey { server, key, .. } => Some((server.clone(), key.clone())),
            _ => None,
        })
        .collect()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A fresh directory under the system's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mcpwire-config-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load_text(file_name: &str, text: &str) -> Result<Loaded, ConfigError> {
    let dir = temp_dir("text");
    let path = dir.join(file_name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    Loader::new(home(), env()).project(&dir).load_file(&path)
}

// ---------------------------------------------------------------------------------------------
// One test per host fixture: every field it documents.
// ---------------------------------------------------------------------------------------------

#[test]
fn claude_desktop_reads_command_args_env_cwd_and_expands_nothing() {
    let path = home().join(".config/Claude/claude_desktop_config.json");
    let loaded = load(&path);
    assert_eq!(loaded.files[0].host, Host::ClaudeDesktop);
    assert_eq!(loaded.files[0].detection, Detection::FileName);
    assert_eq!(names(&loaded), ["filesystem", "literal"]);
    let fs = stdio(&loaded, "filesystem");
    assert_eq!(fs.command, "npx");
    assert_eq!(
        fs.args,
        strings(&[
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/home/u/Documents"
        ])
    );
    assert_eq!(
        fs.env,
        map(&[
            ("LOG_LEVEL", "debug"),
            ("API_KEY", "literal-SECRET-in-file")
        ])
    );
    assert_eq!(fs.cwd.as_deref(), Some(Path::new("/home/u")));
    let literal = stdio(&loaded, "literal");
    assert_eq!(literal.args, strings(&["--token", "${NOT_EXPANDED}"]));
    assert!(loaded.warnings.contains(&Warning::NotExpanded {
        path: path.clone(),
        server: "literal".into(),
        field: "args[1]".into(),
        host: Host::ClaudeDesktop,
    }));
    let settings = &server(&loaded, "literal").settings;
    assert_eq!(
        settings.unknown["autoApprove"],
        serde_json::json!(["read_file"])
    );
    assert_eq!(
        unknown_keys(&loaded),
        [("literal".to_owned(), "autoApprove".to_owned())]
    );
}

#[test]
fn claude_code_project_file_expands_braced_and_default_forms_in_its_five_fields() {
    let loaded = load(&project().join(".mcp.json"));
    assert_eq!(loaded.files[0].host, Host::ClaudeCode);
    assert_eq!(names(&loaded), ["github", "events", "db", "shared"]);
    let github = http(&loaded, "github");
    assert_eq!(github.kind, HttpKind::Streamable);
    assert_eq!(
        github.url, "https://api.githubcopilot.com/mcp/",
        "the default"
    );
    assert_eq!(github.headers["Authorization"], "Bearer ghp-SECRET-github");
    assert_eq!(
        github.headers["X-Team"], "team-from-default",
        "a nested default"
    );
    assert_eq!(http(&loaded, "events").kind, HttpKind::Sse);
    let db = stdio(&loaded, "db");
    assert_eq!(db.command, "/opt/db/bin/server");
    assert_eq!(
        db.args,
        strings(&["--dsn", "postgres://dbuser@localhost/app", "$HOME"]),
        "a bare $VAR is not expanded by Claude Code"
    );
    assert_eq!(
        db.env,
        map(&[("DB_PASSWORD", "db-SECRET-password"), ("MODE", "readonly")])
    );
    assert!(unknown_keys(&loaded).is_empty());
}

#[test]
fn claude_code_user_file_holds_the_users_servers_and_the_projects_local_ones() {
    let loaded = Loader::new(home(), env())
        .project("/work/project")
        .load_file(home().join(".claude.json"))
        .unwrap();
    assert_eq!(loaded.files[0].host, Host::ClaudeCode);
    assert_eq!(names(&loaded), ["shared", "local-only", "user-only"]);
    assert_eq!(stdio(&loaded, "shared").command, "shared-from-local");
    assert_eq!(server(&loaded, "shared").origin.scope, Scope::Local);
    assert_eq!(server(&loaded, "user-only").origin.scope, Scope::File);
    assert_eq!(
        stdio(&loaded, "user-only").args,
        strings(&["mcp-server-time"])
    );
    assert_eq!(http(&loaded, "local-only").url, "http://127.0.0.1:7000/mcp");
    assert!(loaded.warnings.iter().any(|w| matches!(
        w,
        Warning::Shadowed { server, .. } if server == "shared"
    )));
    let elsewhere = Loader::new(home(), env())
        .project("/elsewhere")
        .load_file(home().join(".claude.json"))
        .unwrap();
    assert_eq!(names(&elsewhere), ["shared", "user-only"]);
    assert_eq!(stdio(&elsewhere, "shared").command, "shared-from-user");
}

#[test]
fn cursor_expands_env_user_home_and_workspace_and_reads_env_file() {
    let loaded = load(&project().join(".cursor/mcp.json"));
    assert_eq!(loaded.files[0].host, Host::Cursor);
    let local = stdio(&loaded, "local");
    let p = project();
    assert_eq!(local.command, format!("{}/bin/server", p.display()));
    let sep = std::path::MAIN_SEPARATOR_STR;
    assert_eq!(
        local.args,
        strings(&[
            "--home",
            &home().to_string_lossy(),
            "--sep",
            sep,
            "--project",
            "project"
        ])
    );
    assert_eq!(
        local.env,
        map(&[
            ("API_KEY", "cursor-SECRET-key"),
            ("SHARED", "from-env"),
            ("ENV_FILE_ONLY", "from-env-file"),
            ("QUOTED", "two words"),
        ]),
        "env wins over envFile"
    );
    let settings = &server(&loaded, "local").settings;
    assert_eq!(settings.env_file.as_deref(), Some(p.join(".env").as_path()));
    let remote = http(&loaded, "remote");
    assert_eq!(
        remote.kind,
        HttpKind::Streamable,
        "url alone is Streamable HTTP"
    );
    assert_eq!(
        remote.headers["Authorization"],
        "Bearer cursor-SECRET-token"
    );
    assert_eq!(http(&loaded, "events").kind, HttpKind::Sse);
    let streamable = http(&loaded, "streamable");
    assert_eq!(
        (streamable.kind, streamable.url.as_str()),
        (HttpKind::Streamable, "https://cursor.example.com/mcp")
    );
    // Cursor's `auth` block feeds the authorization; its secret is never printed.
    let linear = server(&loaded, "linear");
    let oauth = linear.settings.oauth.as_ref().expect("the auth block");
    assert_eq!(oauth.client_id.as_deref(), Some("client-id"));
    assert_eq!(oauth.client_secret.as_deref(), Some("client-SECRET"));
    assert_eq!(oauth.scopes, Some(strings(&["read"])));
    assert!(!format!("{linear:?}").contains("SECRET"), "{linear:?}");
    assert!(unknown_keys(&loaded).is_empty(), "{:?}", loaded.warnings);
}

fn vscode_loader(asked: Arc<Mutex<Vec<InputSpec>>>) -> Loader {
    loader().on_input(move |spec| {
        asked.lock().unwrap().push(spec.clone());
        Ok(match spec.id.as_str() {
            "api-key" => "input-SECRET-key".to_owned(),
            other => spec.default.clone().unwrap_or_else(|| other.to_owned()),
        })
    })
}

#[test]
fn vscode_reads_servers_and_inputs_and_asks_each_input_once() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let path = project().join(".vscode/mcp.json");
    let loaded = vscode_loader(asked.clone()).load_file(&path).unwrap();
    assert_eq!(loaded.files[0].host, Host::VsCode);
    assert_eq!(names(&loaded), ["fetch", "github", "events", "socket"]);
    let fetch = stdio(&loaded, "fetch");
    assert_eq!(fetch.command, "uvx");
    assert_eq!(fetch.args, strings(&["mcp-server-fetch", "--region", "eu"]));
    assert_eq!(
        fetch.env,
        map(&[
            ("API_KEY", "input-SECRET-key"),
            ("HOME_DIR", &home().to_string_lossy()),
            ("EXTRA", "/opt/extra"),
            ("ENV_FILE_ONLY", "from-env-file"),
            ("SHARED", "from-env-file"),
            ("QUOTED", "two words"),
        ])
    );
    assert_eq!(fetch.cwd.as_deref(), Some(project().as_path()));
    let settings = &server(&loaded, "fetch").settings;
    assert_eq!(fetch.env_remove, strings(&["REMOVED"]));
    assert_eq!(
        fetch.inherit_env,
        InheritEnv::All,
        "VS Code passes its environment"
    );
    assert_eq!(
        settings.env_file.as_deref(),
        Some(project().join(".env").as_path())
    );
    assert_eq!(settings.unknown["sandboxEnabled"], true);
    assert_eq!(settings.unknown["dev"]["watch"], "src/**/*.ts");
    let github = http(&loaded, "github");
    assert_eq!(github.headers["Authorization"], "Bearer input-SECRET-key");
    assert_eq!(http(&loaded, "events").kind, HttpKind::Sse);
    assert_eq!(http(&loaded, "socket").url, "unix:///tmp/mcp.sock#/mcp");
    let asked = asked.lock().unwrap();
    let ids: Vec<&str> = asked.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["region", "api-key"],
        "each input once, when first needed"
    );
    assert!(asked[1].password);
    assert_eq!(asked[0].options, strings(&["eu", "us"]));
    assert_eq!(asked[0].kind, "pickString");
}

#[test]
fn portable_copilot_format_reads_types_and_the_tools_allow_list() {
    let loaded = load(&home().join(".copilot/mcp-config.json"));
    assert_eq!(loaded.files[0].host, Host::Copilot);
    let github = server(&loaded, "github");
    assert_eq!(
        github.settings.tools.include, None,
        "\"*\" allows every tool"
    );
    assert_eq!(
        http(&loaded, "github").headers["Authorization"],
        "Bearer ghp-SECRET-github"
    );
    let local = stdio(&loaded, "local");
    assert_eq!(local.env, map(&[("KEY", "copilot-SECRET")]));
    let filter = &server(&loaded, "local").settings.tools;
    assert_eq!(filter.include, Some(strings(&["search", "read"])));
    assert!(filter.allows("read") && !filter.allows("write"));
}

#[test]
fn windsurf_reads_server_url_env_and_file_references_and_disabled() {
    let loaded = load(&home().join(".codeium/windsurf/mcp_config.json"));
    assert_eq!(loaded.files[0].host, Host::Windsurf);
    assert_eq!(
        stdio(&loaded, "github").env,
        map(&[("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp-SECRET-github")])
    );
    let figma = http(&loaded, "figma");
    assert_eq!(figma.url, "https://mcp.figma.com/mcp");
    assert_eq!(
        figma.headers["Authorization"], "Bearer file-SECRET-token",
        "${{file:}} without its trailing line break"
    );
    let remote = server(&loaded, "remote");
    assert_eq!(
        http(&loaded, "remote").url,
        "https://windsurf.example.com/mcp"
    );
    assert!(!remote.settings.enabled);
    assert_eq!(
        remote.settings.unknown["disabledTools"],
        serde_json::json!(["delete_everything"])
    );
    assert_eq!(loaded.enabled().count(), 2);
}

#[test]
fn zed_reads_context_servers_both_command_shapes_and_skips_extension_servers() {
    let path = home().join(".config/zed/settings.json");
    let loaded = load(&path);
    assert_eq!(loaded.files[0].host, Host::Zed);
    assert_eq!(names(&loaded), ["postgres", "older-shape", "remote", "off"]);
    let pg = stdio(&loaded, "postgres");
    assert_eq!(pg.command, "npx");
    assert_eq!(pg.args.len(), 3);
    assert_eq!(pg.env, map(&[("PGPASSWORD", "literal-SECRET")]));
    let older = stdio(&loaded, "older-shape");
    assert_eq!(older.command, "/usr/local/bin/server");
    assert_eq!(older.args, strings(&["--stdio"]));
    assert_eq!(older.env, map(&[("A", "1")]));
    assert_eq!(
        http(&loaded, "remote").headers["Authorization"],
        "Bearer literal-SECRET-token"
    );
    assert!(!server(&loaded, "off").settings.enabled);
    assert!(loaded.warnings.contains(&Warning::ExtensionServer {
        path: path.clone(),
        server: "from-extension".into()
    }));
    assert_eq!(
        unknown_keys(&loaded),
        [("older-shape".to_owned(), "settings".to_owned())]
    );
}

#[test]
fn codex_reads_every_key_and_takes_secrets_from_named_variables() {
    let loaded = load(&home().join(".codex/config.toml"));
    assert_eq!(loaded.files[0].host, Host::Codex);
    assert_eq!(names(&loaded), ["docs", "figma", "off", "subtable"]);
    let docs = stdio(&loaded, "docs");
    assert_eq!(docs.command, "npx");
    assert_eq!(docs.args, strings(&["-y", "mcp-server"]));
    assert_eq!(docs.env, map(&[("API_KEY", "value")]));
    assert_eq!(docs.cwd.as_deref(), Some(Path::new("/path")));
    // Codex's own list of variables, and the names in `env_vars`, not the whole environment.
    let InheritEnv::Only(inherited) = &docs.inherit_env else {
        panic!("a Codex server inherits only a list: {docs:?}");
    };
    for name in ["PATH", "HOME", "API_KEY2"] {
        assert!(
            inherited.iter().any(|n| n == name),
            "{name} in {inherited:?}"
        );
    }
    assert!(!inherited.iter().any(|n| n == "GITHUB_TOKEN"));
    let s = &server(&loaded, "docs").settings;
    assert_eq!(s.startup_timeout, Some(Duration::from_secs(20)));
    assert_eq!(s.tool_timeout, Some(Duration::from_millis(30_500)));
    assert!(s.enabled);
    assert_eq!(s.tools.include, Some(strings(&["search", "fetch"])));
    assert_eq!(s.tools.exclude, strings(&["fetch"]));
    assert!(s.tools.allows("search") && !s.tools.allows("fetch"));
    let figma = http(&loaded, "figma");
    assert_eq!(figma.kind, HttpKind::Streamable);
    assert_eq!(
        figma.headers,
        map(&[
            ("Authorization", "Bearer figma-SECRET"),
            ("X-Foo", "literal"),
            ("X-Bar", "bar-SECRET"),
        ])
    );
    assert!(!server(&loaded, "off").settings.enabled);
    let sub = stdio(&loaded, "subtable");
    assert_eq!(
        sub.env,
        map(&[("TOKEN", "${NOT_EXPANDED}")]),
        "Codex expands nothing in strings"
    );
    assert_eq!(
        server(&loaded, "subtable").settings.startup_timeout,
        Some(Duration::from_millis(2500))
    );
}

#[test]
fn gemini_reads_url_as_sse_http_url_as_streamable_and_expands_bare_and_braced() {
    let loaded = load(&home().join(".gemini/settings.json"));
    assert_eq!(loaded.files[0].host, Host::Gemini);
    let py = stdio(&loaded, "pythonTools");
    // `$word` outside `env` is text (Gemini names `$VAR` for `env` values only).
    assert_eq!(
        py.args,
        strings(&[
            "-m",
            "my_mcp_server",
            "--port",
            "8080",
            "--match",
            "^v$word"
        ])
    );
    assert_eq!(
        py.env,
        map(&[("API_KEY", "gemini-SECRET"), ("DB", "postgres://gem")])
    );
    assert_eq!(py.cwd.as_deref(), Some(Path::new("./mcp-servers/python")));
    let s = &server(&loaded, "pythonTools").settings;
    assert_eq!(s.tool_timeout, Some(Duration::from_secs(30)));
    assert!(s.tools.allows("safe_tool"));
    assert!(!s.tools.allows("dangerous_tool"), "exclude wins");
    assert!(!s.tools.allows("other"));
    let mut keys: Vec<&String> = s.unknown.keys().collect();
    keys.sort();
    assert_eq!(keys, ["description", "trust"]);
    let sse = http(&loaded, "sseServer");
    assert_eq!(sse.kind, HttpKind::Sse);
    assert_eq!(sse.headers["Authorization"], "Bearer sse-SECRET");
    let streamable = http(&loaded, "httpServer");
    assert_eq!(streamable.kind, HttpKind::Streamable);
    assert_eq!(streamable.headers["X-Api-Key"], "http-SECRET");
    assert_eq!(streamable.headers["X-Price"], "$5");
    assert_eq!(
        server(&loaded, "httpServer").settings.tool_timeout,
        Some(Duration::from_secs(5))
    );
    assert!(
        !server(&loaded, "experimental").settings.enabled,
        "mcp.excluded"
    );
    // The `oauth` block feeds the authorization; what mcpwire does not use is kept.
    let sse = server(&loaded, "sseServer");
    let oauth = sse.settings.oauth.as_ref().expect("oauth");
    assert_eq!(oauth.client_id.as_deref(), Some("gemini-client"));
    assert_eq!(oauth.scopes, Some(strings(&["openid", "mcp"])));
    assert_eq!(
        oauth.redirect_uri.as_deref(),
        Some("http://localhost:7777/oauth/callback")
    );
    assert!(sse.settings.unknown.contains_key("oauth.tokenParamName"));
}

#[test]
fn inspector_catalog_reads_era_timeouts_and_leaves_out_empty_env_values() {
    let path = home().join(".mcp-inspector/mcp.json");
    let loaded = load(&path);
    assert_eq!(loaded.files[0].host, Host::Inspector);
    let everything = server(&loaded, "everything");
    assert_eq!(everything.settings.era, Some(Era::Handshake));
    assert_eq!(
        everything.settings.startup_timeout,
        Some(Duration::from_secs(15))
    );
    assert_eq!(
        everything.settings.tool_timeout,
        Some(Duration::from_secs(60))
    );
    assert_eq!(stdio(&loaded, "everything").env, map(&[("LOG", "info")]));
    assert!(loaded.warnings.contains(&Warning::EmptyEnv {
        path: path.clone(),
        server: "everything".into(),
        name: "API_KEY".into()
    }));
    let modern = server(&loaded, "modern");
    assert_eq!(modern.settings.era, Some(Era::Stateless));
    assert_eq!(http(&loaded, "modern").kind, HttpKind::Streamable);
    assert_eq!(http(&loaded, "modern").headers["X-Team"], "a");
    let oauth = server(&loaded, "modern")
        .settings
        .oauth
        .clone()
        .expect("oauth");
    assert_eq!(oauth.client_id.as_deref(), Some("inspector-client"));
    let old = server(&loaded, "old");
    assert_eq!(old.settings.era, Some(Era::Auto));
    assert_eq!(old.settings.tool_timeout, None, "0 means none");
    assert_eq!(http(&loaded, "old").kind, HttpKind::Sse);
    let mut keys = unknown_keys(&loaded);
    keys.sort();
    assert_eq!(keys, [("modern".to_owned(), "roots".to_owned())]);
}

#[test]
fn generic_file_takes_every_common_key_and_every_generic_form() {
    let loaded = load(&home().join(".config/mcp/mcp.json"));
    assert_eq!(loaded.files[0].host, Host::Generic);
    let all = stdio(&loaded, "all-forms");
    assert_eq!(all.command, "/opt/tools/srv");
    assert_eq!(
        all.args,
        strings(&[
            "alice",
            "fallback",
            &home().to_string_lossy(),
            &project().to_string_lossy(),
            "file-SECRET-token"
        ])
    );
    assert_eq!(all.env["ENV_FILE_ONLY"], "from-env-file");
    assert_eq!(all.cwd.as_deref(), Some(project().as_path()));
    let remote = server(&loaded, "remote");
    assert_eq!(
        http(&loaded, "remote").url,
        "https://generic.example.com/mcp"
    );
    assert_eq!(http(&loaded, "remote").kind, HttpKind::Streamable);
    assert!(!remote.settings.enabled);
    assert_eq!(remote.settings.era, Some(Era::Stateless));
}

// ---------------------------------------------------------------------------------------------
// A host's usual places: the project's file first, then the user's.
// ---------------------------------------------------------------------------------------------

#[test]
fn load_host_reads_the_projects_file_first_then_the_users() {
    for (host, name, project_value, user_only) in [
        (
            Host::Cursor,
            "remote",
            "https://mcp.example.com/mcp",
            "global-only",
        ),
        (
            Host::Gemini,
            "httpServer",
            "https://workspace.example.com/mcp",
            "pythonTools",
        ),
    ] {
        let loaded = loader().load_host(host).unwrap();
        assert_eq!(loaded.files.len(), 2, "{host}");
        assert_eq!(loaded.files[0].scope, Scope::Project);
        assert_eq!(loaded.files[1].scope, Scope::User);
        assert_eq!(http(&loaded, name).url, project_value, "{host}");
        assert_eq!(server(&loaded, name).origin.scope, Scope::Project);
        assert!(loaded.get(user_only).is_some(), "{host}");
        assert!(
            loaded.warnings.iter().any(|w| matches!(
                w,
                Warning::Shadowed { server, ignored, .. }
                    if server == name && ignored.starts_with(home())
            )),
            "{host}: {:?}",
            loaded.warnings
        );
    }
    let codex = loader().load_host(Host::Codex).unwrap();
    assert_eq!(stdio(&codex, "docs").command, "project-docs");
    assert!(codex.get("figma").is_some());
    let zed = loader().load_host(Host::Zed).unwrap();
    assert_eq!(stdio(&zed, "postgres").command, "project-postgres");
    let vscode = loader()
        .on_input(|_| Ok("x".into()))
        .load_host(Host::VsCode)
        .unwrap();
    assert_eq!(vscode.files.len(), 2);
    assert!(vscode.get("memory").is_some() && vscode.get("fetch").is_some());
}

#[test]
fn claude_code_local_scope_wins_over_the_project_file_which_wins_over_the_user_file() {
    // `~/.claude.json` keys the local scope by the project's absolute path: write one for a
    // copy of the fixture project.
    let home = temp_dir("claude-home");
    let project = temp_dir("claude-project");
    std::fs::copy(
        fixtures().join("project/.mcp.json"),
        project.join(".mcp.json"),
    )
    .unwrap();
    let user = std::fs::read_to_string(fixtures().join("home/.claude.json"))
        .unwrap()
        .replace(
            "\"/work/project\"",
            &serde_json::to_string(&project.to_string_lossy()).unwrap(),
        );
    std::fs::write(home.join(".claude.json"), user).unwrap();
    let loaded = Loader::new(&home, env())
        .project(&project)
        .load_host(Host::ClaudeCode)
        .unwrap();
    assert_eq!(stdio(&loaded, "shared").command, "shared-from-local");
    assert_eq!(server(&loaded, "shared").origin.scope, Scope::Local);
    assert_eq!(server(&loaded, "github").origin.scope, Scope::Project);
    assert_eq!(server(&loaded, "user-only").origin.scope, Scope::User);
    let shadowed = loaded
        .warnings
        .iter()
        .filter(|w| matches!(w, Warning::Shadowed { server, .. } if server == "shared"))
        .count();
    assert_eq!(shadowed, 2, "the project's and the user's `shared`");
    // Without the local entry, the project's file wins over the user's.
    std::fs::write(
        home.join(".claude.json"),
        r#"{"mcpServers": {"shared": {"command": "shared-from-user"}}}"#,
    )
    .unwrap();
    let loaded = Loader::new(&home, env())
        .project(&project)
        .load_host(Host::ClaudeCode)
        .unwrap();
    assert_eq!(stdio(&loaded, "shared").command, "shared-from-project");
}

#[test]
fn claude_code_starts_a_project_server_only_when_approved_and_none_the_user_disabled() {
    let home = temp_dir("approvals-home");
    let project = temp_dir("approvals-project");
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers": {"approved": {"command": "a"}, "unapproved": {"command": "b"},
            "refused": {"command": "c"}}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.local.json"),
        r#"{"enabledMcpjsonServers": ["approved", "refused"], "disabledMcpjsonServers": ["refused"]}"#,
    )
    .unwrap();
    let entry = serde_json::json!({
        "mcpServers": {"user-on": {"command": "u"}, "user-off": {"command": "v"}},
        "projects": {project.to_string_lossy(): {"disabledMcpServers": ["user-off"]}}
    });
    std::fs::write(home.join(".claude.json"), entry.to_string()).unwrap();
    let loaded = Loader::new(&home, env())
        .project(&project)
        .load_host(Host::ClaudeCode)
        .unwrap();
    let enabled: Vec<&str> = loaded.enabled().map(|s| s.name.as_str()).collect();
    assert_eq!(enabled, ["approved", "user-on"]);
    let mut refused: Vec<(String, bool)> = loaded
        .warnings
        .iter()
        .filter_map(|w| match w {
            Warning::NotApproved {
                server, disabled, ..
            } => Some((server.clone(), *disabled)),
            _ => None,
        })
        .collect();
    refused.sort();
    assert_eq!(
        refused,
        [
            ("refused".to_owned(), true),
            ("unapproved".to_owned(), false),
            ("user-off".to_owned(), true),
        ]
    );
    // `enableAllProjectMcpServers` approves the rest; a refusal still wins.
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"enableAllProjectMcpServers": true}"#,
    )
    .unwrap();
    let loaded = Loader::new(&home, env())
        .project(&project)
        .load_host(Host::ClaudeCode)
        .unwrap();
    let enabled: Vec<&str> = loaded.enabled().map(|s| s.name.as_str()).collect();
    assert_eq!(enabled, ["approved", "unapproved", "user-on"]);
}

#[test]
fn discover_lists_existing_files_the_projects_first() {
    let found = loader().discover();
    let listed: Vec<(Host, Scope, String)> = found
        .iter()
        .map(|p| {
            let rel = p
                .path
                .strip_prefix(fixtures())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (p.host, p.scope, rel)
        })
        .collect();
    let expected = [
        (Host::ClaudeCode, Scope::Project, "project/.mcp.json"),
        (Host::Cursor, Scope::Project, "project/.cursor/mcp.json"),
        (Host::VsCode, Scope::Project, "project/.vscode/mcp.json"),
        (
            Host::Gemini,
            Scope::Project,
            "project/.gemini/settings.json",
        ),
        (Host::Codex, Scope::Project, "project/.codex/config.toml"),
        (Host::Zed, Scope::Project, "project/.zed/settings.json"),
        (Host::ClaudeCode, Scope::User, "home/.claude.json"),
        (Host::Cursor, Scope::User, "home/.cursor/mcp.json"),
    ];
    for (i, (host, scope, rel)) in expected.iter().enumerate() {
        assert_eq!(listed[i], (*host, *scope, rel.to_string()), "{listed:#?}");
    }
    for host in [
        Host::Windsurf,
        Host::Copilot,
        Host::Inspector,
        Host::Generic,
        Host::Zed,
        Host::VsCode,
    ] {
        assert!(
            listed
                .iter()
                .any(|(h, s, _)| *h == host && *s == Scope::User),
            "{host}: {listed:#?}"
        );
    }
    if cfg!(target_os = "linux") {
        assert!(listed.iter().any(|(h, _, _)| *h == Host::ClaudeDesktop));
    }
    let empty = Loader::new(temp_dir("empty-home"), env()).discover();
    assert!(empty.is_empty(), "{empty:?}");
}

#[test]
fn a_file_is_recognised_by_its_shape_when_its_name_says_nothing() {
    let loaded = load_text("servers.json", r#"{"servers": {"a": {"command": "x"}}}"#).unwrap();
    assert_eq!(
        (loaded.files[0].host, loaded.files[0].detection),
        (Host::VsCode, Detection::Shape)
    );
    let loaded = load_text("z.json", r#"{"context_servers": {"a": {"command": "x"}}}"#).unwrap();
    assert_eq!(loaded.files[0].host, Host::Zed);
    let loaded = load_text("servers", "[mcp_servers.a]\ncommand = \"x\"\n").unwrap();
    assert_eq!(
        (loaded.files[0].host, loaded.files[0].detection),
        (Host::Codex, Detection::Shape)
    );
    let loaded = load_text("any.json", r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    assert_eq!(loaded.files[0].host, Host::Generic);
    let loaded = Loader::new(home(), env())
        .load_file_as(home().join(".config/mcp/mcp.json"), Host::ClaudeDesktop)
        .unwrap();
    assert_eq!(
        (loaded.files[0].host, loaded.files[0].detection),
        (Host::ClaudeDesktop, Detection::Given)
    );
    assert_eq!(
        stdio(&loaded, "all-forms").command,
        "${TOOLS_DIR}/srv",
        "read as Claude Desktop's, nothing is expanded"
    );
}

// ---------------------------------------------------------------------------------------------
// Every error path.
// ---------------------------------------------------------------------------------------------

fn error(file_name: &str, text: &str) -> ConfigError {
    match load_text(file_name, text) {
        Ok(loaded) => panic!("loaded {loaded:?}"),
        Err(e) => e,
    }
}

#[test]
fn malformed_json_names_the_line_and_column() {
    let e = error(
        "bad.json",
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\" \"x\"}\n  }\n}\n",
    );
    let ConfigError::Syntax { line, column, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!((*line, *column), (3, 21), "{e}");
    assert!(e.to_string().contains("bad.json:3:21: "), "{e}");
}

#[test]
fn malformed_toml_names_the_line_and_column() {
    let e = error(
        "config.toml",
        "[mcp_servers.a]\ncommand = \"x\"\nargs = [\"a\" \"b\"]\n",
    );
    let ConfigError::Syntax { line, column, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(*line, 3, "{e}");
    assert!((9..=14).contains(column), "{e}");
}

#[test]
fn an_unknown_transport_is_an_error_naming_it() {
    let e = error(
        ".mcp.json",
        r#"{"mcpServers": {"ws": {"type": "websocket", "url": "ws://x"}}}"#,
    );
    assert!(
        matches!(&e, ConfigError::UnknownTransport { server, value, .. } if server == "ws" && value == "websocket"),
        "{e:?}"
    );
}

#[test]
fn an_unset_variable_names_the_variable_the_field_and_the_server() {
    let cases = [
        (
            ".mcp.json",
            r#"{"mcpServers": {"gh": {"type": "http", "url": "https://x", "headers": {"Authorization": "Bearer ${NOPE}"}}}}"#,
            "gh",
            "headers.Authorization",
            "`${NOPE}`",
        ),
        (
            ".cursor/mcp.json",
            r#"{"mcpServers": {"c": {"command": "x", "env": {"K": "${env:NOPE}"}}}}"#,
            "c",
            "env.K",
            "`${env:NOPE}`",
        ),
        (
            ".gemini/settings.json",
            r#"{"mcpServers": {"g": {"command": "x", "env": {"K": "$NOPE"}}}}"#,
            "g",
            "env.K",
            "`$NOPE`",
        ),
        (
            ".codex/config.toml",
            "[mcp_servers.k]\nurl = \"https://x\"\nbearer_token_env_var = \"NOPE\"\n",
            "k",
            "bearer_token_env_var",
            "`NOPE`",
        ),
        (
            ".codex/config.toml",
            "[mcp_servers.k]\nurl = \"https://x\"\nenv_http_headers = { \"X-Key\" = \"NOPE\" }\n",
            "k",
            "env_http_headers.X-Key",
            "`NOPE`",
        ),
    ];
    for (file, text, name, field_name, var) in cases {
        let e = error(file, text);
        let ConfigError::UnsetVariable {
            server,
            field,
            variable,
            ..
        } = &e
        else {
            panic!("{file}: {e:?}")
        };
        assert_eq!(
            (server.as_str(), field.as_str(), variable.as_str()),
            (name, field_name, var),
            "{file}"
        );
        assert!(e.to_string().contains(var), "{e}");
        assert_eq!(e.server(), Some(name));
    }
}

#[test]
fn a_server_with_neither_command_nor_url_is_an_error() {
    let e = error(".mcp.json", r#"{"mcpServers": {"empty": {"args": ["x"]}}}"#);
    assert!(
        matches!(&e, ConfigError::NoTransport { server, .. } if server == "empty"),
        "{e:?}"
    );
    let e = error("config.toml", "[mcp_servers.empty]\nargs = [\"x\"]\n");
    assert!(matches!(&e, ConfigError::NoTransport { .. }), "{e:?}");
    let e = error(".mcp.json", r#"{"mcpServers": {"s": {"type": "stdio"}}}"#);
    assert!(
        matches!(&e, ConfigError::Missing { field, .. } if field == "command"),
        "{e:?}"
    );
    let e = error(".mcp.json", r#"{"mcpServers": {"h": {"type": "http"}}}"#);
    assert!(
        matches!(&e, ConfigError::Missing { field, .. } if field == "url"),
        "{e:?}"
    );
}

#[test]
fn a_gemini_dollar_word_outside_env_is_kept_as_written_not_an_unset_variable() {
    let loaded = Loader::new(home(), env())
        .load_str(
            r#"{"mcpServers": {
                "sh": {"command": "sh", "args": ["-c", "echo $1 $NOPE"], "cwd": "/srv/$x",
                       "env": {"K": "$PORT"}},
                "web": {"httpUrl": "https://h/mcp?q=$v", "headers": {"X-Cost": "$NOPE"}}
            }}"#,
            ".gemini/settings.json",
            None,
        )
        .unwrap();
    let sh = stdio(&loaded, "sh");
    assert_eq!(sh.args, strings(&["-c", "echo $1 $NOPE"]));
    assert_eq!(sh.cwd.as_deref(), Some(Path::new("/srv/$x")));
    assert_eq!(sh.env, map(&[("K", "8080")]), "`env` still expands `$VAR`");
    let web = http(&loaded, "web");
    assert_eq!(web.url, "https://h/mcp?q=$v");
    assert_eq!(web.headers["X-Cost"], "$NOPE");
}

#[test]
fn two_transports_and_disagreeing_flags_are_errors() {
    let e = error(
        ".mcp.json",
        r#"{"mcpServers": {"both": {"command": "x", "url": "https://x"}}}"#,
    );
    assert!(matches!(&e, ConfigError::Ambiguous { .. }), "{e:?}");
    let e = error(
        ".gemini/settings.json",
        r#"{"mcpServers": {"both": {"url": "https://x", "httpUrl": "https://y"}}}"#,
    );
    assert!(
        matches!(&e, ConfigError::Ambiguous { first, second, .. } if first == "httpUrl" && second == "url"),
        "{e:?}"
    );
    let e = error(
        "config.toml",
        "[mcp_servers.both]\ncommand = \"x\"\nurl = \"https://x\"\n",
    );
    assert!(matches!(&e, ConfigError::Ambiguous { .. }), "{e:?}");
    let e = error(
        "mcp.json",
        r#"{"mcpServers": {"f": {"command": "x", "enabled": true, "disabled": true}}}"#,
    );
    assert!(matches!(&e, ConfigError::Conflict { .. }), "{e:?}");
}

#[test]
fn wrong_types_and_values_are_errors_naming_the_field() {
    for (text, field_name) in [
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": "-y"}}}"#,
            "args",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "args": ["ok", 1]}}}"#,
            "args[1]",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "env": {"K": ["v"]}}}}"#,
            "env.K",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}"#,
            "disabled",
        ),
        (
            r#"{"mcpServers": {"a": {"command": "x", "protocolEra": "2025"}}}"#,
            "protocolEra",
        ),
        (r#"{"mcpServers": {"a": "npx server"}}"#, "a"),
        (r#"{"mcpServers": ["a"]}"#, "mcpServers"),
    ] {
        let e = error("mcp.json", text);
        assert!(
            matches!(&e, ConfigError::Invalid { field, .. } if field == field_name),
            "{text}: {e:?}"
        );
    }
    let e = error(
        ".gemini/settings.json",
        r#"{"mcpServers": {"a": {"command": "x", "timeout": -5}}}"#,
    );
    assert!(
        matches!(&e, ConfigError::Invalid { field, .. } if field == "timeout"),
        "{e:?}"
    );
}

#[test]
fn a_form_the_host_does_not_expand_is_an_error_with_the_form_it_would() {
    let e = error(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"c": {"command": "x", "env": {"K": "${API_KEY}"}}}}"#,
    );
    let ConfigError::UnsupportedVariable {
        expression, host, ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(expression, "`${API_KEY}`");
    assert_eq!(*host, Host::Cursor);
    assert_eq!(e.hint().as_deref(), Some("write `${env:API_KEY}`"));
    assert!(
        e.to_string()
            .ends_with("holds `${API_KEY}`, which Cursor does not expand (write `${env:API_KEY}`)"),
        "{e}"
    );
    let e = error(
        ".vscode/mcp.json",
        r#"{"servers": {"v": {"command": "${command:pick}"}}}"#,
    );
    assert!(
        matches!(&e, ConfigError::UnsupportedVariable { .. }),
        "{e:?}"
    );
    assert_eq!(e.hint(), None);
}

#[test]
fn workspace_and_input_errors() {
    let text = r#"{"servers": {"v": {"command": "${workspaceFolder}/srv"}}}"#;
    let dir = temp_dir("no-workspace");
    std::fs::write(dir.join("servers.json"), text).unwrap();
    let e = Loader::new(home(), env())
        .load_file(dir.join("servers.json"))
        .unwrap_err();
    assert!(
        matches!(&e, ConfigError::NoWorkspace { field, .. } if field == "command"),
        "{e:?}"
    );
    let path = project().join(".vscode/mcp.json");
    let e = loader().load_file(&path).unwrap_err();
    assert!(
        matches!(&e, ConfigError::InputNeeded { id, server, .. } if id == "region" && server == "fetch"),
        "{e:?}"
    );
    let e = loader()
        .on_input(|_| Err("cancelled".into()))
        .load_file(&path)
        .unwrap_err();
    assert!(
        matches!(&e, ConfigError::InputFailed { reason, .. } if reason == "cancelled"),
        "{e:?}"
    );
    let e = error(
        ".vscode/mcp.json",
        r#"{"inputs": [], "servers": {"v": {"command": "x", "args": ["${input:undeclared}"]}}}"#,
    );
    assert!(
        matches!(&e, ConfigError::UnknownInput { id, .. } if id == "undeclared"),
        "{e:?}"
    );
    let e = error(".vscode/mcp.json", r#"{"inputs": {}, "servers": {}}"#);
    assert!(
        matches!(&e, ConfigError::Invalid { field, .. } if field == "inputs"),
        "{e:?}"
    );
}

#[test]
fn referenced_file_errors() {
    let e = error(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"c": {"command": "x", "envFile": "missing.env"}}}"#,
    );
    assert!(
        matches!(&e, ConfigError::Referenced { field, file, .. } if field == "envFile" && file.ends_with("missing.env")),
        "{e:?}"
    );
    let dir = temp_dir("bad-env");
    std::fs::write(dir.join("bad.env"), "A=1\nnot a pair\n").unwrap();
    std::fs::write(
        dir.join("mcp.json"),
        r#"{"mcpServers": {"c": {"command": "x", "envFile": "bad.env"}}}"#,
    )
    .unwrap();
    let e = Loader::new(home(), env())
        .project(&dir)
        .load_file(dir.join("mcp.json"))
        .unwrap_err();
    assert!(
        matches!(&e, ConfigError::EnvFileSyntax { line: 2, server, .. } if server == "c"),
        "{e:?}"
    );
    let e = error(
        "mcp_config.json",
        r#"{"mcpServers": {"w": {"command": "x", "args": ["${file:/no/such/file}"]}}}"#,
    );
    assert!(
        matches!(&e, ConfigError::Referenced { field, .. } if field == "args[0]"),
        "{e:?}"
    );
}

#[test]
fn unreadable_and_unrecognised_files_are_errors() {
    let e = loader()
        .load_file(fixtures().join("no-such.json"))
        .unwrap_err();
    assert!(matches!(&e, ConfigError::Read { .. }), "{e:?}");
    let e = error("other.json", r#"{"name": "not a configuration"}"#);
    assert!(matches!(&e, ConfigError::Unrecognised { .. }), "{e:?}");
    assert!(e.to_string().contains("other.json"), "{e}");
}

#[test]
fn failures_can_be_isolated_and_a_disabled_servers_never_fails_the_load() {
    let text = r#"{"mcpServers": {
        "ok": {"command": "x"},
        "off": {"command": "${NOPE}", "disabled": true},
        "broken": {"type": "carrier-pigeon", "url": "x"}
    }}"#;
    let e = error(".mcp.json", text);
    assert_eq!(e.server(), Some("broken"));
    let dir = temp_dir("isolate");
    std::fs::write(dir.join(".mcp.json"), text).unwrap();
    let loaded = Loader::new(home(), env())
        .isolate_failures()
        .load_file(dir.join(".mcp.json"))
        .unwrap();
    assert_eq!(names(&loaded), ["ok"]);
    let failed: Vec<Option<&str>> = loaded.failed.iter().map(ConfigError::server).collect();
    assert_eq!(failed, [Some("off"), Some("broken")]);
    let only = Loader::new(home(), env())
        .only(["ok"])
        .load_file(dir.join(".mcp.json"))
        .unwrap();
    assert_eq!(names(&only), ["ok"]);
    assert!(only.failed.is_empty(), "other servers are not read at all");
}

#[test]
fn duplicate_names_and_unexpanded_look_alikes_are_reported() {
    let loaded = load_text(
        ".mcp.json",
        r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#,
    )
    .unwrap();
    assert_eq!(stdio(&loaded, "a").command, "y", "the last one counts");
    assert!(loaded
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::DuplicateKey { key, .. } if key == "mcpServers.a")));
}

// ---------------------------------------------------------------------------------------------
// Secrets stay secret.
// ---------------------------------------------------------------------------------------------

/// Every fixture, loaded.
fn every_fixture() -> Vec<Loaded> {
    let mut out = Vec::new();
    for place in loader().discover() {
        let loaded = vscode_loader(Arc::default())
            .load_file(&place.path)
            .unwrap_or_else(|e| panic!("{}: {e}", place.path.display()));
        out.push(loaded);
    }
    out.push(
        Loader::new(home(), env())
            .project("/work/project")
            .load_file(home().join(".claude.json"))
            .unwrap(),
    );
    out
}

#[test]
fn nothing_printed_holds_a_secret() {
    let all = every_fixture();
    assert!(all.len() >= 12, "{}", all.len());
    let mut printed = 0;
    for loaded in &all {
        let mut texts = vec![format!("{loaded:?}"), format!("{loaded:#?}")];
        for s in &loaded.servers {
            texts.push(format!("{s}"));
            texts.push(format!("{s:?}"));
            texts.push(format!("{:?}", s.settings));
            // The core's own `Debug` hides env and header values (not the command line).
            let (debug, values): (String, Vec<&String>) = match &s.config {
                ServerConfig::Http(h) => (format!("{h:?}"), h.headers.values().collect()),
                ServerConfig::Stdio(st) => (format!("{st:?}"), st.env.values().collect()),
            };
            for v in values.iter().filter(|v| v.len() > 3) {
                assert!(!debug.contains(v.as_str()), "{debug}");
            }
        }
        texts.extend(loaded.warnings.iter().map(|w| w.to_string()));
        for text in texts.iter().filter(|t| !t.starts_with("{\"")) {
            printed += 1;
            assert!(!text.contains("SECRET"), "a secret was printed: {text}");
        }
    }
    assert!(printed > 50);
}

#[test]
fn secrets_print_as_stars_where_they_were_and_the_rest_as_written() {
    let loaded = load(&project().join(".mcp.json"));
    let github = server(&loaded, "github");
    let line = github.to_string();
    assert_eq!(
        line,
        "github: Streamable HTTP https://api.githubcopilot.com/mcp/ [Authorization: ***, X-Team: ***]"
    );
    let db = format!("{}", server(&loaded, "db"));
    assert_eq!(
        db, "db: stdio `*** --dsn postgres://***@localhost/app $HOME`",
        "values from the environment are redacted, the rest is shown"
    );
    let debug = format!("{:?}", server(&loaded, "db"));
    assert!(debug.contains("\"DB_PASSWORD\", \"***\""), "{debug}");
    let desktop = load(&home().join(".config/Claude/claude_desktop_config.json"));
    let debug = format!("{:?}", server(&desktop, "filesystem"));
    assert!(
        debug.contains("/home/u/Documents") && !debug.contains("literal-SECRET"),
        "{debug}"
    );
    let codex = load(&home().join(".codex/config.toml"));
    assert_eq!(
        server(&codex, "figma").to_string(),
        "figma: Streamable HTTP https://mcp.figma.com/mcp [Authorization: ***, X-Bar: ***, X-Foo: literal]"
    );
    let off = server(&codex, "off").to_string();
    assert!(off.ends_with("(disabled)"), "{off}");
}

#[test]
fn errors_never_hold_values() {
    let e = error(
        ".mcp.json",
        r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "sk-SECRET-live"}, "enabled": "sk-SECRET-2"}}}"#,
    );
    assert!(!e.to_string().contains("SECRET"), "{e}");
    assert!(!format!("{e:?}").contains("SECRET"), "{e:?}");
    let e = error(
        "config.toml",
        "[mcp_servers.a]\ncommand = \"x\"\nenv = { K = \"sk-SECRET-live\" \n",
    );
    assert!(!e.to_string().contains("SECRET"), "{e}");
    let e = error(
        "x.json",
        "{\"mcpServers\": {\"a\": {\"command\": \"sk-SECRET\" \"x\"}}}",
    );
    assert!(!e.to_string().contains("SECRET"), "{e}");
}

/// `${workspaceFolder}` is the project's folder as an absolute path without `.` or `..`,
/// however the file was named: relative to the current directory, or through `..`.
#[test]
#[cfg(unix)]
fn the_workspace_is_absolute_and_normalised_whatever_path_names_the_file() {
    let dir = temp_dir("relative");
    let project = dir.join("proj");
    std::fs::create_dir_all(project.join(".vscode")).unwrap();
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::write(
        project.join(".vscode/mcp.json"),
        r#"{"servers": {"v": {"command": "${workspaceFolder}/srv",
            "args": ["${workspaceFolderBasename}"]}}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".cursor")).unwrap();
    std::fs::write(
        project.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"c": {"command": "${workspaceFolder}/srv"}}}"#,
    )
    .unwrap();
    // The same file from the current directory, up to the root and down again.
    let cwd = std::env::current_dir().unwrap();
    let up = "../".repeat(cwd.components().count() - 1);
    let below_root = project.strip_prefix("/").unwrap();
    let relative = PathBuf::from(format!("{up}{}", below_root.display()));
    assert!(relative.is_relative());
    let absolute = &project;
    let named = [
        relative.join(".vscode/mcp.json"),
        project.join("sub/../.vscode/./mcp.json"),
        project.join(".vscode/mcp.json"),
    ];
    for path in named {
        let loaded = Loader::new(home(), env()).load_file(&path).unwrap();
        let v = stdio(&loaded, "v");
        assert_eq!(
            v.command,
            format!("{}/srv", absolute.display()),
            "{}",
            path.display()
        );
        assert_eq!(v.args, ["proj"], "{}", path.display());
    }
    let loaded = Loader::new(home(), env())
        .load_file(relative.join(".cursor/mcp.json"))
        .unwrap();
    assert_eq!(
        stdio(&loaded, "c").command,
        format!("{}/srv", absolute.display())
    );
    // The loader's own project, given relative, is made absolute too.
    let elsewhere = dir.join("servers.json");
    std::fs::write(
        &elsewhere,
        r#"{"servers": {"v": {"command": "${workspaceFolder}/srv"}}}"#,
    )
    .unwrap();
    let loaded = Loader::new(home(), env())
        .project(relative.join("sub/.."))
        .load_file(&elsewhere)
        .unwrap();
    assert_eq!(
        stdio(&loaded, "v").command,
        format!("{}/srv", absolute.display())
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_workspace_is_the_project_holding_the_file_else_the_loaders() {
    // A project's own file: its project, whatever the loader was given.
    let loaded = Loader::new(home(), env())
        .project("/elsewhere")
        .load_file(project().join(".cursor/mcp.json"))
        .unwrap();
    assert_eq!(
        stdio(&loaded, "local").command,
        format!("{}/bin/server", project().display())
    );
    // The user's file (a host folder in the home directory): the loader's project.
    let home = temp_dir("user-home");
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    std::fs::write(
        home.join(".cursor/mcp.json"),
        r#"{"mcpServers": {"u": {"command": "${workspaceFolder}/srv"}}}"#,
    )
    .unwrap();
    let loaded = Loader::new(&home, env())
        .project("/work/p")
        .load_file(home.join(".cursor/mcp.json"))
        .unwrap();
    assert_eq!(stdio(&loaded, "u").command, "/work/p/srv");
    let e = Loader::new(&home, env())
        .load_file(home.join(".cursor/mcp.json"))
        .unwrap_err();
    assert!(matches!(e, ConfigError::NoWorkspace { .. }), "{e:?}");
}
