//! Dicts (`model::list`'s layout, payload and table in `crate::dicts`): building,
//! indexing, `del`, `in`, `len`, iteration over the dict and its views, the methods and
//! `==`. Keys and values cross into the runtime as their boundary slots in stack
//! buffers; the runtime hashes and compares keys by the key program sets use.

use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::callconv::boundary_shape;
use crate::function::FnLower;
use crate::model::{list, lowered};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

fn is_dict(t: TypeId) -> bool {
    matches!(t.get(), Type::Dict { .. })
}

fn is_view(t: TypeId) -> bool {
    matches!(t.get(), Type::DictView { .. })
}

/// The key and value types of a dict (or a view's dict).
fn parts(t: TypeId) -> (TypeId, TypeId) {
    let t = match lowered(t).get() {
        Type::DictView { dict, .. } => dict,
        _ => lowered(t),
    };
    numba_typeinfer::dicts::dict_parts(t).unwrap_or((NONE, NONE))
}

fn key(k: &str) -> ImplKey {
    ImplKey::Function(k.into())
}

fn is_literal_dict(t: TypeId) -> bool {
    matches!(t.get(), Type::LiteralStrKeyDict { .. })
}

/// The position of constant key `k` (a string literal type) in a literal dict.
fn literal_position(dict_t: TypeId, k: TypeId) -> Option<usize> {
    let (keys, _) = numba_typeinfer::dicts::literal_parts(dict_t)?;
    let Type::StringLiteral(s) = k.get() else {
        return None;
    };
    keys.iter().position(|x| *x == s)
}

/// A literal-string-key dict (Numba's `LiteralStrKeyDict`): the tuple of its values,
/// read by constant keys.
fn register_literal(r: &mut Registry) {
    let ld = TypePat::Pred(is_literal_dict);
    let any = TypePat::Any;
    r.register(key("len"), Args::Exact(vec![ld]), |lw, sig, _| {
        let n = numba_typeinfer::dicts::literal_parts(sig.args[0]).map_or(0, |p| p.0.len());
        Ok(lw.ctx.i64_type().const_int(n as u64, false).into())
    });
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![ld, any]),
        |lw, sig, a| {
            let i = literal_position(sig.args[0], sig.args[1])
                .ok_or_else(|| lw.unsupported("a literal dict read by a key it does not have"))?;
            // Borrowed, as a tuple's item.
            lw.b.build_extract_value(a[0].into_struct_value(), i as u32, "")
                .map_err(llvm_err)
        },
    );
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![ld, any]),
        |lw, sig, _| {
            let found = literal_position(sig.args[0], sig.args[1]).is_some();
            Ok(lw.ctx.bool_type().const_int(u64::from(found), false).into())
        },
    );
    // `values()` and `copy()` are the same tuple (a new reference, as a call's result).
    for m in ["literal_dict.values", "literal_dict.copy"] {
        r.register(key(m), Args::Exact(vec![ld]), |lw, sig, a| {
            lw.incref(sig.args[0], a[0])?;
            Ok(a[0])
        });
    }
    r.register(
        key("literal_dict.keys"),
        Args::Exact(vec![ld]),
        |lw, sig, _| {
            let (keys, _) = numba_typeinfer::dicts::literal_parts(sig.args[0]).unwrap_or_default();
            let vals = keys
                .iter()
                .map(|k| lw.unicode_constant(k))
                .collect::<R<Vec<_>>>()?;
            lw.make_struct(lowered(sig.ret), &vals)
        },
    );
    r.register(
        key("literal_dict.items"),
        Args::Exact(vec![ld]),
        |lw, sig, a| {
            let (keys, values) =
                numba_typeinfer::dicts::literal_parts(sig.args[0]).unwrap_or_default();
            let mut pairs = Vec::with_capacity(keys.len());
            for (i, (k, &vt)) in keys.iter().zip(&values).enumerate() {
                let kv = lw.unicode_constant(k)?;
                let v =
                    lw.b.build_extract_value(a[0].into_struct_value(), i as u32, "")
                        .map_err(llvm_err)?;
                lw.incref(vt, v)?;
                let pair_t = numba_typeinfer::types::tuple_of(&[UNICODE, vt]);
                pairs.push(lw.make_struct(pair_t, &[kv, v])?);
            }
            lw.make_struct(lowered(sig.ret), &pairs)
        },
    );
}

