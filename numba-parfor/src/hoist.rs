//! Allocation hoisting (Numba's `hoist` when it builds a parfor's gufunc): an array a
//! parallel loop's body allocates afresh in every iteration, from sizes that do not
//! change in the loop, is allocated once per division before the loop instead and
//! reused (`np.zeros`/`np.ones` become `np.empty` hoisted, plus a refill of the
//! constant where the allocation stood, as Numba's "numpy.empty() is used for the
//! allocation").
//!
//! An allocation is hoisted only when reusing its array cannot be observed: it is the
//! body's first block (run by every iteration), its target is assigned once in the body
//! and is not a reduction or race, and every use of the array reads or writes its
//! elements or computes something new from it (an element, a reduction, an operator's
//! new array) rather than keeping a reference (a view, a call that may store it, a
//! tuple or list holding it).

use std::collections::{HashMap, HashSet};

use numba_ir::{Block, Expr, ExtensionNode, FunctionIR, Inst, Label, Stmt, VarId};
use numba_typeinfer::types::Type;
use numba_typeinfer::{ImplKey, TypingResult};

use crate::node::Parfor;

/// `parfor_refill(a)` (attr `value`: `0` or `1`): every element of `a` becomes the
/// constant again, where a hoisted `np.zeros`/`np.ones` stood.
pub const REFILL: &str = "parfor_refill";

/// The allocation functions hoisting moves, and the constant each fills with.
const ALLOCATORS: &[(&str, Option<i64>)] = &[
    ("numpy.empty", None),
    ("numpy.zeros", Some(0)),
    ("numpy.ones", Some(1)),
];

/// What hoisting does to one parfor's kernel.
#[derive(Debug, Clone, Default)]
pub struct Hoisting {
    /// Statements the kernel runs once per division, before the loop, in order.
    pub prologue: Vec<Inst>,
    /// The loop body with the allocations replaced (a refill, or nothing).
    pub body: std::collections::BTreeMap<Label, Block>,
    /// The hoisted allocations: the array variable, the function that allocated it
    /// (`numpy.zeros`) and its line, for the diagnostics.
    pub hoisted: Vec<(VarId, String, u32)>,
    /// Hoisted `np.zeros`/`np.ones` calls the kernel makes as `np.empty` (the refill
    /// sets the elements).
    pub as_empty: Vec<numba_ir::ExprId>,
}

/// Array methods and attributes that read an array without keeping it.
const READING_ATTRS: &[&str] = &[
    "shape", "size", "ndim", "itemsize", "nbytes", "sum", "prod", "mean", "min", "max", "argmin",
    "argmax", "std", "var", "any", "all", "fill", "copy", "cumsum", "cumprod",
];

