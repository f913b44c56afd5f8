//! Arrays that fusion left inside one parfor (Numba's `remove_dead_parfor` with its
//! get/setitem forwarding).
//!
//! After `d = a * b; s = np.sum(d * d)` fuse, `d` and the temporary `d * d` are written
//! and read back at the same position of one loop and used nowhere else. The same holds
//! for an array the function makes with `np.empty` and fills in a `prange` loop that
//! fused with the NumPy code reading it (`c[i] = f(a[i])`, then `(c + b).sum()`). Each
//! such array is not stored at all: its reads take the value the body just computed, and
//! its allocation keeps only its shape (`parfor_shape`, or `parfor_empty` with attr
//! `shape_only`: the same shape and the same errors, without memory), which the loop
//! still reads its length from.
//!
//! The store must be the array's only one in the body, at the loop index, of a value of
//! the array's dtype assigned once, and it must come before every read on every path
//! (it dominates them in the body's control flow); the reads must be at the loop index
//! too, and the array 1-d (or a NumPy temporary, whose positions are flat).

use std::collections::{BTreeSet, HashMap, HashSet};

use numba_bytecode::cfg::ControlFlowGraph;
use numba_ir::{Expr, ExprId, ExtensionNode, FunctionIR, Label, Stmt, VarId};
use numba_typeinfer::types::Type;
use numba_typeinfer::{ImplKey, TypingResult};

use crate::node::{Parfor, PARFOR};
use crate::numpy::{ARRAYEXPR_AT, GETFLAT, PARFOR_ALLOC, PARFOR_EMPTY, PARFOR_SHAPE, SETFLAT};

/// The attribute of a `parfor_empty` that keeps only the shape.
pub const SHAPE_ONLY: &str = "shape_only";

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

pub(crate) fn remove_dead_arrays(
    ir: &mut FunctionIR,
    typing: &TypingResult,
    keep: &HashSet<VarId>,
) {
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
                    // `np.empty(shape)`: a new array nothing else can alias.
                    Expr::Call { args, .. } if is_empty_call(typing, *value) => {
                        out.entry(*target).or_default().allocs += 1;
                        for u in args {
                            out.entry(*u).or_default().other = true;
                        }
                    }
                    Expr::GetAttr { attr, .. }
                        if matches!(attr.as_str(), "size" | "shape" | "ndim") => {}
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
                if forward(ir, typing, &mut pf, x) {
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
            let e = &mut ir.exprs[value.0 as usize];
            match e {
                Expr::Extension(node) if node.kind == PARFOR_ALLOC => {
                    node.kind = PARFOR_SHAPE.into();
                }
                Expr::Call { args, .. } => {
                    let mut node = ExtensionNode::new(PARFOR_EMPTY, vec![args[0]]);
                    node.attrs.push((SHAPE_ONLY.into(), "1".into()));
                    *e = Expr::Extension(Box::new(node));
                }
                _ => {}
            }
        }
    }
}

/// `np.empty(shape, ...)` (as typed: the call a converted `np.zeros`/`np.ones` makes
/// too) with its shape as the first argument.
fn is_empty_call(typing: &TypingResult, value: ExprId) -> bool {
    typing
        .calltypes
        .get(&value)
        .is_some_and(|s| s.key == ImplKey::Function("numpy.empty".into()) && !s.args.is_empty())
}

/// A position in a body: block and statement.
type At = (Label, usize);

/// The control flow between a body's own blocks, entered at the one block nothing in the
/// body jumps to (`None` without exactly one such block).
fn body_cfg(pf: &Parfor) -> Option<ControlFlowGraph> {
    let edges: Vec<(Label, Label)> = pf
        .loop_body
        .iter()
        .flat_map(|(&l, b)| {
            b.terminator()
                .map(Stmt::successors)
                .unwrap_or_default()
                .into_iter()
                .map(move |t| (l, t))
        })
        .filter(|(_, t)| pf.loop_body.contains_key(t))
        .collect();
    let targets: BTreeSet<Label> = edges.iter().map(|&(_, t)| t).collect();
    let entries: Vec<Label> = pf
        .loop_body
        .keys()
        .copied()
        .filter(|l| !targets.contains(l))
        .collect();
    let [entry] = entries.as_slice() else {
        return None;
    };
    Some(ControlFlowGraph::new(
        *entry,
        pf.loop_body.keys().copied(),
        edges,
    ))
}

