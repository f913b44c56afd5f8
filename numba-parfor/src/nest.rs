//! Parallel code inside a parallel loop's body as parfors nested in the loop's (Numba's
//! nested parfors).
//!
//! - A `prange` loop in a `prange` body (and an array comprehension's loop there) becomes
//!   a parfor of the body, as Numba converts inner loops too. Its liveness is the body's,
//!   with what the function reads outside the loops and the outer loop's reductions and
//!   races live where the body ends.
//! - A body's array expressions and whole-array reductions become parfors of the body,
//!   converted and fused as the function's own are, so that `out[i] =
//!   np.sum(a[i, :] ** 2)` computes its squares and their sum in one loop, without the
//!   temporary row the serial code allocates in every iteration. Allocations, fills and
//!   stores in a body are left alone (the outer loop's allocation hoisting takes them).
//!
//! Bodies of nested parfors get the same treatment in turn. Nested parfors run serially
//! inside each division of the outer loop: lowered inside the outer loop's kernel, where
//! the runtime gives a nested region one division, run inline.

use std::collections::{BTreeSet, HashSet};

use numba_ir::{Block, ExtensionNode, FunctionIR, Inst, Label, Stmt, VarId};
use numba_typeinfer::TypingResult;

use crate::node::{Parfor, PARFOR};
use crate::{dead, fusion, numpy, prange, ParforError, ParforOptions, ParforReport};

/// The statement standing for "the rest of the function" at the end of a body while its
/// loops are converted: its operands are what is live there.
const LIVE_OUT: &str = "parfor_live_out";

/// Convert the parallel code in the body of every parfor of `ir` (see the module doc).
pub(crate) fn convert_bodies(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    report: &mut ParforReport,
    options: &ParforOptions,
) -> Result<(), ParforError> {
    // Read around the loops (converting a body changes nothing outside it): kept stored.
    let around = dead::read_vars(ir);
    convert_level(ir, typing, report, options, &around)
}

/// The bodies of the parfors in `ir.blocks`; `around` is what is read outside them.
fn convert_level(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    report: &mut ParforReport,
    options: &ParforOptions,
    around: &HashSet<VarId>,
) -> Result<(), ParforError> {
    let labels: Vec<_> = ir.blocks.keys().copied().collect();
    for l in labels {
        for k in 0..ir.blocks[&l].body.len() {
            let Stmt::Extension(node) = &ir.blocks[&l].body[k].stmt else {
                continue;
            };
            if node.kind != PARFOR {
                continue;
            }
            let Some(mut pf) = Parfor::from_node(node) else {
                continue;
            };
            let mut keep = around.clone();
            keep.extend(pf.reductions.iter().map(|r| r.var));
            keep.extend(pf.races.iter().copied());
            let before = report.produced.len();
            // The body's blocks stand in for the function's while the passes run on them.
            let outer = std::mem::replace(&mut ir.blocks, std::mem::take(&mut pf.loop_body));
            let converted = convert_body(ir, typing, report, options, &keep, &pf);
            let made: Vec<usize> = report.produced[before..].iter().map(|p| p.0).collect();
            // Deeper bodies, with what this body reads kept too.
            let deeper = converted.and_then(|()| {
                if made.is_empty() {
                    return Ok(());
                }
                let mut around = keep.clone();
                around.extend(dead::read_vars(ir));
                convert_level(ir, typing, report, options, &around)
            });
            pf.loop_body = std::mem::replace(&mut ir.blocks, outer);
            deeper?;
            if made.is_empty() {
                continue;
            }
            let left: Vec<usize> = made
                .into_iter()
                .filter(|id| !report.fused.iter().any(|f| f.0 == *id))
                .collect();
            report.nested.push((pf.id, left));
            ir.blocks.get_mut(&l).expect("block").body[k].stmt =
                Stmt::Extension(Box::new(pf.to_node()));
        }
    }
    Ok(())
}

