//! The size assertions Numba's array analysis puts before calls whose arrays must agree
//! in some dimensions (`_analyze_op_call_numpy_concatenate`, `_stack`, `_hstack`,
//! `_vstack`, `_dstack`, `_dot`, the last also for `a.dot(b)`): an `assert_equiv`
//! statement ([`ASSERT_EQUIV`]) that raises Numba's AssertionError (`Sizes of a_size1,
//! b_size1 do not match on file (7)`) before the call would raise NumPy's ValueError.
//!
//! As in Numba, a sequence counts only when it is a tuple built in the function and an
//! axis only when it is a constant; operands that are one variable are not compared.
//! The element-wise assertions (array expressions, stores, in-place operators) belong to
//! the parfors that replace those operations ([`crate::numpy`]).

use std::collections::HashMap;

use numba_bytecode::Constant;
use numba_ir::{Expr, ExprId, ExtensionNode, FunctionIR, Inst, Loc, Stmt, VarId};
use numba_typeinfer::types::Type;
use numba_typeinfer::{ImplKey, TypingResult};

use crate::prange::{defs_of, single_def};

/// `assert_equiv(arrays...)` (attrs `msg`, and `axes`: per operand the axis compared, or
/// `*` for the whole shape): Numba's AssertionError with `msg` unless every operand has
/// the first one's sizes there.
pub const ASSERT_EQUIV: &str = "assert_equiv";

/// What one assertion compares: each array at one axis (`Some`) or whole (`None`), and
/// the names its message gives them.
struct Equiv {
    operands: Vec<(VarId, Option<usize>)>,
    names: Vec<String>,
}

/// Insert the assertions before the calls of every block.
pub(crate) fn insert(ir: &mut FunctionIR, typing: &TypingResult) {
    let defs = defs_of(ir);
    let labels: Vec<_> = ir.blocks.keys().copied().collect();
    for label in labels {
        let body = std::mem::take(&mut ir.blocks.get_mut(&label).expect("a label").body);
        let mut out = Vec::with_capacity(body.len());
        for inst in body {
            if let Stmt::Assign { value, .. } = inst.stmt {
                for eq in call_asserts(ir, typing, &defs, value) {
                    out.push(assertion(ir, eq, inst.loc));
                }
            }
            out.push(inst);
        }
        ir.blocks.get_mut(&label).expect("a label").body = out;
    }
}

fn assertion(ir: &FunctionIR, eq: Equiv, loc: Loc) -> Inst {
    let names: Vec<&str> = eq.names.iter().map(String::as_str).collect();
    let mut node = ExtensionNode::new(ASSERT_EQUIV, eq.operands.iter().map(|(v, _)| *v).collect());
    node.attrs
        .push(("msg".into(), crate::numpy::sizes_text(ir, &names, loc)));
    let axes: Vec<String> = eq
        .operands
        .iter()
        .map(|(_, a)| a.map_or("*".to_string(), |a| a.to_string()))
        .collect();
    node.attrs.push(("axes".into(), axes.join(",")));
    Inst {
        stmt: Stmt::Extension(Box::new(node)),
        loc,
    }
}

fn ndim(typing: &TypingResult, v: VarId) -> Option<usize> {
    match typing.type_of(v).get() {
        Type::Array { ndim, .. } if ndim > 0 => Some(ndim as usize),
        _ => None,
    }
}

