//! Lowering of numba-parfor's `parfor` statements: the parallel target (Numba's
//! `_lower_parfor_parallel_std` and `call_parallel_gufunc`).
//!
//! For each parfor:
//! 1. its body becomes a kernel function in the same module (numba-parfor's
//!    [`build_kernel`]: typed IR lowered by the ordinary walk, with NumPy's error model as
//!    Numba's gufuncs have it), `i32 kernel(ret*, excinfo**, params..., lo, hi)`;
//! 2. a worker `void worker(env*, lo, hi, slot)` unpacks the parameters from the
//!    environment the launch filled and runs the kernel over one division, storing its
//!    status, exception record and results (reduction partials, race values) in the
//!    division's slots;
//! 3. a launch `<kernel>.launch`, with the kernel's signature, asks the runtime how many
//!    divisions the loop deserves (`do_scheduling_signed`/`_unsigned`, Numba's names for
//!    numba-nrt's `numba_rs_parfor_divisions`), runs them on numba-nrt's pool
//!    (`numba_rs_parallel_for`), and returns the first division's exception, or the
//!    reduction partials combined in division order (Numba's `reduction_add` /
//!    `reduction_mul`, the recorded `min`/`max` call replayed, the array and `argmin`/
//!    `argmax` combinations) and the last division's races, as one division would;
//! 4. at the call site, work below numba-nrt's measured inline threshold calls the
//!    kernel (inlined) on the calling thread, the rest calls the launch; either result
//!    is re-raised or combined into the variables as one division's. Races take the
//!    value of the last division, as a serial loop would leave them when every
//!    iteration writes them.

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

/// `s op part` for an array reduction: `s op= part` into `s` itself when the loop wrote
/// it in place (`s += x`: the caller's array changes, as serially), else `s op part`, a
/// new array, as `s = s + x` makes. Returns a new reference; `s` and `part` keep theirs.
fn array_step<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    r: &numba_parfor::Reduction,
    s: BasicValueEnum<'ctx>,
    part: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let t = lw.ty(r.var);
    let op = if r.op == RedOp::Add {
        BinOp::Add
    } else {
        BinOp::Mul
    };
    let base = lw
        .registry_sig(op, t, t)
        .ok_or_else(|| lw.unsupported(format!("a {op:?} reduction of {t}")))?;
    let sig = if in_place(lw, r) {
        numba_typeinfer::numpy::inplace_array_binop(op, base, t).map_err(|m| lw.unsupported(m))?
    } else {
        base
    };
    let a = lw.cast(s, t, lowered(sig.args[0]))?;
    let p = lw.cast(part, t, lowered(sig.args[1]))?;
    let out = lw.call_impl(&sig, &[a, p])?;
    lw.cast(out, lowered(sig.ret), t)
}

/// Whether an array reduction writes its variable in place (`s += x`).
fn in_place(lw: &FnLower<'_, '_>, r: &numba_parfor::Reduction) -> bool {
    matches!(lw.ir.expr(r.expr), numba_ir::Expr::InplaceBinOp { .. })
}

