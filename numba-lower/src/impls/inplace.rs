//! `array op= x`: NumPy's in-place operators (`np.add(a, x, out=a)`). The result of
//! `a op x` is computed by the element-wise operator's implementation, checked to have
//! the array's own shape (NumPy's "non-broadcastable output operand" otherwise), and
//! written back into the array with a `same_kind` cast (typing checked the kinds); the
//! statement's value is the array itself, so aliases see the change.

use inkwell::values::BasicValueEnum;
use inkwell::IntPredicate;
use numba_typeinfer::numpy::{inplace_key, ELEMENTWISE_BINOPS};
use numba_typeinfer::types::TypeId;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{broadcast_shape, dim};
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    for &op in ELEMENTWISE_BINOPS {
        r.register(
            ImplKey::Function(inplace_key(op)),
            Args::Exact(vec![TypePat::Pred(TypeId::is_array), TypePat::Any]),
            inplace,
        );
    }
}

/// NumPy's ValueError unless the output array `dst` (of rank `nd`) has exactly the
/// broadcast shape `dims` of the operation writing into it.
pub(super) fn check_output_shape<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dst: inkwell::values::StructValue<'ctx>,
    nd: u32,
    dims: &[inkwell::values::IntValue<'ctx>],
) -> R<()> {
    let same_rank = dims.len() == nd as usize;
    let mut bad = lw.ctx.bool_type().const_int(u64::from(!same_rank), false);
    if same_rank {
        for (d, &y) in dims.iter().enumerate() {
            let x = dim(lw, dst, field::SHAPE, d as u32)?;
            let ne =
                lw.b.build_int_compare(IntPredicate::NE, x, y, "")
                    .map_err(llvm_err)?;
            bad = lw.b.build_or(bad, ne, "").map_err(llvm_err)?;
        }
    }
    lw.raise_const_if(
        bad,
        "ValueError",
        &["non-broadcastable output operand with a shape that doesn't match the broadcast shape"],
    )
}

fn inplace<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = ELEMENTWISE_BINOPS
        .iter()
        .copied()
        .find(|&op| matches!(&sig.key, ImplKey::Function(k) if *k == inplace_key(op)))
        .ok_or_else(|| lw.unsupported("an unknown in-place operator"))?;
    let (dst_t, rhs_t) = (sig.args[0], sig.args[1]);
    let bsig = lw
        .registry_sig(op, dst_t, rhs_t)
        .ok_or_else(|| lw.unsupported(format!("{} of {dst_t} and {rhs_t}", op.operator_name())))?;
    // The broadcast shape must be the output's own (NumPy's error otherwise); checked
    // before anything is computed.
    let (nd, nr) = (ndim(dst_t), ndim(bsig.ret));
    let (dims, _) = broadcast_shape(lw, nr, &[(dst_t, a[0]), (rhs_t, a[1])])?;
    let dst = a[0].into_struct_value();
    check_output_shape(lw, dst, nd, &dims)?;
    let tmp = lw.call_impl(&bsig, a)?;
    super::indexing::assign_into(lw, dst_t, dst, bsig.ret, tmp)?;
    lw.decref(bsig.ret, tmp)?;
    lw.incref(dst_t, a[0])?;
    Ok(a[0])
}
