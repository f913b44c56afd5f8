//! `literal_unroll`: loops over a tuple whose items have different types, unrolled once
//! per item before SSA and typing, so each copy of the body is typed for its own item.
//!
//! Numba versions the loop body per item type behind a switch on the index; unrolling
//! gives the same results (each iteration sees its item with its exact type, literal
//! strings and ints included) with simpler IR, at the cost of one body copy per item.
//! Two loop shapes are unrolled, as Numba accepts them:
//!
//! - `for x in literal_unroll(tup): body`: copy `k` binds `x = tup[k]` (a static item);
//! - `for i in range(len(literal_unroll(tup))): body`: copy `k` binds `i = k`, a
//!   constant, so `tup[i]` becomes a static item by the constant-getitem rewrite.
//!
//! `continue` goes to the next copy, `break` leaves as before. Every `literal_unroll(x)`
//! call becomes `x` itself (Numba's is the identity on anything but such loops). The
//! tuple's length must be known before typing: a `(...)` built in the function, a global
//! or closure tuple, or an argument (the host supplies arguments' lengths).

use std::collections::{BTreeSet, HashMap, HashSet};

use numba_bytecode::Constant;

use crate::error::IrError;
use crate::global::GlobalKind;
use crate::ir::*;
use crate::utils::{single_def, single_def_site};

/// The name the host gives the `literal_unroll` function ([`GlobalKind::Intrinsic`]).
pub const LITERAL_UNROLL: &str = "literal_unroll";

/// How a loop binds its variable in each unrolled copy.
#[derive(Clone, Copy)]
enum Binding {
    /// `for x in literal_unroll(tup)`: the item.
    Item,
    /// `for i in range(len(literal_unroll(tup)))`: the index.
    Index,
}

/// Unroll every `literal_unroll` loop of `ir` and make the calls identities.
/// `arg_len(i)` is the length of argument `i` when it is a tuple. Returns whether
/// anything changed.
pub fn literal_unroll(
    ir: &mut FunctionIR,
    arg_len: &dyn Fn(u32) -> Result<usize, String>,
) -> Result<bool, IrError> {
    let calls = find_calls(ir)?;
    if calls.is_empty() {
        return Ok(false);
    }
    for (_, _, arg, line) in &calls {
        check_argument(ir, *arg, *line, arg_len)?;
    }
    let calls: Vec<(VarId, ExprId, VarId)> =
        calls.into_iter().map(|(t, e, a, _)| (t, e, a)).collect();
    let arg_len = |i: u32| arg_len(i).ok();
    let arg_len = &arg_len;
    // The calls become copies of their argument.
    let mut unrolled: HashMap<VarId, VarId> = HashMap::new();
    for (target, expr, arg) in &calls {
        ir.exprs[expr.0 as usize] = Expr::Var(*arg);
        unrolled.insert(*target, *arg);
    }
    check_no_nesting(ir, &unrolled)?;
    // Unroll loops one at a time: each unrolling renumbers blocks.
    for _ in 0..64 {
        let Some((getiter, iter_expr, value, binding, tuple)) = find_loop(ir, &unrolled) else {
            break;
        };
        let Some(n) = tuple_len(ir, tuple, arg_len, 0) else {
            // Unknown length: left as a loop; typing says why it cannot iterate.
            unrolled.retain(|_, a| *a != tuple);
            continue;
        };
        if !unroll_loop(ir, getiter, iter_expr, value, binding, tuple, n) {
            unrolled.retain(|_, a| *a != tuple);
        }
    }
    // The tuple, the iterator and the `literal_unroll` global are left unused: a tuple
    // numba-rs cannot hold as a value (of strings, say) must not reach lowering.
    crate::utils::dead_code_elimination(ir);
    Ok(true)
}

