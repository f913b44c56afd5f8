//! The IR verifier: structural checks every pass must preserve.
//!
//! - every variable and expression id is in its arena;
//! - every block is non-empty, ends in exactly one terminator and has none before it;
//! - every jump or branch target is a block;
//! - no use before definition: a temporary (`$...`) must be defined on every path to each
//!   use; a user variable on at least one (Python allows a variable that is only
//!   sometimes assigned; using it unassigned is a runtime `UnboundLocalError`, which Numba
//!   reports at typing time).
//!
//! The verifier never panics, whatever the IR: it is safe on hand-built or random IR.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::ir::*;

/// One problem found, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    pub block: Option<Label>,
    pub index: Option<usize>,
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.block, self.index) {
            (Some(b), Some(i)) => write!(f, "block {b}, statement {i}: {}", self.message),
            (Some(b), None) => write!(f, "block {b}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for VerifyError {}

fn err(block: Option<Label>, index: Option<usize>, message: String) -> VerifyError {
    VerifyError {
        block,
        index,
        message,
    }
}

/// Check `ir`; all problems found, in block order.
pub fn verify(ir: &FunctionIR) -> Result<(), Vec<VerifyError>> {
    let mut errors = Vec::new();
    if ir.blocks.is_empty() {
        errors.push(err(None, None, "the function has no blocks".into()));
        return Err(errors);
    }
    let nvars = ir.vars.len();
    let nexprs = ir.exprs.len();
    let var_ok = |v: &VarId| (v.0 as usize) < nvars;
    // Structure and ids first: the dataflow below relies on them.
    for (&label, block) in &ir.blocks {
        if block.body.is_empty() {
            errors.push(err(Some(label), None, "empty block".into()));
            continue;
        }
        let last = block.body.len() - 1;
        for (i, inst) in block.body.iter().enumerate() {
            let is_term = inst.stmt.is_terminator();
            if is_term && i != last {
                errors.push(err(
                    Some(label),
                    Some(i),
                    "terminator before the end of the block".into(),
                ));
            }
            if i == last && !is_term {
                errors.push(err(
                    Some(label),
                    Some(i),
                    "block does not end in a terminator".into(),
                ));
            }
            for t in inst.stmt.successors() {
                if !ir.blocks.contains_key(&t) {
                    errors.push(err(
                        Some(label),
                        Some(i),
                        format!("jump to missing block {t}"),
                    ));
                }
            }
            if let Stmt::Assign { value, .. } = &inst.stmt {
                if (value.0 as usize) >= nexprs {
                    errors.push(err(
                        Some(label),
                        Some(i),
                        format!("expression id {} out of range", value.0),
                    ));
                    continue;
                }
            }
            for v in stmt_vars_checked(ir, &inst.stmt) {
                if !var_ok(&v) {
                    errors.push(err(
                        Some(label),
                        Some(i),
                        format!("variable id {} out of range", v.0),
                    ));
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    check_definitions(ir, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `stmt_vars` that cannot index out of range (the expression id was checked).
fn stmt_vars_checked(ir: &FunctionIR, stmt: &Stmt) -> Vec<VarId> {
    match stmt {
        Stmt::Assign { target, value } if (value.0 as usize) < ir.exprs.len() => {
            let mut v = vec![*target];
            v.extend(ir.expr_uses(ir.expr(*value)));
            v
        }
        Stmt::Assign { target, .. } => vec![*target],
        other => ir.stmt_vars(other),
    }
}

/// Definite (every path) and possible (some path) definitions at each block entry, then a
/// scan of each block.
fn check_definitions(ir: &FunctionIR, errors: &mut Vec<VerifyError>) {
    let entry = *ir.blocks.keys().next().expect("checked non-empty");
    let mut preds: BTreeMap<Label, Vec<Label>> = BTreeMap::new();
    for (&l, b) in &ir.blocks {
        if let Some(t) = b.terminator() {
            for s in t.successors() {
                preds.entry(s).or_default().push(l);
            }
        }
    }
    let defs_of = |b: &Block| -> BTreeSet<VarId> {
        b.body
            .iter()
            .filter_map(|i| match i.stmt {
                Stmt::Assign { target, .. } => Some(target),
                _ => None,
            })
            .collect()
    };
    let block_defs: BTreeMap<Label, BTreeSet<VarId>> =
        ir.blocks.iter().map(|(&l, b)| (l, defs_of(b))).collect();
    let all: BTreeSet<VarId> = (0..ir.vars.len() as u32).map(VarId).collect();
    // must: start from "everything" except at the entry, intersect to a fixpoint.
    let mut must_in: BTreeMap<Label, BTreeSet<VarId>> = ir
        .blocks
        .keys()
        .map(|&l| {
            (
                l,
                if l == entry {
                    BTreeSet::new()
                } else {
                    all.clone()
                },
            )
        })
        .collect();
    let mut may_in: BTreeMap<Label, BTreeSet<VarId>> =
        ir.blocks.keys().map(|&l| (l, BTreeSet::new())).collect();
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds <= ir.blocks.len() + 2 {
        changed = false;
        rounds += 1;
        for &l in ir.blocks.keys() {
            if l == entry {
                continue;
            }
            let ps = preds.get(&l).cloned().unwrap_or_default();
            let mut must: Option<BTreeSet<VarId>> = None;
            let mut may = BTreeSet::new();
            for p in ps {
                let mut out_must = must_in[&p].clone();
                out_must.extend(&block_defs[&p]);
                let mut out_may = may_in[&p].clone();
                out_may.extend(&block_defs[&p]);
                must = Some(match must {
                    None => out_must,
                    Some(m) => m.intersection(&out_must).copied().collect(),
                });
                may.extend(out_may);
            }
            // Unreachable blocks: nothing is known to be defined.
            let must = must.unwrap_or_default();
            if must_in[&l] != must {
                must_in.insert(l, must);
                changed = true;
            }
            if may_in[&l] != may {
                may_in.insert(l, may);
                changed = true;
            }
        }
    }
    for (&l, block) in &ir.blocks {
        let mut must = must_in[&l].clone();
        let mut may = may_in[&l].clone();
        for (i, inst) in block.body.iter().enumerate() {
            // A phi's value is used at the end of the predecessor it comes from.
            if let Stmt::Assign { value, .. } = &inst.stmt {
                if let crate::ir::Expr::Phi { incoming } = ir.expr(*value) {
                    for (v, pred) in incoming {
                        let Some(v) = v else { continue };
                        let defined = may_in.get(pred).is_some_and(|m| m.contains(v))
                            || block_defs.get(pred).is_some_and(|d| d.contains(v));
                        if !defined {
                            errors.push(err(
                                Some(l),
                                Some(i),
                                format!(
                                    "'{}' is not defined at the end of predecessor {pred}",
                                    ir.var_name(*v)
                                ),
                            ));
                        }
                    }
                    if let Stmt::Assign { target, .. } = inst.stmt {
                        must.insert(target);
                        may.insert(target);
                    }
                    continue;
                }
            }
            let uses: Vec<VarId> = match &inst.stmt {
                Stmt::Assign { value, .. } => ir.expr_uses(ir.expr(*value)),
                Stmt::Del { .. } => Vec::new(),
                other => ir.stmt_vars(other),
            };
            for u in uses {
                let name = ir.var_name(u);
                let ok = if name.starts_with('$') {
                    must.contains(&u)
                } else {
                    may.contains(&u)
                };
                if !ok {
                    errors.push(err(
                        Some(l),
                        Some(i),
                        format!("'{name}' is used before it is defined"),
                    ));
                }
            }
            if let Stmt::Assign { target, .. } = inst.stmt {
                must.insert(target);
                may.insert(target);
            }
        }
    }
}
