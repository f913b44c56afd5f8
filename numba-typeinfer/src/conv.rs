//! Conversion kinds, Numba's scalar conversion table, and unification.

use crate::types::*;

/// How a value of one type converts to another, strictest first (Numba's `Conversion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Conversion {
    Exact = 1,
    Promote = 2,
    Safe = 3,
    Unsafe = 4,
}

/// The scalar order of [`SCALAR_TABLE`]'s rows and columns.
const SCALARS: [TypeId; 14] = [
    BOOLEAN, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, FLOAT16, FLOAT32, FLOAT64,
    COMPLEX64, COMPLEX128,
];

/// Numba 0.68.1's closed scalar table (`check_compatible(from, to)`, facts §3.3).
/// E=exact P=promote S=safe U=unsafe -=none; rows are `from`, columns `to`.
const SCALAR_TABLE: [&str; 14] = [
    "ESSSSSSSSSSSSS",
    "UEPPPUUUUSSSSS",
    "UUEPPUUUUUSSSS",
    "UUUEPUUUUUUSUS",
    "UUUUEUUUUUUSUS",
    "UUSSSEPPPUSSSS",
    "UUUSSUEPPUUSUS",
    "UUUUSUUEPUUSUS",
    "UUUUUUUUEUUSUS",
    "UUUUUUUUUEPPSS",
    "UUUUUUUUUUEPSS",
    "UUUUUUUUUUUEUS",
    "------------EP",
    "------------UE",
];

fn scalar_index(t: TypeId) -> Option<usize> {
    SCALARS.iter().position(|&s| s == t)
}

