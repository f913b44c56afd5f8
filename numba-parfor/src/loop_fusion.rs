//! Fusion of two `prange` parfors (Numba's `try_fuse` with `has_cross_iter_dep`).
//!
//! Two user loops over the same iteration space fuse when neither has a cross-iteration
//! dependence: every array either parfor reads or writes is accessed, in both bodies,
//! only at positions built from the loop index the same way (`a[i]` everywhere, or
//! `a[i, j]` everywhere with `j` not computed from `i`), never at an index computed from
//! the loop index (`a[i + 1]`), and never both with and without the loop index
//! (`a[i] = ...` then `... a[5]`). An array used any other way (passed to a function,
//! an array expression over it) blocks fusion. The second loop must not read the
//! first's reductions or other results. As in Numba, arrays are told apart by variable:
//! two views of one buffer passed as different arguments are not detected.
//!
//! The fused body runs the first body, then the second with its index equal to the
//! first's: every way the first body ends an iteration goes on to the second body.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use numba_ir::{Block, Expr, FunctionIR, Inst, Label, Stmt, VarId};
use numba_typeinfer::TypingResult;

use crate::node::{Bound, Parfor};
use crate::numpy::{ARRAYEXPR_AT, GETFLAT, SETFLAT};
use crate::shapes::Shapes;
use numba_typeinfer::types::Type;

/// What the accesses seen so far established (Numba's `index_positions`,
/// `indexed_arrays`, `non_indexed_arrays`).
#[derive(Default)]
struct Accesses {
    /// Per index rank, which positions hold the loop index.
    positions: HashMap<usize, Vec<bool>>,
    indexed: BTreeSet<VarId>,
    plain: BTreeSet<VarId>,
}

impl Accesses {
    /// Record an access to `arr` at a position; false when it shows a dependence.
    fn add(&mut self, arr: VarId, pos: Vec<bool>) -> bool {
        if !pos.contains(&true) {
            if self.indexed.contains(&arr) {
                return false;
            }
            self.plain.insert(arr);
            return true;
        }
        if self.plain.contains(&arr) {
            return false;
        }
        self.indexed.insert(arr);
        match self.positions.get(&pos.len()) {
            Some(seen) => *seen == pos,
            None => {
                self.positions.insert(pos.len(), pos);
                true
            }
        }
    }
}

/// The loop index and its copies, and the variables computed from them.
pub(crate) fn index_vars(ir: &FunctionIR, pf: &Parfor) -> (BTreeSet<VarId>, BTreeSet<VarId>) {
    let mut index: BTreeSet<VarId> = pf.loop_nests.iter().map(|n| n.index).collect();
    index.insert(pf.index_var);
    let mut derived: BTreeSet<VarId> = BTreeSet::new();
    loop {
        let mut changed = false;
        for inst in pf.loop_body.values().flat_map(|b| &b.body) {
            let Stmt::Assign { target, value } = inst.stmt else {
                continue;
            };
            if index.contains(&target) || derived.contains(&target) {
                continue;
            }
            let e = ir.expr(value);
            if let Expr::Var(src) = e {
                if index.contains(src) {
                    changed |= index.insert(target);
                    continue;
                }
            }
            if ir
                .expr_uses(e)
                .iter()
                .any(|u| index.contains(u) || derived.contains(u))
            {
                changed |= derived.insert(target);
            }
        }
        if !changed {
            return (index, derived);
        }
    }
}