pub(crate) fn register(r: &mut Registry) {
    register_literal(r);
    let d = TypePat::Pred(is_dict);
    let any = TypePat::Any;
    r.register(
        key("len"),
        Args::Exact(vec![TypePat::Pred(|t| is_dict(t) || is_view(t))]),
        |lw, _, a| Ok(lw.list_len(a[0])?.into()),
    );
    r.register(key("dict"), Args::Exact(vec![]), |lw, sig, _| {
        let zero = lw.ctx.i64_type().const_zero();
        lw.new_dict(sig.ret, zero)
    });
    r.register(key("dict"), Args::Exact(vec![any]), |lw, sig, a| {
        let src_t = lowered(sig.args[0]);
        if is_dict(src_t) {
            let p = lw.list_payload(a[0])?;
            return lw.container_from("numba_rs_dict_copy", &[p.into()]);
        }
        let zero = lw.ctx.i64_type().const_zero();
        let out = lw.new_dict(sig.ret, zero)?;
        let (kt, vt) = parts(sig.ret);
        let unit = lw.ctx.bool_type().const_zero().into();
        super::generators::fold_loop(lw, src_t, a[0], unit, |lw, acc, pair, y, _| {
            let items = numba_typeinfer::conv::tuple_items(y).unwrap_or_default();
            let sv = pair.into_struct_value();
            let k = lw.b.build_extract_value(sv, 0, "").map_err(llvm_err)?;
            let v = lw.b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
            let k = lw.cast(k, items[0], kt)?;
            let v = lw.cast(v, items[1], vt)?;
            lw.dict_set(out, kt, vt, k, v)?;
            lw.decref(y, pair)?;
            Ok(acc)
        })?;
        Ok(out)
    });
    // `Dict.empty(key_type, value_type, n_keys=0)` and Numba's `dictobject.new_dict`.
    for k in [
        "numba_rs.typed.Dict.empty",
        "numba.typed.dictobject.new_dict",
    ] {
        r.register(key(k), Args::Variadic(any), |lw, sig, a| {
            let n = match (a.get(2), sig.args.get(2)) {
                (Some(&n), Some(&t)) => lw.cast(n, t, INT64)?.into_int_value(),
                _ => lw.ctx.i64_type().const_zero(),
            };
            lw.new_dict(sig.ret, n)
        });
    }
    r.register(ImplKey::GetItem, Args::Exact(vec![d, any]), |lw, sig, a| {
        let (kt, vt) = parts(sig.args[0]);
        let at = lw.dict_lookup(a[0], kt, a[1])?;
        let missing = lw.b.build_is_null(at, "").map_err(llvm_err)?;
        lw.raise_value_if(missing, "KeyError", a[1], kt)?;
        // Inside a `try` the KeyError is pending and control goes on to the handler's
        // check: read a zeroed value then, not through the null entry (a segfault).
        // Elsewhere the raise has left the function.
        let at = if lw.try_depth.is_some() {
            let mt = crate::model::memory_type(lw.ctx, vt)?;
            let zeroed = lw.alloca_in_entry(mt, "missing")?;
            lw.b.build_store(zeroed, mt.const_zero())
                .map_err(llvm_err)?;
            lw.b.build_select(missing, zeroed, at, "")
                .map_err(llvm_err)?
                .into_pointer_value()
        } else {
            at
        };
        // Borrowed, as a list's item.
        lw.list_read(vt, at)
    });
    r.register(
        ImplKey::SetItem,
        Args::Exact(vec![d, any, any]),
        |lw, sig, a| {
            let (kt, vt) = parts(sig.args[0]);
            let k = lw.cast(a[1], lowered(sig.args[1]), kt)?;
            let from = lowered(sig.args[2]);
            if numba_typeinfer::dicts::literal_list_into(from, vt) {
                // A written-out list compiled as a tuple: the list it stands for.
                let items = numba_typeinfer::conv::tuple_items(from).unwrap_or_default();
                let sv = a[2].into_struct_value();
                let mut vals = Vec::with_capacity(items.len());
                for (i, &t) in items.iter().enumerate() {
                    let x =
                        lw.b.build_extract_value(sv, i as u32, "")
                            .map_err(llvm_err)?;
                    vals.push((x, t));
                }
                let list = super::lists::build(lw, vt, &vals)?;
                lw.dict_set(a[0], kt, vt, k, list)?;
                lw.decref(vt, list)?;
                return Ok(lw.ghost());
            }
            let v = lw.cast(a[2], from, vt)?;
            lw.dict_set(a[0], kt, vt, k, v)?;
            Ok(lw.ghost())
        },
    );
    r.register(
        key("dict.__setitem__"),
        Args::Exact(vec![d, any, any]),
        |lw, sig, a| {
            let (kt, vt) = parts(sig.args[0]);
            lw.dict_set(a[0], kt, vt, a[1], a[2])?;
            Ok(lw.ghost())
        },
    );
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![TypePat::Pred(|t| is_dict(t) || is_view(t)), any]),
        |lw, sig, a| {
            let (kt, _) = parts(sig.args[0]);
            let at = lw.dict_lookup(a[0], kt, a[1])?;
            Ok(lw.b.build_is_not_null(at, "").map_err(llvm_err)?.into())
        },
    );
    for op in [BinOp::Eq, BinOp::Ne] {
        r.register(ImplKey::BinOp(op), Args::Exact(vec![d, d]), equal);
    }
    r.register(
        ImplKey::GetIter,
        Args::Exact(vec![TypePat::Pred(|t| is_dict(t) || is_view(t))]),
        dict_iter,
    );
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(
            |t| matches!(t.get(), Type::ArrayIter(s) if is_dict(s) || is_view(s)),
        )]),
        dict_next,
    );
    for (m, _) in [("keys", 0), ("values", 1), ("items", 2)] {
        // A view is the dict itself (a new reference, as a call's result).
        r.register(
            key(&format!("dict.{m}")),
            Args::Exact(vec![d]),
            |lw, sig, a| {
                lw.incref(sig.args[0], a[0])?;
                Ok(a[0])
            },
        );
    }
    r.register(key("dict.get"), Args::Variadic(any), |lw, sig, a| {
        let (kt, vt) = parts(sig.args[0]);
        let at = lw.dict_lookup(a[0], kt, a[1])?;
        let found = lw.b.build_is_not_null(at, "").map_err(llvm_err)?;
        let ret = lowered(sig.ret);
        found_or_default(
            lw,
            found,
            ret,
            |lw| {
                // The stored value, with a reference of its own (a call's result).
                let v = lw.list_read(vt, at)?;
                lw.incref(vt, v)?;
                lw.cast(v, vt, ret)
            },
            |lw| default_value(lw, sig, a, ret),
        )
    });
    r.register(
        key("dict.setdefault"),
        Args::Exact(vec![d, any, any]),
        |lw, sig, a| {
            let (kt, vt) = parts(sig.args[0]);
            let kb = lw.set_item_buffer(kt, a[1])?;
            let vb = lw.set_item_buffer(vt, a[2])?;
            let p = lw.list_payload(a[0])?;
            let ptr = lw.ctx.ptr_type(AddressSpace::default());
            let f = lw.runtime_fn(
                "numba_rs_dict_setdefault",
                ptr.fn_type(&[ptr.into(), ptr.into(), ptr.into()], false),
            );
            let at = lw
                .call_value(f, &[p.into(), kb.into(), vb.into()])?
                .into_pointer_value();
            let failed = lw.b.build_is_null(at, "").map_err(llvm_err)?;
            lw.raise_const_if(failed, "MemoryError", &["Allocation failed"])?;
            let v = lw.list_read(vt, at)?;
            lw.incref(vt, v)?;
            Ok(v)
        },
    );
    r.register(key("dict.pop"), Args::Variadic(any), pop);
    r.register(key("dict.popitem"), Args::Exact(vec![d]), |lw, sig, a| {
        let (kt, vt) = parts(sig.args[0]);
        let kb = lw.slot_buffer(kt, "popitem.key")?;
        let vb = lw.slot_buffer(vt, "popitem.value")?;
        let p = lw.list_payload(a[0])?;
        let found = lw.set_call_i32("numba_rs_dict_popitem", &[p.into(), kb.into(), vb.into()])?;
        let empty =
            lw.b.build_int_compare(IntPredicate::EQ, found, lw.ctx.i32_type().const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(empty, "KeyError", &["popitem(): dictionary is empty"])?;
        // The references pass to the tuple.
        let k = lw.list_read(kt, kb)?;
        let v = lw.list_read(vt, vb)?;
        lw.make_struct(lowered(sig.ret), &[k, v])
    });
    r.register(key("dict.update"), Args::Exact(vec![d, d]), |lw, _, a| {
        let (x, y) = (lw.list_payload(a[0])?, lw.list_payload(a[1])?);
        lw.list_status_call("numba_rs_dict_update", &[x.into(), y.into()])?;
        Ok(lw.ghost())
    });
    r.register(key("dict.clear"), Args::Exact(vec![d]), |lw, _, a| {
        let p = lw.list_payload(a[0])?;
        lw.list_status_call("numba_rs_dict_clear", &[p.into()])?;
        Ok(lw.ghost())
    });
    r.register(key("dict.copy"), Args::Exact(vec![d]), |lw, _, a| {
        let p = lw.list_payload(a[0])?;
        lw.container_from("numba_rs_dict_copy", &[p.into()])
    });
}

