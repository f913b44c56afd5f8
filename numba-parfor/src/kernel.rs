//! A parfor's body as a function of its own (Numba's `_create_gufunc_for_parfor_body`),
//! built as typed IR so any back end lowers it like any other function.
//!
//! The kernel takes the parfor's parameters, then `lo` and `hi`: the slice
//! `[lo, hi)` of the outermost loop's iterations (counted from 0) that one division of
//! the schedule runs. It loops over that slice (inner loop nests in full), runs the body,
//! and returns the reduction variables' and race variables' final values as a tuple
//! (`none` when there are none). Reduction variables arrive holding the value each
//! division starts from (the identity, or for `min`/`max` the value before the loop); an
//! array reduction variable arrives as the array itself and the kernel starts from a new
//! array of its shape filled with the identity ([`REDINIT`]).
//! Variables keep their ids, so the enclosing function's typing applies to the body
//! unchanged; dels are inserted for the kernel on its own.

use std::collections::BTreeMap;

use numba_bytecode::Constant;
use numba_ir::{BinOp, Block, Expr, ExtensionNode, FunctionIR, Inst, Label, Loc, Stmt, VarId};
use numba_typeinfer::types::{tuple_of, BOOLEAN, INT64, NONE};
use numba_typeinfer::{Signature, TypeId, TypingResult};

use crate::node::{Bound, Parfor, RedOp};
use crate::{ParforError, ParforStage};

/// A parfor's kernel: its IR and typing, and what its result tuple holds.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub ir: FunctionIR,
    pub typing: TypingResult,
    /// The variables the result tuple holds, in order: reductions, then races.
    pub outputs: Vec<VarId>,
}

struct Builder<'a> {
    ir: FunctionIR,
    typing: TypingResult,
    loc: Loc,
    parent: &'a FunctionIR,
}

impl Builder<'_> {
    fn var(&mut self, base: &str, t: TypeId) -> VarId {
        let name = numba_ir::utils::fresh_name(&self.ir, base);
        let v = self.ir.add_var(name, self.loc);
        self.typing.typemap.push(t);
        v
    }

    fn assign(&mut self, block: &mut Vec<Inst>, target: VarId, e: Expr) {
        let value = self.ir.add_expr(e);
        block.push(Inst {
            stmt: Stmt::Assign { target, value },
            loc: self.loc,
        });
    }

    fn binop(
        &mut self,
        block: &mut Vec<Inst>,
        target: VarId,
        op: BinOp,
        lhs: VarId,
        rhs: VarId,
    ) -> Result<(), ParforError> {
        // A bound may be a literal (`prange(1, n)` with the 1 in a variable).
        let lt = self.typing.type_of(lhs).unliteral();
        let rt = self.typing.type_of(rhs).unliteral();
        let sig: Signature =
            numba_typeinfer::context::binop_signature(op, lt, rt).ok_or_else(|| {
                ParforError::Failed {
                    stage: ParforStage::PreLowering,
                    message: format!("no {op:?} for the loop bounds ({lt}, {rt})"),
                }
            })?;
        let value = self.ir.add_expr(Expr::BinOp { op, lhs, rhs });
        self.typing.calltypes.insert(value, sig);
        block.push(Inst {
            stmt: Stmt::Assign { target, value },
            loc: self.loc,
        });
        Ok(())
    }

    /// A bound as a variable of the kernel (constants are materialised).
    fn bound(&mut self, block: &mut Vec<Inst>, b: Bound) -> VarId {
        match b {
            Bound::Var(v) => v,
            Bound::Const(c) => {
                let v = self.var("$parfor_const", INT64);
                self.assign(block, v, Expr::Const(Constant::Int(c)));
                v
            }
        }
    }

    fn jump(block: &mut Vec<Inst>, target: Label, loc: Loc) {
        block.push(Inst {
            stmt: Stmt::Jump { target },
            loc,
        });
    }
}

/// `acc = parfor_redinit(arr)` (attr `op`: `add` or `mul`): a new C array of `arr`'s
/// shape and the variable's type, every element the operator's identity (0 or 1): a
/// division's private accumulator for an array reduction.
pub const REDINIT: &str = "parfor_redinit";

