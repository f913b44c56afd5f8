//! Generators seen from the code that uses them: `iternext` (a call of the generator's
//! `next`), `next(it[, default])`, `g.send(v)`, `g.close()`, the generator object's
//! reference counting, and the builtins that consume any iterable (`sum`, `min`, `max`,
//! `any`, `all`) as loops over `getiter`/`iternext`.
//!
//! A generator's functions are called directly when its compiled module can be linked
//! into the caller's (so LLVM may inline them and keep a generator that does not escape
//! in registers), and otherwise through the pointers in the object's header.

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use numba_typeinfer::numpy::{getiter, iter_yield};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::generator::GeneratorSymbols;
use crate::model::generator::{field, parts, prefix_type};
use crate::model::{lowered, memory_type, model_of};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, LowerError, R, STATUS_STOPIT};

fn key(name: &str) -> ImplKey {
    ImplKey::Function(name.to_string())
}

fn is_generator(t: TypeId) -> bool {
    matches!(t.get(), Type::Generator { .. })
}

/// Iterables the loop builtins take beyond the forms registered elsewhere (tuples).
fn loopable(t: TypeId) -> bool {
    getiter(t).is_some() && numba_typeinfer::conv::tuple_items(t).is_none()
}

pub(crate) fn register(r: &mut Registry) {
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(is_generator)]),
        |lw, sig, a| {
            let (v, ok) = gen_next(lw, sig.args[0], a[0].into_pointer_value())?;
            lw.make_struct(sig.ret, &[v, ok.into()])
        },
    );
    r.register(
        key("next"),
        Args::Exact(vec![TypePat::Iterator]),
        builtin_next,
    );
    r.register(
        key("next"),
        Args::Exact(vec![TypePat::Iterator, TypePat::Any]),
        builtin_next,
    );
    r.register(key("iter"), Args::Exact(vec![TypePat::Any]), builtin_iter);
    r.register(
        key("generator.send"),
        Args::Exact(vec![TypePat::Pred(is_generator), TypePat::Any]),
        send,
    );
    r.register(
        key("generator.close"),
        Args::Exact(vec![TypePat::Pred(is_generator)]),
        |lw, sig, a| {
            let f = gen_function(lw, sig.args[0], a[0].into_pointer_value(), Which::Close)?;
            call(lw, f, &[a[0]])?;
            Ok(lw.ghost())
        },
    );
    r.register(key("sum"), Args::Exact(vec![TypePat::Pred(loopable)]), sum);
    r.register(
        key("sum"),
        Args::Exact(vec![TypePat::Pred(loopable), TypePat::Number]),
        sum,
    );
    for k in ["min", "max", "any", "all"] {
        r.register(
            key(k),
            Args::Exact(vec![TypePat::Pred(|t| loopable(t) && !t.is_array())]),
            fold,
        );
    }
    // `any`/`all` of an array iterate it too.
    for k in ["any", "all"] {
        r.register(key(k), Args::Exact(vec![TypePat::Pred(loopable)]), fold);
    }
}

/// `iter(x)`: the loop's iterator, returned as a new reference (a call's result).
fn builtin_iter<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (it, it_t) = crate::impls::builtins::iterator_of(lw, sig.args[0], a[0])?;
    lw.incref(it_t, it)?;
    Ok(it)
}

/// Which of a generator's functions.
#[derive(Clone, Copy)]
enum Which {
    Next,
    Close,
    Finalize,
}

/// A function to call: direct, or through a pointer with its type.
enum Callee<'ctx> {
    Direct(FunctionValue<'ctx>),
    Indirect(PointerValue<'ctx>, inkwell::types::FunctionType<'ctx>),
}

fn call<'ctx>(
    lw: &FnLower<'ctx, '_>,
    f: Callee<'ctx>,
    args: &[BasicValueEnum<'ctx>],
) -> R<Option<BasicValueEnum<'ctx>>> {
    let args: Vec<inkwell::values::BasicMetadataValueEnum> =
        args.iter().map(|&a| a.into()).collect();
    let site = match f {
        Callee::Direct(f) => lw.b.build_call(f, &args, ""),
        Callee::Indirect(p, ty) => lw.b.build_indirect_call(ty, p, &args, ""),
    }
    .map_err(llvm_err)?;
    Ok(site.try_as_basic_value().basic())
}

