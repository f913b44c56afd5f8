//! `functools.reduce(f, iterable[, initial])` as a loop (Numba's `_inline_reduction` in
//! `inline_closurecall.py`).
//!
//! The call becomes, in place:
//!
//! ```text
//!     it = getiter(iterable)
//!     acc = initial            (without one: the first item, or CPython's TypeError
//!                               "reduce() of empty iterable with no initial value")
//! head:
//!     pair = iternext(it); item = pair_first(pair)
//!     branch pair_second(pair), body, done
//! body:
//!     acc = f(acc, item); jump head
//! done:
//!     result = acc; (the rest of the block)
//! ```
//!
//! It runs before closures are inlined, so a lambda or inner function passed as `f` is
//! inlined into the loop; a jitted function stays a call. The IR is not in SSA form yet,
//! so `acc` may be assigned in several places.
//!
//! Under `parallel=` (its `reduction` option), a call with an initial value iterates
//! `reduce_source(iterable)` instead: the intrinsic [`REDUCE_SOURCE`] is the iterable
//! itself, and marks the loop for numba-parfor, which makes it a reduction parfor when
//! the iterable is a 1-d array (Numba's `ConvertReducePass`). The intrinsic's global
//! carries the name of the variable holding `f` (Numba's pattern names it).

use numba_bytecode::Constant;

use crate::error::IrError;
use crate::ir::*;
use crate::utils::{dead_code_elimination, first_def, fresh_name};
use crate::GlobalKind;

/// `x = reduce_source(iterable)`: `iterable` itself; the loop over it is a `reduce`.
pub const REDUCE_SOURCE: &str = "reduce_source";

/// Numba's (and CPython's) message for a call with the wrong number of arguments.
const ARITY: &str =
    "invalid reduce call, two arguments are required (optional initial value can also be specified)";

/// Rewrite every `functools.reduce` call of `ir` into a loop; `parallel` marks the loops
/// over an iterable with an initial value (see the module doc). Returns whether any was.
pub fn inline_reduce_calls(ir: &mut FunctionIR, parallel: bool) -> Result<bool, IrError> {
    // Most functions never name functools: one scan of the expressions.
    let names_functools = |e: &Expr| match e {
        Expr::Global { value, .. } => match &value.kind {
            GlobalKind::ModuleFunction { module, name } => {
                module == "functools" && name == "reduce"
            }
            GlobalKind::Module(m) => m == "functools",
            _ => false,
        },
        _ => false,
    };
    if !ir.exprs.iter().any(names_functools) {
        return Ok(false);
    }
    let mut changed = false;
    while let Some((label, index)) = find(ir)? {
        rewrite(ir, label, index, parallel);
        changed = true;
    }
    if changed {
        // The `reduce` globals nothing calls now (typing would reject them).
        while dead_code_elimination(ir) {}
    }
    Ok(changed)
}

/// Whether `v` holds `functools.reduce` (through copies, or as the module's attribute).
fn is_reduce(ir: &FunctionIR, v: VarId) -> bool {
    let def = |v: VarId| first_def(ir, v);
    let mut cur = v;
    for _ in 0..8 {
        match def(cur) {
            Some(Expr::Var(src)) => cur = *src,
            Some(Expr::Global { value, .. }) => {
                return matches!(&value.kind,
                    GlobalKind::ModuleFunction { module, name }
                        if module == "functools" && name == "reduce");
            }
            Some(Expr::GetAttr { value, attr }) if attr == "reduce" => {
                return matches!(def(*value), Some(Expr::Global { value, .. })
                    if value.kind == GlobalKind::Module("functools".into()));
            }
            _ => return false,
        }
    }
    false
}

/// The first `reduce(...)` call: its block and statement index.
fn find(ir: &FunctionIR) -> Result<Option<(Label, usize)>, IrError> {
    for (&label, block) in &ir.blocks {
        for (index, inst) in block.body.iter().enumerate() {
            let Stmt::Assign { value, .. } = inst.stmt else {
                continue;
            };
            let Expr::Call {
                func,
                args,
                kws,
                vararg,
                varkwarg,
                ..
            } = ir.expr(value)
            else {
                continue;
            };
            if !is_reduce(ir, *func) {
                continue;
            }
            if !kws.is_empty()
                || vararg.is_some()
                || varkwarg.is_some()
                || !(2..=3).contains(&args.len())
            {
                return Err(IrError::Unsupported {
                    message: ARITY.into(),
                    line: inst.loc.line,
                });
            }
            return Ok(Some((label, index)));
        }
    }
    Ok(None)
}

