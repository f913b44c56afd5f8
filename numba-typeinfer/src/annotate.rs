//! `NUMBA_DUMP_ANNOTATION`: the typed IR interleaved with the source, in the format of
//! Numba's `TypeAnnotation.annotate()` (seed 001, numba-facts §11).
//!
//! Each source line of the function gets a `# --- LINE n --- ` header, indented like the
//! line, followed by the IR statements located on it (`label n` where a block starts,
//! `stmt  :: type` for assignments, the call signature for calls), then the line itself.

use std::collections::BTreeMap;
use std::fmt::Write;

use numba_ir::{center, Expr, FunctionIR, Stmt};

use crate::infer::TypingResult;

/// The whole dump: the centred `ANNOTATION` header, the annotated source (or the bare
/// statements when `source` is `None`) and the closing rule of `=`.
pub fn annotate(ir: &FunctionIR, typing: &TypingResult, source: Option<&str>) -> String {
    let grouped = group_by_line(ir, typing);
    let mut out = center("ANNOTATION", 80, '-');
    out.push('\n');
    match source {
        Some(text) => {
            let lines: Vec<&str> = text.lines().collect();
            let first = ir.firstlineno.max(1);
            let last = grouped
                .keys()
                .next_back()
                .copied()
                .unwrap_or(first)
                .max(first);
            let _ = writeln!(out, "# File: {}", ir.filename);
            for num in first..=last {
                let src = lines.get(num as usize - 1).copied().unwrap_or("");
                let ind: String = src.chars().take_while(|c| c.is_whitespace()).collect();
                let _ = writeln!(out, "{ind}# --- LINE {num} --- ");
                for inst in grouped.get(&num).into_iter().flatten() {
                    let _ = writeln!(out, "{ind}# {inst}");
                }
                out.push('\n');
                out.push_str(src);
                out.push_str("\n\n");
            }
        }
        None => {
            out.push_str("# Source code unavailable\n");
            for insts in grouped.values() {
                for inst in insts {
                    let _ = writeln!(out, "{inst}");
                }
                out.push('\n');
            }
        }
    }
    out.push('\n');
    out.push_str(&"=".repeat(80));
    out.push('\n');
    out
}

/// `prepare_annotations`: per source line, the label lines and annotated statements.
fn group_by_line(ir: &FunctionIR, typing: &TypingResult) -> BTreeMap<u32, Vec<String>> {
    let mut grouped: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for (&label, block) in &ir.blocks {
        let block_line = block.body.first().map_or(ir.firstlineno, |i| i.loc.line);
        grouped
            .entry(block_line)
            .or_default()
            .push(format!("label {label}"));
        // Numba marks a lifted loop's constant and the call of it.
        let mut lifted_call = false;
        for inst in &block.body {
            let line = match &inst.stmt {
                Stmt::Assign { target, value } => {
                    let lifted = matches!(
                        ir.expr(*value),
                        Expr::Global { value: g, .. }
                            if matches!(g.kind, numba_ir::GlobalKind::LiftedLoop { .. })
                    );
                    let ty = match ir.expr(*value) {
                        _ if lifted || std::mem::take(&mut lifted_call) => {
                            lifted_call = lifted;
                            "XXX Lifted Loop XXX".to_string()
                        }
                        // Object mode types nothing: Numba's annotation then prints
                        // `<missing>` for variables and `pyobject` for calls.
                        Expr::Call { .. } if typing.typemap.is_empty() => "pyobject".to_string(),
                        Expr::Call { .. } => typing
                            .calltypes
                            .get(value)
                            .map_or("<missing>".to_string(), ToString::to_string),
                        _ => typing
                            .typemap
                            .get(target.0 as usize)
                            .map_or("<missing>".to_string(), ToString::to_string),
                    };
                    format!("{}  :: {ty}", ir.stmt_to_string(&inst.stmt))
                }
                other => ir.stmt_to_string(other),
            };
            grouped
                .entry(inst.loc.line)
                .or_default()
                .push(format!("  {line}"));
        }
    }
    grouped
}
