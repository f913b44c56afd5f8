//! IR utilities later passes build on: def-use maps, copy propagation, dead-code
//! elimination, block merging, renaming, and inlining a closure call. Each transformation
//! is also a [`FunctionPass`] so it can run under the [`crate::passes::PassManager`].

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::error::IrError;
use crate::ir::*;
use crate::passes::{FunctionPass, PassError};

/// Where each variable is defined (assigned) and used: `(block, statement index)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DefUse {
    pub defs: BTreeMap<VarId, Vec<(Label, usize)>>,
    pub uses: BTreeMap<VarId, Vec<(Label, usize)>>,
}

impl DefUse {
    pub fn compute(ir: &FunctionIR) -> DefUse {
        let mut du = DefUse::default();
        for (&l, b) in &ir.blocks {
            for (i, inst) in b.body.iter().enumerate() {
                match &inst.stmt {
                    Stmt::Assign { target, value } => {
                        du.defs.entry(*target).or_default().push((l, i));
                        for u in ir.expr_uses(ir.expr(*value)) {
                            du.uses.entry(u).or_default().push((l, i));
                        }
                    }
                    other => {
                        for u in ir.stmt_vars(other) {
                            du.uses.entry(u).or_default().push((l, i));
                        }
                    }
                }
            }
        }
        du
    }

    pub fn def_count(&self, v: VarId) -> usize {
        self.defs.get(&v).map_or(0, Vec::len)
    }

    pub fn use_count(&self, v: VarId) -> usize {
        self.uses.get(&v).map_or(0, Vec::len)
    }
}

impl Expr {
    /// A call the compiler synthesises (`bool(pred)`, `slice(a, b)`, an intrinsic's):
    /// arguments as a tuple, no keywords.
    pub fn synthetic_call(func: VarId, args: Vec<VarId>) -> Expr {
        Expr::Call {
            func,
            args,
            kws: Vec::new(),
            vararg: None,
            varkwarg: None,
            form: CallForm::Synthetic,
        }
    }