impl<'ctx> FnLower<'ctx, '_> {
    /// A stack buffer for one value of `t` in slot form.
    fn slot_buffer(&self, t: TypeId, name: &str) -> R<PointerValue<'ctx>> {
        let words = boundary_shape(t)?.slots() as u32;
        self.alloca_in_entry(self.ctx.i64_type().array_type(words.max(1)).into(), name)
    }

    /// A new empty dict of type `dict_t` with room for `n_keys` keys.
    pub(crate) fn new_dict(
        &mut self,
        dict_t: TypeId,
        n_keys: IntValue<'ctx>,
    ) -> R<BasicValueEnum<'ctx>> {
        let (kt, vt) = parts(dict_t);
        if kt == UNDEFINED || vt == UNDEFINED {
            return Err(self.unsupported(format!(
                "cannot make a dict of imprecise type {dict_t}: store into it or give it types"
            )));
        }
        let i64t = self.ctx.i64_type();
        let kw = i64t.const_int(boundary_shape(kt)?.slots() as u64, false);
        let vw = i64t.const_int(boundary_shape(vt)?.slots() as u64, false);
        let prog = self.key_program_ptr(kt)?;
        let krefs = self.ref_map_ptr(kt)?;
        let vrefs = self.ref_map_ptr(vt)?;
        self.container_from(
            "numba_rs_dict_new",
            &[
                kw.into(),
                vw.into(),
                prog.into(),
                krefs.into(),
                vrefs.into(),
                n_keys.into(),
            ],
        )
    }

    /// The value stored under `k` (of the key type), or null.
    fn dict_lookup(
        &mut self,
        dv: BasicValueEnum<'ctx>,
        kt: TypeId,
        k: BasicValueEnum<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        let kb = self.set_item_buffer(kt, k)?;
        let p = self.list_payload(dv)?;
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let f = self.runtime_fn(
            "numba_rs_dict_lookup",
            ptr.fn_type(&[ptr.into(), ptr.into()], false),
        );
        Ok(self
            .call_value(f, &[p.into(), kb.into()])?
            .into_pointer_value())
    }

    /// `d[k] = v` with `k` and `v` of the dict's types (borrowed: the dict takes its own
    /// references).
    pub(crate) fn dict_set(
        &mut self,
        dv: BasicValueEnum<'ctx>,
        kt: TypeId,
        vt: TypeId,
        k: BasicValueEnum<'ctx>,
        v: BasicValueEnum<'ctx>,
    ) -> R<()> {
        // A borrowed array value gets a MemInfo of its own first (the dict outlives the
        // call); the dict then takes its own reference and this one is dropped. Other
        // values go in as they are.
        let adopt = crate::nrt::may_borrow_array(vt);
        let v = if adopt { self.own_ref(vt, v)? } else { v };
        let kb = self.set_item_buffer(kt, k)?;
        let vb = self.set_item_buffer(vt, v)?;
        let p = self.list_payload(dv)?;
        self.list_status_call("numba_rs_dict_setitem", &[p.into(), kb.into(), vb.into()])?;
        if adopt {
            self.decref(vt, v)?;
        }
        Ok(())
    }

    /// `del d[k]` (KeyError with the key when absent).
    pub(crate) fn dict_delitem(
        &mut self,
        dict_t: TypeId,
        dv: BasicValueEnum<'ctx>,
        index_t: TypeId,
        k: BasicValueEnum<'ctx>,
    ) -> R<()> {
        let (kt, _) = parts(dict_t);
        let k = self.cast(k, lowered(index_t), kt)?;
        let kb = self.set_item_buffer(kt, k)?;
        let p = self.list_payload(dv)?;
        let found = self.set_call_i32("numba_rs_dict_delitem", &[p.into(), kb.into()])?;
        let missing = self
            .b
            .build_int_compare(
                IntPredicate::EQ,
                found,
                self.ctx.i32_type().const_zero(),
                "",
            )
            .map_err(llvm_err)?;
        self.raise_value_if(missing, "KeyError", k, kt)
    }
}

