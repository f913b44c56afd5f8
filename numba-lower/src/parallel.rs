//! Lowering of numba-parfor's `parfor` statements: the parallel target (Numba's
//! `_lower_parfor_parallel_std` and `call_parallel_gufunc`).
//!
//! For each parfor:
//! 1. its body becomes a kernel function in the same module (numba-parfor's
//!    [`build_kernel`]: typed IR lowered by the ordinary walk, with NumPy's error model as
//!    Numba's gufuncs have it), `i32 kernel(ret*, excinfo**, params..., lo, hi)`;
//! 2. a worker `void worker(env*, lo, hi, slot)` unpacks the parameters from the
//!    environment the caller filled and runs the kernel over one division, storing its
//!    status, exception record and results (reduction partials, race values) in the
//!    division's slots;
//! 3. work below numba-nrt's measured inline threshold runs as one division on the
//!    calling thread; otherwise the caller asks the runtime how many divisions it
//!    deserves (`do_scheduling_signed`/`_unsigned`, Numba's names for numba-nrt's
//!    `numba_rs_parfor_divisions`), runs them on numba-nrt's pool
//!    (`numba_rs_parallel_for`), re-raises the first division's exception, and combines
//!    the reduction partials in division order (Numba's `reduction_add` /
//!    `reduction_mul`, the recorded `min`/`max` call replayed, the array and `argmin`/
//!    `argmax` combinations). Races take the value of the last division, as a serial loop would leave
//!    them when every iteration writes them.

use inkwell::module::Linkage;
use inkwell::types::BasicType;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue};
use inkwell::{AddressSpace, IntPredicate};
use numba_ir::{BinOp, ExtensionNode, VarId};
use numba_parfor::{build_kernel, Bound, Parfor, RedOp, PARFOR};
use numba_typeinfer::types::*;
use numba_typeinfer::ImplKey;

use crate::callconv::native_fn_type;
use crate::function::FnLower;
use crate::impls::Loop;
use crate::model::{lowered, memory_type, model_of, value_type};
use crate::registry::{Args, Registry};
use crate::{llvm_err, ErrorModel, LowerError, R};

pub(crate) fn register(r: &mut Registry) {
    r.register_extension(PARFOR, lower_parfor);
    r.register(
        ImplKey::Function("numba_rs.get_num_threads".into()),
        Args::Exact(vec![]),
        |lw, _, _| runtime_i64(lw, "numba_rs_get_num_threads"),
    );
    r.register(
        ImplKey::Function("numba_rs.get_thread_id".into()),
        Args::Exact(vec![]),
        |lw, _, _| runtime_i64(lw, "numba_rs_get_thread_id"),
    );
    r.register(
        ImplKey::Function("numba_rs.get_parallel_chunksize".into()),
        Args::Exact(vec![]),
        |lw, sig, _| {
            let v = runtime_i64(lw, "numba_rs_get_parallel_chunksize")?;
            lw.cast(v, INT64, sig.ret)
        },
    );
    r.register(
        ImplKey::Function("numba_rs.set_num_threads".into()),
        Args::Exact(vec![crate::registry::TypePat::Int]),
        set_num_threads,
    );
    r.register(
        ImplKey::Function("numba_rs.set_parallel_chunksize".into()),
        Args::Exact(vec![crate::registry::TypePat::Int]),
        set_parallel_chunksize,
    );
}

/// `set_num_threads(n)`: Numba's ValueError outside `1..=NUMBA_NUM_THREADS` (the bound
/// is this process's, as Numba bakes its configured count into the check).
fn set_num_threads<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &numba_typeinfer::Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let n = lw.cast(a[0], sig.args[0], INT64)?.into_int_value();
    let max = numba_nrt::parallel::config_num_threads() as u64;
    let low =
        lw.b.build_int_compare(IntPredicate::SLT, n, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    let high =
        lw.b.build_int_compare(IntPredicate::SGT, n, i64t.const_int(max, false), "")
            .map_err(llvm_err)?;
    let bad = lw.b.build_or(low, high, "").map_err(llvm_err)?;
    let msg = format!("The number of threads must be between 1 and {max}");
    lw.raise_const_if(bad, "ValueError", &[&msg])?;
    let f = lw.runtime_fn(
        "numba_rs_set_num_threads",
        lw.ctx.void_type().fn_type(&[i64t.into()], false),
    );
    lw.b.build_call(f, &[n.into()], "").map_err(llvm_err)?;
    Ok(lw.ghost())
}

