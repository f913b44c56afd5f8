//! Dead-branch pruning (Numba's `dead_branch_prune`) and phi stripping
//! (`PreLowerStripPhis`).
//!
//! Pruning decides branches whose condition is known before typing: `arg is None` /
//! `arg is not None` when the caller says whether each argument is `None` (from its type;
//! numba-ir knows no types), and constant conditions. The untaken successor edge goes, and
//! blocks no longer reachable are dropped, so `def f(a, b=None): if b is None: ...` never
//! types `a + b` with `b` None.

use std::collections::{BTreeSet, HashMap};

use numba_bytecode::Constant;

use crate::global::GlobalKind;
use crate::ir::{BinOp, Expr, FunctionIR, Inst, Label, Stmt, VarId};

/// What is known about an argument before typing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgNone {
    /// Its type is `none` (passed `None` or left to a `None` default).
    IsNone,
    /// Its type can never be `None` (not optional).
    NotNone,
    /// Optional, or unknown.
    Unknown,
}

/// A condition's value as far as it is known without types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    NoneValue,
    Arg(u32),
    Bool(bool),
    Int(i64),
    Other,
}

fn single_defs(ir: &FunctionIR) -> HashMap<VarId, &Expr> {
    let mut defs: HashMap<VarId, Option<&Expr>> = HashMap::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            if let Stmt::Assign { target, value } = &inst.stmt {
                defs.entry(*target)
                    .and_modify(|d| *d = None)
                    .or_insert(Some(ir.expr(*value)));
            }
        }
    }
    defs.into_iter()
        .filter_map(|(v, e)| e.map(|e| (v, e)))
        .collect()
}

fn resolve(defs: &HashMap<VarId, &Expr>, mut v: VarId) -> Known {
    for _ in 0..32 {
        match defs.get(&v) {
            Some(Expr::Var(src)) => v = *src,
            Some(Expr::Const(Constant::None)) => return Known::NoneValue,
            Some(Expr::Const(Constant::Bool(b))) => return Known::Bool(*b),
            Some(Expr::Const(Constant::Int(i))) => return Known::Int(*i),
            Some(Expr::Arg { index, .. }) => return Known::Arg(*index),
            // A global or closure variable bound to a constant (Numba resolves
            // `ir.Global` / `ir.FreeVar` definitions the same way).
            Some(Expr::Global { value, .. } | Expr::FreeVar { value, .. }) => {
                return match &value.kind {
                    GlobalKind::Const(Constant::None) => Known::NoneValue,
                    GlobalKind::Const(Constant::Bool(b)) => Known::Bool(*b),
                    GlobalKind::Const(Constant::Int(i)) => Known::Int(*i),
                    _ => Known::Other,
                }
            }
            _ => return Known::Other,
        }
    }
    Known::Other
}

/// What `x` holds where `result` is computed in `body`, when `x` has several definitions
/// in the function (a parameter reassigned later, `if n is None: n = ...`): the last
/// assignment to `x` before that statement in the same block, an argument or `None`.
fn reaching(ir: &FunctionIR, body: &[Inst], result: VarId, x: VarId) -> Known {
    let Some(at) = body
        .iter()
        .position(|i| matches!(&i.stmt, Stmt::Assign { target, .. } if *target == result))
    else {
        return Known::Other;
    };
    for inst in body[..at].iter().rev() {
        if let Stmt::Assign { target, value } = &inst.stmt {
            if *target == x {
                return match ir.expr(*value) {
                    Expr::Arg { index, .. } => Known::Arg(*index),
                    Expr::Const(Constant::None) => Known::NoneValue,
                    _ => Known::Other,
                };
            }
        }
    }
    Known::Other
}

/// The value of a branch condition, if known. `body` is the branching block's.
fn condition(
    ir: &FunctionIR,
    body: &[Inst],
    defs: &HashMap<VarId, &Expr>,
    cond: VarId,
    args: &[ArgNone],
) -> Option<bool> {
    let mut v = cond;
    // Look through the `bool(...)` the interpreter wraps conditions in, and copies.
    for _ in 0..32 {
        match defs.get(&v) {
            Some(Expr::Var(src)) => v = *src,
            Some(Expr::Call { func, args: a, .. }) if a.len() == 1 => {
                let is_bool = matches!(
                    defs.get(func),
                    Some(Expr::Global { name, .. }) if name == "bool"
                );
                if !is_bool {
                    return None;
                }
                v = a[0];
            }
            Some(Expr::BinOp { op, lhs, rhs }) if matches!(op, BinOp::Is | BinOp::IsNot) => {
                let known = |x: VarId| {
                    if defs.contains_key(&x) {
                        resolve(defs, x)
                    } else {
                        reaching(ir, body, v, x)
                    }
                };
                let (l, r) = (known(*lhs), known(*rhs));
                let arg_side = match (l, r) {
                    (Known::NoneValue, Known::NoneValue) => Some(true),
                    (Known::NoneValue, Known::Arg(i)) | (Known::Arg(i), Known::NoneValue) => {
                        match args.get(i as usize) {
                            Some(ArgNone::IsNone) => Some(true),
                            Some(ArgNone::NotNone) => Some(false),
                            _ => None,
                        }
                    }
                    _ => None,
                }?;
                return Some(if *op == BinOp::Is {
                    arg_side
                } else {
                    !arg_side
                });
            }
            // Comparisons of constants (Numba's `prune_by_value`), e.g. after
            // `len(t) == 2` became `2 == 2` by the semantic-constants rewrite.
            Some(Expr::BinOp { op, lhs, rhs }) if op.is_comparison() => {
                let (Known::Int(l), Known::Int(r)) = (resolve(defs, *lhs), resolve(defs, *rhs))
                else {
                    return None;
                };
                return Some(match op {
                    BinOp::Lt => l < r,
                    BinOp::Le => l <= r,
                    BinOp::Gt => l > r,
                    BinOp::Ge => l >= r,
                    BinOp::Eq => l == r,
                    _ => l != r,
                });
            }
            Some(Expr::Const(Constant::Bool(b))) => return Some(*b),
            Some(Expr::Const(Constant::Int(i))) => return Some(*i != 0),
            Some(Expr::Global { .. } | Expr::FreeVar { .. }) => {
                return match resolve(defs, v) {
                    Known::Bool(b) => Some(b),
                    Known::Int(i) => Some(i != 0),
                    Known::NoneValue => Some(false),
                    _ => None,
                }
            }
            _ => return None,
        }
    }
    None
}