    /// Apply `f` to every variable the expression reads.
    pub fn for_each_use_mut(&mut self, mut f: impl FnMut(&mut VarId)) {
        match self {
            Expr::Arg { .. } | Expr::Const(_) | Expr::Global { .. } | Expr::FreeVar { .. } => {}
            Expr::Var(v)
            | Expr::Unary { value: v, .. }
            | Expr::GetAttr { value: v, .. }
            | Expr::StaticGetItem { value: v, .. }
            | Expr::Cast { value: v }
            | Expr::GetIter { value: v }
            | Expr::IterNext { value: v }
            | Expr::PairFirst { value: v }
            | Expr::PairSecond { value: v }
            | Expr::ExhaustIter { value: v, .. }
            | Expr::Yield { value: v, .. }
            | Expr::ListToTuple { list: v } => f(v),
            Expr::TypedGetItem { value, index, .. } => {
                f(value);
                f(index);
            }
            Expr::Null | Expr::Undef => {}
            Expr::Extension(node) => node.operands.iter_mut().for_each(f),
            Expr::Call {
                func,
                args,
                kws,
                vararg,
                varkwarg,
                ..
            } => {
                f(func);
                args.iter_mut().for_each(&mut f);
                kws.iter_mut().for_each(|(_, v)| f(v));
                vararg.iter_mut().for_each(&mut f);
                varkwarg.iter_mut().for_each(&mut f);
            }
            Expr::BinOp { lhs, rhs, .. } | Expr::InplaceBinOp { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Expr::GetItem { value, index } => {
                f(value);
                f(index);
            }
            Expr::BuildTuple { items } | Expr::BuildList { items } | Expr::BuildSet { items } => {
                items.iter_mut().for_each(f)
            }
            Expr::BuildMap { items, .. } => items.iter_mut().for_each(|(k, v)| {
                f(k);
                f(v);
            }),
            Expr::Phi { incoming } => incoming
                .iter_mut()
                .filter_map(|(v, _)| v.as_mut())
                .for_each(f),
            Expr::MakeFunction {
                closure, defaults, ..
            } => {
                closure.iter_mut().for_each(&mut f);
                defaults.iter_mut().for_each(f);
            }
        }
    }

    /// Whether evaluating the expression can be skipped when its result is unused.
    pub fn is_pure(&self) -> bool {
        !matches!(
            self,
            Expr::Call { .. }
                | Expr::Yield { .. }
                | Expr::IterNext { .. }
                | Expr::ExhaustIter { .. }
                | Expr::InplaceBinOp { .. }
        )
    }
}

impl Stmt {
    /// Apply `f` to every variable the statement reads (not an assignment's target; an
    /// assignment's expression lives in the arena and is handled by the caller).
    pub fn for_each_use_mut(&mut self, mut f: impl FnMut(&mut VarId)) {
        match self {
            Stmt::Assign { .. } | Stmt::Jump { .. } | Stmt::StaticRaise { .. } | Stmt::PopBlock => {
            }
            Stmt::EnterWith { contextmanager, .. } => f(contextmanager),
            Stmt::StaticTryRaise { .. } => {}
            Stmt::StaticSetItem {
                target,
                index_var,
                value,
                ..
            } => {
                f(target);
                f(index_var);
                f(value);
            }
            Stmt::StoreMap { dct, key, value } => {
                f(dct);
                f(key);
                f(value);
            }
            Stmt::DynamicRaise { args, .. } | Stmt::DynamicTryRaise { args, .. } => args
                .iter_mut()
                .filter_map(|a| match a {
                    RaiseArg::Var(v) => Some(v),
                    RaiseArg::Const(_) => None,
                })
                .for_each(f),
            Stmt::Print { args, vararg } => {
                args.iter_mut().for_each(&mut f);
                vararg.iter_mut().for_each(f);
            }
            Stmt::Extension(node) => node.operands.iter_mut().for_each(f),
            Stmt::SetItem {
                target,
                index,
                value,
            } => {
                f(target);
                f(index);
                f(value);
            }
            Stmt::SetAttr { target, value, .. } => {
                f(target);
                f(value);
            }
            Stmt::DelItem { target, index } => {
                f(target);
                f(index);
            }
            Stmt::DelAttr { target, .. } => f(target),
            Stmt::Del { var } => f(var),
            Stmt::Raise { exception } | Stmt::TryRaise { exception } => {
                exception.iter_mut().for_each(f)
            }
            Stmt::Return { value } => f(value),
            Stmt::Branch { cond, .. } => f(cond),
        }
    }
}

/// Replace every read of a variable per `map` (statements and their expressions).
pub fn replace_uses(ir: &mut FunctionIR, map: &HashMap<VarId, VarId>) {
    let subst = |v: &mut VarId| {
        if let Some(&n) = map.get(v) {
            *v = n;
        }
    };
    let mut exprs = Vec::new();
    for block in ir.blocks.values_mut() {
        for inst in &mut block.body {
            match &inst.stmt {
                Stmt::Assign { value, .. } => exprs.push(*value),
                _ => inst.stmt.for_each_use_mut(subst),
            }
        }
    }
    for e in exprs {
        ir.exprs[e.0 as usize].for_each_use_mut(subst);
    }
}

/// Copy propagation: for `a = b` where `a` and `b` each have exactly one definition, every
/// read of `a` reads `b` instead (the copy itself is left for dead-code elimination).
pub fn copy_propagate(ir: &mut FunctionIR) -> bool {
    let du = DefUse::compute(ir);
    let mut map: HashMap<VarId, VarId> = HashMap::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            if let Stmt::Assign { target, value } = inst.stmt {
                if let Expr::Var(src) = ir.expr(value) {
                    if *src != target && du.def_count(target) == 1 && du.def_count(*src) <= 1 {
                        map.insert(target, *src);
                    }
                }
            }
        }
    }
    // Resolve chains (a = b, b = c) so every read goes to the root.
    let keys: Vec<VarId> = map.keys().copied().collect();
    for k in keys {
        let mut root = map[&k];
        let mut steps = 0;
        while let Some(&next) = map.get(&root) {
            if next == k || steps > map.len() {
                break;
            }
            root = next;
            steps += 1;
        }
        map.insert(k, root);
    }
    map.retain(|k, v| k != v);
    let changed = !map.is_empty() && map.keys().any(|k| du.use_count(*k) > 0);
    replace_uses(ir, &map);
    changed
}

