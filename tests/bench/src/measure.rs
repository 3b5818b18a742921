//! What a client process measures of itself: wall time, CPU and context switches from
//! `getrusage(RUSAGE_SELF)` (every thread of the process, live or ended), resident memory from
//! `/proc/self/status`, and, in the runner's syscall pass, the syscalls of the process's own
//! threads counted with `perf_event_open` over the window, and the allocations of all of them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable naming perf's control and ack fifos, `CTL:ACK`.
pub const PERF_CTL_ENV: &str = "MCPWIRE_BENCH_PERF_CTL";

/// A snapshot of the process's own counters.
#[derive(Clone, Copy)]
struct Usage {
    user: Duration,
    sys: Duration,
    voluntary: i64,
    involuntary: i64,
}

fn usage() -> Usage {
    // SAFETY: getrusage writes into the zeroed struct we hand it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Usage {
        user: tv(ru.ru_utime),
        sys: tv(ru.ru_stime),
        voluntary: ru.ru_nvcsw,
        involuntary: ru.ru_nivcsw,
    }
}

/// A `VmXXX:` figure of `/proc/self/status`, in KiB.
pub fn status_kib(field: &str) -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The number of threads of this process now.
pub fn threads() -> u64 {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

/// Threads this process started so far: every `pthread_create` that succeeded, whoever called
/// it (std's threads, a runtime's workers and blocking pool, async-io's reactor thread, C
/// libraries' threads), ended or not. The main thread is not counted.
pub fn threads_started() -> u64 {
    THREADS_STARTED.load(Ordering::Relaxed)
}

static THREADS_STARTED: AtomicU64 = AtomicU64::new(0);

/// libc's `pthread_create`, found once.
static REAL_PTHREAD_CREATE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

type PthreadCreate = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    *mut libc::c_void,
) -> libc::c_int;

/// `pthread_create` as every thread of the process is started, counted: the program's own
/// definition comes before libc's in the dynamic linker's lookup, so std and the C libraries
/// linked in call this one, which calls libc's (`dlsym(RTLD_NEXT)`).
///
/// # Safety
///
/// As libc's `pthread_create`: the arguments are passed on unchanged.
#[no_mangle]
pub unsafe extern "C" fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    arg: *mut libc::c_void,
) -> libc::c_int {
    let mut real = REAL_PTHREAD_CREATE.load(Ordering::Acquire);
    if real == 0 {
        // SAFETY: dlsym with a NUL-terminated name; RTLD_NEXT finds libc's definition.
        real = unsafe { libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr()) } as usize;
        if real == 0 {
            return libc::EAGAIN;
        }
        REAL_PTHREAD_CREATE.store(real, Ordering::Release);
    }
    // SAFETY: `real` is libc's `pthread_create`, of this type.
    let real: PthreadCreate = unsafe { std::mem::transmute::<usize, PthreadCreate>(real) };
    // SAFETY: the caller's arguments, unchanged.
    let r = unsafe { real(thread, attr, start, arg) };
    if r == 0 {
        THREADS_STARTED.fetch_add(1, Ordering::Relaxed);
    }
    r
}

/// The global allocator of every client binary: the system's, counting allocations (and
/// reallocations) over the window of the runner's counting pass, so that pass also tells how
/// many a call costs. Outside that pass the count is off: one relaxed load per allocation.
pub struct CountingAlloc;

static COUNT_ALLOCATIONS: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Of [`ALLOCATIONS`], those made inside [`benchmark_side`].
static BENCH_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

