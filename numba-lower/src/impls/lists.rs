//! Lists (`model::list`, payload and byte-level helpers in `crate::lists`): building,
//! `len`, indexing, slicing, iteration, the methods, the operators and the builtins that
//! make lists. Items are read and written with their data model's slot codec; what
//! needs the item type (equality, order, casts, reference counts of a new item) is done
//! here, what only moves items (gaps, copies, slices, repetition) in `crate::lists`.

use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::binop_of;
use crate::callconv::boundary_shape;
use crate::function::FnLower;
use crate::lists::offset;
use crate::model::{list, lowered, model_of, SlotCodec};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn is_list(t: TypeId) -> bool {
    matches!(t.get(), Type::List { .. })
}

fn dtype_of(t: TypeId) -> TypeId {
    numba_typeinfer::lists::list_dtype(lowered(t)).unwrap_or(NONE)
}

fn lists_type(dtype: TypeId) -> TypeId {
    numba_typeinfer::lists::list_of(dtype)
}

fn key(k: &str) -> ImplKey {
    ImplKey::Function(k.into())
}

pub(crate) fn register(r: &mut Registry) {
    let l = TypePat::Pred(is_list);
    let slice = TypePat::Pred(|t| matches!(t.get(), Type::Slice(_)));
    r.register(key("len"), Args::Exact(vec![l]), |lw, _, a| {
        Ok(lw.list_len(a[0])?.into())
    });
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![l, TypePat::Int]),
        getitem,
    );
    r.register(ImplKey::GetItem, Args::Exact(vec![l, slice]), getslice);
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![l, TypePat::IntOrBool, TypePat::Any]),
        setitem,
    );
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![l, slice, TypePat::Any]),
        setslice,
    );
    r.register(ImplKey::GetIter, Args::Exact(vec![l]), container_iter);
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(
            |t| matches!(t.get(), Type::ArrayIter(s) if is_list(s)),
        )]),
        list_next,
    );
    r.register(
        key("list.append"),
        Args::Exact(vec![l, TypePat::Any]),
        append,
    );
    r.register(
        key("list.extend"),
        Args::Exact(vec![l, TypePat::Any]),
        extend,
    );
    r.register(
        key("list.iadd"),
        Args::Exact(vec![l, TypePat::Any]),
        |lw, s, a| {
            extend(lw, s, a)?;
            lw.incref(s.args[0], a[0])?;
            Ok(a[0])
        },
    );
    r.register(
        key("list.imul"),
        Args::Exact(vec![l, TypePat::Int]),
        |lw, s, a| {
            lw.check_mutable(s.args[0], a[0])?;
            let p = lw.list_payload(a[0])?;
            lw.list_status_call("numba_rs_list_imul", &[p.into(), a[1]])?;
            lw.incref(s.args[0], a[0])?;
            Ok(a[0])
        },
    );
    r.register(
        key("list.insert"),
        Args::Exact(vec![l, TypePat::Int, TypePat::Any]),
        insert,
    );
    r.register(key("list.pop"), Args::Variadic(TypePat::Any), pop);
    r.register(
        key("list.remove"),
        Args::Exact(vec![l, TypePat::Any]),
        remove,
    );
    r.register(key("list.index"), Args::Variadic(TypePat::Any), index);
    r.register(key("list.count"), Args::Exact(vec![l, TypePat::Any]), count);
    r.register(key("list.clear"), Args::Exact(vec![l]), |lw, s, a| {
        lw.check_mutable(s.args[0], a[0])?;
        let p = lw.list_payload(a[0])?;
        lw.list_void_call("numba_rs_list_clear", &[p.into()])?;
        Ok(lw.ghost())
    });
    r.register(key("list.reverse"), Args::Exact(vec![l]), |lw, s, a| {
        lw.check_mutable(s.args[0], a[0])?;
        let p = lw.list_payload(a[0])?;
        lw.list_void_call("numba_rs_list_reverse", &[p.into()])?;
        Ok(lw.ghost())
    });
    r.register(key("list.copy"), Args::Exact(vec![l]), |lw, _, a| {
        let n = lw.list_len(a[0])?;
        let i64t = lw.ctx.i64_type();
        lw.list_copy_range(a[0], i64t.const_zero(), n, i64t.const_int(1, false))
    });
    r.register(key("list.sort"), Args::Variadic(TypePat::Any), sort);
    r.register(key("list.reversed"), Args::Exact(vec![l]), |lw, _, a| {
        let n = lw.list_len(a[0])?;
        let i64t = lw.ctx.i64_type();
        let out = lw.list_copy_range(a[0], i64t.const_zero(), n, i64t.const_int(1, false))?;
        let p = lw.list_payload(out)?;
        lw.list_void_call("numba_rs_list_reverse", &[p.into()])?;
        Ok(out)
    });
    r.register(key("list._is_mutable"), Args::Exact(vec![l]), |lw, _, a| {
        let p = lw.list_payload(a[0])?;
        let flag = lw.payload_i64(p, offset::IMMUTABLE)?;
        Ok(lw
            .b
            .build_int_compare(IntPredicate::EQ, flag, lw.ctx.i64_type().const_zero(), "")
            .map_err(llvm_err)?
            .into())
    });
    r.register(
        key("list._make_immutable"),
        Args::Exact(vec![l]),
        |lw, _, a| {
            let p = lw.list_payload(a[0])?;
            lw.set_payload_i64(p, offset::IMMUTABLE, lw.ctx.i64_type().const_int(1, false))?;
            Ok(lw.ghost())
        },
    );
    r.register(key("list._allocated"), Args::Exact(vec![l]), |lw, _, a| {
        let p = lw.list_payload(a[0])?;
        Ok(lw.payload_i64(p, offset::ALLOCATED)?.into())
    });
    // `List.empty_list(item_type, allocated=0)` and Numba's `listobject.new_list`.
    for k in [
        "numba_rs.typed.List.empty_list",
        "numba.typed.listobject.new_list",
    ] {
        r.register(key(k), Args::Variadic(TypePat::Any), |lw, s, a| {
            let n = match (a.get(1), s.args.get(1)) {
                (Some(&n), Some(&t)) => lw.cast(n, t, INT64)?.into_int_value(),
                _ => lw.ctx.i64_type().const_zero(),
            };
            let negative =
                lw.b.build_int_compare(IntPredicate::SLT, n, lw.ctx.i64_type().const_zero(), "")
                    .map_err(llvm_err)?;
            lw.raise_const_if(
                negative,
                "ValueError",
                &["expecting *allocated* to be >= 0"],
            )?;
            lw.new_list(dtype_of(s.ret), n)
        });
    }
    r.register(key("list"), Args::Exact(vec![]), |lw, s, _| {
        let zero = lw.ctx.i64_type().const_zero();
        lw.new_list(dtype_of(s.ret), zero)
    });
    r.register(
        key("list"),
        Args::Exact(vec![TypePat::Any]),
        list_of_iterable,
    );
    r.register(key("sorted"), Args::Variadic(TypePat::Any), sorted);
    r.register(ImplKey::BinOp(BinOp::Add), Args::Exact(vec![l, l]), concat);
    r.register(
        ImplKey::BinOp(BinOp::Mul),
        Args::Exact(vec![l, TypePat::Int]),
        |lw, _, a| repeat(lw, a[0], a[1]),
    );
    r.register(
        ImplKey::BinOp(BinOp::Mul),
        Args::Exact(vec![TypePat::Int, l]),
        |lw, _, a| repeat(lw, a[1], a[0]),
    );
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![l, TypePat::Any]),
        contains,
    );
    for op in [
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ] {
        r.register(ImplKey::BinOp(op), Args::Exact(vec![l, l]), compare);
    }
}

