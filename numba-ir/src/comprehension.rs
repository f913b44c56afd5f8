//! Array comprehensions: `np.array([expr for x in it])` without a list (Numba's
//! `_inline_arraycall` and `_fix_nested_array` in `inline_closurecall.py`).
//!
//! After a comprehension's function is inlined, the caller holds an empty `build_list`, a
//! loop appending one value per iteration and an `np.array(list)` call after the loop. When
//! the list is used for nothing else and the loop appends exactly once per iteration, the
//! list becomes an array allocated before the loop with the iterator's length, each append
//! a store at the iteration's position and the `np.array` call the array itself. With
//! `parallel=` (its `comprehension` option) a `range` loop becomes an internal `prange`,
//! so the parfor pass runs it in parallel.
//!
//! A comprehension of comprehensions (`[[f(i, j) for j in range(m)] for i in range(n)]`)
//! becomes one N-d array when the inner sizes can be computed before the outer loop: the
//! inner arrays are views of the outer one's rows.
//!
//! The allocation is the intrinsic [`EMPTY_INFERRED`] (its dtype is the type of the stored
//! values, which typing infers) or `np.empty(size, dtype=...)` when `np.array` was given a
//! dtype; the size is the intrinsic [`LENGTH_OF_ITERATOR`] of what the loop iterates.
//! Anything else (a filter, a `break`, a second use of the list) is left alone.

use std::collections::{BTreeSet, HashMap};

use numba_bytecode::Constant;

use crate::ir::*;
use crate::utils::{dead_code_elimination, fresh_name, merge_blocks, DefUse};
use crate::{Global, GlobalKind};

/// `array = empty_inferred(shape)`: a C-contiguous array whose dtype typing infers from the
/// values stored into it.
pub const EMPTY_INFERRED: &str = "empty_inferred";
/// `n = length_of_iterator(iterable)`: how many items iterating `iterable` yields.
pub const LENGTH_OF_ITERATOR: &str = "length_of_iterator";
/// The name of the internal `prange` an array comprehension's `range` becomes under
/// `parallel=` (a `numba_rs` module function, typed as `range`).
pub const INTERNAL_PRANGE: &str = "internal_prange";

/// Rewrite every array comprehension of `ir` (see the module doc); `parallel` turns their
/// `range` loops into internal `prange` loops. Returns whether anything changed.
pub fn inline_array_comprehensions(ir: &mut FunctionIR, parallel: bool) -> bool {
    // Most functions build no empty list: they pay one scan of the expressions.
    let empty_list = |e: &Expr| matches!(e, Expr::BuildList { items } if items.is_empty());
    if !ir.exprs.iter().any(empty_list) {
        return false;
    }
    // The inlined comprehension's entry and exit are blocks of their own: merged, the
    // list is built in the loop's entry block and `np.array` is called in its exit block.
    merge_blocks(ir);
    // Outer comprehensions first: rewriting one makes its appends stores of the inner
    // lists into an array, which makes the inner ones candidates.
    let mut tried = BTreeSet::new();
    let mut changed = false;
    while let Some(list) = candidates(ir).into_iter().find(|l| !tried.contains(l)) {
        tried.insert(list);
        changed |= rewrite(ir, list, parallel).is_some();
    }
    if changed {
        fix_nested(ir);
        while dead_code_elimination(ir) {}
    }
    changed
}

/// The single definitions of variables (statement position and expression); variables
/// defined more than once are absent.
pub(crate) struct Defs {
    pub(crate) at: HashMap<VarId, (Label, usize, ExprId)>,
}

impl Defs {
    pub(crate) fn compute(ir: &FunctionIR) -> Defs {
        let mut at = HashMap::new();
        let mut many = BTreeSet::new();
        for (&l, b) in &ir.blocks {
            for (i, inst) in b.body.iter().enumerate() {
                if let Stmt::Assign { target, value } = inst.stmt {
                    if at.insert(target, (l, i, value)).is_some() {
                        many.insert(target);
                    }
                }
            }
        }
        for v in many {
            at.remove(&v);
        }
        Defs { at }
    }

