//! Everything the command line writes to stdout and stderr goes through here, so that no text a
//! server controls can drive the terminal: a tool's text, a JSON-RPC error's message, an HTTP
//! error body's excerpt, a log message, the server's stderr, names and descriptions.
//!
//! - Text (`out!`, `outln!`, `err!`, `errln!`) has its control characters made visible
//!   ([`visible`]): `\x1b`, `\r`, `\u{85}`, `\u{202e}` instead of the characters themselves.
//!   Only the command line's own escapes (dimming on a terminal, the progress bar) are written
//!   as they are, around text made visible first.
//! - JSON ([`json`], [`json_line`]) stays valid JSON: serde_json escapes C0 controls itself;
//!   the others it leaves raw are escaped here (`\u0085`).
//! - When stdout's reader goes away (`mcpwire … | head`), the command is not ended on the spot:
//!   once [`close_first`] was called, the loss is only noted ([`stdout_gone`] wakes), so that
//!   the command can close its connection gracefully before ending by SIGPIPE.
//!
//! `std::print!`, `std::println!`, `std::eprint!`, `std::eprintln!`, `std::io::stdout` and
//! `std::io::stderr` are refused by clippy in this crate (`clippy.toml`) outside this module's
//! own `stdout` and `stderr`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// stdout: the one place that takes it.
#[allow(clippy::disallowed_methods)]
fn stdout() -> io::Stdout {
    io::stdout()
}

/// stderr: the one place that takes it.
#[allow(clippy::disallowed_methods)]
fn stderr() -> io::Stderr {
    io::stderr()
}

/// Prints text on stdout, its control characters made visible.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::stdout_text(&format!($($arg)*))
    };
}

/// Prints a line on stdout, its control characters made visible.
macro_rules! outln {
    () => {
        $crate::output::stdout_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::stdout_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// Prints text on stderr, its control characters made visible.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::output::stderr_text(&format!($($arg)*))
    };
}

/// Prints a line on stderr, its control characters made visible.
macro_rules! errln {
    () => {
        $crate::output::stderr_text("\n")
    };
    ($($arg:tt)*) => {
        $crate::output::stderr_text(&format!("{}\n", format_args!($($arg)*)))
    };
}

// After the macros, which they use.
pub(crate) mod broken_pipe;
pub(crate) mod layout;

/// Whether `c` must not reach a terminal as it is: a C0 control other than newline and tab, DEL,
/// a C1 control, a bidirectional control (U+202A–U+202E, U+2066–U+2069, and the marks U+200E,
/// U+200F, U+061C) or a zero-width character (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E).
pub(crate) fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}'
        | '\u{b}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}')
}

/// `text` with each [hidden](is_hidden) character written out: `\r`, `\x1b` (C0 and DEL),
/// `\u{85}` (the others). Newlines and tabs stay.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !is_hidden(c) => out.push(c),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// JSON text (as serde_json writes it) with each [hidden](is_hidden) character it left raw
/// escaped as `\uXXXX`: still the same JSON, and nothing in it for a terminal to act on.
///
/// Above U+001F such a character can only be inside a string, where the escape means the same
/// character. serde_json escapes every C0 control inside strings, so a raw one is whitespace
/// between tokens of a server's JSON kept as it came (a carriage return): it is left out, which
/// changes nothing of the value.
pub(crate) fn json_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !is_hidden(c) => out.push(c),
            c if (c as u32) < 0x20 => {}
            // Every hidden character is in the Basic Multilingual Plane.
            c => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// A summary of a body excerpt that is not text (bytes that were not UTF-8, or NUL bytes), or
/// `None` when it is text.
pub(crate) fn not_text(excerpt: &str) -> Option<&'static str> {
    excerpt
        .chars()
        .any(|c| c == '\u{fffd}' || c == '\0')
        .then_some("(a body that is not text, not shown)")
}

/// `bytes` as text when they are text (UTF-8 without NUL bytes, and without the replacement
/// character a lossy decoding left), else `"N bytes, not text"`.
pub(crate) fn text_or_size(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) if not_text(text).is_none() => Cow::Borrowed(text),
        _ => Cow::Owned(format!("{} bytes, not text", bytes.len())),
    }
}

/// Whether a command with a connection is running: stdout's loss then waits for it to close.
static CLOSE_FIRST: AtomicBool = AtomicBool::new(false);