/// `set_parallel_chunksize(n)`: the previous chunk size; Numba's ValueError below zero.
fn set_parallel_chunksize<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &numba_typeinfer::Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let n = lw.cast(a[0], sig.args[0], INT64)?.into_int_value();
    let neg = if sig.args[0].is_signed() {
        lw.b.build_int_compare(IntPredicate::SLT, n, i64t.const_zero(), "")
            .map_err(llvm_err)?
    } else {
        lw.ctx.bool_type().const_zero()
    };
    lw.raise_const_if(
        neg,
        "ValueError",
        &["chunksize must be greater than or equal to zero"],
    )?;
    let f = lw.runtime_fn(
        "numba_rs_set_parallel_chunksize",
        i64t.fn_type(&[i64t.into()], false),
    );
    let old = lw.call_value(f, &[n.into()])?;
    lw.cast(old, INT64, sig.ret)
}

fn runtime_i64<'ctx>(lw: &mut FnLower<'ctx, '_>, name: &str) -> R<BasicValueEnum<'ctx>> {
    let f = lw.runtime_fn(name, lw.ctx.i64_type().fn_type(&[], false));
    lw.call_value(f, &[])
}

fn bound<'ctx>(lw: &mut FnLower<'ctx, '_>, b: Bound) -> R<IntValue<'ctx>> {
    Ok(match b {
        Bound::Const(c) => lw.ctx.i64_type().const_int(c as u64, true),
        Bound::Var(v) => {
            let x = lw.load(v)?;
            lw.cast(x, lw.ty(v), INT64)?.into_int_value()
        }
    })
}

/// The value a division's copy of a reduction variable starts from.
fn identity<'ctx>(lw: &mut FnLower<'ctx, '_>, op: RedOp, var: VarId) -> R<BasicValueEnum<'ctx>> {
    let t = lw.ty(var);
    // An array reduction's kernel makes its own accumulator from the array's shape.
    if t.is_array() {
        return lw.load(var);
    }
    match op {
        // Floats start from -0.0, the exact identity of `+` (`x + -0.0` is `x` for every
        // x, so a sum of negative zeros stays -0.0 as serially, and the optimiser folds the
        // combination of a single division away).
        RedOp::Add if t.is_float() => {
            let minus_zero = lw.ctx.f64_type().const_float(-0.0).into();
            lw.cast(minus_zero, FLOAT64, t)
        }
        RedOp::Add if t.is_complex() => {
            let part = if t == COMPLEX64 { FLOAT32 } else { FLOAT64 };
            let minus_zero = lw.ctx.f64_type().const_float(-0.0).into();
            let z = lw.cast(minus_zero, FLOAT64, part)?;
            lw.make_struct(t, &[z, z])
        }
        RedOp::Add => Ok(value_type(lw.ctx, t)?.const_zero()),
        RedOp::Mul => {
            let one = lw.ctx.i64_type().const_int(1, false).into();
            lw.cast(one, INT64, t)
        }
        RedOp::Replay | RedOp::Min | RedOp::Max | RedOp::ArgMin | RedOp::ArgMax => lw.load(var),
    }
}

/// What a division receives for parameter `p`: a reduction variable's identity, else
/// the variable's value.
fn param_value<'ctx>(lw: &mut FnLower<'ctx, '_>, pf: &Parfor, p: VarId) -> R<BasicValueEnum<'ctx>> {
    match pf.reductions.iter().find(|r| r.var == p) {
        Some(r) => identity(lw, r.op, p),
        None => lw.load(p),
    }
}

/// `acc <op> part` for one reduction, converted back to the variable's type.
fn combine<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    r: &numba_parfor::Reduction,
    acc: BasicValueEnum<'ctx>,
    part: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let t = lw.ty(r.var);
    let (sig, vals) = match r.op {
        RedOp::Add | RedOp::Mul => {
            let op = if r.op == RedOp::Add {
                BinOp::Add
            } else {
                BinOp::Mul
            };
            let sig = lw
                .registry_sig(op, t, t)
                .ok_or_else(|| lw.unsupported(format!("a {op:?} reduction of {t}")))?;
            (sig, [acc, part])
        }
        RedOp::ArgMin | RedOp::ArgMax => {
            return crate::impls::arg_combine(lw, r.op == RedOp::ArgMin, t, acc, part);
        }
        RedOp::Min | RedOp::Max => {
            let key = if r.op == RedOp::Min { "min" } else { "max" };
            let (v, vt) = crate::impls::scalar_call(lw, key, &[(acc, t), (part, t)])?;
            return lw.cast(v, vt, t);
        }
        RedOp::Replay => {
            let sig = lw
                .typing
                .calltypes
                .get(&r.expr)
                .cloned()
                .ok_or_else(|| lw.unsupported("an untyped reduction"))?;
            let v = if r.acc_operand == 0 {
                [acc, part]
            } else {
                [part, acc]
            };
            (sig, v)
        }
    };
    let mut args = Vec::with_capacity(2);
    for (v, &to) in vals.iter().zip(&sig.args) {
        args.push(lw.cast(*v, t, lowered(to))?);
    }
    let out = lw.call_impl(&sig, &args)?;
    lw.cast(out, lowered(sig.ret), t)
}