    pub(crate) fn expr<'a>(&self, ir: &'a FunctionIR, v: VarId) -> Option<&'a Expr> {
        self.at.get(&v).map(|&(_, _, e)| ir.expr(e))
    }

    /// `v` followed through copies and casts to the variable holding the value.
    pub(crate) fn root(&self, ir: &FunctionIR, mut v: VarId) -> VarId {
        for _ in 0..32 {
            match self.expr(ir, v) {
                Some(Expr::Var(s)) | Some(Expr::Cast { value: s }) => v = *s,
                _ => break,
            }
        }
        v
    }

    pub(crate) fn root_expr<'a>(&self, ir: &'a FunctionIR, v: VarId) -> Option<&'a Expr> {
        self.expr(ir, self.root(ir, v))
    }

    pub(crate) fn global<'a>(&self, ir: &'a FunctionIR, v: VarId) -> Option<&'a Global> {
        match self.root_expr(ir, v)? {
            Expr::Global { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Whether `v` is the NumPy function `name` (`np.name` or `from numpy import name`).
    pub(crate) fn is_numpy(&self, ir: &FunctionIR, v: VarId, name: &str) -> bool {
        match self.root_expr(ir, v) {
            Some(Expr::GetAttr { value, attr }) if attr == name => matches!(
                self.global(ir, *value).map(|g| &g.kind),
                Some(GlobalKind::Module(m)) if m == "numpy"
            ),
            Some(Expr::Global { value, .. }) => matches!(
                &value.kind,
                GlobalKind::ModuleFunction { module, name: n } if module == "numpy" && n == name
            ),
            _ => false,
        }
    }

    pub(crate) fn is_builtin(&self, ir: &FunctionIR, v: VarId, name: &str) -> bool {
        matches!(self.global(ir, v).map(|g| &g.kind), Some(GlobalKind::Builtin(b)) if b == name)
    }
}

/// The variables holding empty lists built by `build_list`, outermost loops' first (by
/// the size of the loops around them, then by position).
fn candidates(ir: &FunctionIR) -> Vec<VarId> {
    let cfg = ir.cfg();
    let mut out = Vec::new();
    for (&l, b) in &ir.blocks {
        for inst in &b.body {
            if let Stmt::Assign { target, value } = inst.stmt {
                if matches!(ir.expr(value), Expr::BuildList { items } if items.is_empty()) {
                    out.push((cfg.in_loops(l).len(), target));
                }
            }
        }
    }
    out.sort();
    out.into_iter().map(|(_, v)| v).collect()
}

/// What consumes the finished list.
enum Consumer {
    /// `x = np.array(list[, dtype])`, with the dtype variable.
    Call { dtype: Option<VarId> },
    /// `outer[i] = list` where `outer` is an array comprehension's allocation (a nested
    /// comprehension).
    Store,
}

/// What the comprehension's loop iterates, as far as its length and index go.
enum Iterated {
    /// `range(args)` (1 to 3 arguments), by the callee variable.
    Range { func: VarId, args: Vec<VarId> },
    /// Anything else: its length is `length_of_iterator(source)`.
    Other { source: VarId },
}

/// Rewrite the comprehension building the list `built`; `None` (and nothing changed)
/// when it does not qualify.
fn rewrite(ir: &mut FunctionIR, built: VarId, parallel: bool) -> Option<()> {
    let found = find(ir, built)?;
    apply(ir, found, parallel)
}

/// What [`find`] established about a comprehension, for [`apply`].
struct Found {
    defs: Defs,
    cfg: numba_bytecode::cfg::ControlFlowGraph,
    /// The list's variable and its names (copies).
    list: VarId,
    aliases: BTreeSet<VarId>,
    /// The consumer's block (the loop's exit) and position.
    exit: Label,
    call_index: usize,
    consumer: Consumer,
    dtype: Option<VarId>,
    /// `method = getattr(alias, append)` at `attr_index` and `appended = method(value)`
    /// at `call_at`, both in `body_block`.
    attr_index: usize,
    method: VarId,
    alias: VarId,
    body_block: Label,
    call_at: usize,
    appended: VarId,
    value: VarId,
    /// The loop: its entry block (and terminator's position), header, the iteration's
    /// `pair_first`, what it iterates and what gives its length.
    entry: Label,
    entry_end: usize,
    header: Label,
    /// The block the header branches to for another iteration.
    body_start: Label,
    first: VarId,
    iterated: Iterated,
    length_source: VarId,
}

/// Whether the list `built` is an array comprehension's (see the module doc).
fn find(ir: &FunctionIR, built: VarId) -> Option<Found> {
    let defs = Defs::compute(ir);
    let (entry, _, _) = *defs.at.get(&built)?;

    // Every name of the list: copies and casts of the built list.
    let mut aliases: BTreeSet<VarId> = BTreeSet::from([built]);
    loop {
        let before = aliases.len();
        for (&v, &(_, _, e)) in &defs.at {
            if let Expr::Var(s) | Expr::Cast { value: s } = ir.expr(e) {
                if aliases.contains(s) {
                    aliases.insert(v);
                }
            }
        }
        if aliases.len() == before {
            break;
        }
    }
    // The list is only copied, appended to once and consumed once.
    let du = DefUse::compute(ir);
    let mut append: Option<(Label, usize, VarId, VarId)> = None;
    let mut consumer: Option<(Label, usize, Consumer)> = None;
    for &a in &aliases {
        for &(l, i) in du.uses.get(&a).into_iter().flatten() {
            let inst = &ir.blocks[&l].body[i];
            match &inst.stmt {
                Stmt::Del { .. } => {}
                Stmt::Assign { target, .. } if aliases.contains(target) => {}
                Stmt::Assign { target, value } => match ir.expr(*value) {
                    Expr::GetAttr { attr, .. } if attr == "append" && append.is_none() => {
                        append = Some((l, i, *target, a));
                    }
                    Expr::Call {
                        func,
                        args,
                        kws,
                        vararg: None,
                        varkwarg: None,
                        ..
                    } if consumer.is_none()
                        && args.first() == Some(&a)
                        && args.len() <= 2
                        && defs.is_numpy(ir, *func, "array") =>
                    {
                        let mut dtype = args.get(1).copied();
                        for (k, v) in kws {
                            if k != "dtype" || dtype.is_some() {
                                return None;
                            }
                            dtype = Some(*v);
                        }
                        if dtype.is_some_and(|d| aliases.contains(&d)) {
                            return None;
                        }
                        consumer = Some((l, i, Consumer::Call { dtype }));
                    }
                    _ => return None,
                },
                Stmt::SetItem {
                    target,
                    index,
                    value,
                } if *value == a
                    && consumer.is_none()
                    && !aliases.contains(target)
                    && !aliases.contains(index)
                    && array_def(ir, &defs, *target, 0).is_some() =>
                {
                    consumer = Some((l, i, Consumer::Store));
                }
                _ => return None,
            }
        }
    }
    let (exit, call_index, consumer) = consumer?;
    let list = built;
    let dtype = match &consumer {
        Consumer::Call { dtype, .. } => *dtype,
        Consumer::Store => None,
    };
    let (attr_block, attr_index, method, alias) = append?;
    // The method is called once, with one value, and the call's result is unused.
    let real_uses = |v: VarId| -> Vec<(Label, usize)> {
        du.uses
            .get(&v)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&(l, i)| !matches!(ir.blocks[&l].body[i].stmt, Stmt::Del { .. }))
            .collect()
    };
    let [(body_block, call_at)] = real_uses(method)[..] else {
        return None;
    };
    let Stmt::Assign {
        target: appended,
        value: append_expr,
    } = ir.blocks[&body_block].body[call_at].stmt
    else {
        return None;
    };
    let Expr::Call {
        func,
        args: app_args,
        kws: app_kws,
        vararg: None,
        varkwarg: None,
        ..
    } = ir.expr(append_expr)
    else {
        return None;
    };
    if *func != method || app_args.len() != 1 || !app_kws.is_empty() {
        return None;
    }
    let value = app_args[0];
    if !real_uses(appended).is_empty() || attr_block != body_block {
        return None;
    }

    // The loop: the innermost one around the append, leaving only to the `np.array` call's
    // block, entered from the block that built the list, and the append on every path
    // back to its header.
    let cfg = ir.cfg();
    let header = *cfg.in_loops(body_block).first()?;
    let lp = cfg.loops.get(&header)?;
    if lp.exits.len() != 1 || !lp.exits.contains(&exit) || lp.entries.len() != 1 {
        return None;
    }
    if !lp.entries.contains(&entry) || header == body_block || entry == exit {
        return None;
    }
    let preds: BTreeSet<Label> = cfg.predecessors(header).collect();
    let mut expected = lp.entries.clone();
    expected.insert(body_block);
    if preds != expected {
        return None;
    }
    let mut iters = Vec::new();
    let mut firsts = Vec::new();
    for inst in &ir.blocks[&header].body {
        if let Stmt::Assign { target, value } = inst.stmt {
            match ir.expr(value) {
                Expr::IterNext { value } => iters.push(*value),
                Expr::PairFirst { .. } => firsts.push(target),
                _ => {}
            }
        }
    }
    let ([iter], [first]) = (&iters[..], &firsts[..]) else {
        return None;
    };
    let (iter, first) = (*iter, *first);
    let Some(&Expr::GetIter { value: iterable }) = defs.root_expr(ir, iter) else {
        return None;
    };
    let iterated = match defs.root_expr(ir, iterable) {
        Some(Expr::Call {
            func,
            args,
            kws,
            vararg: None,
            ..
        }) if kws.is_empty() && (1..=3).contains(&args.len()) && is_range(&defs, ir, *func) => {
            Iterated::Range {
                func: *func,
                args: args.clone(),
            }
        }
        Some(Expr::Call {
            func,
            args,
            kws,
            vararg: None,
            ..
        }) if kws.is_empty()
            && (1..=2).contains(&args.len())
            && defs.is_builtin(ir, *func, "enumerate") =>
        {
            Iterated::Other { source: args[0] }
        }
        // Other calls (`zip`, a generator) have no length known before the loop.
        Some(Expr::Call { .. }) => return None,
        _ => Iterated::Other { source: iterable },
    };
    let terminator = |ir: &FunctionIR, l: Label| ir.blocks[&l].body.len().saturating_sub(1);
    let entry_end = terminator(ir, entry);
    let available = |v: VarId| available_at(&defs, &cfg, v, (entry, entry_end));
    let length_source = match &iterated {
        Iterated::Range { .. } => iterable,
        Iterated::Other { source } => *source,
    };
    if !available(length_source) {
        return None;
    }
    // The dtype is read where the array is allocated, or computed again there.
    if dtype.is_some_and(|d| !rematerializable(ir, &defs, d, &available)) {
        return None;
    }
    // `range(m, n)`'s index is `i - m` where the body starts.
    let body_start = match ir.blocks[&header].terminator() {
        Some(Stmt::Branch { truebr, .. }) => *truebr,
        _ => return None,
    };

    Some(Found {
        list,
        aliases,
        exit,
        call_index,
        consumer,
        dtype,
        attr_index,
        method,
        alias,
        body_block,
        call_at,
        appended,
        value,
        entry,
        entry_end,
        header,
        body_start,
        first,
        iterated,
        length_source,
        defs,
        cfg,
    })
}

