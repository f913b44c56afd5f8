//! The thread pool that runs parfor bodies (Numba's threading layer, `parallel=True`).
//!
//! One process-wide pool of `NUMBA_NUM_THREADS - 1` workers; the calling thread is the
//! remaining one. A parallel region splits `count` iterations into divisions (Numba's
//! static schedule: the first divisions get the ceiling share); every participating
//! thread takes the next division from an atomic counter until none is left, so a
//! `set_parallel_chunksize` larger schedule is balanced dynamically.
//!
//! Unlike Numba's workqueue layer this is safe where Numba's aborts:
//! - nested use: a region started on a pool thread, or while the calling thread is already
//!   in a region, runs inline (serially) on that thread;
//! - concurrent use from several Python threads: each region has its own counter and
//!   completion count, and a worker never waits for anything but its next job, so regions
//!   from different callers share the workers without deadlock;
//! - `fork`: the pool remembers the process it was started in, and a child process starts
//!   its own pool on first use (threads do not survive `fork`).
//!
//! A region whose estimated work is below [`INLINE_WORK`] (the launch cost measured on the
//! 2-core reference machine, see the constant) runs inline on the calling thread, so a
//! parallel kernel is never slower than its serial self by more than the test of the
//! threshold. The embedder may install hooks that release the GIL while a region waits.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A parfor body over iterations `[lo, hi)`, writing its results to division `slot`.
pub type ParforWorker = unsafe extern "C" fn(env: *mut u8, lo: i64, hi: i64, slot: i64);

/// Work below which a region runs inline, in the units of [`numba_rs_parfor_divisions`]'s
/// `cost` (one IR statement of a body per iteration; calls count more). Measured on the
/// 2-core machine (2026-11-24, median of 3000 calls of `out[i] = i` over `prange(n)`,
/// five statements an iteration): a region on the pool costs about 2 µs more than the
/// same loop inline, and that cheapest, vectorised body runs at about 0.03 ns per unit.
/// Two threads win once the work passes twice the launch cost; with a 2× margin that is
/// about 8 µs, 300,000 units of the cheapest bodies (heavier bodies, at 0.1-1 ns per
/// unit, are parallel from well below that).
pub const INLINE_WORK: i64 = 300_000;

/// The inline threshold in force: [`INLINE_WORK`] unless `NUMBA_RS_INLINE_WORK` sets
/// another at start-up. Compiled code reads it through its address
/// ([`inline_work_address`]) on each launch, so a loop whose size is known at compile
/// time keeps both its inline and its pooled path, and a changed threshold applies to
/// code already compiled.
static INLINE_WORK_NOW: std::sync::LazyLock<AtomicI64> = std::sync::LazyLock::new(|| {
    let v = std::env::var("NUMBA_RS_INLINE_WORK")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|&v| v >= 0)
        .unwrap_or(INLINE_WORK);
    AtomicI64::new(v)
});

/// The inline threshold in force (see [`INLINE_WORK`]).
pub fn inline_work() -> i64 {
    INLINE_WORK_NOW.load(Ordering::Relaxed)
}

/// The name generated code declares the inline threshold's `i64` under; the JIT maps it
/// to [`inline_work_address`].
pub const INLINE_WORK_SYMBOL: &str = "numba_rs_inline_work";

/// The address of the `i64` holding the inline threshold, which generated code loads.
pub fn inline_work_address() -> usize {
    &*INLINE_WORK_NOW as *const AtomicI64 as usize
}

thread_local! {
    /// `set_num_threads` of this thread (0: not set, the pool size).
    static NUM_THREADS: Cell<usize> = const { Cell::new(0) };
    /// 0 on threads outside the pool, 1.. on pool workers (Numba's `get_thread_id`).
    static THREAD_ID: Cell<usize> = const { Cell::new(0) };
    /// Set while this thread runs a region (nested regions run inline).
    static IN_REGION: Cell<bool> = const { Cell::new(false) };
    /// `set_parallel_chunksize` of this thread (0: one division per thread).
    static CHUNKSIZE: Cell<usize> = const { Cell::new(0) };
}

/// The configured number of threads (`NUMBA_NUM_THREADS`, default: the CPUs this process
/// may run on). Read once.
pub fn config_num_threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("NUMBA_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
    })
}

/// The threads a region started on this thread uses.
pub fn get_num_threads() -> usize {
    match NUM_THREADS.with(Cell::get) {
        0 => config_num_threads(),
        n => n,
    }
}

