//! SSA reconstruction: Numba's `reconstruct_ssa` (`numba/core/ssa.py`, the
//! dominance-frontier algorithm of Choi et al. from the Inria SSA book).
//!
//! This module owns turning post-processed IR, where a name may be assigned many times, into
//! IR where every variable has exactly one assignment: later assignments get fresh names
//! (`x.1`, `x.2`, continuing the interpreter's numbering), every use is rewritten to its
//! reaching definition, and `phi` assignments are prepended to join blocks where
//! definitions meet. Names, phi placement and phi operand order are Numba's, so the result
//! prints as Numba 0.68's IR after `reconstruct_ssa` (checked by `tests/oracle_ssa.rs`).
//!
//! Where Numba's output depends on Python iteration order, the same order is replayed:
//! blocks and statements in label order (Numba's block dict is in label order except after
//! peepholes that append blocks, such as the split at `pop_block`), violators in
//! first-definition then first-use order (dict insertion order), and phi operands in the
//! iteration order of CPython's predecessor `set` ([`numba_bytecode::pyset`]).
//!
//! One input is approximated: our blocks have no location, and Numba gives phi variables the
//! location of the block being rewritten (see `block_loc`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use numba_bytecode::pyset::IntSet;

use crate::analysis::stmt_list_vars;
use crate::error::IrError;
use crate::ir::*;

/// Rewrite `ir` into SSA form, as Numba's `reconstruct_ssa` does.
///
/// Fails, leaving `ir` untouched, where Numba itself fails: a definition or use of a
/// violating variable in an unreachable block (Numba raises `KeyError` there).
pub fn reconstruct_ssa(ir: &mut FunctionIR) -> Result<(), IrError> {
    if ir.blocks.is_empty() {
        return Ok(());
    }
    // Work on a copy so that a failure part-way does not leave half-renamed IR behind.
    let mut work = ir.clone();
    run_ssa(&mut work)?;
    *ir = work;
    Ok(())
}

fn run_ssa(ir: &mut FunctionIR) -> Result<(), IrError> {
    let cfg = SsaCfg::new(ir);
    let violators = find_violators(ir, &cfg)?;
    let mut namer = Namer::new(ir);
    // One variable at a time, as Numba does: each pass sees the previous passes' phis.
    for var in violators {
        let defmap = fresh_vars(ir, var, &mut namer);
        fix_uses(ir, var, defmap, &cfg, &mut namer)?;
    }
    // Numba then checks that the CFG is unchanged; nothing here touches jumps or branches.
    Ok(())
}

fn unreachable_block(label: Label, line: u32) -> IrError {
    IrError::Unsupported {
        message: format!(
            "SSA reconstruction reached unreachable block {label} (Numba raises KeyError)"
        ),
        line,
    }
}

/// The CFG facts the algorithm needs, computed once up front like Numba's `cfg`.
struct SsaCfg {
    idom: BTreeMap<Label, Label>,
    doms: BTreeMap<Label, BTreeSet<Label>>,
    /// Iterated dominance frontiers (DF+), live blocks only.
    df_plus: BTreeMap<Label, BTreeSet<Label>>,
    /// Live predecessors of each block, in CPython `set` iteration order: this is the order
    /// of phi operands.
    preds: BTreeMap<Label, Vec<Label>>,
}

