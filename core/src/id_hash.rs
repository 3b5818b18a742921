//! A hasher for the integer ids a connection allocates itself.

use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for ids the connection allocated itself: request ids, [`CallId`](crate::CallId)s,
/// [`ExchangeId`](crate::ExchangeId)s. They are consecutive integers, and only ids of ours are
/// ever inserted, so there is no flooding to defend against: a multiplicative mix spreads them
/// over the buckets for a fraction of SipHash's cost (a sequential call looks its ids up about
/// fifteen times).
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

/// Builds [`IdHasher`]s: `HashMap<CallId, V, IdHashing>`.
pub type IdHashing = BuildHasherDefault<IdHasher>;

/// The multiplier of Fibonacci hashing (2^64 divided by the golden ratio).
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(MIX);
        }
    }

    fn write_u64(&mut self, n: u64) {
        // Fold the high half down too: the table index comes from the low bits.
        let x = (self.0 ^ n).wrapping_mul(MIX);
        self.0 = x ^ (x >> 32);
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    /// Consecutive ids spread over a table their size as a random hash would (about 1 - 1/e
    /// of the buckets used, none crowded), and the top bits (the table's control bytes) vary
    /// too.
    #[test]
    fn consecutive_ids_spread_over_the_buckets() {
        let hashing = IdHashing::default();
        let hashes: Vec<u64> = (1..=1024i64).map(|id| hashing.hash_one(id)).collect();
        let mut load = [0u32; 1024];
        for h in &hashes {
            load[(h & 1023) as usize] += 1;
        }
        let used = load.iter().filter(|&&n| n > 0).count();
        assert!(used > 600, "{used} buckets of 1024");
        assert!(load.iter().all(|&n| n <= 8), "a crowded bucket: {load:?}");
        let tops: HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(tops.len() > 100, "{} control values of 128", tops.len());
        assert_ne!(
            hashing.hash_one(crate::CallId(5)),
            hashing.hash_one(crate::CallId(6))
        );
    }
}