impl<'ctx> FnLower<'ctx, '_> {
    /// A typed list made immutable (`_make_immutable()`) raises Numba's `ValueError` on
    /// any change; other lists cannot be made immutable (no check).
    pub(crate) fn check_mutable(&mut self, list_t: TypeId, lv: BasicValueEnum<'ctx>) -> R<()> {
        if !matches!(lowered(list_t).get(), Type::List { typed: true, .. }) {
            return Ok(());
        }
        let p = self.list_payload(lv)?;
        let flag = self.payload_i64(p, offset::IMMUTABLE)?;
        let set = self
            .b
            .build_int_compare(IntPredicate::NE, flag, self.ctx.i64_type().const_zero(), "")
            .map_err(llvm_err)?;
        self.raise_const_if(set, "ValueError", &["list is immutable"])
    }

    /// The payload of a list value (its MemInfo's data).
    pub(crate) fn list_payload(&self, lv: BasicValueEnum<'ctx>) -> R<PointerValue<'ctx>> {
        let mi = self
            .b
            .build_extract_value(lv.into_struct_value(), list::field::MEMINFO, "list.mi")
            .map_err(llvm_err)?
            .into_pointer_value();
        // The MemInfo's `data` is its fourth word.
        let at = self.byte_gep(mi, 24)?;
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        Ok(self
            .b
            .build_load(ptr, at, "list.payload")
            .map_err(llvm_err)?
            .into_pointer_value())
    }

    pub(crate) fn byte_gep(&self, p: PointerValue<'ctx>, off: u64) -> R<PointerValue<'ctx>> {
        let i8t = self.ctx.i8_type();
        // SAFETY (of the generated code): offsets inside the MemInfo / payload structs.
        unsafe {
            self.b
                .build_in_bounds_gep(i8t, p, &[self.ctx.i64_type().const_int(off, false)], "")
                .map_err(llvm_err)
        }
    }

    pub(crate) fn payload_i64(&self, p: PointerValue<'ctx>, off: u64) -> R<IntValue<'ctx>> {
        let at = self.byte_gep(p, off)?;
        Ok(self
            .b
            .build_load(self.ctx.i64_type(), at, "")
            .map_err(llvm_err)?
            .into_int_value())
    }

    pub(crate) fn set_payload_i64(
        &self,
        p: PointerValue<'ctx>,
        off: u64,
        v: IntValue<'ctx>,
    ) -> R<()> {
        let at = self.byte_gep(p, off)?;
        self.b.build_store(at, v).map_err(llvm_err)?;
        Ok(())
    }

    /// `len(l)`.
    pub(crate) fn list_len(&self, lv: BasicValueEnum<'ctx>) -> R<IntValue<'ctx>> {
        let p = self.list_payload(lv)?;
        self.payload_i64(p, offset::SIZE)
    }

    pub(crate) fn item_bytes(&self, dtype: TypeId) -> R<u64> {
        Ok(boundary_shape(dtype)?.slots() as u64 * 8)
    }

    /// The address of item `i` of a payload of `dtype` items.
    fn list_item_ptr(
        &self,
        p: PointerValue<'ctx>,
        dtype: TypeId,
        i: IntValue<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        let at = self.byte_gep(p, offset::DATA)?;
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let data = self
            .b
            .build_load(ptr, at, "list.data")
            .map_err(llvm_err)?
            .into_pointer_value();
        let i64t = self.ctx.i64_type();
        let stride = i64t.const_int(self.item_bytes(dtype)?, false);
        let off = self.b.build_int_mul(i, stride, "").map_err(llvm_err)?;
        // SAFETY (of the generated code): callers check `i` against the size.
        unsafe {
            self.b
                .build_in_bounds_gep(self.ctx.i8_type(), data, &[off], "item")
                .map_err(llvm_err)
        }
    }

    /// The item stored at `at` (borrowed).
    pub(crate) fn list_read(
        &self,
        dtype: TypeId,
        at: PointerValue<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let c = SlotCodec {
            ctx: self.ctx,
            b: &self.b,
            slots: at,
        };
        model_of(dtype)?.unpack(&c, dtype, &mut 0)
    }

    /// Store `v` (of `dtype`, its reference already the list's) at `at`.
    pub(crate) fn list_write(
        &self,
        dtype: TypeId,
        at: PointerValue<'ctx>,
        v: BasicValueEnum<'ctx>,
    ) -> R<()> {
        let c = SlotCodec {
            ctx: self.ctx,
            b: &self.b,
            slots: at,
        };
        model_of(dtype)?.pack(&c, dtype, v, &mut 0)
    }

    /// The module constant saying where `dtype` items hold references (null: nowhere).
    pub(crate) fn ref_map_ptr(&self, dtype: TypeId) -> R<PointerValue<'ctx>> {
        let map = crate::lists::ref_map(&boundary_shape(dtype)?);
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        if map[0] == 0 {
            return Ok(ptr.const_null());
        }
        let name = format!(
            "numba_rs.list.refs.{}",
            map.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("_")
        );
        let g = match self.module.get_global(&name) {
            Some(g) => g,
            None => {
                let i32t = self.ctx.i32_type();
                let vals: Vec<_> = map
                    .iter()
                    .map(|&x| i32t.const_int(x as u64, true))
                    .collect();
                let init = i32t.const_array(&vals);
                let g = self.module.add_global(init.get_type(), None, &name);
                g.set_initializer(&init);
                g.set_constant(true);
                g.set_linkage(inkwell::module::Linkage::Private);
                g
            }
        };
        Ok(g.as_pointer_value())
    }

    /// A new empty list of `dtype` items with room for `capacity` (a new reference);
    /// MemoryError when it cannot be allocated.
    pub(crate) fn new_list(
        &mut self,
        dtype: TypeId,
        capacity: IntValue<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let i64t = self.ctx.i64_type();
        let f = self.runtime_fn(
            "numba_rs_list_new",
            ptr.fn_type(&[i64t.into(), i64t.into(), ptr.into()], false),
        );
        let bytes = i64t.const_int(self.item_bytes(dtype)?, false);
        let refs = self.ref_map_ptr(dtype)?;
        let mi = self
            .call_value(f, &[bytes.into(), capacity.into(), refs.into()])?
            .into_pointer_value();
        self.list_value(mi)
    }

    /// A list value owning the MemInfo `mi` (MemoryError when null).
    pub(crate) fn list_value(&mut self, mi: PointerValue<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let failed = self.b.build_is_null(mi, "").map_err(llvm_err)?;
        self.raise_const_if(failed, "MemoryError", &["Allocation failed"])?;
        let st = list::struct_type(self.ctx);
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let v = self
            .b
            .build_insert_value(st.get_undef(), mi, 0, "")
            .map_err(llvm_err)?;
        let v = self
            .b
            .build_insert_value(v, ptr.const_null(), 1, "")
            .map_err(llvm_err)?;
        Ok(v.into_struct_value().into())
    }

    /// Call a helper returning a status: 0, -1 (MemoryError) or 1 (`on_one`'s error).
    pub(crate) fn list_status_call_with(
        &mut self,
        name: &str,
        args: &[BasicValueEnum<'ctx>],
        on_one: Option<(&str, &str)>,
    ) -> R<()> {
        let i32t = self.ctx.i32_type();
        let params: Vec<_> = args.iter().map(|a| a.get_type().into()).collect();
        let f = self.runtime_fn(name, i32t.fn_type(&params, false));
        let vals: Vec<_> = args.iter().map(|&a| a.into()).collect();
        let status = self.call_value(f, &vals)?.into_int_value();
        if let Some((class, msg)) = on_one {
            let one = self
                .b
                .build_int_compare(IntPredicate::EQ, status, i32t.const_int(1, false), "")
                .map_err(llvm_err)?;
            self.raise_const_if(one, class, &[msg])?;
        }
        let failed = self
            .b
            .build_int_compare(IntPredicate::SLT, status, i32t.const_zero(), "")
            .map_err(llvm_err)?;
        self.raise_const_if(failed, "MemoryError", &["Allocation failed"])
    }

    pub(crate) fn list_status_call(&mut self, name: &str, args: &[BasicValueEnum<'ctx>]) -> R<()> {
        self.list_status_call_with(name, args, None)
    }

    pub(crate) fn list_void_call(&mut self, name: &str, args: &[BasicValueEnum<'ctx>]) -> R<()> {
        let params: Vec<_> = args.iter().map(|a| a.get_type().into()).collect();
        let f = self.runtime_fn(name, self.ctx.void_type().fn_type(&params, false));
        let vals: Vec<_> = args.iter().map(|&a| a.into()).collect();
        self.b.build_call(f, &vals, "").map_err(llvm_err)?;
        Ok(())
    }

    /// A new list of all of `lv`'s items (no Python list behind it).
    pub(crate) fn list_copy(&mut self, lv: BasicValueEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let i64t = self.ctx.i64_type();
        let len = self.list_len(lv)?;
        self.list_copy_range(lv, i64t.const_zero(), len, i64t.const_int(1, false))
    }

    /// A new list of the `len` items from `start` by `step`.
    fn list_copy_range(
        &mut self,
        lv: BasicValueEnum<'ctx>,
        start: IntValue<'ctx>,
        len: IntValue<'ctx>,
        step: IntValue<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let p = self.list_payload(lv)?;
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let i64t = self.ctx.i64_type();
        let f = self.runtime_fn(
            "numba_rs_list_copy_range",
            ptr.fn_type(&[ptr.into(), i64t.into(), i64t.into(), i64t.into()], false),
        );
        let mi = self
            .call_value(f, &[p.into(), start.into(), len.into(), step.into()])?
            .into_pointer_value();
        self.list_value(mi)
    }

    /// Append `v` (already of `dtype`; its reference becomes the list's).
    fn list_push(
        &mut self,
        lv: BasicValueEnum<'ctx>,
        dtype: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<()> {
        let p = self.list_payload(lv)?;
        let n = self.payload_i64(p, offset::SIZE)?;
        let cap = self.payload_i64(p, offset::ALLOCATED)?;
        let full = self
            .b
            .build_int_compare(IntPredicate::SGE, n, cap, "full")
            .map_err(llvm_err)?;
        let grow = self.new_block("list.grow");
        let store = self.new_block("list.store");
        self.b
            .build_conditional_branch(full, grow, store)
            .map_err(llvm_err)?;
        self.b.position_at_end(grow);
        let one = self.ctx.i64_type().const_int(1, false);
        let n1 = self.b.build_int_add(n, one, "").map_err(llvm_err)?;
        self.list_status_call("numba_rs_list_reserve", &[p.into(), n1.into()])?;
        self.b.build_unconditional_branch(store).map_err(llvm_err)?;
        self.b.position_at_end(store);
        let at = self.list_item_ptr(p, dtype, n)?;
        self.list_write(dtype, at, v)?;
        let n1 = self.b.build_int_add(n, one, "").map_err(llvm_err)?;
        self.set_payload_i64(p, offset::SIZE, n1)?;
        self.set_payload_i64(p, offset::DIRTY, one)
    }

    /// `i` made non-negative (Python's wrap-around) and checked against the size:
    /// `class`'s error with `msg` when outside.
    fn list_index(
        &mut self,
        lv: BasicValueEnum<'ctx>,
        i: IntValue<'ctx>,
        msg: &str,
    ) -> R<IntValue<'ctx>> {
        let n = self.list_len(lv)?;
        let i64t = self.ctx.i64_type();
        let neg = self
            .b
            .build_int_compare(IntPredicate::SLT, i, i64t.const_zero(), "")
            .map_err(llvm_err)?;
        let wrapped = self.b.build_int_add(i, n, "").map_err(llvm_err)?;
        let i = self
            .b
            .build_select(neg, wrapped, i, "")
            .map_err(llvm_err)?
            .into_int_value();
        // One unsigned comparison catches both ends.
        let outside = self
            .b
            .build_int_compare(IntPredicate::UGE, i, n, "")
            .map_err(llvm_err)?;
        self.raise_const_if(outside, "IndexError", &[msg])?;
        Ok(i)
    }

    /// Run `body(i)` for `i` in `0..n`; `body` returns whether to stop early. Returns the
    /// index it stopped at (`n` when it ran to the end).
    pub(crate) fn list_loop(
        &mut self,
        start: IntValue<'ctx>,
        n: IntValue<'ctx>,
        mut body: impl FnMut(&mut Self, IntValue<'ctx>) -> R<IntValue<'ctx>>,
    ) -> R<IntValue<'ctx>> {
        let i64t = self.ctx.i64_type();
        let counter = self.alloca_in_entry(i64t.into(), "list.i")?;
        self.b.build_store(counter, start).map_err(llvm_err)?;
        let head = self.new_block("list.head");
        let step = self.new_block("list.body");
        let next = self.new_block("list.next");
        let done = self.new_block("list.done");
        self.b.build_unconditional_branch(head).map_err(llvm_err)?;
        self.b.position_at_end(head);
        let i = self
            .b
            .build_load(i64t, counter, "i")
            .map_err(llvm_err)?
            .into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::SLT, i, n, "")
            .map_err(llvm_err)?;
        self.b
            .build_conditional_branch(more, step, done)
            .map_err(llvm_err)?;
        self.b.position_at_end(step);
        let stop = body(self, i)?;
        self.b
            .build_conditional_branch(stop, done, next)
            .map_err(llvm_err)?;
        self.b.position_at_end(next);
        let i1 = self
            .b
            .build_int_add(i, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
        self.b.build_store(counter, i1).map_err(llvm_err)?;
        self.b.build_unconditional_branch(head).map_err(llvm_err)?;
        self.b.position_at_end(done);
        Ok(self
            .b
            .build_load(i64t, counter, "")
            .map_err(llvm_err)?
            .into_int_value())
    }

    /// `a == b` for two values of types `at`, `bt` as an `i1` (compared in their common
    /// type).
    fn items_equal(
        &mut self,
        a: BasicValueEnum<'ctx>,
        at: TypeId,
        b: BasicValueEnum<'ctx>,
        bt: TypeId,
    ) -> R<IntValue<'ctx>> {
        self.items_op(BinOp::Eq, a, at, b, bt)
    }

    fn items_op(
        &mut self,
        op: BinOp,
        a: BasicValueEnum<'ctx>,
        at: TypeId,
        b: BasicValueEnum<'ctx>,
        bt: TypeId,
    ) -> R<IntValue<'ctx>> {
        let common = numba_typeinfer::conv::unify(at, bt).unwrap_or(at);
        let (a, b) = (self.cast(a, at, common)?, self.cast(b, bt, common)?);
        let sig = self
            .registry_sig(op, common, common)
            .ok_or_else(|| self.unsupported(format!("no {} on {common}", op.operator_name())))?;
        let args: Vec<BasicValueEnum> = vec![
            self.cast(a, common, lowered(sig.args[0]))?,
            self.cast(b, common, lowered(sig.args[1]))?,
        ];
        let r = self.call_impl(&sig, &args)?;
        self.truth(r, lowered(sig.ret))
    }

    /// The index of the first item from `start` to `stop` equal to `x`, or `stop`.
    fn list_find(
        &mut self,
        lv: BasicValueEnum<'ctx>,
        dtype: TypeId,
        x: BasicValueEnum<'ctx>,
        xt: TypeId,
        start: IntValue<'ctx>,
        stop: IntValue<'ctx>,
    ) -> R<IntValue<'ctx>> {
        self.list_loop(start, stop, |lw, i| {
            let p = lw.list_payload(lv)?;
            let at = lw.list_item_ptr(p, dtype, i)?;
            let item = lw.list_read(dtype, at)?;
            lw.items_equal(item, dtype, x, xt)
        })
    }
}

/// The IndexError message for index `i` outside list `t`: Numba's reflected-list words
/// (`getitem out of range`), or for a typed list CPython's (`list index out of range`),
/// as Numba's typed list says.
fn index_message(t: TypeId, op: &str) -> &'static str {
    let typed = matches!(lowered(t).get(), Type::List { typed: true, .. });
    match (typed, op) {
        (true, _) => "list index out of range",
        (false, "getitem") => "getitem out of range",
        (false, "setitem") => "setitem out of range",
        _ => "pop index out of range",
    }
}

/// `l[i]`: the item (borrowed); IndexError outside.
fn getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(sig.args[0]);
    let i = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
    let i = lw.list_index(a[0], i, index_message(sig.args[0], "getitem"))?;
    let p = lw.list_payload(a[0])?;
    let at = lw.list_item_ptr(p, dtype, i)?;
    lw.list_read(dtype, at)
}