/// `can_convert(from, to)`: `None` when no conversion exists.
///
/// Beyond the scalar table: a literal converts as its underlying type but never better
/// than `promote`; `none` and `T` promote to `Optional(T)`, an optional converts to `T`
/// at best `safe`; tuples convert element-wise (the worst element wins); an array converts
/// safely to the same array with layout `A` or read-only.
pub fn can_convert(from: TypeId, to: TypeId) -> Option<Conversion> {
    if from == to {
        return Some(Conversion::Exact);
    }
    if let (Some(i), Some(j)) = (scalar_index(from), scalar_index(to)) {
        return match SCALAR_TABLE[i].as_bytes()[j] {
            b'E' => Some(Conversion::Exact),
            b'P' => Some(Conversion::Promote),
            b'S' => Some(Conversion::Safe),
            b'U' => Some(Conversion::Unsafe),
            _ => None,
        };
    }
    // A datetime64 / timedelta64 to a finer unit of the same kind.
    if crate::npdatetime::can_convert(from, to) {
        return Some(Conversion::Safe);
    }
    if from.is_literal() {
        // Numba's StringLiteral converts to unicode_type only safely.
        let floor = if from.unliteral() == UNICODE {
            Conversion::Safe
        } else {
            Conversion::Promote
        };
        return can_convert(from.unliteral(), to).map(|c| c.max(floor));
    }
    match (from.get(), to.get()) {
        // A user's type converts as its class says (`can_convert_to`).
        (Type::Opaque { .. }, _) => {
            crate::extension::external().and_then(|x| x.conversion(from, to))
        }
        // A reflected list (a Python list argument) stored as a list of the same items
        // (a jitclass field, say): one layout, as Numba's list-to-list cast.
        (
            Type::List {
                dtype: a,
                typed: false,
                ..
            },
            Type::List {
                dtype: b,
                typed: false,
                ..
            },
        ) if a == b => Some(Conversion::Safe),
        // A record with more fields where one with a subset is expected (Numba's record
        // subtyping): the same bytes, read at the same offsets.
        (Type::Record { .. }, Type::Record { .. }) if crate::records::is_subtype(from, to) => {
            Some(Conversion::Safe)
        }
        // C pointers (ctypes and cffi arguments): an array's `.ctypes` is its data, an
        // integer an address, as Numba converts them.
        (Type::ArrayCTypes(_), Type::VoidPtr) => Some(Conversion::Safe),
        (Type::ArrayCTypes(a), Type::CPointer(d)) => crate::numpy::array_parts(a)
            .filter(|p| p.0 == d)
            .map(|_| Conversion::Safe),
        (Type::CPointer(_) | Type::ExternalFunctionPointer { .. }, Type::VoidPtr) => {
            Some(Conversion::Safe)
        }
        (Type::Integer { .. }, Type::VoidPtr) => Some(Conversion::Unsafe),
        (Type::VoidPtr | Type::CPointer(_), Type::Integer { .. }) => Some(Conversion::Unsafe),
        // Character-array items are the strings they hold; strings store into items
        // (truncated or NUL padded, as NumPy stores).
        (Type::UnicodeCharSeq(_), Type::Unicode) | (Type::CharSeq(_), Type::Bytes) => {
            Some(Conversion::Safe)
        }
        (Type::Unicode, Type::UnicodeCharSeq(_))
        | (Type::Bytes, Type::CharSeq(_))
        | (Type::UnicodeCharSeq(_), Type::UnicodeCharSeq(_))
        | (Type::CharSeq(_), Type::CharSeq(_)) => Some(Conversion::Unsafe),
        (Type::Optional(a), Type::Optional(b)) => can_convert(a, b),
        (Type::NoneType, Type::Optional(_)) => Some(Conversion::Promote),
        (Type::Optional(a), _) => can_convert(a, to).map(|c| c.max(Conversion::Safe)),
        (_, Type::Optional(b)) => can_convert(from, b).map(|c| c.max(Conversion::Promote)),
        (Type::UniTuple(a, n), Type::UniTuple(b, m)) if n == m => can_convert(a, b),
        (Type::UniTuple(..) | Type::Tuple(_), Type::UniTuple(..) | Type::Tuple(_)) => {
            let (xs, ys) = (tuple_items(from)?, tuple_items(to)?);
            if xs.len() != ys.len() {
                return None;
            }
            xs.iter()
                .zip(&ys)
                .map(|(&x, &y)| can_convert(x, y))
                .try_fold(Conversion::Exact, |acc, c| c.map(|c| acc.max(c)))
        }
        (
            Type::Array {
                dtype: d1,
                ndim: n1,
                layout: l1,
                readonly: r1,
            },
            Type::Array {
                dtype: d2,
                ndim: n2,
                layout: l2,
                readonly: r2,
            },
        ) if d1 == d2 && n1 == n2 && (l2 == Layout::A || l2 == l1) && (!r1 || r2) => {
            Some(Conversion::Safe)
        }
        _ => None,
    }
}

/// The element types of a tuple type.
pub fn tuple_items(t: TypeId) -> Option<Vec<TypeId>> {
    match t.get() {
        Type::UniTuple(e, n) => Some(vec![e; n as usize]),
        Type::Tuple(items) => Some(items),
        Type::NamedUniTuple { dtype, count, .. } => Some(vec![dtype; count as usize]),
        Type::NamedTuple { fields, .. } => Some(fields),
        _ => None,
    }
}

/// The values of a literal-string-key dict, in key order (its layout).
pub fn literal_dict_values(t: TypeId) -> Option<Vec<TypeId>> {
    match t.get() {
        Type::LiteralStrKeyDict { values, .. } => Some(values),
        _ => None,
    }
}

