//! Stack-overflow recovery for calls into compiled code.
//!
//! Compiled recursion has no depth counter (Numba's neither: a jitted function that
//! recurses too deeply crashes the interpreter there). [`call_guarded`] runs an entry
//! point so that running out of stack becomes a status instead: a small trampoline
//! saves the callee-saved registers on its own frame and publishes that frame in a
//! per-thread record; a `SIGSEGV` handler, running on an alternate signal stack, sees
//! a fault just below the stack pointer of a thread inside such a call and rewrites the
//! interrupted context to resume at the trampoline's recovery point, which returns
//! [`STACK_OVERFLOW`]. Compiled code probes the stack before each recursive call
//! ([`STACK_PROBE_ASM`]), so running out of stack happens at a known instruction in
//! compiled code and never inside a runtime function. Returning from the handler (`sigreturn`) restores the signal
//! mask, so no `longjmp` is involved.
//!
//! Why not a depth or limit check per call: compiled code has no cheap per-thread
//! storage to compare against (a runtime call per recursive call cost about 60% on
//! `fib`); the probe is one read, and the trampoline a few stores per call from Python.
//!
//! Frames abandoned by a recovery do not release what they held (their NRT references
//! leak), and the fault must be a plain stack overflow in the thread that made the call:
//! any other `SIGSEGV` goes to the handler that was installed before (CPython's
//! `faulthandler`, or the default action), as it would without this module. Only
//! x86-64 Linux has the trampoline; elsewhere [`call_guarded`] is a plain call.

use std::ffi::c_void;

/// The status [`call_guarded`] returns when the callee ran out of stack.
pub const STACK_OVERFLOW: i32 = -100;

/// How far below the stack pointer a recursive call probes (see [`STACK_PROBE_ASM`]):
/// the stack the runtime functions a compiled frame calls may use.
pub const STACK_PROBE_MARGIN: u32 = 128 * 1024;

/// The probe compiled code runs before each recursive call (AT&T syntax, `$$` being
/// LLVM's escape for `$`): a read of the stack [`STACK_PROBE_MARGIN`] bytes below the
/// stack pointer. Deep recursion therefore faults at this instruction, with the margin
/// still free, and only a fault at it is recovered ([`STACK_PROBE_BYTES`]): one inside a
/// runtime function (holding `malloc`'s lock, say) is not. Probes move down by one
/// frame per call, less than a guard page, so they cannot step over a thread's guard.
pub const STACK_PROBE_ASM: &str = "cmpb $$0, -131072(%rsp)";

/// The probe's machine code (`cmp byte ptr [rsp - 0x20000], 0`).
pub const STACK_PROBE_BYTES: [u8; 8] = [0x80, 0xbc, 0x24, 0x00, 0x00, 0xfe, 0xff, 0x00];

/// An entry point's shape: `(ret*, excinfo**, args*) -> status`.
pub type GuardedEntry = unsafe extern "C" fn(*mut u64, *mut *const c_void, *const u64) -> i32;

/// A generator's resume entry: `(ret*, excinfo**, generator*, sent*) -> status`.
pub type GuardedResume =
    unsafe extern "C" fn(*mut u64, *mut *const c_void, *mut c_void, *const u64) -> i32;

