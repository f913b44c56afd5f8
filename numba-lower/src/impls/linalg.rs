//! Linear algebra: `np.dot` and `@` for 1-d and 2-d float and complex arrays, each lowered
//! to one call of the GEMM helper (`crate::blas`), with vectors read as 1×k or k×1
//! matrices through their strides.

use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{data_ptr, dim, dtype_of, is_array};
use super::arrays::allocate;
use crate::blas::GemmKind;
use crate::function::FnLower;
use crate::model::array::{field, ndim};
use crate::model::model_of;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    let two = || Args::Exact(vec![TypePat::Pred(is_array), TypePat::Pred(is_array)]);
    r.register(ImplKey::Function("numpy.dot".into()), two(), dot);
    r.register(ImplKey::BinOp(BinOp::MatMul), two(), dot);
}

fn gemm_kind(dtype: TypeId) -> Option<GemmKind> {
    Some(match dtype {
        FLOAT32 => GemmKind::F32,
        FLOAT64 => GemmKind::F64,
        COMPLEX64 => GemmKind::C64,
        COMPLEX128 => GemmKind::C128,
        _ => return None,
    })
}

/// A product operand as a matrix: rows, columns, and their byte strides.
struct Operand<'ctx> {
    rows: IntValue<'ctx>,
    cols: IntValue<'ctx>,
    row_stride: IntValue<'ctx>,
    col_stride: IntValue<'ctx>,
}

fn dot<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (ta, tb) = (sig.args[0], sig.args[1]);
    let (x, y) = (a[0].into_struct_value(), a[1].into_struct_value());
    let dtype = dtype_of(ta);
    let kind = gemm_kind(dtype).ok_or_else(|| lw.unsupported("np.dot of this dtype"))?;
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let size = i64t.const_int(kind.itemsize() as u64, false);
    // A vector is a 1×k row on the left and a k×1 column on the right.
    let operand = |lw: &mut FnLower<'ctx, '_>, t: TypeId, v, left: bool| -> R<Operand<'ctx>> {
        let len0 = dim(lw, v, field::SHAPE, 0)?;
        let st0 = dim(lw, v, field::STRIDES, 0)?;
        Ok(if ndim(t) == 2 {
            Operand {
                rows: len0,
                cols: dim(lw, v, field::SHAPE, 1)?,
                row_stride: st0,
                col_stride: dim(lw, v, field::STRIDES, 1)?,
            }
        } else if left {
            Operand {
                rows: one,
                cols: len0,
                row_stride: size,
                col_stride: st0,
            }
        } else {
            Operand {
                rows: len0,
                cols: one,
                row_stride: st0,
                col_stride: size,
            }
        })
    };
    let l = operand(lw, ta, x, true)?;
    let r = operand(lw, tb, y, false)?;
    let bad =
        lw.b.build_int_compare(IntPredicate::NE, l.cols, r.rows, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        bad,
        "ValueError",
        &["incompatible array sizes for np.dot(a, b)"],
    )?;
    let (m, k, n) = (l.rows, l.cols, r.cols);
    // The result: a new array (its dims are the non-vector ones), or one stack element.
    let (out, c, rsc) = if sig.ret.is_array() {
        let dims: Vec<IntValue> = match (ndim(ta), ndim(tb)) {
            (2, 2) => vec![m, n],
            (2, _) => vec![m],
            _ => vec![n],
        };
        let out = allocate(lw, sig.ret, &dims)?;
        let data = data_ptr(lw, out)?;
        let rsc = lw.b.build_int_mul(n, size, "").map_err(llvm_err)?;
        (Some(out), data, rsc)
    } else {
        let slot = lw.alloca_in_entry(model_of(dtype)?.memory_type(lw.ctx, dtype)?, "dot")?;
        (None, slot, size)
    };
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let i32t = lw.ctx.i32_type();
    let f = lw.runtime_fn(
        "numba_rs_gemm",
        lw.ctx.void_type().fn_type(
            &[
                i32t.into(),
                i64t.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
            ],
            false,
        ),
    );
    let (pa, pb) = (data_ptr(lw, x)?, data_ptr(lw, y)?);
    lw.b.build_call(
        f,
        &[
            i32t.const_int(kind as u64, false).into(),
            m.into(),
            k.into(),
            n.into(),
            pa.into(),
            l.row_stride.into(),
            l.col_stride.into(),
            pb.into(),
            r.row_stride.into(),
            r.col_stride.into(),
            c.into(),
            rsc.into(),
            size.into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    match out {
        Some(out) => Ok(out.into()),
        None => {
            let m = model_of(dtype)?;
            let v =
                lw.b.build_load(m.memory_type(lw.ctx, dtype)?, c, "")
                    .map_err(llvm_err)?;
            m.load_memory(lw.ctx, &lw.b, dtype, v)
        }
    }
}