/// Whether every use of `x` in the body reads or writes it in place (see the module doc).
fn uses_are_local(ir: &FunctionIR, typing: &TypingResult, pf: &Parfor, x: VarId) -> bool {
    let no_array = |v: VarId| {
        !matches!(
            typing.type_of(v).get(),
            Type::Array { .. } | Type::Tuple(_) | Type::UniTuple(..)
        )
    };
    for inst in pf.loop_body.values().flat_map(|b| &b.body) {
        let ok = match &inst.stmt {
            Stmt::Assign { target, value } => match ir.expr(*value) {
                e if !ir.expr_uses(e).contains(&x) => true,
                Expr::GetItem { value, index } => *value == x && *index != x && no_array(*target),
                Expr::StaticGetItem { value, .. } => *value == x && no_array(*target),
                Expr::GetAttr { attr, .. } => READING_ATTRS.contains(&attr.as_str()),
                // Operators make new values.
                Expr::BinOp { .. } | Expr::Unary { .. } => true,
                Expr::Extension(n) => n.kind == "arrayexpr",
                // A call reading the array: one giving no array (or tuple of them) back
                // cannot return it.
                Expr::Call { func, .. } => {
                    *func != x
                        && no_array(*target)
                        && matches!(
                            typing.type_of(*func).get(),
                            Type::Function(_) | Type::BoundFunction { .. }
                        )
                }
                _ => false,
            },
            Stmt::SetItem { index, value, .. } => *value != x && *index != x,
            Stmt::StaticSetItem { target, value, .. } => *value != x && *target == x,
            Stmt::Del { .. } => true,
            Stmt::Print { .. } => true,
            // A nested parfor (`crate::nest`) reads its parameters element by element
            // and keeps none of them.
            Stmt::Extension(n) if n.kind == crate::node::PARFOR => Parfor::from_node(n)
                .is_some_and(|p| !p.reductions.iter().any(|r| r.var == x) && !p.races.contains(&x)),
            s => !ir.stmt_vars(s).contains(&x),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Whether `value` is something every iteration computes alike from what the loop
/// does not change, and safe to compute once (a constant, a global, a module or
/// function attribute, a tuple of such values).
fn invariant_pure(
    ir: &FunctionIR,
    typing: &TypingResult,
    value: numba_ir::ExprId,
    inv: &dyn Fn(VarId) -> bool,
) -> bool {
    match ir.expr(value) {
        Expr::Const(_) | Expr::Global { .. } | Expr::FreeVar { .. } => true,
        Expr::Var(v) => inv(*v) && !typing.type_of(*v).is_array(),
        Expr::GetAttr { value: v, .. } => {
            inv(*v)
                && typing.calltypes.get(&value).is_none_or(|s| {
                    matches!(
                        s.ret.get(),
                        Type::Module(_) | Type::Function(_) | Type::NumberClass(_) | Type::DType(_)
                    )
                })
                && matches!(
                    typing.type_of(*v).get(),
                    Type::Module(_) | Type::Function(_)
                )
        }
        Expr::BuildTuple { items } => items
            .iter()
            .all(|&i| inv(i) && typing.type_of(i).unliteral().is_scalar()),
        _ => false,
    }
}

/// The hoisting of `pf`'s allocations, for its kernel.
pub fn plan(ir: &FunctionIR, typing: &TypingResult, pf: &Parfor) -> Hoisting {
    let mut out = Hoisting {
        body: pf.loop_body.clone(),
        ..Default::default()
    };
    let Some((&entry, first)) = pf.loop_body.iter().next() else {
        return out;
    };
    // How often each variable is assigned in the body.
    let mut assigned: HashMap<VarId, u32> = HashMap::new();
    for inst in pf.loop_body.values().flat_map(|b| &b.body) {
        if let Stmt::Assign { target, .. } = inst.stmt {
            *assigned.entry(target).or_default() += 1;
        }
    }
    let outputs: HashSet<VarId> = pf
        .reductions
        .iter()
        .map(|r| r.var)
        .chain(pf.races.iter().copied())
        .chain(pf.loop_nests.iter().map(|n| n.index))
        .collect();
    let mut invariant: HashSet<VarId> = HashSet::new();
    let mut removed: HashSet<usize> = HashSet::new();
    let mut refills: HashMap<usize, Inst> = HashMap::new();
    let mut dropped_dels: HashSet<VarId> = HashSet::new();
    for (k, inst) in first.body.iter().enumerate() {
        let Stmt::Assign { target, value } = inst.stmt else {
            continue;
        };
        if assigned.get(&target) != Some(&1) || outputs.contains(&target) {
            continue;
        }
        let inv = |v: VarId| !assigned.contains_key(&v) || invariant.contains(&v);
        if invariant_pure(ir, typing, value, &inv) {
            // Copied: the body keeps its own (equal) definition.
            invariant.insert(target);
            out.prologue.push(inst.clone());
            continue;
        }
        let Expr::Call {
            func,
            args,
            kws,
            vararg: None,
            varkwarg: None,
            ..
        } = ir.expr(value)
        else {
            continue;
        };
        let Some(sig) = typing.calltypes.get(&value) else {
            continue;
        };
        let ImplKey::Function(key) = &sig.key else {
            continue;
        };
        let Some(&(name, fill)) = ALLOCATORS.iter().find(|(n, _)| n == key) else {
            continue;
        };
        let operands_inv =
            inv(*func) && args.iter().all(|&a| inv(a)) && kws.iter().all(|(_, a)| inv(*a));
        if !operands_inv
            || !typing.type_of(target).is_array()
            || !uses_are_local(ir, typing, pf, target)
        {
            continue;
        }
        if let Some(c) = fill {
            // The prologue allocates uninitialised memory; the refill in the body
            // restores the constant each iteration.
            out.as_empty.push(value);
            let mut node = ExtensionNode::new(REFILL, vec![target]);
            node.attrs.push(("value".into(), c.to_string()));
            refills.insert(
                k,
                Inst {
                    stmt: Stmt::Extension(Box::new(node)),
                    loc: inst.loc,
                },
            );
        }
        out.prologue.push(inst.clone());
        out.hoisted.push((target, name.to_string(), inst.loc.line));
        removed.insert(k);
        dropped_dels.insert(target);
        invariant.insert(target);
    }
    if out.hoisted.is_empty() {
        out.prologue.clear();
        return out;
    }
    // The body without the hoisted allocations (a refill in their place) and without
    // dels of the hoisted arrays, which now live across iterations.
    for (&l, block) in out.body.iter_mut() {
        let mut body = Vec::with_capacity(block.body.len());
        for (k, inst) in block.body.iter().enumerate() {
            if l == entry && removed.contains(&k) {
                if let Some(r) = refills.remove(&k) {
                    body.push(r);
                }
                continue;
            }
            if matches!(inst.stmt, Stmt::Del { var } if dropped_dels.contains(&var)) {
                continue;
            }
            body.push(inst.clone());
        }
        block.body = body;
    }
    out
}