/// One of the generator's functions: linked into this module when its library is
/// available, else loaded from the object's header.
fn gen_function<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    gen_t: TypeId,
    obj: PointerValue<'ctx>,
    which: Which,
) -> R<Callee<'ctx>> {
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let fnty = match which {
        Which::Next => crate::callconv::native_fn_type(lw.ctx, &[gen_t])?,
        Which::Close | Which::Finalize => lw.ctx.void_type().fn_type(&[ptr.into()], false),
    };
    let p = parts(gen_t)?;
    if let Some(symbol) = lw.link_library(p.id, &p.args, false)? {
        let names = GeneratorSymbols::of(&symbol);
        let name = match which {
            Which::Next => names.next,
            Which::Close => names.close,
            Which::Finalize => names.finalize,
        };
        if let Some(f) = lw.module.get_function(&name) {
            return Ok(Callee::Direct(f));
        }
    }
    let idx = match which {
        Which::Next => field::NEXT,
        Which::Close => field::CLOSE,
        Which::Finalize => field::FINALIZE,
    };
    let pt = prefix_type(lw.ctx, gen_t)?;
    let fp = lw.b.build_struct_gep(pt, obj, idx, "").map_err(llvm_err)?;
    let f =
        lw.b.build_load(ptr, fp, "genfn")
            .map_err(llvm_err)?
            .into_pointer_value();
    Ok(Callee::Indirect(f, fnty))
}

impl<'ctx> FnLower<'ctx, '_> {
    /// Link the compiled module of a jitted function (a generator's, or a callee's) into
    /// this one (once) so its functions can be called directly and inlined; its symbol (a
    /// generator's init symbol), or `None` when the library is not available.
    /// `native_only`: only the native function is called (a jitted callee), so the
    /// library's entry points for Python and foreign callers are left out (less to
    /// optimise).
    pub(crate) fn link_library(
        &mut self,
        id: u64,
        args: &[TypeId],
        native_only: bool,
    ) -> R<Option<String>> {
        if id == 0 {
            return Ok(None);
        }
        let Some(lib) = self.linked.library(id, args) else {
            return Ok(None);
        };
        // Linked already by this lowering. A function of that name brought in by another
        // library does not count: there it is internal, and the optimiser may have
        // changed its signature (constant arguments removed). Linking this library
        // gives the name to its own definition and renames that one.
        if self.linked_libraries.contains(&lib.symbol) {
            return Ok(Some(lib.symbol));
        }
        let m = crate::codegen::parse_ir(self.ctx, &lib.ir, &lib.symbol)?;
        if native_only {
            for name in [
                format!("{}.entry", lib.symbol),
                crate::wrappers::loop_symbol(&lib.symbol),
                crate::wrappers::cfunc_symbol(&lib.symbol),
            ] {
                if let Some(f) = m.get_function(&name) {
                    if inkwell::values::BasicValue::get_first_use(
                        &f.as_global_value().as_pointer_value(),
                    )
                    .is_none()
                    {
                        // SAFETY: nothing in the module uses the wrapper.
                        unsafe { f.delete() };
                    }
                }
            }
        }
        crate::codegen::link_internal(self.module, m)?;
        for d in &lib.frozen.0 {
            if !self
                .frozen_data
                .iter()
                .any(|k| std::sync::Arc::ptr_eq(k, d))
            {
                self.frozen_data.push(d.clone());
            }
        }
        crate::generator::mark_allocator_fns(self.ctx, self.module);
        // Named metadata records which functions' code is in the module (linking merges
        // a library's own list in): a cached caller depends on their sources.
        let id_text = self.ctx.metadata_string(&id.to_string());
        let node = self.ctx.metadata_node(&[id_text.into()]);
        self.module
            .add_global_metadata(crate::cache::LINKED_METADATA, &node)
            .map_err(|e| crate::LowerError::Llvm(e.to_string()))?;
        self.linked_libraries.insert(lib.symbol.clone());
        Ok(Some(lib.symbol))
    }
}

fn refcount_ptr<'ctx>(
    lw: &FnLower<'ctx, '_>,
    gen_t: TypeId,
    obj: PointerValue<'ctx>,
) -> R<PointerValue<'ctx>> {
    let pt = prefix_type(lw.ctx, gen_t)?;
    lw.b.build_struct_gep(pt, obj, field::REFCOUNT, "")
        .map_err(llvm_err)
}

