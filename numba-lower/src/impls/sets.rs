//! Sets (`model::list`'s layout, payload and table in `crate::sets`): building, `len`,
//! `in`, iteration, the methods and the operators. Items cross into the runtime as
//! their boundary slots in a stack buffer; the runtime hashes and compares them by the
//! key program this module emits beside the reference map.

use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::binop_of;
use crate::callconv::boundary_shape;
use crate::function::FnLower;
use crate::model::{list, lowered, model_of, SlotCodec};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn is_set(t: TypeId) -> bool {
    matches!(t.get(), Type::Set { .. })
}

fn dtype_of(t: TypeId) -> TypeId {
    numba_typeinfer::sets::set_dtype(lowered(t)).unwrap_or(NONE)
}

fn key(k: &str) -> ImplKey {
    ImplKey::Function(k.into())
}

/// `crate::sets`'s operation codes.
fn op_code(name: &str) -> u64 {
    match name {
        "intersection" | "iand" | "intersection_update" => 1,
        "difference" | "isub" | "difference_update" => 2,
        "symmetric_difference" | "ixor" | "symmetric_difference_update" => 3,
        _ => 0,
    }
}

pub(crate) fn register(r: &mut Registry) {
    r.register(
        ImplKey::Function("hash".into()),
        Args::Exact(vec![TypePat::Pred(hashed_by_program)]),
        hash_value,
    );
    let s = TypePat::Pred(is_set);
    r.register(key("len"), Args::Exact(vec![s]), |lw, _, a| {
        Ok(lw.list_len(a[0])?.into())
    });
    r.register(
        ImplKey::GetIter,
        Args::Exact(vec![s]),
        super::lists::container_iter,
    );
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(
            |t| matches!(t.get(), Type::ArrayIter(s) if is_set(s)),
        )]),
        set_next,
    );
    r.register(key("set"), Args::Exact(vec![]), |lw, sig, _| {
        lw.new_set(dtype_of(sig.ret))
    });
    r.register(key("set"), Args::Exact(vec![TypePat::Any]), |lw, sig, a| {
        let out = lw.new_set(dtype_of(sig.ret))?;
        add_all(lw, out, dtype_of(sig.ret), lowered(sig.args[0]), a[0])?;
        clean(lw, out)?;
        Ok(out)
    });
    r.register(
        key("set.add"),
        Args::Exact(vec![s, TypePat::Any]),
        |lw, sig, a| {
            let d = dtype_of(sig.args[0]);
            let v = lw.cast(a[1], lowered(sig.args[1]), d)?;
            set_add(lw, a[0], d, v)?;
            Ok(lw.ghost())
        },
    );
    r.register(
        key("set.update"),
        Args::Exact(vec![s, TypePat::Any]),
        |lw, sig, a| {
            let d = dtype_of(sig.args[0]);
            let src_t = lowered(sig.args[1]);
            if is_set(src_t) && dtype_of(src_t) == d {
                update(lw, a[0], a[1], 0)?;
            } else {
                add_all(lw, a[0], d, src_t, a[1])?;
            }
            Ok(lw.ghost())
        },
    );
    for m in ["remove", "discard"] {
        r.register(
            key(&format!("set.{m}")),
            Args::Exact(vec![s, TypePat::Any]),
            |lw, sig, a| {
                let d = dtype_of(sig.args[0]);
                let v = lw.cast(a[1], lowered(sig.args[1]), d)?;
                let item = lw.set_item_buffer(d, v)?;
                let p = lw.list_payload(a[0])?;
                let found = lw.set_call_i32("numba_rs_set_discard", &[p.into(), item.into()])?;
                if sig.key == key("set.remove") {
                    let missing =
                        lw.b.build_int_compare(
                            IntPredicate::EQ,
                            found,
                            lw.ctx.i32_type().const_zero(),
                            "",
                        )
                        .map_err(llvm_err)?;
                    lw.raise_const_if(missing, "KeyError", &["set.remove(): key not in set"])?;
                }
                Ok(lw.ghost())
            },
        );
    }
    r.register(key("set.pop"), Args::Exact(vec![s]), |lw, sig, a| {
        let d = dtype_of(sig.args[0]);
        let words = boundary_shape(d)?.slots() as u32;
        let buf = lw.alloca_in_entry(lw.ctx.i64_type().array_type(words.max(1)).into(), "pop")?;
        let p = lw.list_payload(a[0])?;
        let empty = lw.set_call_i32("numba_rs_set_pop", &[p.into(), buf.into()])?;
        let is_empty =
            lw.b.build_int_compare(IntPredicate::NE, empty, lw.ctx.i32_type().const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(is_empty, "KeyError", &["set.pop(): empty set"])?;
        // The item's references pass to the caller.
        lw.list_read(d, buf)
    });
    r.register(key("set.clear"), Args::Exact(vec![s]), |lw, _, a| {
        let p = lw.list_payload(a[0])?;
        lw.list_void_call("numba_rs_set_clear", &[p.into()])?;
        Ok(lw.ghost())
    });
    r.register(key("set.copy"), Args::Exact(vec![s]), |lw, _, a| {
        let p = lw.list_payload(a[0])?;
        lw.container_from("numba_rs_set_copy", &[p.into()])
    });
    for m in [
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
    ] {
        r.register(
            key(&format!("set.{m}")),
            Args::Exact(vec![s, s]),
            |lw, sig, a| {
                let name = sig.key.describe();
                binop_new(lw, a[0], a[1], op_code(name.trim_start_matches("set.")))
            },
        );
    }
    for m in [
        "intersection_update",
        "difference_update",
        "symmetric_difference_update",
    ] {
        r.register(
            key(&format!("set.{m}")),
            Args::Exact(vec![s, s]),
            |lw, sig, a| {
                let name = sig.key.describe();
                update(lw, a[0], a[1], op_code(name.trim_start_matches("set.")))?;
                Ok(lw.ghost())
            },
        );
    }
    for m in ["ior", "iand", "isub", "ixor"] {
        r.register(
            key(&format!("set.{m}")),
            Args::Exact(vec![s, s]),
            |lw, sig, a| {
                let name = sig.key.describe();
                update(lw, a[0], a[1], op_code(name.trim_start_matches("set.")))?;
                lw.incref(sig.args[0], a[0])?;
                Ok(a[0])
            },
        );
    }
    r.register(key("set.issubset"), Args::Exact(vec![s, s]), |lw, _, a| {
        subset(lw, a[0], a[1])
    });
    r.register(
        key("set.issuperset"),
        Args::Exact(vec![s, s]),
        |lw, _, a| subset(lw, a[1], a[0]),
    );
    r.register(
        key("set.isdisjoint"),
        Args::Exact(vec![s, s]),
        |lw, _, a| {
            let (x, y) = (lw.list_payload(a[0])?, lw.list_payload(a[1])?);
            let r = lw.set_call_i32("numba_rs_set_isdisjoint", &[x.into(), y.into()])?;
            lw.nonzero(r)
        },
    );
    for op in [BinOp::Or, BinOp::And, BinOp::Sub, BinOp::Xor] {
        r.register(ImplKey::BinOp(op), Args::Exact(vec![s, s]), operator);
    }
    for op in [
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ] {
        r.register(ImplKey::BinOp(op), Args::Exact(vec![s, s]), compare);
    }
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![s, TypePat::Any]),
        |lw, sig, a| {
            let d = dtype_of(sig.args[0]);
            let v = lw.cast(a[1], lowered(sig.args[1]), d)?;
            let item = lw.set_item_buffer(d, v)?;
            let p = lw.list_payload(a[0])?;
            let r = lw.set_call_i32("numba_rs_set_contains", &[p.into(), item.into()])?;
            lw.nonzero(r)
        },
    );
}

