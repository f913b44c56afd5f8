//! Generators: a pointer to a heap object that the generator's own native functions
//! manage, so copies share one position as in Python and a generator can outlive the
//! frame that made it (returned, kept in another generator's state, boxed for Python).
//!
//! The object ([`object_type`]) starts with a header numba-py and other jitted code read
//! without knowing the generator's layout:
//! `{i64 refcount, ptr next, ptr finalize, ptr close, ptr resume_entry, i32 resume_index}`,
//! then Numba's generator struct parts: the arguments, the state variables and the slot
//! a `send` fills. The refcount is plain (not atomic) memory, so that LLVM can see through
//! a generator consumed where it was made; the object is reached from one thread at a
//! time (under the GIL, or inside one native call).

use inkwell::context::Context;
use inkwell::types::{BasicTypeEnum, StructType};
use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use super::{DataModel, SlotCodec};
use crate::callconv::Shape;
use crate::{llvm_err, LowerError, R};

pub struct GeneratorModel;

/// Header field indices of the generator object (the layout numba-py mirrors).
pub mod field {
    pub const REFCOUNT: u32 = 0;
    /// `i32 next(ret*, excinfo**, obj*)`: the native next function.
    pub const NEXT: u32 = 1;
    /// `void finalize(obj*)`: releases what the object holds and frees it.
    pub const FINALIZE: u32 = 2;
    /// `void close(obj*)`: releases the live state and marks the generator exhausted.
    pub const CLOSE: u32 = 3;
    /// `i32 resume_entry(u64* ret, excinfo**, obj*, const u64* sent)`: `next` with the
    /// yielded value packed into boundary slots (and a sent value unpacked from them).
    pub const RESUME_ENTRY: u32 = 4;
    /// 0 before the first `next`, -1 when exhausted, the yield point's index otherwise.
    pub const RESUME_INDEX: u32 = 5;
    /// What `send` passed (the send type's memory form; zero is None).
    pub const SENT: u32 = 6;
    pub const ARGS: u32 = 7;
    pub const STATE: u32 = 8;
}

/// Byte offset of `resume_index` in the object (after five 8-byte header words).
pub const RESUME_INDEX_OFFSET: usize = 40;

impl DataModel for GeneratorModel {
    fn value_type<'ctx>(&self, ctx: &'ctx Context, _t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        Ok(ctx.ptr_type(AddressSpace::default()).into())
    }
    /// One slot: the object's address (a new reference when returned, borrowed when
    /// passed in).
    fn shape(&self, t: TypeId) -> R<Shape> {
        Ok(Shape::Generator(t))
    }
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()> {
        let x =
            c.b.build_ptr_to_int(v.into_pointer_value(), c.ctx.i64_type(), "")
                .map_err(llvm_err)?;
        c.b.build_store(c.slot(*idx)?, x).map_err(llvm_err)?;
        *idx += 1;
        Ok(())
    }
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        _t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>> {
        let x =
            c.b.build_load(c.ctx.i64_type(), c.slot(*idx)?, "")
                .map_err(llvm_err)?
                .into_int_value();
        *idx += 1;
        Ok(c.b
            .build_int_to_ptr(x, c.ctx.ptr_type(AddressSpace::default()), "gen")
            .map_err(llvm_err)?
            .into())
    }
}

/// The parts of a generator type.
pub struct GenParts {
    pub yield_type: TypeId,
    pub args: Vec<TypeId>,
    pub send_type: TypeId,
    pub id: u64,
}

/// The parts of `t`, which must be a generator type.
pub fn parts(t: TypeId) -> R<GenParts> {
    match t.get() {
        Type::Generator {
            yield_type,
            args,
            send_type,
            id,
            ..
        } => Ok(GenParts {
            yield_type,
            args,
            send_type,
            id,
        }),
        _ => Err(LowerError::Llvm(format!("{t} is not a generator type"))),
    }
}

/// The header and the send slot: what code that does not know the generator's state
/// layout (its consumers) may touch.
pub fn prefix_type(ctx: &Context, gen: TypeId) -> R<StructType<'_>> {
    let p: BasicTypeEnum = ctx.ptr_type(AddressSpace::default()).into();
    Ok(ctx.struct_type(
        &[
            ctx.i64_type().into(),
            p,
            p,
            p,
            p,
            ctx.i32_type().into(),
            super::memory_type(ctx, parts(gen)?.send_type)?,
        ],
        false,
    ))
}

/// The whole object of a generator whose state variables have `state` as their stored
/// types (see `impls::generators::state_type`).
pub fn object_type<'ctx>(
    ctx: &'ctx Context,
    gen: TypeId,
    state: &[BasicTypeEnum<'ctx>],
) -> R<StructType<'ctx>> {
    let p = parts(gen)?;
    let args = p
        .args
        .iter()
        .map(|&a| super::memory_type(ctx, super::lowered(a)))
        .collect::<R<Vec<_>>>()?;
    let ptr: BasicTypeEnum = ctx.ptr_type(AddressSpace::default()).into();
    Ok(ctx.struct_type(
        &[
            ctx.i64_type().into(),
            ptr,
            ptr,
            ptr,
            ptr,
            ctx.i32_type().into(),
            super::memory_type(ctx, p.send_type)?,
            ctx.struct_type(&args, false).into(),
            ctx.struct_type(state, false).into(),
        ],
        false,
    ))
}
