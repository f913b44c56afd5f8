//! Typing of NumPy structured dtypes (Numba's `Record` and `NestedArray`).
//!
//! A record is one item of a structured array: `a[i]` is a reference to the item's bytes
//! (Numba's record model), so `a[i].x = 1` writes into the array. Fields are read and
//! written by attribute (`r.x`), by constant name (`r['x']`, a literal string variable,
//! a `literal_unroll` over names) or by constant position (`r[0]`). An array of records
//! gives a strided view of one field (`a.x`, `a['x']`). An array field
//! (`('h', 'f4', (3, 2))`, a [`Type::NestedArray`]) reads as a C array over the record's
//! bytes.

use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// The fields of a record type.
pub fn fields(t: TypeId) -> Option<Vec<RecordField>> {
    match t.get() {
        Type::Record { fields, .. } => Some(fields),
        _ => None,
    }
}

/// Whether `t` is a record type.
pub fn is_record(t: TypeId) -> bool {
    matches!(t.get(), Type::Record { .. })
}

/// The size in bytes of a record type.
pub fn size(t: TypeId) -> Option<u32> {
    match t.get() {
        Type::Record { size, .. } => Some(size),
        _ => None,
    }
}

/// The field of `t` named `name` (or titled so, as NumPy looks titles up too).
pub fn field(t: TypeId, name: &str) -> Option<RecordField> {
    fields(t)?
        .into_iter()
        .find(|f| f.name == name || f.title.as_deref() == Some(name))
}

/// The type a field reads as: its own type, or a C array for an array field.
pub fn value_type(field_ty: TypeId) -> TypeId {
    match field_ty.get() {
        Type::NestedArray { dtype, shape } => intern(Type::Array {
            dtype,
            ndim: shape.len() as u32,
            layout: Layout::C,
            readonly: false,
        }),
        _ => field_ty,
    }
}

/// Bytes of one item of this dtype in memory: array elements and record fields alike
/// (a bool is a byte, character items their units, records and nested arrays their bytes).
pub fn field_size(t: TypeId) -> u64 {
    match t.get() {
        Type::Boolean => 1,
        Type::CharSeq(n) => u64::from(n),
        Type::UnicodeCharSeq(n) => 4 * u64::from(n),
        Type::Record { size, .. } => u64::from(size),
        Type::NestedArray { dtype, shape } => {
            shape.iter().map(|&d| u64::from(d)).product::<u64>() * field_size(dtype)
        }
        _ => u64::from(t.bitwidth().max(8)) / 8,
    }
}

/// `r.attr`: the field's value type.
pub fn getattr(t: TypeId, attr: &str) -> Option<TypeId> {
    field(t, attr).map(|f| value_type(f.ty))
}

fn missing(t: TypeId, name: &str) -> String {
    let names: Vec<String> = fields(t)
        .unwrap_or_default()
        .iter()
        .map(|f| format!("'{}'", f.name))
        .collect();
    let comma = if names.len() == 1 { "," } else { "" };
    format!(
        "Field '{name}' was not found in record with fields ({}{comma})",
        names.join(", ")
    )
}

/// The field a constant index names: a literal string, or a literal position.
pub fn field_by_index(t: TypeId, index: TypeId) -> Result<Option<RecordField>, String> {
    let Some(all) = fields(t) else {
        return Ok(None);
    };
    match index.get() {
        Type::StringLiteral(name) => field(t, &name).map(Some).ok_or_else(|| missing(t, &name)),
        Type::IntegerLiteral(i) => {
            let n = all.len() as i64;
            let j = if i < 0 { i + n } else { i };
            usize::try_from(j)
                .ok()
                .and_then(|j| all.get(j).cloned())
                .map(Some)
                .ok_or_else(|| format!("Requested index {i} is out of range"))
        }
        _ => Ok(None),
    }
}

/// The error for a record index that is neither a constant string nor integer.
pub fn not_constant(index: TypeId) -> String {
    format!(
        "Unsupported record index type {}: a field is named by a constant string or integer",
        index.unliteral()
    )
}

/// `r[<constant>]`: the signature reading the field; the index argument keeps its
/// literal type (the implementation reads the field from it).
pub fn getitem(t: TypeId, index: TypeId) -> Result<Option<Signature>, String> {
    if !is_record(t) {
        return Ok(None);
    }
    let Some(f) = field_by_index(t, index)? else {
        return Err(not_constant(index));
    };
    Ok(Some(Signature {
        ret: value_type(f.ty),
        args: vec![t, intern(Type::StringLiteral(f.name))],
        key: ImplKey::GetItem,
    }))
}

/// Whether `v` can be stored into a field of type `field_ty`: a number converting to
/// it, text into a character field, an array (or scalar, broadcast) into an array field,
/// a record of the same type.
pub fn store_ok(field_ty: TypeId, v: TypeId) -> bool {
    let v = v.unliteral();
    match field_ty.get() {
        Type::NestedArray { dtype, shape } => match crate::numpy::array_parts(v) {
            Some((d, nd, ..)) => {
                nd as usize <= shape.len() && crate::conv::can_convert(d, dtype).is_some()
            }
            None => v.is_scalar() && crate::conv::can_convert(v, dtype).is_some(),
        },
        Type::CharSeq(_) | Type::UnicodeCharSeq(_) => {
            crate::strings::text_kind(v).is_some()
                && crate::strings::text_kind(v) == crate::strings::text_kind(field_ty)
        }
        Type::Record { .. } => v == field_ty,
        _ => crate::conv::can_convert(v, field_ty).is_some(),
    }
}