/// Values `hash` takes through a key program (numbers have their own fast impls).
fn hashed_by_program(t: TypeId) -> bool {
    matches!(t.get(), Type::Complex { .. } | Type::Unicode)
        || numba_typeinfer::conv::tuple_items(t).is_some()
}

/// `hash(x)` of a complex number, string or tuple: CPython's value, through the key
/// program sets hash with.
fn hash_value<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = lowered(sig.args[0]);
    let item = lw.set_item_buffer(t, a[0])?;
    let prog = lw.key_program_ptr(t)?;
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_hash_slots",
        i64t.fn_type(&[ptr.into(), ptr.into()], false),
    );
    lw.call_value(f, &[prog.into(), item.into()])
}

impl<'ctx> FnLower<'ctx, '_> {
    /// `v` (of `dtype`) written into a stack buffer in its slot form, for the runtime.
    pub(crate) fn set_item_buffer(
        &mut self,
        dtype: TypeId,
        v: BasicValueEnum<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        let words = boundary_shape(dtype)?.slots() as u32;
        let buf =
            self.alloca_in_entry(self.ctx.i64_type().array_type(words.max(1)).into(), "item")?;
        let c = SlotCodec {
            ctx: self.ctx,
            b: &self.b,
            slots: buf,
        };
        model_of(dtype)?.pack(&c, dtype, v, &mut 0)?;
        Ok(buf)
    }

    pub(crate) fn set_call_i32(
        &mut self,
        name: &str,
        args: &[BasicValueEnum<'ctx>],
    ) -> R<IntValue<'ctx>> {
        let params: Vec<_> = args.iter().map(|a| a.get_type().into()).collect();
        let f = self.runtime_fn(name, self.ctx.i32_type().fn_type(&params, false));
        let vals: Vec<_> = args.iter().map(|&a| a.into()).collect();
        Ok(self.call_value(f, &vals)?.into_int_value())
    }

    fn nonzero(&mut self, r: IntValue<'ctx>) -> R<BasicValueEnum<'ctx>> {
        Ok(self
            .b
            .build_int_compare(IntPredicate::NE, r, self.ctx.i32_type().const_zero(), "")
            .map_err(llvm_err)?
            .into())
    }

    /// A set or dict (`model::list`'s layout) from a runtime helper returning a new
    /// MemInfo (MemoryError when null).
    pub(crate) fn container_from(
        &mut self,
        name: &str,
        args: &[BasicValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let params: Vec<_> = args.iter().map(|a| a.get_type().into()).collect();
        let f = self.runtime_fn(name, ptr.fn_type(&params, false));
        let vals: Vec<_> = args.iter().map(|&a| a.into()).collect();
        let mi = self.call_value(f, &vals)?.into_pointer_value();
        self.list_value(mi)
    }

    /// The module constant describing how `dtype` items hash and compare.
    pub(crate) fn key_program_ptr(&self, dtype: TypeId) -> R<PointerValue<'ctx>> {
        let prog = crate::sets::key_program(&boundary_shape(dtype)?).ok_or_else(|| {
            self.unsupported(format!(
                "hashing values of {dtype} is not supported by numba-rs yet"
            ))
        })?;
        self.key_program_ptr_of(dtype, prog)
    }

    /// The module constant holding `prog`, a key program for `_dtype`.
    pub(crate) fn key_program_ptr_of(
        &self,
        _dtype: TypeId,
        prog: crate::sets::KeyProgram,
    ) -> R<PointerValue<'ctx>> {
        let name = format!(
            "numba_rs.set.key.{}",
            String::from_utf8_lossy(&prog[..prog.len() - 1])
        );
        let g = match self.module.get_global(&name) {
            Some(g) => g,
            None => {
                let init = self.ctx.const_string(&prog, false);
                let g = self.module.add_global(init.get_type(), None, &name);
                g.set_initializer(&init);
                g.set_constant(true);
                g.set_linkage(inkwell::module::Linkage::Private);
                g
            }
        };
        Ok(g.as_pointer_value())
    }

    /// A new empty set of `dtype` items.
    pub(crate) fn new_set(&mut self, dtype: TypeId) -> R<BasicValueEnum<'ctx>> {
        let i64t = self.ctx.i64_type();
        let bytes = i64t.const_int(self.item_bytes(dtype)?, false);
        let key = self.key_program_ptr(dtype)?;
        let refs = self.ref_map_ptr(dtype)?;
        self.container_from("numba_rs_set_new", &[bytes.into(), key.into(), refs.into()])
    }
}

