//! `--server NAME` without `--config`: a server found in every host's usual places (the
//! project's files in the current directory, then the user's in the home directory); and
//! `mcpwire servers`: what a configuration holds, never a secret value.

use std::path::Path;

use mcpwire::hosts::{ConfigError, Host, Loaded, LoadedServer, Loader, Place};
use mcpwire::Era;
use serde_json::json;

use super::config_file;
use crate::exit_codes;
use crate::failure::Failure;

fn usage(e: impl ToString) -> Failure {
    Failure::new(exit_codes::USAGE, e.to_string())
}

/// What every host's usual files hold: each host with its servers, and the files that could
/// not be read.
type Survey = (Vec<(Host, Loaded)>, Vec<ConfigError>);

/// Every host whose files exist, loaded without asking for inputs; a server that cannot be
/// read is among `failed`. Files that cannot be read at all come back as errors.
fn survey() -> Result<Survey, Failure> {
    let mut loader = Loader::from_process().map_err(usage)?.isolate_failures();
    let mut hosts: Vec<Host> = Vec::new();
    for place in loader.discover() {
        if !hosts.contains(&place.host) {
            hosts.push(place.host);
        }
    }
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for host in hosts {
        match loader.load_host(host) {
            Ok(loaded) => found.push((host, loaded)),
            Err(e) => errors.push(e),
        }
    }
    Ok((found, errors))
}

/// The names a load holds, the failed ones included.
fn names(loaded: &Loaded) -> impl Iterator<Item = &str> {
    let ok = loaded.servers.iter().map(|s| s.name.as_str());
    ok.chain(loaded.failed.iter().filter_map(|e| e.server()))
}

/// The server named `name` in the first host that has one, read again with its inputs asked
/// for.
pub(crate) fn find(name: &str, verbose: bool) -> Result<LoadedServer, Failure> {
    let (found, errors) = survey()?;
    if verbose {
        for e in &errors {
            errln!("· warning: {e}");
        }
    }
    let Some((host, _)) = found.iter().find(|(_, l)| names(l).any(|n| n == name)) else {
        let mut all: Vec<&str> = found.iter().flat_map(|(_, l)| names(l)).collect();
        all.sort_unstable();
        all.dedup();
        let listed = match all.is_empty() {
            true => "none was found".to_owned(),
            false => format!("found: {}", all.join(", ")),
        };
        return Err(usage(format!(
            "no server named `{name}` in any host's configuration ({listed})"
        )));
    };
    let mut loader = Loader::from_process()
        .map_err(usage)?
        .only([name])
        .on_input(config_file::ask);
    let loaded = loader.load_host(*host).map_err(usage)?;
    let server = match (loaded.get(name), loaded.failed.first()) {
        (Some(server), _) => server.clone(),
        (None, Some(e)) => return Err(usage(e)),
        (None, None) => return Err(usage(format!("{host}: no server named `{name}`"))),
    };
    if verbose {
        errln!(
            "· {name}: from {} ({host}'s file)",
            server.origin.path.display()
        );
        errln!("· {server}");
    }
    Ok(server)
}

fn era(e: Option<Era>) -> &'static str {
    match e {
        Some(Era::Handshake) => "handshake",
        Some(Era::Stateless) => "stateless",
        _ => "auto",
    }
}

/// Every file a host keeps its servers in, whether it exists or not: where `servers` looks.
fn every_place() -> Result<Vec<Place>, Failure> {
    let loader = Loader::from_process().map_err(usage)?;
    Ok(Host::ALL.iter().flat_map(|h| loader.places(*h)).collect())
}