impl SsaCfg {
    fn new(ir: &FunctionIR) -> SsaCfg {
        let graph = ir.cfg();
        // Replay `compute_cfg_from_blocks`: edges added in block order then terminator-target
        // order, then `_eliminate_dead_blocks` removing edges from unreachable blocks.
        let mut pred_sets: BTreeMap<Label, IntSet> = BTreeMap::new();
        for (&label, block) in &ir.blocks {
            for target in block.terminator().map(Stmt::successors).unwrap_or_default() {
                pred_sets
                    .entry(target)
                    .or_default()
                    .add_int(i64::from(label));
            }
        }
        for set in pred_sets.values_mut() {
            for &dead in &graph.dead_nodes {
                set.discard_int(i64::from(dead));
            }
        }
        let preds: BTreeMap<Label, Vec<Label>> = graph
            .nodes
            .iter()
            .map(|&n| {
                let order = pred_sets
                    .get(&n)
                    .map(|s| s.iter().map(|&p| p as Label).collect())
                    .unwrap_or_default();
                (n, order)
            })
            .collect();

        // `_find_dominance_frontier`, then `_iterated_domfronts` (its fixpoint is the
        // transitive closure of the frontier relation, whatever the visiting order).
        let idom = graph.idoms.clone();
        let mut df: BTreeMap<Label, BTreeSet<Label>> =
            idom.keys().map(|&n| (n, BTreeSet::new())).collect();
        for (&u, &u_idom) in &idom {
            let ps = &preds[&u];
            if ps.len() < 2 {
                continue;
            }
            for &p in ps {
                let mut v = p;
                while v != u_idom {
                    df.entry(v).or_default().insert(u);
                    v = idom[&v];
                }
            }
        }
        let df_plus = df
            .keys()
            .map(|&k| {
                let mut closure = BTreeSet::new();
                let mut work: Vec<Label> = df[&k].iter().copied().collect();
                while let Some(n) = work.pop() {
                    if closure.insert(n) {
                        work.extend(df[&n].iter().copied());
                    }
                }
                (k, closure)
            })
            .collect();
        SsaCfg {
            idom,
            doms: graph.doms.clone(),
            df_plus,
            preds,
        }
    }
}

/// `_find_defs_violators`: variables assigned more than once, then variables with a use in
/// a block no definition dominates, each group in Python dict insertion order.
fn find_violators(ir: &FunctionIR, cfg: &SsaCfg) -> Result<Vec<VarId>, IrError> {
    let mut def_order: Vec<VarId> = Vec::new();
    let mut defs: HashMap<VarId, Vec<Label>> = HashMap::new();
    let mut use_order: Vec<(VarId, u32)> = Vec::new();
    let mut uses: HashMap<VarId, IntSet> = HashMap::new();
    for (&label, block) in &ir.blocks {
        for inst in &block.body {
            let target = match inst.stmt {
                Stmt::Assign { target, .. } => {
                    let labels = defs.entry(target).or_insert_with(|| {
                        def_order.push(target);
                        Vec::new()
                    });
                    labels.push(label);
                    Some(target)
                }
                _ => None,
            };
            // Numba compares names; names are unique per variable here.
            for v in stmt_list_vars(ir, &inst.stmt) {
                if Some(v) != target {
                    uses.entry(v)
                        .or_insert_with(|| {
                            use_order.push((v, inst.loc.line));
                            IntSet::new()
                        })
                        .add_int(i64::from(label));
                }
            }
        }
    }
    let mut violators: Vec<VarId> = def_order
        .into_iter()
        .filter(|v| defs[v].len() > 1)
        .collect();
    for (v, line) in use_order {
        if violators.contains(&v) {
            continue;
        }
        let def_labels = defs.get(&v).map(Vec::as_slice).unwrap_or_default();
        for &label in uses[&v].iter() {
            let label = label as Label;
            let dom = cfg
                .doms
                .get(&label)
                .ok_or_else(|| unreachable_block(label, line))?;
            if !def_labels.iter().any(|l| dom.contains(l)) {
                violators.push(v);
                break;
            }
        }
    }
    Ok(violators)
}

/// `Scope.redefine`: `x` becomes `x.N` with N one past the last number handed out for `x`
/// (the interpreter's renames included), skipping names already taken.
struct Namer {
    taken: HashSet<String>,
    counters: HashMap<String, u32>,
}

impl Namer {
    fn new(ir: &FunctionIR) -> Namer {
        Namer {
            taken: ir.vars.iter().map(|v| v.name.clone()).collect(),
            counters: HashMap::new(),
        }
    }

