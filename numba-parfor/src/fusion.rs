//! Parfor fusion (Numba's `ParforPass.fuse_parfors` / `try_fuse`), over the shape
//! classes of [`crate::shapes`]: sizes are compared there, and an equality that rests on
//! an array expression's assertion makes that assertion strict once fusion uses it.
//!
//! **Fusion.** Two NumPy parfors of one block fuse when their sizes are in one class; the
//! statements between them are set-up statements, constants and copies (moved before the
//! first), or scalar computations, a mean's or min/max's final step and other NumPy
//! parfors independent of the second (left after it); the second does not read a result
//! of the first (reduction, mean); and each reads the arrays the other writes only at
//! the loop's own position (its result's class), so a whole-array store (`a[:] = 7`)
//! fuses with the loop that filled `a`. A `prange` parfor is a barrier:
//! its writes are not tracked, so nothing moves across it. The fused body runs the first
//! body, then the second with its index equal to the first's.

use std::collections::{BTreeMap, BTreeSet};

use numba_ir::{Block, Expr, FunctionIR, Inst, Stmt, VarId};
use numba_typeinfer::types::Type;
use numba_typeinfer::TypingResult;

use crate::node::{Bound, Parfor, PARFOR};
use crate::numpy::{Generated, ARRAYEXPR_AT, GETFLAT, SETFLAT};
use crate::shapes::Shapes;
use crate::ParforReport;

/// A statement that reads no array data and has no effect: a constant, a global, a
/// copy, a function or module attribute. Fusion may run it earlier.
fn pure(ir: &FunctionIR, typing: &TypingResult, value: numba_ir::ExprId) -> bool {
    match ir.expr(value) {
        Expr::Const(_) | Expr::Global { .. } | Expr::FreeVar { .. } | Expr::Var(_) => true,
        // An index tuple of numbers and slices.
        Expr::BuildTuple { items } => items.iter().all(|&v| {
            let t = typing.type_of(v).unliteral();
            t.is_scalar() || matches!(t.get(), Type::Slice(_))
        }),
        // `slice(start, stop)` of numbers: an index built for a store fusion moved.
        Expr::Call { args, kws, .. } => {
            kws.is_empty()
                && typing
                    .calltypes
                    .get(&value)
                    .is_some_and(|s| matches!(s.ret.get(), Type::Slice(_)))
                && args.iter().all(|&a| {
                    let t = typing.type_of(a).unliteral();
                    t.is_integer() || t == numba_typeinfer::types::NONE
                })
        }
        Expr::GetAttr { .. } => typing.calltypes.get(&value).is_some_and(|s| {
            matches!(
                s.ret.get(),
                Type::Module(_) | Type::Function(_) | Type::BoundFunction { .. }
            )
        }),
        _ => false,
    }
}

/// A statement computing a number from numbers (and functions): it touches no array, so
/// a parfor may run before it (unless the parfor reads its result).
fn scalar_only(
    ir: &FunctionIR,
    typing: &TypingResult,
    target: VarId,
    value: numba_ir::ExprId,
) -> bool {
    let number = |v: VarId| {
        let t = typing.type_of(v).unliteral();
        t.is_scalar()
    };
    number(target)
        && ir.expr_uses(ir.expr(value)).iter().all(|&u| {
            number(u) || matches!(typing.type_of(u).get(), Type::Function(_) | Type::Module(_))
        })
}

fn parfor_of(inst: &Inst) -> Option<Parfor> {
    match &inst.stmt {
        Stmt::Extension(node) if node.kind == PARFOR => Parfor::from_node(node),
        _ => None,
    }
}

fn body_stmts(pf: &Parfor) -> impl Iterator<Item = &Inst> {
    pf.loop_body.values().flat_map(|b| &b.body)
}

/// Arrays a NumPy parfor's body writes.
fn written(pf: &Parfor) -> BTreeSet<VarId> {
    body_stmts(pf)
        .filter_map(|i| match &i.stmt {
            Stmt::Extension(n) if n.kind == SETFLAT => n.operands.first().copied(),
            _ => None,
        })
        .collect()
}