/// `l[a:b:c]`: a new list.
fn getslice<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let n = lw.list_len(a[0])?;
    let (start, len, step) = super::slices::slice_bounds(lw, a[1].into_struct_value(), n)?;
    lw.list_copy_range(a[0], start, len, step)
}

/// `l[i] = v`.
fn setitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let dtype = dtype_of(sig.args[0]);
    let i = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
    let i = lw.list_index(a[0], i, index_message(sig.args[0], "setitem"))?;
    let v = lw.cast(a[2], lowered(sig.args[2]), dtype)?;
    let v = lw.own_ref(dtype, v)?;
    let p = lw.list_payload(a[0])?;
    let at = lw.list_item_ptr(p, dtype, i)?;
    if crate::nrt::is_refcounted(dtype) {
        let old = lw.list_read(dtype, at)?;
        lw.decref(dtype, old)?;
    }
    lw.list_write(dtype, at, v)?;
    let one = lw.ctx.i64_type().const_int(1, false);
    lw.set_payload_i64(p, offset::DIRTY, one)?;
    Ok(lw.ghost())
}

/// `l[a:b:c] = other`.
fn setslice<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let dtype = dtype_of(sig.args[0]);
    let src_t = lowered(sig.args[2]);
    // Another iterable (or a list of another item type) is made a list first.
    let (src, temp) = if is_list(src_t) && dtype_of(src_t) == dtype {
        (a[2], false)
    } else {
        let zero = lw.ctx.i64_type().const_zero();
        let t = lw.new_list(dtype, zero)?;
        push_all(lw, t, dtype, src_t, a[2])?;
        (t, true)
    };
    let n = lw.list_len(a[0])?;
    let (start, len, step) = super::slices::slice_bounds(lw, a[1].into_struct_value(), n)?;
    let (dst, sp) = (lw.list_payload(a[0])?, lw.list_payload(src)?);
    lw.list_status_call_with(
        "numba_rs_list_assign_slice",
        &[dst.into(), start.into(), len.into(), step.into(), sp.into()],
        Some((
            "ValueError",
            "cannot resize extended list slice with step != 1",
        )),
    )?;
    if temp {
        lw.decref(lists_type(dtype), src)?;
    }
    Ok(lw.ghost())
}

