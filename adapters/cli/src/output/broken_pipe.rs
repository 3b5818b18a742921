//! `mcpwire tools | head`: when the reader of stdout goes away, the command ends the way other
//! command-line tools do, by SIGPIPE (a shell reports 141), instead of a panic's message and
//! backtrace. A command with a connection first closes it gracefully (see the `output` module,
//! through which everything is printed); this hook covers what writes to stdout on its own
//! (the completion scripts). SIGPIPE itself stays ignored (as Rust programs start): a write to
//! a stdio server that has exited is an error the connection reports, not the end of the
//! process.

/// Installs the panic hook that turns a failed write to a closed stdout into that ending.
pub(crate) fn end_quietly() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if is_closed_stdout(message) {
            end_by_sigpipe();
        }
        default(info);
    }));
}

/// Whether a panic's message says stdout's reader is gone: `print!` and `println!` ("failed
/// printing to stdout: Broken pipe …") and the completion scripts' writer ("failed to write
/// completion file: … BrokenPipe …").
fn is_closed_stdout(message: &str) -> bool {
    let stdout = message.starts_with("failed printing to stdout")
        || message.starts_with("failed to write completion file");
    stdout && (message.contains("Broken pipe") || message.contains("BrokenPipe"))
}

#[cfg(unix)]
pub(crate) fn end_by_sigpipe() -> ! {
    // SAFETY: restoring a signal's default action and raising it touch no memory of ours.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(141)
}

#[cfg(not(unix))]
pub(crate) fn end_by_sigpipe() -> ! {
    std::process::exit(141)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_stdout_is_recognised() {
        assert!(is_closed_stdout(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(is_closed_stdout(
            "failed to write completion file: Os { code: 32, kind: BrokenPipe, message: \"Broken pipe\" }"
        ));
        assert!(!is_closed_stdout(
            "failed printing to stderr: Broken pipe (os error 32)"
        ));
        assert!(!is_closed_stdout(
            "failed printing to stdout: No space left on device"
        ));
        assert!(!is_closed_stdout("index out of bounds"));
    }
}
