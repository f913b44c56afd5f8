//! LLVM code generation for the host: the per-thread target machine, reference-count
//! pruning and O3, per-phase times, and the host assembly (`NUMBA_DUMP_ASSEMBLY`).
//! Object code and linking are the JIT session's (`jit`).

use std::sync::OnceLock;

use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine,
};
use inkwell::OptimizationLevel;

use crate::refprune::{self, PruneStats, RefPruneFlags};
use crate::{llvm_err, LowerError, R};

/// What runs before reference-count pruning: promote variables to SSA values and merge
/// the repeated loads and `extractvalue`s of one array, so that an incref and its decref
/// take the same MemInfo value (the pruner matches operands by identity), and merge
/// straight-line blocks. Numba prunes after its function-level optimisation for the same
/// reason; this is the cheap part of it that matters (`instcombine` removed no more pairs
/// on the array kernels measured, at twice the cost).
const REFPRUNE_PREP: &str = "function(sroa,early-cse,simplifycfg)";

thread_local! {
    /// LLVM phase times of the compile in progress on this thread ([`timed`]).
    static PHASES: std::cell::RefCell<Vec<(&'static str, std::time::Duration)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Run `f`, adding its time to the phase `name` of the compile in progress on this
/// thread (`NUMBA_RS`'s `pipeline_times` show them).
pub(crate) fn timed<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let out = f();
    let took = start.elapsed();
    PHASES.with(|p| {
        let mut p = p.borrow_mut();
        match p.iter_mut().find(|(n, _)| *n == name) {
            Some((_, d)) => *d += took,
            None => p.push((name, took)),
        }
    });
    out
}

/// The phase times recorded on this thread since the last call, in order.
pub(crate) fn take_phases() -> Vec<(String, std::time::Duration)> {
    PHASES.with(|p| {
        p.borrow_mut()
            .drain(..)
            .map(|(n, d)| (n.to_string(), d))
            .collect()
    })
}

pub(crate) fn init_native() -> R<()> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        Target::initialize_native(&InitializationConfig::default())?;
        use_vector_math_library();
        Ok(())
    })
    .clone()
    .map_err(LowerError::Llvm)
}

/// Let the loop vectoriser call glibc's vector math library (libmvec: `exp`, `log`,
/// `sin`, ... on 2/4/8 lanes), as Numba lets it call Intel's SVML when installed, so a
/// fused `np.exp(x) * y` loop is vectorised. Only when the library loads into the
/// process, so that the JIT can resolve what the vectoriser emits; elsewhere loops keep
/// scalar libm calls.
fn use_vector_math_library() {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return;
    }
    if inkwell::support::load_library_permanently(std::path::Path::new("libmvec.so.1")).is_err() {
        return;
    }
    let args = [
        c"numba-rs".as_ptr(),
        c"-vector-library=LIBMVEC-X86".as_ptr(),
    ];
    // SAFETY: two valid NUL-terminated strings; called once, before any compilation.
    unsafe {
        inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
            args.len() as i32,
            args.as_ptr(),
            std::ptr::null(),
        );
    }
}

/// The thread's target machine for the host CPU, made once per thread: a target
/// machine caches its subtarget (register classes, legalisation tables), which costs
/// about a millisecond to build, so every compile on a thread shares one. A thread takes
/// a machine another thread handed over ([`donate_host_machine`]: the warm-up's) before
/// making its own; a machine is only ever used by one thread at a time.
pub fn host_machine() -> R<&'static TargetMachine> {
    thread_local! {
        static MACHINE: std::cell::OnceCell<&'static TargetMachine> =
            const { std::cell::OnceCell::new() };
    }
    MACHINE.with(|cell| {
        if let Some(m) = cell.get() {
            return Ok(*m);
        }
        let donated = SPARE_MACHINES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let m: &'static TargetMachine = match donated {
            Some(m) => m.0,
            None => Box::leak(Box::new(new_host_machine()?)),
        };
        let _ = cell.set(m);
        Ok(m)
    })
}

