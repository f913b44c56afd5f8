//! Temporary arrays that fusion left inside one parfor (Numba's `remove_dead_parfor`
//! with its get/setitem forwarding).
//!
//! After `d = a * b; s = np.sum(d * d)` fuse, `d` and the temporary `d * d` are written
//! and read back at the same position of one loop and used nowhere else. Each such array
//! is not stored at all: its reads take the value the body just computed, and its
//! allocation becomes `parfor_shape` (the same shape, and the same broadcasting error,
//! without memory), which the loop still reads its length and positions from.

use std::collections::{HashMap, HashSet};

use numba_ir::{Expr, FunctionIR, Stmt, VarId};

use crate::node::{Parfor, PARFOR};
use crate::numpy::{ARRAYEXPR_AT, GETFLAT, PARFOR_ALLOC, PARFOR_SHAPE, SETFLAT};

/// How the code outside parfor bodies uses a variable.
#[derive(Default)]
struct Outside {
    allocs: usize,
    /// Parfors whose parameters include it.
    parfors: HashSet<usize>,
    /// Any use that is not the allocation, a `.size`, another allocation's shape, or a
    /// parfor parameter.
    other: bool,
}

/// `keep`: variables read outside `ir`'s blocks (a loop body's, by the code around the
/// loop), which stay stored.
/// The variables the statements of `ir`'s blocks read.
pub(crate) fn read_vars(ir: &FunctionIR) -> HashSet<VarId> {
    let mut read: HashSet<VarId> = HashSet::new();
    for b in ir.blocks.values() {
        for inst in &b.body {
            match &inst.stmt {
                Stmt::Assign { value, .. } => read.extend(ir.expr_uses(ir.expr(*value))),
                s => read.extend(ir.stmt_vars(s)),
            }
        }
    }
    read
}

pub(crate) fn remove_dead_arrays(ir: &mut FunctionIR, keep: &HashSet<VarId>) {
    // Variables something reads: a method looked up for a call that conversion replaced
    // (`$m = getattr(d, mean)`, never called now) does not keep `d` alive.
    let read = read_vars(ir);
    let mut out: HashMap<VarId, Outside> = HashMap::new();
    for &v in keep {
        out.entry(v).or_default().other = true;
    }
    for b in ir.blocks.values() {
        for inst in &b.body {
            if let Stmt::Assign { target, value } = &inst.stmt {
                if !read.contains(target) && matches!(ir.expr(*value), Expr::GetAttr { .. }) {
                    continue;
                }
            }
            match &inst.stmt {
                Stmt::Assign { target, value } => match ir.expr(*value) {
                    Expr::Extension(n) if n.kind == PARFOR_ALLOC || n.kind == PARFOR_SHAPE => {
                        if n.kind == PARFOR_ALLOC {
                            out.entry(*target).or_default().allocs += 1;
                        } else {
                            out.entry(*target).or_default().other = true;
                        }
                    }
                    Expr::GetAttr { attr, .. } if attr == "size" => {}
                    e => {
                        for u in ir.expr_uses(e) {
                            out.entry(u).or_default().other = true;
                        }
                        out.entry(*target).or_default().other = true;
                    }
                },
                Stmt::Extension(n) if n.kind == PARFOR => {
                    if let Some(pf) = Parfor::from_node(n) {
                        for &p in &pf.params {
                            out.entry(p).or_default().parfors.insert(pf.id);
                        }
                        for r in &pf.reductions {
                            out.entry(r.var).or_default().other = true;
                        }
                    }
                }
                s => {
                    for u in ir.stmt_vars(s) {
                        out.entry(u).or_default().other = true;
                    }
                }
            }
        }
    }
    let candidates: HashMap<VarId, usize> = out
        .into_iter()
        .filter(|(_, o)| o.allocs == 1 && !o.other && o.parfors.len() == 1)
        .map(|(v, o)| (v, *o.parfors.iter().next().expect("one parfor")))
        .collect();
    if candidates.is_empty() {
        return;
    }
    let labels: Vec<_> = ir.blocks.keys().copied().collect();
    let mut removed: HashSet<VarId> = HashSet::new();
    for l in &labels {
        let n = ir.blocks[l].body.len();
        for k in 0..n {
            let pf = match &ir.blocks[l].body[k].stmt {
                Stmt::Extension(node) if node.kind == PARFOR => Parfor::from_node(node),
                _ => None,
            };
            let Some(mut pf) = pf else { continue };
            let mine: Vec<VarId> = candidates
                .iter()
                .filter(|(_, &id)| id == pf.id)
                .map(|(&v, _)| v)
                .collect();
            let mut changed = false;
            for x in mine {
                if forward(ir, &mut pf, x) {
                    removed.insert(x);
                    changed = true;
                }
            }
            if changed {
                ir.blocks.get_mut(l).expect("block").body[k].stmt =
                    Stmt::Extension(Box::new(pf.to_node()));
            }
        }
    }
    // The allocations of removed arrays keep only their shape.
    for l in &labels {
        for k in 0..ir.blocks[l].body.len() {
            let Stmt::Assign { target, value } = ir.blocks[l].body[k].stmt else {
                continue;
            };
            if !removed.contains(&target) {
                continue;
            }
            if let Expr::Extension(node) = &mut ir.exprs[value.0 as usize] {
                if node.kind == PARFOR_ALLOC {
                    node.kind = PARFOR_SHAPE.into();
                }
            }
        }
    }
}