/// Add `delta` to a generator object's reference count; the new count.
fn bump<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    gen_t: TypeId,
    obj: PointerValue<'ctx>,
    delta: i64,
) -> R<IntValue<'ctx>> {
    let p = refcount_ptr(lw, gen_t, obj)?;
    let i64t = lw.ctx.i64_type();
    let n =
        lw.b.build_load(i64t, p, "")
            .map_err(llvm_err)?
            .into_int_value();
    let n =
        lw.b.build_int_add(n, i64t.const_int(delta as u64, true), "")
            .map_err(llvm_err)?;
    lw.b.build_store(p, n).map_err(llvm_err)?;
    Ok(n)
}

/// Take a reference to a generator object.
pub(crate) fn incref<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    gen_t: TypeId,
    obj: PointerValue<'ctx>,
) -> R<()> {
    lw.if_not_null(obj, |lw| bump(lw, gen_t, obj, 1).map(|_| ()))
}

/// Drop a reference to a generator object; the last one finalizes it.
pub(crate) fn decref<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    gen_t: TypeId,
    obj: PointerValue<'ctx>,
) -> R<()> {
    lw.if_not_null(obj, |lw| {
        let n = bump(lw, gen_t, obj, -1)?;
        let last =
            lw.b.build_int_compare(IntPredicate::EQ, n, n.get_type().const_zero(), "")
                .map_err(llvm_err)?;
        let fin = lw.new_block("gen.finalize");
        let done = lw.new_block("gen.alive");
        lw.b.build_conditional_branch(last, fin, done)
            .map_err(llvm_err)?;
        lw.b.position_at_end(fin);
        let f = gen_function(lw, gen_t, obj, Which::Finalize)?;
        call(lw, f, &[obj.into()])?;
        lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
        lw.b.position_at_end(done);
        Ok(())
    })
}

/// Call the generator's `next`: the value (a new reference) and whether there was one.
/// A failing status propagates as a call's does; `StopIteration` gives `valid = false`.
fn gen_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    gen_t: TypeId,
    obj: PointerValue<'ctx>,
) -> R<(BasicValueEnum<'ctx>, IntValue<'ctx>)> {
    let y = lowered(parts(gen_t)?.yield_type);
    let ym = memory_type(lw.ctx, y)?;
    let slot = lw.alloca_in_entry(ym, "yielded")?;
    let f = gen_function(lw, gen_t, obj, Which::Next)?;
    let status = call(lw, f, &[slot.into(), lw.excinfo.into(), obj.into()])?
        .ok_or_else(|| LowerError::Llvm("next returned void".into()))?
        .into_int_value();
    let i32t = lw.ctx.i32_type();
    let ok =
        lw.b.build_int_compare(IntPredicate::EQ, status, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    let stop =
        lw.b.build_int_compare(
            IntPredicate::EQ,
            status,
            i32t.const_int(STATUS_STOPIT as u64, true),
            "",
        )
        .map_err(llvm_err)?;
    let normal = lw.b.build_or(ok, stop, "").map_err(llvm_err)?;
    let fail = lw.new_block("gen.fail");
    let cont = lw.new_block("gen.cont");
    lw.b.build_conditional_branch(normal, cont, fail)
        .map_err(llvm_err)?;
    lw.b.position_at_end(fail);
    lw.propagate_status(status, cont)?;
    lw.b.position_at_end(cont);
    // On a failure inside a `try` the exception is pending and the loop stops.
    let valid = lw.b.build_and(ok, normal, "valid").map_err(llvm_err)?;
    let v = lw.b.build_load(ym, slot, "").map_err(llvm_err)?;
    let zero: BasicTypeEnum = ym;
    let v =
        lw.b.build_select(valid, v, zero.const_zero(), "")
            .map_err(llvm_err)?;
    let v = model_of(y)?.load_memory(lw.ctx, &lw.b, y, v)?;
    Ok((v, valid))
}

/// The (value, valid) pair of `next` on any iterator, as a new reference.
fn next_pair<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    it_t: TypeId,
    it: BasicValueEnum<'ctx>,
) -> R<(BasicValueEnum<'ctx>, IntValue<'ctx>, TypeId)> {
    let y = iter_yield(it_t)
        .map(lowered)
        .ok_or_else(|| lw.unsupported(format!("cannot iterate over {it_t}")))?;
    if is_generator(it_t) {
        let (v, ok) = gen_next(lw, it_t, it.into_pointer_value())?;
        return Ok((v, ok, y));
    }
    let (v, ok) = crate::impls::iter::next_of(lw, it_t, it)?;
    // Other iterators hand out borrowed values (array rows are views).
    if crate::nrt::is_refcounted(y) {
        lw.incref(y, v)?;
    }
    Ok((v, ok, y))
}

