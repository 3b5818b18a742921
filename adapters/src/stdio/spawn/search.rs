//! The batch script a bare command names on Windows. Windows starts a program by a bare name
//! only as `NAME.exe`, but npm installs its commands (`npx`, `pnpm`, the servers' own) as
//! `NAME.cmd` scripts, which the hosts' files name bare: found here the way the Windows shell
//! finds them (each `PATH` folder in turn, each `PATHEXT` extension in it), and started by their
//! full path (the standard library runs a `.cmd` or `.bat` through `cmd.exe`, its arguments
//! escaped). Pure, so that it is tested everywhere.

use std::path::{Path, PathBuf};

/// The extensions the shell tries when `PATHEXT` is not set.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The script `command` names, when it is a bare name (no folder, no extension) and the first
/// file the shell's search finds for it in `path` (`;`-separated) is a `.cmd` or `.bat`; `None`
/// otherwise (the system's own search then starts it as written, finding `NAME.exe` itself).
pub(super) fn script_in_path(
    command: &str,
    path: &str,
    pathext: Option<&str>,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let bare = !command.is_empty()
        && !command.contains(['/', '\\', ':'])
        && Path::new(command).extension().is_none();
    if !bare {
        return None;
    }
    let exts: Vec<String> = pathext
        .filter(|e| !e.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT)
        .split(';')
        .map(str::trim)
        .filter(|e| e.len() > 1 && e.starts_with('.'))
        .map(str::to_ascii_lowercase)
        .collect();
    let dirs = path.split(';').map(|d| d.trim().trim_matches('"'));
    for dir in dirs.filter(|d| !d.is_empty()) {
        for ext in &exts {
            let candidate = Path::new(dir).join(format!("{command}{ext}"));
            if is_file(&candidate) {
                return matches!(ext.as_str(), ".cmd" | ".bat").then_some(candidate);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(command: &str, path: &str, pathext: Option<&str>, files: &[&str]) -> Option<String> {
        let is_file = |p: &Path| files.iter().any(|f| Path::new(f) == p);
        script_in_path(command, path, pathext, is_file).map(|p| p.to_string_lossy().into_owned())
    }

    #[test]
    fn a_bare_name_found_as_a_cmd_script_is_started_as_that_script() {
        let files = ["/node/npx.cmd", "/node/npx"];
        assert_eq!(
            found("npx", "/bin;\"/node\"", None, &files).as_deref(),
            Some("/node/npx.cmd")
        );
        assert_eq!(
            found("run", "/b", None, &["/b/run.bat"]).as_deref(),
            Some("/b/run.bat")
        );
    }

    #[test]
    fn an_exe_found_first_or_a_name_with_a_folder_or_extension_is_left_as_written() {
        // The first folder's `.exe` wins, as in the shell; the system finds it by itself.
        assert_eq!(
            found("npx", "/a;/b", None, &["/a/npx.exe", "/b/npx.cmd"]),
            None
        );
        // In one folder `.exe` comes before `.cmd` in the default order.
        assert_eq!(
            found("uvx", "/a", None, &["/a/uvx.cmd", "/a/uvx.exe"]),
            None
        );
        assert_eq!(found("npx.cmd", "/a", None, &["/a/npx.cmd.cmd"]), None);
        assert_eq!(found("node/npx", "/a", None, &["/a/node/npx.cmd"]), None);
        assert_eq!(found("C:npx", "/a", None, &["/a/C:npx.cmd"]), None);
        assert_eq!(found("", "/a", None, &["/a/.cmd"]), None);
        assert_eq!(found("gone", "/a", None, &[]), None);
    }

    #[test]
    fn pathext_orders_the_extensions_and_only_scripts_are_taken() {
        let files = ["/a/srv.exe", "/a/srv.cmd"];
        assert_eq!(
            found("srv", "/a", Some(".CMD;.EXE"), &files).as_deref(),
            Some("/a/srv.cmd")
        );
        assert_eq!(found("srv", "/a", Some(".PS1;.EXE"), &["/a/srv.ps1"]), None);
        // An empty PATHEXT is the default one.
        assert_eq!(
            found("srv", "/a", Some(" "), &["/a/srv.cmd"]).as_deref(),
            Some("/a/srv.cmd")
        );
    }
}
