//! `--stdio -- CMD ARGS…`: the server's command line as the last arguments, taken off before
//! the rest is parsed.

use std::ffi::OsString;

/// Takes `--stdio -- CMD ARGS…` off the end of the command line: the arguments left for clap,
/// and the server's words.
pub(crate) fn split_stdio_words(mut argv: Vec<OsString>) -> (Vec<OsString>, Option<Vec<String>>) {
    let Some(i) = argv.iter().position(|a| a == "--") else {
        return (argv, None);
    };
    if i == 0 || argv[i - 1] != "--stdio" {
        return (argv, None);
    }
    let words = argv[i + 1..]
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    argv.truncate(i - 1);
    (argv, Some(words))
}