std::thread_local! {
    /// Whether this thread runs the benchmark's own side of a call ([`benchmark_side`]).
    static BENCH_SIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn note_allocation() {
    if COUNT_ALLOCATIONS.load(Ordering::Relaxed) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // `try_with`: a thread being torn down has no flag left, and is never in the scope.
        if BENCH_SIDE.try_with(|b| b.get()).unwrap_or(false) {
            BENCH_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs `f`, the benchmark's own side of a call (building the arguments, reading the answer's
/// text back), counting its allocations apart: what is left is the client library's own share.
pub fn benchmark_side<T>(f: impl FnOnce() -> T) -> T {
    BENCH_SIDE.with(|b| b.set(true));
    let out = f();
    BENCH_SIDE.with(|b| b.set(false));
    out
}

// SAFETY: every call goes straight to the system allocator with the caller's arguments; the
// counter has no effect on memory.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The environment variable that turns on syscall counting for the window.
pub const COUNT_SYSCALLS_ENV: &str = "MCPWIRE_BENCH_SYSCALLS";

/// `struct perf_event_attr` up to `config1` (`PERF_ATTR_SIZE_VER0`, 64 bytes).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

fn tracepoint_id(name: &str) -> Result<u64, String> {
    let path = format!("/sys/kernel/tracing/events/{name}/id");
    std::fs::read_to_string(&path)
        .map_err(|e| format!("{path}: {e}"))?
        .trim()
        .parse()
        .map_err(|e| format!("{path}: {e}"))
}

/// The threads of this process now.
fn tids() -> Vec<i32> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Counts the syscalls (tracepoint `raw_syscalls:sys_enter`) and `connect` calls
/// (`syscalls:sys_enter_connect`) of this process's own threads with `perf_event_open`: one
/// counter per thread and event, not inherited, so a child process (a stdio server) is not
/// counted. Threads started inside the window are not counted; [`SyscallCounts::threads_new`]
/// says how many there were.
pub struct SyscallCounter {
    fds: Vec<(usize, std::fs::File)>,
    tids: Vec<i32>,
}

/// What [`SyscallCounter`] counted.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyscallCounts {
    pub syscalls: u64,
    pub connects: u64,
    pub threads_new: u64,
}

impl SyscallCounter {
    /// Opens the counters (counting from now) on every thread of the process.
    pub fn start() -> Result<SyscallCounter, String> {
        use std::os::fd::FromRawFd;
        let events = [
            tracepoint_id("raw_syscalls/sys_enter")?,
            tracepoint_id("syscalls/sys_enter_connect")?,
        ];
        let tids = tids();
        let mut fds = Vec::new();
        for &tid in &tids {
            for (i, &config) in events.iter().enumerate() {
                let attr = PerfEventAttr {
                    kind: PERF_TYPE_TRACEPOINT,
                    size: std::mem::size_of::<PerfEventAttr>() as u32,
                    config,
                    ..PerfEventAttr::default()
                };
                // SAFETY: perf_event_open with a valid attr; the fd returned is owned here.
                let fd = unsafe {
                    libc::syscall(
                        libc::SYS_perf_event_open,
                        &attr as *const PerfEventAttr,
                        tid,
                        -1i32,
                        -1i32,
                        PERF_FLAG_FD_CLOEXEC,
                    )
                };
                if fd < 0 {
                    let e = std::io::Error::last_os_error();
                    // A thread that ended meanwhile is not an error.
                    if e.raw_os_error() == Some(libc::ESRCH) {
                        continue;
                    }
                    return Err(format!("perf_event_open (tracepoint {config}): {e}"));
                }
                // SAFETY: a fresh fd of ours.
                fds.push((i, unsafe { std::fs::File::from_raw_fd(fd as i32) }));
            }
        }
        Ok(SyscallCounter { fds, tids })
    }

    /// Reads the counters.
    pub fn stop(self) -> SyscallCounts {
        use std::io::Read;
        let mut counts = [0u64; 2];
        for (i, mut f) in self.fds {
            let mut b = [0u8; 8];
            if f.read_exact(&mut b).is_ok() {
                counts[i] += u64::from_ne_bytes(b);
            }
        }
        let threads_new = tids().iter().filter(|t| !self.tids.contains(t)).count() as u64;
        SyscallCounts {
            syscalls: counts[0],
            connects: counts[1],
            threads_new,
        }
    }
}

/// The measured window's figures.
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// The syscall counts, when they were asked for (or why they could not be had).
    pub syscalls: Option<Result<SyscallCounts, String>>,
    /// Allocations and reallocations of every thread, counted in the same pass.
    pub allocations: Option<u64>,
    /// Of them, those of the benchmark's own side of the calls ([`benchmark_side`]).
    pub bench_allocations: Option<u64>,
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub voluntary: i64,
    pub involuntary: i64,
}

/// Samples the counters around one workload.
#[derive(Default)]
pub struct Meter {
    syscalls: Option<Result<SyscallCounter, String>>,
    started: Option<(Instant, Usage)>,
}

impl Meter {
    /// Opens the window (the syscall counters when asked for, then the first sample).
    pub fn start(&mut self) {
        if std::env::var_os(COUNT_SYSCALLS_ENV).is_some_and(|v| v == "1") {
            self.syscalls = Some(SyscallCounter::start());
            ALLOCATIONS.store(0, Ordering::Relaxed);
            BENCH_ALLOCATIONS.store(0, Ordering::Relaxed);
            COUNT_ALLOCATIONS.store(true, Ordering::Relaxed);
        }
        self.started = Some((Instant::now(), usage()));
    }

    /// Closes the window (the last sample, then the syscall counters).
    pub fn stop(&mut self) -> Window {
        let end = (Instant::now(), usage());
        let allocations = COUNT_ALLOCATIONS
            .swap(false, Ordering::Relaxed)
            .then(|| ALLOCATIONS.load(Ordering::Relaxed));
        let bench_allocations = allocations.map(|_| BENCH_ALLOCATIONS.load(Ordering::Relaxed));
        let syscalls = self.syscalls.take().map(|c| c.map(SyscallCounter::stop));
        let (t0, u0) = self.started.take().expect("Meter::start first");
        Window {
            syscalls,
            allocations,
            bench_allocations,
            wall: end.0 - t0,
            user: end.1.user.saturating_sub(u0.user),
            sys: end.1.sys.saturating_sub(u0.sys),
            voluntary: end.1.voluntary - u0.voluntary,
            involuntary: end.1.involuntary - u0.involuntary,
        }
    }
}