/// Combine the loop's accumulator of an array reduction (an owned reference) into the
/// variable: in place into the caller's array, or a new array stored to the variable.
fn combine_array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    r: &numba_parfor::Reduction,
    part: BasicValueEnum<'ctx>,
) -> R<()> {
    let t = lw.ty(r.var);
    let v0 = lw.load(r.var)?;
    let out = array_step(lw, r, v0, part)?;
    lw.decref(t, part)?;
    if in_place(lw, r) {
        // The same array as before the loop: drop the result's reference.
        lw.decref(t, out)
    } else {
        lw.store_var(r.var, out)
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
            // Numba cannot lower these either (a NumbaNotImplementedError): say which.
            let name = lw.ir.var_name(r.var);
            let name = name.split('.').next().unwrap_or(name);
            let kind = match t.get() {
                Type::List { .. } => "list",
                Type::Set { .. } => "set",
                _ => "non-array",
            };
            return Err(lw.unsupported(format!(
                "the reduction of {kind} variable '{name}' ({t}) in a parallel loop is not supported: use a list per iteration or an array"
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

    // 3. The launch, outlined: scheduling, the pool and the divisions' combination stay
    //    out of this function, which stays small enough to inline into its callers.
    let launch = build_launch(lw, &pf, &kname, kfunc, worker, env_t, ret_t)?;

    // 4. The call site.
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
    // Work below the runtime's inline threshold runs inline whatever the thread count:
    // decided here (`count * cost < work`) without calling the scheduler, which costs a
    // small loop a tenth of its time. The threshold is loaded from the runtime (the global
    // `numba_rs_inline_work`, mapped by the JIT), so a loop of a size known at compile
    // time keeps both paths and the runtime's value decides.
    let cost = pf.cost.max(1);
    // A parallel region compiled: the threading layer counts as initialised, as Numba's
    // does once it compiles one (whether or not a region later runs on the pool).
    numba_nrt::parallel::mark_region();
    let cell = match lw
        .module
        .get_global(numba_nrt::parallel::INLINE_WORK_SYMBOL)
    {
        Some(g) => g,
        None => {
            let g = lw
                .module
                .add_global(i64t, None, numba_nrt::parallel::INLINE_WORK_SYMBOL);
            g.set_linkage(Linkage::External);
            g
        }
    }
    .as_pointer_value();
    let e = llvm_err;
    let work =
        lw.b.build_load(i64t, cell, "work")
            .map_err(e)?
            .into_int_value();
    // `count * cost < work`, the product taken only where it cannot overflow (no
    // division on this path: it runs on every call of a small loop).
    let safe = i64t.const_int((i64::MAX / cost) as u64, false);
    let fits =
        lw.b.build_int_compare(IntPredicate::SLT, count, safe, "")
            .map_err(e)?;
    let product =
        lw.b.build_int_mul(count, i64t.const_int(cost as u64, false), "")
            .map_err(e)?;
    let under =
        lw.b.build_int_compare(IntPredicate::SLT, product, work, "")
            .map_err(e)?;
    let small = lw.b.build_and(fits, under, "small").map_err(e)?;
    let res_slot = lw.alloca_in_entry(ret_mem, "parfor_res")?;
    let exc_slot = lw.alloca_in_entry(ptr.into(), "parfor_exc")?;
    lw.b.build_store(exc_slot, ptr.const_null()).map_err(e)?;
    let mut kargs: Vec<BasicMetadataValueEnum> = vec![res_slot.into(), exc_slot.into()];
    for &p in &pf.params {
        kargs.push(param_value(lw, &pf, p)?.into());
    }
    kargs.push(i64t.const_zero().into());
    kargs.push(count.into());
    let small_bb = lw.new_block("parfor.small");
    let big_bb = lw.new_block("parfor.launch");
    let joined = lw.new_block("parfor.joined");
    let end = lw.new_block("parfor.end");
    lw.b.build_conditional_branch(small, small_bb, big_bb)
        .map_err(e)?;

    // Small work: the kernel called straight from here over the whole range and inlined
    // into this function, so the loop runs as the serial code does (no environment, no
    // worker, no scheduler).
    lw.b.position_at_end(small_bb);
    // A body that calls anything (`get_parallel_chunksize()`, a parallel function)
    // sees the chunk size 0 inside the region, as on the other paths; a body without
    // calls cannot tell, and keeps its few nanoseconds.
    let calls = pf.loop_body.values().flat_map(|b| &b.body).any(|i| {
        matches!(i.stmt, numba_ir::Stmt::Assign { value, .. }
            if matches!(lw.ir.expr(value), numba_ir::Expr::Call { .. }))
    });
    let chunk_f = chunk_fn(lw);
    let outer_chunk = if calls {
        Some(lw.call_value(chunk_f, &[i64t.const_zero().into()])?)
    } else {
        None
    };
    let call = lw.b.build_call(kfunc, &kargs, "status").map_err(e)?;
    let inline_kind = inkwell::attributes::Attribute::get_named_enum_kind_id("alwaysinline");
    call.add_attribute(
        inkwell::attributes::AttributeLoc::Function,
        ctx.create_enum_attribute(inline_kind, 0),
    );
    let small_st = call
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("kernel returned void".into()))?;
    if let Some(outer) = outer_chunk {
        lw.b.build_call(chunk_f, &[outer.into()], "").map_err(e)?;
    }
    let small_end =
        lw.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    lw.b.build_unconditional_branch(joined).map_err(e)?;

    // Enough work to divide: the launch, which returns the divisions' results combined
    // as if one division had run.
    lw.b.position_at_end(big_bb);
    let big_st = lw.call_value(launch, &kargs)?;
    lw.b.build_unconditional_branch(joined).map_err(e)?;

    lw.b.position_at_end(joined);
    let phi = lw.b.build_phi(i32t, "status").map_err(e)?;
    phi.add_incoming(&[(&small_st, small_end), (&big_st, big_bb)]);
    let st = phi.as_basic_value().into_int_value();
    collect(lw, &pf, ret_t, res_slot, exc_slot, st, end)?;
    lw.b.position_at_end(end);
    Ok(None)
}

/// numba-nrt's `numba_rs_set_parallel_chunksize`, which returns the previous size.
fn chunk_fn<'ctx>(lw: &FnLower<'ctx, '_>) -> inkwell::values::FunctionValue<'ctx> {
    let i64t = lw.ctx.i64_type();
    lw.runtime_fn(
        "numba_rs_set_parallel_chunksize",
        i64t.fn_type(&[i64t.into()], false),
    )
}

/// `<kernel>.launch`, with the kernel's own signature and contract (called over
/// `0..count`): asks the runtime how many divisions the loop deserves
/// (`do_scheduling_signed`/`_unsigned`, Numba's names for numba-nrt's
/// `numba_rs_parfor_divisions`); one division (nested in another region, or one thread)
/// runs the kernel here, more run the worker on numba-nrt's pool
/// (`numba_rs_parallel_for`). It then returns the first failed division's status and
/// exception, or the reductions combined in division order and the last division's
/// races, so that its caller treats the result as one division's.
///
/// Kept out of line (`noinline`): inlined, it made every parallel function too large
/// for LLVM to inline into its entry wrapper, and a tiny loop paid that call.
fn build_launch<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    pf: &Parfor,
    kname: &str,
    kfunc: inkwell::values::FunctionValue<'ctx>,
    worker: inkwell::values::FunctionValue<'ctx>,
    env_t: inkwell::types::StructType<'ctx>,
    ret_t: TypeId,
) -> R<inkwell::values::FunctionValue<'ctx>> {
    let ctx = lw.ctx;
    let ptr = ctx.ptr_type(AddressSpace::default());
    let i64t = ctx.i64_type();
    let e = llvm_err;
    let f = lw.module.add_function(
        &format!("{kname}.launch"),
        kfunc.get_type(),
        Some(Linkage::Internal),
    );
    let noinline = inkwell::attributes::Attribute::get_named_enum_kind_id("noinline");
    f.add_attribute(
        inkwell::attributes::AttributeLoc::Function,
        ctx.create_enum_attribute(noinline, 0),
    );
    let mut ll = FnLower::new(
        ctx,
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
    let nparams = pf.params.len() as u32;
    let arg = |i: u32| f.get_nth_param(i).expect("the kernel's parameters");
    let params: Vec<BasicValueEnum> = (0..nparams).map(|i| arg(2 + i)).collect();
    let count = arg(3 + nparams).into_int_value();
    let cost = i64t.const_int(pf.cost.max(1) as u64, false);
    // Numba's scheduler names: unsigned when the index starts at a known non-negative
    // constant (its `uintp` parfor index), signed otherwise.
    let scheduler = match pf.loop_nests[0].start {
        Bound::Const(c) if c >= 0 => "do_scheduling_unsigned",
        _ => "do_scheduling_signed",
    };
    let divs_f = ll.runtime_fn(scheduler, i64t.fn_type(&[i64t.into(), i64t.into()], false));
    let ndiv = ll
        .call_value(divs_f, &[count.into(), cost.into()])?
        .into_int_value();
    let one =
        ll.b.build_int_compare(IntPredicate::EQ, ndiv, i64t.const_int(1, false), "")
            .map_err(e)?;
    let inline_bb = ll.new_block("launch.inline");
    let pool_bb = ll.new_block("launch.pool");
    ll.b.build_conditional_branch(one, inline_bb, pool_bb)
        .map_err(e)?;

    // One division: the kernel runs here, writing this function's own result. The chunk
    // size reads 0 inside a region, inline or pooled (numba-nrt resets it around pooled
    // divisions), as Numba resets it around a launch.
    ll.b.position_at_end(inline_bb);
    let chunk_f = chunk_fn(&ll);
    let outer_chunk = ll.call_value(chunk_f, &[i64t.const_zero().into()])?;
    let all: Vec<BasicMetadataValueEnum> = f.get_param_iter().map(Into::into).collect();
    let st = ll.call_value(kfunc, &all)?;
    ll.b.build_call(chunk_f, &[outer_chunk.into()], "")
        .map_err(e)?;
    ll.b.build_return(Some(&st)).map_err(e)?;

    // Several: each division's result, status and exception record in its own slot of
    // arrays from numba-nrt's scratch allocator.
    ll.b.position_at_end(pool_bb);
    let ret_mem = memory_type(ctx, ret_t)?;
    let ret_size = ret_mem
        .size_of()
        .ok_or_else(|| LowerError::Llvm("unsized result".into()))?;
    let ret_size =
        ll.b.build_int_z_extend_or_bit_cast(ret_size, i64t, "")
            .map_err(e)?;
    let res_bytes = ll.b.build_int_mul(ndiv, ret_size, "").map_err(e)?;
    let word_bytes =
        ll.b.build_int_mul(ndiv, i64t.const_int(8, false), "")
            .map_err(e)?;
    let alloc_f = ll.runtime_fn(
        "numba_rs_parfor_scratch",
        ptr.fn_type(&[i64t.into()], false),
    );
    let heap = [
        ll.call_value(alloc_f, &[res_bytes.into()])?,
        ll.call_value(alloc_f, &[word_bytes.into()])?,
        ll.call_value(alloc_f, &[word_bytes.into()])?,
    ];
    let env = ll.alloca_in_entry(env_t.into(), "parfor_env")?;
    for (i, v) in heap.iter().chain(&params).enumerate() {
        let field = ll.b.build_struct_gep(env_t, env, i as u32, "").map_err(e)?;
        ll.b.build_store(field, *v).map_err(e)?;
    }
    let run_f = ll.runtime_fn(
        "numba_rs_parallel_for",
        ctx.void_type()
            .fn_type(&[ptr.into(), ptr.into(), i64t.into(), i64t.into()], false),
    );
    let wptr = worker.as_global_value().as_pointer_value();
    ll.b.build_call(
        run_f,
        &[wptr.into(), env.into(), count.into(), ndiv.into()],
        "",
    )
    .map_err(e)?;
    let divisions = Divisions {
        results: heap[0].into_pointer_value(),
        statuses: heap[1].into_pointer_value(),
        excs: heap[2].into_pointer_value(),
        ndiv,
        res_bytes,
        word_bytes,
    };
    combine_divisions(&mut ll, pf, ret_t, &divisions)?;
    lw.externals.append(&mut ll.externals);
    lw.frozen_data.append(&mut ll.frozen_data);
    lw.linked_libraries = std::mem::take(&mut ll.linked_libraries);
    Ok(f)
}

/// Where the pool's divisions left their results: arrays of one result, status and
/// exception record per division, from numba-nrt's scratch allocator (with their byte
/// sizes, to free them with).
struct Divisions<'ctx> {
    results: inkwell::values::PointerValue<'ctx>,
    statuses: inkwell::values::PointerValue<'ctx>,
    excs: inkwell::values::PointerValue<'ctx>,
    ndiv: IntValue<'ctx>,
    res_bytes: IntValue<'ctx>,
    word_bytes: IntValue<'ctx>,
}

/// Division `i`'s output `k` (a reduction's partial or a race's value).
fn load_part<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    ret_t: TypeId,
    results: inkwell::values::PointerValue<'ctx>,
    i: IntValue<'ctx>,
    k: usize,
) -> R<BasicValueEnum<'ctx>> {
    let ret_mem = memory_type(lw.ctx, ret_t)?;
    let rp = unsafe { lw.b.build_in_bounds_gep(ret_mem, results, &[i], "") }.map_err(llvm_err)?;
    let m = lw.b.build_load(ret_mem, rp, "").map_err(llvm_err)?;
    let tup = model_of(ret_t)?.load_memory(lw.ctx, &lw.b, ret_t, m)?;
    lw.b.build_extract_value(tup.into_struct_value(), k as u32, "")
        .map_err(llvm_err)
}