/// Call `entry(ret, exc, args)`, returning [`STACK_OVERFLOW`] instead of crashing when
/// it exhausts the thread's stack.
///
/// # Safety
/// The same as calling `entry` with these arguments.
pub unsafe fn call_guarded(
    entry: GuardedEntry,
    ret: *mut u64,
    exc: *mut *const c_void,
    args: *const u64,
) -> i32 {
    // A three-argument function called with a fourth argument (a register it never
    // reads) is well defined in x86-64's C calling convention: the arguments go in
    // their own order, the unused fourth last.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    // SAFETY: as above; then the caller's contract.
    unsafe {
        let entry: GuardedResume = std::mem::transmute(entry);
        call_guarded_resume(entry, ret, exc, args.cast_mut().cast(), std::ptr::null())
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    // SAFETY: the caller's contract.
    unsafe {
        entry(ret, exc, args)
    }
}

/// [`call_guarded`] for a generator's resume entry.
///
/// # Safety
/// The same as calling `entry` with these arguments.
pub unsafe fn call_guarded_resume(
    entry: GuardedResume,
    ret: *mut u64,
    exc: *mut *const c_void,
    generator: *mut c_void,
    sent: *const u64,
) -> i32 {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        if let Some(cell) = imp::frame_cell() {
            // SAFETY: the trampoline calls `entry` with the four arguments and restores
            // every callee-saved register; `cell` is this thread's live record.
            return unsafe { imp::numba_rs_guarded_call(entry, ret, exc, generator, sent, cell) };
        }
    }
    // SAFETY: the caller's contract.
    unsafe { entry(ret, exc, generator, sent) }
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod imp {
    use super::{GuardedResume, STACK_OVERFLOW};
    use std::cell::Cell;
    use std::ffi::c_void;
    use std::sync::OnceLock;

    // The trampoline: (entry, a, b, c, d, cell), calling entry(a, b, c, d). It pushes the callee-saved
    // registers, the cell's address and the cell's previous value (guards nest:
    // compiled code → object mode → compiled code), stores its stack pointer in the
    // cell and calls the entry. Both exits (the return and the recovery point the
    // signal handler resumes at, with the stack pointer set to the published frame)
    // pop the same frame.
    std::arch::global_asm!(
        ".text",
        ".p2align 4",
        ".globl numba_rs_guarded_call",
        ".hidden numba_rs_guarded_call",
        ".type numba_rs_guarded_call,@function",
        "numba_rs_guarded_call:",
        "push rbp",
        "push rbx",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "push r9",
        "push qword ptr [r9]",
        "sub rsp, 8",
        "mov qword ptr [r9], rsp",
        "mov rax, rdi",
        "mov rdi, rsi",
        "mov rsi, rdx",
        "mov rdx, rcx",
        "mov rcx, r8",
        "call rax",
        "2:",
        "add rsp, 8",
        "pop rcx",
        "pop r8",
        "mov qword ptr [r8], rcx",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        "ret",
        ".globl numba_rs_guard_recover",
        ".hidden numba_rs_guard_recover",
        "numba_rs_guard_recover:",
        "mov eax, {overflow}",
        "jmp 2b",
        ".size numba_rs_guarded_call, . - numba_rs_guarded_call",
        overflow = const STACK_OVERFLOW,
    );

    extern "C" {
        pub(super) fn numba_rs_guarded_call(
            entry: GuardedResume,
            ret: *mut u64,
            exc: *mut *const c_void,
            generator: *mut c_void,
            args: *const u64,
            cell: *mut usize,
        ) -> i32;
        fn numba_rs_guard_recover();
        fn sigaction(sig: i32, act: *const SigAction, old: *mut SigAction) -> i32;
        fn sigaltstack(ss: *const StackT, old: *mut StackT) -> i32;
    }

    const SIGSEGV: i32 = 11;
    const SA_SIGINFO: i32 = 4;
    const SA_ONSTACK: i32 = 0x0800_0000;
    const SA_NODEFER: i32 = 0x4000_0000;
    const SS_DISABLE: i32 = 2;
    /// `gregs` indices in x86-64's `mcontext_t`, which starts 40 bytes into `ucontext_t`.
    const MCONTEXT_OFFSET: usize = 40;
    const REG_RSP: usize = 15;
    const REG_RIP: usize = 16;
    /// Room for the handler (and a chained `faulthandler`, which prints a traceback).
    const ALT_STACK_SIZE: usize = 64 * 1024;
    /// How far below the stack pointer a fault still counts as the probe's.
    const NEAR: usize = 2 * super::STACK_PROBE_MARGIN as usize;
    const MAGIC: u64 = 0x6e62_7273_7374_6b67; // "nbrsstkg"

    /// glibc's `struct sigaction` on x86-64.
    #[repr(C)]
    pub(super) struct SigAction {
        handler: usize,
        mask: [u64; 16],
        flags: i32,
        restorer: usize,
    }

    #[repr(C)]
    pub(super) struct StackT {
        sp: *mut c_void,
        flags: i32,
        size: usize,
    }

    /// The record at the base of each thread's alternate stack: the handler finds it
    /// through `sigaltstack` (a system call, safe in a handler) rather than through
    /// thread-local storage, which may allocate on a thread's first use.
    #[repr(C)]
    struct Header {
        magic: u64,
        /// The innermost guarded call's frame, 0 outside one.
        frame: usize,
    }
    const HEADER: usize = 64;

    /// This thread's alternate stack (header first); restores the previous one when the
    /// thread ends.
    struct AltStack {
        memory: Box<[u8]>,
        previous: StackT,
    }

    impl Drop for AltStack {
        fn drop(&mut self) {
            // SAFETY: querying and setting this thread's alternate stack.
            unsafe {
                let mut current = StackT {
                    sp: std::ptr::null_mut(),
                    flags: 0,
                    size: 0,
                };
                if sigaltstack(std::ptr::null(), &mut current) == 0
                    && current.sp == self.memory.as_mut_ptr().add(HEADER).cast()
                {
                    sigaltstack(&self.previous, std::ptr::null_mut());
                }
            }
        }
    }

    thread_local! {
        static ALT: Cell<Option<*mut usize>> = const { Cell::new(None) };
        static OWNER: std::cell::RefCell<Option<AltStack>> = const { std::cell::RefCell::new(None) };
    }

    /// The previous `SIGSEGV` action, chained to for faults that are not ours.
    static PREVIOUS: OnceLock<Option<SigAction>> = OnceLock::new();

    /// This thread's frame cell, installing the handler (once per process) and the
    /// thread's alternate stack (once per thread) on first use; `None` when either
    /// cannot be installed.
    pub(super) fn frame_cell() -> Option<*mut usize> {
        if let Some(cell) = ALT.with(Cell::get) {
            return Some(cell);
        }
        PREVIOUS.get_or_init(install_handler).as_ref()?;
        let cell = install_alt_stack()?;
        ALT.with(|c| c.set(Some(cell)));
        Some(cell)
    }

    fn install_handler() -> Option<SigAction> {
        let act = SigAction {
            handler: on_fault as *const () as usize,
            mask: [0; 16],
            flags: SA_SIGINFO | SA_ONSTACK | SA_NODEFER,
            restorer: 0,
        };
        let mut old = SigAction {
            handler: 0,
            mask: [0; 16],
            flags: 0,
            restorer: 0,
        };
        // SAFETY: valid pointers to glibc's struct layout.
        (unsafe { sigaction(SIGSEGV, &act, &mut old) } == 0).then_some(old)
    }

    fn install_alt_stack() -> Option<*mut usize> {
        let mut memory = vec![0u8; ALT_STACK_SIZE].into_boxed_slice();
        let base = memory.as_mut_ptr();
        // SAFETY: the header fits in the first HEADER bytes of the allocation, which is
        // aligned for u64 by the allocator's minimum alignment (16 on x86-64).
        let header = base.cast::<Header>();
        unsafe {
            header.write(Header {
                magic: MAGIC,
                frame: 0,
            });
        }
        let stack = StackT {
            // SAFETY: within the allocation.
            sp: unsafe { base.add(HEADER) }.cast(),
            flags: 0,
            size: ALT_STACK_SIZE - HEADER,
        };
        let mut previous = StackT {
            sp: std::ptr::null_mut(),
            flags: SS_DISABLE,
            size: 0,
        };
        // SAFETY: the memory outlives its registration (AltStack's drop unregisters it).
        if unsafe { sigaltstack(&stack, &mut previous) } != 0 {
            return None;
        }
        OWNER.with(|o| *o.borrow_mut() = Some(AltStack { memory, previous }));
        // SAFETY: `frame` is a field of the header written above.
        Some(unsafe { std::ptr::addr_of_mut!((*header).frame) })
    }

    /// The `SIGSEGV` handler: recover a guarded call that ran out of stack, or hand
    /// the fault to the previous handler.
    extern "C" fn on_fault(sig: i32, info: *mut c_void, ctx: *mut c_void) {
        // SAFETY: the kernel passes a siginfo_t and a ucontext_t; the alternate stack's
        // header is ours when its magic matches.
        unsafe {
            if try_recover(info, ctx) {
                return;
            }
            chain(sig, info, ctx);
        }
    }

    unsafe fn try_recover(info: *mut c_void, ctx: *mut c_void) -> bool {
        let mut ss = StackT {
            sp: std::ptr::null_mut(),
            flags: 0,
            size: 0,
        };
        // SAFETY: (all below) the pointers the kernel gave, read at their documented
        // offsets; the header precedes our alternate stack when the magic matches.
        unsafe {
            if sigaltstack(std::ptr::null(), &mut ss) != 0 || ss.sp.is_null() {
                return false;
            }
            let header = ss.sp.cast::<u8>().sub(HEADER).cast::<Header>();
            if (*header).magic != MAGIC || (*header).frame == 0 {
                return false;
            }
            let frame = (*header).frame;
            // si_addr follows three ints and padding.
            let addr = *info.cast::<u8>().add(16).cast::<usize>();
            let gregs = ctx.cast::<u8>().add(MCONTEXT_OFFSET).cast::<usize>();
            let sp = *gregs.add(REG_RSP);
            let rip = *gregs.add(REG_RIP) as *const [u8; 8];
            // The faulting instruction is readable: it is executing.
            let at_probe = rip.read_unaligned() == super::STACK_PROBE_BYTES;
            let overflow = at_probe && addr < frame && sp < frame && addr.abs_diff(sp) < NEAR;
            if !overflow {
                return false;
            }
            *gregs.add(REG_RSP) = frame;
            *gregs.add(REG_RIP) = numba_rs_guard_recover as *const () as usize;
        }
        true
    }

    unsafe fn chain(sig: i32, info: *mut c_void, ctx: *mut c_void) {
        let Some(Some(old)) = PREVIOUS.get() else {
            return;
        };
        match old.handler {
            // The default action (or ignoring a fault, which the kernel refuses): put the
            // previous action back; the faulting instruction runs again and takes it.
            0 | 1 => {
                // SAFETY: restoring the action saved at installation.
                unsafe { sigaction(SIGSEGV, old, std::ptr::null_mut()) };
            }
            f if old.flags & SA_SIGINFO != 0 => {
                // SAFETY: a three-argument handler, as its flags say.
                let f: extern "C" fn(i32, *mut c_void, *mut c_void) =
                    unsafe { std::mem::transmute(f) };
                f(sig, info, ctx);
            }
            f => {
                // SAFETY: a one-argument handler.
                let f: extern "C" fn(i32) = unsafe { std::mem::transmute(f) };
                f(sig);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_text_and_margin_agree() {
        let disp = format!("-{}(%rsp)", STACK_PROBE_MARGIN);
        assert!(STACK_PROBE_ASM.ends_with(&disp), "{STACK_PROBE_ASM}");
        // The displacement in the machine code is the margin's negation.
        let d = i32::from_le_bytes(STACK_PROBE_BYTES[3..7].try_into().unwrap());
        assert_eq!(d, -(STACK_PROBE_MARGIN as i32));
    }

    unsafe extern "C" fn echo(ret: *mut u64, _exc: *mut *const c_void, args: *const u64) -> i32 {
        // SAFETY: the test passes one argument slot and one result slot.
        unsafe { *ret = *args + 1 };
        7
    }

    #[test]
    fn guarded_call_passes_arguments_and_status() {
        let mut ret = 0u64;
        let mut exc = std::ptr::null();
        let args = [41u64];
        for _ in 0..3 {
            // SAFETY: `echo` reads one slot and writes one.
            let status = unsafe { call_guarded(echo, &mut ret, &mut exc, args.as_ptr()) };
            assert_eq!((status, ret), (7, 42));
        }
    }
}