/// The kernel of `pf`, a parfor of the function `parent` typed by `typing`.
pub fn build_kernel(
    parent: &FunctionIR,
    typing: &TypingResult,
    pf: &Parfor,
) -> Result<Kernel, ParforError> {
    let loc = pf.loc;
    let mut ir = parent.clone();
    ir.blocks = BTreeMap::new();
    ir.is_generator = false;
    ir.generator_info = None;
    ir.name = format!("{}__parfor{}", parent.name, pf.id);
    ir.qualname = format!("{}.<parfor {}>", parent.qualname, pf.id);
    let mut b = Builder {
        ir,
        typing: typing.clone(),
        loc,
        parent,
    };
    let outputs: Vec<VarId> = pf
        .reductions
        .iter()
        .map(|r| r.var)
        .chain(pf.races.iter().copied())
        .collect();
    // Labels: the entry is 0 (lowering enters at the smallest label); the loop's own
    // blocks come after the body's.
    let top = pf
        .loop_body
        .keys()
        .chain(parent.blocks.keys())
        .max()
        .copied()
        .unwrap_or(0)
        + 1;
    let nests = &pf.loop_nests;
    if nests.is_empty() {
        return Err(ParforError::Failed {
            stage: ParforStage::PreLowering,
            message: "a parfor without a loop nest".into(),
        });
    }
    let head = |d: usize| top + 3 * d as Label;
    let init = |d: usize| top + 3 * d as Label + 1;
    let latch = |d: usize| top + 3 * d as Label + 2;
    let exit = top + 3 * nests.len() as Label;
    let body_entry = *pf
        .loop_body
        .keys()
        .next()
        .ok_or_else(|| ParforError::Failed {
            stage: ParforStage::PreLowering,
            message: "a parfor without a body".into(),
        })?;

    // Entry: parameters, the division's slice, the outer counter.
    let mut entry = Vec::new();
    let mut arg_types = Vec::new();
    let mut arg_names = Vec::new();
    for (i, &p) in pf.params.iter().enumerate() {
        let name = b.parent.var_name(p).to_string();
        b.assign(
            &mut entry,
            p,
            Expr::Arg {
                index: i as u32,
                name: name.clone(),
            },
        );
        arg_types.push(typing.type_of(p));
        arg_names.push(name);
    }
    // An array reduction accumulates into the division's own array, of the variable's
    // shape and filled with the operator's identity; the caller combines them.
    for r in &pf.reductions {
        if typing.type_of(r.var).is_array() {
            let op = match r.op {
                RedOp::Add => "add",
                RedOp::Mul => "mul",
                _ => {
                    return Err(ParforError::Unsupported {
                        message: format!(
                            "the reduction of array variable '{}' in a parallel loop must be by + - * or /",
                            parent.var_name(r.var)
                        ),
                        line: loc.line,
                    })
                }
            };
            let mut node = ExtensionNode::new(REDINIT, vec![r.var]);
            node.attrs.push(("op".into(), op.into()));
            b.assign(&mut entry, r.var, Expr::Extension(Box::new(node)));
        }
    }
    // Allocations every iteration makes alike, made once per division (`hoist`).
    let hoisting = crate::hoist::plan(parent, typing, pf);
    entry.extend(hoisting.prologue.iter().cloned());
    for e in &hoisting.as_empty {
        if let Some(s) = b.typing.calltypes.get_mut(e) {
            s.key = numba_typeinfer::ImplKey::Function("numpy.empty".into());
        }
    }
    let n = pf.params.len() as u32;
    let lo = b.var("$parfor_lo", INT64);
    let hi = b.var("$parfor_hi", INT64);
    b.assign(
        &mut entry,
        lo,
        Expr::Arg {
            index: n,
            name: "$parfor_lo".into(),
        },
    );
    b.assign(
        &mut entry,
        hi,
        Expr::Arg {
            index: n + 1,
            name: "$parfor_hi".into(),
        },
    );
    arg_types.extend([INT64, INT64]);
    arg_names.extend(["$parfor_lo".to_string(), "$parfor_hi".to_string()]);
    let k = b.var("$parfor_k", INT64);
    b.assign(&mut entry, k, Expr::Var(lo));
    let one = b.var("$parfor_one", INT64);
    b.assign(&mut entry, one, Expr::Const(Constant::Int(1)));
    Builder::jump(&mut entry, head(0), loc);
    b.ir.blocks.insert(0, Block { body: entry });

    for (d, nest) in nests.iter().enumerate() {
        // head: test the counter; init: compute the index and enter the next level.
        let mut hb = Vec::new();
        let cond = b.var("$parfor_cond", BOOLEAN);
        let next = if d + 1 < nests.len() {
            head(d + 1)
        } else {
            body_entry
        };
        let after = if d == 0 { exit } else { latch(d - 1) };
        let mut ib = Vec::new();
        if d == 0 {
            b.binop(&mut hb, cond, BinOp::Lt, k, hi)?;
            // index = start + k * step (k itself for the usual range(n)).
            if (nest.start, nest.step) == (Bound::Const(0), Bound::Const(1)) {
                b.assign(&mut ib, nest.index, Expr::Var(k));
            } else {
                let start = b.bound(&mut ib, nest.start);
                let step = b.bound(&mut ib, nest.step);
                let t = b.var("$parfor_offset", INT64);
                b.binop(&mut ib, t, BinOp::Mul, k, step)?;
                b.binop(&mut ib, nest.index, BinOp::Add, start, t)?;
            }
        } else {
            let stop = b.bound(&mut hb, nest.stop);
            b.binop(&mut hb, cond, BinOp::Lt, nest.index, stop)?;
        }
        hb.push(Inst {
            stmt: Stmt::Branch {
                cond,
                truebr: init(d),
                falsebr: after,
            },
            loc,
        });
        b.ir.blocks.insert(head(d), Block { body: hb });
        if d + 1 < nests.len() {
            let inner = nests[d + 1];
            let s = b.bound(&mut ib, inner.start);
            b.assign(&mut ib, inner.index, Expr::Var(s));
        }
        Builder::jump(&mut ib, next, loc);
        b.ir.blocks.insert(init(d), Block { body: ib });
        // latch: advance this level.
        let mut lb = Vec::new();
        if d == 0 {
            b.binop(&mut lb, k, BinOp::Add, k, one)?;
        } else {
            let step = b.bound(&mut lb, nest.step);
            b.binop(&mut lb, nest.index, BinOp::Add, nest.index, step)?;
        }
        Builder::jump(&mut lb, head(d), loc);
        b.ir.blocks.insert(latch(d), Block { body: lb });
    }

    // The body: leaving it (or falling off its end block) is the next iteration.
    let inner_latch = latch(nests.len() - 1);
    for (&l, block) in &hoisting.body {
        let mut block = block.clone();
        let leave = |t: &mut Label| {
            if !pf.loop_body.contains_key(t) {
                *t = inner_latch;
            }
        };
        match block.body.last_mut().map(|i| &mut i.stmt) {
            Some(Stmt::Jump { target }) => leave(target),
            Some(Stmt::Branch {
                truebr, falsebr, ..
            }) => {
                leave(truebr);
                leave(falsebr);
            }
            _ => {}
        }
        if !block.is_terminated() {
            Builder::jump(&mut block.body, inner_latch, loc);
        }
        b.ir.blocks.insert(l, block);
    }

    // Exit: the outputs.
    let mut xb = Vec::new();
    let ret_t = if outputs.is_empty() {
        NONE
    } else {
        tuple_of(
            &outputs
                .iter()
                .map(|&v| typing.type_of(v))
                .collect::<Vec<_>>(),
        )
    };
    let ret = b.var("$parfor_ret", ret_t);
    if outputs.is_empty() {
        b.assign(&mut xb, ret, Expr::Const(Constant::None));
    } else {
        b.assign(
            &mut xb,
            ret,
            Expr::BuildTuple {
                items: outputs.clone(),
            },
        );
    }
    xb.push(Inst {
        stmt: Stmt::Return { value: ret },
        loc,
    });
    b.ir.blocks.insert(exit, Block { body: xb });

    let Builder {
        mut ir, mut typing, ..
    } = b;
    ir.arg_names = arg_names;
    typing.arg_types = arg_types;
    typing.return_type = ret_t;
    numba_ir::postproc::insert_dels(&mut ir);
    Ok(Kernel {
        ir,
        typing,
        outputs,
    })
}
