//! `np.array(obj, dtype=None)`: a new C array from a scalar (0-d), a tuple or nested
//! tuples of scalars (their shape, leaves converted to the dtype), or another array (a
//! copy, converted).

use inkwell::values::BasicValueEnum;
use numba_typeinfer::numpy::nested_shape;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{dtype_of, flat_ptr, map_elements, store_elem};
use super::arrays::allocate;
use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    r.register(
        ImplKey::Function("numpy.array".into()),
        Args::Variadic(TypePat::Any),
        array,
    );
}

/// The scalar leaves of a (nested) tuple value, in C order.
fn leaves<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
    out: &mut Vec<(BasicValueEnum<'ctx>, TypeId)>,
) -> R<()> {
    let t = t.unliteral();
    match numba_typeinfer::conv::tuple_items(t) {
        Some(items) => {
            for (k, it) in items.into_iter().enumerate() {
                let x =
                    lw.b.build_extract_value(v.into_struct_value(), k as u32, "")
                        .map_err(llvm_err)?;
                leaves(lw, it, x, out)?;
            }
        }
        None => out.push((v, t)),
    }
    Ok(())
}

fn array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (obj_t, ret) = (sig.args[0], sig.ret);
    if obj_t.is_array() {
        return map_elements(lw, ret, &[(obj_t, a[0])], &mut |_, e| Ok(e[0]));
    }
    if matches!(obj_t.get(), Type::List { .. }) {
        return super::lists::to_array(lw, obj_t, a[0], ret);
    }
    let (shape, _) =
        nested_shape(obj_t).ok_or_else(|| lw.unsupported(format!("np.array of {obj_t}")))?;
    let i64t = lw.ctx.i64_type();
    let dims: Vec<_> = shape
        .iter()
        .map(|&n| i64t.const_int(u64::from(n), false))
        .collect();
    let out = allocate(lw, ret, &dims)?;
    let mut vals = Vec::new();
    leaves(lw, obj_t, a[0], &mut vals)?;
    let dtype = dtype_of(ret);
    for (k, (v, t)) in vals.into_iter().enumerate() {
        let v = lw.cast(v, t, dtype)?;
        let p = flat_ptr(lw, ret, out, i64t.const_int(k as u64, false))?;
        store_elem(lw, dtype, p, v)?;
    }
    Ok(out.into())
}
