//! The start of a connection: the era probe (`server/discover`) or `initialize`, the verdict, a
//! fresh transport after a probe that went unanswered, and the session renewal of the handshake
//! era. A small machine on the connection's engine: it sends through it and reports to the
//! connection's events.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::call::params::{self, raw};
use super::era::{described_server, judge_probe, ChosenEra, Era, EraReason, Verdict};
use super::vocabulary::client_config::ClientConfig;
use super::vocabulary::events::{CallError, ClientError, Event};
use crate::rpc::{Engine, LocalError, Origin, Outcome, Reply, RequestOptions};
use crate::types::codes::UNSUPPORTED_PROTOCOL_VERSION;
use crate::types::{
    is_handshake_version, InitializeParams, InitializeResult, HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
};

/// Where the connection's start stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Idle,
    Probing(i64),
    /// The probe went unanswered: waiting for a fresh transport to start the handshake on.
    AwaitingTransport,
    Initializing(i64),
    Ready,
    Closed,
}

/// What the handshake works with: the connection's engine, events and settings.
pub(crate) struct Ctx<'a> {
    pub(crate) engine: &'a mut Engine,
    pub(crate) events: &'a mut VecDeque<Event>,
    pub(crate) config: &'a ClientConfig,
    /// The stateless era's `_meta`.
    pub(crate) meta: &'a super::call::params::StatelessMeta,
}

/// The handshake's part of a connection.
#[derive(Debug)]
pub(crate) struct Handshake {
    pub(crate) phase: Phase,
    pub(crate) era: Option<ChosenEra>,
    /// Why the era is what it is, once chosen.
    pub(crate) era_reason: Option<EraReason>,
    pub(crate) server: Option<Box<InitializeResult>>,
    restart_requested: bool,
    /// The server failed to start (during the probe): the probe's end asks for no new process.
    pub(crate) start_failed: bool,
    /// Whether the transport can be started again (stdio): without that (HTTP), a probe that
    /// goes unanswered is an error, not a fallback.
    pub(crate) restartable: bool,
    /// The probe was refused as an older server refuses an unknown request.
    pub(crate) probe_refused: bool,
    /// The probe was sent again after a modern error told the era but not the server's
    /// description (a second refusal is not retried).
    rediscovered: bool,
    /// A new handshake runs because the server forgot the session: calls may go on.
    pub(crate) renewing: bool,
    /// How the last renewal failed, until the transport takes it (a failed renewal does not
    /// close the connection: the transport decides whether to try again).
    pub(crate) renewal_failed: Option<CallError>,
    /// When the start-up budget ends: `init_timeout` from the start, shared by the era probe
    /// and the handshake (a server that never answers fails after the one timeout, not after
    /// the probe's and then the handshake's).
    startup_ends: Option<Instant>,
    /// The probe, and `initialize`, were sent once more after a loss (each goes again once).
    probe_resent: bool,
    initialize_resent: bool,
    /// The version the last `initialize` offered, to offer again when it is sent once more.
    offered: String,
}

impl Handshake {
    pub(crate) fn new() -> Self {
        Handshake {
            phase: Phase::Idle,
            era: None,
            era_reason: None,
            server: None,
            restart_requested: false,
            start_failed: false,
            restartable: true,
            probe_refused: false,
            rediscovered: false,
            renewing: false,
            renewal_failed: None,
            startup_ends: None,
            probe_resent: false,
            initialize_resent: false,
            offered: String::new(),
        }
    }

    /// What is left of the start-up budget at `now`.
    fn startup_left(&self, now: Instant, cx: &Ctx<'_>) -> Duration {
        self.startup_ends.map_or(cx.config.init_timeout, |end| {
            end.saturating_duration_since(now)
        })
    }