/// Rewrite the comprehension [`find`] found.
fn apply(ir: &mut FunctionIR, f: Found, parallel: bool) -> Option<()> {
    let Found {
        defs,
        cfg,
        list,
        aliases,
        exit,
        call_index,
        consumer,
        dtype,
        attr_index,
        method,
        alias,
        body_block,
        call_at,
        appended,
        value,
        entry,
        entry_end,
        header,
        body_start,
        first,
        iterated,
        length_source,
    } = f;
    let available = |v: VarId| available_at(&defs, &cfg, v, (entry, entry_end));
    // First everything that does not move statements in other blocks.
    let loc = ir.blocks[&entry].body[entry_end].loc;
    let new_var = |ir: &mut FunctionIR, base: &str| {
        let name = fresh_name(ir, base);
        ir.add_var(name, loc)
    };
    // `index`: the loop's own index for `range(n)` and `range(m, n)`, else a counter.
    enum Index {
        Same,
        Offset(VarId),
        Counter,
    }
    let (index_kind, prange_func) = match &iterated {
        Iterated::Range { func, args } if args.len() == 1 => (Index::Same, Some(*func)),
        Iterated::Range { func, args } if args.len() == 2 => (Index::Offset(args[0]), Some(*func)),
        _ => (Index::Counter, None),
    };
    let index = match index_kind {
        Index::Same => first,
        _ => new_var(ir, "index"),
    };
    let assign = |ir: &mut FunctionIR, target: VarId, e: Expr| Inst {
        stmt: Stmt::Assign {
            target,
            value: ir.add_expr(e),
        },
        loc,
    };

    // `np.array(list)` is the array (the list's name now holds it).
    if let Consumer::Call { .. } = consumer {
        let e = ir.add_expr(Expr::Var(list));
        if let Stmt::Assign { value, .. } = &mut ir.blocks.get_mut(&exit)?.body[call_index].stmt {
            *value = e;
        }
    }
    // The append stores at the iteration's position.
    {
        let body = &mut ir.blocks.get_mut(&body_block)?.body;
        body[call_at].stmt = Stmt::SetItem {
            target: alias,
            index,
            value,
        };
        body.remove(attr_index);
        body.retain(|i| !matches!(i.stmt, Stmt::Del { var } if var == method || var == appended));
    }
    match index_kind {
        Index::Same => {}
        Index::Offset(start) => {
            // index = i - start, where the body starts.
            let st = assign(
                ir,
                index,
                Expr::BinOp {
                    op: BinOp::Sub,
                    lhs: first,
                    rhs: start,
                },
            );
            ir.blocks.get_mut(&body_start)?.body.insert(0, st);
        }
        Index::Counter => {
            // index = index + 1 in the header (it starts at -1).
            let one = new_var(ir, "one");
            let next = new_var(ir, "next_index");
            let a = assign(ir, one, Expr::Const(Constant::Int(1)));
            let b = assign(
                ir,
                next,
                Expr::BinOp {
                    op: BinOp::Add,
                    lhs: index,
                    rhs: one,
                },
            );
            let c = assign(ir, index, Expr::Var(next));
            let hb = &mut ir.blocks.get_mut(&header)?.body;
            let at = hb.len() - 1;
            hb.splice(at..at, [a, b, c]);
        }
    }
    if parallel {
        if let Some(f) = prange_func {
            let root = defs.root(ir, f);
            if let Some(&(_, _, e)) = defs.at.get(&root) {
                if matches!(ir.expr(e), Expr::Global { value, .. } if value.kind == GlobalKind::Builtin("range".into()))
                {
                    ir.exprs[e.0 as usize] = Expr::Global {
                        name: INTERNAL_PRANGE.into(),
                        value: internal_prange(),
                    };
                }
            }
        }
    }

    // The entry block: the list's statements go; the allocation and the list's names
    // (now the array's) come before its terminator.
    let mut stmts = Vec::new();
    let len_func = new_var(ir, "len_func");
    stmts.push(assign(
        ir,
        len_func,
        Expr::Global {
            name: LENGTH_OF_ITERATOR.into(),
            value: Global::intrinsic(LENGTH_OF_ITERATOR),
        },
    ));
    let size = new_var(ir, "size");
    stmts.push(assign(
        ir,
        size,
        Expr::synthetic_call(len_func, vec![length_source]),
    ));
    let size_tuple = new_var(ir, "size_tuple");
    stmts.push(assign(
        ir,
        size_tuple,
        Expr::BuildTuple { items: vec![size] },
    ));
    let empty_func = new_var(ir, "empty_func");
    let array = new_var(ir, "array");
    match dtype {
        Some(d) => {
            let d = rematerialize(ir, &defs, d, loc, &mut stmts, &available)?;
            stmts.push(assign(
                ir,
                empty_func,
                Expr::Global {
                    name: "empty".into(),
                    value: Global {
                        kind: GlobalKind::ModuleFunction {
                            module: "numpy".into(),
                            name: "empty".into(),
                        },
                        repr: "<built-in function empty>".into(),
                    },
                },
            ));
            let call = Expr::Call {
                func: empty_func,
                args: vec![size_tuple],
                kws: vec![("dtype".into(), d)],
                vararg: None,
                varkwarg: None,
                form: CallForm::Keywords,
            };
            stmts.push(assign(ir, array, call));
        }
        None => {
            stmts.push(assign(
                ir,
                empty_func,
                Expr::Global {
                    name: "unsafe_empty_inferred".into(),
                    value: Global::intrinsic(EMPTY_INFERRED),
                },
            ));
            stmts.push(assign(
                ir,
                array,
                Expr::synthetic_call(empty_func, vec![size_tuple]),
            ));
        }
    }
    if matches!(index_kind, Index::Counter) {
        stmts.push(assign(ir, index, Expr::Const(Constant::Int(-1))));
    }
    let old = std::mem::take(&mut ir.blocks.get_mut(&entry)?.body);
    let (term, rest) = old.split_last()?;
    let mut kept = Vec::with_capacity(rest.len() + stmts.len() + 4);
    let mut renamed = Vec::new();
    for inst in rest {
        match inst.stmt {
            Stmt::Assign { target, .. } if aliases.contains(&target) => renamed.push(target),
            _ => kept.push(inst.clone()),
        }
    }
    kept.extend(stmts);
    for v in renamed {
        let st = assign(ir, v, Expr::Var(array));
        kept.push(st);
    }
    kept.push(term.clone());
    ir.blocks.get_mut(&entry)?.body = kept;
    Some(())
}

