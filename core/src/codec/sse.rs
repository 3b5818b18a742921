//! Server-Sent Events (WHATWG "event stream interpretation"): decoder and encoder.
