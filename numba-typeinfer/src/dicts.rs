//! Typing of dicts (Numba's `types.DictType`, `dictobject.py`): `{}` and `{k: v}`,
//! `dict()`, indexing, `del`, `in`, iteration, the views and the methods.
//!
//! Every dict in compiled code is a typed dict: keys of one type, values of one type.
//! An empty `{}` / `dict()` is `DictType[undefined,undefined]` until a store types it
//! (`d[k] = v`, `setdefault`, `update`), as an empty list is (see [`crate::lists`]).
//! Keys and values convert to the dict's types by Numba's rule for typed containers
//! ([`safe_cast`]): a conversion that loses a number's kind is a TypingError.

use crate::conv::{can_convert, unify, Conversion};
use crate::generators::iterable_item;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// `DictType[key,value]<iv=None>`.
pub fn dict_of(key: TypeId, value: TypeId) -> TypeId {
    intern(Type::Dict {
        key: key.unliteral(),
        value: value.unliteral(),
    })
}

/// The key and value types of a dict type.
pub fn dict_parts(t: TypeId) -> Option<(TypeId, TypeId)> {
    match t.get() {
        Type::Dict { key, value } => Some((key, value)),
        _ => None,
    }
}

/// `d.keys()` (0), `d.values()` (1), `d.items()` (2).
pub fn view_of(dict: TypeId, kind: u8) -> TypeId {
    intern(Type::DictView { dict, kind })
}

/// What iterating a dict view yields.
pub fn view_item(dict: TypeId, kind: u8) -> Option<TypeId> {
    let (k, v) = dict_parts(dict)?;
    Some(match kind {
        0 => k,
        1 => v,
        _ => intern(Type::Tuple(vec![k, v])),
    })
}

/// Key types: what hashes as CPython's numbers, strings and tuples do, and enum members.
pub fn key_ok(t: TypeId) -> bool {
    crate::sets::hashable(t) || matches!(t.get(), Type::EnumMember { .. })
}

/// Value types: whatever a list can hold (lists, dicts, optionals...), but not `none`
/// itself (Numba's "Dict.value_type cannot be of type none") nor sets (Numba's
/// "set(int64) as value is forbidden").
pub fn value_ok(t: TypeId) -> bool {
    t != NONE && crate::lists::storable(t)
}

/// Numba's rule for a key or value stored into (or looked up in) a typed container
/// (`typedobjectutils._sentry_safe_cast`): any safe conversion; between integers,
/// integer to float, float to float, complex to complex, or to a non-number, any
/// conversion; else "cannot safely cast".
pub fn safe_cast(from: TypeId, to: TypeId) -> Result<(), String> {
    let (from, to) = (from.unliteral(), to.unliteral());
    let by = can_convert(from, to);
    if by.is_some_and(|c| c <= Conversion::Safe) {
        return Ok(());
    }
    let numeric_ok = (from.is_integer() && (to.is_integer() || to.is_float()))
        || (from.is_float() && to.is_float())
        || (from.is_complex() && to.is_complex());
    if by.is_some() && (numeric_ok || !to.is_number()) {
        return Ok(());
    }
    // Into a number, Numba's hard error whatever the source; other targets have no
    // conversion at all (Numba warns and fails later; the message says why now).
    if by.is_none() && !to.is_number() {
        return Err(format!("Cannot cast {from} to {to}"));
    }
    Err(format!(
        "cannot safely cast {from} to {to}. Please cast explicitly."
    ))
}

/// The methods dicts have.
pub const METHODS: &[&str] = &[
    "keys",
    "values",
    "items",
    "get",
    "setdefault",
    "pop",
    "popitem",
    "update",
    "clear",
    "copy",
    "__setitem__",
];