/// Whether `second` reads every array in `arrays` only at its own loop position.
fn reads_in_place(
    ir: &FunctionIR,
    shapes: &mut Shapes,
    second: &Parfor,
    arrays: &BTreeSet<VarId>,
) -> bool {
    for inst in body_stmts(second) {
        let ok = match &inst.stmt {
            Stmt::Assign { value, .. } => match ir.expr(*value) {
                Expr::Extension(n) if n.kind == GETFLAT => true,
                Expr::Extension(n) if n.kind == ARRAYEXPR_AT => {
                    let out = n.operands[0];
                    n.operands[2..]
                        .iter()
                        .filter(|v| arrays.contains(v))
                        .all(|&v| shapes.same_shape(v, out))
                }
                e => ir.expr_uses(e).iter().all(|v| !arrays.contains(v)),
            },
            Stmt::Extension(n) if n.kind == SETFLAT => !arrays.contains(&n.operands[2]),
            s => ir.stmt_vars(s).iter().all(|v| !arrays.contains(v)),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Fuse the NumPy parfors of every block: each with the earliest parfor it can join,
/// moving it over the statements and independent parfors between them (Numba reorders
/// to the same end before fusing).
pub(crate) fn fuse(
    ir: &mut FunctionIR,
    typing: &TypingResult,
    gen: &Generated,
    report: &mut ParforReport,
) {
    let mut shapes = Shapes::analyze(ir, typing, gen);
    let labels: Vec<_> = ir.blocks.keys().copied().collect();
    for l in labels {
        let body = std::mem::take(&mut ir.blocks.get_mut(&l).expect("block").body);
        let mut out: Vec<Inst> = Vec::with_capacity(body.len());
        for inst in body {
            let Some(p2) = parfor_of(&inst) else {
                out.push(inst);
                continue;
            };
            let mut merged = false;
            // Candidates from the nearest back; stop at the first obstacle.
            let mut k = out.len();
            while k > 0 {
                k -= 1;
                let Some(p1) = parfor_of(&out[k]) else {
                    continue;
                };
                shapes.begin();
                let attempt = if user_loop(&p1) || user_loop(&p2) {
                    fuse_loops(ir, typing, &mut shapes, gen, &p1, &p2, &out[k + 1..])
                } else {
                    try_fuse(ir, typing, &mut shapes, gen, &p1, &p2, &out[k + 1..])
                };
                match attempt {
                    Attempt::Fused(fused, ups, stay) => {
                        shapes.commit(ir);
                        report.fused.push((p2.id, p1.id));
                        report.fusion_reports.push((
                            p1.id,
                            p2.id,
                            format!(
                                "- fusion succeeded: parallel for-loop #{} is fused into for-loop #{}.",
                                p2.id, p1.id
                            ),
                        ));
                        let loc = out[k].loc;
                        out.truncate(k);
                        out.extend(ups);
                        out.push(Inst {
                            stmt: Stmt::Extension(Box::new(fused.to_node())),
                            loc,
                        });
                        out.extend(stay);
                        merged = true;
                        break;
                    }
                    Attempt::Skip(why) => {
                        if let Some(m) = why {
                            report.fusion_reports.push((p1.id, p2.id, m));
                        }
                        continue;
                    }
                    Attempt::Blocked(why) => {
                        if let Some(m) = why {
                            report.fusion_reports.push((p1.id, p2.id, m));
                        }
                        break;
                    }
                }
            }
            if !merged {
                out.push(inst);
            }
        }
        ir.blocks.get_mut(&l).expect("block").body = out;
    }
}

/// `len(a)`, `a.shape`, `a.size`, `a.ndim` of an array, or an item of a shape tuple:
/// what no element store changes. (The shape tuples are the analysis's: while fusion
/// runs, the block being rewritten is out of `ir.blocks`.)
fn shape_query(
    ir: &FunctionIR,
    typing: &TypingResult,
    shapes: &Shapes,
    value: numba_ir::ExprId,
) -> bool {
    let array = |v: &VarId| typing.type_of(*v).unliteral().is_array();
    match ir.expr(value) {
        Expr::GetAttr { value: a, attr } => {
            array(a) && matches!(attr.as_str(), "shape" | "size" | "ndim")
        }
        Expr::StaticGetItem { value: t, .. } => shapes.is_shape_tuple(*t),
        Expr::Call {
            func, args, kws, ..
        } => {
            args.len() == 1
                && kws.is_empty()
                && array(&args[0])
                && matches!(typing.type_of(*func).get(), Type::Function(k) if k == "len")
        }
        _ => false,
    }
}

/// A parfor holding a user `prange` loop (alone or fused with others): its body is user
/// code, whose accesses only [`crate::loop_fusion`] follows.
fn user_loop(pf: &Parfor) -> bool {
    pf.patterns
        .iter()
        .any(|p| p.starts_with("('prange', 'user'"))
}

/// A `prange` parfor and another (a `prange` loop or a 1-d NumPy parfor) with only
/// set-up, scalar and shape statements between them (moved before the first) and scalar
/// statements reading the first's results (a reduction's final step, left after the
/// fused loop), fused by [`crate::loop_fusion`].
fn fuse_loops(
    ir: &mut FunctionIR,
    typing: &TypingResult,
    shapes: &mut Shapes,
    gen: &Generated,
    p1: &Parfor,
    p2: &Parfor,
    between: &[Inst],
) -> Attempt {
    // Random draws keep their order (see `try_fuse`).
    if gen.random.contains(&p1.id) || gen.random.contains(&p2.id) {
        return Attempt::Blocked(None);
    }
    let mut results = p1.results();
    let mut ups = Vec::new();
    let mut stay = Vec::new();
    // What the statements left after the loop define (the second loop must not read it).
    let mut stayed: BTreeSet<VarId> = BTreeSet::new();
    // What the statements a moved statement passes over read (it must not redefine it).
    let mut read_before: BTreeSet<VarId> = p1.params.iter().copied().collect();
    for inst in between {
        // A masked `reduce`'s mask check reads shapes only (see `crate::prange`).
        if matches!(&inst.stmt, Stmt::Extension(n) if n.kind == crate::numpy::MASKCHECK) {
            ups.push(inst.clone());
            continue;
        }
        let Stmt::Assign { target, value } = inst.stmt else {
            return Attempt::Blocked(None);
        };
        let uses = ir.expr_uses(ir.expr(value));
        let movable = pure(ir, typing, value)
            || gen.inits.contains(&value)
            || scalar_only(ir, typing, target, value)
            || shape_query(ir, typing, shapes, value);
        if movable && !uses.iter().any(|u| results.contains(u)) && !read_before.contains(&target) {
            ups.push(inst.clone());
        } else if gen.posts.contains(&value) || scalar_only(ir, typing, target, value) {
            // A NumPy reduction's final step (`parfor_nonempty`) stays after the loop.
            results.insert(target);
            stayed.insert(target);
            read_before.extend(ir.stmt_vars(&inst.stmt));
            stay.push(inst.clone());
        } else {
            return Attempt::Blocked(None);
        }
    }
    if p2.params.iter().any(|v| stayed.contains(v)) {
        return Attempt::Blocked(None);
    }
    // A loop with a float reduction runs at the pace of its serial chain of additions (no
    // vectorising a strictly ordered sum); fused into it, a loop without one that calls
    // a math function, which vectorises, would run at that pace too. Two such user loops
    // stay apart: `bench/parallel.py`'s `twoloops` (a sqrt map, then a dot product)
    // measured 12.5 ms fused against 9 ms apart on 2 threads, and Numba leaves that pair
    // apart too. Cheap element work still fuses (saving a pass over memory), and so do a
    // loop and a NumPy reduction after it, as in Numba.
    let float_reduction = |p: &Parfor| {
        p.reductions.iter().any(|r| {
            let t = typing.type_of(r.var).unliteral();
            t.is_float() || t.is_complex()
        })
    };
    let calls = |p: &Parfor| {
        body_stmts(p).any(|i| {
            matches!(i.stmt, Stmt::Assign { value, .. } if matches!(ir.expr(value), Expr::Call { .. }))
        })
    };
    let (r1, r2) = (float_reduction(p1), float_reduction(p2));
    let heavy_map = (r2 && !r1 && calls(p1)) || (r1 && !r2 && calls(p2));
    if user_loop(p1) && user_loop(p2) && heavy_map {
        return Attempt::Blocked(None);
    }
    match crate::loop_fusion::try_fuse_loops(ir, typing, shapes, p1, p2) {
        Ok(fused) => Attempt::Fused(Box::new(fused), ups, stay),
        Err(why) => Attempt::Blocked(Some(why)),
    }
}

enum Attempt {
    /// The fused parfor, the statements moved before it, those left after it.
    Fused(Box<Parfor>, Vec<Inst>, Vec<Inst>),
    /// Not with this parfor, but the second may move above it (why, in Numba's words,
    /// when it is a fusion failure Numba reports).
    Skip(Option<String>),
    /// The second cannot move above this parfor.
    Blocked(Option<String>),
}

/// Numba's report lines for a failed fusion.
pub(crate) fn mismatch_message(
    ir: &FunctionIR,
    shapes: &Shapes,
    a: &crate::node::LoopNest,
    b: &crate::node::LoopNest,
) -> String {
    // A temporary is named by a user variable known equal to it (Numba's
    // `var_rename_map`): `$parfor_size` of `np.ones(n)`'s loop is `n`.
    let user = |v: VarId| {
        let n = ir.var_name(v);
        (!n.starts_with('$')).then(|| numba_ir::utils::unversioned(n).to_string())
    };
    let name = |x: Bound| match x {
        Bound::Const(c) => c.to_string(),
        Bound::Var(v) => user(v)
            .or_else(|| {
                shapes
                    .size_names(ir, v)
                    .into_iter()
                    .map(|n| numba_ir::utils::unversioned(n).to_string())
                    .min()
            })
            .unwrap_or_else(|| ir.var_name(v).to_string()),
    };
    format!(
        "- fusion failed: loop dimension mismatched in axis 0. slice({}, {}, {}) != slice({}, {}, {})",
        name(a.start),
        name(a.stop),
        name(a.step),
        name(b.start),
        name(b.stop),
        name(b.step)
    )
}

pub(crate) fn cross_dependence_message(p1: &Parfor, p2: &Parfor) -> String {
    format!(
        "- fusion failed: cross iteration dependency found between loops #{} and #{}",
        p1.id, p2.id
    )
}

/// The variables a parfor defines for the code after it, and the arrays it writes.
fn effects(pf: &Parfor) -> (BTreeSet<VarId>, BTreeSet<VarId>) {
    (pf.results(), written(pf))
}

fn try_fuse(
    ir: &mut FunctionIR,
    typing: &TypingResult,
    shapes: &mut Shapes,
    gen: &Generated,
    p1: &Parfor,
    p2: &Parfor,
    between: &[Inst],
) -> Attempt {
    // A random draw stays where it is: fusing it with, or moving it above, another
    // would change which draw lands in which array.
    if gen.random.contains(&p2.id) {
        return Attempt::Blocked(None);
    }
    let (mut results, w1) = effects(p1);
    let (r2, w2) = effects(p2);
    // The second may move above the first at all only if they are independent.
    let independent = !p2
        .params
        .iter()
        .any(|v| results.contains(v) || w1.contains(v))
        && !p1.params.iter().any(|v| r2.contains(v) || w2.contains(v));
    let mut ups = Vec::new();
    let mut stay = Vec::new();
    // What the statements a moved statement passes over read (it must not redefine it).
    let mut read_before: BTreeSet<VarId> = p1.params.iter().copied().collect();
    for inst in between {
        let reads = ir.stmt_vars(&inst.stmt);
        if let Some(mid) = parfor_of(inst) {
            // A `prange` body may write any array it can reach (its writes are not
            // tracked): nothing moves across it.
            if !gen.elementwise.contains(&mid.id) {
                return Attempt::Blocked(None);
            }
            read_before.extend(mid.params.iter().copied());
            let (r, w) = effects(&mid);
            if p2.params.iter().any(|v| r.contains(v) || w.contains(v))
                || mid.params.iter().any(|v| r2.contains(v) || w2.contains(v))
            {
                return Attempt::Blocked(None);
            }
            results.extend(r);
            stay.push(inst.clone());
            continue;
        }
        let Stmt::Assign { target, value } = inst.stmt else {
            return Attempt::Blocked(None);
        };
        let uses = ir.expr_uses(ir.expr(value));
        // A scalar computed from what is known before the first parfor moves up too
        // (a store's value: `a = np.ones(n); a[:] = v * 2`).
        let early_scalar =
            scalar_only(ir, typing, target, value) && !uses.iter().any(|u| results.contains(u));
        if gen.inits.contains(&value) || pure(ir, typing, value) || early_scalar {
            if uses.iter().any(|u| results.contains(u)) || read_before.contains(&target) {
                return Attempt::Blocked(None);
            }
            ups.push(inst.clone());
        } else if gen.posts.contains(&value) || scalar_only(ir, typing, target, value) {
            results.insert(target);
            read_before.extend(reads);
            stay.push(inst.clone());
        } else {
            return Attempt::Blocked(None);
        }
    }
    if p2.params.iter().any(|v| results.contains(v)) {
        return Attempt::Blocked(None);
    }
    if !gen.elementwise.contains(&p1.id) || !gen.elementwise.contains(&p2.id) {
        return Attempt::Blocked(None);
    }
    let ([n1], [n2]) = (p1.loop_nests.as_slice(), p2.loop_nests.as_slice()) else {
        return Attempt::Blocked(None);
    };
    let same_space =
        n1.start == n2.start && n1.step == n2.step && shapes.same_size(n1.stop, n2.stop);
    // Each reads what the other writes only at its own position (the fused body keeps
    // the order at each position: the first's statements, then the second's).
    if !same_space || !reads_in_place(ir, shapes, p1, &w2) || !reads_in_place(ir, shapes, p2, &w1) {
        let why = Some(if same_space {
            cross_dependence_message(p1, p2)
        } else {
            mismatch_message(ir, shapes, n1, n2)
        });
        return if independent {
            Attempt::Skip(why)
        } else {
            Attempt::Blocked(why)
        };
    }
    let mut body: Vec<Inst> = body_stmts(p1).cloned().collect();
    let copy = ir.add_expr(Expr::Var(n1.index));
    body.push(Inst {
        stmt: Stmt::Assign {
            target: n2.index,
            value: copy,
        },
        loc: p2.loc,
    });
    body.extend(body_stmts(p2).cloned());
    let Some(&label) = p1.loop_body.keys().next() else {
        return Attempt::Blocked(None);
    };
    let mut params = p1.params.clone();
    params.extend(&p2.params);
    params.sort();
    params.dedup();
    let mut reductions = p1.reductions.clone();
    reductions.extend(&p2.reductions);
    let mut patterns = p1.patterns.clone();
    patterns.extend(p2.patterns.iter().cloned());
    let fused = Parfor {
        loop_body: BTreeMap::from([(label, Block { body })]),
        params,
        reductions,
        patterns,
        cost: p1.cost + p2.cost,
        ..p1.clone()
    };
    Attempt::Fused(Box::new(fused), ups, stay)
}
