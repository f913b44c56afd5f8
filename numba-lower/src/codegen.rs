//! LLVM code generation for the host: target machine, reference-count pruning and O3,
//! MCJIT, mapping the runtime's and callees' symbols into the engine, and the host
//! assembly (`NUMBA_DUMP_ASSEMBLY`).

use std::sync::OnceLock;

use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
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

fn init_native() -> R<()> {
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

/// A target machine for the host CPU.
pub fn host_machine() -> R<TargetMachine> {
    init_native()?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| LowerError::Llvm(e.to_string()))?;
    let cpu = TargetMachine::get_host_cpu_name().to_string();
    let features = TargetMachine::get_host_cpu_features().to_string();
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
    module.verify().map_err(|e| {
        LowerError::Llvm(format!("{}\n{}", e.to_string(), module.print_to_string()))
    })?;
    // MCJIT builds its own target machine for a generic CPU; these attributes make its
    // code generator use the host's features (AVX and so on) that the optimiser assumed.
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
    if !refprune.is_empty() {
        module
            .run_passes(REFPRUNE_PREP, machine, PassBuilderOptions::create())
            .map_err(llvm_err)?;
        stats += refprune::prune(module, refprune);
    }
    module
        .run_passes("default<O3>", machine, PassBuilderOptions::create())
        .map_err(llvm_err)?;
    if !refprune.is_empty() {
        stats += refprune::prune(module, refprune);
    }
    // Generators inlined where they are consumed: their objects move to the stack and
    // a second run keeps them in registers.
    if crate::heap2stack::promote(module) > 0 {
        module
            .run_passes("default<O3>", machine, PassBuilderOptions::create())
            .map_err(llvm_err)?;
        if !refprune.is_empty() {
            stats += refprune::prune(module, refprune);
        }
    }
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
/// addresses of `symbol` in a JIT engine.
pub(crate) fn addresses(
    engine: &ExecutionEngine<'_>,
    symbol: &str,
    wrappers: &crate::Wrappers,
) -> R<(usize, crate::EntryFn, crate::WrapperAddresses)> {
    let address = |wanted: bool, name: &str| -> R<usize> {
        if !wanted {
            return Ok(0);
        }
        engine
            .get_function_address(name)
            .map_err(|e| LowerError::Llvm(format!("{name}: {e}")))
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

/// JIT the module, mapping the runtime's symbols and `externals` (symbol, address).
pub fn jit<'ctx>(module: &Module<'ctx>, externals: &[(String, usize)]) -> R<ExecutionEngine<'ctx>> {
    let engine = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .map_err(|e| LowerError::Llvm(e.to_string()))?;
    for (name, addr) in numba_nrt::runtime_symbols()
        .into_iter()
        .chain(crate::runtime::symbols())
        .chain(crate::strings::symbols())
        .chain(crate::str_methods::symbols())
        .chain(crate::bytes::symbols())
        .chain(crate::str_format::symbols())
        .chain(crate::lists::symbols())
        .chain(crate::sets::symbols())
        .chain(crate::dicts::symbols())
        .chain(crate::random::symbols())
        .chain(crate::sort::symbols())
        .chain(crate::blas::symbols())
        .chain(crate::lapack::symbols())
        .chain(crate::runtime::host_symbols())
    {
        if let Some(f) = module.get_function(name) {
            engine.add_global_mapping(&f, addr);
        } else if let Some(g) = module.get_global(name) {
            engine.add_global_mapping(&g, addr);
        }
    }
    for (name, addr) in externals {
        if let Some(f) = module.get_function(name) {
            engine.add_global_mapping(&f, *addr);
        } else if let Some(g) = module.get_global(name) {
            // A data symbol (object mode's `_Py_NoneStruct`).
            engine.add_global_mapping(&g, *addr);
        }
    }
    // A linked callee's `with objmode` block calls the host's helper, which the caller's
    // own lowering did not ask for.
    let helper = crate::impls::objmode_with::HELPER;
    if let Some(f) = module
        .get_function(helper)
        .filter(|f| f.count_basic_blocks() == 0)
    {
        if !externals.iter().any(|(n, _)| n == helper) {
            engine.add_global_mapping(&f, crate::objmode::api::address(helper)?);
        }
    }
    // Calls to other compiled functions name their address
    // (`numba_rs.callee.<id>.<hex address>`); modules linked in from another function's
    // library bring such declarations with them.
    for f in module.get_functions() {
        if f.count_basic_blocks() > 0 {
            continue;
        }
        let name = f.get_name().to_string_lossy();
        if let Some(rest) = name.strip_prefix("numba_rs.callee.") {
            if let Some(addr) = rest
                .rsplit('.')
                .next()
                .and_then(|h| usize::from_str_radix(h, 16).ok())
            {
                engine.add_global_mapping(&f, addr);
            }
        }
    }
    Ok(engine)
}