/// Scan one body's array accesses into `acc`; false when it has a cross-iteration
/// dependence (or uses an array in a way the analysis cannot follow).
fn scan(
    ir: &FunctionIR,
    typing: &TypingResult,
    shapes: &mut Shapes,
    pf: &Parfor,
    acc: &mut Accesses,
) -> bool {
    let (index, derived) = index_vars(ir, pf);
    let is_array = |v: VarId| typing.type_of(v).unliteral().is_array();
    // Copies of arrays inside the body name the array they copy.
    let mut alias: HashMap<VarId, VarId> = HashMap::new();
    for inst in pf.loop_body.values().flat_map(|b| &b.body) {
        if let Stmt::Assign { target, value } = inst.stmt {
            if let Expr::Var(src) = ir.expr(value) {
                if is_array(*src) {
                    alias.insert(target, alias.get(src).copied().unwrap_or(*src));
                }
            }
        }
    }
    let canon = |v: VarId| alias.get(&v).copied().unwrap_or(v);
    let defs: HashMap<VarId, numba_ir::ExprId> = pf
        .loop_body
        .values()
        .flat_map(|b| &b.body)
        .filter_map(|i| match i.stmt {
            Stmt::Assign { target, value } => Some((target, value)),
            _ => None,
        })
        .collect();
    // The position an index variable gives: None for one computed from the loop index.
    let position = |idx: VarId| -> Option<Vec<bool>> {
        let one = |v: VarId| -> Option<bool> {
            if index.contains(&v) {
                Some(true)
            } else if derived.contains(&v) {
                None
            } else {
                Some(false)
            }
        };
        if index.contains(&idx) {
            return Some(vec![true]);
        }
        if let Some(&e) = defs.get(&idx) {
            if let Expr::BuildTuple { items } = ir.expr(e) {
                return items.iter().map(|&v| one(v)).collect();
            }
        }
        one(idx).map(|p| vec![p])
    };
    // A NumPy parfor's element nodes address flat positions: for a 1-d array that is the
    // element at the loop index.
    let rank1 = |v: VarId| {
        matches!(
            typing.type_of(v).unliteral().get(),
            Type::Array { ndim: 1, .. }
        )
    };
    for inst in pf.loop_body.values().flat_map(|b| &b.body) {
        let flat = match &inst.stmt {
            Stmt::Extension(n) if n.kind == SETFLAT => Some(n.operands.clone()),
            Stmt::Assign { value, .. } => match ir.expr(*value) {
                Expr::Extension(n) if n.kind == GETFLAT => Some(n.operands.clone()),
                _ => None,
            },
            _ => None,
        };
        if let Some(ops) = flat {
            let (arr, idx) = (ops[0], ops[1]);
            if !rank1(arr) || !index.contains(&idx) || !acc.add(canon(arr), vec![true]) {
                return false;
            }
            if ops.iter().skip(2).any(|&v| is_array(v)) {
                return false;
            }
            continue;
        }
        if let Stmt::Assign { value, .. } = &inst.stmt {
            if let Expr::Extension(n) = ir.expr(*value) {
                if n.kind == ARRAYEXPR_AT {
                    // Leaves of the result's shape are read at the loop index; a
                    // broadcast leaf elsewhere, which this analysis does not follow.
                    let (out, idx) = (n.operands[0], n.operands[1]);
                    if !index.contains(&idx) || !rank1(out) {
                        return false;
                    }
                    for &leaf in &n.operands[2..] {
                        if !is_array(leaf) {
                            continue;
                        }
                        let at_index = rank1(leaf) && shapes.same_shape(leaf, out);
                        if !at_index || !acc.add(canon(leaf), vec![true]) {
                            return false;
                        }
                    }
                    continue;
                }
            }
        }
        let (arr, pos, others): (Option<VarId>, Option<Vec<bool>>, Vec<VarId>) = match &inst.stmt {
            Stmt::Assign { value, .. } => match ir.expr(*value) {
                Expr::GetItem { value: a, index: i } if is_array(*a) => {
                    (Some(*a), position(*i), vec![*i])
                }
                Expr::StaticGetItem { value: a, .. } if is_array(*a) => {
                    (Some(*a), Some(vec![false]), vec![])
                }
                Expr::TypedGetItem {
                    value: a, index: i, ..
                } if is_array(*a) => (Some(*a), position(*i), vec![*i]),
                // A copy (followed above) or a metadata attribute (`a.shape`) reads no
                // element; a method (`a.sum`) or a view (`a.T`) is a use of the whole
                // array, which blocks fusion.
                Expr::Var(_) => (None, None, vec![]),
                Expr::GetAttr { value: a, attr }
                    if !is_array(*a)
                        || matches!(
                            attr.as_str(),
                            "shape" | "size" | "ndim" | "dtype" | "strides"
                        ) =>
                {
                    (None, None, vec![])
                }
                e => (None, None, ir.expr_uses(e)),
            },
            Stmt::SetItem {
                target,
                index: i,
                value,
            } if is_array(*target) => (Some(*target), position(*i), vec![*i, *value]),
            Stmt::StaticSetItem { target, value, .. } if is_array(*target) => {
                (Some(*target), Some(vec![false]), vec![*value])
            }
            s => (None, None, ir.stmt_vars(s)),
        };
        if others.iter().any(|&v| is_array(v)) {
            return false;
        }
        if let Some(a) = arr {
            let Some(pos) = pos else {
                return false;
            };
            if !acc.add(canon(a), pos) {
                return false;
            }
        }
    }
    true
}