/// Remove assignments whose target is never read and whose value has no side effect,
/// until none is left.
pub fn dead_code_elimination(ir: &mut FunctionIR) -> bool {
    let mut changed = false;
    loop {
        let du = DefUse::compute(ir);
        let mut removed = false;
        let exprs = &ir.exprs;
        for block in ir.blocks.values_mut() {
            block.body.retain(|inst| match inst.stmt {
                Stmt::Assign { target, value } => {
                    let dead = du.use_count(target) == 0 && exprs[value.0 as usize].is_pure();
                    removed |= dead;
                    !dead
                }
                Stmt::Del { var } => {
                    // A del of a variable that is no longer assigned anywhere goes too.
                    let dead = du.def_count(var) == 0;
                    removed |= dead;
                    !dead
                }
                _ => true,
            });
        }
        if !removed {
            return changed;
        }
        changed = true;
    }
}

/// Merge a block into its predecessor when that predecessor ends in an unconditional
/// jump to it and is its only predecessor.
pub fn merge_blocks(ir: &mut FunctionIR) -> bool {
    let mut changed = false;
    let Some(&entry) = ir.blocks.keys().next() else {
        return false;
    };
    loop {
        let mut preds: BTreeMap<Label, BTreeSet<Label>> = BTreeMap::new();
        for (&l, b) in &ir.blocks {
            if let Some(t) = b.terminator() {
                for s in t.successors() {
                    preds.entry(s).or_default().insert(l);
                }
            }
        }
        let candidate = ir.blocks.iter().find_map(|(&l, b)| match b.terminator() {
            Some(Stmt::Jump { target })
                if *target != l
                    && *target != entry
                    && preds.get(target).is_some_and(|p| p.len() == 1)
                    && ir.blocks.contains_key(target) =>
            {
                Some((l, *target))
            }
            _ => None,
        });
        let Some((into, from)) = candidate else {
            return changed;
        };
        let Some(mut absorbed) = ir.blocks.remove(&from) else {
            return changed;
        };
        if let Some(b) = ir.blocks.get_mut(&into) {
            b.body.pop();
            b.body.append(&mut absorbed.body);
        }
        changed = true;
    }
}

/// Give variable `v` a new name; fails if another variable already has it.
pub fn rename_var(ir: &mut FunctionIR, v: VarId, new_name: &str) -> Result<(), IrError> {
    if ir.var_by_name(new_name).is_some_and(|other| other != v) {
        return Err(IrError::Unsupported {
            message: format!("cannot rename to '{new_name}': the name is taken"),
            line: ir.var(v).loc.line,
        });
    }
    ir.vars[v.0 as usize].name = new_name.to_string();
    Ok(())
}

/// A variable's name without the version SSA gives it (`x.1` is `x`), as Numba's
/// messages name variables; only a numeric suffix goes (an inlined comprehension's
/// `<listcomp>.x` is a name of its own).
pub fn unversioned(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, k)) if !k.is_empty() && k.bytes().all(|c| c.is_ascii_digit()) => base,
        _ => name,
    }
}

/// Numbers each function inlined (Numba's `FunctionIdentity` unique ids).
static INLINE_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The caller's name of an inlined function's variable (Numba's
/// `_created_inlined_var_name`): `<prefix>.<var>` with `<` and `>` as `_`, `.` as `_` and
/// `$` as `_v`, so `f.<locals>.bar$2` and `x` give `f__locals__bar_v2_x`.
pub fn inlined_var_name(prefix: &str, var: &str) -> String {
    format!("{prefix}.{var}")
        .replace(['<', '>', '.'], "_")
        .replace('$', "_v")
}

/// A name not used by any variable: `base`, else `base.1`, `base.2`, ...
pub fn fresh_name(ir: &FunctionIR, base: &str) -> String {
    let taken: BTreeSet<&str> = ir.vars.iter().map(|v| v.name.as_str()).collect();
    if !taken.contains(base) {
        return base.to_string();
    }
    (1..)
        .map(|i| format!("{base}.{i}"))
        .find(|n| !taken.contains(n.as_str()))
        .expect("an unused suffix exists")
}

/// Inline the call at `ir.blocks[label].body[index]` (`res = call f(args...)`, where `f`
/// was made by `make_function` in this function) with `callee`, the IR of `f`'s code.
///
/// The caller block is split after the call; the callee's blocks are copied under fresh
/// labels with fresh variable names; its arguments become the call's arguments, its free
/// variables the items of the closure tuple, and each `return v` becomes `res = v` plus a
/// jump to the code after the call.
pub fn inline_closure_call(
    ir: &mut FunctionIR,
    label: Label,
    index: usize,
    callee: &FunctionIR,
) -> Result<(), IrError> {
    inline_call(ir, (label, index), callee, Inlinee::Closure)
}

/// What an inlined callee is: a function made in the caller (its defaults and closure
/// cells are the caller's variables), or a function of its own (a jitted function
/// `inline='always'` splices in), whose defaults are constants and whose free variables
/// were resolved when its IR was built.
#[derive(Debug, Clone, Copy)]
pub enum Inlinee<'a> {
    Closure,
    Function {
        defaults: &'a [numba_bytecode::Constant],
    },
}

