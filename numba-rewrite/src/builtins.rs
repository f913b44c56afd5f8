//! numba-rs's built-in untyped rewrites (Numba's `numba/core/rewrites/` and
//! `RewriteDynamicRaises`): constant and dynamic raises, static getitems with constant
//! indices, constant right operands of `**`, and `print` calls as print statements.
//!
//! Each finds its work in `matches` (kept in the rewrite until `apply`) and rebuilds the
//! block in `apply`.

use numba_bytecode::Constant;
use numba_ir::{BinOp, Block, Expr, ExprId, FunctionIR, Inst, Label, RaiseArg, Stmt};
use numba_typeinfer::TypingResult;

use crate::consts::{ConstValue, Definitions};
use crate::{Rewrite, RewriteCx};

/// `raise Cls(consts...)` / `raise Cls` / bare `raise` → `<static> raise` (Numba's
/// `RewriteConstRaises`): the class and arguments become static data of the function.
#[derive(Default)]
pub struct RewriteConstRaises {
    label: Label,
    /// Statement index → (class, args).
    found: Vec<(usize, Option<String>, Option<Vec<Constant>>)>,
}

impl Rewrite for RewriteConstRaises {
    fn name(&self) -> &str {
        "RewriteConstRaises"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, _: Option<&TypingResult>) -> bool {
        self.label = label;
        self.found.clear();
        let block = &ir.blocks[&label];
        if !block
            .body
            .iter()
            .any(|i| matches!(i.stmt, Stmt::Raise { .. } | Stmt::TryRaise { .. }))
        {
            return false;
        }
        let defs = Definitions::new(ir);
        for (i, inst) in block.body.iter().enumerate() {
            let (Stmt::Raise { exception } | Stmt::TryRaise { exception }) = &inst.stmt else {
                continue;
            };
            match exception {
                // A bare `raise` re-raises: static, with nothing to say.
                None => self.found.push((i, None, None)),
                Some(v) => match defs.infer(*v) {
                    Some(ConstValue::ExcClass(c)) => self.found.push((i, Some(c), None)),
                    Some(ConstValue::ExcCall(c, args)) => self.found.push((i, Some(c), Some(args))),
                    _ => {}
                },
            }
        }
        !self.found.is_empty()
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        let mut block = cx.ir.blocks[&self.label].clone();
        for (i, exc_class, args) in self.found.drain(..) {
            let inst = &mut block.body[i];
            inst.stmt = match inst.stmt {
                Stmt::TryRaise { .. } => Stmt::StaticTryRaise { exc_class, args },
                _ => Stmt::StaticRaise { exc_class, args },
            };
        }
        block
    }
}

/// `raise Cls(args...)` with arguments known only at run time → `dynamic raise` (Numba's
/// `RewriteDynamicRaises`): the constant arguments are kept as constants, the others as
/// variables whose values the exception record carries.
#[derive(Default)]
pub struct RewriteDynamicRaises {
    label: Label,
    found: Vec<(usize, String, Vec<RaiseArg>)>,
}

impl Rewrite for RewriteDynamicRaises {
    fn name(&self) -> &str {
        "RewriteDynamicRaises"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, _: Option<&TypingResult>) -> bool {
        self.label = label;
        self.found.clear();
        let block = &ir.blocks[&label];
        if !block.body.iter().any(|i| {
            matches!(
                i.stmt,
                Stmt::Raise { exception: Some(_) } | Stmt::TryRaise { exception: Some(_) }
            )
        }) {
            return false;
        }
        let defs = Definitions::new(ir);
        for (i, inst) in block.body.iter().enumerate() {
            let (Stmt::Raise { exception: Some(v) } | Stmt::TryRaise { exception: Some(v) }) =
                &inst.stmt
            else {
                continue;
            };
            let Some((class, args)) = defs.exception_call(*v) else {
                continue;
            };
            let args = args
                .iter()
                .map(|&a| match defs.infer(a) {
                    Some(ConstValue::Const(c)) => RaiseArg::Const(c),
                    _ => RaiseArg::Var(a),
                })
                .collect();
            self.found.push((i, class, args));
        }
        !self.found.is_empty()
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        let mut block = cx.ir.blocks[&self.label].clone();
        for (i, class, args) in self.found.drain(..) {
            let inst = &mut block.body[i];
            let exc_class = Some(class);
            inst.stmt = match inst.stmt {
                Stmt::TryRaise { .. } => Stmt::DynamicTryRaise { exc_class, args },
                _ => Stmt::DynamicRaise { exc_class, args },
            };
        }
        block
    }
}

/// `getitem(value=x, index=$c)` with `$c` a constant integer → `static_getitem` (Numba's
/// `RewriteConstGetitems`): typing can pick a tuple's item at compile time.
#[derive(Default)]
pub struct RewriteConstGetitems {
    label: Label,
    found: Vec<(usize, i64)>,
}