fn is_range(defs: &Defs, ir: &FunctionIR, f: VarId) -> bool {
    match defs.global(ir, f).map(|g| &g.kind) {
        Some(GlobalKind::Builtin(b)) => b == "range",
        Some(GlobalKind::ModuleFunction { module, name }) => {
            (module == "numba_rs" || module == "numba")
                && (name == "prange" || name == INTERNAL_PRANGE)
        }
        _ => false,
    }
}

/// The internal `prange` global.
pub fn internal_prange() -> Global {
    Global {
        kind: GlobalKind::ModuleFunction {
            module: "numba_rs".into(),
            name: INTERNAL_PRANGE.into(),
        },
        repr: format!("<function {INTERNAL_PRANGE}>"),
    }
}

/// Whether `v` holds its value at `(label, index)`: defined once, earlier in that block
/// or in a block that dominates it.
fn available_at(
    defs: &Defs,
    cfg: &numba_bytecode::cfg::ControlFlowGraph,
    v: VarId,
    (label, index): (Label, usize),
) -> bool {
    match defs.at.get(&v) {
        Some(&(l, i, _)) if l == label => i < index,
        Some(&(l, _, _)) => cfg.doms.get(&label).is_some_and(|d| d.contains(&l)),
        None => false,
    }
}

/// Expressions that may be evaluated again, earlier, without changing the program:
/// constants, globals and what is computed from them by attribute reads and `range` /
/// `len` / `length_of_iterator` calls, tuple building, item reads and arithmetic.
fn rematerializable(ir: &FunctionIR, defs: &Defs, v: VarId, avail: &dyn Fn(VarId) -> bool) -> bool {
    remat_ok(ir, defs, v, avail, 0)
}