/// `d.pop(k)` (KeyError when absent) and `d.pop(k, default)`.
fn pop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (kt, vt) = parts(sig.args[0]);
    let kb = lw.set_item_buffer(kt, a[1])?;
    let vb = lw.slot_buffer(vt, "pop.value")?;
    let p = lw.list_payload(a[0])?;
    let found = lw.set_call_i32("numba_rs_dict_pop", &[p.into(), kb.into(), vb.into()])?;
    let missing =
        lw.b.build_int_compare(IntPredicate::EQ, found, lw.ctx.i32_type().const_zero(), "")
            .map_err(llvm_err)?;
    let ret = lowered(sig.ret);
    if sig.args.len() < 3 {
        lw.raise_value_if(missing, "KeyError", a[1], kt)?;
        // The value's references pass to the caller.
        return lw.list_read(vt, vb);
    }
    let found = lw.b.build_not(missing, "").map_err(llvm_err)?;
    found_or_default(
        lw,
        found,
        ret,
        // The popped value's references pass to the caller.
        |lw| {
            let v = lw.list_read(vt, vb)?;
            lw.cast(v, vt, ret)
        },
        |lw| default_value(lw, sig, a, ret),
    )
}

/// `found ? then() : otherwise()` as a value of type `ret`, each side in its own block.
fn found_or_default<'ctx, 'a>(
    lw: &mut FnLower<'ctx, 'a>,
    found: IntValue<'ctx>,
    ret: TypeId,
    then: impl FnOnce(&mut FnLower<'ctx, 'a>) -> R<BasicValueEnum<'ctx>>,
    otherwise: impl FnOnce(&mut FnLower<'ctx, 'a>) -> R<BasicValueEnum<'ctx>>,
) -> R<BasicValueEnum<'ctx>> {
    let ty = crate::model::value_type(lw.ctx, ret)?;
    let out = lw.alloca_in_entry(ty, "dict.found_or_default")?;
    let (yes, no, done) = (
        lw.new_block("dict.found"),
        lw.new_block("dict.missing"),
        lw.new_block("dict.done"),
    );
    lw.b.build_conditional_branch(found, yes, no)
        .map_err(llvm_err)?;
    lw.b.position_at_end(yes);
    let v = then(lw)?;
    lw.b.build_store(out, v).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(no);
    let v = otherwise(lw)?;
    lw.b.build_store(out, v).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    lw.b.build_load(ty, out, "").map_err(llvm_err)
}