/// Numba's `set_num_threads`: `1 <= n <= NUMBA_NUM_THREADS`, for this thread.
pub fn set_num_threads(n: i64) -> Result<(), String> {
    let max = config_num_threads();
    if n < 1 || n as usize > max {
        return Err(format!("The number of threads must be between 1 and {max}"));
    }
    NUM_THREADS.with(|c| c.set(n as usize));
    Ok(())
}

/// Numba's `get_thread_id`: 0 outside the pool, a distinct `1..` on each worker.
pub fn get_thread_id() -> usize {
    THREAD_ID.with(Cell::get)
}

/// Numba's `set_parallel_chunksize`: returns the previous value.
pub fn set_parallel_chunksize(n: usize) -> usize {
    CHUNKSIZE.with(|c| c.replace(n))
}

pub fn get_parallel_chunksize() -> usize {
    CHUNKSIZE.with(Cell::get)
}

/// The name `numba_rs.config.THREADING_LAYER` reports.
pub const THREADING_LAYER: &str = "numba_rs";

/// Hooks the embedder installs to release the GIL while a region waits: `save` returns
/// a token (null when nothing was released), `restore` takes it back.
#[derive(Clone, Copy)]
struct GilHooks {
    save: unsafe extern "C" fn() -> *mut u8,
    restore: unsafe extern "C" fn(*mut u8),
}

static GIL_HOOKS: OnceLock<GilHooks> = OnceLock::new();

/// Install the GIL hooks (once; later calls are ignored and return false).
pub fn set_gil_hooks(
    save: unsafe extern "C" fn() -> *mut u8,
    restore: unsafe extern "C" fn(*mut u8),
) -> bool {
    GIL_HOOKS.set(GilHooks { save, restore }).is_ok()
}

/// One parallel region: the body, its environment and the divisions left to run.
struct Region {
    worker: ParforWorker,
    env: usize,
    count: i64,
    ndiv: i64,
    next: AtomicI64,
    /// Divisions not finished yet.
    pending: AtomicI64,
    done: Mutex<bool>,
    cv: Condvar,
}

impl Region {
    /// The iterations of division `i`: the first `count % ndiv` divisions get one more.
    fn bounds(&self, i: i64) -> (i64, i64) {
        let base = self.count / self.ndiv;
        let rem = self.count % self.ndiv;
        let lo = i * base + i.min(rem);
        (lo, lo + base + i64::from(i < rem))
    }

    /// Run divisions until none is left.
    fn work(&self) {
        // Inside a region the chunk size reads 0 on every thread (the caller's included),
        // as Numba resets it around a parallel launch: it applies to one region only.
        let outer = set_parallel_chunksize(0);
        self.work_divisions();
        set_parallel_chunksize(outer);
    }

    fn work_divisions(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.ndiv {
                return;
            }
            let (lo, hi) = self.bounds(i);
            // SAFETY: the region's creator keeps `env` alive until `pending` reaches 0,
            // which cannot happen before this division finishes.
            unsafe { (self.worker)(self.env as *mut u8, lo, hi, i) };
            if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
                *d = true;
                self.cv.notify_all();
            }
        }
    }
}

struct Pool {
    pid: u32,
    queue: Mutex<VecDeque<Arc<Region>>>,
    /// Tickets queued (read without the lock by spinning workers).
    queued: AtomicUsize,
    cv: Condvar,
    /// Workers actually started (a failed spawn leaves fewer).
    workers: AtomicUsize,
}

/// How long an idle worker spins before sleeping: back-to-back regions (a parfor in a
/// loop) then find it awake.
const SPIN: u32 = 20_000;

impl Pool {
    fn start(workers: usize) -> Arc<Pool> {
        let pool = Arc::new(Pool {
            pid: std::process::id(),
            queue: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            cv: Condvar::new(),
            workers: AtomicUsize::new(0),
        });
        for k in 0..workers {
            let p = Arc::clone(&pool);
            let spawned = std::thread::Builder::new()
                .name(format!("numba-rs-worker-{}", k + 1))
                .spawn(move || p.run(k + 1));
            if spawned.is_err() {
                // Fewer workers only means less parallelism: the caller runs whatever
                // divisions nobody takes.
                break;
            }
            pool.workers.fetch_add(1, Ordering::Relaxed);
        }
        pool
    }