/// The walk of [`rematerializable`]: variables available where the value is needed are
/// leaves.
fn remat_ok(
    ir: &FunctionIR,
    defs: &Defs,
    v: VarId,
    avail: &dyn Fn(VarId) -> bool,
    depth: u32,
) -> bool {
    let go = |x: VarId| remat_ok(ir, defs, x, avail, depth + 1);
    if avail(v) {
        return true;
    }
    if depth > 16 {
        return false;
    }
    let Some(e) = defs.expr(ir, v) else {
        return false;
    };
    match e {
        Expr::Arg { .. } | Expr::Const(_) | Expr::Global { .. } => true,
        Expr::Var(s) | Expr::Cast { value: s } | Expr::GetAttr { value: s, .. } => go(*s),
        Expr::StaticGetItem {
            value,
            index_var: None,
            ..
        } => go(*value),
        Expr::BinOp { lhs, rhs, .. } => go(*lhs) && go(*rhs),
        Expr::BuildTuple { items } => items.iter().all(|&i| go(i)),
        Expr::Call {
            func,
            args,
            kws,
            vararg: None,
            varkwarg: None,
            ..
        } if kws.is_empty() => {
            let pure = match defs.global(ir, *func).map(|g| &g.kind) {
                Some(GlobalKind::Builtin(b)) => b == "range" || b == "len",
                Some(GlobalKind::Intrinsic(n)) => n == LENGTH_OF_ITERATOR,
                Some(GlobalKind::ModuleFunction { name, .. }) => name == INTERNAL_PRANGE,
                _ => false,
            };
            pure && go(*func) && args.iter().all(|&a| go(a))
        }
        _ => false,
    }
}

