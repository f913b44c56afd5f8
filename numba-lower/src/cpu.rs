//! The CPU target: optimise at O3 for the host and JIT into the process.

use std::sync::OnceLock;

use inkwell::context::Context;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::OptimizationLevel;
use numba_ir::FunctionIR;
use numba_typeinfer::TypingResult;

use crate::lower::lower_module;
use crate::{CompiledFunction, EntryFn, LinkedFunctions, LowerError, LowerOptions, TargetContext};

/// JIT compilation for the host CPU.
#[derive(Debug, Default, Clone, Copy)]
pub struct CpuTarget;

fn init_native() -> Result<(), LowerError> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| Target::initialize_native(&InitializationConfig::default()))
        .clone()
        .map_err(LowerError::Llvm)
}

fn host_machine() -> Result<TargetMachine, LowerError> {
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

impl TargetContext for CpuTarget {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn compile(
        &self,
        ir: &FunctionIR,
        typing: &TypingResult,
        options: &LowerOptions,
        linked: &dyn LinkedFunctions,
    ) -> Result<CompiledFunction, LowerError> {
        init_native()?;
        // Compiled code lives as long as the process (as in Numba): the context and the
        // execution engine are leaked on purpose.
        let ctx: &'static Context = Box::leak(Box::new(Context::create()));
        let module = ctx.create_module(&format!("numba_rs.{}", ir.qualname));
        let machine = host_machine()?;
        module.set_triple(&machine.get_triple());
        module.set_data_layout(&machine.get_target_data().get_data_layout());
        let syms = lower_module(ctx, &module, ir, typing, options, linked)?;
        let llvm_ir = module.print_to_string().to_string();
        module
            .verify()
            .map_err(|e| LowerError::Llvm(format!("{}\n{llvm_ir}", e.to_string())))?;
        module
            .run_passes("default<O3>", &machine, PassBuilderOptions::create())
            .map_err(|e| LowerError::Llvm(e.to_string()))?;
        let optimized_ir = module.print_to_string().to_string();
        let engine = module
            .create_jit_execution_engine(OptimizationLevel::Aggressive)
            .map_err(|e| LowerError::Llvm(e.to_string()))?;
        for (name, addr) in &syms.externals {
            if let Some(f) = module.get_function(name) {
                engine.add_global_mapping(&f, *addr);
            }
        }
        let native = engine
            .get_function_address(&syms.native)
            .map_err(|e| LowerError::Llvm(e.to_string()))?;
        let entry_addr = engine
            .get_function_address(&syms.entry)
            .map_err(|e| LowerError::Llvm(e.to_string()))?;
        // SAFETY: the entry wrapper was generated above with exactly the EntryFn signature.
        let entry: EntryFn = unsafe { std::mem::transmute::<usize, EntryFn>(entry_addr) };
        Box::leak(Box::new(engine));
        Ok(CompiledFunction {
            symbol: syms.native,
            native,
            entry,
            arg_types: typing.arg_types.clone(),
            return_type: typing.return_type,
            llvm_ir,
            optimized_ir,
        })
    }
}
