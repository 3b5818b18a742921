//! Resuming SSE streams: each waits for the server's `retry`, or a backoff doubling from the
//! default, within its budget of attempts.

use std::time::{Duration, Instant};

use super::exchange::Stream;

/// A resume waiting for its time.
#[derive(Debug)]
struct Resume {
    at: Instant,
    stream: Stream,
}

/// The streams waiting to be resumed.
#[derive(Debug, Default)]
pub(crate) struct Resumes {
    waiting: Vec<Resume>,
}

impl Resumes {
    /// Schedules `stream`'s resume, if its budget allows: after the server's `retry`, or after
    /// `default_retry` doubled for each attempt since its last message. Gives the stream back
    /// when its budget is spent.
    pub(crate) fn schedule(
        &mut self,
        now: Instant,
        mut stream: Stream,
        default_retry: Duration,
    ) -> Result<(), Stream> {
        if stream.budget == 0 {
            return Err(stream);
        }
        stream.budget -= 1;
        let wait = match stream.retry_ms {
            Some(ms) => Duration::from_millis(ms),
            None => default_retry.saturating_mul(1 << stream.attempts.min(5)),
        };
        stream.attempts += 1;
        self.waiting.push(Resume {
            at: now + wait,
            stream,
        });
        Ok(())
    }

    /// When the next resume is due.
    pub(crate) fn next_at(&self) -> Option<Instant> {
        self.waiting.iter().map(|r| r.at).min()
    }

    /// The streams whose wait is over at `now`.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<Stream> {
        let (due, later): (Vec<Resume>, Vec<Resume>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|r| r.at <= now);
        self.waiting = later;
        due.into_iter().map(|r| r.stream).collect()
    }

    /// Forgets the standalone stream's resume (its session is gone; it opens anew).
    pub(crate) fn drop_standalone(&mut self) {
        self.waiting.retain(|r| !r.stream.standalone);
    }

    /// Every waiting stream (the session they belonged to is gone, or the connection closes).
    pub(crate) fn take_all(&mut self) -> Vec<Stream> {
        std::mem::take(&mut self.waiting)
            .into_iter()
            .map(|r| r.stream)
            .collect()
    }
}