/// `v` where `avail` says: itself when available there, else new statements (pushed to
/// `out`) computing it again from its definition. `None` when `v` is not
/// [`rematerializable`].
fn rematerialize(
    ir: &mut FunctionIR,
    defs: &Defs,
    v: VarId,
    loc: Loc,
    out: &mut Vec<Inst>,
    avail: &dyn Fn(VarId) -> bool,
) -> Option<VarId> {
    if !rematerializable(ir, defs, v, avail) {
        return None;
    }
    fn go(
        ir: &mut FunctionIR,
        defs: &Defs,
        v: VarId,
        loc: Loc,
        out: &mut Vec<Inst>,
        memo: &mut HashMap<VarId, VarId>,
        avail: &dyn Fn(VarId) -> bool,
    ) -> VarId {
        if let Some(&n) = memo.get(&v) {
            return n;
        }
        let e = defs
            .expr(ir, v)
            .cloned()
            .expect("checked by rematerializable");
        if avail(v) || matches!(e, Expr::Arg { .. }) {
            return v;
        }
        let mut e = e;
        let mut uses = Vec::new();
        e.for_each_use_mut(|u| uses.push(*u));
        let mapped: Vec<VarId> = uses
            .iter()
            .map(|&u| go(ir, defs, u, loc, out, memo, avail))
            .collect();
        let mut k = 0;
        e.for_each_use_mut(|u| {
            *u = mapped[k];
            k += 1;
        });
        let base = ir.vars[v.0 as usize].name.clone();
        let name = fresh_name(ir, &format!("{base}.hoisted"));
        let n = ir.add_var(name, loc);
        let value = ir.add_expr(e);
        out.push(Inst {
            stmt: Stmt::Assign { target: n, value },
            loc,
        });
        memo.insert(v, n);
        n
    }
    Some(go(ir, defs, v, loc, out, &mut HashMap::new(), avail))
}

