//! Typing of Python sets (Numba's `types.Set`, `setobj.py`): their methods, operators
//! and the builtins that make them. An empty `set()` is `set(undefined)` until an `add`
//! or `update` types it, as an empty list is (see [`crate::lists`]).

use crate::conv::can_convert;
use crate::generators::iterable_item;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// `set(dtype)`, not reflected.
pub fn set_of(dtype: TypeId) -> TypeId {
    intern(Type::Set {
        dtype: dtype.unliteral(),
        reflected: false,
    })
}

/// The item type of a set type.
pub fn set_dtype(t: TypeId) -> Option<TypeId> {
    match t.get() {
        Type::Set { dtype, .. } => Some(dtype),
        _ => None,
    }
}

/// Item types a set can hold: what hashes as CPython's numbers, strings and tuples do.
pub fn hashable(t: TypeId) -> bool {
    match t.get() {
        Type::Boolean
        | Type::Integer { .. }
        | Type::Float { .. }
        | Type::Complex { .. }
        | Type::Unicode
        | Type::Bytes => true,
        Type::UniTuple(..)
        | Type::Tuple(_)
        | Type::NamedTuple { .. }
        | Type::NamedUniTuple { .. } => {
            crate::conv::tuple_items(t).is_some_and(|i| i.into_iter().all(hashable))
        }
        _ => false,
    }
}

/// The methods sets have.
pub const METHODS: &[&str] = &[
    "add",
    "remove",
    "discard",
    "pop",
    "clear",
    "copy",
    "update",
    "union",
    "intersection",
    "difference",
    "symmetric_difference",
    "issubset",
    "issuperset",
    "isdisjoint",
    "intersection_update",
    "difference_update",
    "symmetric_difference_update",
];

/// `s.method`: a bound method.
pub fn getattr(value: TypeId, attr: &str) -> Option<TypeId> {
    set_dtype(value)?;
    METHODS.contains(&attr).then(|| {
        intern(Type::BoundFunction {
            key: format!("set.{attr}"),
            this: value,
        })
    })
}

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.into()),
    }
}

/// The set type after adding items of type `item`: refined when still undefined.
fn stored(this: TypeId, item: TypeId) -> Option<TypeId> {
    let Type::Set { dtype, reflected } = this.get() else {
        return None;
    };
    let item = item.unliteral();
    if dtype == UNDEFINED {
        return hashable(item).then(|| {
            intern(Type::Set {
                dtype: item,
                reflected,
            })
        });
    }
    can_convert(item, dtype).map(|_| this)
}

/// Whether two sets can meet in a set operation (Numba: "All Sets must be of the same
/// type").
fn same_kind(a: TypeId, b: TypeId) -> bool {
    matches!((set_dtype(a), set_dtype(b)), (Some(x), Some(y)) if x == y)
}

/// A set method's signature (the receiver first).
pub fn method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    let dtype = set_dtype(this)?;
    let name = key.strip_prefix("set.")?;
    Some(match (name, args) {
        ("add", [x]) => {
            let this = stored(this, *x)?;
            sig(key, NONE, vec![this, set_dtype(this)?])
        }
        ("update", [it]) => {
            let this = stored(this, iterable_item(*it)?)?;
            sig(key, NONE, vec![this, it.unliteral()])
        }
        ("remove" | "discard", [x]) if can_convert(x.unliteral(), dtype).is_some() => {
            sig(key, NONE, vec![this, dtype])
        }
        ("pop", []) => sig(key, dtype, vec![this]),
        ("clear", []) => sig(key, NONE, vec![this]),
        ("copy", []) => sig(key, set_of(dtype), vec![this]),
        ("union" | "intersection" | "difference" | "symmetric_difference", [o])
            if same_kind(this, *o) =>
        {
            sig(key, set_of(dtype), vec![this, *o])
        }
        ("issubset" | "issuperset" | "isdisjoint", [o]) if same_kind(this, *o) => {
            sig(key, BOOLEAN, vec![this, *o])
        }
        ("intersection_update" | "difference_update" | "symmetric_difference_update", [o])
            if same_kind(this, *o) =>
        {
            sig(key, NONE, vec![this, *o])
        }
        _ => return None,
    })
}

/// Numba's message for a set operation between sets of different item types.
pub fn explain(key: &str, this: TypeId, args: &[TypeId]) -> Option<String> {
    let name = key.strip_prefix("set.")?;
    let binary = !matches!(
        name,
        "add" | "update" | "remove" | "discard" | "pop" | "clear" | "copy"
    );
    match args {
        [o] if binary && set_dtype(*o).is_some() && !same_kind(this, *o) => {
            Some("All Sets must be of the same type".into())
        }
        [o] if binary && set_dtype(*o).is_none() => Some("All arguments must be Sets".into()),
        _ => None,
    }
}

/// Numba's message for a set operator between a set and something else.
pub fn explain_binop(op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<String> {
    use numba_ir::BinOp;
    if !matches!(
        op,
        BinOp::Or
            | BinOp::And
            | BinOp::Sub
            | BinOp::Xor
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
    ) {
        return None;
    }
    match (set_dtype(lhs.unliteral()), set_dtype(rhs.unliteral())) {
        (Some(a), Some(b)) if a != b => Some("All Sets must be of the same type".into()),
        // Comparing a set with another value is `False` in Python; Numba rejects it.
        (Some(_), None) | (None, Some(_)) => Some("All arguments must be Sets".into()),
        _ => None,
    }
}

/// Operators with set operands.
pub fn binop(op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    use numba_ir::BinOp;
    let (l, r) = (lhs.unliteral(), rhs.unliteral());
    let mk = |ret: TypeId| Signature {
        ret,
        args: vec![l, r],
        key: ImplKey::BinOp(op),
    };
    match op {
        BinOp::In => {
            let d = set_dtype(l)?;
            can_convert(r, d).map(|_| mk(BOOLEAN))
        }
        BinOp::Or | BinOp::And | BinOp::Sub | BinOp::Xor if same_kind(l, r) => {
            Some(mk(set_of(set_dtype(l)?)))
        }
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
            if same_kind(l, r) =>
        {
            Some(mk(BOOLEAN))
        }
        _ => None,
    }
}

/// `s |= t`, `s &= t`, `s -= t`, `s ^= t`: in place, the result is `s`.
pub fn inplace_binop(op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    use numba_ir::BinOp;
    let (l, r) = (lhs.unliteral(), rhs.unliteral());
    if !same_kind(l, r) {
        return None;
    }
    let key = match op {
        BinOp::Or => "set.ior",
        BinOp::And => "set.iand",
        BinOp::Sub => "set.isub",
        BinOp::Xor => "set.ixor",
        _ => return None,
    };
    Some(sig(key, l, vec![l, r]))
}

/// `set()` and `set(iterable)`.
pub fn builtin(args: &[TypeId]) -> Option<Signature> {
    match args {
        [] => Some(sig("set", set_of(UNDEFINED), vec![])),
        [it] => {
            let item = iterable_item(*it)?;
            hashable(item).then(|| sig("set", set_of(item), vec![it.unliteral()]))
        }
        _ => None,
    }
}