/// `del l[i]` / `del l[a:b:c]`.
pub(crate) fn delitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    list_t: TypeId,
    index_t: TypeId,
    lv: BasicValueEnum<'ctx>,
    index: BasicValueEnum<'ctx>,
) -> R<()> {
    lw.check_mutable(list_t, lv)?;
    let i64t = lw.ctx.i64_type();
    let (start, len, step) = if matches!(index_t.get(), Type::Slice(_)) {
        let n = lw.list_len(lv)?;
        super::slices::slice_bounds(lw, index.into_struct_value(), n)?
    } else {
        let _ = list_t;
        let i = lw.cast(index, index_t, INT64)?.into_int_value();
        let i = lw.list_index(lv, i, "list assignment index out of range")?;
        (i, i64t.const_int(1, false), i64t.const_int(1, false))
    };
    let p = lw.list_payload(lv)?;
    lw.list_void_call(
        "numba_rs_list_del_slice",
        &[p.into(), start.into(), len.into(), step.into()],
    )
}

/// `iter(l)` / `iter(s)`: the position (0) and the container, in the frame.
pub(crate) fn container_iter<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = crate::model::iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "container_iter")?;
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, lw.ctx.i64_type().const_zero())
        .map_err(llvm_err)?;
    let pl =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pl, a[0]).map_err(llvm_err)?;
    if st.count_fields() == 3 {
        // A typed list: its size now, checked at each step.
        let n = lw.list_len(a[0])?;
        let pn =
            lw.b.build_struct_gep(st, storage, 2, "")
                .map_err(llvm_err)?;
        lw.b.build_store(pn, n).map_err(llvm_err)?;
    }
    Ok(storage.into())
}