/// Add `v` (of `dtype`, borrowed: the set takes its own references).
fn set_add<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sv: BasicValueEnum<'ctx>,
    dtype: TypeId,
    v: BasicValueEnum<'ctx>,
) -> R<()> {
    let item = lw.set_item_buffer(dtype, v)?;
    let p = lw.list_payload(sv)?;
    let r = lw.set_call_i32("numba_rs_set_add", &[p.into(), item.into()])?;
    let failed =
        lw.b.build_int_compare(IntPredicate::SLT, r, lw.ctx.i32_type().const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(failed, "MemoryError", &["Allocation failed"])
}

/// Add every item `src` yields (new references: released once added).
fn add_all<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sv: BasicValueEnum<'ctx>,
    dtype: TypeId,
    src_t: TypeId,
    src: BasicValueEnum<'ctx>,
) -> R<()> {
    let unit = lw.ctx.bool_type().const_zero().into();
    super::generators::fold_loop(lw, src_t, src, unit, |lw, acc, v, y, _| {
        let v = lw.cast(v, y, dtype)?;
        set_add(lw, sv, dtype, v)?;
        lw.decref(dtype, v)?;
        Ok(acc)
    })?;
    Ok(())
}

/// A set just made is not a change to reflect.
fn clean<'ctx>(lw: &mut FnLower<'ctx, '_>, sv: BasicValueEnum<'ctx>) -> R<()> {
    let p = lw.list_payload(sv)?;
    lw.set_payload_i64(p, crate::sets::DIRTY_OFFSET, lw.ctx.i64_type().const_zero())
}

/// `a | b`, `a & b`, `a - b`, `a ^ b`: a new set.
fn operator<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let code = match binop_of(&sig.key) {
        BinOp::And => 1,
        BinOp::Sub => 2,
        BinOp::Xor => 3,
        _ => 0,
    };
    binop_new(lw, a[0], a[1], code)
}

