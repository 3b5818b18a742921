//! Every request to stop the command arrives here, wherever it comes from: on Unix Ctrl-C
//! (SIGINT), SIGTERM (`kill`, `timeout`, a supervisor) and SIGHUP (the terminal closed); on
//! Windows Ctrl-C, Ctrl-Break and the console closing (or the user logging off, the system
//! shutting down).
//!
//! Once a command has a connection ([`stop_gracefully`]), the first request stops it the same
//! way whatever it is: the command's future is dropped, which cancels a call in flight on the
//! wire (`notifications/cancelled`, or `tasks/cancel` for a call that runs as a task), the
//! connection closes gracefully (an HTTP session gets its DELETE, a stdio server the end of its
//! input, then SIGTERM and SIGKILL if it lingers) and the process exits with the request's code
//! (130, 143, 129) instead of dying on the spot. A second request ends the process at once: a
//! second Ctrl-C, or any other request. The same request sent twice is one: `timeout` sends its
//! SIGTERM to the command and to its process group (the command again) at the same moment, and
//! a closed terminal's SIGHUP may come from the terminal and from the shell; no person asks
//! twice within [`TWICE`](request::TWICE). Before a connection exists, nothing is caught: there
//! is nothing to close.

use futures_lite::future;

use crate::exit_codes;
use crate::failure::Failure;

mod request;

pub(crate) use request::{requested, Request};

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

/// Elsewhere nothing is caught: the platform's own handling ends the process.
#[cfg(not(any(unix, windows)))]
mod imp {
    pub(crate) fn catch() {}

    pub(crate) async fn woken() {
        futures_lite::future::pending::<()>().await;
    }
}

/// Catches every stop request from now on; [`wait`] sees it, even one that came before it was
/// called. Calling it again changes nothing.
pub(crate) fn catch() {
    imp::catch();
}

/// Until a stop request comes (never, when [`catch`] was not called or could not catch). Every
/// waiter sees it, however many there are and whenever they start waiting.
pub(crate) async fn wait() -> Request {
    loop {
        if let Some(request) = requested() {
            return request;
        }
        imp::woken().await;
    }
}

/// Why a command stopped before its end.
pub(crate) enum Stop {
    /// A stop request: Ctrl-C, SIGTERM, SIGHUP, a console event.
    Requested(Request),
    /// stdout's reader went away (or stdout could not be written).
    StdoutGone,
}

/// Runs `work` unless a stop request comes or stdout is lost first. On a request, `named` is
/// given it before `work` is dropped: the calls cut short can be told why (`interrupted`).
pub(crate) async fn unless_stopped<T>(
    work: impl std::future::Future<Output = T>,
    named: impl FnOnce(Request),
) -> Result<T, Stop> {
    let requested = async {
        let request = wait().await;
        named(request);
        Err(Stop::Requested(request))
    };
    let gone = async {
        crate::output::stdout_gone().await;
        Err(Stop::StdoutGone)
    };
    future::or(async { Ok(work.await) }, future::or(requested, gone)).await
}

/// From now on (a connection is about to be made), a stop request and the loss of stdout stop
/// the command, and the connection is closed gracefully before the process ends.
pub(crate) fn stop_gracefully() {
    catch();
    crate::output::close_first();
}

/// A call a stop request cut short tells each of the Manager's servers why ("interrupted").
pub(crate) fn name_for_servers(manager: &mcpwire::manager::Manager, request: Request) {
    for (server, _) in manager.states() {
        if let Some(client) = manager.client(&server) {
            client.set_cancel_reason(request.words());
        }
    }
}

/// Once the connection is closed: when stdout was lost, ends the process as that asks (see
/// `output::end_if_lost`), unless a stop request came first (a closed terminal takes stdout with
/// it: the request's exit code is the one to end with).
pub(crate) fn end_if_lost() {
    if requested().is_none() {
        crate::output::end_if_lost();
    }
}

/// The failure a stop is, once the connection was closed; what was printed said the rest.
pub(crate) fn stopped(stop: &Stop) -> Failure {
    match stop {
        Stop::Requested(request) => Failure {
            told: true,
            ..Failure::new(request.code(), request.words())
        },
        // The process ends in `output::end_if_lost` (by SIGPIPE when the reader went away).
        Stop::StdoutGone => Failure::new(exit_codes::CALL, ""),
    }
}

/// Says at once that a stop request was seen and the connection is closing (it may take
/// seconds).
pub(crate) fn tell(stop: &Stop) {
    if let Stop::Requested(request) = stop {
        let again = match request {
            Request::Interrupt => "Ctrl-C again ends at once",
            _ => "a second signal ends at once",
        };
        errln!(
            "mcpwire: {}; closing the connection ({again})",
            request.words()
        );
    }
}