/// The next item (borrowed), checked against the list's size at each step (a list may
/// change while it is iterated, as in Python; a typed list raises Numba's RuntimeError
/// when its size changed).
fn list_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::ArrayIter(list_t) = t.get() else {
        return Err(lw.unsupported("expected a list iterator"));
    };
    let dtype = dtype_of(list_t);
    let st = crate::model::iterator_storage(lw.ctx, t)?;
    let storage = a[0].into_pointer_value();
    let i64t = lw.ctx.i64_type();
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    let pl =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    let lv =
        lw.b.build_load(list::struct_type(lw.ctx), pl, "")
            .map_err(llvm_err)?;
    let idx =
        lw.b.build_load(i64t, pi, "")
            .map_err(llvm_err)?
            .into_int_value();
    let n = lw.list_len(lv)?;
    if st.count_fields() == 3 {
        let pn =
            lw.b.build_struct_gep(st, storage, 2, "")
                .map_err(llvm_err)?;
        let then =
            lw.b.build_load(i64t, pn, "")
                .map_err(llvm_err)?
                .into_int_value();
        let changed =
            lw.b.build_int_compare(IntPredicate::NE, n, then, "")
                .map_err(llvm_err)?;
        lw.raise_const_if(
            changed,
            "RuntimeError",
            &["list was mutated during iteration"],
        )?;
    }
    let valid =
        lw.b.build_int_compare(IntPredicate::SLT, idx, n, "")
            .map_err(llvm_err)?;
    let item_t = crate::model::value_type(lw.ctx, dtype)?;
    let out = lw.alloca_in_entry(item_t, "list.next")?;
    lw.b.build_store(out, item_t.const_zero())
        .map_err(llvm_err)?;
    let read = lw.new_block("list.read");
    let cont = lw.new_block("list.cont");
    lw.b.build_conditional_branch(valid, read, cont)
        .map_err(llvm_err)?;
    lw.b.position_at_end(read);
    let p = lw.list_payload(lv)?;
    let at = lw.list_item_ptr(p, dtype, idx)?;
    let v = lw.list_read(dtype, at)?;
    lw.b.build_store(out, v).map_err(llvm_err)?;
    let next =
        lw.b.build_int_add(idx, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, next).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(cont).map_err(llvm_err)?;
    lw.b.position_at_end(cont);
    let v = lw.b.build_load(item_t, out, "").map_err(llvm_err)?;
    lw.make_struct(sig.ret, &[v, valid.into()])
}

fn append<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let dtype = dtype_of(sig.args[0]);
    let v = lw.cast(a[1], lowered(sig.args[1]), dtype)?;
    let v = lw.own_ref(dtype, v)?;
    lw.list_push(a[0], dtype, v)?;
    Ok(lw.ghost())
}

/// `l.extend(iterable)` (and `l += iterable`): a list of the same item type by copying,
/// anything else item by item.
fn extend<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let dtype = dtype_of(sig.args[0]);
    let src_t = lowered(sig.args[1]);
    if is_list(src_t) && dtype_of(src_t) == dtype {
        let (dst, src) = (lw.list_payload(a[0])?, lw.list_payload(a[1])?);
        lw.list_status_call("numba_rs_list_extend_list", &[dst.into(), src.into()])?;
        return Ok(lw.ghost());
    }
    push_all(lw, a[0], dtype, src_t, a[1])?;
    Ok(lw.ghost())
}

/// Append every item `src` yields, converted to `dtype`.
pub(crate) fn push_all<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    lv: BasicValueEnum<'ctx>,
    dtype: TypeId,
    src_t: TypeId,
    src: BasicValueEnum<'ctx>,
) -> R<()> {
    let unit = lw.ctx.bool_type().const_zero().into();
    super::generators::fold_loop(lw, src_t, src, unit, |lw, acc, v, y, _| {
        // The iteration hands out a new reference: the list takes it.
        let v = lw.cast(v, y, dtype)?;
        lw.list_push(lv, dtype, v)?;
        Ok(acc)
    })?;
    Ok(())
}

fn insert<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let dtype = dtype_of(sig.args[0]);
    let n = lw.list_len(a[0])?;
    // Python clamps the position into 0..=len.
    let i = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
    let i = clamp_position(lw, i, n)?;
    let v = lw.cast(a[2], lowered(sig.args[2]), dtype)?;
    let p = lw.list_payload(a[0])?;
    lw.list_status_call("numba_rs_list_open_gap", &[p.into(), i.into()])?;
    let v = lw.own_ref(dtype, v)?;
    let p = lw.list_payload(a[0])?;
    let at = lw.list_item_ptr(p, dtype, i)?;
    lw.list_write(dtype, at, v)?;
    Ok(lw.ghost())
}

/// A position as CPython's list methods take one: negative counts from the end, then
/// clamped into `0..=n`.
fn clamp_position<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    i: IntValue<'ctx>,
    n: IntValue<'ctx>,
) -> R<IntValue<'ctx>> {
    let zero = lw.ctx.i64_type().const_zero();
    let b = &lw.b;
    let neg = b
        .build_int_compare(IntPredicate::SLT, i, zero, "")
        .map_err(llvm_err)?;
    let wrapped = b.build_int_add(i, n, "").map_err(llvm_err)?;
    let i = b
        .build_select(neg, wrapped, i, "")
        .map_err(llvm_err)?
        .into_int_value();
    let lo = b
        .build_int_compare(IntPredicate::SLT, i, zero, "")
        .map_err(llvm_err)?;
    let i = b
        .build_select(lo, zero, i, "")
        .map_err(llvm_err)?
        .into_int_value();
    let hi = b
        .build_int_compare(IntPredicate::SGT, i, n, "")
        .map_err(llvm_err)?;
    Ok(b.build_select(hi, n, i, "")
        .map_err(llvm_err)?
        .into_int_value())
}

/// `l.pop()` / `l.pop(i)`: the item, whose reference passes to the caller.
fn pop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let dtype = dtype_of(sig.args[0]);
    let i64t = lw.ctx.i64_type();
    let n = lw.list_len(a[0])?;
    let empty =
        lw.b.build_int_compare(IntPredicate::EQ, n, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(empty, "IndexError", &["pop from empty list"])?;
    let i = match a.get(1) {
        Some(&i) => {
            let i = lw.cast(i, sig.args[1], INT64)?.into_int_value();
            lw.list_index(a[0], i, index_message(sig.args[0], "pop"))?
        }
        None => {
            lw.b.build_int_sub(n, i64t.const_int(1, false), "")
                .map_err(llvm_err)?
        }
    };
    let p = lw.list_payload(a[0])?;
    let at = lw.list_item_ptr(p, dtype, i)?;
    let v = lw.list_read(dtype, at)?;
    lw.list_void_call("numba_rs_list_close_gap", &[p.into(), i.into()])?;
    Ok(v)
}

