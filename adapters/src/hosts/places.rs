//! Where each host keeps its files (hosts.md §1.1): the project's first, then the user's, on
//! Linux, macOS and Windows. The home and project directories and the environment are inputs,
//! so nothing here reads the real home unless asked to.

use std::path::{Path, PathBuf};

use super::host::Host;
use super::server::Scope;
use super::vars::env::Environment;
use crate::os::Os;

/// A file a host may keep its servers in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Place {
    /// The file.
    pub path: PathBuf,
    /// The host it belongs to.
    pub host: Host,
    /// Which of the host's scopes it is.
    pub scope: Scope,
}

/// What the places are computed from.
pub(crate) struct Dirs<'a> {
    pub os: Os,
    pub home: &'a Path,
    pub project: Option<&'a Path>,
    pub env: &'a dyn Environment,
}

impl Dirs<'_> {
    /// An absolute directory from the environment (a relative one is ignored, as the XDG
    /// specification says).
    fn env_dir(&self, name: &str) -> Option<PathBuf> {
        self.env
            .var(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    }

    /// `$XDG_CONFIG_HOME`, or `~/.config`.
    fn xdg_config(&self) -> PathBuf {
        self.env_dir("XDG_CONFIG_HOME")
            .unwrap_or_else(|| self.home.join(".config"))
    }

    /// `%APPDATA%`, or `~\AppData\Roaming`.
    fn app_data(&self) -> PathBuf {
        self.env_dir("APPDATA")
            .unwrap_or_else(|| self.home.join("AppData").join("Roaming"))
    }

    /// `~/Library/Application Support`.
    fn app_support(&self) -> PathBuf {
        self.home.join("Library").join("Application Support")
    }

    /// The per-user application data directory of the OS.
    fn app_config(&self) -> PathBuf {
        match self.os {
            Os::Linux => self.xdg_config(),
            Os::Mac => self.app_support(),
            Os::Windows => self.app_data(),
        }
    }
}

/// The files of `host`, in precedence order (the first one's servers win).
pub(crate) fn places(host: Host, d: &Dirs<'_>) -> Vec<Place> {
    let project = |rel: &[&str]| {
        d.project.map(|p| Place {
            path: rel.iter().fold(p.to_owned(), |acc, part| acc.join(part)),
            host,
            scope: Scope::Project,
        })
    };
    let user = |path: PathBuf| {
        Some(Place {
            path,
            host,
            scope: Scope::User,
        })
    };
    let home = d.home;
    let found: Vec<Option<Place>> = match host {
        Host::ClaudeDesktop => vec![user(
            d.app_config()
                .join("Claude")
                .join("claude_desktop_config.json"),
        )],
        // `~/.claude.json` also holds the project's "local" servers, which win over both.
        Host::ClaudeCode => vec![project(&[".mcp.json"]), user(home.join(".claude.json"))],
        Host::Cursor => vec![
            project(&[".cursor", "mcp.json"]),
            user(home.join(".cursor").join("mcp.json")),
        ],
        Host::VsCode => vec![
            project(&[".vscode", "mcp.json"]),
            user(d.app_config().join("Code").join("User").join("mcp.json")),
        ],
        Host::Copilot => vec![
            project(&[".mcp.json"]),
            user(
                d.env_dir("COPILOT_HOME")
                    .unwrap_or_else(|| home.join(".copilot"))
                    .join("mcp-config.json"),
            ),
        ],
        Host::Windsurf => vec![user(
            home.join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
        )],
        Host::Zed => vec![
            project(&[".zed", "settings.json"]),
            user(match d.os {
                Os::Linux => d.xdg_config().join("zed").join("settings.json"),
                // Zed keeps `~/.config/zed` on macOS too.
                Os::Mac => home.join(".config").join("zed").join("settings.json"),
                Os::Windows => d.app_data().join("Zed").join("settings.json"),
            }),
        ],
        Host::Codex => vec![
            project(&[".codex", "config.toml"]),
            user(
                d.env_dir("CODEX_HOME")
                    .unwrap_or_else(|| home.join(".codex"))
                    .join("config.toml"),
            ),
        ],
        Host::Gemini => vec![
            project(&[".gemini", "settings.json"]),
            user(home.join(".gemini").join("settings.json")),
        ],
        Host::Inspector => {
            vec![user(d.env_dir("MCP_CATALOG_PATH").unwrap_or_else(|| {
                home.join(".mcp-inspector").join("mcp.json")
            }))]
        }
        Host::Generic => vec![user(match d.os {
            Os::Windows => d.app_data().join("mcp").join("mcp.json"),
            Os::Linux | Os::Mac => d.xdg_config().join("mcp").join("mcp.json"),
        })],
    };
    found.into_iter().flatten().collect()
}