/// The `empty_inferred` allocation `v` names (through copies): its variable and its
/// shape tuple.
fn allocation(ir: &FunctionIR, defs: &Defs, v: VarId) -> Option<(VarId, VarId)> {
    let root = defs.root(ir, v);
    match defs.expr(ir, root)? {
        Expr::Call { func, args, .. }
            if args.len() == 1
                && matches!(defs.global(ir, *func).map(|g| &g.kind), Some(GlobalKind::Intrinsic(n)) if n == EMPTY_INFERRED) =>
        {
            Some((root, args[0]))
        }
        _ => None,
    }
}

/// The allocation an array variable views: itself, or through item reads.
fn array_def(ir: &FunctionIR, defs: &Defs, v: VarId, depth: u32) -> Option<(VarId, VarId)> {
    if depth > 8 {
        return None;
    }
    if let Some(a) = allocation(ir, defs, v) {
        return Some(a);
    }
    match defs.root_expr(ir, v)? {
        Expr::GetItem { value, .. } => array_def(ir, defs, *value, depth + 1),
        _ => None,
    }
}

/// Nested comprehensions: `outer[i] = inner` where both come from `empty_inferred` makes
/// the outer allocation one dimension per inner one larger and `inner` the view
/// `outer[i]`, when the inner sizes can be computed before the outer allocation.
fn fix_nested(ir: &mut FunctionIR) {
    for _ in 0..64 {
        if !fix_one(ir) {
            return;
        }
    }
}

