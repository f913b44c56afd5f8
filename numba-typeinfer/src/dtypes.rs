//! dtype objects in compiled code: `np.dtype('f8')` / `np.dtype(np.float64)` (typed
//! `dtype(float64)`, as `a.dtype` is), their comparisons, `np.issubdtype` over NumPy's
//! scalar hierarchy (`np.number`, `np.integer`, `np.floating`, ...), and their attributes
//! (`crate::numpy::dtype_attr`). Every answer is a compile-time fact, so each is typed as
//! a literal (a branch on it is pruned like any constant condition).

use numba_ir::BinOp;

use crate::context::{BaseContext, FnTemplate};
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// NumPy's abstract scalar classes: each names its parent (`generic` is the root).
const ABSTRACT: &[(&str, &str)] = &[
    ("generic", ""),
    ("number", "generic"),
    ("integer", "number"),
    ("signedinteger", "integer"),
    ("unsignedinteger", "integer"),
    ("inexact", "number"),
    ("floating", "inexact"),
    ("complexfloating", "inexact"),
];

/// The key of an abstract class's function type (`numpy.floating`).
fn abstract_name(t: TypeId) -> Option<&'static str> {
    match t.get() {
        Type::Function(k) => ABSTRACT
            .iter()
            .map(|(n, _)| *n)
            .find(|n| k.strip_prefix("numpy.") == Some(n)),
        _ => None,
    }
}

/// The concrete dtype a type stands for (`dtype(float64)`, `np.float64`, `'f8'`).
fn concrete(t: TypeId) -> Option<TypeId> {
    match t.get() {
        Type::DType(d) | Type::NumberClass(d) => Some(d),
        Type::StringLiteral(_) => crate::numpy::dtype_arg(t),
        _ => None,
    }
}

/// The abstract class directly above a concrete dtype.
fn parent_of(d: TypeId) -> &'static str {
    match d.get() {
        Type::Boolean => "generic",
        Type::Integer { signed: true, .. } => "signedinteger",
        Type::Integer { signed: false, .. } => "unsignedinteger",
        Type::Float { .. } => "floating",
        Type::Complex { .. } => "complexfloating",
        _ => "generic",
    }
}

/// Whether abstract class `a` is `b` or below it.
fn abstract_below(mut a: &str, b: &str) -> bool {
    loop {
        if a == b {
            return true;
        }
        match ABSTRACT.iter().find(|(n, _)| *n == a) {
            Some((_, p)) if !p.is_empty() => a = p,
            _ => return false,
        }
    }
}

/// `np.issubdtype(x, y)`, or None when either is not a dtype or scalar class.
fn issubdtype(x: TypeId, y: TypeId) -> Option<bool> {
    match (concrete(x), abstract_name(x), concrete(y), abstract_name(y)) {
        (Some(a), _, Some(b), _) => Some(a == b),
        (Some(a), _, None, Some(b)) => Some(abstract_below(parent_of(a), b)),
        (None, Some(a), None, Some(b)) => Some(abstract_below(a, b)),
        // An abstract class is never below a concrete dtype.
        (None, Some(_), Some(_), _) => Some(false),
        _ => None,
    }
}

fn boolean(b: bool) -> TypeId {
    intern(Type::BooleanLiteral(b))
}

/// `dtype == dtype` (or a scalar class): whether they are the same dtype.
pub fn binop(op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    if !matches!(op, BinOp::Eq | BinOp::Ne) {
        return None;
    }
    let is_dtype = |t: TypeId| matches!(t.get(), Type::DType(_));
    if !(is_dtype(lhs) || is_dtype(rhs)) {
        return None;
    }
    let (a, b) = (concrete(lhs)?, concrete(rhs)?);
    Some(Signature {
        ret: boolean((a == b) == (op == BinOp::Eq)),
        args: vec![lhs, rhs],
        key: ImplKey::BinOp(op),
    })
}

impl BaseContext {
    /// `np.dtype`, `np.issubdtype` and the abstract scalar classes.
    pub(crate) fn install_dtypes(&mut self) {
        self.register(
            "numpy.dtype",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => Some(Signature {
                        ret: intern(Type::DType(crate::numpy::dtype_arg(*x)?)),
                        args: vec![*x],
                        key: ImplKey::Function("numpy.dtype".into()),
                    }),
                    _ => None,
                },
                "(dtype name, scalar class or dtype,)",
            )),
        );
        self.register(
            "numpy.issubdtype",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, y] => Some(Signature {
                        ret: boolean(issubdtype(*x, *y)?),
                        args: vec![*x, *y],
                        key: ImplKey::Function("numpy.issubdtype".into()),
                    }),
                    _ => None,
                },
                "(dtype or scalar class, dtype or scalar class)",
            )),
        );
        // The abstract classes: named (`np.floating`) as arguments of `issubdtype`;
        // not callable.
        for (name, _) in ABSTRACT {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    |_: &[TypeId]| None,
                    "(an abstract scalar class: not callable)",
                )),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str) -> TypeId {
        intern(Type::Function(format!("numpy.{name}")))
    }

    #[test]
    fn issubdtype_follows_numpys_hierarchy() {
        // Checked against NumPy 2: np.issubdtype(np.float32, np.floating) is True, ...
        let d = |t| intern(Type::DType(t));
        assert_eq!(issubdtype(d(FLOAT32), f("floating")), Some(true));
        assert_eq!(issubdtype(d(FLOAT32), f("integer")), Some(false));
        assert_eq!(issubdtype(d(UINT8), f("signedinteger")), Some(false));
        assert_eq!(issubdtype(d(UINT8), f("integer")), Some(true));
        assert_eq!(issubdtype(d(COMPLEX64), f("inexact")), Some(true));
        assert_eq!(issubdtype(d(BOOLEAN), f("number")), Some(false));
        assert_eq!(issubdtype(d(BOOLEAN), f("generic")), Some(true));
        assert_eq!(issubdtype(f("floating"), f("number")), Some(true));
        assert_eq!(issubdtype(f("number"), f("floating")), Some(false));
        assert_eq!(issubdtype(d(INT64), d(INT64)), Some(true));
        assert_eq!(
            issubdtype(d(INT64), intern(Type::NumberClass(INT32))),
            Some(false)
        );
    }
}
