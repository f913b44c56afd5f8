//! `prange` loops to parfors (Numba's `ConvertLoopPass`), with the reduction and race
//! analysis of the loop body (`get_parfor_reductions`, the races of `_convert_loop`).
//!
//! A loop converts when its iterator comes from `prange(...)`, its header is the plain
//! `iternext` / `pair_first` / `pair_second` / `branch` of a `for` loop, and the body
//! leaves only through the header (no `break` or `return`). Nested `prange` loops stay
//! loops in the outer parfor's body, which runs them serially (Numba does the same).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use numba_ir::analysis::{compute_live_map, compute_use_defs};
use numba_ir::{BinOp, Block, Expr, FunctionIR, Inst, Label, Loc, Stmt, VarId};
use numba_typeinfer::types::{Type, INT64};
use numba_typeinfer::TypingResult;

use crate::node::{Bound, LoopNest, Parfor, RedOp, Reduction};
use crate::{ParforError, ParforReport, ParforStage};

/// Typing keys of the functions whose loops run in parallel.
pub const PRANGE_KEYS: &[&str] = &["numba_rs.prange", "numba.prange"];
/// Typing keys of `pndindex`: a parallel loop over a shape's index tuples.
pub const PNDINDEX_KEYS: &[&str] = &["numba_rs.pndindex", "numba.pndindex"];

/// `size = parfor_ndsize(idx)`: how many index tuples the `pndindex` value `idx` holds.
pub const NDSIZE: &str = "parfor_ndsize";
/// `t = parfor_unravel(idx, k)`: the `k`-th (C-order) index tuple of `idx`'s shape.
pub const UNRAVEL: &str = "parfor_unravel";

/// What a parallel loop iterates over.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LoopKind {
    /// `prange(...)`: integers.
    Range,
    /// `pndindex(...)`: index tuples, by a flat loop over their C-order positions.
    NdIndex,
    /// The internal `prange` of an array comprehension (numba_ir::comprehension).
    Internal,
    /// A `functools.reduce` loop over `reduce_source(a)` (numba_ir::reduce): over a 1-d
    /// array, a loop over its positions reading each element.
    Reduce,
}

/// The typing key of an array comprehension's internal `prange`.
const INTERNAL_PRANGE_KEY: &str = "numba_rs.internal_prange";

fn loop_kind(typing: &TypingResult, f: VarId) -> Option<LoopKind> {
    match typing.type_of(f).get() {
        Type::Function(k) if PRANGE_KEYS.contains(&k.as_str()) => Some(LoopKind::Range),
        Type::Function(k) if k == INTERNAL_PRANGE_KEY => Some(LoopKind::Internal),
        Type::Function(k) if PNDINDEX_KEYS.contains(&k.as_str()) => Some(LoopKind::NdIndex),
        Type::Function(k) if k == "intrinsic.reduce_source" => Some(LoopKind::Reduce),
        _ => None,
    }
}

/// `size = count` (an int64 named after `base`, typed by `sig` when it is a call-like
/// expression), appended to `pre`.
fn size_stmt(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    base: &str,
    count: Expr,
    sig: Option<numba_typeinfer::Signature>,
    loc: Loc,
    pre: &mut Vec<Inst>,
) -> VarId {
    let name = numba_ir::utils::fresh_name(ir, base);
    let size = ir.add_var(name, loc);
    typing.typemap.push(INT64);
    let value = ir.add_expr(count);
    if let Some(sig) = sig {
        typing.calltypes.insert(value, sig);
    }
    pre.push(Inst {
        stmt: Stmt::Assign {
            target: size,
            value,
        },
        loc,
    });
    size
}

/// Where a converted loop's variable comes from at each position.
#[derive(Clone, Copy)]
enum Item {
    /// The position itself (`prange`).
    Index,
    /// The index tuple at that flat position of a `pndindex` value.
    Unravel(VarId),
    /// The element at that position of a 1-d array (a `reduce` loop).
    Element(VarId),
}

/// Every variable's defining expressions.
pub(crate) fn defs_of(ir: &FunctionIR) -> HashMap<VarId, Vec<numba_ir::ExprId>> {
    let mut m: HashMap<VarId, Vec<numba_ir::ExprId>> = HashMap::new();
    for b in ir.blocks.values() {
        for i in &b.body {
            if let Stmt::Assign { target, value } = i.stmt {
                m.entry(target).or_default().push(value);
            }
        }
    }
    m
}

/// The single definition of `v`, following plain copies.
pub(crate) fn single_def<'a>(
    ir: &'a FunctionIR,
    defs: &HashMap<VarId, Vec<numba_ir::ExprId>>,
    mut v: VarId,
) -> Option<&'a Expr> {
    for _ in 0..16 {
        let d = defs.get(&v)?;
        if d.len() != 1 {
            return None;
        }
        match ir.expr(d[0]) {
            Expr::Var(src) => v = *src,
            e => return Some(e),
        }
    }
    None
}

/// What a loop header must look like to convert.
struct Header {
    /// `pair_first` target: the loop variable's value for one iteration.
    first: VarId,
    /// Copies of `first` (and other header copies) to replay at the body's entry.
    copies: Vec<Inst>,
    body_entry: Label,
    exit: Label,
    iter: VarId,
}

