//! NumPy arrays: Numba's `ArrayModel` (numba-facts §6), `{meminfo, parent, nitems,
//! itemsize, data, shape[ndim], strides[ndim]}`, strides in bytes. Across the boundary the
//! same fields, one slot each.

use inkwell::context::Context;
use inkwell::types::{BasicTypeEnum, StructType};
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, R};

pub struct ArrayModel;

/// Field indices of the array struct.
pub mod field {
    pub const MEMINFO: u32 = 0;
    pub const PARENT: u32 = 1;
    pub const NITEMS: u32 = 2;
    pub const ITEMSIZE: u32 = 3;
    pub const DATA: u32 = 4;
    pub const SHAPE: u32 = 5;
    pub const STRIDES: u32 = 6;
}

/// The number of dimensions of an array type.
pub fn ndim(t: TypeId) -> u32 {
    match t.get() {
        Type::Array { ndim, .. } => ndim,
        // `a.flat` and `np.ndenumerate(a)` hold the array itself.
        Type::NumpyFlat(a) | Type::NdEnumerate(a) | Type::NdIndex(a) => ndim(a),
        _ => 0,
    }
}

/// The LLVM struct of an array of `ndim` dimensions.
pub fn array_struct(ctx: &Context, ndim: u32) -> StructType<'_> {
    let p: BasicTypeEnum = ctx.ptr_type(AddressSpace::default()).into();
    let i: BasicTypeEnum = ctx.i64_type().into();
    let dims: BasicTypeEnum = ctx.i64_type().array_type(ndim).into();
    ctx.struct_type(&[p, p, i, i, p, dims, dims], false)
}

impl DataModel for ArrayModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(array_struct(ctx, ndim(t)).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        if t.flat_array().is_some() {
            return Err(crate::LowerError::Unsupported {
                message: format!("{t} cannot cross into Python"),
                line: 0,
            });
        }
        Ok(Shape::Array(t))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let sv = v.into_struct_value();
        let i64t = c.ctx.i64_type();
        let mut put = |x: BasicValueEnum<'ctx>| -> R<()> {
            let w = if x.is_pointer_value() {
                c.b.build_ptr_to_int(x.into_pointer_value(), i64t, "")
                    .map_err(llvm_err)?
            } else {
                x.into_int_value()
            };
            c.b.build_store(c.slot(*idx)?, w).map_err(llvm_err)?;
            *idx += 1;
            Ok(())
        };
        for f in 0..5 {
            put(c.b.build_extract_value(sv, f, "").map_err(llvm_err)?)?;
        }
        for f in [field::SHAPE, field::STRIDES] {
            let arr =
                c.b.build_extract_value(sv, f, "")
                    .map_err(llvm_err)?
                    .into_array_value();
            for d in 0..ndim(t) {
                put(c.b.build_extract_value(arr, d, "").map_err(llvm_err)?)?;
            }
        }
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let n = ndim(t);
        let st = array_struct(c.ctx, n);
        let i64t = c.ctx.i64_type();
        let ptr = c.ctx.ptr_type(AddressSpace::default());
        let mut next = || -> R<inkwell::values::IntValue<'ctx>> {
            let v =
                c.b.build_load(i64t, c.slot(*idx)?, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            *idx += 1;
            Ok(v)
        };
        let mut agg = st.get_undef();
        for f in 0..5 {
            let w = next()?;
            let x: BasicValueEnum = if matches!(f, field::MEMINFO | field::PARENT | field::DATA) {
                c.b.build_int_to_ptr(w, ptr, "").map_err(llvm_err)?.into()
            } else {
                w.into()
            };
            agg =
                c.b.build_insert_value(agg, x, f, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        for f in [field::SHAPE, field::STRIDES] {
            let mut arr = i64t.array_type(n).get_undef();
            for d in 0..n {
                let w = next()?;
                arr =
                    c.b.build_insert_value(arr, w, d, "")
                        .map_err(llvm_err)?
                        .into_array_value();
            }
            agg =
                c.b.build_insert_value(agg, arr, f, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        Ok(agg.into())
    }
}
