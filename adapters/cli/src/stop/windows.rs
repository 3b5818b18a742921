//! Stop requests on Windows: the console's control events, taken by a handler the system runs
//! on a thread of its own. Ctrl-C is an interruption, Ctrl-Break (what a process manager sends
//! to ask a console program to end) a termination, and the console closing, the user logging
//! off and the system shutting down a hang-up.
//!
//! The system ends the process as soon as the handler returns from one of the last three (and
//! in any case a few seconds later): the handler waits there while the command closes its
//! connection and exits on its own. A second request goes to the system's default handler,
//! which ends the process at once.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT, CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
};

use super::request::{note, Request, Seen};

/// Closed at the first request: every wait on it ends.
static WAKE: OnceLock<(smol::channel::Sender<()>, smol::channel::Receiver<()>)> = OnceLock::new();

/// Where the handler's clock starts.
static START: OnceLock<Instant> = OnceLock::new();

/// The longest the handler holds the process for a close after the console went away (the
/// system's own limit is shorter: about 5 s for a closed console).
const HOLD: Duration = Duration::from_secs(30);

const TRUE: BOOL = 1;
const FALSE: BOOL = 0;

unsafe extern "system" fn on_event(event: u32) -> BOOL {
    let request = match event {
        CTRL_C_EVENT => Request::Interrupt,
        CTRL_BREAK_EVENT => Request::Terminate,
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => Request::HangUp,
        _ => return FALSE,
    };
    let since = START
        .get()
        .map_or(0, |start| start.elapsed().as_nanos() as u64);
    match note(request, since) {
        Seen::First => {}
        Seen::Again => return TRUE,
        // A second request: the default handler ends the process at once.
        Seen::Second => return FALSE,
    }
    if let Some((wake, _)) = WAKE.get() {
        wake.close();
    }
    if request == Request::HangUp {
        // Returning would end the process now: the command ends it once it has closed.
        std::thread::sleep(HOLD);
    }
    TRUE
}

pub(crate) fn catch() {
    START.get_or_init(Instant::now);
    let mut first = false;
    WAKE.get_or_init(|| {
        first = true;
        smol::channel::bounded(1)
    });
    if first {
        // SAFETY: the handler is a plain function that lives as long as the process; it only
        // notes the request, closes a channel and sleeps.
        unsafe {
            SetConsoleCtrlHandler(Some(on_event), TRUE);
        }
    }
}

/// Until the first request (never, when [`catch`] was not called).
pub(crate) async fn woken() {
    match WAKE.get() {
        Some((_, woken)) => {
            let _ = woken.recv().await;
        }
        None => futures_lite::future::pending().await,
    }
}
