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

/// Calls inlined into one function before giving up (a recursive `inline='always'`).
const LIMIT: usize = 256;

/// Inline every call of a jitted function whose `inline=` option asks for it; whether
/// anything was inlined. `globals` are the caller's (to follow `module.f`). `declined`
/// holds the call sites (by result variable: inlining moves statements) left as calls,
/// which are not asked about again.
pub(crate) fn inline_jitted_calls(
    ir: &mut FunctionIR,
    globals: &dyn GlobalResolver,
    declined: &mut Vec<VarId>,
) -> Result<bool, IrError> {
    let mut inlined = 0;
    while let Some((label, index, d)) = next_call(ir, globals, declined) {
        if inlined == LIMIT {
            return Err(IrError::Unsupported {
                message: format!(
                    "more than {LIMIT} calls to inline (a recursive function with \
                     inline='always'?)"
                ),
                line: ir.firstlineno,
            });
        }
        let (code, callee_globals) = d.source.load().map_err(|message| IrError::Unsupported {
            message,
            line: ir.firstlineno,
        })?;
        let callee = numba_ir::compile_to_ir(code, &*callee_globals)?;
        let Stmt::Assign { target, .. } = ir.blocks[&label].body[index].stmt else {
            unreachable!("next_call finds assignments")
        };
        if callee.is_generator {
            // A generator function's call makes a generator: it stays a call.
            declined.push(target);
            continue;
        }
        let Stmt::Assign { target, value } = ir.blocks[&label].body[index].stmt else {
            unreachable!("next_call finds assignments")
        };
        if d.options.inline == InlineOption::CostModel {
            let Expr::Call { func, args, kws, .. } = ir.expr(value).clone() else {
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
            let yes = d
                .source
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
        let defaults = d.parameters().map(|p| p.defaults).unwrap_or_default();
        numba_ir::utils::inline_function_call(ir, label, index, &callee, &defaults)?;
        inlined += 1;
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
