//! Numba's `PostProcessor` (`numba/core/postproc.py`) and the CFG canonicalisation it runs
//! first (`numba/core/transforms.py`): what happens to the interpreter's IR before
//! `NUMBA_DUMP_IR` prints it.

use crate::analysis::{compute_live_variables, stmt_list_vars, VarSet, VariableLifetime};
use crate::ir::*;

/// `PostProcessor.run(emit_dels)`: canonicalise the CFG, for a generator number its yield
/// points and compute which variables each one must save, and optionally insert `del`s.
pub fn run(ir: &mut FunctionIR, emit_dels: bool) {
    canonicalize_cfg_single_backedge(ir);
    if ir.is_generator {
        compute_generator_info(ir);
    } else {
        ir.generator_info = None;
    }
    // Last: the generator analysis inserts and strips dels of its own.
    if emit_dels {
        insert_dels(ir);
    }
}

/// Insert `del x` after the last use of each variable in a block, and at the start of a
/// successor for variables that escape a block but that successor does not need (Numba's
/// `_patch_var_dels`; dels at a block start come in reverse name order, as Numba prepends
/// them one by one).
pub fn insert_dels(ir: &mut FunctionIR) {
    let vlt = VariableLifetime::new(ir);
    let name_sorted = |ir: &FunctionIR, set: &VarSet, reverse: bool| -> Vec<VarId> {
        let mut v: Vec<VarId> = set.iter().copied().collect();
        v.sort_by(|a, b| ir.var_name(*a).cmp(ir.var_name(*b)));
        if reverse {
            v.reverse();
        }
        v
    };
    let labels: Vec<Label> = ir.blocks.keys().copied().collect();
    for label in labels {
        let block = ir.blocks[&label].clone();
        let Some((term, rest)) = block.body.split_last() else {
            continue;
        };
        let mut internal = vlt
            .deadmaps
            .internal
            .get(&label)
            .cloned()
            .unwrap_or_default();
        let mut delete_pts: Vec<(Inst, VarSet)> = Vec::new();
        for inst in rest.iter().rev() {
            let live: VarSet = stmt_list_vars(ir, &inst.stmt).into_iter().collect();
            let dead: VarSet = live.intersection(&internal).copied().collect();
            for d in &dead {
                internal.remove(d);
            }
            delete_pts.push((inst.clone(), dead));
        }
        let mut body = Vec::with_capacity(block.body.len());
        for (inst, dead) in delete_pts.into_iter().rev() {
            let loc = inst.loc;
            if !matches!(inst.stmt, Stmt::Del { .. }) {
                body.push(inst);
            }
            for var in name_sorted(ir, &dead, true) {
                body.push(Inst {
                    stmt: Stmt::Del { var },
                    loc,
                });
            }
        }
        body.push(term.clone());
        let escaping = vlt
            .deadmaps
            .escaping
            .get(&label)
            .cloned()
            .unwrap_or_default();
        let first_loc = body.first().map(|i| i.loc).unwrap_or_default();
        for var in name_sorted(ir, &escaping, false) {
            body.insert(
                0,
                Inst {
                    stmt: Stmt::Del { var },
                    loc: first_loc,
                },
            );
        }
        if let Some(b) = ir.blocks.get_mut(&label) {
            b.body = body;
        }
    }
}

/// Remove every `del` (Numba's `remove_dels`).
pub fn remove_dels(ir: &mut FunctionIR) {
    for block in ir.blocks.values_mut() {
        block.body.retain(|i| !matches!(i.stmt, Stmt::Del { .. }));
    }
}