/// NumPy's `promote_types` over scalar numbers (Numba's `Number.unify`).
pub fn promote_numbers(a: TypeId, b: TypeId) -> Option<TypeId> {
    if !a.is_number() || !b.is_number() {
        return None;
    }
    if a == b {
        return Some(a);
    }
    let (ta, tb) = (a.get(), b.get());
    // Smallest float able to hold an integer of this width (NumPy's rule).
    let float_for_int = |bits: u32| match bits {
        8 => 16,
        16 => 32,
        _ => 64,
    };
    let int_to_float = |t: &Type| match *t {
        Type::Integer { bits, .. } => float_for_int(u32::from(bits)),
        Type::Float { bits } => u32::from(bits),
        Type::Complex { bits } => u32::from(bits) / 2,
        _ => 64,
    };
    let fl = |bits: u32| intern(Type::Float { bits: bits as u8 });
    let cx = |bits: u32| {
        intern(Type::Complex {
            bits: (bits * 2) as u8,
        })
    };
    Some(match (&ta, &tb) {
        (
            Type::Integer {
                bits: x,
                signed: sx,
            },
            Type::Integer {
                bits: y,
                signed: sy,
            },
        ) => {
            let (x, y) = (u32::from(*x), u32::from(*y));
            if sx == sy {
                intern(Type::Integer {
                    bits: x.max(y) as u8,
                    signed: *sx,
                })
            } else {
                let (s, u) = if *sx { (x, y) } else { (y, x) };
                if u < s {
                    intern(Type::Integer {
                        bits: s as u8,
                        signed: true,
                    })
                } else if u < 64 {
                    intern(Type::Integer {
                        bits: (u * 2) as u8,
                        signed: true,
                    })
                } else {
                    FLOAT64
                }
            }
        }
        _ if a.is_complex() || b.is_complex() => {
            cx(int_to_float(&ta).max(int_to_float(&tb)).max(32))
        }
        _ => fl(int_to_float(&ta).max(int_to_float(&tb))),
    })
}

/// Numba's `unify_pairs`: the type both can be represented as, or `None`.
///
/// Type-specific rules first (numbers by NumPy promotion, `none` with `T` to
/// `Optional(T)`, optionals inside out, tuples element-wise, arrays of one dtype and rank
/// to layout `A`), then a safe conversion either way, then the same on unliteral'd types.
pub fn unify(a: TypeId, b: TypeId) -> Option<TypeId> {
    if a == b {
        return Some(a);
    }
    if let Some(t) = special_unify(a, b).or_else(|| special_unify(b, a)) {
        return Some(t);
    }
    if can_convert(a, b).is_some_and(|c| c <= Conversion::Safe) {
        return Some(b);
    }
    if can_convert(b, a).is_some_and(|c| c <= Conversion::Safe) {
        return Some(a);
    }
    if a.is_literal() || b.is_literal() {
        return unify(a.unliteral(), b.unliteral());
    }
    None
}

