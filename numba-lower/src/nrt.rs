//! Reference counting of NRT-managed values: the compiler emits naive `NRT_incref` /
//! `NRT_decref` calls (seed 004) — every variable holding an array (or a string) owns one reference,
//! taken when a value is copied or borrowed into it and dropped at its `del`; calls and
//! constructors return new references; a `return` hands its reference to the caller.
//! Arrays that come from Python arguments have no MemInfo (null), for which both calls
//! do nothing.

use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use crate::function::FnLower;
use crate::model::array::field;
use crate::model::{lowered, members};
use crate::{llvm_err, R};

/// Whether a value of `t` may hold an array borrowed from a Python argument (what
/// [`FnLower::own_ref`] gives a MemInfo of its own): an array, or a tuple holding one.
pub fn may_borrow_array(t: TypeId) -> bool {
    let t = lowered(t);
    t.is_array()
        || matches!(t.get(), Type::UniTuple(..) | Type::Tuple(_))
            && members(t).into_iter().any(may_borrow_array)
}

/// Whether values of `t` hold NRT references.
pub fn is_refcounted(t: TypeId) -> bool {
    match lowered(t).get() {
        Type::Array { .. } | Type::NumpyFlat(_) | Type::NdEnumerate(_) | Type::NdIndex(_) => true,
        // A string's (bytes') data, when the compiler allocated it.
        Type::Unicode | Type::Bytes => true,
        Type::List { .. }
        | Type::Set { .. }
        | Type::Dict { .. }
        | Type::DictView { .. }
        | Type::ClassInstance { .. } => true,
        // An iterator over an array keeps the array alive (its state holds a copy).
        Type::ArrayIter(a) => {
            a.is_array()
                || a.flat_array().is_some()
                || matches!(
                    a.get(),
                    Type::List { .. }
                        | Type::Set { .. }
                        | Type::Dict { .. }
                        | Type::DictView { .. }
                        | Type::Unicode
                        | Type::Bytes
                )
        }
        // An optional value holds its payload's references when it has one.
        Type::Optional(x) => is_refcounted(x),
        // A bound method is its receiver (`a.sum` holds `a`).
        Type::BoundFunction { this, .. } => is_refcounted(this),
        // A generator object counts its own references (`model::generator`).
        Type::Generator { .. } => true,
        // `enumerate`/`zip` hold references to the iterators they wrap.
        Type::Enumerate(inner) => is_refcounted(inner),
        Type::Zip(inners) => inners.into_iter().any(is_refcounted),
        Type::UniTuple(..)
        | Type::Tuple(_)
        | Type::NamedTuple { .. }
        | Type::NamedUniTuple { .. }
        | Type::Pair(..)
        | Type::LiteralStrKeyDict { .. }
        // A user's struct type (`model::user`) holds its members' references.
        | Type::Opaque { .. } => members(t).into_iter().any(is_refcounted),
        _ => false,
    }
}

