//! Items of NumPy character arrays (Numba's `CharSeq` / `UnicodeCharSeq`): `[char x n]`
//! is `n` bytes and `[unichr x n]` `n` UCS-4 code points, held by value exactly as the
//! array stores them (NUL padded). They never cross the boundary as themselves: a
//! function returning one returns the `bytes` or `str` it holds (typing converts).

use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{LowerError, R};

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
        message: format!("values of type {t} cross the boundary as the strings they hold"),
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
        Err(no_boundary(t))
    }
    fn pack<'ctx>(
        &self,
        _c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        _v: BasicValueEnum<'ctx>,
        _idx: &mut u32,
    ) -> R<()> {
        Err(no_boundary(t))
    }
    fn unpack<'ctx>(
        &self,
        _c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        _idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        Err(no_boundary(t))
    }
}