    fn redefine(&mut self, ir: &mut FunctionIR, var: VarId, loc: Loc) -> VarId {
        let base = ir.var_name(var).to_string();
        // Our IR has no scope: the interpreter's counter for `base` is the highest `base.N`
        // it created, all of which are still in the variable arena.
        let counter = self.counters.entry(base.clone()).or_insert_with(|| {
            let prefix = format!("{base}.");
            ir.vars
                .iter()
                .filter_map(|v| v.name.strip_prefix(&prefix))
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .filter_map(|n| n.parse::<u32>().ok())
                .max()
                .unwrap_or(0)
        });
        let name = loop {
            *counter += 1;
            let candidate = format!("{base}.{counter}");
            if !self.taken.contains(&candidate) {
                break candidate;
            }
        };
        self.taken.insert(name.clone());
        ir.add_var(name, loc)
    }
}

/// A definition of the variable being fixed, as `_FixSSAVars` sees it.
#[derive(Debug, Clone, Copy)]
enum Def {
    /// The assignment at `pos` in its block's body.
    Stmt { pos: usize, target: VarId },
    /// A phi created during this pass (index into [`Fixer::phis`]); not in the body yet.
    Phi(usize),
}

/// `_fresh_vars`: the first assignment keeps the name, later ones get fresh names.
fn fresh_vars(ir: &mut FunctionIR, var: VarId, namer: &mut Namer) -> BTreeMap<Label, Vec<Def>> {
    let mut defmap: BTreeMap<Label, Vec<Def>> = BTreeMap::new();
    let labels: Vec<Label> = ir.blocks.keys().copied().collect();
    for label in labels {
        for pos in 0..ir.blocks[&label].body.len() {
            let inst = &ir.blocks[&label].body[pos];
            if !matches!(inst.stmt, Stmt::Assign { target, .. } if target == var) {
                continue;
            }
            let target = if defmap.is_empty() {
                var
            } else {
                let fresh = namer.redefine(ir, var, inst.loc);
                if let Some(Inst {
                    stmt: Stmt::Assign { target, .. },
                    ..
                }) = ir.blocks.get_mut(&label).and_then(|b| b.body.get_mut(pos))
                {
                    *target = fresh;
                }
                fresh
            };
            defmap
                .entry(label)
                .or_default()
                .push(Def::Stmt { pos, target });
        }
    }
    defmap
}

struct PhiNode {
    target: VarId,
    loc: Loc,
    /// `None` is Numba's `UNDEFINED`: no definition reaches along that edge.
    incoming: Vec<(Option<VarId>, Label)>,
}

/// The state of `_FixSSAVars` for one variable.
struct Fixer<'a> {
    cfg: &'a SsaCfg,
    var: VarId,
    defmap: BTreeMap<Label, Vec<Def>>,
    phimap: BTreeMap<Label, Vec<usize>>,
    phis: Vec<PhiNode>,
    phi_locations: BTreeSet<Label>,
}

