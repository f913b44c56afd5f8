//! `unicode_type` (Numba's `UnicodeModel`): a PEP 393 string, its data in one of three
//! kinds (1, 2 or 4 bytes per character) with a NUL after the last character, its length
//! in characters, whether it is ASCII, the cached hash (-1 until computed), the NRT
//! MemInfo owning the data (null for constants in the module and for strings borrowed
//! from Python arguments) and the Python object the data was borrowed from (null when
//! none). Across the boundary: the seven fields, one slot each.

use inkwell::context::Context;
use inkwell::types::{BasicTypeEnum, StructType};
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, R};

/// Field indices, in Numba's order.
pub mod field {
    pub const DATA: u32 = 0;
    pub const LENGTH: u32 = 1;
    pub const KIND: u32 = 2;
    pub const IS_ASCII: u32 = 3;
    pub const HASH: u32 = 4;
    pub const MEMINFO: u32 = 5;
    pub const PARENT: u32 = 6;
}

/// The number of fields (and boundary slots).
pub const FIELDS: u32 = 7;

/// The LLVM struct of a string value.
pub fn struct_type(ctx: &Context) -> StructType<'_> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    let (i64t, i32t) = (ctx.i64_type(), ctx.i32_type());
    ctx.struct_type(
        &[
            ptr.into(),
            i64t.into(),
            i32t.into(),
            i32t.into(),
            i64t.into(),
            ptr.into(),
            ptr.into(),
        ],
        false,
    )
}

pub struct UnicodeModel;

impl DataModel for UnicodeModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(struct_type(ctx).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        Ok(if t == BYTES {
            Shape::Bytes
        } else {
            Shape::Unicode
        })
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let sv = v.into_struct_value();
        let i64t = c.ctx.i64_type();
        for f in 0..FIELDS {
            let x = c.b.build_extract_value(sv, f, "").map_err(llvm_err)?;
            let w = match x {
                BasicValueEnum::PointerValue(p) => {
                    c.b.build_ptr_to_int(p, i64t, "").map_err(llvm_err)?
                }
                BasicValueEnum::IntValue(i) if i.get_type().get_bit_width() < 64 => {
                    c.b.build_int_z_extend(i, i64t, "").map_err(llvm_err)?
                }
                other => other.into_int_value(),
            };
            c.b.build_store(c.slot(*idx + f)?, w).map_err(llvm_err)?;
        }
        *idx += FIELDS;
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let st = struct_type(c.ctx);
        let mut sv = st.get_undef();
        let ptr = c.ctx.ptr_type(AddressSpace::default());
        for f in 0..FIELDS {
            let raw =
                c.b.build_load(c.ctx.i64_type(), c.slot(*idx + f)?, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let x: BasicValueEnum = match f {
                field::DATA | field::MEMINFO | field::PARENT => {
                    c.b.build_int_to_ptr(raw, ptr, "").map_err(llvm_err)?.into()
                }
                field::KIND | field::IS_ASCII => {
                    c.b.build_int_truncate(raw, c.ctx.i32_type(), "")
                        .map_err(llvm_err)?
                        .into()
                }
                _ => raw.into(),
            };
            sv =
                c.b.build_insert_value(sv, x, f, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
        }
        *idx += FIELDS;
        Ok(sv.into())
    }
}

/// A string's PEP 393 form: its kind (1, 2 or 4), whether it is ASCII, its length in
/// characters, and its data with a NUL character after the last, in native byte order.
pub fn encode(s: &str) -> (u32, bool, u64, Vec<u8>) {
    let max = s.chars().map(u32::from).max().unwrap_or(0);
    let kind = if max < 0x100 {
        1
    } else if max < 0x10000 {
        2
    } else {
        4
    };
    let n = s.chars().count() as u64;
    let mut data = Vec::with_capacity((n as usize + 1) * kind as usize);
    for ch in s.chars().chain(std::iter::once('\0')) {
        let c = u32::from(ch);
        match kind {
            1 => data.push(c as u8),
            2 => data.extend_from_slice(&(c as u16).to_ne_bytes()),
            _ => data.extend_from_slice(&c.to_ne_bytes()),
        }
    }
    (kind, max < 0x80, n, data)
}
