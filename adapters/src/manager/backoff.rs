//! When to try a server again: capped exponential backoff with jitter, reset after a healthy
//! run, and a limit on failures in a row.
