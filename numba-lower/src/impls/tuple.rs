//! Tuples: constant and run-time indexing, `len`, and `in`.

use inkwell::values::BasicValueEnum;
use inkwell::IntPredicate;
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::model::{members, value_type};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    r.register(
        ImplKey::StaticGetItem,
        Args::Exact(vec![TypePat::Tuple, TypePat::Any]),
        static_getitem,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![TypePat::UniTuple, TypePat::IntOrBool]),
        getitem,
    );
    r.register(
        ImplKey::Function("namedtuple".into()),
        Args::Variadic(TypePat::Any),
        construct,
    );
    r.register(
        ImplKey::Function("len".into()),
        Args::Exact(vec![TypePat::Tuple]),
        len,
    );
    for op in [
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ] {
        r.register(
            ImplKey::BinOp(op),
            Args::Exact(vec![TypePat::Tuple, TypePat::Tuple]),
            compare,
        );
    }
    r.register(
        ImplKey::BinOp(BinOp::Add),
        Args::Exact(vec![TypePat::Tuple, TypePat::Tuple]),
        concat,
    );
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![TypePat::Tuple, TypePat::Number]),
        contains,
    );
}

fn static_getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    if let Type::SliceLiteral(a0, b0, c0) = sig.args[1].get() {
        let items = members(sig.args[0]);
        let picked = slice_indices((a0, b0, c0), items.len())
            .ok_or_else(|| lw.unsupported("slice step cannot be zero"))?;
        let sv = a[0].into_struct_value();
        let mut vals = Vec::with_capacity(picked.len());
        for i in picked {
            vals.push(
                lw.b.build_extract_value(sv, i as u32, "")
                    .map_err(llvm_err)?,
            );
        }
        return lw.make_struct(crate::model::lowered(sig.ret), &vals);
    }
    let Type::IntegerLiteral(i) = sig.args[1].get() else {
        return Err(lw.unsupported("static_getitem needs a constant index"));
    };
    let n = members(sig.args[0]).len() as i64;
    let i = if i < 0 { i + n } else { i };
    if !(0..n).contains(&i) {
        return Err(lw.unsupported("tuple index out of range"));
    }
    lw.b.build_extract_value(a[0].into_struct_value(), i as u32, "")
        .map_err(llvm_err)
}

/// `t[i]` with a run-time index: negative indices wrap; out of range is an IndexError.
fn getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let t = sig.args[0];
    let n = members(t).len() as u64;
    let i64t = lw.ctx.i64_type();
    let idx = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
    let neg =
        lw.b.build_int_compare(IntPredicate::SLT, idx, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    let wrapped =
        lw.b.build_int_add(idx, i64t.const_int(n, false), "")
            .map_err(llvm_err)?;
    let idx =
        lw.b.build_select(neg, wrapped, idx, "")
            .map_err(llvm_err)?
            .into_int_value();
    let bad =
        lw.b.build_int_compare(IntPredicate::UGE, idx, i64t.const_int(n, false), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(bad, "IndexError", &["tuple index out of range"])?;
    // Inside a `try` execution continues past the raise: stay in bounds.
    let idx =
        lw.b.build_select(bad, i64t.const_zero(), idx, "")
            .map_err(llvm_err)?
            .into_int_value();
    let slot = lw.alloca_in_entry(value_type(lw.ctx, t)?, "tuple")?;
    lw.b.build_store(slot, a[0]).map_err(llvm_err)?;
    let elem_t = value_type(lw.ctx, lowered_ret(sig))?;
    let arr_t = inkwell::types::BasicType::array_type(&elem_t, n as u32);
    // SAFETY (of the generated code): idx was checked against n above.
    let p = unsafe {
        lw.b.build_in_bounds_gep(arr_t, slot, &[i64t.const_zero(), idx], "")
            .map_err(llvm_err)?
    };
    lw.b.build_load(elem_t, p, "").map_err(llvm_err)
}

fn lowered_ret(sig: &Signature) -> TypeId {
    crate::model::lowered(sig.ret)
}

fn len<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let n = members(sig.args[0]).len() as u64;
    Ok(lw.ctx.i64_type().const_int(n, false).into())
}