/// `mcpwire servers`: the servers of `file`, or of every host's usual places; only `name`'s
/// when one is given (`--server NAME`).
pub(crate) fn list(file: Option<&Path>, name: Option<&str>, json: bool) -> Result<u8, Failure> {
    let (mut loads, errors) = match file {
        Some(path) => {
            let mut loader = Loader::from_process().map_err(usage)?.isolate_failures();
            let loaded = loader.load_file(path).map_err(usage)?;
            let host = loaded.files.first().map(|f| f.host);
            (vec![(host, loaded)], Vec::new())
        }
        None => {
            let (found, errors) = survey()?;
            let found = found.into_iter().map(|(h, l)| (Some(h), l)).collect();
            (found, errors)
        }
    };
    for e in &errors {
        errln!("mcpwire: {e}");
    }
    // With no file at all, where it looked (an empty table would say nothing).
    let looked_in = match file.is_none() && loads.is_empty() && errors.is_empty() {
        true => Some(every_place()?),
        false => None,
    };
    if let Some(name) = name {
        let mut all: Vec<&str> = loads.iter().flat_map(|(_, l)| names(l)).collect();
        if !all.contains(&name) {
            all.sort_unstable();
            all.dedup();
            let listed = match all.is_empty() {
                true => "none was found".to_owned(),
                false => format!("found: {}", all.join(", ")),
            };
            let place = match file {
                Some(path) => path.display().to_string(),
                None => "any host's configuration".to_owned(),
            };
            let said = format!("no server named `{name}` in {place} ({listed})");
            return Err(usage(said));
        }
        for (_, loaded) in &mut loads {
            loaded.servers.retain(|s| s.name == name);
            loaded.failed.retain(|e| e.server() == Some(name));
        }
    }
    let servers: Vec<&LoadedServer> = loads.iter().flat_map(|(_, l)| &l.servers).collect();
    // The servers that could not be read, each with its host's name.
    let failed: Vec<(Option<Host>, &ConfigError)> = loads
        .iter()
        .flat_map(|(h, l)| l.failed.iter().map(move |e| (*h, e)))
        .collect();
    if let (Some(places), false) = (&looked_in, json) {
        errln!("mcpwire: no host's configuration file was found; looked for:");
        for place in places {
            errln!("  {} ({})", place.path.display(), place.host.name());
        }
        return Ok(exit_codes::OK);
    }
    if json {
        let rows: Vec<_> = servers
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "host": s.origin.host.name(),
                    "file": s.origin.path,
                    "transport": s.transport(),
                    "target": s.target(),
                    "enabled": s.settings.enabled,
                    "era": era(s.settings.era),
                })
            })
            .collect();
        let failed: Vec<_> = failed
            .iter()
            .map(|(h, e)| {
                json!({
                    "name": e.server(),
                    "host": h.map(|h| h.name()),
                    "file": e.path(),
                    "error": e.to_string(),
                })
            })
            .collect();
        let mut v = json!({"servers": rows, "failed": failed});
        if let Some(places) = looked_in {
            let places: Vec<_> = places
                .iter()
                .map(|p| json!({"file": p.path, "host": p.host.name()}))
                .collect();
            v["lookedFor"] = json!(places);
        }
        crate::output::json(&v);
        return Ok(exit_codes::OK);
    }
    let mut rows: Vec<[String; 7]> = servers
        .iter()
        .map(|s| {
            [
                s.name.clone(),
                s.origin.host.name().to_owned(),
                s.transport().to_owned(),
                if s.settings.enabled { "yes" } else { "no" }.to_owned(),
                era(s.settings.era).to_owned(),
                s.target(),
                s.origin.path.display().to_string(),
            ]
        })
        .collect();
    // A server that could not be read has its row too, its error in place of where it runs.
    let mut unplaced = Vec::new();
    for (host, e) in &failed {
        let Some(name) = e.server() else {
            unplaced.push(e);
            continue;
        };
        let dash = || "-".to_owned();
        rows.push([
            name.to_owned(),
            host.map_or_else(dash, |h| h.name().to_owned()),
            dash(),
            dash(),
            dash(),
            format!("error: {}", e.reason()),
            e.path().map_or_else(dash, |p| p.display().to_string()),
        ]);
    }
    let head = [
        "NAME",
        "HOST",
        "TRANSPORT",
        "ENABLED",
        "ERA",
        "TARGET",
        "FILE",
    ]
    .map(String::from);
    let mut widths = [0usize; 7];
    for row in std::iter::once(&head).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&head).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:w$}"))
            .collect();
        outln!("{}", cells.join("  ").trim_end());
    }
    for e in unplaced {
        errln!("mcpwire: {e}");
    }
    Ok(exit_codes::OK)
}