impl Rewrite for RewriteConstGetitems {
    fn name(&self) -> &str {
        "RewriteConstGetitems"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, _: Option<&TypingResult>) -> bool {
        self.label = label;
        self.found.clear();
        let block = &ir.blocks[&label];
        let getitem = |inst: &Inst| match inst.stmt {
            Stmt::Assign { value, .. } => match ir.expr(value) {
                Expr::GetItem { index, .. } => Some(*index),
                _ => None,
            },
            _ => None,
        };
        if !block.body.iter().any(|i| getitem(i).is_some()) {
            return false;
        }
        let defs = Definitions::new(ir);
        for (i, inst) in block.body.iter().enumerate() {
            if let Some(index) = getitem(inst) {
                if let Some(ConstValue::Const(Constant::Int(k))) = defs.infer(index) {
                    self.found.push((i, k));
                }
            }
        }
        !self.found.is_empty()
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        let mut block = cx.ir.blocks[&self.label].clone();
        for (i, k) in self.found.drain(..) {
            let Stmt::Assign { target, value } = block.body[i].stmt else {
                continue;
            };
            let Expr::GetItem { value: v, index } = cx.ir.expr(value).clone() else {
                continue;
            };
            let e = cx.new_expr(
                Expr::StaticGetItem {
                    value: v,
                    index: k,
                    index_var: Some(index),
                },
                None,
            );
            block.body[i].stmt = Stmt::Assign { target, value: e };
        }
        block
    }
}

/// Records the constant right operand of `**` (Numba's `DetectStaticBinops`), so that
/// lowering can unroll `x ** 2` into multiplications. The block itself is unchanged.
#[derive(Default)]
pub struct DetectStaticBinops {
    label: Label,
    found: Vec<(ExprId, Constant)>,
}

impl Rewrite for DetectStaticBinops {
    fn name(&self) -> &str {
        "DetectStaticBinops"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, _: Option<&TypingResult>) -> bool {
        self.label = label;
        self.found.clear();
        let block = &ir.blocks[&label];
        let pows: Vec<(ExprId, numba_ir::VarId)> = block
            .body
            .iter()
            .filter_map(|i| match i.stmt {
                Stmt::Assign { value, .. } => match ir.expr(value) {
                    Expr::BinOp {
                        op: BinOp::Pow,
                        rhs,
                        ..
                    } if !ir.static_rhs.contains_key(&value) => Some((value, *rhs)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        if pows.is_empty() {
            return false;
        }
        let defs = Definitions::new(ir);
        for (e, rhs) in pows {
            if let Some(ConstValue::Const(c)) = defs.infer(rhs) {
                self.found.push((e, c));
            }
        }
        !self.found.is_empty()
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        for (e, c) in self.found.drain(..) {
            cx.ir.static_rhs.insert(e, c);
        }
        cx.ir.blocks[&self.label].clone()
    }
}

/// `$x = call print(args...)` → `print(args...)` and `$x = const(None)` (Numba's
/// `RewritePrintCalls`). Calls with keywords are left alone: typing reports them.
#[derive(Default)]
pub struct RewritePrintCalls {
    label: Label,
    found: Vec<usize>,
}

impl Rewrite for RewritePrintCalls {
    fn name(&self) -> &str {
        "RewritePrintCalls"
    }

    fn matches(&mut self, ir: &FunctionIR, label: Label, _: Option<&TypingResult>) -> bool {
        self.label = label;
        self.found.clear();
        let block = &ir.blocks[&label];
        let call = |inst: &Inst| match inst.stmt {
            Stmt::Assign { value, .. } => match ir.expr(value) {
                Expr::Call {
                    func,
                    kws,
                    varkwarg: None,
                    ..
                } if kws.is_empty() => Some(*func),
                _ => None,
            },
            _ => None,
        };
        if !block.body.iter().any(|i| call(i).is_some()) {
            return false;
        }
        let defs = Definitions::new(ir);
        for (i, inst) in block.body.iter().enumerate() {
            if let Some(f) = call(inst) {
                if defs.infer(f) == Some(ConstValue::Print) {
                    self.found.push(i);
                }
            }
        }
        !self.found.is_empty()
    }

    fn apply(&mut self, cx: &mut RewriteCx<'_>) -> Block {
        let old = cx.ir.blocks[&self.label].clone();
        let mut block = Block {
            body: Vec::with_capacity(old.body.len() + self.found.len()),
        };
        for (i, inst) in old.body.into_iter().enumerate() {
            if !self.found.contains(&i) {
                block.body.push(inst);
                continue;
            }
            let Stmt::Assign { target, value } = inst.stmt else {
                continue;
            };
            let Expr::Call { args, vararg, .. } = cx.ir.expr(value).clone() else {
                continue;
            };
            block.body.push(Inst {
                stmt: Stmt::Print { args, vararg },
                loc: inst.loc,
            });
            let none = cx.new_expr(Expr::Const(Constant::None), None);
            block.body.push(Inst {
                stmt: Stmt::Assign {
                    target,
                    value: none,
                },
                loc: inst.loc,
            });
        }
        self.found.clear();
        block
    }
}