/// The default argument (`a[2]`, a new reference for the result) of `get`/`pop` as a
/// `ret`, or None when there is none.
fn default_value<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    ret: TypeId,
) -> R<BasicValueEnum<'ctx>> {
    match (a.get(2), sig.args.get(2)) {
        (Some(&dv), Some(&dt)) => {
            lw.incref(dt, dv)?;
            lw.cast(dv, lowered(dt), ret)
        }
        _ => {
            let none = lw.ghost();
            lw.cast(none, NONE, ret)
        }
    }
}

/// `d == e`, `d != e`: the same keys with equal values.
fn equal<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, vt) = parts(sig.args[0]);
    if sig.args[0] != sig.args[1] {
        return Err(lw.unsupported(format!(
            "comparing {} with {} is not supported by numba-rs yet",
            sig.args[0], sig.args[1]
        )));
    }
    let prog = crate::sets::key_program(&boundary_shape(vt)?).ok_or_else(|| {
        lw.unsupported(format!(
            "comparing dicts of {vt} values is not supported by numba-rs yet"
        ))
    })?;
    let prog = lw.key_program_ptr_of(vt, prog)?;
    let (x, y) = (lw.list_payload(a[0])?, lw.list_payload(a[1])?);
    let r = lw.set_call_i32("numba_rs_dict_equal", &[x.into(), y.into(), prog.into()])?;
    let pred = if binop_is_ne(&sig.key) {
        IntPredicate::EQ
    } else {
        IntPredicate::NE
    };
    Ok(lw
        .b
        .build_int_compare(pred, r, lw.ctx.i32_type().const_zero(), "")
        .map_err(llvm_err)?
        .into())
}