/// `item in tuple`: `==` against each element the item is comparable with.
fn contains<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let tup = a[0].into_struct_value();
    let item_t = sig.args[1];
    let mut found = lw.ctx.bool_type().const_zero();
    for (i, e) in members(sig.args[0]).into_iter().enumerate() {
        let e = crate::model::lowered(e);
        let Some(common) = numba_typeinfer::context::arith_type(&[e, item_t]) else {
            continue;
        };
        let x =
            lw.b.build_extract_value(tup, i as u32, "")
                .map_err(llvm_err)?;
        let x = lw.cast(x, e, common)?;
        let y = lw.cast(a[1], item_t, common)?;
        let eq = Signature {
            ret: BOOLEAN,
            args: vec![common, common],
            key: ImplKey::BinOp(BinOp::Eq),
        };
        let r = lw.call_impl(&eq, &[x, y])?.into_int_value();
        found = lw.b.build_or(found, r, "").map_err(llvm_err)?;
    }
    Ok(found.into())
}

/// `==` of two elements through the registry (their common type first).
fn element_op<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: BinOp,
    (x, xt): (BasicValueEnum<'ctx>, TypeId),
    (y, yt): (BasicValueEnum<'ctx>, TypeId),
) -> R<inkwell::values::IntValue<'ctx>> {
    let (xt, yt) = (crate::model::lowered(xt), crate::model::lowered(yt));
    let sig = lw
        .registry_sig(op, xt, yt)
        .ok_or_else(|| lw.unsupported(format!("cannot compare {xt} and {yt}")))?;
    let x = lw.cast(x, xt, sig.args[0])?;
    let y = lw.cast(y, yt, sig.args[1])?;
    Ok(lw.call_impl(&sig, &[x, y])?.into_int_value())
}

/// Tuple comparison as Python's: the first differing element decides; otherwise lengths.
fn compare<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = super::binop_of(&sig.key);
    let (lt, rt) = (members(sig.args[0]), members(sig.args[1]));
    let (l, r) = (a[0].into_struct_value(), a[1].into_struct_value());
    let bool_t = lw.ctx.bool_type();
    let n = lt.len().min(rt.len());
    // result = decided ? verdict : length comparison, scanning from the last element back.
    let len_cmp = |op: BinOp| -> bool {
        let (x, y) = (lt.len(), rt.len());
        match op {
            BinOp::Eq => x == y,
            BinOp::Ne => x != y,
            BinOp::Lt => x < y,
            BinOp::Le => x <= y,
            BinOp::Gt => x > y,
            _ => x >= y,
        }
    };
    let mut result = bool_t.const_int(u64::from(len_cmp(op)), false);
    for i in (0..n).rev() {
        let x =
            lw.b.build_extract_value(l, i as u32, "")
                .map_err(llvm_err)?;
        let y =
            lw.b.build_extract_value(r, i as u32, "")
                .map_err(llvm_err)?;
        let eq = element_op(lw, BinOp::Eq, (x, lt[i]), (y, rt[i]))?;
        let verdict = match op {
            BinOp::Eq => bool_t.const_zero(),
            BinOp::Ne => bool_t.const_int(1, false),
            // Strict or not, a differing element decides by `<` / `>`.
            BinOp::Lt | BinOp::Le => element_op(lw, BinOp::Lt, (x, lt[i]), (y, rt[i]))?,
            _ => element_op(lw, BinOp::Gt, (x, lt[i]), (y, rt[i]))?,
        };
        result =
            lw.b.build_select(eq, result, verdict, "")
                .map_err(llvm_err)?
                .into_int_value();
    }
    Ok(result.into())
}

fn concat<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let mut vals = Vec::new();
    let ret_members = members(sig.ret);
    for (k, v) in a.iter().enumerate() {
        let sv = v.into_struct_value();
        for (i, t) in members(sig.args[k]).into_iter().enumerate() {
            let x =
                lw.b.build_extract_value(sv, i as u32, "")
                    .map_err(llvm_err)?;
            let to = ret_members[vals.len()];
            vals.push(lw.cast(x, t, to)?);
        }
    }
    let out = lw.make_struct(sig.ret, &vals)?;
    // An operator returns a new reference: array items gain one each.
    lw.incref(sig.ret, out)?;
    Ok(out)
}

/// `Point(x, y)`: a namedtuple from its fields.
fn construct<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let mut vals = Vec::with_capacity(a.len());
    for ((&v, &from), to) in a.iter().zip(&sig.args).zip(members(sig.ret)) {
        vals.push(lw.cast(v, from, to)?);
    }
    let out = lw.make_struct(sig.ret, &vals)?;
    // A call returns a new reference: the fields it holds (arrays) gain one each, while
    // the caller's variables keep theirs.
    lw.incref(sig.ret, out)?;
    Ok(out)
}