fn builtin_next<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (v, ok, y) = next_pair(lw, sig.args[0], a[0])?;
    let ret = lowered(sig.ret);
    let v = lw.cast(v, y, ret)?;
    match (a.get(1), sig.args.get(1)) {
        (Some(&d), Some(&dt)) => {
            let d = lw.cast(d, lowered(dt), ret)?;
            let out = lw.b.build_select(ok, v, d, "").map_err(llvm_err)?;
            // The default is borrowed from its variable; the result is a new reference.
            let from_default = lw.b.build_not(ok, "").map_err(llvm_err)?;
            if crate::nrt::is_refcounted(ret) {
                let then = lw.new_block("next.default");
                let done = lw.new_block("next.done");
                lw.b.build_conditional_branch(from_default, then, done)
                    .map_err(llvm_err)?;
                lw.b.position_at_end(then);
                lw.incref(ret, d)?;
                lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
                lw.b.position_at_end(done);
            }
            Ok(out)
        }
        _ => {
            let stop = lw.b.build_not(ok, "").map_err(llvm_err)?;
            lw.raise_const_if(stop, "StopIteration", &[])?;
            Ok(v)
        }
    }
}

fn send<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let gen_t = sig.args[0];
    let obj = a[0].into_pointer_value();
    let p = parts(gen_t)?;
    let sent_t = lowered(p.send_type);
    let v_t = lowered(sig.args[1]);
    if sent_t != NONE && v_t != NONE {
        let pt = prefix_type(lw.ctx, gen_t)?;
        let ip =
            lw.b.build_struct_gep(pt, obj, field::RESUME_INDEX, "")
                .map_err(llvm_err)?;
        let i32t = lw.ctx.i32_type();
        let idx =
            lw.b.build_load(i32t, ip, "")
                .map_err(llvm_err)?
                .into_int_value();
        let fresh =
            lw.b.build_int_compare(IntPredicate::EQ, idx, i32t.const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(
            fresh,
            "TypeError",
            &["can't send non-None value to a just-started generator"],
        )?;
        let v = lw.cast(a[1], v_t, sent_t)?;
        let m = model_of(sent_t)?.store_memory(lw.ctx, &lw.b, sent_t, v)?;
        let sp =
            lw.b.build_struct_gep(pt, obj, field::SENT, "")
                .map_err(llvm_err)?;
        lw.b.build_store(sp, m).map_err(llvm_err)?;
    }
    let (v, ok) = gen_next(lw, gen_t, obj)?;
    let stop = lw.b.build_not(ok, "").map_err(llvm_err)?;
    lw.raise_const_if(stop, "StopIteration", &[])?;
    lw.cast(v, lowered(p.yield_type), lowered(sig.ret))
}

