//! `@njit(inline='always')` and cost-model inlining (Numba's `InlineInlinables`): before
//! typing, a call of a jitted function whose `inline=` option asks for it is replaced by
//! the callee's untyped IR, so the body is typed afresh at each call site (a callee
//! generic over its argument types specialises per site) and the caller's later passes
//! (rewrites, parfors) see through it.
//!
//! The callee is found as Numba finds it: the call's function is a global, a closure
//! variable, or an attribute of a global module (`mod.f`, `pkg.mod.f`) bound to a jitted
//! function. Its IR is built from its own code with its own globals.

use numba_ir::{Expr, FunctionIR, GlobalKind, GlobalResolver, IrError, Label, Stmt, VarId};

use crate::{lookup_dispatcher, Dispatcher};

/// A jitted function's `inline=` option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InlineOption {
    /// Called through its compiled code (the default).
    #[default]
    Never,
    /// Its IR is spliced into every caller.
    Always,
    /// A function decides per call site ([`FunctionSource::inline_cost_model`]).
    ///
    /// [`FunctionSource::inline_cost_model`]: crate::FunctionSource::inline_cost_model
    CostModel,
}

/// A call site a cost model is asked about: the call and both functions' untyped IR.
pub struct InlineSite<'a> {
    /// The caller's IR, as it stands before the call is inlined.
    pub caller: &'a FunctionIR,
    /// The callee's IR, built from its code.
    pub callee: &'a FunctionIR,
    /// The call: `target = call func(args..., kws...)`.
    pub target: VarId,
    pub func: VarId,
    pub args: Vec<VarId>,
    pub kws: Vec<(String, VarId)>,
    pub line: u32,
}

/// Calls inlined into one function, and callees nested in callees, before giving up (a
/// recursive `inline='always'`).
const LIMIT: usize = 256;
const DEPTH: usize = 32;

/// What Numba's `InlineClosureLikes` does besides inner functions, by option.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClosureLikes {
    /// `parallel={'reduction'}`: `functools.reduce` over an array as a parallel loop.
    pub parallel_reduce: bool,
    /// `parallel={'comprehension'}`: array comprehensions as parallel loops.
    pub parallel_comprehension: bool,
}

/// Numba's `InlineClosureLikes`: `functools.reduce` calls as loops, inner functions and
/// lambdas called where they are made spliced in, array comprehensions as loops, lists
/// only read as tuples. With `jitted` (a callee being inlined, at that nesting depth),
/// also the jitted calls asking to be inlined, as Numba runs a callee's untyped passes.
pub(crate) fn closure_likes(
    ir: &mut FunctionIR,
    globals: &dyn GlobalResolver,
    cfg: ClosureLikes,
    jitted: Option<usize>,
) -> Result<bool, IrError> {
    // `functools.reduce` calls become loops calling the function (Numba's
    // `_inline_reduction`), which a lambda then inlines into.
    let reduced = numba_ir::reduce::inline_reduce_calls(ir, cfg.parallel_reduce)?;
    let mut inlined = numba_ir::utils::inline_closures(ir, globals)?;
    if let Some(depth) = jitted {
        inlined |= inline_jitted_calls(ir, globals, cfg, depth)?;
    }
    // Array comprehensions become loops storing into an array (Numba's
    // `_inline_arraycall`), parallel loops under `parallel={'comprehension'}`.
    let arrays =
        numba_ir::comprehension::inline_array_comprehensions(ir, cfg.parallel_comprehension);
    // Lists only read (`np.array([1.0, 2.0])`) are tuples.
    let tuples = numba_ir::literal_lists::literal_lists_as_tuples(ir);
    Ok(reduced || inlined || arrays || tuples)
}

