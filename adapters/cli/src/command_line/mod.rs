//! The command line: its grammar (the commands and the options every command takes), the words
//! of `--stdio`, and the shells' completion (the scripts, and the live tool names and argument
//! keys).

pub(crate) mod completions;
pub(crate) mod http_args;
pub(crate) mod live_completion;
pub(crate) mod parser;
pub(crate) mod server_args;
pub(crate) mod shell_words;
pub(crate) mod stdio_words;