/// Prune branches decided by `args`; returns whether anything changed.
pub fn dead_branch_prune(ir: &mut FunctionIR, args: &[ArgNone]) -> bool {
    let mut decided: Vec<(Label, Label)> = Vec::new();
    {
        let defs = single_defs(ir);
        for (&label, block) in &ir.blocks {
            if let Some(Stmt::Branch {
                cond,
                truebr,
                falsebr,
            }) = block.terminator()
            {
                if let Some(taken) = condition(ir, &block.body, &defs, *cond, args) {
                    decided.push((label, if taken { *truebr } else { *falsebr }));
                }
            }
        }
    }
    if decided.is_empty() {
        return false;
    }
    for (label, target) in decided {
        if let Some(block) = ir.blocks.get_mut(&label) {
            if let Some(last) = block.body.last_mut() {
                let loc = last.loc;
                *last = Inst {
                    stmt: Stmt::Jump { target },
                    loc,
                };
            }
        }
    }
    remove_unreachable(ir);
    true
}

/// Drop the incoming values of φs from blocks that no longer branch to the φ's block
/// (after pruning decided a branch); whether anything changed.
pub fn prune_phi_incoming(ir: &mut FunctionIR) -> bool {
    let mut preds: HashMap<Label, BTreeSet<Label>> = HashMap::new();
    for (&l, block) in &ir.blocks {
        if let Some(t) = block.terminator() {
            for s in t.successors() {
                preds.entry(s).or_default().insert(l);
            }
        }
    }
    let mut changed = false;
    let mut phis = Vec::new();
    for (&l, block) in &ir.blocks {
        for inst in &block.body {
            if let Stmt::Assign { value, .. } = &inst.stmt {
                if matches!(ir.expr(*value), Expr::Phi { .. }) {
                    phis.push((l, *value));
                }
            }
        }
    }
    for (l, e) in phis {
        let live = preds.get(&l);
        if let Expr::Phi { incoming } = &mut ir.exprs[e.0 as usize] {
            let before = incoming.len();
            incoming.retain(|(_, pred)| live.is_some_and(|p| p.contains(pred)));
            changed |= incoming.len() != before;
        }
    }
    changed
}

/// Drop blocks not reachable from the entry block.
pub fn remove_unreachable(ir: &mut FunctionIR) {
    let Some(&entry) = ir.blocks.keys().next() else {
        return;
    };
    let mut seen = BTreeSet::new();
    let mut stack = vec![entry];
    while let Some(l) = stack.pop() {
        if !seen.insert(l) {
            continue;
        }
        if let Some(t) = ir.blocks.get(&l).and_then(|b| b.terminator()) {
            stack.extend(t.successors());
        }
    }
    ir.blocks.retain(|l, _| seen.contains(l));
    ir.block_locs.retain(|l, _| seen.contains(l));
}

/// Replace every `x = phi(...)` by copies `x = v` at the end of each predecessor (before
/// its terminator), as Numba does before lowering. Undefined incoming values are skipped.
pub fn strip_phis(ir: &mut FunctionIR) -> bool {
    let mut copies: Vec<(Label, VarId, VarId)> = Vec::new();
    let mut changed = false;
    for block in ir.blocks.values_mut() {
        block.body.retain(|inst| {
            if let Stmt::Assign { target, value } = &inst.stmt {
                if let Expr::Phi { incoming } = &ir.exprs[value.0 as usize] {
                    for (v, pred) in incoming {
                        if let Some(v) = v {
                            copies.push((*pred, *target, *v));
                        }
                    }
                    changed = true;
                    return false;
                }
            }
            true
        });
    }
    for (pred, target, src) in copies {
        let e = ir.add_expr(Expr::Var(src));
        if let Some(block) = ir.blocks.get_mut(&pred) {
            let loc = block.body.last().map(|i| i.loc).unwrap_or_default();
            let at = block.body.len().saturating_sub(1);
            block.body.insert(
                at,
                Inst {
                    stmt: Stmt::Assign { target, value: e },
                    loc,
                },
            );
        }
    }
    changed
}