/// Inline every call of a jitted function whose `inline=` option asks for it (Numba's
/// `InlineInlinables`); whether anything was inlined. `globals` are the caller's (to
/// follow `module.f`); each callee's IR is built with its own globals and goes through
/// [`closure_likes`] first. A cost model is asked once per call site.
pub(crate) fn inline_jitted_calls(
    ir: &mut FunctionIR,
    globals: &dyn GlobalResolver,
    cfg: ClosureLikes,
    depth: usize,
) -> Result<bool, IrError> {
    let too_deep = |line| IrError::Unsupported {
        message: "too many nested calls to inline (a recursive function with \
                  inline='always'?)"
            .to_string(),
        line,
    };
    if depth > DEPTH {
        return Err(too_deep(ir.firstlineno));
    }
    let mut inlined = 0;
    // Call sites left as calls (a cost model said no, a generator), by result variable:
    // inlining moves statements, not variables.
    let mut declined: Vec<VarId> = Vec::new();
    while let Some((label, index, d)) = next_call(ir, globals, &declined) {
        if inlined == LIMIT {
            return Err(too_deep(ir.firstlineno));
        }
        let (code, callee_globals) = d.source.load().map_err(|message| IrError::Unsupported {
            message,
            line: ir.firstlineno,
        })?;
        let mut callee = numba_ir::compile_to_ir(code, &*callee_globals)?;
        let Stmt::Assign { target, value } = ir.blocks[&label].body[index].stmt else {
            unreachable!("next_call finds assignments")
        };
        if callee.is_generator {
            // A generator function's call makes a generator: it stays a call.
            declined.push(target);
            continue;
        }
        if d.options.inline == InlineOption::CostModel {
            let Expr::Call {
                func, args, kws, ..
            } = ir.expr(value).clone()
            else {
                unreachable!("next_call finds calls")
            };
            let site = InlineSite {
                caller: ir,
                callee: &callee,
                target,
                func,
                args,
                kws,
                line: ir.blocks[&label].body[index].loc.line,
            };
            let yes =
                d.source
                    .inline_cost_model(&site)
                    .map_err(|message| IrError::Unsupported {
                        message: format!("the inline cost model of '{}' failed: {message}", d.name),
                        line: site.line,
                    })?;
            if !yes {
                declined.push(target);
                continue;
            }
        }
        closure_likes(&mut callee, &*callee_globals, cfg, Some(depth + 1))?;
        let defaults = d.parameters().map(|p| p.defaults).unwrap_or_default();
        numba_ir::utils::inline_function_call(ir, label, index, &callee, &defaults)?;
        inlined += 1;
    }
    if inlined > 0 {
        while numba_ir::utils::dead_code_elimination(ir) {}
    }
    Ok(inlined > 0)
}

/// The first call (not declined) of a jitted function to inline: its statement and the
/// dispatcher.
fn next_call(
    ir: &FunctionIR,
    globals: &dyn GlobalResolver,
    declined: &[VarId],
) -> Option<(Label, usize, std::sync::Arc<Dispatcher>)> {
    for (&label, block) in &ir.blocks {
        for (index, inst) in block.body.iter().enumerate() {
            let Stmt::Assign { target, value } = inst.stmt else {
                continue;
            };
            let Expr::Call {
                func,
                vararg: None,
                varkwarg: None,
                ..
            } = ir.expr(value)
            else {
                continue;
            };
            if declined.contains(&target) {
                continue;
            }
            let Some(GlobalKind::Dispatcher { id, .. }) = callee_of(ir, globals, *func) else {
                continue;
            };
            let Some(d) = lookup_dispatcher(id) else {
                continue;
            };
            // Generators, object-mode functions and `with objmode` bodies keep their call.
            if d.options.inline != InlineOption::Never
                && d.options.object_mode == crate::ObjectMode::Never
                && d.objmode_with().is_none()
                && d.source.lifted_ir().is_none()
            {
                return Some((label, index, d));
            }
        }
    }
    None
}

/// What the function a call names is bound to: a global, a closure variable, or an
/// attribute of a module global, followed through copies.
fn callee_of(ir: &FunctionIR, globals: &dyn GlobalResolver, func: VarId) -> Option<GlobalKind> {
    let mut v = func;
    for _ in 0..16 {
        match numba_ir::utils::first_def(ir, v)? {
            Expr::Var(src) => v = *src,
            Expr::Global { value, .. } | Expr::FreeVar { value, .. } => {
                return Some(value.kind.clone())
            }
            Expr::GetAttr { value, attr } => {
                let GlobalKind::Module(m) = callee_of(ir, globals, *value)? else {
                    return None;
                };
                return globals.resolve_attr(&m, attr).map(|g| g.kind);
            }
            _ => return None,
        }
    }
    None
}