fn binop_is_ne(k: &ImplKey) -> bool {
    matches!(k, ImplKey::BinOp(BinOp::Ne))
}

/// `iter(d)`, `iter(d.keys())`...: position 0, the dict, its size now.
fn dict_iter<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = crate::model::iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "dict_iter")?;
    let i64t = lw.ctx.i64_type();
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, i64t.const_zero()).map_err(llvm_err)?;
    let pd =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pd, a[0]).map_err(llvm_err)?;
    let n = lw.list_len(a[0])?;
    let pn =
        lw.b.build_struct_gep(st, storage, 2, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pn, n).map_err(llvm_err)?;
    Ok(storage.into())
}

/// The next key, value or `(key, value)` in insertion order (borrowed); RuntimeError
/// when the dict changed size since iteration began, as CPython's.
fn dict_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::ArrayIter(src) = t.get() else {
        return Err(lw.unsupported("expected a dict iterator"));
    };
    let kind = match src.get() {
        Type::DictView { kind, .. } => kind,
        _ => 0,
    };
    let (kt, vt) = parts(src);
    let st = crate::model::iterator_storage(lw.ctx, t)?;
    let storage = a[0].into_pointer_value();
    let i64t = lw.ctx.i64_type();
    let gep =
        |lw: &FnLower<'ctx, '_>, i| lw.b.build_struct_gep(st, storage, i, "").map_err(llvm_err);
    let (pi, pd, pn) = (gep(lw, 0)?, gep(lw, 1)?, gep(lw, 2)?);
    let dv =
        lw.b.build_load(list::struct_type(lw.ctx), pd, "")
            .map_err(llvm_err)?;
    let p = lw.list_payload(dv)?;
    let now = lw.payload_i64(p, crate::dicts::offset::USED)?;
    let then =
        lw.b.build_load(i64t, pn, "")
            .map_err(llvm_err)?
            .into_int_value();
    let changed =
        lw.b.build_int_compare(IntPredicate::NE, now, then, "")
            .map_err(llvm_err)?;
    lw.raise_const_if(
        changed,
        "RuntimeError",
        &["dictionary changed size during iteration"],
    )?;
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_dict_next",
        ptr.fn_type(&[ptr.into(), ptr.into()], false),
    );
    let at = lw
        .call_value(f, &[p.into(), pi.into()])?
        .into_pointer_value();
    let valid = lw.b.build_is_not_null(at, "").map_err(llvm_err)?;
    let item_t = numba_typeinfer::numpy::iter_yield(t).unwrap_or(kt);
    let out = lw.alloca_in_entry(crate::model::value_type(lw.ctx, item_t)?, "dict.next")?;
    lw.b.build_store(out, crate::model::value_type(lw.ctx, item_t)?.const_zero())
        .map_err(llvm_err)?;
    let read = lw.new_block("dict.read");
    let cont = lw.new_block("dict.cont");
    lw.b.build_conditional_branch(valid, read, cont)
        .map_err(llvm_err)?;
    lw.b.position_at_end(read);
    let kw = lw.payload_i64(p, crate::dicts::offset::KEY_WORDS)?;
    let off =
        lw.b.build_int_mul(kw, i64t.const_int(8, false), "")
            .map_err(llvm_err)?;
    // SAFETY (of the generated code): the value follows the key's slots in the entry.
    let vat = unsafe {
        lw.b.build_in_bounds_gep(lw.ctx.i8_type(), at, &[off], "value")
            .map_err(llvm_err)?
    };
    let v = match kind {
        0 => lw.list_read(kt, at)?,
        1 => lw.list_read(vt, vat)?,
        _ => {
            let k = lw.list_read(kt, at)?;
            let v = lw.list_read(vt, vat)?;
            lw.make_struct(item_t, &[k, v])?
        }
    };
    lw.b.build_store(out, v).map_err(llvm_err)?;
    lw.b.build_unconditional_branch(cont).map_err(llvm_err)?;
    lw.b.position_at_end(cont);
    let v =
        lw.b.build_load(crate::model::value_type(lw.ctx, item_t)?, out, "")
            .map_err(llvm_err)?;
    lw.make_struct(sig.ret, &[v, valid.into()])
}

