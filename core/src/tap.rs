//! The frame observer: a tap that sees every frame a connection sends or receives.
//!
//! Tests use it to assert what went on the wire; the command line's `--verbose` prints it.

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From us to the server.
    Outgoing,
    /// From the server to us.
    Incoming,
}

/// Sees every frame of a connection: one JSON-RPC message's bytes (without framing).
pub trait FrameObserver: Send {
    /// Called once per frame, in wire order for each direction.
    fn frame(&mut self, direction: Direction, bytes: &[u8]);
}

impl<F: FnMut(Direction, &[u8]) + Send> FrameObserver for F {
    fn frame(&mut self, direction: Direction, bytes: &[u8]) {
        self(direction, bytes)
    }
}
