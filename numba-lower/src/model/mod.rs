//! Data models: how each type is represented in LLVM, one model per type kind.
//!
//! A model says what a value looks like in registers (`value_type`) and in memory
//! (`memory_type`; a bool is `i1` as a value and `i8` in memory), how to convert between the
//! two, and how the value crosses the CPython boundary as 8-byte slots (the one codec of
//! [`crate::callconv`]). [`model_of`] is the only place that maps a type kind to its model.

pub mod array;
mod bound;
pub mod charseq;
mod complex;
mod enums;
mod flags;
pub mod generator;
mod ghost;
mod iter;
pub mod list;
mod npgen;
mod opaque;
mod optional;
mod pointer;
pub mod record;
mod scalar;
mod tuple;
pub mod unicode;
pub mod user;

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, PointerValue};
use numba_typeinfer::types::*;

use crate::callconv::Shape;
use crate::{LowerError, R};

pub use iter::{iterator_storage, IterModel};
pub use tuple::members;

/// The builder and slot buffer a model packs into or unpacks from.
pub struct SlotCodec<'ctx, 'a> {
    pub ctx: &'ctx Context,
    pub b: &'a Builder<'ctx>,
    /// `u64*`: the slots.
    pub slots: PointerValue<'ctx>,
}

impl<'ctx> SlotCodec<'ctx, '_> {
    /// The address of slot `i`.
    pub fn slot(&self, i: u32) -> R<PointerValue<'ctx>> {
        let i64t = self.ctx.i64_type();
        // SAFETY (of the generated code): callers size the buffer from the type's shape.
        unsafe {
            self.b
                .build_gep(
                    i64t,
                    self.slots,
                    &[i64t.const_int(u64::from(i), false)],
                    "slot",
                )
                .map_err(crate::llvm_err)
        }
    }
}

/// How values of one type kind are represented.
pub trait DataModel: Sync + Send {
    /// The LLVM type of a value in registers.
    fn value_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>>;
    /// The LLVM type of a value stored in memory (return slots, aggregates in memory).
    fn memory_type<'ctx>(&self, ctx: &'ctx Context, t: TypeId) -> R<BasicTypeEnum<'ctx>> {
        self.value_type(ctx, t)
    }
    /// Register form to memory form (before a store).
    fn store_memory<'ctx>(
        &self,
        _ctx: &'ctx Context,
        _b: &Builder<'ctx>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        Ok(v)
    }
    /// Memory form to register form (after a load).
    fn load_memory<'ctx>(
        &self,
        _ctx: &'ctx Context,
        _b: &Builder<'ctx>,
        _t: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        Ok(v)
    }
    /// Whether values carry no data at all.
    fn is_ghost(&self) -> bool {
        false
    }
    /// How the value crosses the CPython boundary.
    fn shape(&self, t: TypeId) -> R<Shape>;
    /// Write `v` into slots starting at `*idx`, advancing it.
    fn pack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        v: BasicValueEnum<'ctx>,
        idx: &mut u32,
    ) -> R<()>;
    /// Read a value from slots starting at `*idx`, advancing it.
    fn unpack<'ctx>(
        &self,
        c: &SlotCodec<'ctx, '_>,
        t: TypeId,
        idx: &mut u32,
    ) -> R<BasicValueEnum<'ctx>>;
}

/// The type lowering works with: literal ints and bools are ordinary values; a literal
/// string stays literal (its value is known at compile time, so it carries no data).
pub fn lowered(t: TypeId) -> TypeId {
    match t.get() {
        Type::StringLiteral(_) | Type::SliceLiteral(..) => t,
        _ => t.unliteral(),
    }
}

/// The model of a type.
pub fn model_of(t: TypeId) -> R<&'static dyn DataModel> {
    Ok(match t.get() {
        Type::Boolean | Type::BooleanLiteral(_) => &scalar::BoolModel,
        // datetime64 / timedelta64: an int64 count of their unit.
        Type::Integer { .. }
        | Type::IntegerLiteral(_)
        | Type::NPDatetime(_)
        | Type::NPTimedelta(_) => &scalar::IntModel,
        Type::Float { .. } => &scalar::FloatModel,
        Type::Complex { .. } => &complex::ComplexModel,
        Type::CPointer(_)
        | Type::VoidPtr
        | Type::ExternalFunctionPointer { .. }
        | Type::ArrayCTypes(_) => &pointer::PointerModel,
        Type::ArrayFlags(_) => &flags::FlagsModel,
        Type::UniTuple(..)
        | Type::Tuple(_)
        | Type::NamedTuple { .. }
        | Type::NamedUniTuple { .. }
        | Type::Pair(..)
        | Type::RangeState64
        | Type::Slice(_)
        | Type::LiteralStrKeyDict { .. } => &tuple::TupleModel,
        Type::Opaque { .. } if user::members(t).is_some() => &tuple::TupleModel,
        Type::Opaque { .. } => &opaque::OpaqueModel,
        Type::Optional(_) => &optional::OptionalModel,
        Type::BoundFunction { .. } => &bound::BoundModel,
        Type::EnumMember { .. } => &enums::EnumMemberModel,
        Type::Array { .. } | Type::NumpyFlat(_) | Type::NdEnumerate(_) | Type::NdIndex(_) => {
            &array::ArrayModel
        }
        Type::RangeIter64 | Type::Enumerate(_) | Type::Zip(_) | Type::ArrayIter(_) => {
            &iter::IterModel
        }
        Type::Generator { .. } => &generator::GeneratorModel,
        Type::Unicode | Type::Bytes => &unicode::UnicodeModel,
        Type::CharSeq(_) | Type::UnicodeCharSeq(_) => &charseq::CharSeqModel,
        Type::Record { .. } => &record::RecordModel,
        Type::NumPyRandomGenerator => &npgen::NpGeneratorModel,
        Type::List { .. }
        | Type::Set { .. }
        | Type::Dict { .. }
        | Type::DictView { .. }
        | Type::ClassInstance { .. } => &list::ListModel,
        Type::NoneType
        | Type::Ellipsis
        | Type::Module(_)
        | Type::Function(_)
        | Type::NumberClass(_)
        | Type::TypeRef(_)
        | Type::NamedTupleClass { .. }
        | Type::EnumClass { .. }
        | Type::Dispatcher { .. }
        | Type::UFunc { .. }
        | Type::ExceptionClass(_)
        | Type::ExceptionInstance(_)
        | Type::DType(_)
        | Type::Omitted(_)
        | Type::StringLiteral(_)
        | Type::SliceLiteral(..) => &ghost::GhostModel,
        _ => {
            return Err(LowerError::Unsupported {
                message: format!("values of type {t} cannot be lowered by numba-rs yet"),
                line: 0,
            })
        }
    })
}

/// Shorthand: the register type of `t`.
pub fn value_type(ctx: &Context, t: TypeId) -> R<BasicTypeEnum<'_>> {
    model_of(t)?.value_type(ctx, t)
}

/// Shorthand: the memory type of `t`.
pub fn memory_type(ctx: &Context, t: TypeId) -> R<BasicTypeEnum<'_>> {
    model_of(t)?.memory_type(ctx, t)
}

/// Whether `t` has no runtime data (its model is the ghost model).
pub fn is_ghost(t: TypeId) -> bool {
    model_of(t).is_ok_and(|m| m.is_ghost())
}

pub use complex::part_type as complex_part;
