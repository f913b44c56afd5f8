//! Loop lifting (seed 001, "loop lifting"; Numba's `transforms.loop_lifting`): in an
//! object-mode function, each top-level loop with one entry and one exit becomes a
//! function of its own, which the driver compiles in nopython mode when it types.
//!
//! The lifted function takes the variables live into the loop that it uses (sorted by
//! name) and returns a tuple of those it defines that are live after it. The outer
//! function's entry block of the loop becomes
//!
//! ```text
//! $lifted = global(LiftedLoop: ...)
//! $result = call $lifted(inputs...)
//! output_i = static_getitem(value=$result, index=i)
//! jump <exit>
//! ```
//!
//! Before looking for loops, the setup of a `for` loop's iterator (`range(n)`, `getiter`)
//! is split out of the function's first block into a block of its own, so the loop has an
//! entry other than the function's entry (Numba's `CanonicalizeLoopEntry`).

use std::collections::BTreeSet;

use numba_bytecode::cfg::Loop;

use crate::analysis::{compute_live_map, compute_use_defs, stmt_list_vars, VarSet};
use crate::global::{Global, GlobalKind};
use crate::ir::*;
use crate::utils::fresh_name;

/// Lift the loops of `ir` (modified in place), returning the lifted functions in the
/// order of their `GlobalKind::LiftedLoop` indices.
pub fn lift_loops(ir: &mut FunctionIR) -> Vec<FunctionIR> {
    split_loop_entries(ir);
    merge_loop_exits(ir);
    split_returning_exits(ir);
    let cfg = ir.cfg();
    let top = top_level_loops(&cfg);
    let ud = compute_use_defs(ir);
    let live = compute_live_map(&cfg, ir.blocks.keys().copied(), &ud);
    let mut lifted = Vec::new();
    for lp in top {
        let Some(&callfrom) = lp.entries.first() else {
            continue;
        };
        if lp.entries.len() != 1 || callfrom == cfg.entry {
            continue;
        }
        // One exit, or several that all go on to one block (`merge_loop_exits` made
        // them so): they run inside the lifted function.
        let Some(returnto) = common_exit(&cfg, &lp) else {
            continue;
        };
        let jumps_to_header = matches!(
            ir.blocks.get(&callfrom).and_then(Block::terminator),
            Some(Stmt::Jump { target }) if *target == lp.header
        );
        if !jumps_to_header {
            continue;
        }
        let mut region: BTreeSet<Label> = lp.body.iter().copied().chain([callfrom]).collect();
        if lp.exits.len() > 1 {
            region.extend(lp.exits.iter().copied());
        }
        if region.iter().any(|l| has_yield(ir, *l)) {
            continue;
        }
        let (inputs, outputs) = region_inout(ir, &live, &region, (callfrom, returnto));
        let index = lifted.len();
        // Labels are bytecode offsets: the one before the region's first is free.
        let first = region.iter().next().copied().unwrap_or(callfrom);
        let ends = (first.saturating_sub(1), callfrom, returnto);
        lifted.push(extract(ir, &region, ends, &inputs, &outputs));
        let global = Global {
            kind: GlobalKind::LiftedLoop { index },
            repr: format!("LiftedLoop(<function {}>)", ir.qualname),
        };
        let name = format!("LiftedLoop{index}");
        call_lifted(
            ir,
            &region,
            (callfrom, returnto),
            (name, global),
            &inputs,
            &outputs,
        );
    }
    lifted
}

/// Loops not nested in another.
fn top_level_loops(cfg: &numba_bytecode::cfg::ControlFlowGraph) -> Vec<Loop> {
    cfg.loops
        .values()
        .filter(|l| {
            !cfg.loops
                .values()
                .any(|o| o.header != l.header && o.body.contains(&l.header))
        })
        .cloned()
        .collect()
}

/// Where a loop goes on after it: its one exit, or the one successor all its exits
/// share when only the loop reaches them (Numba's `same_exit_point`).
fn common_exit(cfg: &numba_bytecode::cfg::ControlFlowGraph, lp: &Loop) -> Option<Label> {
    if lp.exits.len() == 1 {
        return lp.exits.first().copied();
    }
    // An exit leading to another exit (a `break` to the block after the loop) is part
    // of the way out, not a place the loop goes on to.
    let mut after = BTreeSet::new();
    for &e in &lp.exits {
        let succs: Vec<Label> = cfg.successors(e).collect();
        let outside = |p: &Label| !lp.body.contains(p) && !lp.exits.contains(p);
        if succs.is_empty() || cfg.predecessors(e).any(|p| outside(&p)) {
            return None;
        }
        after.extend(succs.into_iter().filter(|s| !lp.exits.contains(s)));
    }
    match after.len() {
        1 => after.first().copied(),
        _ => None,
    }
}