fn match_header(ir: &FunctionIR, block: &Block) -> Option<Header> {
    let mut pair = None;
    let mut first = None;
    let mut second = None;
    let mut iter = None;
    let mut copies = Vec::new();
    let mut term = None;
    for inst in &block.body {
        match &inst.stmt {
            Stmt::Assign { target, value } => match ir.expr(*value) {
                Expr::IterNext { value } if pair.is_none() => {
                    pair = Some(*target);
                    iter = Some(*value);
                }
                Expr::PairFirst { value } if Some(*value) == pair => first = Some(*target),
                Expr::PairSecond { value } if Some(*value) == pair => second = Some(*target),
                Expr::Var(_) => copies.push(inst.clone()),
                _ => return None,
            },
            Stmt::Branch {
                cond,
                truebr,
                falsebr,
            } if Some(*cond) == second => term = Some((*truebr, *falsebr)),
            _ => return None,
        }
    }
    let (body_entry, exit) = term?;
    Some(Header {
        first: first?,
        copies,
        body_entry,
        exit,
        iter: iter?,
    })
}

/// Convert every outermost `prange` loop of `ir` into a parfor.
pub(crate) fn convert(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    report: &mut ParforReport,
    reductions_on: bool,
) -> Result<(), ParforError> {
    let cfg = ir.cfg();
    let ud = compute_use_defs(ir);
    let live = compute_live_map(&cfg, ir.blocks.keys().copied(), &ud);
    let defs = defs_of(ir);
    // Outer loops first; loops inside a converted loop stay serial.
    let mut loops: Vec<_> = cfg.loops.values().cloned().collect();
    loops.sort_by_key(|l| (std::cmp::Reverse(l.body.len()), l.header));
    let mut taken: BTreeSet<Label> = BTreeSet::new();
    // The `prange(...)` calls, their iterators and globals of converted loops.
    let mut setup: Vec<VarId> = Vec::new();
    for lp in loops {
        if taken.contains(&lp.header) {
            continue;
        }
        let Some(hdr_block) = ir.blocks.get(&lp.header) else {
            continue;
        };
        let Some(h) = match_header(ir, hdr_block) else {
            continue;
        };
        // The iterator: getiter(prange(args)) defined outside the loop.
        let Some(&Expr::GetIter { value: range }) = single_def(ir, &defs, h.iter) else {
            continue;
        };
        let Some(Expr::Call {
            func, args, kws, ..
        }) = single_def(ir, &defs, range)
        else {
            continue;
        };
        let func = *func;
        let Some(kind) = loop_kind(typing, func).filter(|_| kws.is_empty()) else {
            continue;
        };
        let first_arg = args.first().copied();
        let args = match kind {
            LoopKind::Range | LoopKind::Internal => args.clone(),
            // The pndindex value itself: the loop runs over its flat positions.
            LoopKind::NdIndex => vec![range],
            // Over a 1-d array only (Numba's `ConvertReducePass`); other iterables stay
            // the serial loop.
            LoopKind::Reduce => {
                let one_d = matches!(
                    typing.type_of(range).unliteral().get(),
                    Type::Array { ndim: 1, .. }
                );
                if !one_d {
                    continue;
                }
                vec![range]
            }
        };
        // `reduce(f, a[mask], init)`: the loop runs over `a`, where `mask` is set.
        let masked = match (kind, first_arg) {
            (LoopKind::Reduce, Some(x)) => masked_source(ir, typing, &defs, x, range),
            _ => None,
        };
        let mut body: BTreeSet<Label> = lp
            .body
            .iter()
            .copied()
            .filter(|&l| l != lp.header)
            .collect();
        // Blocks that only raise, entered from the body, belong to it (a raise in the
        // body ends the kernel with the exception).
        let raising: Vec<Label> = body
            .iter()
            .flat_map(|l| {
                ir.blocks[l]
                    .terminator()
                    .map(|t| t.successors())
                    .unwrap_or_default()
            })
            .filter(|s| !body.contains(s) && *s != lp.header)
            .filter(|s| {
                ir.blocks.get(s).is_some_and(|b| {
                    matches!(
                        b.terminator(),
                        Some(
                            Stmt::Raise { .. }
                                | Stmt::StaticRaise { .. }
                                | Stmt::DynamicRaise { .. }
                        )
                    )
                }) && cfg
                    .preds
                    .get(s)
                    .is_some_and(|p| p.iter().all(|p| body.contains(p)))
            })
            .collect();
        body.extend(raising);
        if !body.contains(&h.body_entry) || body.contains(&h.exit) {
            continue;
        }
        // Only the header may leave the loop, and nothing in it returns.
        let leaves = body.iter().any(|l| {
            let b = &ir.blocks[l];
            matches!(b.terminator(), Some(Stmt::Return { .. }))
                || b.terminator()
                    .map(|t| t.successors())
                    .unwrap_or_default()
                    .iter()
                    .any(|s| !body.contains(s) && *s != lp.header)
        });
        if leaves {
            report.note(format!(
                "prange loop at line {} was not parallelised: it has an exit other than the end of its range",
                ir.block_locs.get(&lp.header).map(|l| l.line).unwrap_or(0)
            ));
            continue;
        }
        let loc = ir
            .blocks
            .get(&h.body_entry)
            .and_then(|b| b.body.first())
            .map(|i| i.loc)
            .unwrap_or_default();
        let mut pre = Vec::new();
        let bounds = match kind {
            LoopKind::Range | LoopKind::Internal => args.clone(),
            LoopKind::NdIndex => {
                let count =
                    Expr::Extension(Box::new(numba_ir::ExtensionNode::new(NDSIZE, vec![range])));
                vec![size_stmt(
                    ir,
                    typing,
                    "$parfor_ndsize",
                    count,
                    None,
                    loc,
                    &mut pre,
                )]
            }
            LoopKind::Reduce => {
                let source = masked.map_or(range, |m| m.array);
                if let Some(m) = masked {
                    // NumPy's IndexError for a mask of another shape, before the loop.
                    pre.push(Inst {
                        stmt: Stmt::Extension(Box::new(numba_ir::ExtensionNode::new(
                            crate::numpy::MASKCHECK,
                            vec![m.array, m.mask],
                        ))),
                        loc,
                    });
                }
                let count = Expr::GetAttr {
                    value: source,
                    attr: "size".into(),
                };
                let sig = numba_typeinfer::Signature {
                    ret: INT64,
                    args: vec![typing.type_of(source)],
                    key: numba_typeinfer::ImplKey::GetAttr("size".into()),
                };
                vec![size_stmt(
                    ir,
                    typing,
                    "$parfor_size",
                    count,
                    Some(sig),
                    loc,
                    &mut pre,
                )]
            }
        };
        let item = match kind {
            LoopKind::NdIndex => Item::Unravel(range),
            LoopKind::Reduce => Item::Element(masked.map_or(range, |m| m.array)),
            LoopKind::Range | LoopKind::Internal => Item::Index,
        };
        let mut pf = build(
            ir,
            typing,
            &lp.header,
            &h,
            &body,
            &bounds,
            item,
            &live,
            reductions_on,
            loc,
            report,
        )?;
        if let Some(m) = masked {
            guard_body(ir, typing, &mut pf, (h.body_entry, h.first), m.mask);
            setup.push(m.copy);
        }
        taken.extend(body.iter().copied());
        // The iterator's copies back to the `getiter`, the call, the callee.
        let mut v = h.iter;
        for _ in 0..16 {
            setup.push(v);
            match defs.get(&v).map(|d| d.as_slice()) {
                Some([d]) => match ir.expr(*d) {
                    Expr::Var(src) => v = *src,
                    _ => break,
                },
                _ => break,
            }
        }
        setup.extend([range, func]);
        let pattern = match kind {
            LoopKind::Range => "('prange', 'user', '')".to_string(),
            LoopKind::NdIndex => "('prange', 'pndindex', '')".to_string(),
            // Numba names the variable holding the function (the intrinsic's repr).
            LoopKind::Reduce => {
                let name = match single_def(ir, &defs, func) {
                    Some(Expr::Global { value, .. }) => value.repr.clone(),
                    _ => "reduce".into(),
                };
                format!("('{name} function', 'reduction')")
            }
            // Numba names where the comprehension's `range` was swapped.
            LoopKind::Internal => format!(
                "('prange', 'internal', (('\"array comprehension\"', 'closure of'), Loc(filename={}, line={}, col=None)))",
                ir.filename,
                ir.var(func).loc.line
            ),
        };
        report.produced(pf.id, &pattern, &ir.filename, loc.line);
        report.loop_sizes.insert(pf.id, (lp.body.len(), lp.header));
        let node = pf.to_node();
        pre.push(Inst {
            stmt: Stmt::Extension(Box::new(node)),
            loc,
        });
        pre.extend(exit_copies(ir, &h, &live));
        pre.push(Inst {
            stmt: Stmt::Jump { target: h.exit },
            loc,
        });
        ir.blocks.get_mut(&lp.header).expect("header exists").body = pre;
    }
    remove_unused(ir, &setup);
    Ok(())
}

