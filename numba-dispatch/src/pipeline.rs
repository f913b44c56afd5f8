//! The nopython pipeline, stage by stage.

use numba_bytecode::CodeObject;
use numba_ir::{compile_to_ir, GlobalResolver, IrError};
use numba_lower::{
    CompiledFunction, CpuTarget, LinkedFunctions, LowerError, LowerOptions, TargetContext,
};
use numba_typeinfer::{BaseContext, CallOutcome, CalleeResolver, TypeId, TypingError};
use std::sync::LazyLock;

use crate::error::{CompileError, ErrorKind};

/// Options of one compilation.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// The dispatcher being compiled, for recursion.
    pub dispatcher_id: Option<u64>,
    /// An explicit return type (from a signature string); the result is converted to it.
    pub return_type: Option<TypeId>,
}

static TYPING: LazyLock<BaseContext> = LazyLock::new(BaseContext::default);

struct Registry;

impl CalleeResolver for Registry {
    fn resolve_call(&self, id: u64, args: &[TypeId]) -> Result<CallOutcome, String> {
        let d =
            crate::lookup_dispatcher(id).ok_or_else(|| format!("unknown jitted function #{id}"))?;
        if d.in_progress(args) {
            return Ok(CallOutcome::InProgress);
        }
        let c = d.resolve(args).map_err(|e| e.to_string())?;
        Ok(CallOutcome::Resolved(c.return_type))
    }
}

impl LinkedFunctions for Registry {
    fn native_address(&self, id: u64, args: &[TypeId]) -> Option<usize> {
        crate::lookup_dispatcher(id)?.lookup(args).map(|c| c.native)
    }
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Compile a code object for the given argument types, without any Python involved.
pub fn compile_function(
    code: CodeObject,
    globals: &dyn GlobalResolver,
    args: &[TypeId],
    options: &CompileOptions,
) -> Result<CompiledFunction, CompileError> {
    let qualname = code.qualname.clone();
    let filename = code.filename.clone();
    let firstline = code.firstlineno;
    let here = |e: CompileError| {
        let line = e.line.or(Some(firstline));
        e.at(&qualname, &filename, line)
    };
    let ir = compile_to_ir(code, globals).map_err(|e| {
        let line = e.line();
        let kind = match e {
            IrError::Bytecode(numba_bytecode::BytecodeError::Marshal { .. })
            | IrError::Bytecode(numba_bytecode::BytecodeError::Decode { .. }) => {
                ErrorKind::Internal
            }
            _ => ErrorKind::Unsupported,
        };
        let mut err = CompileError::new(kind, e.to_string());
        err.line = line;
        here(err)
    })?;
    if env_flag("NUMBA_DUMP_IR") {
        print!("{}", ir.dump_with_header());
    }
    let mut typing = numba_typeinfer::infer(&ir, args, &*TYPING, &Registry, options.dispatcher_id)
        .map_err(|e| {
            let (kind, line) = match &e {
                TypingError::Typing { line, .. } => (ErrorKind::Typing, *line),
                TypingError::Unsupported { line, .. } => (ErrorKind::Unsupported, *line),
            };
            let mut err = CompileError::new(kind, e.to_string());
            err.line = Some(line);
            here(err)
        })?;
    if env_flag("NUMBA_DUMP_ANNOTATION") {
        // Printed before lowering, so it shows even when lowering is not supported yet.
        let mut with_dels = ir.clone();
        numba_ir::postproc::insert_dels(&mut with_dels);
        let source = std::fs::read_to_string(&with_dels.filename).ok();
        print!(
            "{}",
            numba_typeinfer::annotate::annotate(&with_dels, &typing, source.as_deref())
        );
    }
    if let Some(r) = options.return_type {
        if numba_typeinfer::conv::can_convert(typing.return_type, r).is_none()
            && typing.return_type != r
        {
            return Err(here(CompileError::new(
                ErrorKind::Typing,
                format!(
                    "cannot convert the inferred return type {} to the declared {}",
                    typing.return_type, r
                ),
            )));
        }
        typing.return_type = r;
    }
    let lower_options = LowerOptions {
        self_id: options.dispatcher_id,
        unique_id: options.dispatcher_id.unwrap_or(0) * 1000 + u64::from(firstline % 1000),
    };
    let compiled = CpuTarget
        .compile(&ir, &typing, &lower_options, &Registry)
        .map_err(|e| {
            let (kind, line) = match &e {
                LowerError::Unsupported { line, .. } => (ErrorKind::Unsupported, Some(*line)),
                LowerError::Llvm(_) => (ErrorKind::Internal, None),
            };
            let mut err = CompileError::new(kind, e.to_string());
            err.line = line;
            here(err)
        })?;
    if env_flag("NUMBA_DUMP_LLVM") {
        println!(
            "{}",
            numba_ir::center(&format!("LLVM DUMP {qualname}"), 80, '-')
        );
        println!("{}", compiled.llvm_ir);
        println!("{}", "=".repeat(80));
    }
    if env_flag("NUMBA_DUMP_OPTIMIZED") {
        println!(
            "{}",
            numba_ir::center(&format!("OPTIMIZED DUMP {qualname}"), 80, '-')
        );
        println!("{}", compiled.optimized_ir);
        println!("{}", "=".repeat(80));
    }
    Ok(compiled)
}
