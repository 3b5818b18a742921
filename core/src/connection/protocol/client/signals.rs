//! How the transport's signals reach the protocol: one entry point, [`ClientProtocol::handle_transport`].

use std::time::Instant;

use super::{ClientProtocol, Ctx, Signalled, TransportSignal};
use crate::connection::protocol::vocabulary::events::ClientError;
use crate::error::Closed;
use crate::rpc::LocalError;

impl ClientProtocol {
    /// A transport's signal.
    pub fn handle_transport(&mut self, now: Instant, signal: TransportSignal) -> Signalled {
        let done =
            |r: Result<(), ClientError>| r.map_or_else(Signalled::Refused, |()| Signalled::Done);
        match signal {
            TransportSignal::RequestLost { id, error } => {
                self.fail_request(now, id, error);
                Signalled::Done
            }
            TransportSignal::LostAfterSending { id, reason, http } => {
                self.lost_after_sending(now, id, reason, http);
                Signalled::Done
            }
            TransportSignal::AnswerTooLarge { id, limit } => {
                let mut ids: Vec<i64> = match id {
                    Some(id) => vec![id],
                    None => self.calls.keys().copied().collect(),
                };
                ids.sort_unstable();
                for id in ids {
                    let _ = self
                        .engine
                        .fail(now, id, LocalError::ResponseTooLarge { limit });
                }
                self.pump(now);
                Signalled::Done
            }
            TransportSignal::SessionLost => {
                let renewed = self.handshake.renew(now, cx!(self));
                self.pump(now);
                done(renewed)
            }
            TransportSignal::ProbeTransportLost
                if self.handshake.probe_transport_lost(now, cx!(self)) =>
            {
                self.pump(now);
                Signalled::NewTransportWanted
            }
            TransportSignal::ProbeTransportLost => Signalled::Done,
            TransportSignal::Restarted => {
                // Whatever was queued for the old transport (a cancellation of the probe) is not
                // for the new server, which must see `initialize` first.
                self.drop_transmit(now);
                let restarted = self.handshake.transport_restarted(now, cx!(self));
                self.pump(now);
                done(restarted)
            }
            TransportSignal::Ended(error) => {
                self.handle_closed(now, error);
                Signalled::Done
            }
            TransportSignal::ProbeRefused { id, error } => {
                self.handshake.probe_refused = true;
                let _ = self.engine.fail(now, id, error);
                self.pump(now);
                Signalled::Done
            }
            TransportSignal::TransportChanged => {
                self.handshake.transport_changed(now, cx!(self));
                self.drop_transmit(now);
                self.pump(now);
                Signalled::Done
            }
            TransportSignal::NoTransport(error) => {
                self.handshake.no_transport(now, cx!(self), error.clone());
                self.handle_closed(now, error);
                Signalled::Done
            }
            TransportSignal::StartFailed(reason) => {
                self.handshake.start_failed = true;
                self.handle_closed(now, LocalError::Closed(Closed { reason }));
                Signalled::Done
            }
            TransportSignal::Died(reason) => {
                let mut in_flight: Vec<i64> = self.calls.keys().copied().collect();
                in_flight.sort_unstable();
                for id in in_flight {
                    let reason = reason.clone();
                    let _ =
                        self.engine
                            .fail(now, id, LocalError::MaybeExecuted { reason, http: None });
                }
                self.handle_closed(now, LocalError::Closed(Closed { reason }));
                Signalled::Done
            }
        }
    }
}

impl ClientProtocol {
    /// A note of the HTTP client's, for the application as a diagnostic event.
    pub(crate) fn note_http(&mut self, note: &str) {
        self.events
            .push_back(crate::connection::protocol::vocabulary::events::Event::http_note(note));
    }

    /// Drops what was queued for a transport that is being replaced (a cancellation of the
    /// probe, a request made while the handshake moved): the new server must see the handshake
    /// first. A request dropped so was never sent; it ends as lost.
    fn drop_transmit(&mut self, now: Instant) {
        for m in std::mem::take(&mut self.transmit) {
            if let crate::jsonrpc::Message::Request(r) = m {
                if let Some(id) = r.id.as_i64() {
                    let _ = self.engine.fail(now, id, LocalError::StreamLost);
                }
            }
        }
    }
}