/// Combine the divisions' accumulators of an array reduction into the variable, in
/// division order: `s op= part` into the array itself when the loop wrote it in place
/// (`s += x`: the caller's array changes, as serially), else `s = s op part`, a new
/// array each time, as `s = s + x` makes. Each part is released once read.
fn combine_array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    r: &numba_parfor::Reduction,
    ndiv: IntValue<'ctx>,
    load_part: &dyn Fn(&mut FnLower<'ctx, '_>, IntValue<'ctx>) -> R<BasicValueEnum<'ctx>>,
) -> R<()> {
    let t = lw.ty(r.var);
    let op = if r.op == RedOp::Add {
        BinOp::Add
    } else {
        BinOp::Mul
    };
    let in_place = matches!(lw.ir.expr(r.expr), numba_ir::Expr::InplaceBinOp { .. });
    let sig = if in_place {
        let s = lw
            .registry_sig(op, t, t)
            .ok_or_else(|| lw.unsupported(format!("a {op:?} reduction of {t}")))?;
        numba_typeinfer::numpy::inplace_array_binop(op, s, t).map_err(|m| lw.unsupported(m))?
    } else {
        lw.registry_sig(op, t, t)
            .ok_or_else(|| lw.unsupported(format!("a {op:?} reduction of {t}")))?
    };
    let vt = value_type(lw.ctx, t)?;
    let acc = lw.alloca_in_entry(vt, "parfor_acc")?;
    let v0 = lw.load(r.var)?;
    // The accumulator owns a reference throughout.
    lw.incref(t, v0)?;
    lw.b.build_store(acc, v0).map_err(llvm_err)?;
    let (lp, i) = Loop::begin(lw, ndiv)?;
    let part = load_part(lw, i)?;
    let a = lw.b.build_load(vt, acc, "").map_err(llvm_err)?;
    let pt = lowered(sig.args[1]);
    let p = lw.cast(part, t, pt)?;
    let at = lowered(sig.args[0]);
    let a2 = lw.cast(a, t, at)?;
    let out = lw.call_impl(&sig, &[a2, p])?;
    let out = lw.cast(out, lowered(sig.ret), t)?;
    lw.decref(t, a)?;
    lw.decref(t, part)?;
    lw.b.build_store(acc, out).map_err(llvm_err)?;
    lp.end(lw)?;
    let v = lw.b.build_load(vt, acc, "").map_err(llvm_err)?;
    if in_place {
        // The same array as before the loop: drop the accumulator's reference.
        lw.decref(t, v)
    } else {
        lw.store_var(r.var, v)
    }
}

