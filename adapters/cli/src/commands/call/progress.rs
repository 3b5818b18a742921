//! A call's progress on stderr: on a terminal a bar redrawn in place (a spinner without a
//! total), cleared at the end; otherwise one line per notification.

use std::sync::{Arc, Mutex};

use mcpwire::Progress;

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const WIDTH: usize = 20;

/// Draws a call's progress.
#[derive(Clone)]
pub(crate) struct Printer {
    terminal: bool,
    /// How many updates were drawn in place (the spinner's step; 0: nothing to clear).
    drawn: Arc<Mutex<usize>>,
}

/// A number as reported, without a useless `.0`.
fn number(n: f64) -> String {
    match n.fract() == 0.0 && n.abs() < 1e15 {
        true => format!("{}", n as i64),
        false => n.to_string(),
    }
}

/// The text of one update on a terminal: the bar or the spinner, then the message.
fn line(p: &Progress, step: usize) -> String {
    let message = p
        .message
        .as_deref()
        .map(|m| format!(" {m}"))
        .unwrap_or_default();
    match p.total {
        Some(total) if total > 0.0 => {
            let done = ((p.progress / total).clamp(0.0, 1.0) * WIDTH as f64).round() as usize;
            format!(
                "[{}{}] {}/{}{message}",
                "#".repeat(done),
                "-".repeat(WIDTH - done),
                number(p.progress),
                number(total)
            )
        }
        _ => {
            let spin = SPINNER[step % SPINNER.len()];
            match &p.message {
                Some(m) => format!("{spin} {m}"),
                None => format!("{spin} {}", number(p.progress)),
            }
        }
    }
}

impl Printer {
    /// A printer drawing in place when `terminal`.
    pub(crate) fn new(terminal: bool) -> Self {
        Printer {
            terminal,
            drawn: Arc::new(Mutex::new(0)),
        }
    }

    /// Shows one update.
    pub(crate) fn show(&self, p: Progress) {
        if !self.terminal {
            let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = p.message.map(|m| format!(" {m}")).unwrap_or_default();
            errln!("progress {}{total}{message}", p.progress);
            return;
        }
        let mut drawn = self.drawn.lock().unwrap_or_else(|e| e.into_inner());
        crate::output::draw_status(&line(&p, *drawn));
        *drawn += 1;
    }

    /// Clears the bar, if one was drawn.
    pub(crate) fn clear(&self) {
        let mut drawn = self.drawn.lock().unwrap_or_else(|e| e.into_inner());
        crate::output::make_room();
        *drawn = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(progress: f64, total: Option<f64>, message: Option<&str>) -> Progress {
        Progress {
            progress,
            total,
            message: message.map(str::to_owned),
        }
    }

    #[test]
    fn a_bar_with_a_total_and_a_spinner_without() {
        let l = line(&update(3.0, Some(5.0), Some("step 3")), 0);
        assert_eq!(
            l,
            format!("[{}{}] 3/5 step 3", "#".repeat(12), "-".repeat(8))
        );
        assert_eq!(line(&update(1.0, None, Some("working")), 0), "⠋ working");
        assert_eq!(line(&update(2.5, None, None), 1), "⠙ 2.5");
        assert!(
            line(&update(9.0, Some(5.0), None), 0).starts_with(&format!("[{}]", "#".repeat(20)))
        );
    }
}