impl Fixer<'_> {
    fn def_target(&self, def: Def) -> VarId {
        match def {
            Def::Stmt { target, .. } => target,
            Def::Phi(i) => self.phis[i].target,
        }
    }

    /// `_find_def` for the use at `pos` in block `label`; `None` is `UNDEFINED`.
    /// `block_loc` is the location of the block being rewritten, which Numba gives to every
    /// phi the search creates (wherever the phi goes).
    fn find_def(
        &mut self,
        ir: &mut FunctionIR,
        namer: &mut Namer,
        label: Label,
        pos: usize,
        block_loc: Loc,
    ) -> Result<Option<VarId>, IrError> {
        let len = ir.blocks[&label].body.len();
        // `_stmt_index` searches `body[:-1]`, so the last statement is "not found" and sits
        // at `len`; only assignments can be definitions, so this never changes the answer
        // for well-formed blocks, but it is mirrored all the same.
        let cur_pos = if pos + 1 < len { pos } else { len };
        let local = self.defmap.get(&label).cloned().unwrap_or_default();
        for def in local.iter().rev() {
            match *def {
                Def::Stmt { pos: p, target } if p < cur_pos => return Ok(Some(target)),
                Def::Stmt { .. } => {}
                // Numba answers with the block's last phi for this variable (there is one).
                Def::Phi(i) => {
                    let last = self.phimap.get(&label).and_then(|v| v.last()).copied();
                    return Ok(Some(self.phis[last.unwrap_or(i)].target));
                }
            }
        }
        self.find_def_from_top(ir, namer, label, block_loc)
    }

    /// `_find_def_from_top`: the definition reaching the entry of `label`, inserting a phi
    /// if `label` is in DF+ of the definitions.
    fn find_def_from_top(
        &mut self,
        ir: &mut FunctionIR,
        namer: &mut Namer,
        label: Label,
        block_loc: Loc,
    ) -> Result<Option<VarId>, IrError> {
        if self.phi_locations.contains(&label) {
            let target = namer.redefine(ir, self.var, block_loc);
            let idx = self.phis.len();
            self.phis.push(PhiNode {
                target,
                loc: block_loc,
                incoming: Vec::new(),
            });
            // Registered before the operands are searched, so loops back here find it.
            self.defmap
                .entry(label)
                .or_default()
                .insert(0, Def::Phi(idx));
            self.phimap.entry(label).or_default().push(idx);
            let cfg = self.cfg;
            for &pred in &cfg.preds[&label] {
                let incoming = self.find_def_from_bottom(ir, namer, pred, block_loc)?;
                self.phis[idx].incoming.push((incoming, pred));
            }
            return Ok(Some(target));
        }
        let idom = *self
            .cfg
            .idom
            .get(&label)
            .ok_or_else(|| unreachable_block(label, block_loc.line))?;
        if idom == label {
            // Reached the entry without a definition: Numba's `UndefinedVariable`.
            return Ok(None);
        }
        self.find_def_from_bottom(ir, namer, idom, block_loc)
    }

    /// `_find_def_from_bottom`: the definition live at the end of `label`.
    fn find_def_from_bottom(
        &mut self,
        ir: &mut FunctionIR,
        namer: &mut Namer,
        label: Label,
        block_loc: Loc,
    ) -> Result<Option<VarId>, IrError> {
        match self.defmap.get(&label).and_then(|d| d.last()) {
            Some(&def) => Ok(Some(self.def_target(def))),
            None => self.find_def_from_top(ir, namer, label, block_loc),
        }
    }
}

