//! Constant inference over untyped IR (Numba's `FunctionIR.infer_constant`): what value a
//! variable is known to hold at compile time, following its single definition through
//! copies, constants, constant globals and free variables, tuples of constants, and calls
//! of exception classes with constant arguments.

use numba_bytecode::Constant;
use numba_ir::utils::DefUse;
use numba_ir::{Expr, FunctionIR, GlobalKind, Stmt, VarId};

/// A value known at compile time.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstValue {
    /// A plain constant (`1`, `'a'`, `(1, 2)`, `None`).
    Const(Constant),
    /// An exception class, by the repr the IR prints (`<class 'ValueError'>`).
    ExcClass(String),
    /// An exception class called with constant arguments.
    ExcCall(String, Vec<Constant>),
    /// The builtin `print`.
    Print,
}

/// Where variables are defined, computed once per block visit.
pub struct Definitions<'a> {
    ir: &'a FunctionIR,
    du: DefUse,
}

impl<'a> Definitions<'a> {
    pub fn new(ir: &'a FunctionIR) -> Self {
        Definitions {
            ir,
            du: DefUse::compute(ir),
        }
    }

    /// The expression assigned to `v` when it is assigned exactly once.
    pub fn single(&self, v: VarId) -> Option<&'a Expr> {
        let defs = self.du.defs.get(&v)?;
        let [(label, i)] = defs.as_slice() else {
            return None;
        };
        match &self.ir.blocks.get(label)?.body.get(*i)?.stmt {
            Stmt::Assign { value, .. } => Some(self.ir.expr(*value)),
            _ => None,
        }
    }

    /// The constant `v` holds, if inference can tell.
    pub fn infer(&self, v: VarId) -> Option<ConstValue> {
        self.infer_depth(v, 0)
    }

    fn infer_depth(&self, v: VarId, depth: usize) -> Option<ConstValue> {
        // Copies chain through SSA versions; a cycle means no constant.
        if depth > 64 {
            return None;
        }
        match self.single(v)? {
            Expr::Const(c) => Some(ConstValue::Const(c.clone())),
            Expr::Var(src) => self.infer_depth(*src, depth + 1),
            Expr::Global { value, .. } | Expr::FreeVar { value, .. } => match &value.kind {
                GlobalKind::Const(c) => Some(ConstValue::Const(c.clone())),
                GlobalKind::ExceptionClass(_) => Some(ConstValue::ExcClass(value.repr.clone())),
                GlobalKind::Builtin(n) if n == "print" => Some(ConstValue::Print),
                _ => None,
            },
            Expr::BuildTuple { items } => {
                let mut out = Vec::with_capacity(items.len());
                for &i in items {
                    match self.infer_depth(i, depth + 1)? {
                        ConstValue::Const(c) => out.push(c),
                        _ => return None,
                    }
                }
                Some(ConstValue::Const(Constant::Tuple(out)))
            }
            Expr::Call {
                func,
                args,
                kws,
                vararg: None,
                varkwarg: None,
                ..
            } if kws.is_empty() => {
                let ConstValue::ExcClass(class) = self.infer_depth(*func, depth + 1)? else {
                    return None;
                };
                let mut out = Vec::with_capacity(args.len());
                for &a in args {
                    match self.infer_depth(a, depth + 1)? {
                        ConstValue::Const(c) => out.push(c),
                        _ => return None,
                    }
                }
                Some(ConstValue::ExcCall(class, out))
            }
            _ => None,
        }
    }

    /// The exception class a variable holding `Cls(...)` was built from, with the call's
    /// arguments (for dynamic raises).
    pub fn exception_call(&self, v: VarId) -> Option<(String, &'a [VarId])> {
        let mut cur = v;
        for _ in 0..64 {
            match self.single(cur)? {
                Expr::Var(src) => cur = *src,
                Expr::Call {
                    func,
                    args,
                    kws,
                    vararg: None,
                    varkwarg: None,
                    ..
                } if kws.is_empty() => {
                    let ConstValue::ExcClass(class) = self.infer(*func)? else {
                        return None;
                    };
                    return Some((class, args));
                }
                _ => return None,
            }
        }
        None
    }
}