/// `d.method`: a bound method.
pub fn getattr(value: TypeId, attr: &str) -> Option<TypeId> {
    dict_parts(value)?;
    METHODS.contains(&attr).then(|| {
        intern(Type::BoundFunction {
            key: format!("dict.{attr}"),
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

/// The dict type after storing a `k: v` pair into `this`: refined where still undefined.
pub fn stored(this: TypeId, k: TypeId, v: TypeId) -> Option<TypeId> {
    let (dk, dv) = dict_parts(this)?;
    let (k, v) = (
        crate::strings::held_text(k.unliteral()),
        crate::strings::held_text(v.unliteral()),
    );
    let key = if dk == UNDEFINED {
        key_ok(k).then_some(k)?
    } else {
        safe_cast(k, dk).ok().map(|_| dk)?
    };
    let value = if dv == UNDEFINED {
        value_ok(v).then_some(v)?
    } else if literal_list_into(v, dv) {
        dv
    } else {
        safe_cast(v, dv).ok().map(|_| dv)?
    };
    Some(dict_of(key, value))
}

/// Numba's words for a key type a dict cannot have (`DictType`'s own check first).
pub fn forbidden_key(k: TypeId) -> Option<String> {
    let k = k.unliteral();
    if matches!(k.get(), Type::NoneType | Type::Optional(_)) {
        return Some(format!("Dict.key_type cannot be of type {k}"));
    }
    (!key_ok(k)).then(|| format!("{k} as key is forbidden"))
}

/// Numba's words for a value type a dict cannot have. Optional values are allowed
/// (beyond Numba); `none` itself is not.
pub fn forbidden_value(v: TypeId) -> Option<String> {
    let v = v.unliteral();
    if v == NONE {
        return Some(format!("Dict.value_type cannot be of type {v}"));
    }
    (!value_ok(v)).then(|| format!("{v} as value is forbidden"))
}

/// Whether `v` is a tuple standing for a written-out list (`d[k] = [1, 2]`, which
/// `numba_ir::literal_lists` may compile as a tuple) of items a list value `dv` holds.
pub fn literal_list_into(v: TypeId, dv: TypeId) -> bool {
    let Some(d) = crate::lists::list_dtype(dv) else {
        return false;
    };
    crate::conv::tuple_items(v).is_some_and(|items| {
        items
            .into_iter()
            .all(|i| can_convert(i.unliteral(), d).is_some())
    })
}

/// Why storing or looking up `k` (and `v`) in `this` does not type, in Numba's words.
fn explain_pair(this: TypeId, k: Option<TypeId>, v: Option<TypeId>) -> Option<String> {
    let (dk, dv) = dict_parts(this)?;
    if let Some(k) = k {
        let k = k.unliteral();
        if dk == UNDEFINED {
            if let Some(m) = forbidden_key(k) {
                return Some(m);
            }
        }
        if dk != UNDEFINED {
            if let Err(e) = safe_cast(k, dk) {
                return Some(e);
            }
        }
    }
    if let Some(v) = v {
        let v = v.unliteral();
        if dv == UNDEFINED {
            if let Some(m) = forbidden_value(v) {
                return Some(m);
            }
        }
        if dv != UNDEFINED {
            if let Err(e) = safe_cast(v, dv) {
                return Some(e);
            }
        }
    }
    None
}

/// A lookup key `k` for `this`: converts as a stored key does.
fn lookup_ok(this: TypeId, k: TypeId) -> Option<TypeId> {
    let (dk, _) = dict_parts(this)?;
    (dk != UNDEFINED && safe_cast(crate::strings::held_text(k), dk).is_ok()).then_some(dk)
}

/// A dict method's signature (the receiver first, refined when the call stores into an
/// empty dict).
pub fn method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    let (dk, dv) = dict_parts(this)?;
    let name = key.strip_prefix("dict.")?;
    Some(match (name, args) {
        ("keys", []) => sig(key, view_of(this, 0), vec![this]),
        ("values", []) => sig(key, view_of(this, 1), vec![this]),
        ("items", []) => sig(key, view_of(this, 2), vec![this]),
        ("get", [k]) => {
            let k = lookup_ok(this, *k)?;
            sig(key, intern(Type::Optional(dv)), vec![this, k])
        }
        // On an empty dict, `d.get(k, default)` types it as a store of `k: default`
        // would (`c[w] = c.get(w, 0) + 1`, which Numba cannot type).
        ("get", [k, d]) if (dk == UNDEFINED || dv == UNDEFINED) && d.unliteral() != NONE => {
            let this = stored(this, *k, *d)?;
            let (k, v) = dict_parts(this)?;
            sig(key, v, vec![this, k, v])
        }
        ("get", [k, d]) => {
            let k = lookup_ok(this, *k)?;
            let d = d.unliteral();
            if d == NONE {
                return Some(sig(key, intern(Type::Optional(dv)), vec![this, k, d]));
            }
            safe_cast(d, dv).ok()?;
            sig(key, dv, vec![this, k, dv])
        }
        ("setdefault", [k, d]) => {
            let this = stored(this, *k, *d)?;
            let (k, v) = dict_parts(this)?;
            sig(key, v, vec![this, k, v])
        }
        ("__setitem__", [k, v]) => {
            let this = stored(this, *k, *v)?;
            let (k, v) = dict_parts(this)?;
            sig(key, NONE, vec![this, k, v])
        }
        ("pop", [k]) => {
            let k = lookup_ok(this, *k)?;
            sig(key, dv, vec![this, k])
        }
        ("pop", [k, d]) => {
            let k = lookup_ok(this, *k)?;
            let d = d.unliteral();
            let ret = if d == NONE {
                intern(Type::Optional(dv))
            } else {
                safe_cast(d, dv).ok()?;
                dv
            };
            sig(key, ret, vec![this, k, if d == NONE { NONE } else { dv }])
        }
        ("popitem", []) if dk != UNDEFINED => {
            sig(key, intern(Type::Tuple(vec![dk, dv])), vec![this])
        }
        ("update", [o]) => {
            let (ok, ov) = dict_parts(o.unliteral())?;
            let this = stored(this, ok, ov)?;
            sig(key, NONE, vec![this, o.unliteral()])
        }
        ("clear", []) => sig(key, NONE, vec![this]),
        ("copy", []) => sig(key, this, vec![this]),
        _ => return None,
    })
}

/// Numba's message for a dict method whose arguments do not type.
pub fn explain(key: &str, this: TypeId, args: &[TypeId]) -> Option<String> {
    let name = key.strip_prefix("dict.")?;
    match (name, args) {
        ("get" | "pop", [k]) => explain_pair(this, Some(*k), None),
        ("get" | "pop", [k, d]) => {
            explain_pair(this, Some(*k), (d.unliteral() != NONE).then_some(*d))
        }
        ("setdefault" | "__setitem__", [k, v]) => explain_pair(this, Some(*k), Some(*v)),
        _ => None,
    }
}

/// `d[k]`.
pub fn getitem(value: TypeId, index: TypeId) -> Option<Signature> {
    let (_, dv) = dict_parts(value)?;
    let k = lookup_ok(value, index)?;
    Some(Signature {
        ret: dv,
        args: vec![value, k],
        key: ImplKey::GetItem,
    })
}

/// Why `d[k]` does not type.
pub fn explain_getitem(value: TypeId, index: TypeId) -> Option<String> {
    explain_pair(value, Some(index), None)
}

/// Whether `d[k] = v` types (`None` when `target` is not a dict).
pub fn setitem_ok(target: TypeId, index: TypeId, value: TypeId) -> Option<bool> {
    dict_parts(target)?;
    Some(stored(target, index, value).is_some())
}

/// Why `d[k] = v` does not type.
pub fn explain_setitem(target: TypeId, index: TypeId, value: TypeId) -> Option<String> {
    explain_pair(target, Some(index), Some(value))
}

/// Operators with a dict (or view) operand: `k in d`, `k in d.keys()`, `d == e`.
pub fn binop(op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    use numba_ir::BinOp;
    let (l, r) = (lhs.unliteral(), rhs.unliteral());
    let mk = |args: Vec<TypeId>| Signature {
        ret: BOOLEAN,
        args,
        key: ImplKey::BinOp(op),
    };
    match (op, l.get()) {
        // `'k' in ld`: known at compile time (the key keeps its literal type).
        (BinOp::In, Type::LiteralStrKeyDict { .. }) if rhs.unliteral() == UNICODE => {
            Some(mk(vec![l, rhs]))
        }
        (BinOp::In, Type::Dict { .. }) => {
            let k = lookup_ok(l, r)?;
            Some(mk(vec![l, k]))
        }
        (BinOp::In, Type::DictView { dict, kind: 0 }) => {
            let k = lookup_ok(dict, r)?;
            Some(mk(vec![l, k]))
        }
        (BinOp::Eq | BinOp::Ne, Type::Dict { .. }) if dict_parts(r).is_some() => {
            let (lk, lv) = dict_parts(l)?;
            let (rk, rv) = dict_parts(r)?;
            (unify(lk, rk).is_some() && unify(lv, rv).is_some()).then(|| mk(vec![l, r]))
        }
        _ => None,
    }
}

/// Numba's message for a `dict(...)` call that does not type.
pub fn explain_builtin(args: &[TypeId]) -> Option<String> {
    match args {
        [] => None,
        [it] => {
            let Some(item) = iterable_item(*it) else {
                return Some(format!(
                    "Non-iterable args used in dict(iterable) constructor. Got 'dict({it})'"
                ));
            };
            match crate::conv::tuple_items(item) {
                Some(pair) if pair.len() != 2 => Some(format!(
                    "dictionary update sequence element has length {}; 2 is required",
                    pair.len()
                )),
                Some(pair) if !key_ok(pair[0]) => Some(format!("Unhashable type: {}", pair[0])),
                Some(pair) => forbidden_value(pair[1]),
                None => Some(format!(
                    "Non-iterable args used in dict(iterable) constructor. Got 'dict({it})'"
                )),
            }
        }
        _ => Some("Unsupported use of `dict()` with positional or keyword argument(s). The only supported uses are `dict()` or `dict(iterable)`.".into()),
    }
}

/// The `dict` builtin's template: [`builtin`], with Numba's explanations.
pub struct DictBuiltin(pub &'static str);

impl crate::context::FunctionTemplate for DictBuiltin {
    fn generic(&self, args: &[TypeId]) -> Option<Signature> {
        builtin(args)
    }
    fn describe(&self) -> String {
        self.0.into()
    }
    fn explain(&self, args: &[TypeId]) -> Option<String> {
        explain_builtin(args)
    }
}

/// `dict()`, `dict(d)` (a copy) and `dict(iterable of pairs)`.
pub fn builtin(args: &[TypeId]) -> Option<Signature> {
    match args {
        [] => Some(sig("dict", dict_of(UNDEFINED, UNDEFINED), vec![])),
        [d] if dict_parts(d.unliteral()).is_some() => {
            Some(sig("dict", d.unliteral(), vec![d.unliteral()]))
        }
        [it] => {
            let item = iterable_item(*it)?;
            let pair = crate::conv::tuple_items(item)?;
            let [k, v] = pair[..] else {
                return None;
            };
            (key_ok(k) && value_ok(v)).then(|| sig("dict", dict_of(k, v), vec![it.unliteral()]))
        }
        _ => None,
    }
}

/// The type of `{k1: v1, ...}`: one key type and one value type over the items (Numba
/// unifies them), `Err` with Numba-like words when they do not unify. String-constant
/// keys with values of types that do not unify make Numba's `LiteralStrKeyDict`.
pub fn build_map(items: &[(TypeId, TypeId)]) -> Result<TypeId, String> {
    if items.is_empty() {
        return Ok(dict_of(UNDEFINED, UNDEFINED));
    }
    if let Some(t) = literal_str_key_dict(items) {
        return Ok(t);
    }
    // A constant key given again replaces the value given before (Python's dict
    // display): only the last value of each constant key is stored.
    let keys: Vec<TypeId> = items.iter().map(|p| p.0).collect();
    let items: Vec<(TypeId, TypeId)> = display_stores(&keys)
        .into_iter()
        .map(|(k, v)| (items[k].0, items[v].1))
        .collect();
    let mut k = crate::strings::held_text(items[0].0.unliteral());
    let mut v = crate::strings::held_text(items[0].1.unliteral());
    for &(ki, vi) in &items[1..] {
        let (ki, vi) = (
            crate::strings::held_text(ki.unliteral()),
            crate::strings::held_text(vi.unliteral()),
        );
        k = unify(k, ki)
            .ok_or_else(|| format!("Cannot unify dict key types {k} and {ki}: numba-rs (as Numba without literal dicts) builds dicts of one key type"))?;
        v = unify(v, vi).ok_or_else(|| {
            format!("Cannot cast {vi} to {v}: a typed dict holds values of one type (only a dict with string-constant keys may hold values of several types)")
        })?;
    }
    if let Some(m) = forbidden_key(k) {
        return Err(m);
    }
    if let Some(m) = forbidden_value(v) {
        return Err(m);
    }
    Ok(dict_of(k, v))
}

/// The stores a dict display makes, as (key item, value item) indices: a constant key
/// given again keeps its first place and takes its last value, as Python's display
/// does (the values it replaces are never stored).
pub fn display_stores(keys: &[TypeId]) -> Vec<(usize, usize)> {
    let constant = |t: TypeId| {
        matches!(
            t.get(),
            Type::StringLiteral(_) | Type::IntegerLiteral(_) | Type::BooleanLiteral(_)
        )
    };
    let mut out = Vec::with_capacity(keys.len());
    for (i, &k) in keys.iter().enumerate() {
        if !constant(k) {
            out.push((i, i));
        } else if !keys[..i].contains(&k) {
            let last = keys.iter().rposition(|&x| x == k).unwrap_or(i);
            out.push((i, last));
        }
    }
    out
}

/// Unify two dict types: an empty dict's undefined parts take the other's.
pub fn unify_dicts(a: TypeId, b: TypeId) -> Option<TypeId> {
    let (ak, av) = dict_parts(a)?;
    let (bk, bv) = dict_parts(b)?;
    let pick = |x: TypeId, y: TypeId| -> Option<TypeId> {
        if x == UNDEFINED {
            Some(y)
        } else if y == UNDEFINED || x == y {
            Some(x)
        } else {
            None
        }
    };
    Some(dict_of(pick(ak, bk)?, pick(av, bv)?))
}

/// The parameter names of the typed-dict constructors (keyword binding).
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "numba_rs.typed.Dict.empty" => &["key_type", "value_type", "n_keys"],
        "numba.typed.dictobject.new_dict" => &["key", "value", "n_keys"],
        "dict.get" => &["key", "default"],
        _ => return None,
    })
}

/// The type a type object given as a value stands for (`types.int64`: `class(int64)`,
/// `types.unicode_type`: `typeref[unicode_type]`).
pub fn type_arg(t: TypeId) -> Option<TypeId> {
    match t.get() {
        Type::NumberClass(x) | Type::TypeRef(x) => Some(x),
        _ => None,
    }
}

impl crate::context::BaseContext {
    /// `numba_rs.typed.Dict()` (as `dict()`) and `Dict.empty(key_type, value_type,
    /// n_keys=0)`.
    pub(crate) fn install_dicts(&mut self) {
        // (Numba explains a bad `typed.Dict(...)` only by its signatures.)
        self.register(
            "numba_rs.typed.Dict",
            Box::new(crate::context::FnTemplate(
                builtin,
                "(), (dict,), (iterable of pairs,)",
            )),
        );
        // Numba's `numba.typed.dictobject.new_dict(key, value, n_keys=0)`, the same.
        for key in [
            "numba_rs.typed.Dict.empty",
            "numba.typed.dictobject.new_dict",
        ] {
            self.register(
                key,
                Box::new(crate::context::FnTemplate(
                    |a: &[TypeId]| {
                        let (k, v, n) = match a {
                            [k, v] => (type_arg(*k)?, type_arg(*v)?, None),
                            [k, v, n] if n.unliteral().is_integer() => {
                                (type_arg(*k)?, type_arg(*v)?, Some(INT64))
                            }
                            _ => return None,
                        };
                        if !key_ok(k) || !value_ok(v) {
                            return None;
                        }
                        let mut args = vec![a[0], a[1]];
                        args.extend(n);
                        Some(sig("numba_rs.typed.Dict.empty", dict_of(k, v), args))
                    },
                    "(key_type, value_type, n_keys=0)",
                )),
            );
        }
    }
}

/// A dict literal whose keys are all string constants and whose values do not share
/// one type: Numba's `LiteralStrKeyDict` (a repeated key keeps its first place and its
/// last value, as Python's). Numba's rule: the values are one type when each converts
/// safely (or better) to the first value's type; a single value that is a list or
/// another literal dict cannot go in a typed dict, so it makes a literal dict too.
fn literal_str_key_dict(items: &[(TypeId, TypeId)]) -> Option<TypeId> {
    let mut keys: Vec<String> = Vec::new();
    let mut literals: Vec<TypeId> = Vec::new();
    for &(k, v) in items {
        let Type::StringLiteral(s) = k.get() else {
            return None;
        };
        match keys.iter().position(|x| *x == s) {
            Some(i) => literals[i] = v,
            None => {
                keys.push(s);
                literals.push(v);
            }
        }
    }
    let values: Vec<TypeId> = literals
        .iter()
        .map(|v| crate::strings::held_text(v.unliteral()))
        .collect();
    let first = values[0];
    let mut homogeneous = values
        .iter()
        .all(|&v| can_convert(v, first).is_some_and(|c| c < Conversion::Unsafe));
    if let [only] = values[..] {
        if matches!(
            only.get(),
            Type::LiteralStrKeyDict { .. } | Type::List { typed: false, .. }
        ) {
            homogeneous = false;
        }
    }
    (!homogeneous).then(|| {
        intern(Type::LiteralStrKeyDict {
            keys,
            values,
            literals,
        })
    })
}

/// The keys and values of a literal-string-key dict.
pub fn literal_parts(t: TypeId) -> Option<(Vec<String>, Vec<TypeId>)> {
    match t.get() {
        Type::LiteralStrKeyDict { keys, values, .. } => Some((keys, values)),
        _ => None,
    }
}

/// Numba's words for a literal dict's mutating methods.
pub const LITERAL_MUTATION: &str = "Cannot mutate a literal dictionary";
/// Numba's words for a literal dict read by a key that is not a constant.
pub const LITERAL_GET: &str = "Cannot get{item}() on a literal dictionary";

/// `ld.method` of a literal-string-key dict.
pub fn literal_getattr(value: TypeId, attr: &str) -> Option<TypeId> {
    literal_parts(value)?;
    matches!(
        attr,
        "keys"
            | "values"
            | "items"
            | "copy"
            | "get"
            | "pop"
            | "popitem"
            | "setdefault"
            | "clear"
            | "update"
            | "__setitem__"
    )
    .then(|| {
        intern(Type::BoundFunction {
            key: format!("literal_dict.{attr}"),
            this: value,
        })
    })
}

/// A literal dict's method signature: the read-only ones.
pub fn literal_method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    let (keys, values) = literal_parts(this)?;
    let name = key.strip_prefix("literal_dict.")?;
    if !args.is_empty() {
        return None;
    }
    let ret = match name {
        "keys" => intern(Type::UniTuple(UNICODE, keys.len() as u32)),
        "values" => crate::types::tuple_of(&values),
        "items" => crate::types::tuple_of(
            &values
                .iter()
                .map(|&v| crate::types::tuple_of(&[UNICODE, v]))
                .collect::<Vec<_>>(),
        ),
        "copy" => this,
        _ => return None,
    };
    Some(sig(key, ret, vec![this]))
}

/// Why a literal dict's method does not type.
pub fn literal_explain(key: &str) -> Option<String> {
    match key.strip_prefix("literal_dict.")? {
        "get" => Some(LITERAL_GET.into()),
        "pop" | "popitem" | "setdefault" | "clear" | "update" | "__setitem__" => {
            Some(LITERAL_MUTATION.into())
        }
        _ => None,
    }
}

/// `ld['k']` with a constant key: the value's type.
pub fn literal_getitem(value: TypeId, index: TypeId) -> Result<Option<Signature>, String> {
    let Some((keys, values)) = literal_parts(value) else {
        return Ok(None);
    };
    let Type::StringLiteral(s) = index.get() else {
        return Err(LITERAL_GET.into());
    };
    let i = keys
        .iter()
        .position(|k| *k == s)
        .ok_or_else(|| format!("Key '{s}' is not in dict."))?;
    Ok(Some(Signature {
        ret: values[i],
        args: vec![value, index],
        key: ImplKey::GetItem,
    }))
}