fn rewrite(ir: &mut FunctionIR, label: Label, index: usize, parallel: bool) {
    let block = ir.blocks.get_mut(&label).expect("block");
    let rest = block.body.split_off(index + 1);
    let call = block.body.pop().expect("the call");
    let loc = call.loc;
    let Stmt::Assign { target, value } = call.stmt else {
        unreachable!("find returns assignments")
    };
    let Expr::Call { args, .. } = ir.expr(value).clone() else {
        unreachable!("find returns calls")
    };
    let (f, iterable, initial) = (args[0], args[1], args.get(2).copied());
    let var = |ir: &mut FunctionIR, base: &str| {
        let name = fresh_name(ir, base);
        ir.add_var(name, loc)
    };
    let assign = |ir: &mut FunctionIR, target: VarId, e: Expr| {
        let value = ir.add_expr(e);
        Inst {
            stmt: Stmt::Assign { target, value },
            loc,
        }
    };
    let mut next_label = ir.blocks.keys().next_back().copied().unwrap_or(0) + 1;
    let mut fresh_label = || {
        next_label += 1;
        next_label
    };
    let (head, body, done) = (fresh_label(), fresh_label(), fresh_label());
    for l in [head, body, done] {
        ir.block_locs.insert(l, loc);
    }

    let it = var(ir, "$reduce_iter");
    let acc = var(ir, "$reduce_acc");
    let mut entry = Vec::new();
    let source = if parallel && initial.is_some() {
        let func = var(ir, "$reduce_source_func");
        let global = Expr::Global {
            name: REDUCE_SOURCE.into(),
            value: crate::Global {
                kind: GlobalKind::Intrinsic(REDUCE_SOURCE.into()),
                repr: ir.var_name(f).to_string(),
            },
        };
        entry.push(assign(ir, func, global));
        let source = var(ir, "$reduce_source");
        entry.push(assign(
            ir,
            source,
            Expr::synthetic_call(func, vec![iterable]),
        ));
        source
    } else {
        iterable
    };
    entry.push(assign(ir, it, Expr::GetIter { value: source }));
    // `iternext` into `(item, more)`: the statements, the item and the flag.
    let next = |ir: &mut FunctionIR| {
        let pair = var(ir, "$reduce_pair");
        let item = var(ir, "$reduce_item");
        let more = var(ir, "$reduce_more");
        let stmts = vec![
            assign(ir, pair, Expr::IterNext { value: it }),
            assign(ir, item, Expr::PairFirst { value: pair }),
            assign(ir, more, Expr::PairSecond { value: pair }),
        ];
        (stmts, item, more)
    };
    match initial {
        Some(v) => {
            entry.push(assign(ir, acc, Expr::Var(v)));
            entry.push(Inst {
                stmt: Stmt::Jump { target: head },
                loc,
            });
        }
        None => {
            let (stmts, item, more) = next(ir);
            entry.extend(stmts);
            entry.push(assign(ir, acc, Expr::Var(item)));
            let empty = fresh_label();
            ir.block_locs.insert(empty, loc);
            entry.push(Inst {
                stmt: Stmt::Branch {
                    cond: more,
                    truebr: head,
                    falsebr: empty,
                },
                loc,
            });
            let raise = Inst {
                stmt: Stmt::StaticRaise {
                    exc_class: Some("<class 'TypeError'>".into()),
                    args: Some(vec![Constant::Str(
                        "reduce() of empty iterable with no initial value".into(),
                    )]),
                },
                loc,
            };
            ir.blocks.insert(empty, Block { body: vec![raise] });
        }
    }
    ir.blocks.get_mut(&label).expect("block").body.extend(entry);

    let (mut head_body, item, more) = next(ir);
    head_body.push(Inst {
        stmt: Stmt::Branch {
            cond: more,
            truebr: body,
            falsebr: done,
        },
        loc,
    });
    ir.blocks.insert(head, Block { body: head_body });

    let step = var(ir, "$reduce_step");
    let call = ir.add_expr(Expr::synthetic_call(f, vec![acc, item]));
    let body_stmts = vec![
        Inst {
            stmt: Stmt::Assign {
                target: step,
                value: call,
            },
            loc,
        },
        assign(ir, acc, Expr::Var(step)),
        Inst {
            stmt: Stmt::Jump { target: head },
            loc,
        },
    ];
    ir.blocks.insert(body, Block { body: body_stmts });

    let mut done_stmts = vec![assign(ir, target, Expr::Var(acc))];
    done_stmts.extend(rest);
    ir.blocks.insert(done, Block { body: done_stmts });
}