/// Numba's `_pre_looplift_transform`: a top-level loop that leaves to several places (a
/// `return` or a `break` inside it) gets one way out. Each exit block's code moves to a
/// block of its own; the exit block records which it was in `$cp` and jumps to a common
/// block, which branches on `$cp` to the moved code. The loop then lifts with its exit
/// blocks, returning `$cp` among its outputs.
fn merge_loop_exits(ir: &mut FunctionIR) {
    let mut done = BTreeSet::new();
    loop {
        let cfg = ir.cfg();
        let Some(lp) = top_level_loops(&cfg)
            .into_iter()
            .find(|l| !done.contains(&l.header) && has_multiple_exits(&cfg, l))
        else {
            return;
        };
        done.insert(lp.header);
        if lp
            .exits
            .iter()
            .any(|e| cfg.predecessors(*e).any(|p| !lp.body.contains(&p)))
        {
            continue; // an exit block shared with code outside the loop: left alone
        }
        merge_exits(ir, &lp.exits);
    }
}

/// Numba's `CanonicalizeLoopExit`: an exit block of a loop with several exits that
/// ends the function (a `return`) keeps only a jump to its code, moved to a new block,
/// so the exits share a successor the loop can return to.
fn split_returning_exits(ir: &mut FunctionIR) {
    let cfg = ir.cfg();
    for lp in top_level_loops(&cfg).iter().filter(|l| l.exits.len() > 1) {
        for &e in &lp.exits {
            if cfg.successors(e).next().is_some() {
                continue;
            }
            let new = ir.blocks.keys().next_back().copied().unwrap_or(0) + 1;
            let loc = ir.block_locs.get(&e).copied().unwrap_or_default();
            let body = std::mem::take(&mut ir.blocks.entry(e).or_default().body);
            ir.blocks.insert(new, Block { body });
            ir.block_locs.insert(new, loc);
            ir.blocks.insert(
                e,
                Block {
                    body: vec![Inst {
                        stmt: Stmt::Jump { target: new },
                        loc,
                    }],
                },
            );
        }
    }
}

/// Numba's `_has_multiple_loop_exits`: more than one exit once exits post-dominating
/// another are discounted.
fn has_multiple_exits(cfg: &numba_bytecode::cfg::ControlFlowGraph, lp: &Loop) -> bool {
    if lp.exits.len() <= 1 {
        return false;
    }
    let mut exits = lp.exits.clone();
    let mut processed = BTreeSet::new();
    let mut remain = exits.clone();
    while let Some(node) = remain.pop_first() {
        processed.insert(node);
        if let Some(pdoms) = cfg.post_doms.get(&node) {
            for p in pdoms.iter().filter(|p| **p != node) {
                exits.remove(p);
            }
        }
        remain = exits.difference(&processed).copied().collect();
    }
    exits.len() > 1
}

/// Numba's `_fix_multi_exit_blocks` (without splitting): see [`merge_loop_exits`].
fn merge_exits(ir: &mut FunctionIR, exits: &BTreeSet<Label>) {
    let mut next = ir.blocks.keys().next_back().copied().unwrap_or(0) + 1;
    let mut fresh = || {
        next += 1;
        next - 1
    };
    let loc = exits
        .first()
        .and_then(|e| ir.block_locs.get(e).copied())
        .unwrap_or(Loc {
            line: ir.firstlineno,
        });
    let at = |stmt| Inst { stmt, loc };
    let (common, post) = (fresh(), fresh());
    let cp = ir.add_var(fresh_name(ir, "$cp"), loc);
    let mut moved = Vec::new();
    for (i, &e) in exits.iter().enumerate() {
        let r = fresh();
        let body = std::mem::take(&mut ir.blocks.entry(e).or_default().body);
        ir.blocks.insert(r, Block { body });
        let eloc = ir.block_locs.get(&e).copied().unwrap_or(loc);
        ir.block_locs.insert(r, eloc);
        let k = ir.add_expr(Expr::Const(numba_bytecode::Constant::Int(i as i64)));
        let body = vec![
            at(Stmt::Assign {
                target: cp,
                value: k,
            }),
            at(Stmt::Jump { target: common }),
        ];
        ir.blocks.insert(e, Block { body });
        moved.push(r);
    }
    ir.blocks.insert(
        common,
        Block {
            body: vec![at(Stmt::Jump { target: post })],
        },
    );
    ir.block_locs.insert(common, loc);
    let mut switch = post;
    for (i, &r) in moved.iter().enumerate() {
        ir.block_locs.insert(switch, loc);
        if i + 1 == moved.len() {
            ir.blocks.insert(
                switch,
                Block {
                    body: vec![at(Stmt::Jump { target: r })],
                },
            );
            break;
        }
        let rhs = ir.add_var(fresh_name(ir, "$cp_rhs"), loc);
        let check = ir.add_var(fresh_name(ir, "$cp_check"), loc);
        let k = ir.add_expr(Expr::Const(numba_bytecode::Constant::Int(i as i64)));
        let eq = ir.add_expr(Expr::BinOp {
            op: BinOp::Eq,
            lhs: cp,
            rhs,
        });
        let next_switch = fresh();
        let body = vec![
            at(Stmt::Assign {
                target: rhs,
                value: k,
            }),
            at(Stmt::Assign {
                target: check,
                value: eq,
            }),
            at(Stmt::Branch {
                cond: check,
                truebr: r,
                falsebr: next_switch,
            }),
        ];
        ir.blocks.insert(switch, Block { body });
        switch = next_switch;
    }
}