    /// Starts the connection: the probe (`server/discover`) or, with [`Era::Handshake`],
    /// `initialize`.
    pub(crate) fn start(&mut self, now: Instant, mut cx: Ctx<'_>) -> Result<(), ClientError> {
        if self.phase != Phase::Idle {
            return Err(ClientError::AlreadyStarted);
        }
        self.startup_ends = now.checked_add(cx.config.init_timeout);
        if cx.config.era == Era::Handshake {
            self.era_reason = Some(EraReason::Pinned);
            let version = cx.config.protocol_version.clone();
            return self.send_initialize(now, &mut cx, version);
        }
        self.send_probe(now, &mut cx)
    }

    /// Sends `server/discover`.
    fn send_probe(&mut self, now: Instant, cx: &mut Ctx<'_>) -> Result<(), ClientError> {
        // The probe never waits longer than the start-up may take; detecting the era, not
        // longer than its share of it, so that `initialize` always gets its chance.
        let left = self.startup_left(now, cx);
        let timeout = match cx.config.era {
            Era::Auto => (cx.config.probe_timeout)
                .min(probe_share(cx.config.init_timeout))
                .min(left),
            _ => left,
        };
        let opts = RequestOptions::new()
            .timeout(timeout)
            .origin(Origin::PROTOCOL);
        let params = params::encode(None, Some(cx.meta), None, None, &[]);
        let id = cx.engine.request(now, "server/discover", params, opts)?;
        self.phase = Phase::Probing(id);
        Ok(())
    }

    fn send_initialize(
        &mut self,
        now: Instant,
        cx: &mut Ctx<'_>,
        version: String,
    ) -> Result<(), ClientError> {
        self.offered.clone_from(&version);
        let params = InitializeParams {
            protocol_version: version,
            // Those on demand too: a session's capabilities are fixed at its start.
            capabilities: cx
                .config
                .capabilities
                .union(&cx.config.capabilities_on_demand),
            client_info: cx.config.client_info.clone(),
        };
        // A renewal has a timeout of its own; the first handshake what the probe left of the
        // start-up budget.
        let timeout = if self.renewing {
            cx.config.init_timeout
        } else {
            self.startup_left(now, cx)
        };
        let opts = RequestOptions::new()
            .timeout(timeout)
            .origin(Origin::PROTOCOL);
        let id = cx
            .engine
            .request(now, "initialize", Some(raw(&params)), opts)?;
        self.phase = Phase::Initializing(id);
        Ok(())
    }

    /// The server forgot the session (HTTP, handshake era): the handshake runs again, offering
    /// the version negotiated before. Calls stay pending. If it fails, the connection stays
    /// open and the failure waits in `renewal_failed` for the transport.
    pub(crate) fn renew(&mut self, now: Instant, mut cx: Ctx<'_>) -> Result<(), ClientError> {
        if self.renewing {
            return Ok(());
        }
        if self.phase != Phase::Ready || self.era != Some(ChosenEra::Handshake) {
            return Err(ClientError::NotReady);
        }
        let version = self
            .server
            .as_ref()
            .map(|s| s.protocol_version.clone())
            .unwrap_or_else(|| cx.config.protocol_version.clone());
        self.renewing = true;
        self.initialize_resent = false;
        self.send_initialize(now, &mut cx, version)
    }

    /// Whether request `id` is the start's probe or `initialize` sent once more after a loss
    /// (its end then says it was sent twice).
    pub(crate) fn was_resent(&self, id: i64) -> bool {
        match self.phase {
            Phase::Probing(p) if p == id => self.probe_resent,
            Phase::Initializing(i) if i == id => self.initialize_resent,
            _ => false,
        }
    }

