//! Who runs a connection's IO, and where its wake-ups go.
//!
//! The connection's loop (its transport, the application's handlers, its timer) sits behind a
//! lock that whoever runs it holds. The driver task runs it when nobody else does. A caller
//! waiting for its answer runs it itself — it *helps*: it takes the lock, makes the step the
//! driver would have made, and while it waits it holds the *claim*, so that the connection's
//! wake-ups (its pipes or sockets ready, its timer, a command from another handle) go to the
//! caller's task instead of the driver's. A sequential call then never hops to the driver's
//! thread and back: the caller writes its request, the readiness of the answer wakes the caller,
//! and the caller reads it.
//!
//! One caller holds the claim at a time; it gives it back when its answer came (or it was
//! dropped), and a wake-up sent to it after its last step is passed on to the driver task.
//!
//! A caller that holds the claim but is no longer polled (a future kept in a `select!` that went
//! the other way) would leave the wake-ups sent to it unanswered. The driver task watches while
//! claims are being made: when a wake-up sent to the claimer has waited a whole watch period
//! without a step, the task takes the claim back and runs the connection itself. The period
//! grows while every watch finds the claimer answering (see [`WATCH_PERIOD_MAX`]).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::task::{Wake, Waker};
use std::time::Duration;

use atomic_waker::AtomicWaker;

/// How long a wake-up may wait for the claimer's step before the driver task takes over: the
/// watch's period once a wake-up was seen unanswered, and its first.
pub(crate) const WATCH_PERIOD: Duration = Duration::from_millis(20);

/// The longest period between two watches while every watch finds the claimer answering. Each
/// watch wakes the driver task, and on a multi-threaded executor that wake-up costs more than
/// itself: the executor's thread, woken, takes async-io's reactor for a while and hands the
/// caller's wake-ups over a thread (at one watch every 20 ms, sequential HTTP calls paid 3-4
/// context switches each instead of 1.5). So the period doubles while all is well, up to this,
/// and a claimer that stops polling is found within this and one [`WATCH_PERIOD`].
pub(crate) const WATCH_PERIOD_MAX: Duration = Duration::from_millis(320);

/// Someone failed to take the loop's lock and wants a step when it is let go.
const WANTED: u8 = 1;
/// The driver task is watching the claims (its watch timer is armed).
const WATCHING: u8 = 2;

/// A claim's owner: a number unique within the connection (0 is nobody).
pub(crate) type Token = u64;

/// The connection's wake-up route; its [`Waker`] is the one every source of the connection is
/// polled with.
pub(crate) struct Route {
    bits: AtomicU8,
    /// Who holds the claim (0: nobody).
    owner: AtomicU64,
    next_token: AtomicU64,
    /// Wake-ups sent so far (to the claimer or the task).
    wakes: AtomicU64,
    /// The count of wake-ups when the last step started.
    stepped: AtomicU64,
    /// Claims made so far (the driver task keeps watching while they go on).
    claims: AtomicU64,
    claimer: AtomicWaker,
    task: AtomicWaker,
}

impl Wake for Route {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.send();
    }
}

impl Route {
    pub(crate) fn new() -> Arc<Route> {
        Arc::new(Route {
            bits: AtomicU8::new(0),
            owner: AtomicU64::new(0),
            next_token: AtomicU64::new(1),
            wakes: AtomicU64::new(0),
            stepped: AtomicU64::new(0),
            claims: AtomicU64::new(0),
            claimer: AtomicWaker::new(),
            task: AtomicWaker::new(),
        })
    }

    /// A wake-up: to the claimer if there is one, else to the driver task.
    ///
    /// Counted before the owner is read, so that a claimer giving the claim back (which clears
    /// the owner, then compares the count with its last step) either sees this wake-up and
    /// passes it on, or this wake-up sees no owner and goes to the task.
    fn send(&self) {
        self.wakes.fetch_add(1, SeqCst);
        if self.owner.load(SeqCst) != 0 {
            self.claimer.wake();
        } else {
            self.task.wake();
        }
    }

    /// A token for one waiter.
    pub(crate) fn token(&self) -> Token {
        self.next_token.fetch_add(1, SeqCst)
    }

    /// Takes the claim for `token` if nobody holds it (or keeps it), and has wake-ups sent to
    /// `waker`. Returns whether `token` holds the claim.
    pub(crate) fn claim(&self, token: Token, waker: Option<&Waker>) -> bool {
        let held = match self.owner.compare_exchange(0, token, SeqCst, SeqCst) {
            Ok(_) => {
                self.claims.fetch_add(1, SeqCst);
                // The task watches while claims are made; start it when it stopped.
                if self.bits.fetch_or(WATCHING, SeqCst) & WATCHING == 0 {
                    self.task.wake();
                }
                true
            }
            Err(owner) => owner == token,
        };
        if held {
            if let Some(w) = waker {
                self.claimer.register(w);
            }
        }
        held
    }