pub(crate) fn has_yield(ir: &FunctionIR, label: Label) -> bool {
    ir.blocks[&label].body.iter().any(|i| {
        matches!(&i.stmt, Stmt::Assign { value, .. } if matches!(ir.expr(*value), Expr::Yield { .. }))
    })
}

/// Numba's `find_region_inout_vars`: the inputs of a region entered from `callfrom`
/// (variables live there that the region mentions) and its outputs (variables it
/// assigns that are live at `returnto`), each sorted by name.
pub(crate) fn region_inout(
    ir: &FunctionIR,
    live: &std::collections::BTreeMap<Label, VarSet>,
    region: &BTreeSet<Label>,
    (callfrom, returnto): (Label, Label),
) -> (Vec<VarId>, Vec<VarId>) {
    let (mentioned, defined) = region_vars(ir, region);
    let by_name = |set: VarSet| -> Vec<VarId> {
        let mut v: Vec<VarId> = set.into_iter().collect();
        v.sort_by(|a, b| ir.var_name(*a).cmp(ir.var_name(*b)));
        v
    };
    let empty = VarSet::new();
    let at = |l: &Label| live.get(l).unwrap_or(&empty);
    let inputs = by_name(at(&callfrom).intersection(&mentioned).copied().collect());
    let outputs = by_name(
        at(&returnto)
            .iter()
            .filter(|v| mentioned.contains(v) && defined.contains(v))
            .copied()
            .collect(),
    );
    (inputs, outputs)
}

/// Variables mentioned in the region, and those it assigns.
fn region_vars(ir: &FunctionIR, region: &BTreeSet<Label>) -> (VarSet, VarSet) {
    let mut mentioned = VarSet::new();
    let mut defined = VarSet::new();
    for l in region {
        for inst in &ir.blocks[l].body {
            mentioned.extend(stmt_list_vars(ir, &inst.stmt));
            if let Stmt::Assign { target, .. } = &inst.stmt {
                defined.insert(*target);
            }
        }
    }
    (mentioned, defined)
}

/// The lifted function: a prologue (at label `start`, jumping to `entry`) binding the
/// inputs, the region, and in place of the exit `returnto` a block returning the
/// outputs as a tuple.
pub(crate) fn extract(
    ir: &FunctionIR,
    region: &BTreeSet<Label>,
    (start, entry, returnto): (Label, Label, Label),
    inputs: &[VarId],
    outputs: &[VarId],
) -> FunctionIR {
    let mut lir = ir.clone();
    lir.blocks = region.iter().map(|l| (*l, ir.blocks[l].clone())).collect();
    lir.block_locs.retain(|l, _| region.contains(l));
    lir.is_generator = false;
    lir.generator_info = None;
    lir.arg_names = inputs.iter().map(|v| ir.var_name(*v).to_string()).collect();
    let loc = ir.blocks[&entry].body.first().map_or(
        Loc {
            line: ir.firstlineno,
        },
        |i| i.loc,
    );
    // Numba places a lifted loop at its first line.
    lir.firstlineno = loc.line;
    let mut prologue = Vec::new();
    for (i, &v) in inputs.iter().enumerate() {
        let value = lir.add_expr(Expr::Arg {
            index: i as u32,
            name: ir.var_name(v).to_string(),
        });
        prologue.push(Inst {
            stmt: Stmt::Assign { target: v, value },
            loc,
        });
    }
    prologue.push(Inst {
        stmt: Stmt::Jump { target: entry },
        loc,
    });
    lir.blocks.insert(start, Block { body: prologue });
    lir.block_locs.insert(start, loc);
    let exit_loc = ir.block_locs.get(&returnto).copied().unwrap_or(loc);
    let tuple = lir.add_var(fresh_name(&lir, "$lifted_outputs"), exit_loc);
    let ret = lir.add_var(fresh_name(&lir, "$lifted_return"), exit_loc);
    let build = lir.add_expr(Expr::BuildTuple {
        items: outputs.to_vec(),
    });
    let cast = lir.add_expr(Expr::Cast { value: tuple });
    let body = vec![
        Inst {
            stmt: Stmt::Assign {
                target: tuple,
                value: build,
            },
            loc: exit_loc,
        },
        Inst {
            stmt: Stmt::Assign {
                target: ret,
                value: cast,
            },
            loc: exit_loc,
        },
        Inst {
            stmt: Stmt::Return { value: ret },
            loc: exit_loc,
        },
    ];
    lir.blocks.insert(returnto, Block { body });
    lir.block_locs.insert(returnto, exit_loc);
    lir
}

