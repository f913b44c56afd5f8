//! Numba's `PostProcessor` (`numba/core/postproc.py`) and the CFG canonicalisation it runs
//! first (`numba/core/transforms.py`): what happens to the interpreter's IR before
//! `NUMBA_DUMP_IR` prints it.

use crate::ir::*;

/// `PostProcessor.run(emit_dels=False)`: canonicalise the CFG.
pub fn run(ir: &mut FunctionIR) {
    canonicalize_cfg_single_backedge(ir);
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
        ir.blocks.insert(
            tail,
            Block {
                body: vec![Inst {
                    stmt: Stmt::Jump { target: header },
                    loc,
                }],
            },
        );
    }
}