    /// Request `id` was lost after it may have reached the server. If it is the start's probe
    /// or `initialize` (or a renewal's), which change nothing on a server, the first loss sends
    /// it once more with a new id (the lost one ends unseen) and says `Some(true)`; a second
    /// loss says `Some(false)`: it ends as any lost request does. `None`: not the start's.
    pub(crate) fn resend_lost(&mut self, now: Instant, mut cx: Ctx<'_>, id: i64) -> Option<bool> {
        let probe = match self.phase {
            Phase::Probing(p) if p == id => true,
            Phase::Initializing(i) if i == id => false,
            _ => return None,
        };
        let resent = match probe {
            true => &mut self.probe_resent,
            false => &mut self.initialize_resent,
        };
        if std::mem::replace(resent, true) {
            return Some(false);
        }
        // Its end no longer matches a phase, so it is dropped unseen.
        self.phase = Phase::AwaitingTransport;
        let _ = cx.engine.fail(now, id, LocalError::StreamLost);
        let sent = match probe {
            true => self.send_probe(now, &mut cx),
            false => {
                let version = self.offered.clone();
                self.send_initialize(now, &mut cx, version)
            }
        };
        if let Err(e) = sent {
            self.fail(now, cx, CallError::InvalidResult(e.to_string()));
        }
        Some(true)
    }

    /// Whether the probe is in flight with [`Era::Auto`].
    pub(crate) fn probe_may_restart(&self, era: Era) -> bool {
        matches!(self.phase, Phase::Probing(_)) && era == Era::Auto
    }

    /// Whether the probe failed in a way that needs a fresh transport (the server never
    /// answered, or died). Reading clears it.
    pub(crate) fn take_restart_request(&mut self) -> bool {
        std::mem::take(&mut self.restart_requested)
    }

    /// The transport died while the probe was in flight: with [`Era::Auto`] the probe ends as
    /// lost and a fresh transport is asked for (returns `true`); otherwise nothing is done.
    pub(crate) fn probe_transport_lost(&mut self, now: Instant, cx: Ctx<'_>) -> bool {
        match self.phase {
            Phase::Probing(id) if cx.config.era == Era::Auto => {
                let _ = cx.engine.fail(now, id, LocalError::StreamLost);
                true
            }
            Phase::AwaitingTransport => true,
            _ => false,
        }
    }

    /// The handshake under way moves to another transport: its `initialize` (or probe) is
    /// forgotten, and [`transport_restarted`](Self::transport_restarted) starts it again.
    pub(crate) fn transport_changed(&mut self, now: Instant, cx: Ctx<'_>) {
        let pending = match self.phase {
            Phase::Initializing(id) | Phase::Probing(id) => id,
            _ => return,
        };
        self.phase = Phase::AwaitingTransport;
        // Its end no longer matches a phase, so it is dropped unseen.
        let _ = cx.engine.fail(now, pending, LocalError::StreamLost);
    }

    /// No transport could be had while the handshake waited for one: it fails with `error`.
    pub(crate) fn no_transport(&mut self, now: Instant, cx: Ctx<'_>, error: LocalError) {
        if matches!(self.phase, Phase::AwaitingTransport | Phase::Idle) {
            self.fail(now, cx, CallError::Local(error));
        }
    }

    /// A fresh transport is up after a failed probe: the handshake starts on it.
    pub(crate) fn transport_restarted(
        &mut self,
        now: Instant,
        mut cx: Ctx<'_>,
    ) -> Result<(), ClientError> {
        if self.phase != Phase::AwaitingTransport {
            return Err(ClientError::AlreadyStarted);
        }
        self.era = Some(ChosenEra::Handshake);
        let version = cx.config.protocol_version.clone();
        self.send_initialize(now, &mut cx, version)
    }

    /// Whether a call may go now: after the handshake (or during a renewal); before it, only
    /// `ping` in the handshake era. A closed connection is refused before this is asked, with
    /// the engine's record of why it closed (the phase closes with the engine).
    pub(crate) fn check_open(&self, method: &str) -> Result<(), ClientError> {
        match self.phase {
            Phase::Ready => Ok(()),
            Phase::Initializing(_) if self.renewing => Ok(()),
            _ if method == "ping" && self.era != Some(ChosenEra::Stateless) => Ok(()),
            _ => Err(ClientError::NotReady),
        }
    }