    fn run(&self, id: usize) {
        THREAD_ID.with(|c| c.set(id));
        IN_REGION.with(|c| c.set(true));
        loop {
            let mut spins = 0;
            while self.queued.load(Ordering::Acquire) == 0 && spins < SPIN {
                std::hint::spin_loop();
                spins += 1;
            }
            let job = {
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    if let Some(j) = q.pop_front() {
                        self.queued.fetch_sub(1, Ordering::AcqRel);
                        break j;
                    }
                    q = self.cv.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            job.work();
        }
    }

    fn submit(&self, region: &Arc<Region>, helpers: usize) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        for _ in 0..helpers {
            q.push_back(Arc::clone(region));
        }
        self.queued.fetch_add(helpers, Ordering::AcqRel);
        drop(q);
        if helpers == 1 {
            self.cv.notify_one();
        } else {
            self.cv.notify_all();
        }
    }
}

static POOL: Mutex<Option<Arc<Pool>>> = Mutex::new(None);

/// The pool of this process, started on first use (and again in a forked child).
fn pool() -> Arc<Pool> {
    let mut g = POOL.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    match &*g {
        Some(p) if p.pid == pid => Arc::clone(p),
        _ => {
            // In a forked child the parent's workers do not exist: the old pool is
            // forgotten (its memory leaks once) and a new one starts.
            if let Some(old) = g.take() {
                std::mem::forget(old);
            }
            let p = Pool::start(config_num_threads().saturating_sub(1));
            *g = Some(Arc::clone(&p));
            p
        }
    }
}