fn remove<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let dtype = dtype_of(sig.args[0]);
    let n = lw.list_len(a[0])?;
    let zero = lw.ctx.i64_type().const_zero();
    let i = lw.list_find(a[0], dtype, a[1], lowered(sig.args[1]), zero, n)?;
    let missing =
        lw.b.build_int_compare(IntPredicate::EQ, i, n, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(missing, "ValueError", &["list.remove(x): x not in list"])?;
    let p = lw.list_payload(a[0])?;
    let one = lw.ctx.i64_type().const_int(1, false);
    lw.list_void_call(
        "numba_rs_list_del_slice",
        &[p.into(), i.into(), one.into(), one.into()],
    )?;
    Ok(lw.ghost())
}

/// `l.index(x[, start[, stop]])`, the bounds clamped as CPython's slices are.
fn index<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(sig.args[0]);
    let i64t = lw.ctx.i64_type();
    let n = lw.list_len(a[0])?;
    let clamp = |lw: &mut FnLower<'ctx, '_>, k: usize, default: IntValue<'ctx>| match a.get(k) {
        Some(&v) => {
            let v = lw.cast(v, sig.args[k], INT64)?.into_int_value();
            clamp_position(lw, v, n)
        }
        None => Ok(default),
    };
    let start = clamp(lw, 2, i64t.const_zero())?;
    let stop = clamp(lw, 3, n)?;
    let i = lw.list_find(a[0], dtype, a[1], lowered(sig.args[1]), start, stop)?;
    let missing =
        lw.b.build_int_compare(IntPredicate::SGE, i, stop, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(missing, "ValueError", &["item not in list"])?;
    Ok(i.into())
}

fn count<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(sig.args[0]);
    let i64t = lw.ctx.i64_type();
    let total = lw.alloca_in_entry(i64t.into(), "count")?;
    lw.b.build_store(total, i64t.const_zero())
        .map_err(llvm_err)?;
    let n = lw.list_len(a[0])?;
    let xt = lowered(sig.args[1]);
    lw.list_loop(i64t.const_zero(), n, |lw, i| {
        let p = lw.list_payload(a[0])?;
        let at = lw.list_item_ptr(p, dtype, i)?;
        let item = lw.list_read(dtype, at)?;
        let eq = lw.items_equal(item, dtype, a[1], xt)?;
        let add = lw.b.build_int_z_extend(eq, i64t, "").map_err(llvm_err)?;
        let c =
            lw.b.build_load(i64t, total, "")
                .map_err(llvm_err)?
                .into_int_value();
        let c = lw.b.build_int_add(c, add, "").map_err(llvm_err)?;
        lw.b.build_store(total, c).map_err(llvm_err)?;
        Ok(lw.ctx.bool_type().const_zero())
    })?;
    lw.b.build_load(i64t, total, "").map_err(llvm_err)
}

/// `x in l` (the IR holds `contains(l, x)`).
fn contains<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(sig.args[0]);
    let n = lw.list_len(a[0])?;
    let zero = lw.ctx.i64_type().const_zero();
    let i = lw.list_find(a[0], dtype, a[1], lowered(sig.args[1]), zero, n)?;
    Ok(lw
        .b
        .build_int_compare(IntPredicate::SLT, i, n, "")
        .map_err(llvm_err)?
        .into())
}

/// `==`, `!=`, `<`, `<=`, `>`, `>=`: item by item, then by length, as Python compares
/// sequences.
fn compare<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = binop_of(&sig.key);
    let (xt, yt) = (dtype_of(sig.args[0]), dtype_of(sig.args[1]));
    let (nx, ny) = (lw.list_len(a[0])?, lw.list_len(a[1])?);
    let i64t = lw.ctx.i64_type();
    let shorter =
        lw.b.build_select(
            lw.b.build_int_compare(IntPredicate::SLT, nx, ny, "")
                .map_err(llvm_err)?,
            nx,
            ny,
            "",
        )
        .map_err(llvm_err)?
        .into_int_value();
    // The first position where the items differ.
    let at = lw.list_loop(i64t.const_zero(), shorter, |lw, i| {
        let (px, py) = (lw.list_payload(a[0])?, lw.list_payload(a[1])?);
        let (ax, ay) = (lw.list_item_ptr(px, xt, i)?, lw.list_item_ptr(py, yt, i)?);
        let (x, y) = (lw.list_read(xt, ax)?, lw.list_read(yt, ay)?);
        let eq = lw.items_equal(x, xt, y, yt)?;
        lw.b.build_not(eq, "").map_err(llvm_err)
    })?;
    let differ =
        lw.b.build_int_compare(IntPredicate::SLT, at, shorter, "")
            .map_err(llvm_err)?;
    let out = lw.alloca_in_entry(lw.ctx.bool_type().into(), "cmp")?;
    let by_item = lw.new_block("cmp.item");
    let by_len = lw.new_block("cmp.len");
    let done = lw.new_block("cmp.done");
    lw.b.build_conditional_branch(differ, by_item, by_len)
        .map_err(llvm_err)?;
    lw.b.position_at_end(by_item);
    let r = match op {
        BinOp::Eq => lw.ctx.bool_type().const_zero(),
        BinOp::Ne => lw.ctx.bool_type().const_int(1, false),
        _ => {
            let (px, py) = (lw.list_payload(a[0])?, lw.list_payload(a[1])?);
            let (ax, ay) = (lw.list_item_ptr(px, xt, at)?, lw.list_item_ptr(py, yt, at)?);
            let (x, y) = (lw.list_read(xt, ax)?, lw.list_read(yt, ay)?);
            lw.items_op(op, x, xt, y, yt)?
        }
    };
    lw.b.build_store(out, r).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(by_len);
    let pred = match op {
        BinOp::Eq => IntPredicate::EQ,
        BinOp::Ne => IntPredicate::NE,
        BinOp::Lt => IntPredicate::SLT,
        BinOp::Le => IntPredicate::SLE,
        BinOp::Gt => IntPredicate::SGT,
        _ => IntPredicate::SGE,
    };
    let r = lw.b.build_int_compare(pred, nx, ny, "").map_err(llvm_err)?;
    lw.b.build_store(out, r).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    lw.b.build_load(lw.ctx.bool_type(), out, "")
        .map_err(llvm_err)
}

/// `a + b`: a new list (items converted to the result's item type).
fn concat<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(sig.ret);
    let (nx, ny) = (lw.list_len(a[0])?, lw.list_len(a[1])?);
    let total = lw.b.build_int_add(nx, ny, "").map_err(llvm_err)?;
    let out = lw.new_list(dtype, total)?;
    for (k, &src) in a.iter().enumerate().take(2) {
        let st = lowered(sig.args[k]);
        if dtype_of(st) == dtype {
            let (dst, sp) = (lw.list_payload(out)?, lw.list_payload(src)?);
            lw.list_status_call("numba_rs_list_extend_list", &[dst.into(), sp.into()])?;
        } else {
            push_all(lw, out, dtype, st, src)?;
        }
    }
    Ok(out)
}