/// The launch's end after the pool ran: return the first failed division's status and
/// exception (releasing what the finished divisions own), else the reductions combined
/// in division order and the last division's races (releasing the others').
fn combine_divisions<'ctx>(
    ll: &mut FnLower<'ctx, '_>,
    pf: &Parfor,
    ret_t: TypeId,
    d: &Divisions<'ctx>,
) -> R<()> {
    let ctx = ll.ctx;
    let ptr = ctx.ptr_type(AddressSpace::default());
    let i64t = ctx.i64_type();
    let i32t = ctx.i32_type();
    let e = llvm_err;
    let free_all = |ll: &mut FnLower<'ctx, '_>| -> R<()> {
        let free_f = ll.runtime_fn(
            "numba_rs_parfor_scratch_free",
            ll.ctx
                .void_type()
                .fn_type(&[ptr.into(), i64t.into()], false),
        );
        for (p, n) in [
            (d.results, d.res_bytes),
            (d.statuses, d.word_bytes),
            (d.excs, d.word_bytes),
        ] {
            ll.b.build_call(free_f, &[p.into(), n.into()], "")
                .map_err(llvm_err)?;
        }
        Ok(())
    };
    // Division `i`'s status, and whether it finished without an exception.
    let status_of =
        |ll: &mut FnLower<'ctx, '_>, i: IntValue<'ctx>| -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
            let p = unsafe { ll.b.build_in_bounds_gep(i32t, d.statuses, &[i], "") }
                .map_err(llvm_err)?;
            let st =
                ll.b.build_load(i32t, p, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let ok =
                ll.b.build_int_compare(IntPredicate::EQ, st, i32t.const_zero(), "")
                    .map_err(llvm_err)?;
            Ok((st, ok))
        };

    // The first failed division's exception, in division order.
    let (lp, i) = Loop::begin(ll, d.ndiv)?;
    let (st, fine) = status_of(ll, i)?;
    let failed = ll.new_block("launch.failed");
    let next = ll.new_block("launch.next");
    ll.b.build_conditional_branch(fine, next, failed)
        .map_err(e)?;
    ll.b.position_at_end(next);
    lp.end(ll)?;
    let ok =
        ll.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    ll.b.position_at_end(failed);
    let ep = unsafe { ll.b.build_in_bounds_gep(ptr, d.excs, &[i], "") }.map_err(e)?;
    let rec = ll.b.build_load(ptr, ep, "").map_err(e)?;
    // The divisions that finished own references in their outputs (array reductions'
    // accumulators, refcounted race values): release them.
    let owned: Vec<(usize, TypeId)> = pf
        .reductions
        .iter()
        .map(|r| r.var)
        .chain(pf.races.iter().copied())
        .enumerate()
        .map(|(k, v)| (k, ll.ty(v)))
        .filter(|(_, t)| crate::nrt::is_refcounted(*t))
        .collect();
    if !owned.is_empty() {
        let (lp, j) = Loop::begin(ll, d.ndiv)?;
        let (_, done) = status_of(ll, j)?;
        let rel = ll.new_block("launch.release");
        let skip = ll.new_block("launch.skip");
        ll.b.build_conditional_branch(done, rel, skip).map_err(e)?;
        ll.b.position_at_end(rel);
        for &(k, t) in &owned {
            let part = load_part(ll, ret_t, d.results, j, k)?;
            ll.decref(t, part)?;
        }
        ll.b.build_unconditional_branch(skip).map_err(e)?;
        ll.b.position_at_end(skip);
        lp.end(ll)?;
    }
    free_all(ll)?;
    mark_exception_exit(ll, rec)?;
    ll.b.build_return(Some(&st)).map_err(e)?;

    // Reductions in division order, from division 0's partial.
    ll.b.position_at_end(ok);
    let zero = i64t.const_zero();
    let rest =
        ll.b.build_int_sub(d.ndiv, i64t.const_int(1, false), "")
            .map_err(e)?;
    let mut outputs = Vec::new();
    for (k, r) in pf.reductions.iter().enumerate() {
        let t = ll.ty(r.var);
        let vt = value_type(ctx, t)?;
        let acc = ll.alloca_in_entry(vt, "launch_acc")?;
        let first = load_part(ll, ret_t, d.results, zero, k)?;
        ll.b.build_store(acc, first).map_err(e)?;
        let (lp, j) = Loop::begin(ll, rest)?;
        let i =
            ll.b.build_int_add(j, i64t.const_int(1, false), "")
                .map_err(e)?;
        let part = load_part(ll, ret_t, d.results, i, k)?;
        let a = ll.b.build_load(vt, acc, "").map_err(e)?;
        let c = if t.is_array() {
            // Each partial is a division's own array, owned here: combined, both go.
            let c = array_step(ll, r, a, part)?;
            ll.decref(t, a)?;
            ll.decref(t, part)?;
            c
        } else {
            combine(ll, r, a, part)?
        };
        ll.b.build_store(acc, c).map_err(e)?;
        lp.end(ll)?;
        outputs.push(ll.b.build_load(vt, acc, "").map_err(e)?);
    }
    // Races: the last division's values; the others' references are released.
    let nred = pf.reductions.len();
    for (j, &v) in pf.races.iter().enumerate() {
        let k = nred + j;
        let t = ll.ty(v);
        if crate::nrt::is_refcounted(t) {
            let (lp, i) = Loop::begin(ll, rest)?;
            let part = load_part(ll, ret_t, d.results, i, k)?;
            ll.decref(t, part)?;
            lp.end(ll)?;
        }
        outputs.push(load_part(ll, ret_t, d.results, rest, k)?);
    }
    free_all(ll)?;
    if outputs.is_empty() {
        ll.b.build_return(Some(&i32t.const_int(crate::STATUS_OK as u64, true)))
            .map_err(e)?;
        return Ok(());
    }
    let tuple = ll.make_struct(ret_t, &outputs)?;
    ll.return_value(tuple, ret_t)
}