impl<'ctx> FnLower<'ctx, '_> {
    fn nrt_call(&mut self, name: &str, t: TypeId, v: BasicValueEnum<'ctx>) -> R<()> {
        let t = lowered(t);
        match t.get() {
            // A struct with a MemInfo field: the array's, the string's.
            Type::Array { .. }
            | Type::NumpyFlat(_)
            | Type::NdEnumerate(_)
            | Type::NdIndex(_)
            | Type::Unicode
            | Type::Bytes
            | Type::List { .. }
            | Type::Set { .. }
            | Type::Dict { .. }
            | Type::DictView { .. }
            | Type::ClassInstance { .. } => {
                let index = match t.get() {
                    Type::Unicode | Type::Bytes => crate::model::unicode::field::MEMINFO,
                    Type::List { .. }
                    | Type::Set { .. }
                    | Type::Dict { .. }
                    | Type::DictView { .. }
                    | Type::ClassInstance { .. } => crate::model::list::field::MEMINFO,
                    _ => field::MEMINFO,
                };
                let mi = self
                    .b
                    .build_extract_value(v.into_struct_value(), index, "meminfo")
                    .map_err(llvm_err)?;
                let ptr = self.ctx.ptr_type(AddressSpace::default());
                let f = self.runtime_fn(name, self.ctx.void_type().fn_type(&[ptr.into()], false));
                self.b.build_call(f, &[mi.into()], "").map_err(llvm_err)?;
            }
            Type::BoundFunction { this, .. } => self.nrt_call(name, this, v)?,
            // The payload when present; a zero payload (null MemInfos: the calls do
            // nothing) when None, whose payload is undefined.
            Type::Optional(x) => {
                let sv = v.into_struct_value();
                let flag = self
                    .b
                    .build_extract_value(sv, 0, "present")
                    .map_err(llvm_err)?
                    .into_int_value();
                let payload = self
                    .b
                    .build_extract_value(sv, 1, "payload")
                    .map_err(llvm_err)?;
                let zero = crate::model::value_type(self.ctx, x)?.const_zero();
                let held = self
                    .b
                    .build_select(flag, payload, zero, "held")
                    .map_err(llvm_err)?;
                self.nrt_call(name, x, held)?;
            }
            Type::Generator { .. } => {
                let p = v.into_pointer_value();
                if name == "NRT_incref" {
                    crate::impls::generators::incref(self, t, p)?
                } else {
                    crate::impls::generators::decref(self, t, p)?
                }
            }
            // Iterators live behind a pointer, null in a zeroed slot (a variable
            // deleted on one path and again where paths meet, as after a `try`).
            Type::Enumerate(_) | Type::Zip(_) | Type::ArrayIter(_) => {
                let p = v.into_pointer_value();
                self.if_not_null(p, |lw| lw.iterator_refs(name, t, p))?;
            }
            _ if is_refcounted(t) => {
                let sv = v.into_struct_value();
                for (i, m) in members(t).into_iter().enumerate() {
                    if is_refcounted(m) {
                        let x = self
                            .b
                            .build_extract_value(sv, i as u32, "")
                            .map_err(llvm_err)?;
                        self.nrt_call(name, m, x)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `nrt_call` over what an iterator at `p` (not null) holds: the iterators an
    /// `enumerate`/`zip` wraps, the container an array iterator walks.
    fn iterator_refs(
        &mut self,
        name: &str,
        t: TypeId,
        p: inkwell::values::PointerValue<'ctx>,
    ) -> R<()> {
        match t.get() {
            Type::Enumerate(_) | Type::Zip(_) => {
                let st = crate::model::iterator_storage(self.ctx, t)?;
                let inners = match t.get() {
                    Type::Enumerate(inner) => vec![(1, inner)],
                    Type::Zip(inners) => inners
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| (i as u32, x))
                        .collect(),
                    _ => vec![],
                };
                for (i, it) in inners {
                    if is_refcounted(it) {
                        let field = self.b.build_struct_gep(st, p, i, "").map_err(llvm_err)?;
                        let x = self
                            .b
                            .build_load(crate::model::value_type(self.ctx, it)?, field, "")
                            .map_err(llvm_err)?;
                        self.nrt_call(name, it, x)?;
                    }
                }
            }
            Type::ArrayIter(arr) => {
                let st = crate::model::iterator_storage(self.ctx, t)?;
                let field = self.b.build_struct_gep(st, p, 1, "").map_err(llvm_err)?;
                let a = self
                    .b
                    .build_load(crate::model::value_type(self.ctx, arr)?, field, "")
                    .map_err(llvm_err)?;
                self.nrt_call(name, arr, a)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Run `body` when `p` is not null (zeroed slots hold no generator or iterator).
    pub(crate) fn if_not_null(
        &mut self,
        p: inkwell::values::PointerValue<'ctx>,
        body: impl FnOnce(&mut Self) -> R<()>,
    ) -> R<()> {
        let some = self.b.build_is_not_null(p, "").map_err(llvm_err)?;
        let then = self.new_block("ref.some");
        let done = self.new_block("ref.done");
        self.b
            .build_conditional_branch(some, then, done)
            .map_err(llvm_err)?;
        self.b.position_at_end(then);
        body(self)?;
        self.b.build_unconditional_branch(done).map_err(llvm_err)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// `v` (of type `t`) with a new reference of its own, for a container that outlives
    /// the call: as [`Self::incref`], except that an array borrowed from a Python
    /// argument (null MemInfo, a parent) gets a MemInfo owning a reference to its NumPy
    /// array (`runtime::numba_rs_array_adopt`), at any depth of a tuple.
    pub fn own_ref(&mut self, t: TypeId, v: BasicValueEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let t = lowered(t);
        match t.get() {
            Type::Array { .. } => {
                let sv = v.into_struct_value();
                let mi = self
                    .b
                    .build_extract_value(sv, field::MEMINFO, "mi")
                    .map_err(llvm_err)?
                    .into_pointer_value();
                let parent = self
                    .b
                    .build_extract_value(sv, field::PARENT, "parent")
                    .map_err(llvm_err)?
                    .into_pointer_value();
                let data = self
                    .b
                    .build_extract_value(sv, field::DATA, "data")
                    .map_err(llvm_err)?;
                let no_mi = self.b.build_is_null(mi, "").map_err(llvm_err)?;
                let has_parent = self.b.build_is_not_null(parent, "").map_err(llvm_err)?;
                let borrowed = self
                    .b
                    .build_and(no_mi, has_parent, "borrowed")
                    .map_err(llvm_err)?;
                let adopt = self.new_block("array.adopt");
                let keep = self.new_block("array.keep");
                let done = self.new_block("array.owned");
                self.b
                    .build_conditional_branch(borrowed, adopt, keep)
                    .map_err(llvm_err)?;
                let ptr = self.ctx.ptr_type(AddressSpace::default());
                self.b.position_at_end(adopt);
                let f = self.runtime_fn(
                    "numba_rs_array_adopt",
                    ptr.fn_type(&[ptr.into(), ptr.into()], false),
                );
                let new_mi = self.call_value(f, &[parent.into(), data.into()])?;
                let adopt_end = self.b.get_insert_block().unwrap_or(adopt);
                self.b.build_unconditional_branch(done).map_err(llvm_err)?;
                self.b.position_at_end(keep);
                self.incref(t, v)?;
                let keep_end = self.b.get_insert_block().unwrap_or(keep);
                self.b.build_unconditional_branch(done).map_err(llvm_err)?;
                self.b.position_at_end(done);
                let phi = self.b.build_phi(ptr, "owned.mi").map_err(llvm_err)?;
                phi.add_incoming(&[(&new_mi, adopt_end), (&mi, keep_end)]);
                Ok(self
                    .b
                    .build_insert_value(sv, phi.as_basic_value(), field::MEMINFO, "")
                    .map_err(llvm_err)?
                    .into_struct_value()
                    .into())
            }
            Type::UniTuple(..) | Type::Tuple(_) if may_borrow_array(t) => {
                let mut sv = v.into_struct_value();
                for (i, m) in members(t).into_iter().enumerate() {
                    let x = self
                        .b
                        .build_extract_value(sv, i as u32, "")
                        .map_err(llvm_err)?;
                    let x = self.own_ref(m, x)?;
                    sv = self
                        .b
                        .build_insert_value(sv, x, i as u32, "")
                        .map_err(llvm_err)?
                        .into_struct_value();
                }
                Ok(sv.into())
            }
            _ => {
                self.incref(t, v)?;
                Ok(v)
            }
        }
    }

    /// Take a reference to `v` (of type `t`), if it holds any.
    pub fn incref(&mut self, t: TypeId, v: BasicValueEnum<'ctx>) -> R<()> {
        self.nrt_call("NRT_incref", t, v)
    }

    /// Drop a reference to `v` (of type `t`), if it holds any.
    pub fn decref(&mut self, t: TypeId, v: BasicValueEnum<'ctx>) -> R<()> {
        self.nrt_call("NRT_decref", t, v)
    }
}
