//! `mcpwire completions SHELL`: the shell's completion script, written by clap from the command
//! line's grammar (`COMPLETE=bash mcpwire` gives the one that also completes tool names and
//! argument keys, see [`live_completion`](super::live_completion)).

use clap::CommandFactory;

use super::parser::{Cli, ShellArg};
use crate::output;

/// Prints the completion script for `shell` on stdout.
pub(crate) fn print_script(shell: ShellArg) {
    let shell = match shell {
        ShellArg::Bash => clap_complete::Shell::Bash,
        ShellArg::Zsh => clap_complete::Shell::Zsh,
        ShellArg::Fish => clap_complete::Shell::Fish,
    };
    // This program's own text (a broken pipe ends it by the panic hook).
    clap_complete::generate(
        shell,
        &mut Cli::command(),
        "mcpwire",
        &mut output::raw_stdout(),
    );
}
