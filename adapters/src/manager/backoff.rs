//! When to try a server again: capped exponential backoff with jitter, reset after a healthy
//! run, and a limit on failures in a row.
//!
//! Everything here is pure: the current time and the jitter's random input are arguments, so
//! the decisions are deterministic under a simulated clock. [`Jitter`] is a small seeded source
//! of those random inputs.

use std::time::{Duration, Instant};

/// How restarts are spaced and limited.
///
/// The delay before attempt `n` is `initial * multiplier^(n-1)`, capped at `max`, then scaled by
/// a random factor in `[1 - jitter, 1 + jitter]` and capped at `max` again. The defaults are
/// beside each field.
///
/// `#[non_exhaustive]`: build one from [`RestartPolicy::default`] (or
/// [`RestartPolicy::immediate`]), field by field:
///
/// ```
/// use std::time::Duration;
/// use mcpwire::manager::backoff::RestartPolicy;
///
/// let mut policy = RestartPolicy::default();
/// policy.max = Duration::from_secs(5);
/// policy.max_failures = None; // never give up
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RestartPolicy {
    /// The delay before the first attempt (500 ms).
    pub initial: Duration,
    /// The longest delay (30 s).
    pub max: Duration,
    /// How much each delay grows over the one before (2.0; below 1 counts as 1).
    pub multiplier: f64,
    /// How far each delay is spread at random (0.2): it is scaled by a factor in
    /// `[1 - jitter, 1 + jitter]`, then capped at `max` (clamped to `0..=1`).
    pub jitter: f64,
    /// A run that was ready this long resets the count of failures (60 s).
    pub healthy_after: Duration,
    /// Failures in a row before giving up (`Some(5)`); `None` never gives up.
    pub max_failures: Option<u32>,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(30),
            multiplier: 2.0,
            jitter: 0.2,
            healthy_after: Duration::from_secs(60),
            max_failures: Some(5),
        }
    }
}

impl RestartPolicy {
    /// No waiting and no limit (for tests).
    pub fn immediate() -> Self {
        RestartPolicy {
            initial: Duration::ZERO,
            max: Duration::ZERO,
            multiplier: 1.0,
            jitter: 0.0,
            healthy_after: Duration::from_secs(60),
            max_failures: None,
        }
    }

    /// The delay before attempt `attempt` (1-based; 0 counts as 1), with `unit` in `[0, 1)` as
    /// the jitter's random input (0.5 gives the delay without jitter; values outside are
    /// clamped).
    pub fn delay(&self, attempt: u32, unit: f64) -> Duration {
        let max = self.max.as_nanos() as f64;
        let multiplier = if self.multiplier >= 1.0 {
            self.multiplier
        } else {
            1.0
        };
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let base = (self.initial.as_nanos() as f64 * multiplier.powi(exponent)).min(max);
        let jitter = if self.jitter >= 0.0 {
            self.jitter.min(1.0)
        } else {
            0.0
        };
        let unit = if unit.is_nan() {
            0.5
        } else {
            unit.clamp(0.0, 1.0)
        };
        let factor = 1.0 - jitter + 2.0 * jitter * unit;
        let nanos = base * factor;
        // NaN (an infinite base times zero) counts as the cap.
        if nanos >= max || nanos.is_nan() {
            self.max
        } else if nanos < u64::MAX as f64 {
            Duration::from_nanos(nanos.round() as u64)
        } else {
            // Beyond 584 years, below a cap that is further still.
            Duration::try_from_secs_f64(nanos / 1e9).unwrap_or(self.max)
        }
    }
}

/// One server's restart bookkeeping: pure, time and randomness are inputs.
#[derive(Debug, Clone)]
pub struct Restarts {
    /// How restarts are spaced and limited.
    policy: RestartPolicy,
    /// Failures in a row since the last healthy run (or the last reset).
    failures: u32,
    /// When the current run became ready, if it did.
    ready_since: Option<Instant>,
}

/// What to do after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Try again at this time; `attempt` counts from 1 since the last healthy run.
    RetryAt {
        /// When to try again.
        at: Instant,
        /// Which attempt this is, from 1.
        attempt: u32,
    },
    /// The failure limit is reached: stay failed until asked.
    GiveUp {
        /// Failures in a row.
        failures: u32,
    },
}

impl Restarts {
    /// Bookkeeping for a server that has not failed yet.
    pub fn new(policy: RestartPolicy) -> Self {
        Restarts {
            policy,
            failures: 0,
            ready_since: None,
        }
    }

    /// The policy in use.
    pub fn policy(&self) -> &RestartPolicy {
        &self.policy
    }

    /// The server became ready at `now`.
    pub fn ready(&mut self, now: Instant) {
        self.ready_since = Some(now);
    }

