//! Typing of Python lists (Numba's `types.List`, `listobj.py` and `typing/listdecl.py`):
//! their methods, operators, indexing and the builtins that make them.
//!
//! An empty list (`[]`, `list()`) is `list(undefined)` until something stores into it:
//! the first `append`/`extend`/`insert` refines the list's variable (and the variables
//! it was copied from) to the stored type, as Numba's typing of empty lists does.

use crate::conv::{can_convert, unify};
use crate::generators::iterable_item;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// `list(dtype)<iv=None>`, not reflected.
pub fn list_of(dtype: TypeId) -> TypeId {
    intern(Type::List {
        dtype: dtype.unliteral(),
        reflected: false,
        typed: false,
    })
}

/// A new list of `dtype` of the kind of `this`: a typed list's copies and slices are
/// typed lists.
fn like(this: TypeId, dtype: TypeId) -> TypeId {
    if matches!(this.get(), Type::List { typed: true, .. }) {
        typed_list_of(dtype)
    } else {
        list_of(dtype)
    }
}

/// `ListType[dtype]`: `numba_rs.typed.List`'s type.
pub fn typed_list_of(dtype: TypeId) -> TypeId {
    intern(Type::List {
        dtype: dtype.unliteral(),
        reflected: false,
        typed: true,
    })
}

/// The item type of a list type.
pub fn list_dtype(t: TypeId) -> Option<TypeId> {
    match t.get() {
        Type::List { dtype, .. } => Some(dtype),
        _ => None,
    }
}

/// Whether a type still holds `undefined` (an empty list nothing stored into).
pub fn is_imprecise(t: TypeId) -> bool {
    match t.get() {
        Type::Undefined => true,
        Type::List { dtype, .. } | Type::Set { dtype, .. } => is_imprecise(dtype),
        Type::Dict { key, value } => is_imprecise(key) || is_imprecise(value),
        Type::DictView { dict, .. } => is_imprecise(dict),
        _ => false,
    }
}

/// Whether both are reflected (untyped) lists, whose item types may widen.
pub fn both_reflected(a: TypeId, b: TypeId) -> bool {
    let untyped = |t: TypeId| matches!(t.get(), Type::List { typed: false, .. });
    untyped(a) && untyped(b)
}

/// The methods lists have.
pub const METHODS: &[&str] = &[
    "append", "extend", "insert", "pop", "remove", "index", "count", "clear", "copy", "reverse",
    "sort",
];