/// Number the yields in block order from 1 and record, per yield point, the variables
/// live across it (Numba's `_compute_generator_info`): the block's entry variables plus
/// those assigned before the yield, less those deleted before it; variables deleted right
/// after the yield are only "weakly" live.
pub fn compute_generator_info(ir: &mut FunctionIR) {
    insert_dels(ir);
    let mut index = 0u32;
    let mut points: Vec<(Label, usize)> = Vec::new();
    for (&label, block) in &ir.blocks {
        for (pos, inst) in block.body.iter().enumerate() {
            if let Stmt::Assign { value, .. } = inst.stmt {
                if matches!(ir.expr(value), Expr::Yield { .. }) {
                    points.push((label, pos));
                }
            }
        }
    }
    for &(label, pos) in &points {
        index += 1;
        if let Stmt::Assign { value, .. } = ir.blocks[&label].body[pos].stmt {
            if let Expr::Yield { index: slot, .. } = &mut ir.exprs[value.0 as usize] {
                *slot = Some(index);
            }
        }
    }
    let vlt = VariableLifetime::new(ir);
    let entry = compute_live_variables(ir, &vlt.cfg, &vlt.usedefs, &vlt.deadmaps.combined);
    let mut yield_points = Vec::new();
    let mut state: VarSet = VarSet::new();
    for (i, &(label, pos)) in points.iter().enumerate() {
        let body = &ir.blocks[&label].body;
        let mut live: VarSet = entry.get(&label).cloned().unwrap_or_default();
        for inst in &body[..pos] {
            match inst.stmt {
                Stmt::Assign { target, .. } => {
                    live.insert(target);
                }
                Stmt::Del { var } => {
                    live.remove(&var);
                }
                _ => {}
            }
        }
        let mut weak = VarSet::new();
        for inst in &body[pos + 1..] {
            match inst.stmt {
                Stmt::Del { var } => {
                    if live.remove(&var) {
                        weak.insert(var);
                    }
                }
                _ => break,
            }
        }
        state.extend(live.iter().copied());
        state.extend(weak.iter().copied());
        yield_points.push(YieldPoint {
            index: i as u32 + 1,
            block: label,
            live_vars: live,
            weak_live_vars: weak,
        });
    }
    remove_dels(ir);
    let mut state_vars: Vec<VarId> = state.into_iter().collect();
    state_vars.sort_by(|a, b| ir.var_name(*a).cmp(ir.var_name(*b)));
    ir.generator_info = Some(GeneratorInfo {
        yield_points,
        state_vars,
    });
}

/// Per yield point: what a generator must keep across it.
#[derive(Debug, Clone, PartialEq)]
pub struct YieldPoint {
    pub index: u32,
    pub block: Label,
    pub live_vars: VarSet,
    pub weak_live_vars: VarSet,
}

/// A generator's state: the variables saved across any yield, by name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GeneratorInfo {
    pub yield_points: Vec<YieldPoint>,
    pub state_vars: Vec<VarId>,
}

impl FunctionIR {
    /// The `GENERATOR INFO` lines `NUMBA_DUMP_IR` prints after a generator's IR.
    pub fn dump_generator_info(&self) -> String {
        let Some(gi) = &self.generator_info else {
            return String::new();
        };
        let names = |vars: &mut dyn Iterator<Item = &VarId>| -> String {
            let mut v: Vec<String> = vars
                .map(|v| numba_bytecode::Constant::Str(self.var_name(*v).to_string()).py_repr())
                .collect();
            v.sort();
            format!("[{}]", v.join(", "))
        };
        let mut out = format!(
            "generator state variables: {}\n",
            names(&mut gi.state_vars.iter())
        );
        for yp in &gi.yield_points {
            out.push_str(&format!(
                "yield point #{}: live variables = {}, weak live variables = {}\n",
                yp.index,
                names(&mut yp.live_vars.iter()),
                names(&mut yp.weak_live_vars.iter())
            ));
        }
        out
    }
}

/// Give every loop with several back edges a single one: a new tail block (label
/// `max + 1`) that jumps to the header, with the back edges redirected to it. Loops are
/// rewritten in the order Numba's `cfg.loops()` yields them, so labels match Numba's.
pub fn canonicalize_cfg_single_backedge(ir: &mut FunctionIR) {
    let cfg = ir.cfg();
    for header in cfg.numba_loop_order() {
        let Some(lp) = cfg.loops.get(&header) else {
            continue;
        };
        let backedge_blocks: Vec<Label> = lp
            .body
            .iter()
            .copied()
            .filter(|b| {
                ir.blocks
                    .get(b)
                    .and_then(Block::terminator)
                    .is_some_and(|t| t.successors().contains(&header))
            })
            .collect();
        if backedge_blocks.len() < 2 {
            continue;
        }
        let Some(&max) = ir.blocks.keys().next_back() else {
            continue;
        };
        let tail = max + 1;
        for b in backedge_blocks {
            if let Some(inst) = ir.blocks.get_mut(&b).and_then(|blk| blk.body.last_mut()) {
                inst.stmt.replace_target(header, tail);
            }
        }
        let loc = ir
            .blocks
            .get(&header)
            .and_then(|b| b.body.first())
            .map(|i| i.loc)
            .unwrap_or_default();
        // Numba builds the tail block with the header block's location.
        let header_loc = ir.block_locs.get(&header).copied().unwrap_or(loc);
        ir.block_locs.insert(tail, header_loc);
        ir.blocks.insert(
            tail,
            Block {
                body: vec![Inst {
                    stmt: Stmt::Jump { target: header },
                    loc: header_loc,
                }],
            },
        );
    }
}