/// The filtered copy `copy = array[mask]` a `reduce` loop iterates (see
/// [`masked_source`]).
#[derive(Debug, Clone, Copy)]
struct Masked {
    array: VarId,
    mask: VarId,
    copy: VarId,
}

/// `x = a[mask]` with `a` a 1-d array and `mask` a boolean array, when nothing but set-up
/// (names, constants, copies) runs between it and the `reduce` loop's `reduce_source(x)`
/// call (`source`): the loop can read `a` where `mask` is set instead (Numba's
/// `_find_mask`); the copy goes when nothing else reads it.
fn masked_source(
    ir: &FunctionIR,
    typing: &TypingResult,
    defs: &HashMap<VarId, Vec<numba_ir::ExprId>>,
    x: VarId,
    source: VarId,
) -> Option<Masked> {
    let &[d] = defs.get(&x)?.as_slice() else {
        return None;
    };
    let &Expr::GetItem {
        value: array,
        index: mask,
    } = ir.expr(d)
    else {
        return None;
    };
    let is_1d = |v: VarId, want_bool: bool| match typing.type_of(v).unliteral().get() {
        Type::Array { ndim: 1, dtype, .. } => {
            !want_bool || dtype == numba_typeinfer::types::BOOLEAN
        }
        _ => false,
    };
    if !is_1d(array, false) || !is_1d(mask, true) || array == x || mask == x {
        return None;
    }
    let block = ir.blocks.values().find(|b| {
        b.body
            .iter()
            .any(|i| matches!(i.stmt, Stmt::Assign { value, .. } if value == d))
    })?;
    let start = block
        .body
        .iter()
        .position(|i| matches!(i.stmt, Stmt::Assign { value, .. } if value == d))?;
    for inst in &block.body[start + 1..] {
        match inst.stmt {
            Stmt::Assign { target, .. } if target == source => {
                return Some(Masked {
                    array,
                    mask,
                    copy: x,
                })
            }
            Stmt::Assign { value, .. } => match ir.expr(value) {
                Expr::Global { .. } | Expr::FreeVar { .. } | Expr::Const(_) | Expr::Var(_) => {}
                _ => return None,
            },
            Stmt::Del { .. } => {}
            _ => return None,
        }
    }
    None
}