/// `l.method`: a bound method.
pub fn getattr(value: TypeId, attr: &str) -> Option<TypeId> {
    list_dtype(value)?;
    // A typed list's capacity (Numba's `ListType` method).
    let typed_only = matches!(attr, "_allocated" | "_is_mutable" | "_make_immutable")
        && matches!(value.get(), Type::List { typed: true, .. });
    (METHODS.contains(&attr) || typed_only).then(|| {
        intern(Type::BoundFunction {
            key: format!("list.{attr}"),
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

/// The list type after storing items of type `item` into `this`: `this` refined when its
/// item type is still undefined, else `this` when `item` converts to its items.
pub fn stored(this: TypeId, item: TypeId) -> Option<TypeId> {
    let Type::List {
        dtype,
        reflected,
        typed,
    } = this.get()
    else {
        return None;
    };
    let item = item.unliteral();
    if dtype == UNDEFINED {
        if !storable(item) {
            return None;
        }
        return Some(intern(Type::List {
            dtype: item,
            reflected,
            typed,
        }));
    }
    // A typed list converts as Numba's typed containers do.
    if typed {
        return crate::dicts::safe_cast(item, dtype).ok().map(|_| this);
    }
    // A reflected list's item type is the unification of everything stored into it, as
    // Numba's `list.append` refines its receiver: `[]` given an int then a float holds
    // floats (converting to the first item's type would truncate the float).
    if let Some(u) = crate::conv::unify(dtype, item).filter(|&u| u != dtype && storable(u)) {
        return Some(intern(Type::List {
            dtype: u,
            reflected,
            typed,
        }));
    }
    can_convert(item, dtype).map(|_| this)
}

/// A list method's signature `sig` (typed as if it widened its receiver) for a receiver
/// `this` whose item type is fixed (an argument, a list from elsewhere): the stored item
/// converts to the items `this` holds, as Numba converts into a locked argument type.
pub fn unrefined(mut sig: Signature, this: TypeId) -> Option<Signature> {
    let Some(dtype) = list_dtype(this) else {
        return Some(sig);
    };
    let key = match &sig.key {
        ImplKey::Function(k) => k.as_str(),
        _ => "",
    };
    if matches!(key, "list.append" | "list.insert") {
        if let Some(last) = sig.args.last_mut() {
            can_convert(*last, dtype)?;
            *last = dtype;
        }
    }
    if let Some(first) = sig.args.first_mut() {
        *first = this;
    }
    Some(sig)
}

/// Item types a list can hold.
pub fn storable(t: TypeId) -> bool {
    match t.get() {
        Type::Boolean
        | Type::Integer { .. }
        | Type::Float { .. }
        | Type::Complex { .. }
        | Type::Unicode
        | Type::Bytes
        | Type::Array { .. }
        | Type::NamedTuple { .. }
        | Type::NamedUniTuple { .. }
        | Type::EnumMember { .. }
        | Type::ClassInstance { .. } => true,
        // A list of `None`s (Numba's `List[None]`): items without data.
        Type::NoneType => true,
        Type::List { dtype, .. } => storable(dtype),
        Type::Dict { key, value } => key != UNDEFINED && value != UNDEFINED,
        Type::Optional(x) => storable(x),
        Type::UniTuple(..) | Type::Tuple(_) => {
            crate::conv::tuple_items(t).is_some_and(|items| items.into_iter().all(storable))
        }
        _ => false,
    }
}

/// A list method's signature: `this` is the receiver (the first argument of the
/// signature, refined when the call stores into an empty list).
pub fn method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    let dtype = list_dtype(this)?;
    let name = key.strip_prefix("list.")?;
    let int = |t: &TypeId| t.unliteral().is_integer();
    Some(match (name, args) {
        ("append", [x]) => {
            let this = stored(this, *x)?;
            sig(key, NONE, vec![this, list_dtype(this)?])
        }
        ("extend", [it]) => {
            let this = stored(this, iterable_item(*it)?)?;
            sig(key, NONE, vec![this, it.unliteral()])
        }
        ("insert", [i, x]) if int(i) => {
            let this = stored(this, *x)?;
            sig(key, NONE, vec![this, INTP, list_dtype(this)?])
        }
        ("pop", []) => sig(key, dtype, vec![this]),
        ("pop", [i]) if int(i) => sig(key, dtype, vec![this, INTP]),
        ("remove" | "count", [x]) if comparable(dtype, *x) => {
            let ret = if name == "count" { INTP } else { NONE };
            sig(key, ret, vec![this, dtype])
        }
        ("index", [x, rest @ ..])
            if comparable(dtype, *x) && rest.len() <= 2 && rest.iter().all(int) =>
        {
            let mut a = vec![this, dtype];
            a.extend(rest.iter().map(|_| INTP));
            sig(key, INTP, a)
        }
        ("clear" | "reverse", []) => sig(key, NONE, vec![this]),
        ("copy", []) => sig(key, like(this, dtype), vec![this]),
        ("_allocated", []) => sig(key, INTP, vec![this]),
        ("_is_mutable", []) => sig(key, BOOLEAN, vec![this]),
        ("_make_immutable", []) => sig(key, NONE, vec![this]),
        // `sort(key=None, reverse=False)`: keyword arguments bound by name.
        ("sort", []) if orderable(dtype) => sig(key, NONE, vec![this]),
        ("sort", [k]) if k.unliteral() == NONE && orderable(dtype) => {
            sig(key, NONE, vec![this, NONE])
        }
        ("sort", [k, r])
            if k.unliteral() == NONE && r.unliteral().is_scalar() && orderable(dtype) =>
        {
            sig(key, NONE, vec![this, NONE, BOOLEAN])
        }
        _ => return None,
    })
}

/// Numba's messages for list methods given arguments of the wrong kind.
pub fn explain(key: &str, this: TypeId, args: &[TypeId]) -> Option<String> {
    // A typed list's methods say what Numba's `listobject` says.
    if let Type::List {
        dtype, typed: true, ..
    } = this.get()
    {
        let int = |t: &TypeId| t.unliteral().is_integer();
        let cast = |x: &TypeId| {
            (dtype != UNDEFINED)
                .then(|| crate::dicts::safe_cast(*x, dtype).err())
                .flatten()
        };
        match (key, args) {
            ("list.append", [x]) => return cast(x),
            ("list.insert", [i, _]) if !int(i) => {
                return Some("list insert indices must be integers".into())
            }
            ("list.insert", [_, x]) => return cast(x),
            ("list.pop", [i]) if !int(i) => {
                return Some("argument for pop must be an integer".into())
            }
            ("list.extend", [it]) if iterable_item(*it).is_none() => {
                return Some("extend argument must be iterable".into())
            }
            _ => {}
        }
    }
    if key != "list.index" {
        return None;
    }
    for (name, t) in ["start", "stop"].iter().zip(args.iter().skip(1)) {
        if !t.unliteral().is_integer() {
            return Some(format!("arg \"{name}\" must be an Integer. Got {t}"));
        }
    }
    None
}

/// Whether values of `t` can be compared with a list's items.
fn comparable(dtype: TypeId, t: TypeId) -> bool {
    let t = t.unliteral();
    t == dtype || (t.is_scalar() && dtype.is_scalar()) || unify(t, dtype).is_some()
}

/// Whether items of `t` have an order (`sort`, `sorted`, `<`).
pub fn orderable(t: TypeId) -> bool {
    match t.get() {
        Type::Boolean | Type::Integer { .. } | Type::Float { .. } | Type::Unicode | Type::Bytes => {
            true
        }
        Type::UniTuple(..) | Type::Tuple(_) => {
            crate::conv::tuple_items(t).is_some_and(|i| i.into_iter().all(orderable))
        }
        Type::List { dtype, .. } => orderable(dtype),
        _ => false,
    }
}

/// Nested lists of numbers (`np.array(l)`): the number type and how deep they nest.
pub fn nested_list_parts(t: TypeId) -> Option<(TypeId, u32)> {
    match t.get() {
        Type::List { dtype, .. } => {
            let (d, n) = nested_list_parts(dtype)?;
            Some((d, n + 1))
        }
        _ if t.is_scalar() => Some((t, 0)),
        _ => None,
    }
}

/// `l[i]` (an item) and `l[a:b:c]` (a new list).
pub fn getitem(value: TypeId, index: TypeId) -> Option<TypeId> {
    let dtype = list_dtype(value).filter(|&d| d != UNDEFINED)?;
    match index.unliteral().get() {
        Type::Integer { .. } | Type::Boolean => Some(dtype),
        Type::Slice(_) => Some(like(value, dtype)),
        _ => None,
    }
}

/// Whether `l[i] = v` / `l[a:b] = iterable` types.
pub fn setitem_ok(target: TypeId, index: TypeId, value: TypeId) -> Option<bool> {
    let dtype = list_dtype(target)?;
    Some(match index.unliteral().get() {
        Type::Integer { .. } | Type::Boolean => can_convert(value.unliteral(), dtype).is_some(),
        // Any iterable of convertible items (a list literal may arrive as a tuple).
        Type::Slice(_) => iterable_item(value).is_some_and(|d| can_convert(d, dtype).is_some()),
        _ => false,
    })
}

/// Operators with a list operand.
pub fn binop(op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    use numba_ir::BinOp;
    let (l, r) = (lhs.unliteral(), rhs.unliteral());
    let mk = |ret: TypeId, args: Vec<TypeId>| Signature {
        ret,
        args,
        key: ImplKey::BinOp(op),
    };
    match (op, l.get(), r.get()) {
        (BinOp::Add, Type::List { dtype: a, .. }, Type::List { dtype: b, .. }) => {
            let d = unify(a, b)?;
            Some(mk(list_of(d), vec![l, r]))
        }
        (BinOp::Mul, Type::List { dtype, .. }, _) if r.is_integer() => {
            Some(mk(list_of(dtype), vec![l, INTP]))
        }
        (BinOp::Mul, _, Type::List { dtype, .. }) if l.is_integer() => {
            Some(mk(list_of(dtype), vec![INTP, r]))
        }
        // `item in list`: Numba's IR holds `contains(list, item)`.
        (BinOp::In, Type::List { dtype, .. }, _) if comparable(dtype, r) => {
            Some(mk(BOOLEAN, vec![l, r]))
        }
        (
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge,
            Type::List { dtype: a, .. },
            Type::List { dtype: b, .. },
        ) => {
            let ok = if matches!(op, BinOp::Eq | BinOp::Ne) {
                comparable(a, b)
            } else {
                orderable(a) && orderable(b) && unify(a, b).is_some()
            };
            ok.then(|| mk(BOOLEAN, vec![l, r]))
        }
        _ => None,
    }
}

/// `l += iterable` (in place: `l.extend(iterable)`, the result is `l`) and `l *= n`.
pub fn inplace_binop(op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    use numba_ir::BinOp;
    let l = lhs.unliteral();
    let dtype = list_dtype(l)?;
    match op {
        BinOp::Add => {
            let item = iterable_item(rhs)?;
            can_convert(item, dtype)?;
            Some(sig("list.iadd", l, vec![l, rhs.unliteral()]))
        }
        BinOp::Mul if rhs.unliteral().is_integer() => Some(sig("list.imul", l, vec![l, INTP])),
        _ => None,
    }
}

/// `list()`, `list(iterable)`, `sorted(iterable, key=None, reverse=False)`.
pub fn builtin(key: &str, args: &[TypeId]) -> Option<Signature> {
    match (key, args) {
        ("list", []) => Some(sig(key, list_of(UNDEFINED), vec![])),
        ("list", [it]) => {
            let item = iterable_item(*it)?;
            storable(item).then(|| sig(key, list_of(item), vec![it.unliteral()]))
        }
        ("sorted", [it, rest @ ..]) if rest.len() <= 2 => {
            let item = iterable_item(*it)?;
            if !orderable(item) {
                return None;
            }
            let mut a = vec![it.unliteral()];
            match rest {
                [] => {}
                [k] if k.unliteral() == NONE => a.push(NONE),
                [k, r] if k.unliteral() == NONE && r.unliteral().is_scalar() => {
                    a.extend([NONE, BOOLEAN])
                }
                _ => return None,
            }
            Some(sig(key, list_of(item), a))
        }
        _ => None,
    }
}

/// The parameter names of the typed-list constructors (keyword binding).
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "numba_rs.typed.List.empty_list" => &["item_type", "allocated"],
        // Numba's typed list names them (`index(item, start=None, end=None)`); CPython's
        // list takes them by position only.
        "list.index" => &["item", "start", "end"],
        "numba.typed.listobject.new_list" => &["item", "allocated"],
        _ => return None,
    })
}

impl crate::context::BaseContext {
    /// `numba_rs.typed.List()`, `List(iterable)` and `List.empty_list(item_type,
    /// allocated=0)`.
    pub(crate) fn install_typed_lists(&mut self) {
        self.register("numba_rs.typed.List", Box::new(TypedListCtor));
        // Numba's `numba.typed.listobject.new_list(item, allocated=0)`, the same.
        for key in [
            "numba_rs.typed.List.empty_list",
            "numba.typed.listobject.new_list",
        ] {
            self.register(
                key,
                Box::new(crate::context::FnTemplate(
                    move |a: &[TypeId]| {
                        let item = crate::dicts::type_arg(*a.first()?)?;
                        if !storable(item) {
                            return None;
                        }
                        match a {
                            [_] => Some(sig(key, typed_list_of(item), vec![a[0]])),
                            [_, n] if n.unliteral().is_integer() => {
                                Some(sig(key, typed_list_of(item), vec![a[0], INT64]))
                            }
                            _ => None,
                        }
                    },
                    "(item_type, allocated=0)",
                )),
            );
        }
    }
}

/// `numba_rs.typed.List()` / `List(iterable)` in compiled code, with Numba's messages.
struct TypedListCtor;

impl crate::context::FunctionTemplate for TypedListCtor {
    fn generic(&self, a: &[TypeId]) -> Option<Signature> {
        let ret = match a {
            [] => typed_list_of(UNDEFINED),
            [it] => {
                let item = iterable_item(*it)?;
                if !storable(item) {
                    return None;
                }
                typed_list_of(item)
            }
            _ => return None,
        };
        Some(sig("list", ret, a.iter().map(|t| t.unliteral()).collect()))
    }
    fn describe(&self) -> String {
        "(), (iterable,)".into()
    }
    fn explain(&self, a: &[TypeId]) -> Option<String> {
        match a {
            [it] if iterable_item(*it).is_none() => Some("List() argument must be iterable".into()),
            [_, _, ..] => Some(format!(
                "List() expected at most 1 argument, got {}",
                a.len()
            )),
            _ => None,
        }
    }
}