/// How stdout was lost, once it was.
static LOST: Mutex<Option<Lost>> = Mutex::new(None);

/// How stdout was lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lost {
    /// Its reader went away (EPIPE).
    Reader,
    /// Another write error.
    Error(String),
}

/// Closed when stdout is lost: every wait on it ends.
fn gone_event() -> &'static (smol::channel::Sender<()>, smol::channel::Receiver<()>) {
    static GONE: OnceLock<(smol::channel::Sender<()>, smol::channel::Receiver<()>)> =
        OnceLock::new();
    GONE.get_or_init(|| smol::channel::bounded(1))
}

/// From now on the loss of stdout does not end the process: it is noted, [`stdout_gone`]
/// wakes, and the command closes its connection before [`end_if_lost`] ends it.
pub(crate) fn close_first() {
    CLOSE_FIRST.store(true, Ordering::SeqCst);
}

/// Until stdout is lost (never, if it is not).
pub(crate) async fn stdout_gone() {
    let _ = gone_event().1.recv().await;
}

/// How stdout was lost, if it was.
pub(crate) fn lost() -> Option<Lost> {
    LOST.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn lose(how: Lost) {
    {
        let mut lost = LOST.lock().unwrap_or_else(|e| e.into_inner());
        if lost.is_none() {
            *lost = Some(how);
        }
    }
    gone_event().0.close();
    if !CLOSE_FIRST.load(Ordering::SeqCst) {
        // No connection to close: end now.
        end_if_lost();
    }
}

/// Once stdout was lost, ends the process: by SIGPIPE when its reader went away (a shell
/// reports 141), as other command-line tools do, else with a message and exit code 4. Called
/// once the connection was closed.
pub(crate) fn end_if_lost() {
    match lost() {
        None => {}
        Some(Lost::Reader) => broken_pipe::end_by_sigpipe(),
        Some(Lost::Error(e)) => {
            errln!("mcpwire: cannot write to stdout: {e}");
            std::process::exit(crate::exit_codes::CALL.into());
        }
    }
}

/// Writes `text` on stdout as it is (it was made safe by the caller).
fn stdout_raw(text: &str) {
    if lost().is_some() {
        return;
    }
    let mut out = stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    drop(out);
    if let Err(e) = written {
        match e.kind() {
            io::ErrorKind::BrokenPipe => lose(Lost::Reader),
            _ => lose(Lost::Error(e.to_string())),
        }
    }
}

/// Prints `text` on stdout, its control characters made visible (see `out!`).
pub(crate) fn stdout_text(text: &str) {
    stdout_raw(&visible(text));
}

/// Prints `text` on stderr, its control characters made visible (see `err!`); a progress bar
/// on the line is cleared first.
pub(crate) fn stderr_text(text: &str) {
    stderr_raw(&visible(text));
}

/// Whether a status line (a call's progress bar or spinner) is drawn on stderr's current line.
static STATUS_ON_LINE: AtomicBool = AtomicBool::new(false);

/// Draws `line` (made visible) as the status line on stderr, in place of the last one.
pub(crate) fn draw_status(line: &str) {
    let mut err = stderr().lock();
    // \r, then the line, then clear what a longer line left.
    let _ = write!(err, "\r{}\x1b[K", visible(line));
    let _ = err.flush();
    STATUS_ON_LINE.store(true, Ordering::SeqCst);
}

/// Clears the status line, if one is drawn, so that a line can be printed; the next update
/// draws it again. Hold stderr's lock (it is reentrant) across this and the line, so no status
/// line comes between.
pub(crate) fn make_room() {
    // Under stderr's lock, as drawing is: a line drawn meanwhile is seen.
    let mut err = stderr().lock();
    if STATUS_ON_LINE.swap(false, Ordering::SeqCst) {
        let _ = write!(err, "\r\x1b[K");
        let _ = err.flush();
    }
}

/// Writes `text` on stderr as it is: only the command line's own escapes around text made
/// visible. A progress bar on the line is cleared first.
pub(crate) fn stderr_raw(text: &str) {
    let mut err = stderr().lock();
    make_room();
    // Nowhere to tell a failure to write on stderr.
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Prints a line on stderr, dimmed with ANSI escapes when `dim` (the escapes are this
/// program's; the line is made visible first).
pub(crate) fn errln_dim(line: &str, dim: bool) {
    let line = visible(line);
    match dim {
        true => stderr_raw(&format!("\x1b[2m{line}\x1b[0m\n")),
        false => stderr_raw(&format!("{line}\n")),
    }
}

/// Prints `value` on stdout as pretty JSON, with every hidden character escaped.
pub(crate) fn json<T: serde::Serialize + ?Sized>(value: &T) {
    json_line(&serde_json::to_string_pretty(value).unwrap_or_default());
}

/// Prints one JSON text (as serde_json wrote it) on stdout, with every hidden character
/// escaped, and a newline.
pub(crate) fn json_line(text: &str) {
    stdout_raw(&format!("{}\n", json_text(text)));
}

/// Whether stderr is a terminal.
pub(crate) fn stderr_is_terminal() -> bool {
    stderr().is_terminal()
}

/// The locked stderr, behind [`Visible`], for code that writes with `write!` (the terminal's
/// questions).
pub(crate) fn stderr_writer() -> Visible<io::StderrLock<'static>> {
    Visible(stderr().lock())
}

/// stdout as a plain writer, for the demo server's protocol (`serve-demo`), which is JSON-RPC
/// that the server writes itself, and the completion scripts.
pub(crate) fn raw_stdout() -> io::Stdout {
    stdout()
}

/// A writer that makes the control characters of what passes through it visible.
pub(crate) struct Visible<W>(pub(crate) W);

impl<W: Write> Write for Visible<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(visible(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_made_visible_and_text_stays() {
        assert_eq!(visible("plain\ttext\nnext"), "plain\ttext\nnext");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
        assert_eq!(
            visible("\u{1b}]0;title\u{7}\u{1b}[2J"),
            "\\x1b]0;title\\x07\\x1b[2J"
        );
        assert_eq!(visible("over\rwrite"), "over\\rwrite");
        assert_eq!(visible("del\u{7f} nul\0"), "del\\x7f nul\\x00");
        assert_eq!(visible("c1 \u{85} \u{9b}31m"), "c1 \\u{85} \\u{9b}31m");
        assert_eq!(
            visible("a\u{202e}b\u{2066}c\u{200b}d\u{feff}e\u{200f}"),
            "a\\u{202e}b\\u{2066}c\\u{200b}d\\u{feff}e\\u{200f}"
        );
        // Other characters, however far from ASCII, stay.
        assert_eq!(visible("héllo → ✓ 日本 🦀"), "héllo → ✓ 日本 🦀");
    }

    #[test]
    fn json_stays_json_with_c1_and_invisible_characters_escaped() {
        let value = serde_json::json!({"m": "\u{1b}[2J \u{85} \u{202e} \u{200b} \u{7f} é\n"});
        let text = serde_json::to_string(&value).unwrap();
        // serde_json escapes C0 itself and leaves the rest raw.
        assert!(text.contains('\u{85}') && text.contains("\\u001b"));
        let safe = json_text(&text);
        assert!(!safe.chars().any(is_hidden), "{safe}");
        assert!(
            safe.contains("\\u0085") && safe.contains("\\u202e") && safe.contains("\\u200b"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
        // A server's raw JSON kept as it came may hold a carriage return between tokens.
        let raw = "{\"a\": 1,\r\n  \"b\": \"\u{85}\"}";
        let safe = json_text(raw);
        assert_eq!(safe, "{\"a\": 1,\n  \"b\": \"\\u0085\"}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, serde_json::json!({"a": 1, "b": "\u{85}"}));
    }

    #[test]
    fn binary_is_summarised() {
        assert_eq!(text_or_size(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(
            text_or_size(&[0x1f, 0x8b, 8, 0, 1, 2, 3]),
            "7 bytes, not text"
        );
        assert_eq!(text_or_size(b"a\0b"), "3 bytes, not text");
        assert!(not_text("upstream exploded").is_none());
        assert!(not_text("\u{1f}\u{fffd}\u{8}\u{0}").is_some());
    }

    #[test]
    fn a_writer_makes_what_passes_visible() {
        let mut w = Visible(Vec::new());
        let said = "\u{1b}[31mred\u{9b}";
        write!(w, "asks: {said}").unwrap();
        assert_eq!(String::from_utf8(w.0).unwrap(), "asks: \\x1b[31mred\\u{9b}");
    }
}