/// A loop over `x`'s iterator: `step(lw, acc, item)` gives the new accumulator; the
/// result is the accumulator after the last item and whether there was any.
pub(crate) fn fold_loop<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    x_t: TypeId,
    x: BasicValueEnum<'ctx>,
    init: BasicValueEnum<'ctx>,
    mut step: impl FnMut(
        &mut FnLower<'ctx, '_>,
        BasicValueEnum<'ctx>,
        BasicValueEnum<'ctx>,
        TypeId,
        IntValue<'ctx>,
    ) -> R<BasicValueEnum<'ctx>>,
) -> R<(BasicValueEnum<'ctx>, IntValue<'ctx>)> {
    let (it, it_t) = crate::impls::builtins::iterator_of(lw, x_t, x)?;
    let acc = lw.alloca_in_entry(init.get_type(), "fold.acc")?;
    lw.b.build_store(acc, init).map_err(llvm_err)?;
    let seen = lw.alloca_in_entry(lw.ctx.bool_type().into(), "fold.seen")?;
    lw.b.build_store(seen, lw.ctx.bool_type().const_zero())
        .map_err(llvm_err)?;
    let head = lw.new_block("fold.head");
    let body = lw.new_block("fold.body");
    let done = lw.new_block("fold.done");
    lw.b.build_unconditional_branch(head).map_err(llvm_err)?;
    lw.b.position_at_end(head);
    let (v, ok, y) = next_pair(lw, it_t, it)?;
    lw.b.build_conditional_branch(ok, body, done)
        .map_err(llvm_err)?;
    lw.b.position_at_end(body);
    let a =
        lw.b.build_load(init.get_type(), acc, "")
            .map_err(llvm_err)?;
    let first =
        lw.b.build_load(lw.ctx.bool_type(), seen, "")
            .map_err(llvm_err)?
            .into_int_value();
    let first = lw.b.build_not(first, "first").map_err(llvm_err)?;
    let a = step(lw, a, v, y, first)?;
    lw.b.build_store(acc, a).map_err(llvm_err)?;
    lw.b.build_store(seen, lw.ctx.bool_type().const_int(1, false))
        .map_err(llvm_err)?;
    lw.b.build_unconditional_branch(head).map_err(llvm_err)?;
    lw.b.position_at_end(done);
    let a =
        lw.b.build_load(init.get_type(), acc, "")
            .map_err(llvm_err)?;
    let s =
        lw.b.build_load(lw.ctx.bool_type(), seen, "")
            .map_err(llvm_err)?
            .into_int_value();
    Ok((a, s))
}

fn sum<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ret = lowered(sig.ret);
    let start = match a.get(1) {
        Some(&s) => lw.cast(s, lowered(sig.args[1]), ret)?,
        None => lw.cast(lw.ctx.i64_type().const_zero().into(), INT64, ret)?,
    };
    let add = lw
        .registry_sig(numba_ir::BinOp::Add, ret, ret)
        .ok_or_else(|| lw.unsupported(format!("no + on {ret}")))?;
    let (acc, _) = fold_loop(lw, sig.args[0], a[0], start, |lw, acc, v, y, _| {
        let v = lw.cast(v, y, ret)?;
        let r = lw.call_impl(&add, &[acc, v])?;
        lw.cast(r, lowered(add.ret), ret)
    })?;
    Ok(acc)
}

/// `min`, `max`, `any`, `all` over an iterable.
fn fold<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(k) = &sig.key else {
        return Err(LowerError::Llvm("fold without a function key".into()));
    };
    let ret = lowered(sig.ret);
    let bool_t = lw.ctx.bool_type();
    match k.as_str() {
        "any" | "all" => {
            let any = k == "any";
            let init = bool_t.const_int(u64::from(!any), false).into();
            let (acc, _) = fold_loop(lw, sig.args[0], a[0], init, |lw, acc, v, y, _| {
                let t = lw.truth(v, y)?;
                let acc = acc.into_int_value();
                Ok(if any {
                    lw.b.build_or(acc, t, "").map_err(llvm_err)?.into()
                } else {
                    lw.b.build_and(acc, t, "").map_err(llvm_err)?.into()
                })
            })?;
            Ok(acc)
        }
        "min" | "max" => {
            let op = if k == "min" {
                numba_ir::BinOp::Lt
            } else {
                numba_ir::BinOp::Gt
            };
            let cmp = lw
                .registry_sig(op, ret, ret)
                .ok_or_else(|| lw.unsupported(format!("no comparison on {ret}")))?;
            let init = crate::model::value_type(lw.ctx, ret)?.const_zero();
            let (acc, seen) = fold_loop(lw, sig.args[0], a[0], init, |lw, acc, v, y, first| {
                let v = lw.cast(v, y, ret)?;
                let better = lw.call_impl(&cmp, &[v, acc])?;
                let better = lw.truth(better, lowered(cmp.ret))?;
                let take = lw.b.build_or(first, better, "").map_err(llvm_err)?;
                lw.b.build_select(take, v, acc, "").map_err(llvm_err)
            })?;
            let empty = lw.b.build_not(seen, "").map_err(llvm_err)?;
            let msg = format!("{k}() arg is an empty sequence");
            lw.raise_const_if(empty, "ValueError", &[&msg])?;
            Ok(acc)
        }
        other => Err(lw.unsupported(format!("{other} over an iterable"))),
    }
}
