//! Lists written out and only read, compiled as tuples.
//!
//! `np.array([1.0, 2.0, x])`, `np.array([[x, y], [y, x]])`, `len(steps)`, `v in [1, 2]`,
//! `steps[k]`, `e[i] = [h, h, h]` and a loop over `steps = [1, 0, -1]` read a list that nothing changes or
//! keeps: a tuple of the same items behaves the same and needs no list at run time
//! (numba-rs has no run-time lists yet; Numba types these as reflected lists).

use std::collections::BTreeSet;

use crate::comprehension::Defs;
use crate::global::GlobalKind;
use crate::ir::*;
use crate::utils::DefUse;

/// Whether `v` is (a copy of) a container made in this function (`{}`, `[]`, `set()`,
/// `dict()`, `list()`), whose items are the values stored, not their items.
fn holds_items(ir: &FunctionIR, defs: &Defs, v: VarId) -> bool {
    let v = defs.root(ir, v);
    ir.blocks
        .values()
        .flat_map(|b| &b.body)
        .any(|inst| match &inst.stmt {
            Stmt::Assign { target, value } if *target == v => match ir.expr(*value) {
                Expr::BuildMap { .. } | Expr::BuildList { .. } | Expr::BuildSet { .. } => true,
                Expr::Call { func, .. } => ["dict", "list", "set"]
                    .iter()
                    .any(|n| defs.is_builtin(ir, *func, n)),
                _ => false,
            },
            _ => false,
        })
}

/// Whether index `v` may be a slice: a `slice(...)` (what `a[i:j]` builds), or a value
/// from outside (an argument, a global, a closure variable) whose type is not known yet.
fn maybe_slice(ir: &FunctionIR, defs: &Defs, v: VarId) -> bool {
    match defs.root_expr(ir, v) {
        Some(Expr::Call { func, .. }) => defs.is_builtin(ir, *func, "slice"),
        Some(Expr::Global { value, .. } | Expr::FreeVar { value, .. }) => !matches!(
            value.kind,
            GlobalKind::Const(numba_bytecode::Constant::Int(_) | numba_bytecode::Constant::Bool(_))
        ),
        Some(Expr::Arg { .. }) => true,
        Some(_) => false,
        None => true,
    }
}

/// Lists written out and only read (`np.array([1.0, 2.0, 5.0])`, `np.array([i], np.int64)`,
/// `np.array([[x, y], [y, x]])`, `len([...])`, `v in [...]`, `[...][k]`, a loop over
/// one) become tuples: nothing can tell the two apart, and tuples need no list at run
/// time. A list that is appended to, stored into, passed to anything else, returned or
/// kept is left alone. Returns whether anything changed.
pub fn literal_lists_as_tuples(ir: &mut FunctionIR) -> bool {
    // Most functions build no list: they pay one scan of the expressions.
    let written_out = |e: &Expr| matches!(e, Expr::BuildList { items } if !items.is_empty());
    if !ir.exprs.iter().any(written_out) {
        return false;
    }
    let mut converted: BTreeSet<VarId> = BTreeSet::new();
    // Outer lists first: an inner list is read only as an item of a converted one.
    loop {
        let defs = Defs::compute(ir);
        let du = DefUse::compute(ir);
        let mut found = None;
        'lists: for (&v, &(_, _, e)) in &defs.at {
            if converted.contains(&v) {
                continue;
            }
            let Expr::BuildList { items } = ir.expr(e) else {
                continue;
            };
            if items.is_empty() {
                continue;
            }
            let mut aliases: BTreeSet<VarId> = BTreeSet::from([v]);
            let mut work = vec![v];
            while let Some(a) = work.pop() {
                for &(ul, ui) in du.uses.get(&a).into_iter().flatten() {
                    let ok = match &ir.blocks[&ul].body[ui].stmt {
                        Stmt::Del { .. } => true,
                        // Its items stored into an array (`e[i] = [h, h, h]`); a dict or a
                        // list keeps the list itself (`g[k] = [0, 1]`).
                        Stmt::SetItem {
                            target,
                            index,
                            value,
                        } => {
                            *value == a
                                && *target != a
                                && *index != a
                                && !holds_items(ir, &defs, *target)
                        }
                        Stmt::Assign { target, value } => match ir.expr(*value) {
                            Expr::Var(_) | Expr::Cast { .. } => {
                                if defs.at.contains_key(target) && aliases.insert(*target) {
                                    work.push(*target);
                                }
                                defs.at.contains_key(target)
                            }
                            Expr::GetIter { .. } => true,
                            // An item, not a slice: a list's slice is a list.
                            Expr::GetItem { value, index } => {
                                *value == a && *index != a && !maybe_slice(ir, &defs, *index)
                            }
                            Expr::StaticGetItem { value, .. } => *value == a,
                            Expr::BinOp {
                                op: BinOp::In,
                                lhs,
                                rhs,
                            } => *lhs == a && *rhs != a,
                            Expr::BuildTuple { .. } => converted.contains(target),
                            Expr::Call {
                                func,
                                args,
                                kws,
                                vararg: None,
                                varkwarg: None,
                                ..
                            } => {
                                let first = args.first() == Some(&a)
                                    && !args[1..].contains(&a)
                                    && kws.iter().all(|(_, k)| *k != a);
                                first
                                    && (defs.is_numpy(ir, *func, "array")
                                        || defs.is_numpy(ir, *func, "asarray")
                                        || (args.len() == 1 && defs.is_builtin(ir, *func, "len")))
                            }
                            _ => false,
                        },
                        _ => false,
                    };
                    if !ok {
                        continue 'lists;
                    }
                }
            }
            found = Some((v, e));
            break;
        }
        let Some((v, e)) = found else {
            return !converted.is_empty();
        };
        if let Expr::BuildList { items } = ir.expr(e).clone() {
            ir.exprs[e.0 as usize] = Expr::BuildTuple { items };
        }
        converted.insert(v);
    }
}
