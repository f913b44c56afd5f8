//! Iteration: `getiter` and `iternext` over ranges, `enumerate`, `zip` and homogeneous
//! tuples. An iterator is a pointer to its state ([`iterator_storage`]); `iternext` gives a
//! (value, valid) pair.

use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::model::{iterator_storage, members, value_type};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    r.register(
        ImplKey::GetIter,
        Args::Exact(vec![TypePat::Exact(RANGE_STATE64)]),
        range_iter,
    );
    r.register(
        ImplKey::GetIter,
        Args::Exact(vec![TypePat::Iterator]),
        |_, _, a| Ok(a[0]),
    );
    r.register(
        ImplKey::GetIter,
        Args::Exact(vec![TypePat::UniTuple]),
        tuple_iter,
    );
    r.register(
        ImplKey::GetIter,
        Args::Exact(vec![TypePat::Pred(|t| {
            matches!(t.get(), Type::NamedUniTuple { .. })
        })]),
        tuple_iter,
    );
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Exact(RANGE_ITER64)]),
        range_next,
    );
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(|t| {
            matches!(t.get(), Type::Enumerate(_))
        })]),
        enumerate_next,
    );
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(|t| matches!(t.get(), Type::Zip(_)))]),
        zip_next,
    );
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(
            |t| matches!(t.get(), Type::ArrayIter(s) if matches!(s.get(), Type::UniTuple(..) | Type::NamedUniTuple { .. })),
        )]),
        tuple_next,
    );
}

fn range_iter<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = iterator_storage(lw.ctx, sig.ret)?;
    // One iterator state per getiter site: the next value, the items left and the
    // step (Numba's `RangeIter`: counting down the items left keeps the loop's counter
    // a plain add recurrence for LLVM, and an exhausted iterator stays exhausted).
    let storage = lw.alloca_in_entry(st.into(), "range_iter")?;
    let sv = a[0].into_struct_value();
    let get = |lw: &FnLower<'ctx, '_>, i| -> R<IntValue<'ctx>> {
        Ok(lw
            .b
            .build_extract_value(sv, i, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    let (start, stop, step) = (get(lw, 0)?, get(lw, 1)?, get(lw, 2)?);
    let count = super::builtins::range_length(lw, start, stop, step)?;
    for (i, v) in [start, count, step].into_iter().enumerate() {
        let p =
            lw.b.build_struct_gep(st, storage, i as u32, "")
                .map_err(llvm_err)?;
        lw.b.build_store(p, v).map_err(llvm_err)?;
    }
    Ok(storage.into())
}

/// A (value, valid) pair of type `pair_t`.
fn pair<'ctx>(
    lw: &FnLower<'ctx, '_>,
    pair_t: TypeId,
    v: BasicValueEnum<'ctx>,
    valid: IntValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    lw.make_struct(pair_t, &[v, valid.into()])
}

fn range_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let st = iterator_storage(lw.ctx, RANGE_ITER64)?;
    let storage = a[0].into_pointer_value();
    let b = &lw.b;
    let gep = |i| b.build_struct_gep(st, storage, i, "").map_err(llvm_err);
    let (pc, ps, pst) = (gep(0)?, gep(1)?, gep(2)?);
    let load = |p| -> R<IntValue<'ctx>> {
        Ok(b.build_load(i64t, p, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    let (cur, left, step) = (load(pc)?, load(ps)?, load(pst)?);
    let valid = b
        .build_int_compare(IntPredicate::SGT, left, i64t.const_zero(), "valid")
        .map_err(llvm_err)?;
    // Advanced unconditionally: past the end the count only goes further below zero.
    let next = b.build_int_add(cur, step, "").map_err(llvm_err)?;
    b.build_store(pc, next).map_err(llvm_err)?;
    let fewer = b
        .build_int_sub(left, i64t.const_int(1, false), "")
        .map_err(llvm_err)?;
    b.build_store(ps, fewer).map_err(llvm_err)?;
    pair(lw, sig.ret, cur.into(), valid)
}

/// `next(inner)` through the registry: the inner iterator's pair.
pub(crate) fn next_of<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    it_t: TypeId,
    it: BasicValueEnum<'ctx>,
) -> R<(BasicValueEnum<'ctx>, IntValue<'ctx>)> {
    let y = numba_typeinfer::numpy::iter_yield(it_t)
        .ok_or_else(|| lw.unsupported(format!("cannot iterate over {it_t}")))?;
    let sig = Signature {
        ret: intern(Type::Pair(y, BOOLEAN)),
        args: vec![it_t],
        key: ImplKey::IterNext,
    };
    let p = lw.call_impl(&sig, &[it])?.into_struct_value();
    let v = lw.b.build_extract_value(p, 0, "").map_err(llvm_err)?;
    let ok =
        lw.b.build_extract_value(p, 1, "")
            .map_err(llvm_err)?
            .into_int_value();
    Ok((v, ok))
}