/// Store an exception record into the function's `excinfo`, marked as a raising exit as
/// a `raise` marks it, so reference-count pruning treats this exit as the serial code's
/// (a loop over an argument keeps no incref/decref pair for its error path).
fn mark_exception_exit<'ctx>(lw: &mut FnLower<'ctx, '_>, rec: BasicValueEnum<'ctx>) -> R<()> {
    let ctx = lw.ctx;
    let store = lw.b.build_store(lw.excinfo, rec).map_err(llvm_err)?;
    let kind = ctx.get_kind_id(crate::refprune::EXCEPTION_OUTPUT_MD);
    let mark = ctx.metadata_node(&[ctx.bool_type().const_int(1, false).into()]);
    store
        .set_metadata(mark, kind)
        .map_err(|m| LowerError::Llvm(m.to_string()))
}

/// After the loop ran (inline, or through its launch): re-raise its exception, else
/// combine the reductions into their variables and take the races, then branch to `end`.
fn collect<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    pf: &Parfor,
    ret_t: TypeId,
    result: inkwell::values::PointerValue<'ctx>,
    exc: inkwell::values::PointerValue<'ctx>,
    st: IntValue<'ctx>,
    end: inkwell::basic_block::BasicBlock<'ctx>,
) -> R<()> {
    let ctx = lw.ctx;
    let ptr = ctx.ptr_type(AddressSpace::default());
    let e = llvm_err;
    let fine =
        lw.b.build_int_compare(IntPredicate::EQ, st, ctx.i32_type().const_zero(), "")
            .map_err(e)?;
    let ok = lw.new_block("parfor.ok");
    let failed = lw.new_block("parfor.failed");
    lw.b.build_conditional_branch(fine, ok, failed).map_err(e)?;
    lw.b.position_at_end(failed);
    let rec = lw.b.build_load(ptr, exc, "").map_err(e)?;
    mark_exception_exit(lw, rec)?;
    // Inside a `try` the exception stays pending and control goes on past the parfor
    // to the statement's exception check.
    lw.propagate_status(st, end)?;

    lw.b.position_at_end(ok);
    let zero = ctx.i64_type().const_zero();
    let nred = pf.reductions.len();
    for (k, r) in pf.reductions.iter().enumerate() {
        let part = load_part(lw, ret_t, result, zero, k)?;
        if lw.ty(r.var).is_array() {
            combine_array(lw, r, part)?;
            continue;
        }
        let v0 = lw.load(r.var)?;
        let v = combine(lw, r, v0, part)?;
        lw.store_var(r.var, v)?;
    }
    for (j, &v) in pf.races.iter().enumerate() {
        let val = load_part(lw, ret_t, result, zero, nred + j)?;
        lw.store_var(v, val)?;
    }
    lw.b.build_unconditional_branch(end).map_err(e)?;
    Ok(())
}