/// Replace the region in `ir` by a block at `callfrom` calling the lifted function
/// `global` (named `name`) and jumping to `returnto`.
pub(crate) fn call_lifted(
    ir: &mut FunctionIR,
    region: &BTreeSet<Label>,
    (callfrom, returnto): (Label, Label),
    (name, global): (String, Global),
    inputs: &[VarId],
    outputs: &[VarId],
) {
    let loc = ir.blocks[&callfrom].body.first().map_or(
        Loc {
            line: ir.firstlineno,
        },
        |i| i.loc,
    );
    for l in region {
        if *l != callfrom {
            ir.blocks.remove(l);
            ir.block_locs.remove(l);
        }
    }
    let func = ir.add_var(fresh_name(ir, "$lifted_loop"), loc);
    let result = ir.add_var(fresh_name(ir, "$lifted_result"), loc);
    let global = ir.add_expr(Expr::Global {
        name,
        value: global,
    });
    let call = ir.add_expr(Expr::Call {
        func,
        args: inputs.to_vec(),
        kws: Vec::new(),
        vararg: None,
        varkwarg: None,
        form: CallForm::Plain,
    });
    let mut body = vec![
        Inst {
            stmt: Stmt::Assign {
                target: func,
                value: global,
            },
            loc,
        },
        Inst {
            stmt: Stmt::Assign {
                target: result,
                value: call,
            },
            loc,
        },
    ];
    for (i, &v) in outputs.iter().enumerate() {
        let item = ir.add_expr(Expr::StaticGetItem {
            value: result,
            index: i as i64,
            index_var: None,
        });
        body.push(Inst {
            stmt: Stmt::Assign {
                target: v,
                value: item,
            },
            loc,
        });
    }
    body.push(Inst {
        stmt: Stmt::Jump { target: returnto },
        loc,
    });
    ir.blocks.insert(callfrom, Block { body });
}

/// Split a `for` loop's iterator setup out of the function's first block (Numba's
/// `CanonicalizeLoopEntry`): the statements computing the `getiter` operand, the
/// `getiter` and what follows it move to a new block the first block jumps to.
fn split_loop_entries(ir: &mut FunctionIR) {
    let cfg = ir.cfg();
    let entry = cfg.entry;
    let entered_first = cfg
        .loops
        .values()
        .any(|l| l.entries.contains(&entry) && l.entries.len() == 1);
    if !entered_first {
        return;
    }
    let block = &ir.blocks[&entry];
    let Some(k) = block.body.iter().rposition(|i| {
        matches!(&i.stmt, Stmt::Assign { value, .. } if matches!(ir.expr(*value), Expr::GetIter { .. }))
    }) else {
        return; // a while loop: its test is in the first block, nothing to split
    };
    // Walk back over the contiguous statements that compute the iterable into
    // temporaries.
    let mut needed: VarSet = match &block.body[k].stmt {
        Stmt::Assign { value, .. } => ir.expr_uses(ir.expr(*value)).into_iter().collect(),
        _ => VarSet::new(),
    };
    let mut split = k;
    for j in (0..k).rev() {
        match &block.body[j].stmt {
            // Only the interpreter's temporaries: user variables (arguments included)
            // stay in the first block.
            Stmt::Assign { target, value }
                if needed.contains(target) && ir.var_name(*target).starts_with('$') =>
            {
                needed.extend(ir.expr_uses(ir.expr(*value)));
                split = j;
            }
            _ => break,
        }
    }
    let new_label = ir.blocks.keys().next_back().copied().unwrap_or(0) + 1;
    let loc = block.body[split].loc;
    let mut head = ir.blocks[&entry].body.clone();
    let tail = head.split_off(split);
    head.push(Inst {
        stmt: Stmt::Jump { target: new_label },
        loc,
    });
    ir.blocks.insert(entry, Block { body: head });
    ir.blocks.insert(new_label, Block { body: tail });
    ir.block_locs.insert(new_label, loc);
}
