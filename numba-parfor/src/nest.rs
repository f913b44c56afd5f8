//! NumPy code inside a parallel loop's body as parfors nested in the loop's (Numba's
//! nested parfors).
//!
//! A `prange` body's array expressions and whole-array reductions become parfors of the
//! body, converted and fused as the function's own are, so that `out[i] =
//! np.sum(a[i, :] ** 2)` computes its squares and their sum in one loop, without the
//! temporary row the serial code allocates in every iteration. They run serially inside
//! each division of the outer loop: lowered inside the outer loop's kernel, where the
//! runtime gives a nested region one division, run inline.
//!
//! Allocations, fills and stores in a body are left alone (the outer loop's allocation
//! hoisting takes them), and so are `prange` loops inside a body: they run as the
//! serial loops they are.

use numba_ir::{Expr, FunctionIR, Stmt};
use numba_typeinfer::TypingResult;

use crate::node::{Parfor, PARFOR};
use crate::{dead, fusion, numpy, ParforError, ParforOptions, ParforReport};

/// Convert the NumPy code in the body of every parfor of `ir` (see the module doc).
pub(crate) fn convert_bodies(
    ir: &mut FunctionIR,
    typing: &mut TypingResult,
    report: &mut ParforReport,
    options: &ParforOptions,
) -> Result<(), ParforError> {
    // Read around the loops (converting a body changes nothing outside it): kept stored.
    let around = dead::read_vars(ir);
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
            // Only loop bodies hold NumPy code (a NumPy parfor's body is element nodes).
            if !has_numpy_code(ir, &pf) {
                continue;
            }
            let mut keep = around.clone();
            keep.extend(pf.reductions.iter().map(|r| r.var));
            keep.extend(pf.races.iter().copied());
            let before = report.produced.len();
            // The body's blocks stand in for the function's while the passes run on them.
            let outer = std::mem::replace(&mut ir.blocks, std::mem::take(&mut pf.loop_body));
            let mut gen = numpy::Generated::default();
            let converted = numpy::convert(ir, typing, report, &mut gen, options, true);
            if converted.is_ok() && report.produced.len() > before {
                numba_ir::utils::merge_blocks(ir);
                if options.fusion {
                    fusion::fuse(ir, typing, &gen, report);
                }
                dead::remove_dead_arrays(ir, &keep);
            }
            pf.loop_body = std::mem::replace(&mut ir.blocks, outer);
            converted?;
            if report.produced.len() == before {
                continue;
            }
            let made: Vec<usize> = report.produced[before..].iter().map(|p| p.0).collect();
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

/// Whether the body of `pf` holds an array expression or a call (a reduction candidate).
fn has_numpy_code(ir: &FunctionIR, pf: &Parfor) -> bool {
    pf.loop_body
        .values()
        .flat_map(|b| &b.body)
        .any(|i| match i.stmt {
            Stmt::Assign { value, .. } => match ir.expr(value) {
                Expr::Call { .. } => true,
                Expr::Extension(n) => n.kind == "arrayexpr",
                _ => false,
            },
            _ => false,
        })
}