/// A built dict's key and value, each with its type.
type Pair<'ctx> = (
    (BasicValueEnum<'ctx>, TypeId),
    (BasicValueEnum<'ctx>, TypeId),
);

/// `{k1: v1, ...}`: a new dict of these items, in order (a repeated key keeps its first
/// place and its last value, as Python's).
pub(crate) fn build<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dict_t: TypeId,
    items: &[Pair<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    if let Some((keys, values)) = numba_typeinfer::dicts::literal_parts(dict_t) {
        // The last value given for each key, in the keys' order; the tuple takes a
        // reference to each.
        let mut vals = Vec::with_capacity(keys.len());
        for (k, &vt) in keys.iter().zip(&values) {
            let &(_, (v, from)) = items
                .iter()
                .rev()
                .find(|((_, kt), _)| matches!(kt.get(), Type::StringLiteral(s) if s == *k))
                .ok_or_else(|| lw.unsupported("a literal dict's key without a value"))?;
            let v = lw.cast(v, from, vt)?;
            lw.incref(vt, v)?;
            vals.push(v);
        }
        return lw.make_struct(dict_t, &vals);
    }
    let (kt, vt) = parts(dict_t);
    let n = lw.ctx.i64_type().const_int(items.len() as u64, false);
    let out = lw.new_dict(dict_t, n)?;
    // A constant key given again: only its last value is stored (typing saw only it).
    let keys: Vec<TypeId> = items.iter().map(|p| p.0 .1).collect();
    let items: Vec<Pair<'ctx>> = numba_typeinfer::dicts::display_stores(&keys)
        .into_iter()
        .map(|(k, v)| (items[k].0, items[v].1))
        .collect();
    for &((k, ktv), (v, vtv)) in &items {
        let k = lw.cast(k, ktv, kt)?;
        let v = lw.cast(v, vtv, vt)?;
        lw.dict_set(out, kt, vt, k, v)?;
    }
    Ok(out)
}

/// Python truthiness of a dict: not empty.
pub(crate) fn truth<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    dv: BasicValueEnum<'ctx>,
) -> R<IntValue<'ctx>> {
    let n = lw.list_len(dv)?;
    lw.b.build_int_compare(IntPredicate::NE, n, lw.ctx.i64_type().const_zero(), "")
        .map_err(llvm_err)
}
