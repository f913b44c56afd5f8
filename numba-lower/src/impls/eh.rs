//! `try`/`except`: Numba's exception-handling intrinsics (`numba.core.unsafe.eh`).
//!
//! A raise inside a `try` stores its record through `excinfo` and carries on (the
//! exception is *pending*); the interpreter follows every instruction that may raise with
//! `exception_check`, which branches to the handler when one is pending. Leaving the try
//! block (`end_try_block`) moves a pending exception into the function's *caught* slot,
//! where `exception_match` tests its class and from which an unmatched handler re-raises.
//! The caught record is freed when it is replaced or when the function returns.

use inkwell::values::BasicValueEnum;
use inkwell::{AddressSpace, IntPredicate};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, LowerError, R};

fn key(k: &str) -> ImplKey {
    ImplKey::Function(format!("intrinsic.{k}"))
}

pub(crate) fn register(r: &mut Registry) {
    r.register(key("mark_try_block"), Args::Exact(vec![]), mark_try_block);
    r.register(key("end_try_block"), Args::Exact(vec![]), end_try_block);
    r.register(key("exception_check"), Args::Exact(vec![]), exception_check);
    r.register(
        key("exception_match"),
        Args::Exact(vec![TypePat::Any, TypePat::Any]),
        exception_match,
    );
}

fn depth<'ctx>(lw: &FnLower<'ctx, '_>) -> R<inkwell::values::PointerValue<'ctx>> {
    lw.try_depth
        .ok_or_else(|| LowerError::Llvm("try intrinsic in a function without try blocks".into()))
}

fn mark_try_block<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let p = depth(lw)?;
    let i32t = lw.ctx.i32_type();
    let d =
        lw.b.build_load(i32t, p, "")
            .map_err(llvm_err)?
            .into_int_value();
    let d1 =
        lw.b.build_int_add(d, i32t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.b.build_store(p, d1).map_err(llvm_err)?;
    Ok(lw.ghost())
}

fn end_try_block<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let p = depth(lw)?;
    let i32t = lw.ctx.i32_type();
    let d =
        lw.b.build_load(i32t, p, "")
            .map_err(llvm_err)?
            .into_int_value();
    // A raise inside `try` reaches the handler through two `end_try_block`s: never
    // below zero.
    let d1 =
        lw.b.build_int_sub(d, i32t.const_int(1, false), "")
            .map_err(llvm_err)?;
    let pos =
        lw.b.build_int_compare(IntPredicate::SGT, d, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    let d1 =
        lw.b.build_select(pos, d1, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.b.build_store(p, d1).map_err(llvm_err)?;
    // Move a pending exception into the caught slot.
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let pending =
        lw.b.build_load(ptr, lw.excinfo, "pending")
            .map_err(llvm_err)?
            .into_pointer_value();
    let is_pending = lw.b.build_is_not_null(pending, "").map_err(llvm_err)?;
    let take = lw.new_block("exc.take");
    let done = lw.new_block("exc.taken");
    lw.b.build_conditional_branch(is_pending, take, done)
        .map_err(llvm_err)?;
    lw.b.position_at_end(take);
    lw.release_caught()?;
    let caught = lw
        .caught
        .ok_or_else(|| LowerError::Llvm("no caught slot".into()))?;
    lw.b.build_store(caught, pending).map_err(llvm_err)?;
    lw.b.build_store(lw.excinfo, ptr.const_null())
        .map_err(llvm_err)?;
    lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    Ok(lw.ghost())
}

fn exception_check<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let pending =
        lw.b.build_load(ptr, lw.excinfo, "")
            .map_err(llvm_err)?
            .into_pointer_value();
    Ok(lw
        .b
        .build_is_not_null(pending, "")
        .map_err(llvm_err)?
        .into())
}

/// `except Class:`: whether the caught exception is an instance of `Class`.
fn exception_match<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let Type::ExceptionClass(class) = sig.args[1].get() else {
        return Err(lw.unsupported("except needs an exception class"));
    };
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let caught = lw
        .caught
        .ok_or_else(|| LowerError::Llvm("no caught slot".into()))?;
    let rec = lw.b.build_load(ptr, caught, "").map_err(llvm_err)?;
    lw.counter += 1;
    let key =
        lw.b.build_global_string_ptr(&class, &format!(".exc.match.{}", lw.counter))
            .map_err(llvm_err)?
            .as_pointer_value();
    let f = lw.runtime_fn(
        "numba_rs_exc_match",
        lw.ctx.bool_type().fn_type(&[ptr.into(), ptr.into()], false),
    );
    lw.call_value(f, &[rec.into(), key.into()])
}