/// `first.unify(second)` for the types that define one.
fn special_unify(a: TypeId, b: TypeId) -> Option<TypeId> {
    if let Some(t) = promote_numbers(a, b) {
        return Some(t);
    }
    match (a.get(), b.get()) {
        (Type::Undefined, _) => Some(b),
        // Items of character arrays of different widths: the strings they hold.
        (Type::UnicodeCharSeq(_), Type::UnicodeCharSeq(_)) => Some(UNICODE),
        (Type::CharSeq(_), Type::CharSeq(_)) => Some(BYTES),
        (Type::NoneType, Type::Optional(_)) => Some(b),
        (Type::Optional(_), Type::NoneType) => Some(a),
        (Type::NoneType, _) => Some(intern(Type::Optional(b.unliteral()))),
        (Type::Optional(x), Type::Optional(y)) => unify(x, y).map(|t| intern(Type::Optional(t))),
        (Type::Optional(x), _) => unify(x, b).map(|t| intern(Type::Optional(t))),
        // A method of an empty list, read again once the list is typed.
        (Type::BoundFunction { key: k1, this: t1 }, Type::BoundFunction { key: k2, this: t2 })
            if k1 == k2
                && (crate::lists::is_imprecise(t1)
                    || crate::lists::is_imprecise(t2)
                    || crate::lists::both_reflected(t1, t2)) =>
        {
            let this = unify(t1, t2)?;
            Some(intern(Type::BoundFunction { key: k1, this }))
        }
        // An empty dict's key and value types are whatever the other dict holds.
        (Type::Dict { .. }, Type::Dict { .. }) => crate::dicts::unify_dicts(a, b),
        (
            Type::LiteralStrKeyDict {
                keys: k1,
                values: v1,
                literals: l1,
            },
            Type::LiteralStrKeyDict {
                keys: k2,
                values: v2,
                literals: l2,
            },
        ) if k1 == k2 => {
            let values = v1
                .iter()
                .zip(&v2)
                .map(|(x, y)| unify(*x, *y))
                .collect::<Option<Vec<_>>>()?;
            // A value's literal type survives only where both agree on it.
            let literals = l1
                .iter()
                .zip(&l2)
                .zip(&values)
                .map(|((x, y), v)| if x == y { *x } else { *v })
                .collect();
            Some(intern(Type::LiteralStrKeyDict {
                keys: k1,
                values,
                literals,
            }))
        }
        (Type::DictView { dict: x, kind: i }, Type::DictView { dict: y, kind: j }) if i == j => {
            Some(crate::dicts::view_of(crate::dicts::unify_dicts(x, y)?, i))
        }
        // An empty set's item type is whatever the other set holds.
        (
            Type::Set {
                dtype: x,
                reflected,
            },
            Type::Set { dtype: y, .. },
        ) => {
            let dtype = match (x.get(), y.get()) {
                (Type::Undefined, _) => y,
                (_, Type::Undefined) => x,
                _ if x == y => x,
                _ => return None,
            };
            Some(intern(Type::Set { dtype, reflected }))
        }
        // An empty list's item type is whatever the other list holds.
        (
            Type::List {
                dtype: x,
                reflected,
                typed,
            },
            Type::List {
                dtype: y,
                typed: typed_y,
                ..
            },
        ) if typed == typed_y => {
            let dtype = match (x.get(), y.get()) {
                (Type::Undefined, _) => y,
                (_, Type::Undefined) => x,
                // A typed list holds one item type (no conversion of what it holds).
                _ if typed && x != y => return None,
                _ => unify(x, y)?,
            };
            Some(intern(Type::List {
                dtype,
                reflected,
                typed,
            }))
        }
        (Type::UniTuple(..) | Type::Tuple(_), Type::UniTuple(..) | Type::Tuple(_)) => {
            let (xs, ys) = (tuple_items(a)?, tuple_items(b)?);
            if xs.len() != ys.len() {
                return None;
            }
            let items: Option<Vec<TypeId>> =
                xs.iter().zip(&ys).map(|(&x, &y)| unify(x, y)).collect();
            Some(tuple_of(&items?))
        }
        (
            Type::Array {
                dtype: d1,
                ndim: n1,
                layout: l1,
                readonly: r1,
            },
            Type::Array {
                dtype: d2,
                ndim: n2,
                layout: l2,
                readonly: r2,
            },
        ) if d1 == d2 && n1 == n2 => Some(intern(Type::Array {
            dtype: d1,
            ndim: n1,
            layout: if l1 == l2 { l1 } else { Layout::A },
            readonly: r1 || r2,
        })),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_samples() {
        assert_eq!(can_convert(INT64, FLOAT64), Some(Conversion::Safe));
        assert_eq!(can_convert(FLOAT64, INT64), Some(Conversion::Unsafe));
        assert_eq!(can_convert(INT32, INT64), Some(Conversion::Promote));
        assert_eq!(can_convert(BOOLEAN, INT8), Some(Conversion::Safe));
        assert_eq!(can_convert(COMPLEX128, FLOAT64), None);
    }

    #[test]
    fn unify_like_numba() {
        assert_eq!(unify(INT64, FLOAT64), Some(FLOAT64));
        assert_eq!(unify(FLOAT64, INT64), Some(FLOAT64));
        assert_eq!(unify(BOOLEAN, INT64), Some(INT64));
        assert_eq!(unify(INT64, UINT64), Some(FLOAT64));
        assert_eq!(unify(INT32, FLOAT32), Some(FLOAT64));
        assert_eq!(unify(INT8, UINT8), Some(INT16));
        assert_eq!(unify(INT64, UNICODE), None);
    }

    #[test]
    fn unify_is_symmetric_over_scalars() {
        for &a in &SCALARS {
            for &b in &SCALARS {
                assert_eq!(unify(a, b), unify(b, a), "{a} {b}");
            }
        }
    }
}