    /// Takes the claim for `token` whoever holds it, and has wake-ups sent to `waker`: a caller
    /// whose deadline passed unhandled (the driver is not running the connection, the claimer
    /// stopped polling) runs the connection itself. The one it was taken from finds it gone at
    /// its next poll and waits for its outcome.
    pub(crate) fn take_over(&self, token: Token, waker: &Waker) {
        self.claimer.register(waker);
        if self.owner.swap(token, SeqCst) != token {
            self.claims.fetch_add(1, SeqCst);
            if self.bits.fetch_or(WATCHING, SeqCst) & WATCHING == 0 {
                self.task.wake();
            }
        }
    }

    /// Gives the claim back if `token` holds it; a wake-up sent since the claimer's last step
    /// goes on to the driver task.
    pub(crate) fn release(&self, token: Token) {
        if self
            .owner
            .compare_exchange(token, 0, SeqCst, SeqCst)
            .is_ok()
            && self.wakes.load(SeqCst) != self.stepped.load(SeqCst)
        {
            self.task.wake();
        }
    }

    /// A step starts: the wake-ups so far are answered by it.
    fn stepping(&self) {
        self.stepped.store(self.wakes.load(SeqCst), SeqCst);
    }

    /// Wakes the driver task (the connection ended: its driver completes).
    pub(crate) fn wake_task(&self) {
        self.task.wake();
    }

    /// Registers the driver task's waker.
    pub(crate) fn register_task(&self, waker: &Waker) {
        self.task.register(waker);
    }

    /// The loop's lock, if nobody holds it; otherwise `None`, and whoever holds it sends a
    /// wake-up when they let it go.
    pub(crate) fn try_lock<'a, T>(&self, lock: &'a Mutex<T>) -> Option<MutexGuard<'a, T>> {
        self.bits.fetch_or(WANTED, SeqCst);
        let guard = match lock.try_lock() {
            Ok(guard) => guard,
            // A panic in a step leaves the loop between two steps: go on, as the state's
            // lock does.
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        // Marks made before this point are answered by the step about to be made (a source
        // signalled stays signalled until a step polls it).
        self.bits.fetch_and(!WANTED, SeqCst);
        self.stepping();
        Some(guard)
    }

    /// Lets the loop's lock go; a wake-up goes out when someone wanted it meanwhile.
    pub(crate) fn unlock<T>(&self, guard: MutexGuard<'_, T>) {
        drop(guard);
        if self.bits.fetch_and(!WANTED, SeqCst) & WANTED != 0 {
            self.send();
        }
    }

    /// The driver task's watch, made at each of its polls: returns what it sees.
    pub(crate) fn watch(&self, last: &mut Watch) -> Seen {
        let owner = self.owner.load(SeqCst);
        let claims = self.claims.load(SeqCst);
        if owner == 0 && claims == last.claims {
            // No claim since the last look: stop watching, then look once more (a claim made
            // in between found the flag still set and did not start the task).
            self.bits.fetch_and(!WATCHING, SeqCst);
            if self.owner.load(SeqCst) == 0 {
                *last = Watch::default();
                last.claims = claims;
                return Seen::Idle;
            }
            self.bits.fetch_or(WATCHING, SeqCst);
        }
        last.claims = claims;
        let wakes = self.wakes.load(SeqCst);
        let stepped = self.stepped.load(SeqCst);
        // A wake-up the claimer was sent a watch ago and has not stepped on since.
        if owner != 0
            && last.owner == owner
            && last.unanswered.is_some_and(|w| stepped < w)
            && self
                .owner
                .compare_exchange(owner, 0, SeqCst, SeqCst)
                .is_ok()
        {
            *last = Watch {
                claims,
                ..Watch::default()
            };
            return Seen::Stale;
        }
        last.owner = owner;
        last.unanswered = (owner != 0 && wakes != stepped).then_some(wakes);
        Seen::Watching {
            unanswered: last.unanswered.is_some(),
        }
    }

    /// The route as a waker.
    pub(crate) fn waker(self: &Arc<Self>) -> Waker {
        Waker::from(self.clone())
    }
}

/// What the driver task saw at its last watch.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Watch {
    claims: u64,
    owner: Token,
    unanswered: Option<u64>,
}

/// The outcome of a watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// No claims: the task stops watching.
    Idle,
    /// Claims go on: watch again in a period (a short one when a wake-up sent to the claimer
    /// was not answered yet).
    Watching { unanswered: bool },
    /// The claimer left a wake-up unanswered a whole period: the claim was taken back.
    Stale,
}

/// A waiter's claim on the connection, given back when dropped.
pub(crate) struct Claim {
    route: Arc<Route>,
    token: Token,
}

impl Claim {
    /// A waiter that has not claimed yet.
    pub(crate) fn new(route: &Arc<Route>) -> Claim {
        Claim {
            route: route.clone(),
            token: route.token(),
        }
    }

    /// Takes (or keeps) the claim with wake-ups sent to `waker` (`None`: the waker registered
    /// last stays until the first poll). Returns whether it is held.
    pub(crate) fn take(&self, waker: Option<&Waker>) -> bool {
        self.route.claim(self.token, waker)
    }

    /// Whether this waiter holds the claim now.
    pub(crate) fn held(&self) -> bool {
        self.route.owner.load(SeqCst) == self.token
    }

    /// Takes the claim whoever holds it (see [`Route::take_over`]).
    pub(crate) fn take_over(&self, waker: &Waker) {
        self.route.take_over(self.token, waker)
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.route.release(self.token);
    }
}