fn repeat<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    lv: BasicValueEnum<'ctx>,
    n: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let p = lw.list_payload(lv)?;
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_list_repeat",
        ptr.fn_type(&[ptr.into(), i64t.into()], false),
    );
    let n =
        lw.b.build_int_s_extend_or_bit_cast(n.into_int_value(), i64t, "")
            .map_err(llvm_err)?;
    let mi = lw
        .call_value(f, &[p.into(), n.into()])?
        .into_pointer_value();
    lw.list_value(mi)
}

/// `list(iterable)`: a new list of what it yields.
fn list_of_iterable<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(sig.ret);
    let src_t = lowered(sig.args[0]);
    if is_list(src_t) && dtype_of(src_t) == dtype {
        let n = lw.list_len(a[0])?;
        let i64t = lw.ctx.i64_type();
        return lw.list_copy_range(a[0], i64t.const_zero(), n, i64t.const_int(1, false));
    }
    let zero = lw.ctx.i64_type().const_zero();
    let out = lw.new_list(dtype, zero)?;
    push_all(lw, out, dtype, src_t, a[0])?;
    Ok(out)
}

/// Sort a list in place; `reverse` an `i1`.
fn sort_in_place<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    list_t: TypeId,
    lv: BasicValueEnum<'ctx>,
    reverse: IntValue<'ctx>,
) -> R<()> {
    let dtype = dtype_of(list_t);
    let kind = match dtype.get() {
        Type::Boolean => 0,
        Type::Integer { signed: true, .. } => 0,
        Type::Integer { signed: false, .. } => 1,
        Type::Float { .. } => 2,
        // Bytes order as one-byte-kind strings of the same data do.
        Type::Unicode | Type::Bytes => {
            let p = lw.list_payload(lv)?;
            let i32t = lw.ctx.i32_type();
            let rev =
                lw.b.build_int_z_extend(reverse, i32t, "")
                    .map_err(llvm_err)?;
            return lw.list_void_call("numba_rs_list_sort_strings", &[p.into(), rev.into()]);
        }
        _ => {
            // Tuples, strings, lists: the runtime's merge sort asks a generated `<`.
            let lt = item_lt_fn(lw, dtype)?;
            let p = lw.list_payload(lv)?;
            let i32t = lw.ctx.i32_type();
            let rev =
                lw.b.build_int_z_extend(reverse, i32t, "")
                    .map_err(llvm_err)?;
            let f = lt.as_global_value().as_pointer_value();
            return lw.list_void_call("numba_rs_list_sort_by", &[p.into(), f.into(), rev.into()]);
        }
    };
    let p = lw.list_payload(lv)?;
    let i32t = lw.ctx.i32_type();
    let rev =
        lw.b.build_int_z_extend(reverse, i32t, "")
            .map_err(llvm_err)?;
    lw.list_void_call(
        "numba_rs_list_sort_numbers",
        &[p.into(), i32t.const_int(kind, false).into(), rev.into()],
    )
}

/// `i32 lt(retptr, excinfo, a, b)` for items of `dtype` stored at `a` and `b` (the
/// runtime's [`crate::lists::ItemLt`]): Python's `<` on the two items, generated once
/// per module and item type.
fn item_lt_fn<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dtype: TypeId,
) -> R<inkwell::values::FunctionValue<'ctx>> {
    let name = format!("numba_rs.list.lt.{dtype}");
    if let Some(f) = lw.module.get_function(&name) {
        return Ok(f);
    }
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let i32t = lw.ctx.i32_type();
    let f = lw.module.add_function(
        &name,
        i32t.fn_type(&[ptr.into(), ptr.into(), ptr.into(), ptr.into()], false),
        Some(inkwell::module::Linkage::Internal),
    );
    let mut ll = FnLower::new(
        lw.ctx,
        lw.module,
        f,
        lw.ir,
        lw.typing,
        lw.registry,
        lw.options,
        lw.linked,
    )?;
    ll.line = lw.line;
    ll.linked_libraries = std::mem::take(&mut lw.linked_libraries);
    let param = |i: u32| -> R<PointerValue<'ctx>> {
        f.get_nth_param(i)
            .map(|p| p.into_pointer_value())
            .ok_or_else(|| crate::LowerError::Llvm("comparison parameters".into()))
    };
    let (pa, pb) = (param(2)?, param(3)?);
    let built = (|| -> R<()> {
        let a = ll.list_read(dtype, pa)?;
        let b = ll.list_read(dtype, pb)?;
        let lt = ll.items_op(BinOp::Lt, a, dtype, b, dtype)?;
        let r = ll.b.build_int_z_extend(lt, i32t, "").map_err(llvm_err)?;
        ll.b.build_return(Some(&r)).map_err(llvm_err)?;
        Ok(())
    })();
    lw.externals.append(&mut ll.externals);
    lw.linked_libraries = std::mem::take(&mut ll.linked_libraries);
    if let Err(e) = built {
        // No half-built function left for a later sort of the same type to find.
        // SAFETY: nothing refers to `f` yet.
        unsafe { f.delete() };
        return Err(e);
    }
    Ok(f)
}

/// The `reverse=` argument of `sort`/`sorted` (argument `k`), false when absent.
fn reverse_arg<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    k: usize,
) -> R<IntValue<'ctx>> {
    match (a.get(k), sig.args.get(k)) {
        (Some(&v), Some(&t)) => lw.truth(v, lowered(t)),
        _ => Ok(lw.ctx.bool_type().const_zero()),
    }
}

fn sort<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.check_mutable(sig.args[0], a[0])?;
    let rev = reverse_arg(lw, sig, a, 2)?;
    sort_in_place(lw, sig.args[0], a[0], rev)?;
    Ok(lw.ghost())
}

fn sorted<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let inner = Signature {
        ret: sig.ret,
        args: vec![sig.args[0]],
        key: key("list"),
    };
    let out = list_of_iterable(lw, &inner, &a[..1])?;
    let rev = reverse_arg(lw, sig, a, 2)?;
    sort_in_place(lw, sig.ret, out, rev)?;
    Ok(out)
}

/// `[a, b, c]`: a new list of these items (each converted to the item type).
pub(crate) fn build<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    list_t: TypeId,
    items: &[(BasicValueEnum<'ctx>, TypeId)],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(list_t);
    let n = lw.ctx.i64_type().const_int(items.len() as u64, false);
    let out = lw.new_list(dtype, n)?;
    for &(v, t) in items {
        let v = lw.cast(v, t, dtype)?;
        let v = lw.own_ref(dtype, v)?;
        lw.list_push(out, dtype, v)?;
    }
    // A new list is not a change to reflect.
    let p = lw.list_payload(out)?;
    lw.set_payload_i64(p, offset::DIRTY, lw.ctx.i64_type().const_zero())?;
    Ok(out)
}

/// Python truthiness of a list: not empty.
pub(crate) fn truth<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    lv: BasicValueEnum<'ctx>,
) -> R<IntValue<'ctx>> {
    let n = lw.list_len(lv)?;
    lw.b.build_int_compare(IntPredicate::NE, n, lw.ctx.i64_type().const_zero(), "")
        .map_err(llvm_err)
}