/// The signature of storing `v` into the field `f` of `t` (`r.f = v`, `r['f'] = v`):
/// `(record, Literal[str](name), value type)`.
pub fn setitem(t: TypeId, f: &RecordField, v: TypeId) -> Result<Signature, String> {
    if !store_ok(f.ty, v) {
        return Err(format!(
            "Cannot set field '{}' of {t} (of type {}) to a value of type {}",
            f.name,
            f.ty,
            v.unliteral()
        ));
    }
    Ok(Signature {
        ret: NONE,
        args: vec![
            t,
            intern(Type::StringLiteral(f.name.clone())),
            v.unliteral(),
        ],
        key: ImplKey::SetItem,
    })
}

/// `a.x` / `a['x']` of an array of records: a strided view of one field (an array
/// field adds its dimensions).
pub fn array_field(arr: TypeId, name: &str) -> Option<TypeId> {
    let (dtype, ndim, _, readonly) = crate::numpy::array_parts(arr)?;
    let f = field(dtype, name)?;
    let (d, extra) = match f.ty.get() {
        Type::NestedArray { dtype, shape } => (dtype, shape.len() as u32),
        _ => (f.ty, 0),
    };
    Some(intern(Type::Array {
        dtype: d,
        ndim: ndim + extra,
        layout: Layout::A,
        readonly,
    }))
}

/// Whether a record of type `from` passes where `to` is expected (Numba's record
/// subtyping): every field of `to` is in `from` at the same offset with the same type.
pub fn is_subtype(from: TypeId, to: TypeId) -> bool {
    let (Some(have), Some(want)) = (fields(from), fields(to)) else {
        return false;
    };
    want.iter().all(|w| {
        have.iter()
            .any(|h| h.name == w.name && h.ty == w.ty && h.offset == w.offset)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Numba 0.68.1's names of these types (printed by `numba.np.numpy_support.from_dtype`).
    const PACKED: &str = "Record(a[type=float64;offset=0],b[type=int16;offset=8],c[type=complex64;offset=10],d[type=[unichr x 5];offset=18];38;False)";
    const NESTED: &str =
        "Record(i[type=int32;offset=0],j[type=nestedarray(float32, (3, 2));offset=4];28;False)";
    const TITLED: &str =
        "Record(s0[type=int32;offset=0;title=x],x[type=int32;offset=0;title=x];4;False)";

    #[test]
    fn numba_names_round_trip() {
        for text in [PACKED, NESTED, TITLED] {
            let t = parse_type(text).unwrap_or_else(|| panic!("cannot parse {text}"));
            assert_eq!(t.to_string(), text);
        }
        let arr = parse_type(&format!("unaligned array({PACKED}, 1d, A)")).expect("array");
        assert_eq!(arr.to_string(), format!("array({PACKED}, 1d, A)"));
    }

    #[test]
    fn fields_by_name_title_and_position() {
        let t = parse_type(PACKED).expect("record");
        assert_eq!(getattr(t, "b"), Some(INT16));
        let lit = |s: &str| intern(Type::StringLiteral(s.into()));
        assert_eq!(
            field_by_index(t, lit("c")).ok().flatten().map(|f| f.offset),
            Some(10)
        );
        let last = field_by_index(t, intern(Type::IntegerLiteral(-1)));
        assert_eq!(last.ok().flatten().map(|f| f.name), Some("d".to_string()));
        assert_eq!(
            field_by_index(t, intern(Type::IntegerLiteral(10))),
            Err("Requested index 10 is out of range".into())
        );
        assert_eq!(
            field_by_index(t, lit("z")),
            Err("Field 'z' was not found in record with fields ('a', 'b', 'c', 'd')".into())
        );
        let titled = parse_type(TITLED).expect("titled");
        assert_eq!(field(titled, "x").map(|f| f.offset), Some(0));
        // A nested array field reads as a C array; its bytes are its shape's.
        let n = parse_type(NESTED).expect("nested");
        assert_eq!(
            getattr(n, "j").map(|t| t.to_string()).as_deref(),
            Some("array(float32, 2d, C)")
        );
        assert_eq!(field(n, "j").map(|f| field_size(f.ty)), Some(24));
    }

    #[test]
    fn subtyping_needs_every_field_at_its_offset() {
        let a = parse_type("Record(a[type=float64;offset=0];8;False)").expect("a");
        let ab = parse_type("Record(a[type=float64;offset=0],b[type=int32;offset=8];12;False)")
            .expect("ab");
        let moved = parse_type("Record(b[type=int32;offset=0],a[type=float64;offset=4];12;False)")
            .expect("moved");
        assert!(is_subtype(ab, a));
        assert!(!is_subtype(a, ab));
        assert!(!is_subtype(moved, a));
        assert!(crate::conv::can_convert(ab, a).is_some());
    }
}