fn enumerate_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::Enumerate(inner_t) = t.get() else {
        return Err(lw.unsupported("expected an enumerate iterator"));
    };
    let st = iterator_storage(lw.ctx, t)?;
    let storage = a[0].into_pointer_value();
    let i64t = lw.ctx.i64_type();
    let pc =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    let pi =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    let count =
        lw.b.build_load(i64t, pc, "count")
            .map_err(llvm_err)?
            .into_int_value();
    let inner =
        lw.b.build_load(value_type(lw.ctx, inner_t)?, pi, "")
            .map_err(llvm_err)?;
    let (v, ok) = next_of(lw, inner_t, inner)?;
    let one = i64t.const_int(1, false);
    let inc = lw.b.build_int_add(count, one, "").map_err(llvm_err)?;
    let newc = lw.b.build_select(ok, inc, count, "").map_err(llvm_err)?;
    lw.b.build_store(pc, newc).map_err(llvm_err)?;
    let item_t = members(sig.ret)[0];
    let item = lw.make_struct(item_t, &[count.into(), v])?;
    pair(lw, sig.ret, item, ok)
}

fn zip_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::Zip(inners) = t.get() else {
        return Err(lw.unsupported("expected a zip iterator"));
    };
    let st = iterator_storage(lw.ctx, t)?;
    let storage = a[0].into_pointer_value();
    let mut vals = Vec::new();
    // `zip()` of nothing is empty.
    let mut all_ok = lw
        .ctx
        .bool_type()
        .const_int(u64::from(!inners.is_empty()), false);
    // Python's zip stops at the first exhausted iterator without advancing the later ones.
    for (i, &it_t) in inners.iter().enumerate() {
        let p =
            lw.b.build_struct_gep(st, storage, i as u32, "")
                .map_err(llvm_err)?;
        let it =
            lw.b.build_load(value_type(lw.ctx, it_t)?, p, "")
                .map_err(llvm_err)?;
        let cont = lw.new_block("zip.next");
        let after = lw.new_block("zip.after");
        let from =
            lw.b.get_insert_block()
                .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
        lw.b.build_conditional_branch(all_ok, cont, after)
            .map_err(llvm_err)?;
        lw.b.position_at_end(cont);
        let (v, ok) = next_of(lw, it_t, it)?;
        let cont_end =
            lw.b.get_insert_block()
                .ok_or_else(|| crate::LowerError::Llvm("no block".into()))?;
        lw.b.build_unconditional_branch(after).map_err(llvm_err)?;
        lw.b.position_at_end(after);
        let phi = lw.b.build_phi(lw.ctx.bool_type(), "").map_err(llvm_err)?;
        let f = lw.ctx.bool_type().const_zero();
        phi.add_incoming(&[(&f, from), (&ok, cont_end)]);
        let vt = v.get_type();
        let vphi = lw.b.build_phi(vt, "").map_err(llvm_err)?;
        let undef = crate::model::value_type(lw.ctx, members(members(sig.ret)[0])[i])?;
        let u = undef.const_zero();
        vphi.add_incoming(&[(&u, from), (&v, cont_end)]);
        all_ok = phi.as_basic_value().into_int_value();
        vals.push(vphi.as_basic_value());
    }
    let item = lw.make_struct(members(sig.ret)[0], &vals)?;
    pair(lw, sig.ret, item, all_ok)
}