/// `_fix_ssa_vars`: point every use of `var` at its reaching definition, then prepend the
/// phis created on the way to their blocks (in creation order, before earlier passes' phis).
fn fix_uses(
    ir: &mut FunctionIR,
    var: VarId,
    defmap: BTreeMap<Label, Vec<Def>>,
    cfg: &SsaCfg,
    namer: &mut Namer,
) -> Result<(), IrError> {
    let mut phi_locations = BTreeSet::new();
    for (label, defs) in &defmap {
        if !defs.is_empty() {
            let line = ir.blocks[label].body.first().map_or(0, |i| i.loc.line);
            let df = cfg
                .df_plus
                .get(label)
                .ok_or_else(|| unreachable_block(*label, line))?;
            phi_locations.extend(df.iter().copied());
        }
    }
    let mut fixer = Fixer {
        cfg,
        var,
        defmap,
        phimap: BTreeMap::new(),
        phis: Vec::new(),
        phi_locations,
    };
    let labels: Vec<Label> = ir.blocks.keys().copied().collect();
    for label in labels {
        let block_loc = ir
            .block_locs
            .get(&label)
            .copied()
            .unwrap_or_else(|| block_loc(ir, &ir.blocks[&label]));
        for pos in 0..ir.blocks[&label].body.len() {
            let stmt = &ir.blocks[&label].body[pos].stmt;
            let used = match stmt {
                Stmt::Assign { value, .. } => match ir.expr(*value) {
                    // Not `ir.Inst`s nor `ir.Var`s: Numba does not look inside them.
                    Expr::Arg { .. }
                    | Expr::Const(_)
                    | Expr::Global { .. }
                    | Expr::FreeVar { .. } => false,
                    e => ir.expr_uses(e).contains(&var),
                },
                other => stmt_list_vars(ir, other).contains(&var),
            };
            if !used {
                continue;
            }
            let Some(def) = fixer.find_def(ir, namer, label, pos, block_loc)? else {
                continue;
            };
            if def != var {
                replace_use(ir, label, pos, var, def);
            }
        }
    }
    for (label, idxs) in &fixer.phimap {
        let mut phis = Vec::with_capacity(idxs.len());
        for &i in idxs {
            let phi = &fixer.phis[i];
            // An operand undefined on its edge stays `None`: Numba's `UNDEFINED`.
            let incoming = phi.incoming.clone();
            let value = ir.add_expr(Expr::Phi { incoming });
            phis.push(Inst {
                stmt: Stmt::Assign {
                    target: phi.target,
                    value,
                },
                loc: phi.loc,
            });
        }
        if let Some(block) = ir.blocks.get_mut(label) {
            block.body.splice(0..0, phis);
        }
    }
    Ok(())
}

/// An approximation of Numba's `Block.loc` (the line of the block's first bytecode
/// instruction), which our blocks do not record: the location of the first statement, past
/// the `end_try_block()` call `_end_try_blocks` prepends (that call carries the line of the
/// function's last instruction). Numba gives this location to phi variables, and it shows
/// wherever such a variable prints as `Var(name, file:line)`.
fn block_loc(ir: &FunctionIR, block: &Block) -> Loc {
    let mut end_try = None;
    for inst in &block.body {
        if let Stmt::Assign { target, value } = &inst.stmt {
            match ir.expr(*value) {
                Expr::Global { name, .. } if name == "end_try_block" => {
                    end_try = Some(*target);
                    continue;
                }
                Expr::Call { func, .. } if Some(*func) == end_try => continue,
                _ => {}
            }
        }
        return inst.loc;
    }
    block.body.first().map(|i| i.loc).unwrap_or_default()
}