/// `target = call literal_unroll(arg)`: (target, the call's expression, arg, line).
/// A call with another number of arguments is Numba's UnsupportedError.
fn find_calls(ir: &FunctionIR) -> Result<Vec<(VarId, ExprId, VarId, u32)>, IrError> {
    let mut out = Vec::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            let Stmt::Assign { target, value } = &inst.stmt else {
                continue;
            };
            let Expr::Call {
                func, args, kws, ..
            } = ir.expr(*value)
            else {
                continue;
            };
            if !is_literal_unroll(ir, *func) {
                continue;
            }
            if args.len() + kws.len() != 1 || !kws.is_empty() {
                return Err(IrError::Unsupported {
                    message: format!(
                        "literal_unroll takes one argument, found {}",
                        args.len() + kws.len()
                    ),
                    line: inst.loc.line,
                });
            }
            out.push((*target, *value, args[0], inst.loc.line));
        }
    }
    Ok(out)
}

/// The variable `v` copies, followed to its source (`v` itself when it is no copy).
fn copied_from(ir: &FunctionIR, v: VarId) -> VarId {
    let mut v = v;
    for _ in 0..16 {
        match single_def(ir, v) {
            Some(Expr::Var(src)) => v = *src,
            _ => break,
        }
    }
    v
}