fn lower_parfor<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    node: &ExtensionNode,
    _: Option<VarId>,
) -> R<Option<BasicValueEnum<'ctx>>> {
    let pf = Parfor::from_node(node).ok_or_else(|| lw.unsupported("malformed parfor node"))?;
    for r in &pf.reductions {
        let t = lw.ty(r.var);
        if crate::nrt::is_refcounted(t) && !t.is_array() {
            return Err(lw.unsupported(format!(
                "the reduction of array variable '{}' in a parallel loop is not supported by numba-rs yet",
                lw.ir.var_name(r.var)
            )));
        }
    }
    let kernel = build_kernel(lw.ir, lw.typing, &pf).map_err(|e| lw.unsupported(e.to_string()))?;
    let ctx = lw.ctx;
    let ptr = ctx.ptr_type(AddressSpace::default());
    let i64t = ctx.i64_type();
    let i32t = ctx.i32_type();
    let parent = lw.func.get_name().to_string_lossy().into_owned();

    // 1. The kernel.
    let kname = format!("{parent}.parfor{}", pf.id);
    let kfunc = lw.module.add_function(
        &kname,
        native_fn_type(ctx, &kernel.typing.arg_types)?,
        Some(Linkage::Internal),
    );
    {
        let mut klw = FnLower::new(
            ctx,
            lw.module,
            kfunc,
            &kernel.ir,
            &kernel.typing,
            lw.registry,
            lw.options,
            lw.linked,
        )?;
        klw.error_model_override = Some(ErrorModel::Numpy);
        klw.linked_libraries = std::mem::take(&mut lw.linked_libraries);
        klw.lower_body()?;
        lw.externals.append(&mut klw.externals);
        lw.frozen_data.append(&mut klw.frozen_data);
        lw.linked_libraries = std::mem::take(&mut klw.linked_libraries);
    }
    if lw.options.fastmath != 0 {
        crate::impls::float::apply_fastmath(kfunc, lw.options.fastmath);
    }

    // 2. The worker over one division.
    let ret_t = lowered(kernel.typing.return_type);
    let ret_mem = memory_type(ctx, ret_t)?;
    let param_types: Vec<_> = pf
        .params
        .iter()
        .map(|&p| value_type(ctx, lw.ty(p)))
        .collect::<R<_>>()?;
    let mut env_fields: Vec<inkwell::types::BasicTypeEnum> =
        vec![ptr.into(), ptr.into(), ptr.into()];
    env_fields.extend(param_types.iter().copied());
    let env_t = ctx.struct_type(&env_fields, false);
    let wname = format!("{kname}.worker");
    let worker = lw.module.add_function(
        &wname,
        ctx.void_type()
            .fn_type(&[ptr.into(), i64t.into(), i64t.into(), i64t.into()], false),
        Some(Linkage::Internal),
    );
    {
        let b = ctx.create_builder();
        b.position_at_end(ctx.append_basic_block(worker, "entry"));
        let p = |i: u32| worker.get_nth_param(i).expect("worker parameters");
        let env = p(0).into_pointer_value();
        let (lo, hi, slot) = (p(1), p(2), p(3).into_int_value());
        // A division's slice is 0 <= lo <= hi: told to LLVM, indices computed from it
        // need no wraparound checks and the body vectorises as the serial loop does.
        if let Some(assume) = inkwell::intrinsics::Intrinsic::find("llvm.assume")
            .and_then(|i| i.get_declaration(lw.module, &[]))
        {
            let (l, h) = (lo.into_int_value(), hi.into_int_value());
            let nonneg = b
                .build_int_compare(IntPredicate::SGE, l, i64t.const_zero(), "")
                .map_err(llvm_err)?;
            let ordered = b
                .build_int_compare(IntPredicate::SLE, l, h, "")
                .map_err(llvm_err)?;
            b.build_call(assume, &[nonneg.into()], "")
                .map_err(llvm_err)?;
            b.build_call(assume, &[ordered.into()], "")
                .map_err(llvm_err)?;
        }
        let field = |i: u32| -> R<_> { b.build_struct_gep(env_t, env, i, "").map_err(llvm_err) };
        let load_ptr = |i: u32| -> R<inkwell::values::PointerValue> {
            Ok(b.build_load(ptr, field(i)?, "")
                .map_err(llvm_err)?
                .into_pointer_value())
        };
        let (results, statuses, excs) = (load_ptr(0)?, load_ptr(1)?, load_ptr(2)?);
        let mut args: Vec<BasicMetadataValueEnum> = Vec::new();
        // SAFETY (of the GEPs below): the caller sized each array for every division.
        let res =
            unsafe { b.build_in_bounds_gep(ret_mem, results, &[slot], "res") }.map_err(llvm_err)?;
        let exc = unsafe { b.build_in_bounds_gep(ptr, excs, &[slot], "exc") }.map_err(llvm_err)?;
        // The kernel returns into a local copy, stored to the division's slot by one
        // volatile store: adjacent stores of reduction results would otherwise seed LLVM's
        // SLP vectoriser, which packs the loop's accumulators into vectors (two min/max
        // reductions ran 2.5x slower per element that way).
        let local = b.build_alloca(ret_mem, "res.local").map_err(llvm_err)?;
        args.push(local.into());
        args.push(exc.into());
        for (i, t) in param_types.iter().enumerate() {
            args.push(
                b.build_load(*t, field(3 + i as u32)?, "")
                    .map_err(llvm_err)?
                    .into(),
            );
        }
        args.push(lo.into());
        args.push(hi.into());
        let st = b
            .build_call(kfunc, &args, "status")
            .map_err(llvm_err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("kernel returned void".into()))?;
        let stp =
            unsafe { b.build_in_bounds_gep(i32t, statuses, &[slot], "") }.map_err(llvm_err)?;
        b.build_store(stp, st).map_err(llvm_err)?;
        let out = b.build_load(ret_mem, local, "").map_err(llvm_err)?;
        let store = b.build_store(res, out).map_err(llvm_err)?;
        store
            .set_volatile(true)
            .map_err(|e| LowerError::Llvm(e.to_string()))?;
        b.build_return(None).map_err(llvm_err)?;
    }

    // 3. The launch.
    let nest = pf.loop_nests[0];
    let start = bound(lw, nest.start)?;
    let stop = bound(lw, nest.stop)?;
    let step = bound(lw, nest.step)?;
    // The range's length by `len(range)`'s own lowering (a zero step has already
    // raised where the `prange` call was lowered).
    let range = lw.make_struct(RANGE_STATE64, &[start.into(), stop.into(), step.into()])?;
    let len_sig = numba_typeinfer::Signature {
        ret: INT64,
        args: vec![RANGE_STATE64],
        key: ImplKey::Function("len".into()),
    };
    let count = lw.call_impl(&len_sig, &[range])?.into_int_value();
    // Numba's scheduler names: unsigned when the index starts at a known non-negative
    // constant (its `uintp` parfor index), signed otherwise.
    let scheduler = match nest.start {
        Bound::Const(c) if c >= 0 => "do_scheduling_unsigned",
        _ => "do_scheduling_signed",
    };
    let divs_f = lw.runtime_fn(scheduler, i64t.fn_type(&[i64t.into(), i64t.into()], false));
    // Work below the runtime's inline threshold runs inline whatever the thread count:
    // decided here (`count * cost < work`) without calling the scheduler, which costs a small loop a tenth of its time. The threshold
    // is loaded from the runtime (the global `numba_rs_inline_work`, mapped by the JIT), so a loop
    // of a size known at compile time keeps both paths and the runtime's value decides.
    let cost = i64t.const_int(pf.cost.max(1) as u64, false);
    let cell = match lw
        .module
        .get_global(numba_nrt::parallel::INLINE_WORK_SYMBOL)
    {
        Some(g) => g,
        None => {
            let g = lw
                .module
                .add_global(i64t, None, numba_nrt::parallel::INLINE_WORK_SYMBOL);
            g.set_linkage(inkwell::module::Linkage::External);
            g
        }
    }
    .as_pointer_value();
    let work =
        lw.b.build_load(i64t, cell, "work")
            .map_err(llvm_err)?
            .into_int_value();
    // `count * cost < work`, the product taken only where it cannot overflow (no
    // division on this path: it runs on every call of a small loop).
    let safe = i64t.const_int((i64::MAX / pf.cost.max(1)) as u64, false);
    let fits =
        lw.b.build_int_compare(IntPredicate::SLT, count, safe, "")
            .map_err(llvm_err)?;
    let product = lw.b.build_int_mul(count, cost, "").map_err(llvm_err)?;
    let under =
        lw.b.build_int_compare(IntPredicate::SLT, product, work, "")
            .map_err(llvm_err)?;
    let small = lw.b.build_and(fits, under, "small").map_err(llvm_err)?;
    let small_bb = lw.new_block("parfor.small");
    let ask_bb = lw.new_block("parfor.schedule");
    let end = lw.new_block("parfor.end");
    lw.b.build_conditional_branch(small, small_bb, ask_bb)
        .map_err(llvm_err)?;
    let e = llvm_err;
    let res_slot = lw.alloca_in_entry(ret_mem, "parfor_res")?;
    let status_slot = lw.alloca_in_entry(i64t.into(), "parfor_status")?;
    let exc_slot = lw.alloca_in_entry(ptr.into(), "parfor_exc")?;

    // Small work: the kernel called straight from here over the whole range and inlined
    // into this function, so the loop runs as the serial code does (no environment, no
    // worker, no scheduler), then the one division's results are taken as below with
    // the division count a constant 1, which folds the combination loops away.
    lw.b.position_at_end(small_bb);
    lw.b.build_store(exc_slot, ptr.const_null()).map_err(e)?;
    // A body that calls anything (`get_parallel_chunksize()`, a parallel function)
    // sees the chunk size 0 inside the region, as on the other paths; a body without
    // calls cannot tell, and keeps its few nanoseconds.
    let calls = pf.loop_body.values().flat_map(|b| &b.body).any(|i| {
        matches!(i.stmt, numba_ir::Stmt::Assign { value, .. }
            if matches!(lw.ir.expr(value), numba_ir::Expr::Call { .. }))
    });
    let chunk_f = lw.runtime_fn(
        "numba_rs_set_parallel_chunksize",
        i64t.fn_type(&[i64t.into()], false),
    );
    let outer_chunk = if calls {
        Some(lw.call_value(chunk_f, &[i64t.const_zero().into()])?)
    } else {
        None
    };
    let mut kargs: Vec<BasicMetadataValueEnum> = vec![res_slot.into(), exc_slot.into()];
    for &p in &pf.params {
        kargs.push(param_value(lw, &pf, p)?.into());
    }
    kargs.push(i64t.const_zero().into());
    kargs.push(count.into());
    let call = lw.b.build_call(kfunc, &kargs, "status").map_err(e)?;
    let inline_kind = inkwell::attributes::Attribute::get_named_enum_kind_id("alwaysinline");
    call.add_attribute(
        inkwell::attributes::AttributeLoc::Function,
        ctx.create_enum_attribute(inline_kind, 0),
    );
    let st = call
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("kernel returned void".into()))?;
    lw.b.build_store(status_slot, st).map_err(e)?;
    if let Some(outer) = outer_chunk {
        lw.b.build_call(chunk_f, &[outer.into()], "").map_err(e)?;
    }
    let one = i64t.const_int(1, false);
    let slots = Slots {
        results: res_slot,
        statuses: status_slot,
        excs: exc_slot,
        heap: None,
    };
    collect(lw, &pf, ret_t, one, &slots, end)?;

    // Enough work to divide: the runtime says how many divisions.
    lw.b.position_at_end(ask_bb);
    let ndiv = lw
        .call_value(divs_f, &[count.into(), cost.into()])?
        .into_int_value();
    let alloc_f = lw.runtime_fn(
        "numba_rs_parfor_scratch",
        ptr.fn_type(&[i64t.into()], false),
    );
    let ret_size = ret_mem
        .size_of()
        .ok_or_else(|| LowerError::Llvm("unsized result".into()))?;
    let ret_size =
        lw.b.build_int_z_extend_or_bit_cast(ret_size, i64t, "")
            .map_err(e)?;
    let res_bytes = lw.b.build_int_mul(ndiv, ret_size, "").map_err(e)?;
    let word_bytes =
        lw.b.build_int_mul(ndiv, i64t.const_int(8, false), "")
            .map_err(e)?;
    let env = lw.alloca_in_entry(env_t.into(), "parfor_env")?;
    for (i, &p) in pf.params.iter().enumerate() {
        let v = param_value(lw, &pf, p)?;
        let f =
            lw.b.build_struct_gep(env_t, env, 3 + i as u32, "")
                .map_err(e)?;
        lw.b.build_store(f, v).map_err(e)?;
    }
    let set_slots = |lw: &mut FnLower<'ctx, '_>, ptrs: [BasicValueEnum<'ctx>; 3]| -> R<()> {
        for (i, v) in ptrs.iter().enumerate() {
            let f =
                lw.b.build_struct_gep(env_t, env, i as u32, "")
                    .map_err(llvm_err)?;
            lw.b.build_store(f, *v).map_err(llvm_err)?;
        }
        Ok(())
    };
    // One division (nested in another region, or one thread): the worker runs here,
    // with its slots on the stack; no thread, no heap.
    let inline =
        lw.b.build_int_compare(IntPredicate::EQ, ndiv, one, "")
            .map_err(e)?;
    let inline_bb = lw.new_block("parfor.inline");
    let pool_bb = lw.new_block("parfor.pool");
    let joined = lw.new_block("parfor.joined");
    lw.b.build_conditional_branch(inline, inline_bb, pool_bb)
        .map_err(e)?;
    lw.b.position_at_end(inline_bb);
    let local: [BasicValueEnum<'ctx>; 3] = [res_slot.into(), status_slot.into(), exc_slot.into()];
    lw.b.build_store(exc_slot, ptr.const_null()).map_err(e)?;
    set_slots(lw, local)?;
    // The chunk size reads 0 inside a region, inline or pooled (numba-nrt resets it
    // around pooled divisions), as Numba resets it around a launch.
    let outer_chunk = lw.call_value(chunk_f, &[i64t.const_zero().into()])?;
    lw.b.build_call(
        worker,
        &[
            env.into(),
            i64t.const_zero().into(),
            count.into(),
            i64t.const_zero().into(),
        ],
        "",
    )
    .map_err(e)?;
    lw.b.build_call(chunk_f, &[outer_chunk.into()], "")
        .map_err(e)?;
    lw.b.build_unconditional_branch(joined).map_err(e)?;
    lw.b.position_at_end(pool_bb);
    let heap = [
        lw.call_value(alloc_f, &[res_bytes.into()])?,
        lw.call_value(alloc_f, &[word_bytes.into()])?,
        lw.call_value(alloc_f, &[word_bytes.into()])?,
    ];
    set_slots(lw, heap)?;
    let run_f = lw.runtime_fn(
        "numba_rs_parallel_for",
        ctx.void_type()
            .fn_type(&[ptr.into(), ptr.into(), i64t.into(), i64t.into()], false),
    );
    let wptr = worker.as_global_value().as_pointer_value();
    lw.b.build_call(
        run_f,
        &[wptr.into(), env.into(), count.into(), ndiv.into()],
        "",
    )
    .map_err(e)?;
    lw.b.build_unconditional_branch(joined).map_err(e)?;
    lw.b.position_at_end(joined);
    let mut merged = Vec::new();
    for k in 0..3 {
        let phi = lw.b.build_phi(ptr, "").map_err(e)?;
        phi.add_incoming(&[(&local[k], inline_bb), (&heap[k], pool_bb)]);
        merged.push(phi.as_basic_value().into_pointer_value());
    }
    let slots = Slots {
        results: merged[0],
        statuses: merged[1],
        excs: merged[2],
        heap: Some((inline, res_bytes, word_bytes)),
    };
    collect(lw, &pf, ret_t, ndiv, &slots, end)?;
    lw.b.position_at_end(end);
    Ok(None)
}

