//! The CPU target: the lowering registry with every built-in implementation, the data
//! models and calling convention, and host codegen (reference-count pruning, O3, object
//! code linked into the process's JIT session).

use std::time::Instant;

use inkwell::context::Context;
use numba_ir::FunctionIR;
use numba_typeinfer::TypingResult;

use crate::callconv::{build_entry_wrapper, native_fn_type};
use crate::function::FnLower;
use crate::registry::Registry;
use crate::{
    codegen, impls, mangle, CompiledFunction, LinkedFunctions, LowerError, LowerOptions,
    TargetContext, R,
};

/// JIT compilation for the host CPU. A value: a dispatcher holds the target it compiles
/// for, and a user can extend its registry before compiling.
#[derive(Debug, Clone)]
pub struct CpuTarget {
    registry: Registry,
}

impl Default for CpuTarget {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuTarget {
    /// The target with every built-in implementation registered.
    pub fn new() -> Self {
        let mut registry = Registry::new();
        impls::register_all(&mut registry);
        CpuTarget { registry }
    }

    /// The registry, to add implementations (a user's operator, say).
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }
}

impl TargetContext for CpuTarget {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn registry(&self) -> &Registry {
        &self.registry
    }

    fn compile(
        &self,
        ir: &FunctionIR,
        typing: &TypingResult,
        options: &LowerOptions,
        linked: &dyn LinkedFunctions,
    ) -> R<CompiledFunction> {
        let start = Instant::now();
        codegen::take_phases();
        let machine = codegen::host_machine()?;
        // Compiled code lives as long as the process (as in Numba): the context and the
        // execution engine are leaked on purpose.
        let ctx: &'static Context = Box::leak(Box::new(Context::create()));
        let symbol = mangle::mangle(
            &options.module,
            &ir.qualname,
            options.uid,
            &typing.arg_types,
        );
        let mut module = codegen::new_module(ctx, &symbol, machine);
        // A generator function (not a function returning a generator).
        let is_generator = ir.is_generator
            && matches!(
                typing.return_type.get(),
                numba_typeinfer::Type::Generator { .. }
            );
        let (func, externals, frozen_data) = if is_generator {
            let g = crate::generator::lower_generator(
                ctx,
                &module,
                &symbol,
                ir,
                typing,
                &self.registry,
                options,
                linked,
            )?;
            if options.fastmath != 0 {
                if let Some(next) = module.get_function(&format!("{symbol}.next")) {
                    crate::impls::float::apply_fastmath(next, options.fastmath);
                }
            }
            (g.init, g.externals, crate::FrozenData(g.frozen_data))
        } else {
            let fnty = native_fn_type(ctx, &typing.arg_types)?;
            let func = module.add_function(&symbol, fnty, None);
            let mut lw = FnLower::new(
                ctx,
                &module,
                func,
                ir,
                typing,
                &self.registry,
                options,
                linked,
            )?;
            lw.lower_body()?;
            if options.fastmath != 0 {
                crate::impls::float::apply_fastmath(func, options.fastmath);
            }
            let externals = std::mem::take(&mut lw.externals);
            let frozen_data = crate::FrozenData(std::mem::take(&mut lw.frozen_data));
            drop(lw);
            (func, externals, frozen_data)
        };
        let entry_sym = format!("{symbol}.entry");
        build_entry_wrapper(
            ctx,
            &module,
            &entry_sym,
            func,
            &typing.arg_types,
            typing.return_type,
        )?;
        let w = &options.wrappers;
        if w.ufunc {
            crate::wrappers::build_ufunc_loop(
                ctx,
                &module,
                &symbol,
                func,
                (&typing.arg_types, typing.return_type),
                ir.blocks.len() <= 1,
            )?;
        }
        if let Some(core) = &w.gufunc {
            crate::wrappers::build_gufunc_loop(
                ctx,
                &module,
                &symbol,
                func,
                &typing.arg_types,
                core,
            )?;
        }
        if w.cfunc {
            crate::wrappers::build_cfunc(
                ctx,
                &module,
                &symbol,
                func,
                &typing.arg_types,
                typing.return_type,
                if w.cfunc_raises {
                    crate::wrappers::REPORT_LOOP
                } else {
                    crate::wrappers::REPORT_UNRAISABLE
                },
            )?;
        }
        let lowered_at = Instant::now();
        let llvm_ir = codegen::timed("llvm.print", || module.print_to_string().to_string());
        let prune_stats = match codegen::optimise(&module, machine, options.refprune) {
            Err(LowerError::Llvm(m)) if m.starts_with(codegen::BROKEN_BY_O3) => {
                // The module as lowered, optimised again without the vectorisers.
                module = codegen::parse_ir(ctx, &llvm_ir, &symbol)?;
                codegen::optimise_with(
                    &module,
                    machine,
                    options.refprune,
                    codegen::FALLBACK_PIPELINE,
                )?
            }
            r => r?,
        };
        let optimized_ir = codegen::timed("llvm.print", || module.print_to_string().to_string());
        let assembly = if options.dump_assembly {
            Some(codegen::assembly(&module, machine)?)
        } else {
            None
        };
        let optimised_at = Instant::now();
        let loaded = crate::jit::load_module(&module, &externals)?;
        let (native, entry, wrappers) = codegen::addresses(&loaded, &symbol, w)?;
        let done = Instant::now();
        let may_recurse = crate::may_recurse(&optimized_ir, &externals);
        Ok(CompiledFunction {
            may_recurse,
            assembly,
            prune_stats,
            timings: [
                ("native_lowering".into(), lowered_at - start),
                ("llvm_optimise".into(), optimised_at - lowered_at),
                ("llvm_jit".into(), done - optimised_at),
            ]
            .into_iter()
            .chain(codegen::take_phases())
            .collect(),
            frozen_data,
            wrappers,
            ..CompiledFunction::new(
                (symbol, native, entry),
                (&typing.arg_types, typing.return_type),
                (llvm_ir.into(), optimized_ir.into()),
            )
        })
    }
}