fn fix_one(ir: &mut FunctionIR) -> bool {
    let defs = Defs::compute(ir);
    let cfg = ir.cfg();
    for label in cfg.topo_order() {
        let Some(block) = ir.blocks.get(&label) else {
            continue;
        };
        let stores: Vec<(usize, VarId, VarId, VarId)> = block
            .body
            .iter()
            .enumerate()
            .filter_map(|(si, inst)| match inst.stmt {
                Stmt::SetItem {
                    target,
                    index,
                    value,
                } => Some((si, target, index, value)),
                _ => None,
            })
            .collect();
        for (si, target, index, value) in stores {
            let Some((inner, inner_shape)) = allocation(ir, &defs, value) else {
                continue;
            };
            let Some((outer, outer_shape)) = array_def(ir, &defs, target, 0) else {
                continue;
            };
            if inner == outer || defs.at[&outer_shape].0 == label {
                continue;
            }
            let (Some(Expr::BuildTuple { items: inner_dims }), Some(Expr::BuildTuple { .. })) =
                (defs.expr(ir, inner_shape), defs.expr(ir, outer_shape))
            else {
                continue;
            };
            let inner_dims = inner_dims.clone();
            let &(ol, oi, outer_tuple) = &defs.at[&outer_shape];
            let &(il, ii, inner_alloc) = &defs.at[&inner];
            // The view `target[index]` replaces the inner allocation: both must be known there.
            if !available_at(&defs, &cfg, target, (il, ii))
                || !available_at(&defs, &cfg, index, (il, ii))
            {
                continue;
            }
            // The inner sizes, read where the outer array is allocated or computed again.
            let there = |v: VarId| available_at(&defs, &cfg, v, (ol, oi));
            if !inner_dims
                .iter()
                .all(|&d| rematerializable(ir, &defs, d, &there))
            {
                continue;
            }
            let mut new = Vec::new();
            let loc = ir.blocks[&ol].body[oi].loc;
            let dims: Vec<VarId> = inner_dims
                .iter()
                .map(|&d| {
                    rematerialize(ir, &defs, d, loc, &mut new, &there).expect("rematerializable")
                })
                .collect();
            // Apply: the outer shape grows, the inner array is the outer one's row, and the
            // store of the row into itself goes.
            if let Expr::BuildTuple { items } = &mut ir.exprs[outer_tuple.0 as usize] {
                items.extend(dims);
            }
            ir.exprs[inner_alloc.0 as usize] = Expr::GetItem {
                value: target,
                index,
            };
            ir.blocks.get_mut(&label).expect("block").body.remove(si);
            let ob = &mut ir.blocks.get_mut(&ol).expect("block").body;
            ob.splice(oi..oi, new);
            return true;
        }
    }
    false
}
