//! `@njit(inline='always')` and cost-model inlining (Numba's `InlineInlinables`): before
//! typing, a call of a jitted function whose `inline=` option asks for it is replaced by
//! the callee's untyped IR, so the body is typed afresh at each call site (a callee
//! generic over its argument types specialises per site) and the caller's later passes
//! (rewrites, parfors) see through it.
//!
//! The callee is found as Numba finds it: the call's function is a global, a closure
//! variable, or an attribute of a global module (`mod.f`, `pkg.mod.f`) bound to a jitted
//! function. Its IR is built from its own code with its own globals.

use std::collections::HashSet;
use std::sync::Arc;

use numba_ir::{Expr, ExprId, FunctionIR, GlobalKind, GlobalResolver, IrError, Label, Stmt, VarId};
use numba_typeinfer::signature::ImplKey;
use numba_typeinfer::types::Type;
use numba_typeinfer::{TypeId, TypingResult};

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

/// A typed call of an overload whose cost model decides whether to inline it (Numba's
/// `InlineOverloads`): the caller and the callee after their untyped passes, with their
/// types.
pub struct TypedInlineSite<'a> {
    pub caller: &'a FunctionIR,
    /// The caller's variable types, by `VarId`.
    pub caller_types: &'a [TypeId],
    pub callee: &'a FunctionIR,
    /// The callee's variable types, when it types on its own.
    pub callee_types: Option<&'a [TypeId]>,
    /// The variable the call's result is assigned to.
    pub target: VarId,
    /// The call's argument types (a method's receiver first) and result type.
    pub args: &'a [TypeId],
    pub ret: TypeId,
}

/// A typed call of an overload whose implementation asks to be inlined: the expression,
/// the overload's dispatcher and the call's signature.
pub(crate) struct OverloadSite {
    pub value: ExprId,
    pub dispatcher: Arc<Dispatcher>,
    pub args: Vec<TypeId>,
    pub ret: TypeId,
    pub option: InlineOption,
}

/// Every typed call (a function or method call, an operator, an attribute) resolved to
/// an overload whose chosen implementation has `inline='always'` or a cost model, in
/// block order; `declined` expressions are left out.
pub(crate) fn overload_sites(
    ir: &FunctionIR,
    typing: &TypingResult,
    declined: &HashSet<ExprId>,
) -> Vec<OverloadSite> {
    let mut sites = Vec::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            let Stmt::Assign { value, .. } = inst.stmt else {
                continue;
            };
            if declined.contains(&value) {
                continue;
            }
            let Some(sig) = typing.calltypes.get(&value) else {
                continue;
            };
            let ImplKey::Dispatcher { id } = sig.key else {
                continue;
            };
            let Some(d) = lookup_dispatcher(id) else {
                continue;
            };
            let option = d.source.overload_inline(&sig.args);
            if option != InlineOption::Never {
                sites.push(OverloadSite {
                    value,
                    dispatcher: d,
                    args: sig.args.clone(),
                    ret: sig.ret,
                    option,
                });
            }
        }
    }
    sites
}

/// The statement assigning expression `value`: its block and index.
pub(crate) fn find_assignment(ir: &FunctionIR, value: ExprId) -> Option<(Label, usize)> {
    ir.blocks.iter().find_map(|(&label, block)| {
        block
            .body
            .iter()
            .position(|i| matches!(i.stmt, Stmt::Assign { value: v, .. } if v == value))
            .map(|index| (label, index))
    })
}

/// Rewrite the typed site at `ir.blocks[label].body[index]` as a plain call of the
/// overload's operands (a method's or attribute's receiver first), the form
/// [`numba_ir::utils::inline_function_call`] splices a callee into; false when the site
/// has no such form (a constant index not held in a variable).
pub(crate) fn as_plain_call(
    ir: &mut FunctionIR,
    typing: &TypingResult,
    label: Label,
    index: usize,
) -> bool {
    let inst = &ir.blocks[&label].body[index];
    let Stmt::Assign { target, value } = inst.stmt else {
        return false;
    };
    let loc = inst.loc;
    let (func, args, kws) = match ir.expr(value).clone() {
        Expr::Call {
            func,
            args,
            kws,
            vararg: None,
            varkwarg: None,
            ..
        } => {
            // A method: its receiver is the object the bound function was read from.
            let receiver = match typing.type_of(func).get() {
                Type::BoundFunction { .. } => match numba_ir::utils::first_def(ir, func) {
                    Some(Expr::GetAttr { value, .. }) => Some(*value),
                    _ => return false,
                },
                _ => None,
            };
            let args = receiver.into_iter().chain(args).collect();
            (Some(func), args, kws)
        }
        Expr::Call { .. } => return false,
        Expr::BinOp { lhs, rhs, .. } | Expr::InplaceBinOp { lhs, rhs, .. } => {
            (None, vec![lhs, rhs], vec![])
        }
        Expr::Unary { value, .. } | Expr::GetAttr { value, .. } => (None, vec![value], vec![]),
        Expr::GetItem { value, index } => (None, vec![value, index], vec![]),
        Expr::StaticGetItem {
            value,
            index_var: Some(index),
            ..
        } => (None, vec![value, index], vec![]),
        _ => return false,
    };
    // An operator or attribute has no function variable: a fresh, never-defined one
    // stands in (inlining a function of its own reads only the arguments).
    let func = func.unwrap_or_else(|| {
        let name = numba_ir::utils::fresh_name(ir, &format!("$overload.{}", target.0));
        ir.add_var(name, loc)
    });
    let call = ir.add_expr(Expr::Call {
        func,
        args,
        kws,
        vararg: None,
        varkwarg: None,
        form: numba_ir::CallForm::Plain,
    });
    ir.blocks.get_mut(&label).expect("the site's block").body[index].stmt = Stmt::Assign {
        target,
        value: call,
    };
    true
}