fn tuple_iter<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "tuple_iter")?;
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, lw.ctx.i64_type().const_zero())
        .map_err(llvm_err)?;
    let pt =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pt, a[0]).map_err(llvm_err)?;
    Ok(storage.into())
}

fn tuple_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let Type::ArrayIter(tup) = t.get() else {
        return Err(lw.unsupported("expected a tuple iterator"));
    };
    let n = members(tup).len() as u64;
    let st = iterator_storage(lw.ctx, t)?;
    let storage = a[0].into_pointer_value();
    let i64t = lw.ctx.i64_type();
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    let pt =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    let idx =
        lw.b.build_load(i64t, pi, "")
            .map_err(llvm_err)?
            .into_int_value();
    let valid =
        lw.b.build_int_compare(IntPredicate::SLT, idx, i64t.const_int(n, false), "")
            .map_err(llvm_err)?;
    let next =
        lw.b.build_int_add(idx, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    // Advanced unconditionally: an exhausted iterator stays exhausted (the index only
    // grows), and a plain `i + 1` lets LLVM see the trip count and unroll the loop.
    lw.b.build_store(pi, next).map_err(llvm_err)?;
    // Clamp so an exhausted iterator still reads inside the tuple.
    let last = i64t.const_int(n.saturating_sub(1), false);
    let safe =
        lw.b.build_select(valid, idx, last, "")
            .map_err(llvm_err)?
            .into_int_value();
    let elem_t = value_type(lw.ctx, members(tup).first().copied().unwrap_or(INT64))?;
    if (1..=16).contains(&n) {
        // A chain of selects over the loaded tuple keeps every access at a constant
        // offset, so SROA puts the iterator in registers and `for d in (-1, 0, 1)`
        // unrolls to constants (a variable-index load pins it in memory).
        let tv =
            lw.b.build_load(value_type(lw.ctx, tup)?, pt, "")
                .map_err(llvm_err)?;
        let at = |lw: &mut FnLower<'ctx, '_>, k: u32| -> R<BasicValueEnum<'ctx>> {
            match tv {
                BasicValueEnum::StructValue(sv) => {
                    lw.b.build_extract_value(sv, k, "").map_err(llvm_err)
                }
                BasicValueEnum::ArrayValue(av) => {
                    lw.b.build_extract_value(av, k, "").map_err(llvm_err)
                }
                _ => Err(lw.unsupported("tuple iterator over a non-aggregate")),
            }
        };
        let mut v = at(lw, n as u32 - 1)?;
        for k in (0..n - 1).rev() {
            let is_k =
                lw.b.build_int_compare(IntPredicate::EQ, safe, i64t.const_int(k, false), "")
                    .map_err(llvm_err)?;
            let vk = at(lw, k as u32)?;
            v = lw.b.build_select(is_k, vk, v, "").map_err(llvm_err)?;
        }
        return pair(lw, sig.ret, v, valid);
    }
    // A homogeneous tuple's struct has the layout of an array of its element.
    let arr_t = inkwell::types::BasicType::array_type(&elem_t, n as u32);
    // SAFETY (of the generated code): `safe` is within 0..n.
    let ep = unsafe {
        lw.b.build_in_bounds_gep(arr_t, pt, &[i64t.const_zero(), safe], "")
            .map_err(llvm_err)?
    };
    let v = lw.b.build_load(elem_t, ep, "").map_err(llvm_err)?;
    pair(lw, sig.ret, v, valid)
}