    /// The server failed (could not start, or its connection ended) at `now`; `unit` in
    /// `[0, 1)` is the jitter's random input.
    ///
    /// A run that was ready for at least `healthy_after` first resets the count. With
    /// `max_failures: Some(n)`, the `n`th failure in a row gives up (`Some(0)` acts as
    /// `Some(1)`).
    pub fn failed(&mut self, now: Instant, unit: f64) -> Next {
        if let Some(since) = self.ready_since.take() {
            if now.saturating_duration_since(since) >= self.policy.healthy_after {
                self.failures = 0;
            }
        }
        self.failures = self.failures.saturating_add(1);
        if let Some(limit) = self.policy.max_failures {
            if self.failures >= limit {
                return Next::GiveUp {
                    failures: self.failures,
                };
            }
        }
        let delay = self.policy.delay(self.failures, unit);
        Next::RetryAt {
            at: later(now, delay),
            attempt: self.failures,
        }
    }

    /// Asked to try again after giving up: the count starts over.
    pub fn reset(&mut self) {
        self.failures = 0;
        self.ready_since = None;
    }

    /// Failures in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

/// `now + delay`, or as far as an `Instant` reaches when that overflows.
fn later(now: Instant, mut delay: Duration) -> Instant {
    loop {
        if let Some(at) = now.checked_add(delay) {
            return at;
        }
        delay /= 2;
    }
}

/// A small deterministic source of jitter inputs (splitmix64): the same seed gives the same
/// sequence, so tests need no OS randomness. Not for anything secret.
#[derive(Debug, Clone)]
pub struct Jitter(u64);

impl Jitter {
    /// A source seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Jitter(seed)
    }