fn update<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    a: BasicValueEnum<'ctx>,
    b: BasicValueEnum<'ctx>,
    op: u64,
) -> R<()> {
    let (x, y) = (lw.list_payload(a)?, lw.list_payload(b)?);
    let code = lw.ctx.i32_type().const_int(op, false);
    lw.list_status_call("numba_rs_set_update", &[x.into(), y.into(), code.into()])
}

fn binop_new<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    a: BasicValueEnum<'ctx>,
    b: BasicValueEnum<'ctx>,
    op: u64,
) -> R<BasicValueEnum<'ctx>> {
    let (x, y) = (lw.list_payload(a)?, lw.list_payload(b)?);
    let code = lw.ctx.i32_type().const_int(op, false);
    lw.container_from("numba_rs_set_binop", &[x.into(), y.into(), code.into()])
}

fn subset<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    a: BasicValueEnum<'ctx>,
    b: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let (x, y) = (lw.list_payload(a)?, lw.list_payload(b)?);
    let r = lw.set_call_i32("numba_rs_set_issubset", &[x.into(), y.into()])?;
    lw.nonzero(r)
}

/// `==` `!=` `<=` `<` `>=` `>`: by inclusion, as Python compares sets.
fn compare<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = binop_of(&sig.key);
    let (na, nb) = (lw.list_len(a[0])?, lw.list_len(a[1])?);
    let (x, y, pred) = match op {
        BinOp::Eq | BinOp::Ne => (a[0], a[1], IntPredicate::EQ),
        BinOp::Le => (a[0], a[1], IntPredicate::SLE),
        BinOp::Lt => (a[0], a[1], IntPredicate::SLT),
        BinOp::Ge => (a[1], a[0], IntPredicate::SLE),
        _ => (a[1], a[0], IntPredicate::SLT),
    };
    let (nx, ny) = if matches!(op, BinOp::Ge | BinOp::Gt) {
        (nb, na)
    } else {
        (na, nb)
    };
    let sizes = lw.b.build_int_compare(pred, nx, ny, "").map_err(llvm_err)?;
    let sub = subset(lw, x, y)?.into_int_value();
    let r = lw.b.build_and(sizes, sub, "").map_err(llvm_err)?;
    Ok(if op == BinOp::Ne {
        lw.b.build_not(r, "").map_err(llvm_err)?.into()
    } else {
        r.into()
    })
}

/// The next item in table order (borrowed).
fn set_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::ArrayIter(set_t) = t.get() else {
        return Err(lw.unsupported("expected a set iterator"));
    };
    let dtype = dtype_of(set_t);
    let st = crate::model::iterator_storage(lw.ctx, t)?;
    let storage = a[0].into_pointer_value();
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    let ps =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    let sv =
        lw.b.build_load(list::struct_type(lw.ctx), ps, "")
            .map_err(llvm_err)?;
    let p = lw.list_payload(sv)?;
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_set_next",
        ptr.fn_type(&[ptr.into(), ptr.into()], false),
    );
    let at = lw
        .call_value(f, &[p.into(), pi.into()])?
        .into_pointer_value();
    let valid = lw.b.build_is_not_null(at, "").map_err(llvm_err)?;
    let item_t = crate::model::value_type(lw.ctx, dtype)?;
    let out = lw.alloca_in_entry(item_t, "set.next")?;
    lw.b.build_store(out, item_t.const_zero())
        .map_err(llvm_err)?;
    let read = lw.new_block("set.read");
    let cont = lw.new_block("set.cont");
    lw.b.build_conditional_branch(valid, read, cont)
        .map_err(llvm_err)?;
    lw.b.position_at_end(read);
    let v = lw.list_read(dtype, at)?;
    lw.b.build_store(out, v).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(cont).map_err(llvm_err)?;
    lw.b.position_at_end(cont);
    let v = lw.b.build_load(item_t, out, "").map_err(llvm_err)?;
    lw.make_struct(sig.ret, &[v, valid.into()])
}

/// `{a, b, c}`: a new set of these items.
pub(crate) fn build<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    set_t: TypeId,
    items: &[(BasicValueEnum<'ctx>, TypeId)],
) -> R<BasicValueEnum<'ctx>> {
    let dtype = dtype_of(set_t);
    let out = lw.new_set(dtype)?;
    for &(v, t) in items {
        let v = lw.cast(v, t, dtype)?;
        set_add(lw, out, dtype, v)?;
    }
    clean(lw, out)?;
    Ok(out)
}

/// Python truthiness of a set: not empty.
pub(crate) fn truth<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sv: BasicValueEnum<'ctx>,
) -> R<IntValue<'ctx>> {
    let n = lw.list_len(sv)?;
    lw.b.build_int_compare(IntPredicate::NE, n, lw.ctx.i64_type().const_zero(), "")
        .map_err(llvm_err)
}