/// Numba's checks of what `literal_unroll` is given, and its one rewrite: a list of
/// constants built in the function becomes a tuple (every use of it sees the tuple, as
/// Numba's `TransformLiteralUnrollConstListToTuple` makes it).
fn check_argument(
    ir: &mut FunctionIR,
    arg: VarId,
    line: u32,
    arg_len: &dyn Fn(u32) -> Result<usize, String>,
) -> Result<(), IrError> {
    let unsupported = |message: String, line: u32| IrError::Unsupported { message, line };
    let invalid = |extra: &str, line: u32| {
        unsupported(
            format!(
                "Invalid use of literal_unroll, argument should be a tuple or a list of \
                 constant values. Failure reason: found {extra}"
            ),
            line,
        )
    };
    let source = copied_from(ir, arg);
    let Some((expr, def_line)) = single_def_site(ir, source).map(|(e, loc)| (e, loc.line)) else {
        return Err(invalid(
            &format!("multiple definitions of variable \"{}\".", ir.var_name(arg)),
            line,
        ));
    };
    match ir.expr(expr).clone() {
        Expr::BuildList { items } => {
            for (i, item) in items.iter().enumerate() {
                let constant = match through_copies(ir, *item) {
                    Some(Expr::Const(_)) => true,
                    Some(Expr::Global { value, .. } | Expr::FreeVar { value, .. }) => {
                        matches!(value.kind, GlobalKind::Const(_))
                    }
                    _ => false,
                };
                if !constant {
                    return Err(unsupported(
                        format!(
                            "Found non-constant value at position {i} in a list argument to \
                             literal_unroll"
                        ),
                        def_line,
                    ));
                }
            }
            ir.exprs[expr.0 as usize] = Expr::BuildTuple { items };
            Ok(())
        }
        Expr::Arg { index, .. } => match arg_len(index) {
            Ok(_) => Ok(()),
            Err(ty) => Err(unsupported(
                format!(
                    "Invalid use of literal_unroll with a function argument, only tuples are \
                     supported as function arguments, found {ty}"
                ),
                def_line,
            )),
        },
        Expr::GetItem { value, .. } | Expr::StaticGetItem { value, .. } => {
            let of_list = matches!(through_copies(ir, value), Some(Expr::BuildList { .. }));
            if of_list {
                Err(invalid("operation getitem", def_line))
            } else {
                Ok(())
            }
        }
        Expr::Const(Constant::Tuple(_)) => Ok(()),
        Expr::Const(_) => Err(invalid("unknown problem", def_line)),
        Expr::Global { value, .. } | Expr::FreeVar { value, .. } => match &value.kind {
            GlobalKind::Const(Constant::Tuple(_)) | GlobalKind::Tuple(_) => Ok(()),
            GlobalKind::Const(_) => Err(invalid("unknown problem", def_line)),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

fn is_literal_unroll(ir: &FunctionIR, func: VarId) -> bool {
    match through_copies(ir, func) {
        Some(Expr::Global { value, .. } | Expr::FreeVar { value, .. }) => {
            matches!(&value.kind, GlobalKind::Intrinsic(n) if n == LITERAL_UNROLL)
        }
        // `numba.literal_unroll(t)` through the module.
        Some(Expr::GetAttr { value, attr }) if attr == LITERAL_UNROLL => matches!(
            through_copies(ir, *value),
            Some(Expr::Global { value, .. } | Expr::FreeVar { value, .. })
                if matches!(&value.kind, GlobalKind::Module(m) if m == "numba" || m == "numba_rs")
        ),
        _ => false,
    }
}

/// The single definition of `v`, followed through copies.
fn through_copies(ir: &FunctionIR, v: VarId) -> Option<&Expr> {
    let mut v = v;
    for _ in 0..16 {
        let e = single_def(ir, v)?;
        match e {
            Expr::Var(src) => v = *src,
            _ => return Some(e),
        }
    }
    None
}

/// The variable every definition of `v` copies, if they all copy the same one (copies
/// of a loop body repeat the body's copies).
fn copy_source(ir: &FunctionIR, v: VarId) -> Option<VarId> {
    let mut src = None;
    for inst in ir.blocks.values().flat_map(|b| &b.body) {
        if let Stmt::Assign { target, value } = &inst.stmt {
            if *target == v {
                match (ir.expr(*value), src) {
                    (Expr::Var(s), None) => src = Some(*s),
                    (Expr::Var(s), Some(prev)) if *s == prev => {}
                    _ => return None,
                }
            }
        }
    }
    src
}

/// A loop over an unrolled value: the block and position of its `getiter`, the
/// getiter's expression, the iterated variable, how copies bind the loop variable,
/// and the tuple.
fn find_loop(
    ir: &FunctionIR,
    unrolled: &HashMap<VarId, VarId>,
) -> Option<(Label, ExprId, VarId, Binding, VarId)> {
    // An unrolled value, through copies of it.
    let tuple_of = |v: VarId| -> Option<VarId> {
        let mut v = v;
        for _ in 0..16 {
            if let Some(t) = unrolled.get(&v) {
                return Some(*t);
            }
            v = copy_source(ir, v)?;
        }
        None
    };
    let is_call_to = |func: VarId, name: &str| {
        matches!(
            through_copies(ir, func),
            Some(Expr::Global { value, .. }) if matches!(&value.kind, GlobalKind::Builtin(n) if n == name)
        )
    };
    for (&label, block) in &ir.blocks {
        for inst in &block.body {
            let Stmt::Assign { value, .. } = &inst.stmt else {
                continue;
            };
            let Expr::GetIter { value: it } = ir.expr(*value) else {
                continue;
            };
            if let Some(t) = tuple_of(*it) {
                return Some((label, *value, *it, Binding::Item, t));
            }
            // range(len(literal_unroll(t)))
            if let Some(Expr::Call {
                func, args, kws, ..
            }) = through_copies(ir, *it)
            {
                if args.len() == 1 && kws.is_empty() && is_call_to(*func, "range") {
                    if let Some(Expr::Call {
                        func: lf,
                        args: la,
                        kws: lk,
                        ..
                    }) = through_copies(ir, args[0])
                    {
                        if la.len() == 1 && lk.is_empty() && is_call_to(*lf, "len") {
                            if let Some(t) = tuple_of(la[0]) {
                                return Some((label, *value, *it, Binding::Index, t));
                            }
                        }
                    }
                }
            }
        }
    }
    None
}

/// Numba's rule: a `literal_unroll` loop may not sit in the body of another (a loop
/// entered on a path that leaves the outer loop, after which it `break`s, is not in its
/// body). Bodies are natural loops: the blocks that reach a back edge of the header
/// without passing through the header.
fn check_no_nesting(ir: &FunctionIR, unrolled: &HashMap<VarId, VarId>) -> Result<(), IrError> {
    let succs = |l: Label| -> Vec<Label> {
        ir.blocks
            .get(&l)
            .and_then(|b| b.terminator())
            .map(|t| t.successors())
            .unwrap_or_default()
    };
    let mut preds: HashMap<Label, Vec<Label>> = HashMap::new();
    for &l in ir.blocks.keys() {
        for s in succs(l) {
            preds.entry(s).or_default().push(l);
        }
    }
    // Every unrolled loop's header (the block its getiter's block jumps to) and line.
    let mut headers: Vec<(Label, u32)> = Vec::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            let Stmt::Assign { value, .. } = &inst.stmt else {
                continue;
            };
            let Expr::GetIter { value: it } = ir.expr(*value) else {
                continue;
            };
            let mut v = *it;
            let mut found = false;
            for _ in 0..16 {
                if unrolled.contains_key(&v) {
                    found = true;
                    break;
                }
                match copy_source(ir, v) {
                    Some(src) => v = src,
                    None => break,
                }
            }
            if found {
                if let Some(Stmt::Jump { target }) = block.terminator() {
                    headers.push((*target, inst.loc.line));
                }
            }
        }
    }
    if headers.len() < 2 {
        return Ok(());
    }
    // Dominators (iterative; functions have few blocks): a latch is a predecessor of the
    // header that the header dominates.
    let labels: Vec<Label> = ir.blocks.keys().copied().collect();
    let entry = labels.iter().copied().min();
    let all: HashSet<Label> = labels.iter().copied().collect();
    let mut dom: HashMap<Label, HashSet<Label>> = labels
        .iter()
        .map(|&l| {
            let d = if Some(l) == entry {
                HashSet::from([l])
            } else {
                all.clone()
            };
            (l, d)
        })
        .collect();
    loop {
        let mut changed = false;
        for &l in &labels {
            if Some(l) == entry {
                continue;
            }
            let mut d: Option<HashSet<Label>> = None;
            for p in preds.get(&l).into_iter().flatten() {
                let pd = &dom[p];
                d = Some(match d {
                    None => pd.clone(),
                    Some(acc) => acc.intersection(pd).copied().collect(),
                });
            }
            let mut d = d.unwrap_or_default();
            d.insert(l);
            if d != dom[&l] {
                dom.insert(l, d);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let body = |h: Label| -> HashSet<Label> {
        let mut out: HashSet<Label> = HashSet::from([h]);
        let mut work: Vec<Label> = preds
            .get(&h)
            .map(|p| {
                p.iter()
                    .copied()
                    .filter(|l| dom.get(l).is_some_and(|d| d.contains(&h)))
                    .collect()
            })
            .unwrap_or_default();
        while let Some(l) = work.pop() {
            if out.insert(l) {
                work.extend(preds.get(&l).into_iter().flatten().copied());
            }
        }
        out
    };
    for &(outer, _) in &headers {
        let inside = body(outer);
        if let Some(&(_, line)) = headers
            .iter()
            .find(|(h, _)| *h != outer && inside.contains(h))
        {
            return Err(IrError::Unsupported {
                message: "Nesting of literal_unroll is unsupported".into(),
                line,
            });
        }
    }
    Ok(())
}

/// A tuple's length when it is known before typing.
fn tuple_len(
    ir: &FunctionIR,
    v: VarId,
    arg_len: &dyn Fn(u32) -> Option<usize>,
    depth: u32,
) -> Option<usize> {
    if depth > 16 {
        return None;
    }
    match single_def(ir, v)? {
        Expr::Var(src) => tuple_len(ir, *src, arg_len, depth + 1),
        Expr::BuildTuple { items } => Some(items.len()),
        Expr::GetItem { value, index } => {
            let n = tuple_len(ir, *value, arg_len, depth + 1)?;
            Some(const_slice(ir, *index, n)?.len())
        }
        Expr::Arg { index, .. } => arg_len(*index),
        Expr::Const(Constant::Tuple(items)) => Some(items.len()),
        // A namedtuple made in the function from positional fields.
        Expr::Call {
            func, args, kws, ..
        } if kws.is_empty() => match through_copies(ir, *func) {
            Some(Expr::Global { value, .. } | Expr::FreeVar { value, .. }) => match &value.kind {
                GlobalKind::NamedTupleClass { fields, .. } if fields.len() == args.len() => {
                    Some(args.len())
                }
                _ => None,
            },
            _ => None,
        },
        Expr::Global { value, .. } | Expr::FreeVar { value, .. } => match &value.kind {
            GlobalKind::Const(Constant::Tuple(items)) => Some(items.len()),
            GlobalKind::Tuple(items) => Some(items.len()),
            _ => None,
        },
        _ => None,
    }
}

/// Unroll the loop whose iterator `getiter` (in block `b0`) makes; false when the loop
/// does not have the shape the interpreter gives `for` loops.
fn unroll_loop(
    ir: &mut FunctionIR,
    b0: Label,
    getiter: ExprId,
    iterated: VarId,
    binding: Binding,
    tuple: VarId,
    n: usize,
) -> bool {
    // The iterator variable(s): the getiter's target and its copies in b0.
    let Some(iter_var) = ir.blocks[&b0].body.iter().find_map(|i| match i.stmt {
        Stmt::Assign { target, value } if value == getiter => Some(target),
        _ => None,
    }) else {
        return false;
    };
    let Some(Stmt::Jump { target: header }) = ir.blocks[&b0].terminator().cloned() else {
        return false;
    };
    // The header: `$n = iternext($it)`, `$f = pair_first($n)`, `$s = pair_second($n)`,
    // copies, `branch $s, body, exit`.
    let Some(head) = ir.blocks.get(&header) else {
        return false;
    };
    let Some(Stmt::Branch {
        truebr: body_entry,
        falsebr: exit,
        ..
    }) = head.terminator().cloned()
    else {
        return false;
    };
    // The iterator and its copies made in b0 (the header reads one of them; after an
    // outer unrolling these names are assigned in every copy, so follow b0 alone).
    let mut iters: HashSet<VarId> = HashSet::from([iter_var]);
    for inst in &ir.blocks[&b0].body {
        if let Stmt::Assign { target, value } = &inst.stmt {
            if let Expr::Var(src) = ir.expr(*value) {
                if iters.contains(src) {
                    iters.insert(*target);
                }
            }
        }
    }
    let mut next_var = None;
    let mut first_var = None;
    let mut rest: Vec<Inst> = Vec::new();
    for inst in &head.body[..head.body.len() - 1] {
        if let Stmt::Assign { target, value } = &inst.stmt {
            match ir.expr(*value) {
                Expr::IterNext { value: it } if iters.contains(it) => {
                    next_var = Some(*target);
                    continue;
                }
                Expr::PairFirst { value: p } if Some(*p) == next_var => {
                    first_var = Some(*target);
                    continue;
                }
                Expr::PairSecond { value: p } if Some(*p) == next_var => continue,
                _ => {}
            }
        }
        rest.push(inst.clone());
    }
    let Some(first_var) = first_var else {
        return false;
    };
    // The loop's blocks: reachable from the body entry without passing the header, and
    // reaching the header again.
    let succs = |l: Label, ir: &FunctionIR| -> Vec<Label> {
        ir.blocks
            .get(&l)
            .and_then(|b| b.terminator())
            .map(|t| t.successors())
            .unwrap_or_default()
    };
    let mut reach: BTreeSet<Label> = BTreeSet::new();
    let mut work = vec![body_entry];
    while let Some(l) = work.pop() {
        if l == header || !reach.insert(l) {
            continue;
        }
        work.extend(succs(l, ir));
    }
    let mut in_loop: BTreeSet<Label> = BTreeSet::new();
    loop {
        let before = in_loop.len();
        for &l in &reach {
            if in_loop.contains(&l) {
                continue;
            }
            if succs(l, ir)
                .iter()
                .any(|s| *s == header || in_loop.contains(s))
            {
                in_loop.insert(l);
            }
        }
        if in_loop.len() == before {
            break;
        }
    }
    if !in_loop.contains(&body_entry) && body_entry != exit {
        // A body that never loops back (it always breaks or returns): still one copy
        // per item, entered in turn.
        in_loop.insert(body_entry);
    }
    let loc = ir.block_locs.get(&header).copied();
    let line_loc = head.body.last().map(|i| i.loc);
    let mut next_label = ir.blocks.keys().next_back().copied().unwrap_or(0) + 2;
    let mut fresh = || {
        let l = next_label;
        next_label += 2;
        l
    };
    // Labels of each copy: its entry block, then its body blocks.
    let copies: Vec<(Label, HashMap<Label, Label>)> = (0..n)
        .map(|_| {
            let entry = fresh();
            let map = in_loop.iter().map(|&l| (l, fresh())).collect();
            (entry, map)
        })
        .collect();
    let mut new_blocks: Vec<(Label, Block)> = Vec::new();
    for (k, (entry, map)) in copies.iter().enumerate() {
        let after = copies.get(k + 1).map(|c| c.0).unwrap_or(exit);
        let relabel = |t: Label| -> Label {
            if t == header {
                after
            } else {
                map.get(&t).copied().unwrap_or(t)
            }
        };
        // The entry binds the loop variable, then runs the header's other statements.
        let item = match binding {
            Binding::Item => item_expr(ir, tuple, k),
            Binding::Index => Expr::Const(Constant::Int(k as i64)),
        };
        let mut body = Vec::new();
        let here = line_loc.unwrap_or_default();
        body.push(Inst {
            stmt: Stmt::Assign {
                target: first_var,
                value: push_expr(ir, item),
            },
            loc: here,
        });
        for inst in &rest {
            body.push(clone_inst(ir, inst));
        }
        let to_body = if in_loop.contains(&body_entry) {
            map[&body_entry]
        } else {
            relabel(body_entry)
        };
        body.push(Inst {
            stmt: Stmt::Jump { target: to_body },
            loc: here,
        });
        new_blocks.push((*entry, Block { body }));
        for &l in &in_loop {
            let mut block = Block::default();
            let src: Vec<Inst> = ir.blocks[&l].body.clone();
            for inst in &src {
                let mut c = clone_inst(ir, inst);
                match &mut c.stmt {
                    Stmt::Jump { target } => *target = relabel(*target),
                    Stmt::Branch {
                        truebr, falsebr, ..
                    } => {
                        *truebr = relabel(*truebr);
                        *falsebr = relabel(*falsebr);
                    }
                    Stmt::EnterWith { begin, end, .. } => {
                        *begin = relabel(*begin);
                        *end = relabel(*end);
                    }
                    _ => {}
                }
                block.body.push(c);
            }
            new_blocks.push((map[&l], block));
        }
    }
    // Enter the first copy (or leave at once for an empty tuple); the iterator is the
    // iterated value itself now, never iterated.
    ir.exprs[getiter.0 as usize] = Expr::Var(iterated);
    if let Some(b) = ir.blocks.get_mut(&b0) {
        if let Some(last) = b.body.last_mut() {
            last.stmt = Stmt::Jump {
                target: copies.first().map(|c| c.0).unwrap_or(exit),
            };
        }
    }
    let old: HashSet<Label> = in_loop.iter().copied().chain([header]).collect();
    for l in &old {
        ir.blocks.remove(l);
    }
    for (l, b) in new_blocks {
        if let Some(loc) = &loc {
            ir.block_locs.insert(l, *loc);
        }
        ir.blocks.insert(l, b);
    }
    crate::utils::remove_unreachable_blocks(ir);
    true
}

/// The positions `tuple[s]` takes from a tuple of `n` items, for `s` a `slice(...)` of
/// constants (Python's `slice.indices`).
fn const_slice(ir: &FunctionIR, index: VarId, n: usize) -> Option<Vec<usize>> {
    let Some(Expr::Call {
        func, args, kws, ..
    }) = through_copies(ir, index)
    else {
        return None;
    };
    let is_slice = matches!(
        through_copies(ir, *func),
        Some(Expr::Global { value, .. }) if matches!(&value.kind, GlobalKind::Builtin(b) if b == "slice")
    );
    if !is_slice || !kws.is_empty() || args.is_empty() || args.len() > 3 {
        return None;
    }
    let mut parts = Vec::new();
    for a in args {
        parts.push(match through_copies(ir, *a)? {
            Expr::Const(Constant::Int(i)) => Some(*i),
            Expr::Const(Constant::None) => None,
            _ => return None,
        });
    }
    let (start, stop, step) = match parts.as_slice() {
        [stop] => (None, *stop, None),
        [start, stop] => (*start, *stop, None),
        [start, stop, step] => (*start, *stop, *step),
        _ => return None,
    };
    let n = n as i64;
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let clamp = |v: Option<i64>, lo: i64, hi: i64, default: i64| match v {
        None => default,
        Some(v) if v < 0 => (v + n).clamp(lo, hi),
        Some(v) => v.clamp(lo, hi),
    };
    let mut out = Vec::new();
    if step > 0 {
        let (a, b) = (clamp(start, 0, n, 0), clamp(stop, 0, n, n));
        let mut i = a;
        while i < b {
            out.push(i as usize);
            i += step;
        }
    } else {
        let (a, b) = (clamp(start, -1, n - 1, n - 1), clamp(stop, -1, n - 1, -1));
        let mut i = a;
        while i > b {
            out.push(i as usize);
            i += step;
        }
    }
    Some(out)
}

/// Item `k` of `tuple`: the constant itself when the tuple is made of constants or of
/// variables assigned once (so a literal item keeps its literal type, as Numba types a
/// constant tuple's items), else `tuple[k]`.
fn item_expr(ir: &FunctionIR, tuple: VarId, k: usize) -> Expr {
    let from_constant = |items: &[Constant]| match items.get(k) {
        Some(
            c @ (Constant::Int(_) | Constant::Bool(_) | Constant::Str(_) | Constant::Float(_)),
        ) => Some(Expr::Const(c.clone())),
        _ => None,
    };
    let known = match through_copies(ir, tuple) {
        // `base[slice]`: the base's item at the slice's k-th position.
        Some(Expr::GetItem { value, index }) => {
            let base = *value;
            let n = match through_copies(ir, base) {
                Some(Expr::BuildTuple { items }) => Some(items.len()),
                Some(Expr::Const(Constant::Tuple(items))) => Some(items.len()),
                _ => None,
            };
            match n
                .and_then(|n| const_slice(ir, *index, n))
                .and_then(|p| p.get(k).copied())
            {
                Some(j) => return item_expr(ir, base, j),
                None => None,
            }
        }
        Some(Expr::BuildTuple { items }) => items
            .get(k)
            .filter(|v| single_def(ir, **v).is_some())
            .map(|v| Expr::Var(*v)),
        Some(Expr::Const(Constant::Tuple(items))) => from_constant(items),
        // A global tuple's items are typed by their values, not as literals (Numba's
        // typeof): read through the tuple.
        _ => None,
    };
    known.unwrap_or(Expr::StaticGetItem {
        value: tuple,
        index: k as i64,
        index_var: None,
    })
}

fn push_expr(ir: &mut FunctionIR, e: Expr) -> ExprId {
    ir.exprs.push(e);
    ExprId(ir.exprs.len() as u32 - 1)
}

/// A copy of an instruction with its own expression.
fn clone_inst(ir: &mut FunctionIR, inst: &Inst) -> Inst {
    let mut c = inst.clone();
    if let Stmt::Assign { value, .. } = &mut c.stmt {
        let e = ir.expr(*value).clone();
        *value = push_expr(ir, e);
    }
    c
}