    /// A source seeded differently in each process (from the standard library's hash keys).
    pub fn random() -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(0x006d_6370_7769_7265);
        Jitter(hasher.finish())
    }

    /// The next value, in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // The top 53 bits, as many as an f64 holds exactly.
        (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn retry_at(next: Next) -> (Instant, u32) {
        match next {
            Next::RetryAt { at, attempt } => (at, attempt),
            Next::GiveUp { failures } => panic!("gave up after {failures}"),
        }
    }

    #[test]
    fn defaults() {
        let p = RestartPolicy::default();
        assert_eq!(p.initial, ms(500));
        assert_eq!(p.max, secs(30));
        assert_eq!(p.multiplier, 2.0);
        assert_eq!(p.jitter, 0.2);
        assert_eq!(p.healthy_after, secs(60));
        assert_eq!(p.max_failures, Some(5));
    }

    #[test]
    fn delays_double_up_to_the_cap() {
        let p = RestartPolicy::default();
        let got: Vec<Duration> = (1..=10).map(|n| p.delay(n, 0.5)).collect();
        let want = [
            ms(500),
            secs(1),
            secs(2),
            secs(4),
            secs(8),
            secs(16),
            secs(30),
            secs(30),
            secs(30),
            secs(30),
        ];
        assert_eq!(got, want);
        assert_eq!(p.delay(0, 0.5), ms(500));
        assert_eq!(p.delay(u32::MAX, 0.5), secs(30));
        assert_eq!(p.delay(u32::MAX, 0.999), secs(30));
    }

    #[test]
    fn jitter_stays_in_bounds() {
        let p = RestartPolicy::default();
        let mut jitter = Jitter::new(7);
        for attempt in 1..=12 {
            let plain = p.delay(attempt, 0.5);
            let low = plain.mul_f64(0.8);
            let high = plain.mul_f64(1.2).min(p.max);
            for _ in 0..1000 {
                let d = p.delay(attempt, jitter.unit());
                assert!(d >= low - ms(1) && d <= high + ms(1), "{attempt}: {d:?}");
                assert!(d <= p.max);
            }
        }
        // The ends of the range, and the cap.
        assert_eq!(p.delay(1, 0.0), ms(400));
        assert!(p.delay(1, 0.999_999) > ms(599));
        assert_eq!(p.delay(7, 0.999_999), secs(30));
        assert_eq!(p.delay(7, 0.0), secs(24));
        assert_eq!(p.delay(6, 0.0), ms(12_800));
        // Out-of-range inputs are clamped.
        assert_eq!(p.delay(1, -3.0), ms(400));
        assert_eq!(p.delay(1, 7.0), ms(600));
        assert_eq!(p.delay(1, f64::NAN), ms(500));
    }

    #[test]
    fn jitter_source_is_deterministic_and_spread() {
        let mut a = Jitter::new(42);
        let mut b = Jitter::new(42);
        let mut c = Jitter::new(43);
        let xs: Vec<f64> = (0..1000).map(|_| a.unit()).collect();
        let ys: Vec<f64> = (0..1000).map(|_| b.unit()).collect();
        let zs: Vec<f64> = (0..1000).map(|_| c.unit()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let low = xs.iter().filter(|&&x| x < 0.5).count();
        assert!((400..600).contains(&low), "{low}");
        let mut r = Jitter::random();
        assert!((0.0..1.0).contains(&r.unit()));
    }

    #[test]
    fn retries_are_spaced_from_the_failure() {
        let t0 = Instant::now();
        let mut r = Restarts::new(RestartPolicy::default());
        let (at, attempt) = retry_at(r.failed(t0, 0.5));
        assert_eq!((at, attempt), (t0 + ms(500), 1));
        let (at, attempt) = retry_at(r.failed(t0 + secs(1), 0.5));
        assert_eq!((at, attempt), (t0 + secs(2), 2));
        assert_eq!(r.failures(), 2);
    }

    #[test]
    fn a_healthy_run_resets_the_count() {
        let t0 = Instant::now();
        let mut r = Restarts::new(RestartPolicy::default());
        for n in 1..=3 {
            assert_eq!(retry_at(r.failed(t0, 0.5)).1, n);
        }
        // Ready for 59 s: not healthy enough.
        r.ready(t0 + secs(10));
        let (at, attempt) = retry_at(r.failed(t0 + secs(69), 0.5));
        assert_eq!((at, attempt), (t0 + secs(69) + secs(4), 4));
        // Ready for 60 s: the count starts over.
        r.ready(t0 + secs(100));
        let (at, attempt) = retry_at(r.failed(t0 + secs(160), 0.5));
        assert_eq!((at, attempt), (t0 + secs(160) + ms(500), 1));
        assert_eq!(r.failures(), 1);
        // A failure to start (never ready) does not reset.
        let (_, attempt) = retry_at(r.failed(t0 + secs(500), 0.5));
        assert_eq!(attempt, 2);
        // Readiness counts once: a later failure measures from a new `ready`.
        r.ready(t0 + secs(600));
        let (_, attempt) = retry_at(r.failed(t0 + secs(601), 0.5));
        assert_eq!(attempt, 3);
        let (_, attempt) = retry_at(r.failed(t0 + secs(700), 0.5));
        assert_eq!(attempt, 4);
    }

    #[test]
    fn gives_up_after_the_limit_and_starts_over_when_asked() {
        let t0 = Instant::now();
        let mut r = Restarts::new(RestartPolicy::default());
        for n in 1..=4 {
            assert_eq!(retry_at(r.failed(t0 + secs(n.into()), 0.5)).1, n);
        }
        assert_eq!(r.failed(t0 + secs(5), 0.5), Next::GiveUp { failures: 5 });
        assert_eq!(r.failures(), 5);
        r.reset();
        assert_eq!(r.failures(), 0);
        let (at, attempt) = retry_at(r.failed(t0 + secs(10), 0.5));
        assert_eq!((at, attempt), (t0 + secs(10) + ms(500), 1));
    }

    #[test]
    fn a_limit_of_zero_gives_up_at_once() {
        let policy = RestartPolicy {
            max_failures: Some(0),
            ..RestartPolicy::default()
        };
        let mut r = Restarts::new(policy);
        assert_eq!(r.failed(Instant::now(), 0.5), Next::GiveUp { failures: 1 });
    }

    #[test]
    fn no_limit_never_gives_up() {
        let t0 = Instant::now();
        let policy = RestartPolicy {
            max_failures: None,
            ..RestartPolicy::default()
        };
        let mut r = Restarts::new(policy);
        let mut jitter = Jitter::new(1);
        for n in 1..=1000u32 {
            let now = t0 + secs(n.into());
            let (at, attempt) = retry_at(r.failed(now, jitter.unit()));
            assert_eq!(attempt, n);
            assert!(at > now && at <= now + secs(30));
        }
    }

    #[test]
    fn immediate_never_waits_nor_gives_up() {
        let p = RestartPolicy::immediate();
        for n in [0, 1, 2, 10, u32::MAX] {
            assert_eq!(p.delay(n, 0.0), Duration::ZERO);
            assert_eq!(p.delay(n, 0.99), Duration::ZERO);
        }
        let t0 = Instant::now();
        let mut r = Restarts::new(p);
        for n in 1..=100 {
            assert_eq!(r.failed(t0, 0.3), Next::RetryAt { at: t0, attempt: n });
        }
    }

    #[test]
    fn huge_delays_do_not_overflow() {
        let policy = RestartPolicy {
            max: Duration::MAX,
            max_failures: None,
            ..RestartPolicy::default()
        };
        assert_eq!(policy.delay(u32::MAX, 0.5), Duration::MAX);
        let t0 = Instant::now();
        let mut r = Restarts::new(policy);
        for _ in 0..200 {
            let (at, _) = retry_at(r.failed(t0, 0.5));
            assert!(at >= t0);
        }
    }
}