/// The assertions Numba makes before the call `value` (none for other expressions).
fn call_asserts(
    ir: &FunctionIR,
    typing: &TypingResult,
    defs: &HashMap<VarId, Vec<ExprId>>,
    value: ExprId,
) -> Vec<Equiv> {
    let Expr::Call {
        func, args, kws, ..
    } = ir.expr(value)
    else {
        return Vec::new();
    };
    let Some(ImplKey::Function(key)) = typing.calltypes.get(&value).map(|s| &s.key) else {
        return Vec::new();
    };
    let arg = |i: usize, name: &str| {
        args.get(i)
            .copied()
            .or_else(|| kws.iter().find(|(k, _)| k == name).map(|(_, v)| *v))
    };
    if key == "numpy.dot" {
        // `a.dot(b)` is typed as `np.dot(a, b)`; its first operand is the receiver.
        let method = typing
            .calltypes
            .get(&value)
            .is_some_and(|s| s.args.len() == args.len() + 1);
        let a = if method {
            crate::numpy::receiver(ir, defs, *func)
        } else {
            arg(0, "a")
        };
        let b = arg(usize::from(!method), "b");
        return match (a, b) {
            (Some(a), Some(b)) => dot(ir, typing, a, b).into_iter().collect(),
            _ => Vec::new(),
        };
    }
    let Some(seq) = arg(0, "arrays").or_else(|| arg(0, "tup")) else {
        return Vec::new();
    };
    let Some(Expr::BuildTuple { items }) = single_def(ir, defs, seq) else {
        return Vec::new();
    };
    let Some(nd) = items.first().and_then(|&a| ndim(typing, a)) else {
        return Vec::new();
    };
    if items.iter().any(|&a| ndim(typing, a) != Some(nd)) {
        return Vec::new();
    }
    let axis = || -> Option<i64> {
        match arg(1, "axis") {
            None => Some(0),
            Some(v) => match single_def(ir, defs, v) {
                Some(Expr::Const(Constant::Int(i))) => Some(*i),
                _ => None,
            },
        }
    };
    match key.as_str() {
        "numpy.concatenate" => axis()
            .map(|a| concatenate(ir, items, nd, a))
            .unwrap_or_default(),
        "numpy.stack" => axis().map(|_| stack(ir, items)).unwrap_or_default(),
        // 1-d arrays are stacked as rows, others joined along the first axis.
        "numpy.vstack" if nd == 1 => stack(ir, items),
        "numpy.vstack" => concatenate(ir, items, nd, 0),
        "numpy.hstack" => concatenate(ir, items, nd, if nd == 1 { 0 } else { 1 }),
        "numpy.dstack" if nd <= 2 => stack(ir, items),
        "numpy.dstack" => concatenate(ir, items, nd, 2),
        _ => Vec::new(),
    }
}

/// The items with repeats of one variable dropped (they cannot differ).
fn distinct(items: &[VarId]) -> Vec<VarId> {
    let mut out: Vec<VarId> = Vec::new();
    for &v in items {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Every axis but `axis` equal across the arrays, one assertion per axis in order.
fn concatenate(ir: &FunctionIR, items: &[VarId], nd: usize, axis: i64) -> Vec<Equiv> {
    let axis = if axis < 0 { axis + nd as i64 } else { axis };
    let arrays = distinct(items);
    if arrays.len() < 2 || !(0..nd as i64).contains(&axis) {
        return Vec::new();
    }
    (0..nd)
        .filter(|&d| d as i64 != axis)
        .map(|d| Equiv {
            operands: arrays.iter().map(|&a| (a, Some(d))).collect(),
            names: arrays
                .iter()
                .map(|&a| format!("{}_size{d}", ir.var_name(a)))
                .collect(),
        })
        .collect()
}

/// Whole shapes equal.
fn stack(ir: &FunctionIR, items: &[VarId]) -> Vec<Equiv> {
    let arrays = distinct(items);
    if arrays.len() < 2 {
        return Vec::new();
    }
    vec![Equiv {
        operands: arrays.iter().map(|&a| (a, None)).collect(),
        names: arrays.iter().map(|&a| ir.var_name(a).to_string()).collect(),
    }]
}

/// The contracted axes of `np.dot` equal (none for two vectors).
fn dot(ir: &FunctionIR, typing: &TypingResult, a: VarId, b: VarId) -> Option<Equiv> {
    let (na, nb) = (ndim(typing, a)?, ndim(typing, b)?);
    let (da, db) = match (na, nb) {
        (1, 1) => return None,
        (1, _) => (0, nb - 2),
        (_, 1) => (na - 1, 0),
        (2, 2) => (1, 0),
        _ => return None,
    };
    Some(Equiv {
        operands: vec![(a, Some(da)), (b, Some(db))],
        names: vec![
            format!("{}_size{da}", ir.var_name(a)),
            format!("{}_size{db}", ir.var_name(b)),
        ],
    })
}