/// Whether the pool has been started in this process (Numba's "threads launched").
pub fn threads_launched() -> bool {
    POOL.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Whether a parallel region has been compiled or run: Numba's threading layer counts as
/// initialised from then on.
static LAYER_INITIALISED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Record that a parallel region was compiled (see [`layer_initialised`]).
pub fn mark_region() {
    LAYER_INITIALISED.store(true, Ordering::Relaxed);
}

/// Whether any parallel region has been compiled or run in this process (see
/// [`threads_launched`]).
pub fn layer_initialised() -> bool {
    LAYER_INITIALISED.load(Ordering::Relaxed) || threads_launched()
}

/// How many divisions a region of `count` iterations of about `cost` units each gets on
/// this thread: 1 (run inline) when the work is below [`INLINE_WORK`] or the thread is
/// already inside a region; otherwise the thread count (or `count / chunksize` divisions
/// when a chunk size is set), never more than `count`.
#[no_mangle]
pub extern "C" fn numba_rs_parfor_divisions(count: i64, cost: i64) -> i64 {
    if count <= 1 || IN_REGION.with(Cell::get) {
        return 1;
    }
    let threads = get_num_threads() as i64;
    if threads <= 1 || count.saturating_mul(cost.max(1)) < inline_work() {
        return 1;
    }
    let chunk = get_parallel_chunksize() as i64;
    let ndiv = if chunk > 0 {
        threads.max(count / chunk)
    } else {
        threads
    };
    ndiv.min(count).max(1)
}

/// Run `worker` over `count` iterations split into `ndiv` divisions (from
/// [`numba_rs_parfor_divisions`]); returns when every division has finished.
///
/// # Safety
/// `worker` must be safe to call from any thread with `env` and every division, and `env`
/// must stay valid until this returns.
#[no_mangle]
pub unsafe extern "C" fn numba_rs_parallel_for(
    worker: ParforWorker,
    env: *mut u8,
    count: i64,
    ndiv: i64,
) {
    let ndiv = ndiv.max(1);
    let region = Arc::new(Region {
        worker,
        env: env as usize,
        count: count.max(0),
        ndiv,
        next: AtomicI64::new(0),
        pending: AtomicI64::new(ndiv),
        done: Mutex::new(false),
        cv: Condvar::new(),
    });
    let nested = IN_REGION.with(|c| c.replace(true));
    if ndiv == 1 || nested {
        region.work();
        IN_REGION.with(|c| c.set(nested));
        return;
    }
    let pool = pool();
    let threads = get_num_threads().min(ndiv as usize);
    pool.submit(
        &region,
        threads
            .saturating_sub(1)
            .min(pool.workers.load(Ordering::Relaxed)),
    );
    let gil = GIL_HOOKS.get().copied();
    // SAFETY: the hooks were installed by the embedder for exactly this use.
    let token = gil.map(|h| unsafe { (h.save)() });
    region.work();
    // Wait for the divisions the workers took: spin briefly, then sleep.
    let mut spins = 0u32;
    while region.pending.load(Ordering::Acquire) > 0 && spins < SPIN {
        std::hint::spin_loop();
        spins += 1;
    }
    if region.pending.load(Ordering::Acquire) > 0 {
        let mut d = region.done.lock().unwrap_or_else(|e| e.into_inner());
        while !*d {
            d = region.cv.wait(d).unwrap_or_else(|e| e.into_inner());
        }
    }
    if let (Some(h), Some(t)) = (gil, token) {
        // SAFETY: as above; `t` came from `save`.
        unsafe { (h.restore)(t) };
    }
    IN_REGION.with(|c| c.set(nested));
}

#[no_mangle]
pub extern "C" fn numba_rs_get_num_threads() -> i64 {
    get_num_threads() as i64
}

#[no_mangle]
pub extern "C" fn numba_rs_get_thread_id() -> i64 {
    get_thread_id() as i64
}

/// `set_num_threads(n)` from jitted code, which has checked `1 <= n <= NUMBA_NUM_THREADS`
/// (an out-of-range `n` is ignored here).
#[no_mangle]
pub extern "C" fn numba_rs_set_num_threads(n: i64) {
    let _ = set_num_threads(n);
}

/// `set_parallel_chunksize(n)` from jitted code (`n >= 0` checked there): the previous
/// chunk size.
#[no_mangle]
pub extern "C" fn numba_rs_set_parallel_chunksize(n: i64) -> i64 {
    set_parallel_chunksize(n.max(0) as usize) as i64
}

#[no_mangle]
pub extern "C" fn numba_rs_get_parallel_chunksize() -> i64 {
    get_parallel_chunksize() as i64
}

/// Scratch memory for a region's per-division results (not counted by the NRT's
/// statistics: it never escapes the region).
#[no_mangle]
pub extern "C" fn numba_rs_parfor_scratch(size: i64) -> *mut u8 {
    let layout = std::alloc::Layout::from_size_align(size.max(16) as usize, 16);
    match layout {
        // SAFETY: the layout has a non-zero size.
        Ok(l) => unsafe { std::alloc::alloc_zeroed(l) },
        Err(_) => crate::fatal("parfor scratch size overflow"),
    }
}

/// # Safety
/// `p` must come from [`numba_rs_parfor_scratch`] with the same `size`.
#[no_mangle]
pub unsafe extern "C" fn numba_rs_parfor_scratch_free(p: *mut u8, size: i64) {
    if let Ok(l) = std::alloc::Layout::from_size_align(size.max(16) as usize, 16) {
        // SAFETY: per this function's contract.
        unsafe { std::alloc::dealloc(p, l) };
    }
}

/// A NumPy inner loop (`void loop(char **args, npy_intp *dims, npy_intp *steps, void *data)`).
pub type UfuncLoop = unsafe extern "C" fn(*mut *mut u8, *mut i64, *mut i64, *mut u8);

/// What [`numba_rs_parallel_ufunc_loop`] finds in its `data` slot: the compiled serial
/// loop, the operand count, the number of core dimensions (a gufunc's) and the estimated
/// work of one outer iteration.
#[repr(C)]
pub struct ParallelUfunc {
    pub inner: UfuncLoop,
    pub nargs: i64,
    pub ncore: i64,
    pub cost: i64,
}

struct UfuncDivision {
    spec: *const ParallelUfunc,
    args: *mut *mut u8,
    dims: *mut i64,
    steps: *mut i64,
}

unsafe extern "C" fn ufunc_division(env: *mut u8, lo: i64, hi: i64, _slot: i64) {
    // SAFETY: `env` is the UfuncDivision numba_rs_parallel_ufunc_loop built, alive until
    // every division returned; its arrays hold nargs pointers/steps and 1 + ncore dims.
    unsafe {
        let d = &*(env as *const UfuncDivision);
        let spec = &*d.spec;
        let nargs = spec.nargs as usize;
        let mut args: Vec<*mut u8> = (0..nargs)
            .map(|k| (*d.args.add(k)).wrapping_offset((lo * *d.steps.add(k)) as isize))
            .collect();
        let mut dims: Vec<i64> = (0..=spec.ncore as usize).map(|k| *d.dims.add(k)).collect();
        dims[0] = hi - lo;
        (spec.inner)(
            args.as_mut_ptr(),
            dims.as_mut_ptr(),
            d.steps,
            std::ptr::null_mut(),
        );
    }
}

/// The inner loop of a `target='parallel'` ufunc or gufunc: the outer range split over
/// the pool (inline below [`INLINE_WORK`]), each division running the compiled serial
/// loop over its slice of every operand.
///
/// # Safety
/// NumPy's inner-loop contract; `data` must point to a [`ParallelUfunc`] whose `inner`
/// is safe to run concurrently on disjoint slices.
#[no_mangle]
pub unsafe extern "C" fn numba_rs_parallel_ufunc_loop(
    args: *mut *mut u8,
    dims: *mut i64,
    steps: *mut i64,
    data: *mut u8,
) {
    // SAFETY: per the contract.
    let n = unsafe { *dims };
    let spec = data as *const ParallelUfunc;
    // SAFETY: as above.
    let cost = unsafe { (*spec).cost };
    let ndiv = numba_rs_parfor_divisions(n, cost);
    let env = UfuncDivision {
        spec,
        args,
        dims,
        steps,
    };
    // SAFETY: ufunc_division reads `env` only while this call runs; divisions write
    // disjoint slices of the outputs.
    unsafe {
        numba_rs_parallel_for(
            ufunc_division,
            &env as *const UfuncDivision as *mut u8,
            n,
            ndiv,
        )
    };
    let hook = UFUNC_DONE_HOOK.load(Ordering::SeqCst);
    if hook != 0 {
        // SAFETY: only `set_parallel_ufunc_done_hook` stores a non-zero value.
        let f: extern "C" fn() = unsafe { std::mem::transmute::<usize, extern "C" fn()>(hook) };
        f();
    }
}

static UFUNC_DONE_HOOK: AtomicUsize = AtomicUsize::new(0);

/// Install what runs on the launching thread when a parallel ufunc loop's divisions are
/// done: where the embedder moves an error a kernel raised on a worker thread (where its
/// interpreter state is not the caller's) to the caller.
pub fn set_parallel_ufunc_done_hook(hook: extern "C" fn()) {
    UFUNC_DONE_HOOK.store(hook as usize, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    struct Env {
        sum: AtomicU64,
        seen: Vec<AtomicU64>,
    }

    unsafe extern "C" fn add_range(env: *mut u8, lo: i64, hi: i64, _slot: i64) {
        // SAFETY: the tests pass a live `Env`.
        let env = unsafe { &*(env as *const Env) };
        for i in lo..hi {
            env.sum.fetch_add(i as u64, Ordering::Relaxed);
            env.seen[i as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn run(count: i64, ndiv: i64) -> Env {
        let env = Env {
            sum: AtomicU64::new(0),
            seen: (0..count).map(|_| AtomicU64::new(0)).collect(),
        };
        // SAFETY: `env` outlives the call.
        unsafe { numba_rs_parallel_for(add_range, &env as *const Env as *mut u8, count, ndiv) };
        env
    }

    #[test]
    fn every_iteration_runs_once() {
        for (count, ndiv) in [(0, 1), (1, 1), (7, 3), (1000, 2), (1000, 7), (5, 5)] {
            let env = run(count, ndiv);
            let n = count as u64;
            assert_eq!(env.sum.load(Ordering::Relaxed), n * n.saturating_sub(1) / 2);
            assert!(env.seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn concurrent_regions_from_several_threads() {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..50).all(|_| run(997, 4).sum.into_inner() == 997 * 996 / 2)
                })
            })
            .collect();
        for h in handles {
            assert!(h.join().unwrap());
        }
    }

    #[test]
    fn divisions_follow_threads_work_and_chunksize() {
        assert_eq!(numba_rs_parfor_divisions(10, 1), 1, "tiny work runs inline");
        assert_eq!(numba_rs_parfor_divisions(1, 1 << 40), 1);
        let big = numba_rs_parfor_divisions(1 << 20, 100);
        assert_eq!(big as usize, get_num_threads().min(1 << 20));
        let old = set_parallel_chunksize(1000);
        let chunked = numba_rs_parfor_divisions(1 << 20, 100);
        set_parallel_chunksize(old);
        if get_num_threads() > 1 {
            assert_eq!(chunked, (1 << 20) / 1000);
        }
    }

    #[test]
    fn static_schedule_gives_the_first_divisions_the_ceiling_share() {
        let r = Region {
            worker: add_range,
            env: 0,
            count: 10,
            ndiv: 4,
            next: AtomicI64::new(0),
            pending: AtomicI64::new(4),
            done: Mutex::new(false),
            cv: Condvar::new(),
        };
        let b: Vec<_> = (0..4).map(|i| r.bounds(i)).collect();
        assert_eq!(b, vec![(0, 3), (3, 6), (6, 8), (8, 10)]);
    }

    #[test]
    fn set_num_threads_is_checked() {
        assert!(set_num_threads(0).is_err());
        assert!(set_num_threads(config_num_threads() as i64 + 1).is_err());
        assert!(set_num_threads(1).is_ok());
        assert_eq!(get_num_threads(), 1);
        assert_eq!(numba_rs_parfor_divisions(1 << 30, 1000), 1);
        NUM_THREADS.with(|c| c.set(0));
    }
}