/// In `pf`'s (single-block) body, drop the store to `x` and make every later read of it
/// the stored value; false (nothing changed) when `x` is used in any other way.
fn forward(ir: &mut FunctionIR, pf: &mut Parfor, x: VarId) -> bool {
    if pf.loop_body.len() != 1 {
        return false;
    }
    let Some(block) = pf.loop_body.values_mut().next() else {
        return false;
    };
    // Check first: one store, before every data read; reads only by getflat or as an
    // arrayexpr leaf; shape reads by arrayexpr_at's result operand.
    let mut stored: Option<(usize, VarId)> = None;
    for (k, inst) in block.body.iter().enumerate() {
        let ok = match &inst.stmt {
            Stmt::Extension(n) if n.kind == SETFLAT => {
                if n.operands[0] == x {
                    if stored.is_some() || n.operands[1..].contains(&x) {
                        return false;
                    }
                    stored = Some((k, n.operands[2]));
                    true
                } else {
                    !n.operands.contains(&x)
                }
            }
            Stmt::Assign { value, .. } => match ir.expr(*value) {
                Expr::Extension(n) if n.kind == GETFLAT && n.operands[0] == x => stored.is_some(),
                Expr::Extension(n) if n.kind == ARRAYEXPR_AT => {
                    n.operands[1] != x && (!n.operands[2..].contains(&x) || stored.is_some())
                }
                e => !ir.expr_uses(e).contains(&x),
            },
            s => !ir.stmt_vars(s).contains(&x),
        };
        if !ok {
            return false;
        }
    }
    let Some((at, value)) = stored else {
        return false;
    };
    block.body.remove(at);
    let subst = |v: &mut VarId| {
        if *v == x {
            *v = value;
        }
    };
    for inst in &block.body {
        let Stmt::Assign { value: e, .. } = inst.stmt else {
            continue;
        };
        let mut nested = Vec::new();
        match &mut ir.exprs[e.0 as usize] {
            expr @ Expr::Extension(_) if is_getflat_of(expr, x) => {
                *expr = Expr::Var(value);
            }
            Expr::Extension(n) if n.kind == ARRAYEXPR_AT && n.operands[2..].contains(&x) => {
                n.operands[2..].iter_mut().for_each(subst);
                // The fused statements read the leaf by name: they read the value now.
                for b in n.blocks.values_mut() {
                    for i in &mut b.body {
                        match i.stmt {
                            Stmt::Assign { value, .. } => nested.push(value),
                            ref mut s => s.for_each_use_mut(subst),
                        }
                    }
                }
            }
            _ => {}
        }
        for id in nested {
            ir.exprs[id.0 as usize].for_each_use_mut(subst);
        }
    }
    true
}

fn is_getflat_of(e: &Expr, x: VarId) -> bool {
    matches!(e, Expr::Extension(n) if n.kind == GETFLAT && n.operands[0] == x)
}