/// Run the body of `pf` only where `mask` is set at the loop's index: its entry block
/// becomes `m = mask[index]; branch m, <the old entry>, <the end>`.
fn guard_body(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    pf: &mut Parfor,
    (entry, item_var): (Label, VarId),
    mask: VarId,
) {
    // `build` gives the body an empty end block of the largest label (the back edge).
    let end = pf.loop_body.keys().max().copied().unwrap_or(entry);
    let moved = end.max(ir.blocks.keys().max().copied().unwrap_or(0)) + 1;
    let Some(mut old) = pf.loop_body.remove(&entry) else {
        return;
    };
    if !pf.params.contains(&mask) {
        pf.params.push(mask);
        pf.params.sort();
    }
    let loc = old.body.first().map(|i| i.loc).unwrap_or(pf.loc);
    // The item's load (the entry's first statement) runs before the branch: a load on
    // both paths lets LLVM turn the branch into a select (no misprediction on a random
    // mask), which it cannot do for a load only one path makes.
    let item = match old.body.first().map(|i| &i.stmt) {
        Some(Stmt::Assign { target, .. }) if *target == item_var => Some(old.body.remove(0)),
        _ => None,
    };
    pf.loop_body.insert(moved, old);
    let name = numba_ir::utils::fresh_name(ir, "$mask_item");
    let m = ir.add_var(name, loc);
    typing.typemap.push(numba_typeinfer::types::BOOLEAN);
    let get = ir.add_expr(Expr::GetItem {
        value: mask,
        index: pf.index_var,
    });
    typing.calltypes.insert(
        get,
        numba_typeinfer::Signature {
            ret: numba_typeinfer::types::BOOLEAN,
            args: vec![typing.type_of(mask), typing.type_of(pf.index_var)],
            key: numba_typeinfer::ImplKey::GetItem,
        },
    );
    pf.loop_body.insert(
        entry,
        Block {
            body: item
                .into_iter()
                .chain([
                    Inst {
                        stmt: Stmt::Assign {
                            target: m,
                            value: get,
                        },
                        loc,
                    },
                    Inst {
                        stmt: Stmt::Branch {
                            cond: m,
                            truebr: moved,
                            falsebr: end,
                        },
                        loc,
                    },
                ])
                .collect(),
        },
    );
}

/// Drop the assignments of `vars` nothing reads any more (a converted loop's
/// `getiter(prange(n))`), as Numba's dead-code removal after the conversion does.
fn remove_unused(ir: &mut FunctionIR, vars: &[VarId]) {
    loop {
        let mut read: BTreeSet<VarId> = BTreeSet::new();
        for b in ir.blocks.values() {
            for i in &b.body {
                match &i.stmt {
                    Stmt::Assign { value, .. } => read.extend(ir.expr_uses(ir.expr(*value))),
                    Stmt::Del { .. } => {}
                    st => read.extend(ir.stmt_vars(st)),
                }
            }
        }
        let dead: BTreeSet<VarId> = vars.iter().copied().filter(|v| !read.contains(v)).collect();
        let mut removed = false;
        for b in ir.blocks.values_mut() {
            b.body.retain(|i| match i.stmt {
                Stmt::Assign { target, .. } | Stmt::Del { var: target }
                    if dead.contains(&target) =>
                {
                    removed = true;
                    false
                }
                _ => true,
            });
        }
        if !removed {
            return;
        }
    }
}

/// Numba's "Overwrite of parallel loop index": the loop variable (the per-iteration
/// value and its copies in the body's entry block) assigned anything else in the body.
fn check_index_not_overwritten(
    ir: &FunctionIR,
    loop_body: &BTreeMap<Label, Block>,
    h: &Header,
) -> Result<(), ParforError> {
    // `i.1` is a version of `i`; `<listcomp>.i` (an inlined comprehension's) is a name
    // of its own.
    let unversioned = |v: VarId| numba_ir::utils::unversioned(ir.var_name(v)).to_string();
    let mut index: BTreeSet<VarId> = BTreeSet::from([h.first]);
    if let Some(entry) = loop_body.get(&h.body_entry) {
        for i in &entry.body {
            if let Stmt::Assign { target, value } = i.stmt {
                if matches!(ir.expr(value), Expr::Var(s) if index.contains(s)) {
                    index.insert(target);
                }
            }
        }
    }
    let names: BTreeSet<String> = index
        .iter()
        .map(|&v| unversioned(v))
        .filter(|n| !n.contains('$'))
        .collect();
    for i in loop_body.values().flat_map(|b| &b.body) {
        let Stmt::Assign { target, value } = i.stmt else {
            continue;
        };
        if index.contains(&target) || !names.contains(&unversioned(target)) {
            continue;
        }
        let from_index = matches!(ir.expr(value), Expr::Var(s) if index.contains(s));
        if !from_index {
            return Err(ParforError::Unsupported {
                message: "Overwrite of parallel loop index".into(),
                line: i.loc.line,
            });
        }
    }
    Ok(())
}