    /// Takes the outcome of request `id` if it is the handshake's; gives it back otherwise.
    pub(crate) fn completed(
        &mut self,
        now: Instant,
        cx: Ctx<'_>,
        id: i64,
        outcome: Outcome,
    ) -> Option<Outcome> {
        match self.phase {
            Phase::Probing(p) if p == id => self.probe_done(now, cx, outcome),
            Phase::Initializing(i) if i == id => self.handshake_done(now, cx, outcome),
            _ => return Some(outcome),
        }
        None
    }

    fn probe_done(&mut self, now: Instant, mut cx: Ctx<'_>, outcome: Outcome) {
        if std::mem::take(&mut self.probe_refused) && cx.config.era == Era::Auto {
            if self.startup_left(now, &cx).is_zero() {
                // The probe took the whole start-up budget: nothing is left for the handshake
                // (an initialize sent now would be due at once).
                let message = "no time is left of the start-up timeout for the handshake".into();
                return self.fail(now, cx, probe_failure(outcome, message));
            }
            self.era = Some(ChosenEra::Handshake);
            // Refused over HTTP with a status and no JSON-RPC answer.
            self.era_reason = match &outcome {
                Err(LocalError::Http(h)) => {
                    h.status.map(|status| EraReason::RefusedHttp { status })
                }
                _ => None,
            };
            let version = LATEST_HANDSHAKE_VERSION.to_owned();
            if let Err(e) = self.send_initialize(now, &mut cx, version) {
                self.fail(now, cx, CallError::InvalidResult(e.to_string()));
            }
            return;
        }
        let verdict = judge_probe(&outcome, cx.config.era);
        if let Some(reason) = EraReason::of(&outcome, cx.config.era, &verdict) {
            self.era_reason = Some(reason);
        }
        let handshake_next = matches!(
            verdict,
            Verdict::Handshake(_) | Verdict::HandshakeOnNewProcess
        );
        if handshake_next && self.startup_left(now, &cx).is_zero() {
            // The probe took the whole start-up budget: nothing is left for the handshake.
            let message = "no time is left of the start-up timeout for the handshake".into();
            return self.fail(now, cx, probe_failure(outcome, message));
        }
        match verdict {
            // A modern error (an unsupported version, a header mismatch…) tells the era but
            // not what the server offers: the probe goes once more, as the error asks.
            Verdict::Stateless(None) if !std::mem::replace(&mut self.rediscovered, true) => {
                if let Err(e) = self.send_probe(now, &mut cx) {
                    self.fail(now, cx, CallError::InvalidResult(e.to_string()));
                }
            }
            Verdict::Stateless(discover) => {
                let init = described_server(discover.as_ref());
                self.era = Some(ChosenEra::Stateless);
                self.server = Some(Box::new(init.clone()));
                self.phase = Phase::Ready;
                cx.events.push_back(Event::Ready {
                    era: ChosenEra::Stateless,
                    server: Box::new(init),
                });
            }
            Verdict::Handshake(version) => {
                self.era = Some(ChosenEra::Handshake);
                if let Err(e) = self.send_initialize(now, &mut cx, version) {
                    self.fail(now, cx, CallError::InvalidResult(e.to_string()));
                }
            }
            Verdict::HandshakeOnNewProcess if self.start_failed || !self.restartable => {
                self.fail(now, cx, probe_failure(outcome, String::new()))
            }
            Verdict::HandshakeOnNewProcess => {
                self.phase = Phase::AwaitingTransport;
                self.restart_requested = true;
            }
            Verdict::Fail(message) => self.fail(now, cx, probe_failure(outcome, message)),
        }
    }