/// One body, standing in as `ir.blocks`: its loops, then its NumPy code.
fn convert_body(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    report: &mut ParforReport,
    options: &ParforOptions,
    keep: &HashSet<VarId>,
    pf: &Parfor,
) -> Result<(), ParforError> {
    if options.prange {
        convert_loops(ir, typing, report, options, keep, pf)?;
    }
    // Only loop bodies hold NumPy code (a NumPy parfor's body is element nodes).
    if !options.numpy || !has_numpy_code(ir) {
        return Ok(());
    }
    let mut gen = numpy::Generated::default();
    let before = report.produced.len();
    numpy::convert(ir, typing, report, &mut gen, options, true)?;
    if report.produced.len() > before {
        // Fusion looks within one block.
        numba_ir::utils::merge_blocks(ir);
        if options.fusion {
            fusion::fuse(ir, typing, &gen, report);
        }
        dead::remove_dead_arrays(ir, typing, keep);
    }
    Ok(())
}

/// The `prange` loops of a body. A body ends in one block without a terminator (where
/// the next iteration begins), or jumps past its blocks (a fused body): while the loops
/// convert, that block holds a [`LIVE_OUT`] statement reading `keep` and a return, so
/// that liveness sees the rest of the function there. A body of another shape is left
/// alone.
fn convert_loops(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    report: &mut ParforReport,
    options: &ParforOptions,
    keep: &HashSet<VarId>,
    pf: &Parfor,
) -> Result<(), ParforError> {
    let has_loop = ir.blocks.iter().any(|(&l, b)| {
        b.terminator().is_some_and(|t| {
            t.successors()
                .iter()
                .any(|&s| s <= l && ir.blocks.contains_key(&s))
        })
    });
    if !has_loop {
        return Ok(());
    }
    let ends: Vec<Label> = ir
        .blocks
        .iter()
        .filter(|(_, b)| b.terminator().is_none())
        .map(|(&l, _)| l)
        .collect();
    let outside: BTreeSet<Label> = ir
        .blocks
        .values()
        .filter_map(Block::terminator)
        .flat_map(Stmt::successors)
        .filter(|s| !ir.blocks.contains_key(s))
        .collect();
    let first = ir.blocks.keys().next().copied().unwrap_or(0);
    // Where the body ends: its empty last block, or (a fused body) the label its last
    // jump names, past its blocks, which stands in for one while the loops convert.
    let outside: Vec<Label> = outside.into_iter().collect();
    let (end, borrowed) = match (&ends[..], &outside[..]) {
        ([end], []) => (*end, false),
        ([], [end]) if *end > first => (*end, true),
        _ => return Ok(()),
    };
    if borrowed {
        ir.blocks.insert(end, Block::default());
    }
    let mut live: Vec<VarId> = keep.iter().copied().collect();
    live.sort();
    let loc = pf.loc;
    let stand_in = [
        Inst {
            stmt: Stmt::Extension(Box::new(ExtensionNode::new(LIVE_OUT, live))),
            loc,
        },
        Inst {
            stmt: Stmt::Return {
                value: pf.index_var,
            },
            loc,
        },
    ];
    let block = ir.blocks.get_mut(&end).expect("end block");
    let at = block.body.len();
    block.body.extend(stand_in);
    let converted = prange::convert(ir, typing, report, options.reduction);
    if borrowed {
        ir.blocks.remove(&end);
    } else if let Some(block) = ir.blocks.get_mut(&end) {
        block.body.truncate(at);
    }
    converted
}

/// Whether the blocks hold an array expression or a call (a reduction candidate).
fn has_numpy_code(ir: &FunctionIR) -> bool {
    ir.blocks
        .values()
        .flat_map(|b| &b.body)
        .any(|i| match i.stmt {
            Stmt::Assign { value, .. } => match ir.expr(value) {
                numba_ir::Expr::Call { .. } => true,
                numba_ir::Expr::Extension(n) => n.kind == "arrayexpr",
                _ => false,
            },
            _ => false,
        })
}