/// Replace `from` by `to` in the statement at `pos`, as Numba's `replace_vars_inner` /
/// `replace_vars_stmt` do: an assignment gets a copy of its expression; statements
/// `visit_vars_stmt` does not know (`try_raise`, `enter_with`, ...) keep the old name.
fn replace_use(ir: &mut FunctionIR, label: Label, pos: usize, from: VarId, to: VarId) {
    let subst = |v: &mut VarId| {
        if *v == from {
            *v = to;
        }
    };
    let Some(inst) = ir.blocks.get(&label).and_then(|b| b.body.get(pos)) else {
        return;
    };
    let mut stmt = inst.stmt.clone();
    match &mut stmt {
        Stmt::Assign { value, .. } => {
            let mut expr = ir.expr(*value).clone();
            expr.for_each_use_mut(subst);
            *value = ir.add_expr(expr);
        }
        Stmt::Return { value } => subst(value),
        Stmt::Raise { exception } => exception.iter_mut().for_each(subst),
        Stmt::Branch { cond, .. } => subst(cond),
        Stmt::DelAttr { target, .. } => subst(target),
        Stmt::SetAttr { target, value, .. } => {
            subst(target);
            subst(value);
        }
        Stmt::DelItem { target, index } => {
            subst(target);
            subst(index);
        }
        Stmt::SetItem {
            target,
            index,
            value,
        } => {
            subst(target);
            subst(index);
            subst(value);
        }
        // Numba's `visit_vars_stmt` also renames these (a `print` after a conditional
        // reassignment must see the merged value).
        Stmt::StaticSetItem {
            target,
            index_var,
            value,
            ..
        } => {
            subst(target);
            subst(index_var);
            subst(value);
        }
        Stmt::Print { args, vararg } => {
            args.iter_mut().for_each(subst);
            vararg.iter_mut().for_each(subst);
        }
        Stmt::DynamicRaise { args, .. } | Stmt::DynamicTryRaise { args, .. } => {
            for a in args.iter_mut() {
                if let RaiseArg::Var(v) = a {
                    subst(v);
                }
            }
        }
        Stmt::Del { var } => subst(var),
        _ => {}
    }
    if let Some(inst) = ir.blocks.get_mut(&label).and_then(|b| b.body.get_mut(pos)) {
        inst.stmt = stmt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use numba_bytecode::Constant;

    fn at(line: u32) -> Loc {
        Loc { line }
    }

    /// `if c: x = 1 [else: x = 2]; return x`, blocks 0 / 2 / (4) / 6.
    fn diamond(with_else: bool) -> FunctionIR {
        let mut ir = FunctionIR {
            filename: "t.py".into(),
            ..Default::default()
        };
        let c = ir.add_var("c", at(1));
        let x = ir.add_var("x", at(2));
        let arg = ir.add_expr(Expr::Arg {
            index: 0,
            name: "c".into(),
        });
        let one = ir.add_expr(Expr::Const(Constant::Int(1)));
        let two = ir.add_expr(Expr::Const(Constant::Int(2)));
        let inst = |stmt, line| Inst {
            stmt,
            loc: at(line),
        };
        let falsebr = if with_else { 4 } else { 6 };
        let mut blocks = BTreeMap::new();
        blocks.insert(
            0,
            Block {
                body: vec![
                    inst(
                        Stmt::Assign {
                            target: c,
                            value: arg,
                        },
                        1,
                    ),
                    inst(
                        Stmt::Branch {
                            cond: c,
                            truebr: 2,
                            falsebr,
                        },
                        1,
                    ),
                ],
            },
        );
        blocks.insert(
            2,
            Block {
                body: vec![
                    inst(
                        Stmt::Assign {
                            target: x,
                            value: one,
                        },
                        2,
                    ),
                    inst(Stmt::Jump { target: 6 }, 2),
                ],
            },
        );
        if with_else {
            blocks.insert(
                4,
                Block {
                    body: vec![
                        inst(
                            Stmt::Assign {
                                target: x,
                                value: two,
                            },
                            3,
                        ),
                        inst(Stmt::Jump { target: 6 }, 3),
                    ],
                },
            );
        }
        blocks.insert(
            6,
            Block {
                body: vec![inst(Stmt::Return { value: x }, 4)],
            },
        );
        ir.blocks = blocks;
        ir
    }

    #[test]
    fn join_gets_a_phi() {
        let mut ir = diamond(true);
        reconstruct_ssa(&mut ir).unwrap();
        let dump = ir.dump();
        assert!(dump.contains(
            "x.2 = phi(incoming_values=[Var(x, t.py:2), Var(x.1, t.py:3)], incoming_blocks=[2, 4])"
        ));
        assert!(dump.contains("return x.2"));
    }

    #[test]
    fn undefined_phi_operand_is_numbas_undefined() {
        // Numba: `x.1 = phi(incoming_values=[Undefined, Var(x, ...)], incoming_blocks=[0, 8])`
        let mut ir = diamond(false);
        reconstruct_ssa(&mut ir).unwrap();
        let dump = ir.dump();
        assert!(
            dump.contains("x.1 = phi(incoming_values=[Undefined, Var(x, t.py:2)], incoming_blocks=[0, 2]) ['x', 'x.1']"),
            "{dump}"
        );
        assert!(dump.contains("return x.1"), "{dump}");
    }
}