/// In `pf`'s body, drop the one store to `x` and make every read of it the stored value;
/// false (nothing changed) when `x` is used in any other way, or a read is not sure to
/// follow the store.
fn forward(ir: &mut FunctionIR, typing: &TypingResult, pf: &mut Parfor, x: VarId) -> bool {
    // One loop index: the positions of a multi-loop nest are pairs.
    if pf.loop_nests.len() != 1 {
        return false;
    }
    let (index, _) = crate::loop_fusion::index_vars(ir, pf);
    let at_index = |v: VarId| index.contains(&v);
    let rank = |v: VarId| match typing.type_of(v).unliteral().get() {
        Type::Array { ndim, .. } => Some(ndim),
        _ => None,
    };
    // A NumPy temporary's positions are flat ones; a user array's must be 1-d for its
    // index to be the flat position.
    let flat_only = rank(x) != Some(1);
    let mut store: Option<(At, VarId)> = None;
    let mut reads: Vec<At> = Vec::new();
    // Where each variable is assigned, and how often.
    let mut assigned: HashMap<VarId, (usize, Label)> = HashMap::new();
    for (&l, block) in &pf.loop_body {
        for (k, inst) in block.body.iter().enumerate() {
            let ok = match &inst.stmt {
                Stmt::Extension(n) if n.kind == SETFLAT => {
                    if n.operands[0] == x {
                        if store.is_some()
                            || n.operands[1..].contains(&x)
                            || !at_index(n.operands[1])
                        {
                            return false;
                        }
                        store = Some(((l, k), n.operands[2]));
                        true
                    } else {
                        !n.operands.contains(&x)
                    }
                }
                Stmt::SetItem {
                    target,
                    index: i,
                    value,
                } if *target == x => {
                    if store.is_some() || flat_only || *value == x || !at_index(*i) {
                        return false;
                    }
                    store = Some(((l, k), *value));
                    true
                }
                Stmt::Assign { target, value } => {
                    assigned.entry(*target).or_insert((0, l)).0 += 1;
                    match ir.expr(*value) {
                        Expr::Extension(n) if n.kind == GETFLAT && n.operands[0] == x => {
                            reads.push((l, k));
                            at_index(n.operands[1])
                        }
                        Expr::GetItem { value: a, index: i } if *a == x => {
                            reads.push((l, k));
                            !flat_only && at_index(*i)
                        }
                        // A leaf (read at the index of a 1-d result of x's shape, as fusion
                        // required), or the result operand (only its shape is read).
                        Expr::Extension(n) if n.kind == ARRAYEXPR_AT => {
                            if n.operands[2..].contains(&x) {
                                reads.push((l, k));
                            }
                            n.operands[1] != x && at_index(n.operands[1])
                                || !n.operands[2..].contains(&x)
                        }
                        e => !ir.expr_uses(e).contains(&x),
                    }
                }
                s => !ir.stmt_vars(s).contains(&x),
            };
            if !ok {
                return false;
            }
        }
    }
    let Some(((sl, sk), value)) = store else {
        return false;
    };
    // The stored value: of x's dtype (a read gives exactly it), assigned at most once in
    // the body, and neither it nor the store in an inner loop (so each runs at most once
    // per iteration, and the value still holds what was stored where x is read).
    let dtype = match typing.type_of(x).unliteral().get() {
        Type::Array { dtype, .. } => dtype,
        _ => return false,
    };
    let Some(cfg) = body_cfg(pf) else {
        return false;
    };
    let in_loop = |l: Label| !cfg.in_loops(l).is_empty();
    let value_def = assigned.get(&value).copied();
    if typing.type_of(value).unliteral() != dtype.unliteral()
        || value_def.is_some_and(|(n, l)| n > 1 || in_loop(l))
        || in_loop(sl)
    {
        return false;
    }
    let before = |(l, k): At| {
        if l == sl {
            sk < k
        } else {
            cfg.doms.get(&l).is_some_and(|d| d.contains(&sl))
        }
    };
    if !reads.iter().all(|&r| before(r)) {
        return false;
    }
    pf.loop_body
        .get_mut(&sl)
        .expect("the store's block")
        .body
        .remove(sk);
    let subst = |v: &mut VarId| {
        if *v == x {
            *v = value;
        }
    };
    for inst in pf.loop_body.values().flat_map(|b| &b.body) {
        let Stmt::Assign { value: e, .. } = inst.stmt else {
            continue;
        };
        let mut nested = Vec::new();
        match &mut ir.exprs[e.0 as usize] {
            expr @ Expr::Extension(_) if is_getflat_of(expr, x) => {
                *expr = Expr::Var(value);
            }
            expr @ Expr::GetItem { .. } if reads_item_of(expr, x) => {
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

fn reads_item_of(e: &Expr, x: VarId) -> bool {
    matches!(e, Expr::GetItem { value, .. } if *value == x)
}

fn is_getflat_of(e: &Expr, x: VarId) -> bool {
    matches!(e, Expr::Extension(n) if n.kind == GETFLAT && n.operands[0] == x)
}