/// Where the divisions left their results: arrays of one result, status and exception
/// record per division; `heap` when they came from numba-nrt's scratch allocator (with
/// the "ran inline after all" flag and the byte sizes to free them with).
struct Slots<'ctx> {
    results: inkwell::values::PointerValue<'ctx>,
    statuses: inkwell::values::PointerValue<'ctx>,
    excs: inkwell::values::PointerValue<'ctx>,
    heap: Option<(IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>)>,
}

/// After `ndiv` divisions ran: re-raise the first failure, else combine the reductions
/// and take the races, then branch to `end`.
fn collect<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    pf: &Parfor,
    ret_t: TypeId,
    ndiv: IntValue<'ctx>,
    slots: &Slots<'ctx>,
    end: inkwell::basic_block::BasicBlock<'ctx>,
) -> R<()> {
    let ctx = lw.ctx;
    let ptr = ctx.ptr_type(AddressSpace::default());
    let i64t = ctx.i64_type();
    let i32t = ctx.i32_type();
    let ret_mem = memory_type(ctx, ret_t)?;
    let e = llvm_err;
    let (results, statuses, excs) = (slots.results, slots.statuses, slots.excs);
    let free_all = |lw: &mut FnLower<'ctx, '_>| -> R<()> {
        let Some((inline, res_bytes, word_bytes)) = slots.heap else {
            return Ok(());
        };
        let free_f = lw.runtime_fn(
            "numba_rs_parfor_scratch_free",
            lw.ctx
                .void_type()
                .fn_type(&[ptr.into(), i64t.into()], false),
        );
        let free_bb = lw.new_block("parfor.free");
        let freed = lw.new_block("parfor.freed");
        lw.b.build_conditional_branch(inline, freed, free_bb)
            .map_err(llvm_err)?;
        lw.b.position_at_end(free_bb);
        for (p, n) in [
            (results, res_bytes),
            (statuses, word_bytes),
            (excs, word_bytes),
        ] {
            lw.b.build_call(free_f, &[p.into(), n.into()], "")
                .map_err(llvm_err)?;
        }
        lw.b.build_unconditional_branch(freed).map_err(llvm_err)?;
        lw.b.position_at_end(freed);
        Ok(())
    };

    let load_part =
        |lw: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>, k: usize| -> R<BasicValueEnum<'ctx>> {
            let rp = unsafe { lw.b.build_in_bounds_gep(ret_mem, results, &[i], "") }
                .map_err(llvm_err)?;
            let m = lw.b.build_load(ret_mem, rp, "").map_err(llvm_err)?;
            let tup = model_of(ret_t)?.load_memory(lw.ctx, &lw.b, ret_t, m)?;
            lw.b.build_extract_value(tup.into_struct_value(), k as u32, "")
                .map_err(llvm_err)
        };

    // Division `i`'s status, and whether it finished without an exception.
    let status_of = |lw: &mut FnLower<'ctx, '_>,
                     i: IntValue<'ctx>|
     -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        let p = unsafe { lw.b.build_in_bounds_gep(i32t, statuses, &[i], "") }.map_err(llvm_err)?;
        let st =
            lw.b.build_load(i32t, p, "")
                .map_err(llvm_err)?
                .into_int_value();
        let ok =
            lw.b.build_int_compare(IntPredicate::EQ, st, i32t.const_zero(), "")
                .map_err(llvm_err)?;
        Ok((st, ok))
    };

    // The first failed division's exception, in division order.
    let (lp, i) = Loop::begin(lw, ndiv)?;
    let (st, fine) = status_of(lw, i)?;
    let failed = lw.new_block("parfor.failed");
    let next = lw.new_block("parfor.next");
    lw.b.build_conditional_branch(fine, next, failed)
        .map_err(e)?;
    lw.b.position_at_end(next);
    lp.end(lw)?;
    let ok =
        lw.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    lw.b.position_at_end(failed);
    let ep = unsafe { lw.b.build_in_bounds_gep(ptr, excs, &[i], "") }.map_err(e)?;
    let rec = lw.b.build_load(ptr, ep, "").map_err(e)?;
    // The divisions that finished own references in their outputs (array reductions'
    // accumulators, refcounted race values): release them.
    let owned: Vec<(usize, TypeId)> = pf
        .reductions
        .iter()
        .map(|r| r.var)
        .chain(pf.races.iter().copied())
        .enumerate()
        .map(|(k, v)| (k, lw.ty(v)))
        .filter(|(_, t)| crate::nrt::is_refcounted(*t))
        .collect();
    if !owned.is_empty() {
        let (lp, j) = Loop::begin(lw, ndiv)?;
        let (_, done) = status_of(lw, j)?;
        let rel = lw.new_block("parfor.release");
        let skip = lw.new_block("parfor.skip");
        lw.b.build_conditional_branch(done, rel, skip).map_err(e)?;
        lw.b.position_at_end(rel);
        for &(k, t) in &owned {
            let part = load_part(lw, j, k)?;
            lw.decref(t, part)?;
        }
        lw.b.build_unconditional_branch(skip).map_err(e)?;
        lw.b.position_at_end(skip);
        lp.end(lw)?;
    }
    free_all(lw)?;
    // The record is stored in the block that leaves, marked as a raising exit as a
    // `raise` marks it, so reference-count pruning treats this exit as the serial code's
    // (a loop over an argument keeps no incref/decref pair for its error path).
    let store = lw.b.build_store(lw.excinfo, rec).map_err(e)?;
    let kind = ctx.get_kind_id(crate::refprune::EXCEPTION_OUTPUT_MD);
    let mark = ctx.metadata_node(&[ctx.bool_type().const_int(1, false).into()]);
    store
        .set_metadata(mark, kind)
        .map_err(|m| LowerError::Llvm(m.to_string()))?;
    // Inside a `try` the exception stays pending and control goes on past the parfor
    // to the statement's exception check.
    lw.propagate_status(st, end)?;

    // Reductions and races from the division results.
    lw.b.position_at_end(ok);
    let nred = pf.reductions.len();
    for (k, r) in pf.reductions.iter().enumerate() {
        if lw.ty(r.var).is_array() {
            combine_array(lw, r, ndiv, &|lw, i| load_part(lw, i, k))?;
            continue;
        }
        let t = value_type(ctx, lw.ty(r.var))?;
        let acc = lw.alloca_in_entry(t, "parfor_acc")?;
        let v0 = lw.load(r.var)?;
        lw.b.build_store(acc, v0).map_err(e)?;
        let (lp, i) = Loop::begin(lw, ndiv)?;
        let part = load_part(lw, i, k)?;
        let a = lw.b.build_load(t, acc, "").map_err(e)?;
        let c = combine(lw, r, a, part)?;
        lw.b.build_store(acc, c).map_err(e)?;
        lp.end(lw)?;
        let v = lw.b.build_load(t, acc, "").map_err(e)?;
        lw.store_var(r.var, v)?;
    }
    // Races: the last division's values; the others' references are released.
    let last =
        lw.b.build_int_sub(ndiv, i64t.const_int(1, false), "")
            .map_err(e)?;
    for (j, &v) in pf.races.iter().enumerate() {
        let k = nred + j;
        let t = lw.ty(v);
        if crate::nrt::is_refcounted(t) {
            let (lp, i) = Loop::begin(lw, last)?;
            let part = load_part(lw, i, k)?;
            lw.decref(t, part)?;
            lp.end(lw)?;
        }
        let val = load_part(lw, last, k)?;
        lw.store_var(v, val)?;
    }
    free_all(lw)?;
    lw.b.build_unconditional_branch(end).map_err(e)?;
    Ok(())
}
