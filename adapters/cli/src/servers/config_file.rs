//! `--config FILE [--server NAME]`: a server from any host's configuration file, its
//! variables expanded from this process's environment, its inputs asked on the terminal.

use std::io::{BufRead, IsTerminal};
use std::path::Path;

use mcpwire::hosts::{Host, InputSpec, Loaded, LoadedServer, Loader};

use crate::exit_codes;
use crate::failure::Failure;

/// The server named `name` (or the file's only enabled server), with what the file says about
/// running it (its era, its timeouts).
pub(crate) fn server(
    path: &Path,
    name: Option<&str>,
    verbose: bool,
) -> Result<LoadedServer, Failure> {
    let loaded = load(path, name, verbose)?;
    pick(path, &loaded, name, verbose)
}

/// Reads `path`: only the server `name` if given (no other server's variables or inputs are
/// needed), else every server, a server that cannot be read kept among the failures. Inputs
/// are asked on the terminal; with `verbose`, the file's reading and its warnings are told.
pub(crate) fn load(path: &Path, name: Option<&str>, verbose: bool) -> Result<Loaded, Failure> {
    let usage = |message: String| Failure::new(exit_codes::USAGE, message);
    let mut loader = Loader::from_process()
        .map_err(|e| usage(e.to_string()))?
        .on_input(ask);
    loader = match name {
        // Only that server: no other server's variables or inputs are needed.
        Some(name) => loader.only([name]),
        None => loader.isolate_failures(),
    };
    let loaded = loader.load_file(path).map_err(|e| usage(e.to_string()))?;
    if verbose {
        for f in &loaded.files {
            errln!(
                "· {}: read as {} ({})",
                f.path.display(),
                whose_file(f.host),
                f.detection
            );
        }
        for w in &loaded.warnings {
            errln!("· warning: {w}");
        }
    }
    Ok(loaded)
}

/// The server named `name` in `loaded` (read from `path`), or its only enabled server.
fn pick(
    path: &Path,
    loaded: &Loaded,
    name: Option<&str>,
    verbose: bool,
) -> Result<LoadedServer, Failure> {
    let usage = |message: String| Failure::new(exit_codes::USAGE, message);
    let server: &LoadedServer = match name {
        Some(name) => loaded
            .get(name)
            .ok_or_else(|| usage(format!("{}: no server named `{name}`", path.display())))?,
        None => {
            let enabled: Vec<&LoadedServer> = loaded.enabled().collect();
            let names = candidates(loaded);
            match (enabled.as_slice(), names.len()) {
                ([one], 1) => one,
                (_, 0) => return Err(usage(format!("{}: no enabled server", path.display()))),
                (_, 1) => return Err(usage(loaded.failed[0].to_string())),
                _ => {
                    return Err(usage(format!(
                        "{} has several servers; choose one with --server: {}",
                        path.display(),
                        names.join(", ")
                    )))
                }
            }
        }
    };
    if !server.settings.enabled {
        errln!(
            "mcpwire: `{}` is disabled in {}; starting it as asked",
            server.name,
            path.display()
        );
    }
    if verbose {
        errln!("· {server}");
    }
    Ok(server.clone())
}

/// The names of the servers to start in `loaded`: the enabled ones, and those that could not
/// be read.
pub(crate) fn candidates(loaded: &Loaded) -> Vec<&str> {
    let mut names: Vec<&str> = loaded.enabled().map(|s| s.name.as_str()).collect();
    names.extend(loaded.failed.iter().filter_map(|e| e.server()));
    names
}

/// The kind of file a host's is, for a sentence: "Cursor's file", "a generic mcpServers file".
fn whose_file(host: Host) -> String {
    match host {
        Host::Generic => host.name().to_owned(),
        _ => format!("{host}'s file"),
    }
}

/// Asks for an input on the terminal (hidden when it is a password).
pub(crate) fn ask(spec: &InputSpec) -> Result<String, String> {
    if !std::io::stdin().is_terminal() {
        return Err("stdin is not a terminal to ask on".into());
    }
    let mut prompt = spec.description.clone().unwrap_or_else(|| spec.id.clone());
    if !spec.options.is_empty() {
        prompt.push_str(&format!(" [{}]", spec.options.join("/")));
    }
    if let (Some(default), false) = (&spec.default, spec.password) {
        prompt.push_str(&format!(" (default {default})"));
    }
    err!("{prompt}: ");
    let line = if spec.password {
        read_hidden()
    } else {
        read_line()
    }
    .map_err(|e| format!("cannot read the terminal: {e}"))?;
    let value = match (line.is_empty(), &spec.default) {
        (true, Some(default)) => default.clone(),
        _ => line,
    };
    if !spec.options.is_empty() && !spec.options.contains(&value) {
        return Err(format!("not one of {}", spec.options.join(", ")));
    }
    Ok(value)
}

fn read_line() -> std::io::Result<String> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

/// Reads a line with the terminal's echo off.
#[cfg(unix)]
fn read_hidden() -> std::io::Result<String> {
    // SAFETY: `termios` is plain data; tcgetattr fills it, and both calls only read and write
    // the terminal settings of file descriptor 0, which is a terminal (checked by the caller).
    unsafe {
        let mut saved: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(0, &mut saved) != 0 {
            return read_line();
        }
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        quiet.c_lflag |= libc::ECHONL;
        libc::tcsetattr(0, libc::TCSANOW, &quiet);
        let line = read_line();
        libc::tcsetattr(0, libc::TCSANOW, &saved);
        line
    }
}

#[cfg(not(unix))]
fn read_hidden() -> std::io::Result<String> {
    read_line()
}
