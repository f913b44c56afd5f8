//! A call of a `with objmode(...)` body from nopython code (Numba's
//! `_lower_call_ObjModeDispatcher`). The arguments are packed into boundary slots (one
//! reference each handed over) and numba-py's `numba_rs_objmode_with` boxes them, runs
//! the object-mode body under the GIL and unboxes its outputs into slots, each holding
//! its own reference. A Python exception leaves the function at once with
//! `STATUS_EXC`, the error set, as Numba's `return_exc`: a nopython `try` does not
//! catch it.

use inkwell::values::BasicValueEnum;
use inkwell::{AddressSpace, IntPredicate};
use numba_typeinfer::Signature;

use crate::callconv::{boundary_shape, STATUS_EXC};
use crate::function::FnLower;
use crate::model::{lowered, model_of, SlotCodec};
use crate::{llvm_err, R};

pub(crate) const HELPER: &str = "numba_rs_objmode_with";

pub(super) fn call<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    id: u64,
    sig: &Signature,
    vals: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let mut nargs = 0usize;
    for &t in &sig.args {
        nargs += boundary_shape(t)?.slots();
    }
    let ret = lowered(sig.ret);
    let nout = boundary_shape(ret)?.slots();
    let argbuf = lw.alloca_in_entry(i64t.array_type(nargs.max(1) as u32).into(), "objargs")?;
    let outbuf = lw.alloca_in_entry(i64t.array_type(nout.max(1) as u32).into(), "objouts")?;
    let mut idx = 0u32;
    for (&t, &v) in sig.args.iter().zip(vals) {
        // The boxed object owns a reference of its own (Numba increfs: boxing steals).
        lw.incref(t, v)?;
        let t = lowered(t);
        let codec = SlotCodec {
            ctx: lw.ctx,
            b: &lw.b,
            slots: argbuf,
        };
        model_of(t)?.pack(&codec, t, v, &mut idx)?;
    }
    let addr = crate::objmode::api::address(HELPER)?;
    if !lw.externals.iter().any(|(n, _)| n == HELPER) {
        lw.externals.push((HELPER.to_string(), addr));
    }
    let f = lw.runtime_fn(
        HELPER,
        lw.ctx
            .i32_type()
            .fn_type(&[i64t.into(), ptr.into(), ptr.into()], false),
    );
    let status = lw
        .call_value(
            f,
            &[
                i64t.const_int(id, false).into(),
                argbuf.into(),
                outbuf.into(),
            ],
        )?
        .into_int_value();
    let failed =
        lw.b.build_int_compare(IntPredicate::NE, status, lw.ctx.i32_type().const_zero(), "")
            .map_err(llvm_err)?;
    let fail_bb = lw.new_block("objmode.fail");
    let ok_bb = lw.new_block("objmode.ok");
    lw.b.build_conditional_branch(failed, fail_bb, ok_bb)
        .map_err(llvm_err)?;
    lw.b.position_at_end(fail_bb);
    let exc = lw.ctx.i32_type().const_int(STATUS_EXC as u64, true);
    lw.b.build_return(Some(&exc)).map_err(llvm_err)?;
    lw.b.position_at_end(ok_bb);
    let codec = SlotCodec {
        ctx: lw.ctx,
        b: &lw.b,
        slots: outbuf,
    };
    let mut idx = 0u32;
    model_of(ret)?.unpack(&codec, ret, &mut idx)
}
