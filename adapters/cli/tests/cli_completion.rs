//! Shell completion with the live tools, through its environment entry point in bash
//! (`source <(COMPLETE=bash mcpwire)`): tool names and argument keys come from the tools cache
//! of the server the command line names, never from starting it.

mod common;

use std::path::Path;
use std::process::Command;

use common::{temp, BIN};

/// What bash's completion offers for `words` (the last one being completed), with the tools
/// cache in `cache`.
fn complete(cache: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect();
    let script = format!(
        r#"source <(COMPLETE=bash '{BIN}')
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_TYPE=9
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
_clap_complete_mcpwire mcpwire "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        words = quoted.join(" ")
    );
    let o = Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with("--"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn tool_names_and_argument_keys_come_from_the_tools_cache_without_starting_the_server() {
    let dir = temp("completion");
    let cache = dir.join("cache");
    // A server that leaves a mark when it starts, then is the demo server.
    let mark = dir.join("started");
    let script = dir.join("server.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho started >> '{}'\nexec '{BIN}' serve-demo\n",
            mark.display()
        ),
    )
    .unwrap();
    let server = format!("sh {}", script.display());

    // Never listed: nothing to offer yet, and nothing is started to find out.
    let offered = complete(&cache, &["mcpwire", "--stdio", &server, "call", ""]);
    assert_eq!(offered, Vec::<String>::new());
    assert!(!mark.exists(), "completion started the server");

    // A command that lists the tools keeps them.
    let o = Command::new(BIN)
        .args(["--stdio", &server, "tools"])
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let starts = || std::fs::read_to_string(&mark).unwrap().lines().count();
    assert_eq!(starts(), 1);

    let offered = complete(&cache, &["mcpwire", "--stdio", &server, "call", ""]);
    for tool in ["echo", "add", "slow", "ask"] {
        assert!(offered.contains(&tool.to_owned()), "{tool}: {offered:?}");
    }
    let offered = complete(&cache, &["mcpwire", "--stdio", &server, "call", "ec"]);
    assert_eq!(offered, ["echo"]);
    let offered = complete(&cache, &["mcpwire", "--stdio", &server, "tools", "ad"]);
    assert_eq!(offered, ["add"]);
    // The tool's argument keys, those not given yet.
    let offered = complete(&cache, &["mcpwire", "--stdio", &server, "call", "add", ""]);
    assert_eq!(offered, ["a=", "b="]);
    let offered = complete(
        &cache,
        &["mcpwire", "--stdio", &server, "call", "add", "a=1", ""],
    );
    assert_eq!(offered, ["b="]);
    assert_eq!(starts(), 1, "completion started the server");

    // Another server's cache is its own.
    let offered = complete(&cache, &["mcpwire", "--stdio", "sh other.sh", "call", ""]);
    assert_eq!(offered, Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The command line's README's way to install the bash completion script works in a home directory where
/// its folder does not exist yet.
#[test]
fn the_readme_s_completions_command_works_in_a_new_home() {
    let readme = include_str!("../README.md");
    let command = readme
        .lines()
        .find(|l| l.contains("mcpwire completions bash >"))
        .expect("the README installs the bash completion")
        .trim()
        .replace("&& mcpwire completions", &format!("&& '{BIN}' completions"));
    let home = temp("completion-home");
    let o = Command::new("bash")
        .args(["-c", &command])
        .env("HOME", &home)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{command}: {err}");
    let script = home.join(".local/share/bash-completion/completions/mcpwire");
    let script = std::fs::read_to_string(&script).expect("the script was written");
    assert!(script.contains("mcpwire"), "{script}");
    let _ = std::fs::remove_dir_all(&home);
}

/// Writes `n` cache entries `<prefix>NNN.json` into `dir`, each last written `age_days` (plus
/// its index in seconds) ago.
fn entries(dir: &Path, prefix: &str, n: usize, age_days: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let now = std::time::SystemTime::now();
    for i in 0..n {
        let path = dir.join(format!("{prefix}{i:03}.json"));
        std::fs::write(&path, r#"{"mcpwireCache":1,"lists":{}}"#).unwrap();
        let at = now - std::time::Duration::from_secs(age_days * 24 * 3600 + i as u64);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(at).unwrap();
    }
}

/// Keeping a server's tools keeps the cache folder within its limits: one file per server
/// ever reached would grow without end. Entries not written for 30 days go, then the least
/// recently written beyond 256.
#[test]
fn keeping_a_list_prunes_the_tools_cache() {
    let dir = temp("completion-prune");
    let cache = dir.join("cache");
    let folder = cache.join("mcpwire");
    entries(&folder, "aged", 5, 31);
    entries(&folder, "recent", 300, 1);
    let server = format!("{BIN} serve-demo");
    let o = Command::new(BIN)
        .args(["--stdio", &server, "tools"])
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 256, "{} files", names.len());
    assert!(!names.iter().any(|n| n.starts_with("aged")), "{names:?}");
    // This server's own entry, just written, then the most recently written of the others.
    let recent: Vec<&String> = names.iter().filter(|n| n.starts_with("recent")).collect();
    assert_eq!(recent.len(), 255);
    assert_eq!(recent.last().map(|s| s.as_str()), Some("recent254.json"));
    let offered = complete(&cache, &["mcpwire", "--stdio", &server, "call", "ec"]);
    assert_eq!(offered, ["echo"]);
    let _ = std::fs::remove_dir_all(&dir);
}