/// Inline the call at `ir.blocks[label].body[index]` with `callee`, the IR of a function
/// of its own (Numba's `InlineWorker` for `@njit(inline='always')`): as
/// [`inline_closure_call`], its missing arguments taking `defaults` (those of the trailing
/// parameters).
pub fn inline_function_call(
    ir: &mut FunctionIR,
    label: Label,
    index: usize,
    callee: &FunctionIR,
    defaults: &[numba_bytecode::Constant],
) -> Result<(), IrError> {
    inline_call(ir, (label, index), callee, Inlinee::Function { defaults })
}

fn inline_call(
    ir: &mut FunctionIR,
    (label, index): (Label, usize),
    callee: &FunctionIR,
    inlinee: Inlinee<'_>,
) -> Result<(), IrError> {
    let unsupported = |message: String, line: u32| IrError::Unsupported { message, line };
    let block = ir
        .blocks
        .get(&label)
        .ok_or_else(|| unsupported(format!("no block {label}"), 0))?;
    let inst = block
        .body
        .get(index)
        .ok_or_else(|| unsupported(format!("no statement {index} in block {label}"), 0))?
        .clone();
    let line = inst.loc.line;
    let Stmt::Assign { target: res, value } = inst.stmt else {
        return Err(unsupported("not a call assignment".into(), line));
    };
    let Expr::Call {
        func,
        args,
        kws,
        vararg,
        varkwarg,
        ..
    } = ir.expr(value).clone()
    else {
        return Err(unsupported("not a call".into(), line));
    };
    if vararg.is_some() || varkwarg.is_some() {
        return Err(unsupported(
            "inlining supports positional and keyword arguments only".into(),
            line,
        ));
    }
    let (args, defaults) = bind_arguments(ir, (func, inlinee), callee, &args, &kws, line)?;
    let closure_items = match inlinee {
        Inlinee::Closure => closure_items_of(ir, func),
        Inlinee::Function { .. } => None,
    };
    let own_freevars = matches!(inlinee, Inlinee::Function { .. });
    // The callee's free variables, by name: its `nonlocal` stores assign the caller's
    // variable itself (the closure tuple holds the caller's variables).
    let freevars: Vec<String> = match made_by(ir, func) {
        Some(Expr::MakeFunction { code, .. }) => code.freevars(),
        _ => Vec::new(),
    };
    let outer: HashMap<&str, VarId> = match &closure_items {
        Some(items) => freevars
            .iter()
            .zip(items)
            .map(|(n, &v)| (n.as_str(), v))
            .collect(),
        None => HashMap::new(),
    };
    // Fresh labels above every existing one.
    let base = ir.blocks.keys().next_back().copied().unwrap_or(0) + 2;
    let relabel = |l: Label| base + l;
    let after = relabel(callee.blocks.keys().next_back().copied().unwrap_or(0)) + 2;
    // Fresh variables for the callee's (a function of its own: Numba's names, from the
    // callee's unique name `qualname$uid`).
    let prefix = format!(
        "{}${}",
        callee.qualname,
        INLINE_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut var_map: HashMap<VarId, VarId> = HashMap::new();
    for (i, v) in callee.vars.iter().enumerate() {
        if let Some(&o) = outer.get(v.name.as_str()) {
            var_map.insert(VarId(i as u32), o);
            continue;
        }
        let name = match inlinee {
            Inlinee::Closure => fresh_name(ir, &format!("{}.{}", callee.name, v.name)),
            Inlinee::Function { .. } => fresh_name(ir, &inlined_var_name(&prefix, &v.name)),
        };
        let id = ir.add_var(name, v.loc);
        var_map.insert(VarId(i as u32), id);
    }
    let mut new_blocks: BTreeMap<Label, Block> = BTreeMap::new();
    for (&cl, cb) in &callee.blocks {
        let mut body = Vec::with_capacity(cb.body.len());
        for cinst in &cb.body {
            let mut stmt = cinst.stmt.clone();
            let remap = |v: &mut VarId| {
                if let Some(&n) = var_map.get(v) {
                    *v = n;
                }
            };
            match &mut stmt {
                Stmt::Assign { target, value } => {
                    let mut e = callee.expr(*value).clone();
                    e = match e {
                        Expr::Arg { index, .. } => Expr::Var(args[index as usize]),
                        // A function of its own read its cells when its IR was built.
                        mut e @ Expr::FreeVar { .. } if own_freevars => {
                            e.for_each_use_mut(remap);
                            e
                        }
                        Expr::FreeVar { index, name, .. } => {
                            let item = closure_items
                                .as_ref()
                                .and_then(|items| items.get(index as usize).copied())
                                .ok_or_else(|| {
                                    unsupported(
                                        format!("cannot find the closure cell for '{name}'"),
                                        cinst.loc.line,
                                    )
                                })?;
                            Expr::Var(item)
                        }
                        mut other => {
                            other.for_each_use_mut(remap);
                            other
                        }
                    };
                    let t = var_map[target];
                    let id = ir.add_expr(e);
                    stmt = Stmt::Assign {
                        target: t,
                        value: id,
                    };
                }
                Stmt::Return { value } => {
                    let v = var_map[value];
                    let id = ir.add_expr(Expr::Var(v));
                    body.push(Inst {
                        stmt: Stmt::Assign {
                            target: res,
                            value: id,
                        },
                        loc: cinst.loc,
                    });
                    stmt = Stmt::Jump { target: after };
                }
                other => {
                    other.for_each_use_mut(remap);
                    match other {
                        Stmt::Jump { target } => *target = relabel(*target),
                        Stmt::Branch {
                            truebr, falsebr, ..
                        } => {
                            *truebr = relabel(*truebr);
                            *falsebr = relabel(*falsebr);
                        }
                        _ => {}
                    }
                }
            }
            body.push(Inst {
                stmt,
                loc: cinst.loc,
            });
        }
        new_blocks.insert(relabel(cl), Block { body });
    }
    let callee_entry = relabel(callee.blocks.keys().next().copied().unwrap_or(0));
    // Split the caller block around the call.
    let caller = ir
        .blocks
        .get_mut(&label)
        .ok_or_else(|| unsupported(format!("no block {label}"), line))?;
    let tail: Vec<Inst> = caller.body.split_off(index + 1);
    caller.body.pop();
    caller.body.extend(defaults);
    caller.body.push(Inst {
        stmt: Stmt::Jump {
            target: callee_entry,
        },
        loc: inst.loc,
    });
    ir.blocks.extend(new_blocks);
    ir.blocks.insert(after, Block { body: tail });
    // A callee that always raises never comes back: the code after the call is dead
    // (and SSA reconstruction must not see it).
    let returns = callee
        .blocks
        .values()
        .any(|b| matches!(b.terminator(), Some(Stmt::Return { .. })));
    if !returns {
        remove_unreachable_blocks(ir);
    }
    Ok(())
}

/// Remove the blocks no path from the entry (the first label) reaches; whether any went.
pub fn remove_unreachable_blocks(ir: &mut FunctionIR) -> bool {
    let Some(&entry) = ir.blocks.keys().next() else {
        return false;
    };
    let mut seen: BTreeSet<Label> = BTreeSet::new();
    let mut work = vec![entry];
    while let Some(l) = work.pop() {
        if !seen.insert(l) {
            continue;
        }
        if let Some(t) = ir.blocks.get(&l).and_then(|b| b.terminator()) {
            work.extend(t.successors());
        }
    }
    let before = ir.blocks.len();
    ir.blocks.retain(|l, _| seen.contains(l));
    ir.blocks.len() != before
}

/// The callee's arguments for a call (Python's binding): the positional ones, then the
/// keywords by name, then the defaults of the `make_function` that made `func` for the
/// rest. Constant defaults get variables assigned by the returned statements (to run
/// before the callee's body). A call that does not bind raises Python's message as a
/// TypingError.
fn bind_arguments(
    ir: &mut FunctionIR,
    (func, inlinee): (VarId, Inlinee<'_>),
    callee: &FunctionIR,
    args: &[VarId],
    kws: &[(String, VarId)],
    line: u32,
) -> Result<(Vec<VarId>, Vec<Inst>), IrError> {
    let typing = |message: String| IrError::Typing { message, line };
    let name = callee
        .qualname
        .rsplit('.')
        .next()
        .unwrap_or(&callee.qualname);
    let params = &callee.arg_names;
    // Parameters a positional argument can fill: those before `*args`.
    let npos = callee.star_param.unwrap_or(params.len());
    if args.len() > npos && callee.star_param.is_none() {
        return Err(typing(format!(
            "{name}() takes {} positional argument{} but {} were given",
            npos,
            if npos == 1 { "" } else { "s" },
            args.len()
        )));
    }
    let mut bound: Vec<Option<VarId>> = vec![None; params.len()];
    for (slot, &a) in bound.iter_mut().zip(&args[..args.len().min(npos)]) {
        *slot = Some(a);
    }
    let mut setup = Vec::new();
    // `*args`: the positional arguments past the others, as a tuple.
    if let Some(star) = callee.star_param {
        let loc = Loc { line };
        let rest = args.get(npos..).unwrap_or_default().to_vec();
        let var = ir.add_var(fresh_name(ir, &format!("$star_{}", params[star])), loc);
        let value = ir.add_expr(Expr::BuildTuple { items: rest });
        setup.push(Inst {
            stmt: Stmt::Assign { target: var, value },
            loc,
        });
        bound[star] = Some(var);
    }
    for (k, v) in kws {
        let Some(i) = params
            .iter()
            .position(|p| p == k)
            .filter(|&i| Some(i) != callee.star_param)
        else {
            return Err(typing(format!(
                "{name}() got an unexpected keyword argument '{k}'"
            )));
        };
        if bound[i].replace(*v).is_some() {
            return Err(typing(format!(
                "{name}() got multiple values for argument '{k}'"
            )));
        }
    }
    if bound.iter().any(Option::is_none) {
        // The defaults: a tuple built from variables, or a constant tuple.
        enum Defaults {
            Vars(Vec<VarId>),
            Consts(Vec<numba_bytecode::Constant>),
        }
        let made = match inlinee {
            Inlinee::Closure => made_by(ir, func),
            Inlinee::Function { .. } => None,
        };
        let defaults = match (inlinee, made) {
            (Inlinee::Function { defaults }, _) => Some(Defaults::Consts(defaults.to_vec())),
            (
                _,
                Some(Expr::MakeFunction {
                    defaults: Some(d), ..
                }),
            ) => match first_def(ir, *d) {
                Some(Expr::BuildTuple { items }) => Some(Defaults::Vars(items.clone())),
                Some(Expr::Const(numba_bytecode::Constant::Tuple(items))) => {
                    Some(Defaults::Consts(items.clone()))
                }
                _ => None,
            },
            _ => None,
        };
        let count = match &defaults {
            Some(Defaults::Vars(v)) => v.len(),
            Some(Defaults::Consts(c)) => c.len(),
            None => 0,
        };
        let first_default = npos.saturating_sub(count);
        let loc = Loc { line };
        for i in 0..params.len() {
            if bound[i].is_some() {
                continue;
            }
            if i >= npos {
                return Err(typing(format!(
                    "{name}() missing keyword-only argument '{}' (defaults of keyword-only \
                     parameters are not supported by numba-rs yet)",
                    params[i]
                )));
            }
            if i < first_default {
                let missing: Vec<String> = (0..first_default)
                    .filter(|&j| bound[j].is_none())
                    .map(|j| format!("'{}'", params[j]))
                    .collect();
                return Err(typing(format!(
                    "{name}() missing {} required positional argument{}: {}",
                    missing.len(),
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(" and ")
                )));
            }
            let k = i - first_default;
            bound[i] = Some(match &defaults {
                Some(Defaults::Vars(v)) => v[k],
                Some(Defaults::Consts(c)) => {
                    let var = ir.add_var(fresh_name(ir, &format!("$default_{}", params[i])), loc);
                    let value = ir.add_expr(Expr::Const(c[k].clone()));
                    setup.push(Inst {
                        stmt: Stmt::Assign { target: var, value },
                        loc,
                    });
                    var
                }
                None => unreachable!("a parameter past the first default has one"),
            });
        }
    }
    Ok((
        bound
            .into_iter()
            .map(|b| b.expect("every parameter bound"))
            .collect(),
        setup,
    ))
}

/// The expression of `v`'s first assignment (in block order), if any.
pub fn first_def(ir: &FunctionIR, v: VarId) -> Option<&Expr> {
    ir.blocks
        .values()
        .flat_map(|b| &b.body)
        .find_map(|i| match i.stmt {
            Stmt::Assign { target, value } if target == v => Some(ir.expr(value)),
            _ => None,
        })
}

/// The expression assigned to `v` when it is assigned exactly once (before SSA a name
/// may be assigned many times; then there is no one definition).
pub fn single_def(ir: &FunctionIR, v: VarId) -> Option<&Expr> {
    single_def_site(ir, v).map(|(e, _)| ir.expr(e))
}

/// The one assignment to `v`, as [`single_def`] finds it: its expression's id (to
/// rewrite it in place) and its location.
pub fn single_def_site(ir: &FunctionIR, v: VarId) -> Option<(ExprId, Loc)> {
    let mut found = None;
    for inst in ir.blocks.values().flat_map(|b| &b.body) {
        if let Stmt::Assign { target, value } = &inst.stmt {
            if *target == v {
                if found.is_some() {
                    return None;
                }
                found = Some((*value, inst.loc));
            }
        }
    }
    found
}

/// The expression that made the function `func` holds, through copies (`double =
/// $make_function`).
fn made_by(ir: &FunctionIR, func: VarId) -> Option<&Expr> {
    let mut made = first_def(ir, func)?;
    for _ in 0..16 {
        match made {
            Expr::Var(src) => made = first_def(ir, *src)?,
            _ => break,
        }
    }
    Some(made)
}

/// The variables a closure's cells come from: `f = make_function(closure=t)` with
/// `t = build_tuple(items=[...])`.
fn closure_items_of(ir: &FunctionIR, func: VarId) -> Option<Vec<VarId>> {
    let Some(Expr::MakeFunction {
        closure: Some(t), ..
    }) = made_by(ir, func)
    else {
        return None;
    };
    match first_def(ir, *t)? {
        Expr::BuildTuple { items } => Some(items.clone()),
        _ => None,
    }
}

macro_rules! simple_pass {
    ($(#[$doc:meta])* $name:ident, $label:literal, $f:path, $cfg:literal) => {
        $(#[$doc])*
        #[derive(Debug, Default, Clone, Copy)]
        pub struct $name;

        impl FunctionPass for $name {
            fn name(&self) -> &str {
                $label
            }

            fn mutates_cfg(&self) -> bool {
                $cfg
            }

            fn run(&mut self, ir: &mut FunctionIR) -> Result<bool, PassError> {
                Ok($f(ir))
            }
        }
    };
}

simple_pass!(
    /// [`copy_propagate`] as a pass.
    CopyPropagation,
    "copy_propagation",
    copy_propagate,
    false
);
simple_pass!(
    /// [`dead_code_elimination`] as a pass.
    DeadCodeElimination,
    "dead_code_elimination",
    dead_code_elimination,
    false
);
simple_pass!(
    /// [`merge_blocks`] as a pass.
    MergeBlocks,
    "merge_blocks",
    merge_blocks,
    true
);

/// Numba's `InlineClosureLikes` for inner functions and lambdas called where they are made:
/// every `call f(...)` whose `f` comes from a `make_function` in this function is replaced
/// by the body of `f` (its IR built with `globals`, the module's). Inner functions that
/// are only passed around stay as they are (and fail later with a clear error).
pub fn inline_closures(
    ir: &mut FunctionIR,
    globals: &dyn crate::GlobalResolver,
) -> Result<bool, IrError> {
    /// Inlined calls before giving up (deeply nested or runaway inlining).
    const LIMIT: usize = 256;
    let mut inlined = 0;
    while let Some((label, index, code)) = find_inlinable_call(ir) {
        if inlined == LIMIT {
            return Err(IrError::Unsupported {
                message: format!("more than {LIMIT} inner function calls to inline"),
                line: ir.firstlineno,
            });
        }
        let callee = crate::compile_to_ir(code, globals)?;
        if callee.is_generator {
            return Err(IrError::Unsupported {
                message: format!(
                    "inner generator function '{}' is not supported by numba-rs yet",
                    callee.qualname
                ),
                line: callee.firstlineno,
            });
        }
        inline_closure_call(ir, label, index, &callee)?;
        inlined += 1;
    }
    if inlined > 0 {
        // The make_function assignments (and their closure tuples) are dead now.
        while dead_code_elimination(ir) {}
    }
    Ok(inlined > 0)
}

/// The first call of a function made by `make_function` in `ir`, with that function's code.
fn find_inlinable_call(ir: &FunctionIR) -> Option<(Label, usize, numba_bytecode::CodeObject)> {
    let mut defs: HashMap<VarId, ExprId> = HashMap::new();
    for block in ir.blocks.values() {
        for inst in &block.body {
            if let Stmt::Assign { target, value } = &inst.stmt {
                defs.insert(*target, *value);
            }
        }
    }
    let make_function_of = |mut v: VarId| -> Option<&numba_bytecode::CodeObject> {
        for _ in 0..16 {
            match ir.expr(*defs.get(&v)?) {
                Expr::Var(src) => v = *src,
                Expr::MakeFunction { code, .. } => return Some(code),
                _ => return None,
            }
        }
        None
    };
    for (&label, block) in &ir.blocks {
        for (index, inst) in block.body.iter().enumerate() {
            if let Stmt::Assign { value, .. } = &inst.stmt {
                if let Expr::Call {
                    func,
                    vararg,
                    varkwarg,
                    ..
                } = ir.expr(*value)
                {
                    if vararg.is_none() && varkwarg.is_none() {
                        if let Some(code) = make_function_of(*func) {
                            return Some((label, index, code.clone()));
                        }
                    }
                }
            }
        }
    }
    None
}

/// Spread the star argument of the call `call` (`f(x, *t)`, `vararg = t`) into `count`
/// positional arguments `t[0] .. t[count-1]`, read just before the call, once typing
/// knows `t` is a tuple of `count` items. The call then has no star argument; nothing else
/// changes (each new variable is assigned once).
pub fn expand_star_call(ir: &mut FunctionIR, call: ExprId, count: usize) -> bool {
    let Expr::Call {
        vararg: Some(tuple),
        ..
    } = ir.expr(call).clone()
    else {
        return false;
    };
    let site = ir.blocks.iter().find_map(|(&label, block)| {
        block
            .body
            .iter()
            .position(|inst| matches!(&inst.stmt, Stmt::Assign { value, .. } if *value == call))
            .map(|i| (label, i))
    });
    let Some((label, index)) = site else {
        return false;
    };
    let loc = ir.blocks[&label].body[index].loc;
    let base = format!("{}.item", ir.var_name(tuple));
    let mut items = Vec::with_capacity(count);
    let mut insts = Vec::with_capacity(count);
    for i in 0..count {
        let name = fresh_name(ir, &format!("{base}{i}"));
        let v = ir.add_var(name, loc);
        let e = ir.add_expr(Expr::StaticGetItem {
            value: tuple,
            index: i as i64,
            index_var: None,
        });
        insts.push(Inst {
            stmt: Stmt::Assign {
                target: v,
                value: e,
            },
            loc,
        });
        items.push(v);
    }
    if let Expr::Call { args, vararg, .. } = &mut ir.exprs[call.0 as usize] {
        args.extend(items);
        *vararg = None;
    }
    let body = &mut ir.blocks.get_mut(&label).expect("found above").body;
    body.splice(index..index, insts);
    true
}