/// The fused parfor of two parfors (one of them a `prange` loop), or why they may not
/// fuse (Numba's fusion report line).
pub(crate) fn try_fuse_loops(
    ir: &mut FunctionIR,
    typing: &TypingResult,
    shapes: &mut Shapes,
    p1: &Parfor,
    p2: &Parfor,
) -> Result<Parfor, String> {
    let ([n1], [n2]) = (p1.loop_nests.as_slice(), p2.loop_nests.as_slice()) else {
        return Err(format!(
            "- fusion failed: number of loops mismatched, {}, {}.",
            p1.loop_nests.len(),
            p2.loop_nests.len()
        ));
    };
    let mut same = |a: Bound, b: Bound| a == b || shapes.same_size(a, b);
    if !(same(n1.start, n2.start) && same(n1.stop, n2.stop) && same(n1.step, n2.step)) {
        return Err(crate::fusion::mismatch_message(ir, shapes, n1, n2));
    }
    let body_dependence = || {
        format!(
            "- fusion failed: parallel loop {} has a dependency on the body of parallel loop {}. ",
            p1.id, p2.id
        )
    };
    // The second must not read what the first computes for after the loop.
    let results = p1.results();
    let p2_reads: BTreeSet<VarId> = p2
        .loop_body
        .values()
        .flat_map(|b| &b.body)
        .flat_map(|i| ir.stmt_vars(&i.stmt))
        .collect();
    if p2_reads.iter().any(|v| results.contains(v)) {
        return Err(body_dependence());
    }
    // Nor anything else the first body defines, other than arrays it indexes.
    let p1_defs: BTreeSet<VarId> = p1
        .loop_body
        .values()
        .flat_map(|b| &b.body)
        .filter_map(|i| match i.stmt {
            Stmt::Assign { target, .. } => Some(target),
            _ => None,
        })
        .collect();
    if p2.params.iter().any(|v| p1_defs.contains(v)) {
        return Err(body_dependence());
    }
    let mut acc = Accesses::default();
    if !scan(ir, typing, shapes, p1, &mut acc) || !scan(ir, typing, shapes, p2, &mut acc) {
        return Err(crate::fusion::cross_dependence_message(p1, p2));
    }
    Ok(join(ir, p1, p2))
}

/// The first body, then the second (relabelled past both) entered with its index set
/// to the first's.
fn join(ir: &mut FunctionIR, p1: &Parfor, p2: &Parfor) -> Parfor {
    let top = p1
        .loop_body
        .keys()
        .chain(p2.loop_body.keys())
        .max()
        .copied()
        .unwrap_or(0)
        + 1;
    let relabel: BTreeMap<Label, Label> = p2
        .loop_body
        .keys()
        .enumerate()
        .map(|(k, &l)| (l, top + 1 + k as Label))
        .collect();
    let bridge = top;
    // A label in neither body: leaving the fused body continues with the next iteration.
    let outside = top + 1 + relabel.len() as Label;
    let loc = p2.loc;
    let retarget = |t: &mut Label, inside: &dyn Fn(Label) -> Option<Label>, out: Label| {
        *t = inside(*t).unwrap_or(out);
    };
    let mut body: BTreeMap<Label, Block> = BTreeMap::new();
    let p1_inside = |l: Label| p1.loop_body.contains_key(&l).then_some(l);
    for (&l, b) in &p1.loop_body {
        let mut b = b.clone();
        redirect(&mut b, &|t| retarget(t, &p1_inside, bridge), bridge, loc);
        body.insert(l, b);
    }
    let p2_inside = |l: Label| relabel.get(&l).copied();
    for (&l, b) in &p2.loop_body {
        let mut b = b.clone();
        redirect(&mut b, &|t| retarget(t, &p2_inside, outside), outside, loc);
        body.insert(relabel[&l], b);
    }
    let n1 = &p1.loop_nests[0];
    let n2 = &p2.loop_nests[0];
    let copy = ir.add_expr(Expr::Var(n1.index));
    let entry2 = relabel[p2.loop_body.keys().next().expect("a body")];
    body.insert(
        bridge,
        Block {
            body: vec![
                Inst {
                    stmt: Stmt::Assign {
                        target: n2.index,
                        value: copy,
                    },
                    loc,
                },
                Inst {
                    stmt: Stmt::Jump { target: entry2 },
                    loc,
                },
            ],
        },
    );
    let mut params = p1.params.clone();
    params.extend(&p2.params);
    params.sort();
    params.dedup();
    let mut races = p1.races.clone();
    races.extend(&p2.races);
    let mut reductions = p1.reductions.clone();
    reductions.extend(p2.reductions.iter().cloned());
    let mut patterns = p1.patterns.clone();
    patterns.extend(p2.patterns.iter().cloned());
    Parfor {
        loop_body: body,
        params,
        races,
        reductions,
        patterns,
        cost: p1.cost + p2.cost,
        ..p1.clone()
    }
}

/// Point a block's exits through `f`; an unterminated block jumps to `fallthrough`.
fn redirect(b: &mut Block, f: &dyn Fn(&mut Label), fallthrough: Label, loc: numba_ir::Loc) {
    match b.body.last_mut().map(|i| &mut i.stmt) {
        Some(Stmt::Jump { target }) => f(target),
        Some(Stmt::Branch {
            truebr, falsebr, ..
        }) => {
            f(truebr);
            f(falsebr);
        }
        _ => {}
    }
    if !b.is_terminated() {
        b.body.push(Inst {
            stmt: Stmt::Jump {
                target: fallthrough,
            },
            loc,
        });
    }
}
