//! The in-crate tests' shared harness: the one reading of the clock (every instant an offset from
//! it), deterministic random numbers, and the [`Pair`] of a client connection and the demo server.
//! Compiled for the crate's own tests only (`#[cfg(test)]` in `lib.rs`).

use std::time::Instant;

mod pair;

pub use pair::*;

/// The one reading of the clock in the core's tests: every instant is an offset from it.
pub fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Deterministic pseudo-random numbers (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
