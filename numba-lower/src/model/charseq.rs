//! Items of NumPy character arrays (Numba's `CharSeq` / `UnicodeCharSeq`): `[char x n]`
//! is `n` bytes and `[unichr x n]` `n` UCS-4 code points, held by value exactly as the
//! array stores them (NUL padded). Across the boundary they are their bytes
//! (`Shape::Chars`): a `bytes` / `str` argument is stored into one, and a function
//! returning one returns the `bytes` or `str` it holds (typing converts).

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, LowerError, R};

/// Code units and their width in bytes of a character-array item type.
pub fn units(t: TypeId) -> Option<(u32, u32)> {
    match t.get() {
        Type::CharSeq(n) => Some((n, 1)),
        Type::UnicodeCharSeq(n) => Some((n, 4)),
        _ => None,
    }
}

pub struct CharSeqModel;

fn no_boundary(t: TypeId) -> LowerError {
    LowerError::Unsupported {
        message: format!("{t} is not a character-array item type"),
        line: 0,
    }
}

impl DataModel for CharSeqModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        let (n, w) = units(t).ok_or_else(|| no_boundary(t))?;
        let unit = if w == 1 {
            ctx.i8_type()
        } else {
            ctx.i32_type()
        };
        Ok(unit.array_type(n).into())
    }
    fn shape(&self, t: TypeId) -> R<Shape> {
        units(t).ok_or_else(|| no_boundary(t))?;
        Ok(Shape::Chars(t))
    }
    // The slots are one contiguous buffer: the bytes are stored over as many as they
    // fill (the receiver reads only the item's own bytes).
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let st = c.b.build_store(c.slot(*idx)?, v).map_err(llvm_err)?;
        st.set_alignment(1)
            .map_err(|e| LowerError::Llvm(e.to_string()))?;
        *idx += crate::callconv::char_slots(t) as u32;
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let ty = self.value_type(c.ctx, t)?;
        let v = c.b.build_load(ty, c.slot(*idx)?, "").map_err(llvm_err)?;
        *idx += crate::callconv::char_slots(t) as u32;
        Ok(v)
    }
}
