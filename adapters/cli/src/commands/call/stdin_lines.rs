//! The terminal's lines for prompts, read by one thread, one line at a time on demand, so that a
//! prompt given up does not take the next prompt's line.
//!
//! A read from stdin cannot be interrupted: a url-mode elicitation's prompt ("press Enter when
//! done") that the server completes first is left waiting for a line. Without care the line the
//! user then types for the next prompt would go to it. Here each line is handed over with a
//! question back: the prompt that gets it says whether it took it, and a prompt given up hands
//! it back, for the next one.

use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

/// A line handed to a prompt (`None`: the end of input), and where it says whether it took it.
type Handed = (Option<String>, Sender<bool>);

/// A reader of lines: where prompts ask for one, each sending where the line goes.
#[derive(Clone)]
pub(crate) struct Lines(Sender<Sender<Handed>>);

impl Lines {
    /// A thread reading lines with `read` (a line's bytes appended, 0 at the end), each when
    /// asked for.
    fn spawn(read: impl FnMut(&mut String) -> io::Result<usize> + Send + 'static) -> Lines {
        let (asks, asked) = channel::<Sender<Handed>>();
        std::thread::spawn(move || serve(asked, read));
        Lines(asks)
    }

    /// The terminal's lines (stdin), read by one thread started at the first prompt.
    pub(crate) fn stdin() -> Lines {
        static STDIN: OnceLock<Mutex<Lines>> = OnceLock::new();
        STDIN
            // Stdin is locked for one line at a time: it is free between prompts.
            .get_or_init(|| Mutex::new(Lines::spawn(|line| io::stdin().lock().read_line(line))))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Serves each ask with the next line: one handed back is handed to the next ask.
fn serve(asked: Receiver<Sender<Handed>>, mut read: impl FnMut(&mut String) -> io::Result<usize>) {
    let mut kept: Option<Option<String>> = None;
    while let Ok(to) = asked.recv() {
        let line = match kept.take() {
            Some(line) => line,
            None => {
                let mut line = String::new();
                match read(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                }
            }
        };
        let (took, taken) = channel();
        let handed = to.send((line.clone(), took)).is_ok() && taken.recv().unwrap_or(false);
        if !handed {
            kept = Some(line);
        }
    }
}

/// One prompt's input: lines from the reader, until the prompt is given up.
pub(crate) struct PromptInput {
    lines: Lines,
    given_up: Arc<AtomicBool>,
    buf: Vec<u8>,
    at: usize,
}

impl PromptInput {
    /// Input for one prompt from the terminal; `given_up` set means a line that comes is
    /// handed back.
    pub(crate) fn new(given_up: Arc<AtomicBool>) -> Self {
        Self::from(Lines::stdin(), given_up)
    }

    /// Input for one prompt from `lines`.
    fn from(lines: Lines, given_up: Arc<AtomicBool>) -> Self {
        PromptInput {
            lines,
            given_up,
            buf: Vec::new(),
            at: 0,
        }
    }

    /// The next line (with its line ending), `None` at the end of input or once given up.
    fn next_line(&self) -> Option<String> {
        let (to, from) = channel();
        self.lines.0.send(to).ok()?;
        let (line, took) = from.recv().ok()?;
        let take = !self.given_up.load(Ordering::SeqCst);
        let _ = took.send(take);
        if take {
            line
        } else {
            None
        }
    }
}

impl Read for PromptInput {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PromptInput {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at >= self.buf.len() {
            self.buf = self.next_line().map(String::into_bytes).unwrap_or_default();
            self.at = 0;
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.buf.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_prompt_given_up_hands_the_line_to_the_next_one() {
        let (mut typing, terminal) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut terminal = io::BufReader::new(terminal);
        let lines = Lines::spawn(move |line| terminal.read_line(line));
        // A url prompt waits for its line, then is given up (the server said it is done).
        let given_up = Arc::new(AtomicBool::new(false));
        let mut first = PromptInput::from(lines.clone(), given_up.clone());
        let waiting = std::thread::spawn(move || {
            let mut line = String::new();
            first.read_line(&mut line).unwrap();
            line
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        given_up.store(true, Ordering::SeqCst);
        // The next prompt asks; the user types its answer.
        let mut next = PromptInput::from(lines, Arc::new(AtomicBool::new(false)));
        typing.write_all(b"Ada\n").unwrap();
        let mut line = String::new();
        next.read_line(&mut line).unwrap();
        assert_eq!(line, "Ada\n");
        assert_eq!(
            waiting.join().unwrap(),
            "",
            "the prompt given up took nothing"
        );
    }

    #[test]
    fn lines_go_in_order_and_the_end_of_input_is_told() {
        let mut source = io::Cursor::new(b"one\ntwo\n".to_vec());
        let lines = Lines::spawn(move |line| source.read_line(line));
        let mut input = PromptInput::from(lines, Arc::new(AtomicBool::new(false)));
        let mut all = String::new();
        input.read_to_string(&mut all).unwrap();
        assert_eq!(all, "one\ntwo\n");
    }
}