/// `np.array(l)` of (nested) lists of numbers: the shape read from the first item at
/// each level, every list checked against it (NumPy's ValueError for ragged lists), the
/// numbers converted to the array's dtype in C order.
pub(crate) fn to_array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    list_t: TypeId,
    lv: BasicValueEnum<'ctx>,
    ret: TypeId,
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    // The dimensions: each level's first list (0 below an empty one).
    let mut levels = Vec::new();
    let mut t = lowered(list_t);
    while is_list(t) {
        levels.push(t);
        t = dtype_of(t);
    }
    let mut slots = Vec::new();
    for _ in &levels {
        let s = lw.alloca_in_entry(i64t.into(), "dim")?;
        lw.b.build_store(s, i64t.const_zero()).map_err(llvm_err)?;
        slots.push(s);
    }
    probe(lw, &levels, &slots, 0, lv)?;
    let mut dims = Vec::new();
    for s in &slots {
        dims.push(
            lw.b.build_load(i64t, *s, "dim")
                .map_err(llvm_err)?
                .into_int_value(),
        );
    }
    // Ragged lists are found before the array exists (nothing to release).
    check_shape(lw, &levels, &dims, 0, lv)?;
    let out = super::arrays::allocate(lw, ret, &dims)?;
    let leaf_dtype = super::array_ops::dtype_of(ret);
    let counter = lw.alloca_in_entry(i64t.into(), "flat")?;
    lw.b.build_store(counter, i64t.const_zero())
        .map_err(llvm_err)?;
    fill(lw, &levels, 0, lv, out, ret, leaf_dtype, counter)?;
    Ok(out.into())
}

/// Store the length of `lv` (at `depth`) and of its first items below it.
fn probe<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    levels: &[TypeId],
    dims: &[PointerValue<'ctx>],
    depth: usize,
    lv: BasicValueEnum<'ctx>,
) -> R<()> {
    let i64t = lw.ctx.i64_type();
    let n = lw.list_len(lv)?;
    lw.b.build_store(dims[depth], n).map_err(llvm_err)?;
    if depth + 1 < levels.len() {
        let has =
            lw.b.build_int_compare(IntPredicate::SGT, n, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        let read = lw.new_block("dims.first");
        let cont = lw.new_block("dims.cont");
        lw.b.build_conditional_branch(has, read, cont)
            .map_err(llvm_err)?;
        lw.b.position_at_end(read);
        let dtype = dtype_of(levels[depth]);
        let p = lw.list_payload(lv)?;
        let at = lw.list_item_ptr(p, dtype, i64t.const_zero())?;
        let first = lw.list_read(dtype, at)?;
        probe(lw, levels, dims, depth + 1, first)?;
        lw.b.build_unconditional_branch(cont).map_err(llvm_err)?;
        lw.b.position_at_end(cont);
    }
    Ok(())
}

/// Every list at `depth` and below has the length `dims` says (NumPy's ValueError).
fn check_shape<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    levels: &[TypeId],
    dims: &[IntValue<'ctx>],
    depth: usize,
    lv: BasicValueEnum<'ctx>,
) -> R<()> {
    let i64t = lw.ctx.i64_type();
    let n = lw.list_len(lv)?;
    let ragged =
        lw.b.build_int_compare(IntPredicate::NE, n, dims[depth], "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        ragged,
        "ValueError",
        &["setting an array element with a sequence. The requested array has an inhomogeneous shape"],
    )?;
    if depth + 1 < levels.len() {
        let dtype = dtype_of(levels[depth]);
        lw.list_loop(i64t.const_zero(), n, |lw, i| {
            let p = lw.list_payload(lv)?;
            let at = lw.list_item_ptr(p, dtype, i)?;
            let item = lw.list_read(dtype, at)?;
            check_shape(lw, levels, dims, depth + 1, item)?;
            Ok(lw.ctx.bool_type().const_zero())
        })?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn fill<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    levels: &[TypeId],
    depth: usize,
    lv: BasicValueEnum<'ctx>,
    out: inkwell::values::StructValue<'ctx>,
    ret: TypeId,
    leaf_dtype: TypeId,
    counter: PointerValue<'ctx>,
) -> R<()> {
    let i64t = lw.ctx.i64_type();
    let t = levels[depth];
    let dtype = dtype_of(t);
    let n = lw.list_len(lv)?;
    lw.list_loop(i64t.const_zero(), n, |lw, i| {
        let p = lw.list_payload(lv)?;
        let at = lw.list_item_ptr(p, dtype, i)?;
        let item = lw.list_read(dtype, at)?;
        if depth + 1 < levels.len() {
            fill(lw, levels, depth + 1, item, out, ret, leaf_dtype, counter)?;
        } else {
            let v = lw.cast(item, dtype, leaf_dtype)?;
            let k =
                lw.b.build_load(i64t, counter, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let ptr = super::array_ops::flat_ptr(lw, ret, out, k)?;
            super::array_ops::store_elem(lw, leaf_dtype, ptr, v)?;
            let k1 =
                lw.b.build_int_add(k, i64t.const_int(1, false), "")
                    .map_err(llvm_err)?;
            lw.b.build_store(counter, k1).map_err(llvm_err)?;
        }
        Ok(lw.ctx.bool_type().const_zero())
    })?;
    Ok(())
}

/// The item type of a list type.
pub(crate) fn item_type(list_t: TypeId) -> TypeId {
    dtype_of(list_t)
}

/// Unpacking `n` items into `count` targets: CPython's ValueError for another length.
pub(crate) fn check_unpack_len<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    n: inkwell::values::IntValue<'ctx>,
    count: u32,
) -> R<()> {
    let want = lw.ctx.i64_type().const_int(u64::from(count), false);
    let more =
        lw.b.build_int_compare(IntPredicate::SGT, n, want, "")
            .map_err(llvm_err)?;
    let msg = format!("too many values to unpack (expected {count})");
    lw.raise_const_if(more, "ValueError", &[&msg])?;
    let fewer =
        lw.b.build_int_compare(IntPredicate::SLT, n, want, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(fewer, "ValueError", &["not enough values to unpack"])
}

/// `a, b, c = l`: the items as a tuple (borrowed, as a tuple's items are); ValueError
/// when the list has another length, with CPython's words.
pub(crate) fn unpack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    list_t: TypeId,
    lv: BasicValueEnum<'ctx>,
    count: u32,
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(list_t);
    let i64t = lw.ctx.i64_type();
    let n = lw.list_len(lv)?;
    check_unpack_len(lw, n, count)?;
    let p = lw.list_payload(lv)?;
    let mut vals = Vec::new();
    for k in 0..count {
        let at = lw.list_item_ptr(p, dtype, i64t.const_int(u64::from(k), false))?;
        vals.push(lw.list_read(dtype, at)?);
    }
    lw.make_struct(intern(Type::UniTuple(dtype, count)), &vals)
}