/// Every host's files, the projects' first, each path once, in the order hosts.md gives for
/// discovery (the hosts it does not list come after the ones it does).
pub(crate) fn all_places(d: &Dirs<'_>) -> Vec<Place> {
    use Host::*;
    const PROJECT: [Host; 7] = [ClaudeCode, Cursor, VsCode, Gemini, Codex, Zed, Copilot];
    const USER: [Host; 11] = [
        ClaudeCode,
        Cursor,
        ClaudeDesktop,
        Windsurf,
        Gemini,
        Codex,
        Generic,
        Inspector,
        VsCode,
        Zed,
        Copilot,
    ];
    let mut out: Vec<Place> = Vec::new();
    for (scope, hosts) in [(Scope::Project, &PROJECT[..]), (Scope::User, &USER[..])] {
        for place in hosts.iter().flat_map(|h| places(*h, d)) {
            if place.scope == scope && !out.iter().any(|p| p.path == place.path) {
                out.push(place);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn dirs<'a>(os: Os, env: &'a BTreeMap<String, String>) -> Dirs<'a> {
        Dirs {
            os,
            home: Path::new("/home/u"),
            project: Some(Path::new("/work/p")),
            env,
        }
    }

    fn paths(host: Host, d: &Dirs<'_>) -> Vec<String> {
        places(host, d)
            .into_iter()
            .map(|p| p.path.to_string_lossy().replace('\\', "/"))
            .collect()
    }

    #[test]
    fn linux_places_follow_each_hosts_documentation() {
        let env = BTreeMap::new();
        let d = dirs(Os::Linux, &env);
        assert_eq!(
            paths(Host::ClaudeDesktop, &d),
            ["/home/u/.config/Claude/claude_desktop_config.json"]
        );
        assert_eq!(
            paths(Host::ClaudeCode, &d),
            ["/work/p/.mcp.json", "/home/u/.claude.json"]
        );
        assert_eq!(
            paths(Host::Cursor, &d),
            ["/work/p/.cursor/mcp.json", "/home/u/.cursor/mcp.json"]
        );
        assert_eq!(
            paths(Host::VsCode, &d),
            [
                "/work/p/.vscode/mcp.json",
                "/home/u/.config/Code/User/mcp.json"
            ]
        );
        assert_eq!(
            paths(Host::Windsurf, &d),
            ["/home/u/.codeium/windsurf/mcp_config.json"]
        );
        assert_eq!(
            paths(Host::Zed, &d),
            [
                "/work/p/.zed/settings.json",
                "/home/u/.config/zed/settings.json"
            ]
        );
        assert_eq!(
            paths(Host::Codex, &d),
            ["/work/p/.codex/config.toml", "/home/u/.codex/config.toml"]
        );
        assert_eq!(
            paths(Host::Gemini, &d),
            [
                "/work/p/.gemini/settings.json",
                "/home/u/.gemini/settings.json"
            ]
        );
        assert_eq!(
            paths(Host::Copilot, &d),
            ["/work/p/.mcp.json", "/home/u/.copilot/mcp-config.json"]
        );
        assert_eq!(
            paths(Host::Inspector, &d),
            ["/home/u/.mcp-inspector/mcp.json"]
        );
        assert_eq!(paths(Host::Generic, &d), ["/home/u/.config/mcp/mcp.json"]);
    }

    #[test]
    fn environment_variables_move_the_user_files() {
        let env: BTreeMap<String, String> = [
            ("XDG_CONFIG_HOME", "/xdg"),
            ("CODEX_HOME", "/codex"),
            ("COPILOT_HOME", "/copilot"),
            ("MCP_CATALOG_PATH", "/cat/mcp.json"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let d = dirs(Os::Linux, &env);
        assert_eq!(
            paths(Host::ClaudeDesktop, &d),
            ["/xdg/Claude/claude_desktop_config.json"]
        );
        assert_eq!(paths(Host::Codex, &d)[1], "/codex/config.toml");
        assert_eq!(paths(Host::Copilot, &d)[1], "/copilot/mcp-config.json");
        assert_eq!(paths(Host::Inspector, &d), ["/cat/mcp.json"]);
        assert_eq!(paths(Host::Generic, &d), ["/xdg/mcp/mcp.json"]);
        assert_eq!(paths(Host::Zed, &d)[1], "/xdg/zed/settings.json");
        let relative: BTreeMap<String, String> =
            [("XDG_CONFIG_HOME".to_owned(), "rel".to_owned())].into();
        assert_eq!(
            paths(Host::Generic, &dirs(Os::Linux, &relative)),
            ["/home/u/.config/mcp/mcp.json"],
            "a relative XDG_CONFIG_HOME is ignored"
        );
    }

    #[test]
    fn macos_and_windows_places() {
        let env = BTreeMap::new();
        let mac = dirs(Os::Mac, &env);
        assert_eq!(
            paths(Host::ClaudeDesktop, &mac),
            ["/home/u/Library/Application Support/Claude/claude_desktop_config.json"]
        );
        assert_eq!(
            paths(Host::VsCode, &mac)[1],
            "/home/u/Library/Application Support/Code/User/mcp.json"
        );
        assert_eq!(
            paths(Host::Zed, &mac)[1],
            "/home/u/.config/zed/settings.json"
        );
        let win_env: BTreeMap<String, String> =
            [("APPDATA".to_owned(), "/appdata".to_owned())].into();
        let win = dirs(Os::Windows, &win_env);
        assert_eq!(
            paths(Host::ClaudeDesktop, &win),
            ["/appdata/Claude/claude_desktop_config.json"]
        );
        assert_eq!(paths(Host::VsCode, &win)[1], "/appdata/Code/User/mcp.json");
        assert_eq!(paths(Host::Zed, &win)[1], "/appdata/Zed/settings.json");
        let no_appdata = dirs(Os::Windows, &env);
        assert_eq!(
            paths(Host::ClaudeDesktop, &no_appdata),
            ["/home/u/AppData/Roaming/Claude/claude_desktop_config.json"]
        );
        assert_eq!(
            paths(Host::Cursor, &win)[1],
            "/home/u/.cursor/mcp.json",
            "home-relative places are the same everywhere"
        );
    }

    #[test]
    fn discovery_lists_project_files_first_and_each_path_once() {
        let env = BTreeMap::new();
        let all = all_places(&dirs(Os::Linux, &env));
        let first_user = all.iter().position(|p| p.scope == Scope::User).unwrap();
        assert!(all[..first_user].iter().all(|p| p.scope == Scope::Project));
        assert!(all[first_user..].iter().all(|p| p.scope == Scope::User));
        assert_eq!(all[0].path, Path::new("/work/p/.mcp.json"));
        assert_eq!(all[0].host, Host::ClaudeCode);
        assert_eq!(
            all.iter()
                .filter(|p| p.path == Path::new("/work/p/.mcp.json"))
                .count(),
            1
        );
        let users: Vec<Host> = all[first_user..].iter().map(|p| p.host).collect();
        assert_eq!(
            users[..8],
            [
                Host::ClaudeCode,
                Host::Cursor,
                Host::ClaudeDesktop,
                Host::Windsurf,
                Host::Gemini,
                Host::Codex,
                Host::Generic,
                Host::Inspector
            ]
        );
    }
}