    fn handshake_done(&mut self, now: Instant, cx: Ctx<'_>, outcome: Outcome) {
        let outcome = match outcome {
            // The first handshake's deadline is the end of the start-up budget: its words
            // quote the budget as it was set, not what the probe left of it.
            Err(LocalError::Timeout {
                which,
                despite_progress,
                method,
                ..
            }) if !self.renewing => Err(LocalError::Timeout {
                which,
                despite_progress,
                method,
                after: cx.config.init_timeout,
            }),
            outcome => outcome,
        };
        let init = match initialize_answer(outcome) {
            Ok(init) => init,
            Err(failure) if self.renewing && !cx.engine.is_closed() => {
                self.renewing = false;
                self.phase = Phase::Ready;
                self.renewal_failed = Some(failure);
                return;
            }
            Err(failure) => return self.fail(now, cx, failure),
        };
        self.era = Some(ChosenEra::Handshake);
        self.server = Some(Box::new(init.clone()));
        self.phase = Phase::Ready;
        // A closed engine cannot refuse here: it would have ended the handshake first.
        let _ = cx.engine.notify(now, "notifications/initialized", None);
        let event = if std::mem::take(&mut self.renewing) {
            Event::SessionRenewed(Box::new(init))
        } else {
            Event::Ready {
                era: ChosenEra::Handshake,
                server: Box::new(init),
            }
        };
        cx.events.push_back(event);
    }

    /// The handshake failed: the connection closes.
    fn fail(&mut self, now: Instant, cx: Ctx<'_>, failure: CallError) {
        let reason = format!("handshake failed: {failure}");
        cx.events.push_back(Event::HandshakeFailed(failure));
        self.phase = Phase::Closed;
        cx.engine.close(now, reason);
    }
}

/// The era probe's share of a start-up budget: a third at most, so that `initialize` always
/// has two thirds of it; whole seconds once that is a second or more (the words quote it).
fn probe_share(init_timeout: Duration) -> Duration {
    let third = init_timeout / 3;
    if third >= Duration::from_secs(1) {
        Duration::from_secs(third.as_secs())
    } else {
        third
    }
}

/// Why a failed probe fails the connection: the local end, the server's error, or (for a
/// version the server refused, or a result we cannot read) `message`.
pub(crate) fn probe_failure(outcome: Outcome, message: String) -> CallError {
    match outcome {
        Err(e) => CallError::Local(e),
        Ok(Reply::Error(e)) if e.code != UNSUPPORTED_PROTOCOL_VERSION => CallError::Server(e),
        _ => CallError::InvalidResult(message),
    }
}

/// The server's answer to `initialize`, if it is one this client can go on with: a result in a
/// handshake-era version it speaks.
pub(crate) fn initialize_answer(outcome: Outcome) -> Result<InitializeResult, CallError> {
    match outcome {
        Ok(Reply::Result(r)) => match r.parse::<InitializeResult>() {
            Ok(init) if is_handshake_version(&init.protocol_version) => Ok(init),
            Ok(init) => Err(CallError::InvalidResult(format!(
                "the server answered with protocol version {:?}, which this client does not speak (it speaks {})",
                init.protocol_version,
                HANDSHAKE_VERSIONS.join(", ")
            ))),
            Err(e) => Err(CallError::InvalidResult(format!("initialize: {e}"))),
        },
        Ok(Reply::Error(e)) => Err(CallError::Server(e)),
        Err(e) => Err(CallError::Local(e)),
    }
}

#[cfg(test)]
mod tests {
    use crate::connection::protocol::vocabulary::calls::McpCall;
    use crate::connection::protocol::{CallOptions, ClientError, ClientProtocol};

    /// Before the start no call may go, and a protocol starts once. (A
    /// [`Connection`](crate::Connection) starts its protocol as it is made: the pair tests
    /// cannot see either.)
    #[test]
    fn calls_wait_for_the_start_and_a_second_start_is_refused() {
        let now = crate::test_support::epoch();
        let mut c = ClientProtocol::new(crate::test_support::legacy());
        let opts = CallOptions::default;
        let list = c.call(now, &McpCall::list_tools(), opts());
        assert_eq!(list.unwrap_err(), ClientError::NotReady);
        let request = c.request(now, "tools/list", None, opts());
        assert_eq!(request.unwrap_err(), ClientError::NotReady);
        c.start(now).unwrap();
        assert_eq!(c.start(now), Err(ClientError::AlreadyStarted));
    }
}