/// A target machine no thread uses any more.
struct SpareMachine(&'static TargetMachine);
// SAFETY: a spare machine is used by no thread until one takes it from the pool, and
// then by that thread alone.
unsafe impl Send for SpareMachine {}

static SPARE_MACHINES: std::sync::Mutex<Vec<SpareMachine>> = std::sync::Mutex::new(Vec::new());

/// Hand this thread's target machine to the next thread that needs one; this thread
/// must not compile again (the warm-up thread, as it ends).
pub(crate) fn donate_host_machine() {
    if let Ok(m) = host_machine() {
        SPARE_MACHINES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(SpareMachine(m));
    }
}

fn new_host_machine() -> R<TargetMachine> {
    init_native()?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| LowerError::Llvm(e.to_string()))?;
    let cpu = TargetMachine::get_host_cpu_name().to_string();
    let features = TargetMachine::get_host_cpu_features().to_string();
    // `JITDefault`: the large code model, so that code placed anywhere reaches the
    // runtime's functions and data at absolute addresses.
    target
        .create_target_machine(
            &triple,
            &cpu,
            &features,
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| LowerError::Llvm("cannot create a target machine for the host".into()))
}

/// A fresh module for the host.
pub fn new_module<'ctx>(ctx: &'ctx Context, name: &str, machine: &TargetMachine) -> Module<'ctx> {
    let module = ctx.create_module(name);
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    module
}

/// Verify and optimise at O3, pruning reference counts with the shapes `refprune` enables
/// (none: no pruning). As in Numba, pruning runs on the simplified module before the full
/// optimisation and again after it (inlining and CSE expose more pairs).
pub fn optimise(
    module: &Module<'_>,
    machine: &TargetMachine,
    refprune: RefPruneFlags,
) -> R<PruneStats> {
    optimise_with(module, machine, refprune, "default<O3>")
}

/// The start of the error [`optimise_with`] returns when the optimiser left an invalid
/// module.
pub const BROKEN_BY_O3: &str = "O3 produced an invalid module";

/// The pipeline for a module O3 breaks: no vectorisers.
pub const FALLBACK_PIPELINE: &str = "default<O1>";

/// [`optimise`] with another pipeline. The optimised module is verified: LLVM 19's SLP
/// vectoriser can leave a value used before its definition (found by the fuzzer: complex
/// arithmetic in a loop over list sums), which code generation then crashes on; the
/// error starts with [`BROKEN_BY_O3`] so that the caller can optimise its module again
/// with [`FALLBACK_PIPELINE`]. (Turning the vectoriser off through the pass builder's
/// options did not stop it.)
pub fn optimise_with(
    module: &Module<'_>,
    machine: &TargetMachine,
    refprune: RefPruneFlags,
    pipeline: &str,
) -> R<PruneStats> {
    timed("llvm.verify", || module.verify()).map_err(|e| {
        LowerError::Llvm(format!("{}\n{}", e.to_string(), module.print_to_string()))
    })?;
    // The host's CPU and features on every function: they travel with the module when a
    // caller links it in or the cache stores it, and functions inline only into
    // functions with the same features.
    let ctx = module.get_context();
    let cpu = machine.get_cpu().to_string_lossy().into_owned();
    let features = machine.get_feature_string().to_string_lossy().into_owned();
    for f in module.get_functions() {
        if f.count_basic_blocks() > 0 {
            for (key, value) in [("target-cpu", &cpu), ("target-features", &features)] {
                f.add_attribute(
                    inkwell::attributes::AttributeLoc::Function,
                    ctx.create_string_attribute(key, value),
                );
            }
        }
    }
    let mut stats = PruneStats::default();
    // Nothing to prune in a module that counts no references (scalar code): the
    // preparation passes are skipped with it.
    let refprune = if [refprune::INCREF, refprune::DECREF]
        .iter()
        .any(|name| module.get_function(name).is_some())
    {
        refprune
    } else {
        RefPruneFlags::NONE
    };
    if !refprune.is_empty() {
        timed("llvm.refprune", || -> R<()> {
            module
                .run_passes(REFPRUNE_PREP, machine, PassBuilderOptions::create())
                .map_err(llvm_err)?;
            stats += refprune::prune(module, refprune);
            Ok(())
        })?;
    }
    timed("llvm.o3", || {
        module.run_passes(pipeline, machine, PassBuilderOptions::create())
    })
    .map_err(llvm_err)?;
    if !refprune.is_empty() {
        stats += timed("llvm.refprune", || refprune::prune(module, refprune));
    }
    // Generators inlined where they are consumed: their objects move to the stack and
    // a second run keeps them in registers.
    if crate::heap2stack::promote(module) > 0 {
        module
            .run_passes(pipeline, machine, PassBuilderOptions::create())
            .map_err(llvm_err)?;
        if !refprune.is_empty() {
            stats += refprune::prune(module, refprune);
        }
    }
    timed("llvm.verify", || module.verify())
        .map_err(|e| LowerError::Llvm(format!("{BROKEN_BY_O3}: {}", e.to_string())))?;
    Ok(stats)
}