/// The header's copies that the exit needs: those whose target is live there and whose
/// source is not the per-iteration value (`pair_first` and its copies exist only inside
/// the body). strip_phis puts the copy for a phi after the loop in the header, which
/// runs one last time before leaving; after the parfor, the source holds its final
/// value (a reduction's combined result).
fn exit_copies(ir: &FunctionIR, h: &Header, live: &BTreeMap<Label, BTreeSet<VarId>>) -> Vec<Inst> {
    let exit_live = live.get(&h.exit).cloned().unwrap_or_default();
    let mut per_iteration: BTreeSet<VarId> = BTreeSet::from([h.first]);
    let mut out = Vec::new();
    for c in &h.copies {
        let Stmt::Assign { target, value } = c.stmt else {
            continue;
        };
        let Expr::Var(src) = ir.expr(value) else {
            continue;
        };
        if per_iteration.contains(src) {
            per_iteration.insert(target);
        } else if exit_live.contains(&target) {
            out.push(c.clone());
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn build(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    header: &Label,
    h: &Header,
    body: &BTreeSet<Label>,
    args: &[VarId],
    item: Item,
    live: &BTreeMap<Label, BTreeSet<VarId>>,
    reductions_on: bool,
    loc: Loc,
    report: &mut ParforReport,
) -> Result<Parfor, ParforError> {
    let index_t = typing.type_of(h.first);
    let name = (1..)
        .map(|k| format!("parfor_index.{k}"))
        .find(|n| !ir.vars.iter().any(|v| &v.name == n))
        .expect("a free name");
    let index = ir.add_var(name, loc);
    typing
        .typemap
        .push(if index_t.is_integer() { index_t } else { INT64 });
    let (start, stop, step) = match args {
        [n] => (Bound::Const(0), Bound::Var(*n), Bound::Const(1)),
        [a, b] => (Bound::Var(*a), Bound::Var(*b), Bound::Const(1)),
        [a, b, c] => (Bound::Var(*a), Bound::Var(*b), Bound::Var(*c)),
        _ => {
            return Err(ParforError::Failed {
                stage: ParforStage::PrangeConversion,
                message: "prange takes one to three arguments".into(),
            })
        }
    };
    // The body, its back edges turned into jumps to an empty end block.
    let end = ir.blocks.keys().max().copied().unwrap_or(0) + 1;
    let mut loop_body: BTreeMap<Label, Block> = BTreeMap::new();
    for &l in body {
        let mut b = ir.blocks.remove(&l).expect("body block exists");
        if let Some(Inst {
            stmt: Stmt::Jump { target },
            ..
        }) = b.body.last_mut()
        {
            if *target == *header {
                *target = end;
            }
        }
        if let Some(Inst {
            stmt: Stmt::Branch {
                truebr, falsebr, ..
            },
            ..
        }) = b.body.last_mut()
        {
            for t in [truebr, falsebr] {
                if *t == *header {
                    *t = end;
                }
            }
        }
        loop_body.insert(l, b);
    }
    loop_body.insert(end, Block::default());
    // The loop variable's value comes from the index at the body's entry (a pndindex
    // loop's from the index tuple at that flat position, a reduce loop's from the
    // array's element there).
    let copy = ir.add_expr(match item {
        Item::Index => Expr::Var(index),
        Item::Unravel(idx) => Expr::Extension(Box::new(numba_ir::ExtensionNode::new(
            UNRAVEL,
            vec![idx, index],
        ))),
        Item::Element(array) => Expr::GetItem {
            value: array,
            index,
        },
    });
    if let Item::Element(array) = item {
        typing.calltypes.insert(
            copy,
            numba_typeinfer::Signature {
                ret: typing.type_of(h.first),
                args: vec![typing.type_of(array), typing.type_of(index)],
                key: numba_typeinfer::ImplKey::GetItem,
            },
        );
    }
    let mut prefix = vec![Inst {
        stmt: Stmt::Assign {
            target: h.first,
            value: copy,
        },
        loc,
    }];
    // Header copies the body reads run at its entry; the others (a phi copy for the
    // loop's exit, `x.5 = x.4`) run once after the parfor (`exit_copies`).
    let body_reads: BTreeSet<VarId> = loop_body
        .values()
        .flat_map(|b| &b.body)
        .flat_map(|i| ir.stmt_vars(&i.stmt))
        .collect();
    prefix.extend(
        h.copies
            .iter()
            .filter(
                |c| matches!(c.stmt, Stmt::Assign { target, .. } if body_reads.contains(&target)),
            )
            .cloned(),
    );
    if let Some(b) = loop_body.get_mut(&h.body_entry) {
        b.body.splice(0..0, prefix);
    }

    check_index_not_overwritten(ir, &loop_body, h)?;

    // Uses and definitions of the body against the rest of the function.
    let mut body_defs: BTreeSet<VarId> = BTreeSet::new();
    let mut body_uses: BTreeSet<VarId> = BTreeSet::new();
    let mut cost = 0i64;
    for b in loop_body.values() {
        for inst in &b.body {
            cost += 1;
            if let Stmt::Assign { target, value } = &inst.stmt {
                body_defs.insert(*target);
                if matches!(ir.expr(*value), Expr::Call { .. }) {
                    cost += 8;
                }
            }
            body_uses.extend(ir.stmt_vars(&inst.stmt));
        }
    }
    // An inner loop multiplies the work by its unknown trip count.
    let inner_loop = loop_body.iter().any(|(l, b)| {
        b.terminator()
            .map(|t| t.successors())
            .unwrap_or_default()
            .iter()
            .any(|s| s <= l && loop_body.contains_key(s))
    });
    if inner_loop {
        cost *= 64;
    }
    let mut outside_defs: BTreeSet<VarId> = BTreeSet::new();
    let mut all_defs = body_defs.clone();
    let mut all_uses = body_uses.clone();
    for (l, b) in &ir.blocks {
        for inst in &b.body {
            if let Stmt::Assign { target, .. } = inst.stmt {
                all_defs.insert(target);
                // The header becomes the parfor: its definitions are the body's now.
                if l != header {
                    outside_defs.insert(target);
                }
            }
            all_uses.extend(ir.stmt_vars(&inst.stmt));
        }
    }
    // What nothing here defines comes from around these blocks: the parameters and index
    // of the loop whose body they are, when a nested loop converts (`nest`).
    outside_defs.extend(all_uses.difference(&all_defs));
    let exit_live = live.get(&h.exit).cloned().unwrap_or_default();
    let mut params: Vec<VarId> = body_uses
        .iter()
        .copied()
        .filter(|v| outside_defs.contains(v) && *v != index)
        .collect();
    let mut reductions = Vec::new();
    let mut races = Vec::new();
    for &v in body_defs.iter() {
        let carried = outside_defs.contains(&v);
        if carried {
            if reductions_on {
                if let Some(r) = reduction_of(ir, typing, &loop_body, v)? {
                    reductions.push(r);
                    continue;
                }
            }
            if exit_live.contains(&v) {
                races.push(v);
            }
        } else if exit_live.contains(&v) {
            races.push(v);
            params.push(v);
        }
    }
    for r in &races {
        report.warn(
            "NumbaParallelSafetyWarning",
            format!(
                "Variable {} used in parallel loop may be written to simultaneously by multiple workers and may result in non-deterministic or unintended results.",
                numba_ir::utils::unversioned(ir.var_name(*r))
            ),
            loc.line,
        );
    }
    // The kernel computes the index from the start and step.
    for b in [start, step] {
        if let Bound::Var(v) = b {
            params.push(v);
        }
    }
    params.sort();
    params.dedup();
    Ok(Parfor {
        id: crate::next_parfor_id(),
        loop_nests: vec![LoopNest {
            index,
            start,
            stop,
            step,
        }],
        init_block: Block::default(),
        loop_body,
        index_var: index,
        params,
        races,
        reductions,
        patterns: vec!["('prange', 'user', '')".into()],
        cost: cost.max(1),
        loc,
    })
}

/// Whether the loop-carried `v` is a reduction: every assignment of `v` in the body comes,
/// through copies, either from `v` itself or from one expression combining `v` with
/// another value by `+ - * /` or `min`/`max`.
fn reduction_of(
    ir: &FunctionIR,
    typing: &TypingResult,
    body: &BTreeMap<Label, Block>,
    v: VarId,
) -> Result<Option<Reduction>, ParforError> {
    let mut defs: HashMap<VarId, Vec<numba_ir::ExprId>> = HashMap::new();
    for b in body.values() {
        for i in &b.body {
            if let Stmt::Assign { target, value } = i.stmt {
                defs.entry(target).or_default().push(value);
            }
        }
    }
    // The accumulator's copies: every variable reached backwards from `v` through plain
    // copies (across inner loops, strip_phis leaves chains of them), and forwards to a
    // variable defined only by copies, one of them of the chain (an inner loop's phi,
    // `best.3 = best.4` before the loop and `best.3 = best.1` in it). The expressions
    // that define the chain's other ends are the candidate reduce nodes.
    let mut copies: BTreeSet<VarId> = BTreeSet::new();
    let mut exprs: Vec<numba_ir::ExprId> = Vec::new();
    let mut stack = vec![v];
    loop {
        while let Some(x) = stack.pop() {
            if !copies.insert(x) {
                continue;
            }
            for &e in defs.get(&x).map(|d| d.as_slice()).unwrap_or_default() {
                match ir.expr(e) {
                    // An inlined function's return value passes through a `cast`.
                    Expr::Var(src) | Expr::Cast { value: src } => stack.push(*src),
                    _ => exprs.push(e),
                }
            }
        }
        stack.extend(defs.iter().filter_map(|(&x, ds)| {
            let srcs: Vec<VarId> = ds
                .iter()
                .filter_map(|&e| match ir.expr(e) {
                    Expr::Var(src) | Expr::Cast { value: src } => Some(*src),
                    _ => None,
                })
                .collect();
            (!copies.contains(&x)
                && srcs.len() == ds.len()
                && srcs.iter().any(|s| copies.contains(s)))
            .then_some(x)
        }));
        if stack.is_empty() {
            break;
        }
    }
    // Updates in a row (`s += a[i]; s += b[i]`, `m = max(m, x); m = max(m, y)`): an
    // update's accumulator operand defined, once, by another update of the accumulator
    // joins the chain, so the steps compose into one reduction.
    let update = |e: numba_ir::ExprId| match ir.expr(e) {
        Expr::BinOp { op, .. } | Expr::InplaceBinOp { op, .. } => {
            matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::TrueDiv)
        }
        Expr::Call { func, args, .. } => {
            args.len() == 2
                && matches!(typing.type_of(*func).get(),
                    Type::Function(k) if k == "min" || k == "max")
        }
        _ => false,
    };
    loop {
        let mut grew = false;
        for e in exprs.clone() {
            if !update(e) {
                continue;
            }
            for u in ir.expr_uses(ir.expr(e)) {
                if copies.contains(&u) {
                    continue;
                }
                // Through copies (`c.1 = $binop_iadd78.4`) to the defining update.
                let mut via = vec![u];
                let mut def = None;
                while let Some(&[d]) = defs.get(via.last().expect("one")).map(|d| d.as_slice()) {
                    match ir.expr(d) {
                        Expr::Var(src) | Expr::Cast { value: src } if via.len() < 16 => {
                            via.push(*src)
                        }
                        _ => {
                            def = Some(d);
                            break;
                        }
                    }
                }
                if let Some(d) = def {
                    if update(d) && ir.expr_uses(ir.expr(d)).iter().any(|w| copies.contains(w)) {
                        copies.extend(via);
                        if !exprs.contains(&d) {
                            exprs.push(d);
                        }
                        grew = true;
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    // Numba's error for an accumulator read by something that cannot combine partial
    // results (`acc = cmath.sqrt(acc)`, `acc ^= x`, `acc = acc + acc`).
    let name = ir.var_name(v);
    let misuse = |line: u32| ParforError::Value {
        message: format!(
            "Use of reduction variable {} in an unsupported reduction function.",
            numba_ir::utils::unversioned(name)
        ),
        line,
    };
    let unsupported = |e: numba_ir::ExprId| -> Result<Option<Reduction>, ParforError> {
        let line = body
            .values()
            .flat_map(|b| &b.body)
            .find(|i| matches!(i.stmt, Stmt::Assign { value, .. } if value == e))
            .map_or(0, |i| i.loc.line);
        Err(misuse(line))
    };
    let mut found: Vec<(numba_ir::ExprId, u8)> = Vec::new();
    for e in exprs {
        let reads_acc = ir.expr_uses(ir.expr(e)).iter().any(|u| copies.contains(u));
        let acc = match ir.expr(e) {
            Expr::BinOp { op, lhs, rhs } | Expr::InplaceBinOp { op, lhs, rhs } => {
                if *op == BinOp::FloorDiv && (copies.contains(lhs) || copies.contains(rhs)) {
                    return Err(ParforError::Value {
                        message: "Parallel floordiv reductions are not supported. If all divisors are integers then a floordiv reduction can in some cases be parallelized as a multiply reduction followed by a floordiv of the resulting product.".into(),
                        line: 0,
                    });
                }
                if !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::TrueDiv) {
                    return if reads_acc { unsupported(e) } else { Ok(None) };
                }
                if copies.contains(lhs) && !copies.contains(rhs) {
                    0
                } else if copies.contains(rhs)
                    && !copies.contains(lhs)
                    && matches!(op, BinOp::Add | BinOp::Mul)
                {
                    1
                } else if copies.contains(lhs) && copies.contains(rhs) {
                    return unsupported(e);
                } else {
                    return Ok(None);
                }
            }
            Expr::Call {
                func, args, kws, ..
            } if args.len() == 2
                && kws.is_empty()
                && matches!(typing.type_of(*func).get(),
                    Type::Function(k) if k == "min" || k == "max") =>
            {
                match (copies.contains(&args[0]), copies.contains(&args[1])) {
                    (true, false) => 0,
                    (false, true) => 1,
                    (true, true) => return unsupported(e),
                    _ => return Ok(None),
                }
            }
            // `s = s + x` over arrays, fused by the rewrites into an array expression:
            // a reduction when the tree's root combines the accumulator (used nowhere
            // else in the tree) with the rest.
            Expr::Extension(node) if node.kind == "arrayexpr" => {
                match arrayexpr_root(ir, node, &copies) {
                    Some(acc) => acc,
                    None if reads_acc => return unsupported(e),
                    None => return Ok(None),
                }
            }
            _ if reads_acc => return unsupported(e),
            _ => return Ok(None),
        };
        found.push((e, acc));
    }
    // In body order, as Numba walks the reduce nodes.
    let position: HashMap<numba_ir::ExprId, usize> = body
        .values()
        .flat_map(|b| &b.body)
        .enumerate()
        .filter_map(|(k, i)| match i.stmt {
            Stmt::Assign { value, .. } => Some((value, k)),
            _ => None,
        })
        .collect();
    found.sort_by_key(|(e, _)| position.get(e).copied().unwrap_or(usize::MAX));
    let Some(&(expr, acc)) = found.first() else {
        return Ok(None);
    };
    // Several reduce nodes (`s += x` in two inner loops) make one reduction when they
    // combine alike; Numba rejects in-place operators that differ (`c += 1; c *= 2`).
    // `+=` and `-=` combine alike (a sum), as do `*=` and `/=`.
    let additive = |op: BinOp| matches!(op, BinOp::Add | BinOp::Sub);
    let mut inplace: Option<BinOp> = None;
    for &(e, _) in &found {
        if let Expr::InplaceBinOp { op, .. } = ir.expr(e) {
            if inplace.is_some_and(|first| additive(first) != additive(*op)) {
                let line = body
                    .values()
                    .flat_map(|b| &b.body)
                    .find(|i| matches!(i.stmt, Stmt::Assign { value, .. } if value == e))
                    .map_or(0, |i| i.loc.line);
                return Err(ParforError::Unsupported {
                    message: format!(
                        "Reduction variable {} has multiple conflicting reduction operators.",
                        numba_ir::utils::unversioned(name)
                    ),
                    line,
                });
            }
            inplace = Some(*op);
        }
    }
    let class = |e: numba_ir::ExprId| -> Option<String> {
        let op = match ir.expr(e) {
            Expr::BinOp { op, .. } | Expr::InplaceBinOp { op, .. } => Some(*op),
            Expr::Extension(node) => root_binop(ir, node).map(|(op, _, _)| op),
            Expr::Call { func, .. } => return Some(format!("{}", typing.type_of(*func))),
            _ => None,
        };
        Some(match op? {
            BinOp::Add | BinOp::Sub => "+".into(),
            _ => "*".into(),
        })
    };
    let first = class(expr);
    if found.iter().any(|&(e, _)| class(e) != first) {
        return Ok(None);
    }
    let reduce_nodes: BTreeSet<numba_ir::ExprId> = found.iter().map(|&(e, _)| e).collect();
    // Nothing else that computes the accumulator may read it (Numba's `get_reduce_nodes`
    // over the statements the new value depends on): a partial result cannot be
    // combined twice (`acc = acc + acc * x`). Reads elsewhere (`if acc > t:`,
    // `a[i] = acc`) see the worker's partial value, as in Numba.
    let mut slice: BTreeSet<VarId> = copies.clone();
    let mut stack: Vec<VarId> = copies.iter().copied().collect();
    while let Some(x) = stack.pop() {
        for &e in defs.get(&x).map(|d| d.as_slice()).unwrap_or_default() {
            for u in ir.expr_uses(ir.expr(e)) {
                if defs.contains_key(&u) && slice.insert(u) {
                    stack.push(u);
                }
            }
        }
    }
    for inst in body.values().flat_map(|b| &b.body) {
        let Stmt::Assign { target, value } = &inst.stmt else {
            continue;
        };
        if reduce_nodes.contains(value) || !slice.contains(target) {
            continue;
        }
        if matches!(ir.expr(*value), Expr::Var(_) | Expr::Cast { .. }) && copies.contains(target) {
            continue;
        }
        if ir
            .expr_uses(ir.expr(*value))
            .iter()
            .any(|r| copies.contains(r))
        {
            return Err(misuse(inst.loc.line));
        }
    }
    let binop = match ir.expr(expr) {
        Expr::BinOp { op, .. } | Expr::InplaceBinOp { op, .. } => Some(*op),
        Expr::Extension(node) => root_binop(ir, node).map(|(op, _, _)| op),
        _ => None,
    };
    let op = match binop {
        Some(BinOp::Add | BinOp::Sub) => RedOp::Add,
        Some(_) => RedOp::Mul,
        None => RedOp::Replay,
    };
    Ok(Some(Reduction {
        var: v,
        op,
        expr,
        acc_operand: acc,
    }))
}

/// The operator and operands of the binary operation an array expression's tree returns.
fn root_binop(ir: &FunctionIR, node: &numba_ir::ExtensionNode) -> Option<(BinOp, VarId, VarId)> {
    let stmts: Vec<&numba_ir::Inst> = node.blocks.values().flat_map(|b| &b.body).collect();
    let ret = stmts.iter().find_map(|i| match i.stmt {
        Stmt::Return { value } => Some(value),
        _ => None,
    })?;
    stmts.iter().find_map(|i| match i.stmt {
        Stmt::Assign { target, value } if target == ret => match ir.expr(value) {
            Expr::BinOp { op, lhs, rhs } => Some((*op, *lhs, *rhs)),
            _ => None,
        },
        _ => None,
    })
}

/// For an array expression `s op rest` (`op` one of `+ - * /`, `s` an accumulator copy
/// and used only there): which operand the accumulator is.
fn arrayexpr_root(
    ir: &FunctionIR,
    node: &numba_ir::ExtensionNode,
    copies: &BTreeSet<VarId>,
) -> Option<u8> {
    let (op, lhs, rhs) = root_binop(ir, node)?;
    if !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::TrueDiv) {
        return None;
    }
    let uses: usize = node
        .blocks
        .values()
        .flat_map(|b| &b.body)
        .map(|i| {
            ir.stmt_vars(&i.stmt)
                .iter()
                .filter(|v| copies.contains(v))
                .count()
        })
        .sum();
    // The accumulator appears once as the root's operand; the root statement lists it
    // once, so it is used nowhere else.
    if uses != 1 {
        return None;
    }
    if copies.contains(&lhs) {
        Some(0)
    } else if copies.contains(&rhs) && matches!(op, BinOp::Add | BinOp::Mul) {
        Some(1)
    } else {
        None
    }
}
