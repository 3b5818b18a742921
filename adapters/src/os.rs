//! The operating systems whose conventions differ, as a value, and the user's folders by each
//! one's conventions. The environment is an input, so every system's folders are computed (and
//! tested) on any of them.

use std::ffi::OsString;
use std::path::PathBuf;

/// The operating systems whose conventions differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Os {
    Linux,
    Mac,
    Windows,
}

impl Os {
    pub(crate) fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            // Linux and the other Unixes follow the XDG conventions.
            Os::Linux
        }
    }
}

/// The user's folders on `os`, from the environment `var` reads (an empty or relative value is
/// ignored, as the XDG specification says of its variables).
#[cfg_attr(not(feature = "smol"), allow(dead_code))]
pub(crate) struct UserDirs<F> {
    os: Os,
    var: F,
}

// The manager's cache (feature `smol`) and OAuth's file store use them.
#[cfg_attr(not(feature = "smol"), allow(dead_code))]
impl<F: Fn(&str) -> Option<OsString>> UserDirs<F> {
    pub(crate) fn new(os: Os, var: F) -> Self {
        UserDirs { os, var }
    }

    /// An absolute folder from the environment.
    fn abs(&self, name: &str) -> Option<PathBuf> {
        (self.var)(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    }

    /// The home folder: `HOME`; on Windows `USERPROFILE` (what the hosts, Node's
    /// `os.homedir()` and the standard library take there), else `HOME`.
    pub(crate) fn home(&self) -> Option<PathBuf> {
        match self.os {
            Os::Windows => self.abs("USERPROFILE").or_else(|| self.abs("HOME")),
            Os::Linux | Os::Mac => self.abs("HOME"),
        }
    }

    /// `%LOCALAPPDATA%`, or `~\AppData\Local`.
    fn local_app_data(&self) -> Option<PathBuf> {
        self.abs("LOCALAPPDATA")
            .or_else(|| self.home().map(|h| h.join("AppData").join("Local")))
    }

    /// mcpwire's folder for what it keeps between runs (sign-ins): `$XDG_STATE_HOME/mcpwire`
    /// or `~/.local/state/mcpwire` on Linux and other Unix, `~/Library/Application
    /// Support/mcpwire` on macOS, `%LOCALAPPDATA%\mcpwire` on Windows.
    #[cfg_attr(not(all(feature = "oauth", feature = "smol")), allow(dead_code))]
    pub(crate) fn state(&self) -> Option<PathBuf> {
        let base = match self.os {
            Os::Linux => self
                .abs("XDG_STATE_HOME")
                .or_else(|| self.home().map(|h| h.join(".local").join("state"))),
            Os::Mac => self
                .home()
                .map(|h| h.join("Library").join("Application Support")),
            Os::Windows => self.local_app_data(),
        };
        base.map(|b| b.join("mcpwire"))
    }

    /// mcpwire's cache folder: `$XDG_CACHE_HOME/mcpwire` or `~/.cache/mcpwire` on Linux and
    /// other Unix, `~/Library/Caches/mcpwire` on macOS, `%LOCALAPPDATA%\mcpwire\cache` on
    /// Windows (where the state folder is `%LOCALAPPDATA%\mcpwire` too).
    pub(crate) fn cache(&self) -> Option<PathBuf> {
        match self.os {
            Os::Linux => self
                .abs("XDG_CACHE_HOME")
                .or_else(|| self.home().map(|h| h.join(".cache")))
                .map(|c| c.join("mcpwire")),
            Os::Mac => self
                .home()
                .map(|h| h.join("Library").join("Caches").join("mcpwire")),
            Os::Windows => self
                .local_app_data()
                .map(|l| l.join("mcpwire").join("cache")),
        }
    }
}

/// The user's folders on this system, from this process's environment.
#[cfg_attr(not(feature = "smol"), allow(dead_code))]
pub(crate) fn user_dirs() -> UserDirs<impl Fn(&str) -> Option<OsString>> {
    UserDirs::new(Os::current(), |name: &str| std::env::var_os(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs<'a>(
        os: Os,
        pairs: &'a [(&'a str, &'a str)],
    ) -> UserDirs<impl Fn(&str) -> Option<OsString> + 'a> {
        UserDirs::new(os, move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    fn all(d: &UserDirs<impl Fn(&str) -> Option<OsString>>) -> [Option<String>; 3] {
        let text = |p: Option<PathBuf>| p.map(|p| p.to_string_lossy().replace('\\', "/"));
        [text(d.home()), text(d.state()), text(d.cache())]
    }

    fn some(paths: [&str; 3]) -> [Option<String>; 3] {
        paths.map(|p| Some(p.to_owned()))
    }

    #[test]
    fn linux_follows_xdg_then_home() {
        let xdg = [
            ("XDG_STATE_HOME", "/x/state"),
            ("XDG_CACHE_HOME", "/x/cache"),
            ("HOME", "/home/u"),
            ("USERPROFILE", "/profile"),
        ];
        assert_eq!(
            all(&dirs(Os::Linux, &xdg)),
            some(["/home/u", "/x/state/mcpwire", "/x/cache/mcpwire"])
        );
        let relative = [
            ("XDG_STATE_HOME", "rel"),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/home/u"),
        ];
        assert_eq!(
            all(&dirs(Os::Linux, &relative)),
            some([
                "/home/u",
                "/home/u/.local/state/mcpwire",
                "/home/u/.cache/mcpwire"
            ])
        );
        assert_eq!(all(&dirs(Os::Linux, &[("HOME", "")])), [None, None, None]);
        assert_eq!(all(&dirs(Os::Linux, &[])), [None, None, None]);
    }

    #[test]
    fn macos_keeps_them_in_the_library() {
        let env = [("HOME", "/Users/u"), ("XDG_CACHE_HOME", "/x/cache")];
        assert_eq!(
            all(&dirs(Os::Mac, &env)),
            some([
                "/Users/u",
                "/Users/u/Library/Application Support/mcpwire",
                "/Users/u/Library/Caches/mcpwire"
            ])
        );
    }

    #[test]
    fn windows_takes_the_profile_and_local_app_data() {
        let env = [
            ("USERPROFILE", "/Users/u"),
            ("HOME", "/home/msys"),
            ("LOCALAPPDATA", "/Users/u/AppData/Local"),
            ("XDG_CACHE_HOME", "/x/cache"),
        ];
        assert_eq!(
            all(&dirs(Os::Windows, &env)),
            some([
                "/Users/u",
                "/Users/u/AppData/Local/mcpwire",
                "/Users/u/AppData/Local/mcpwire/cache"
            ])
        );
        // No LOCALAPPDATA: the profile's; no USERPROFILE either: HOME's.
        assert_eq!(
            all(&dirs(Os::Windows, &[("USERPROFILE", "/Users/u")])),
            some([
                "/Users/u",
                "/Users/u/AppData/Local/mcpwire",
                "/Users/u/AppData/Local/mcpwire/cache"
            ])
        );
        assert_eq!(
            all(&dirs(Os::Windows, &[("HOME", "/h")]))[0].as_deref(),
            Some("/h")
        );
        assert_eq!(all(&dirs(Os::Windows, &[])), [None, None, None]);
    }
}