/// The host assembly of `module` (`NUMBA_DUMP_ASSEMBLY`). Code generation rewrites the IR
/// it runs on, so it runs on a copy.
pub fn assembly(module: &Module<'_>, machine: &TargetMachine) -> R<String> {
    // Cloning an invalid module is refused (by an assertion): check first.
    module.verify().map_err(llvm_err)?;
    let copy = module.clone();
    let buf = machine
        .write_to_memory_buffer(&copy, FileType::Assembly)
        .map_err(llvm_err)?;
    Ok(String::from_utf8_lossy(buf.as_slice()).into_owned())
}

/// A module parsed from LLVM's text (a compiled function's optimised module).
pub(crate) fn parse_ir<'ctx>(ctx: &'ctx Context, text: &str, name: &str) -> R<Module<'ctx>> {
    let buf =
        inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), name);
    ctx.create_module_from_ir(buf).map_err(llvm_err)
}

/// Link `library` into `module`; what the library defines externally becomes internal to
/// `module` (the linker only brings in what is external), so that a second copy, linked
/// in through another library, is renamed rather than clashing. A declaration in
/// `module` named like one of those definitions is resolved by it first.
pub(crate) fn link_internal<'ctx>(module: &Module<'ctx>, library: Module<'ctx>) -> R<()> {
    let defined: Vec<String> = library
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0 && f.get_linkage() == Linkage::External)
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .collect();
    module.link_in_module(library).map_err(llvm_err)?;
    for name in &defined {
        if let Some(f) = module
            .get_function(name)
            .filter(|f| f.count_basic_blocks() > 0)
        {
            f.set_linkage(Linkage::Internal);
        }
    }
    Ok(())
}

/// The native function's, the entry wrapper's and the asked-for foreign wrappers'
/// addresses of `symbol` in a loaded module.
pub(crate) fn addresses(
    loaded: &crate::jit::Loaded,
    symbol: &str,
    wrappers: &crate::Wrappers,
) -> R<(usize, crate::EntryFn, crate::WrapperAddresses)> {
    let address = |wanted: bool, name: &str| -> R<usize> {
        if !wanted {
            return Ok(0);
        }
        loaded.address(name)
    };
    let native = address(true, symbol)?;
    let entry_addr = address(true, &format!("{symbol}.entry"))?;
    // SAFETY: every module gets an entry wrapper of exactly the EntryFn signature
    // (`callconv::build_entry_wrapper`).
    let entry = unsafe { std::mem::transmute::<usize, crate::EntryFn>(entry_addr) };
    let loop_wanted = wrappers.ufunc || wrappers.gufunc.is_some();
    let addrs = crate::WrapperAddresses {
        ufunc_loop: address(loop_wanted, &crate::wrappers::loop_symbol(symbol))?,
        cfunc: address(wrappers.cfunc, &crate::wrappers::cfunc_symbol(symbol))?,
    };
    Ok((native, entry, addrs))
}
