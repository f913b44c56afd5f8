//! Lowering a generator function (seed 000, numba-facts §8) into the functions that
//! implement its object (`model::generator`):
//!
//! - the **init** function (the function's own symbol and native signature): allocates
//!   the object, takes a reference to every argument it keeps, sets `resume_index = 0`
//!   and zeroes the state;
//! - **`<symbol>.next`** (`i32 next(ret*, excinfo**, obj*)`): the body, entered through
//!   `generator_prologue`, a switch on the resume index (0: the first block, i: the
//!   resume point after yield i, otherwise `StopIteration`). A yield moves the variables
//!   live across it into the state, stores its index and returns the value; the resume
//!   point moves them back and reads what `send` passed. `return` marks the generator
//!   exhausted and returns `STATUS_STOPIT`; so does any exception leaving the body;
//! - **`<symbol>.close`**: releases the variables saved at the current yield point and
//!   marks the generator exhausted (`close()`, and the first half of finalizing);
//! - **`finalize_<symbol>.next`**: close, release the arguments, free the object. Unlike
//!   Numba's, a generator dropped before it is exhausted leaks nothing;
//! - **`<symbol>.next.entry`**: `next` for numba-py, the yielded value packed into
//!   boundary slots and a sent value unpacked from them.
//!
//! Iterators live in their frame (`model::iter`), so an iterator saved across a yield
//! is saved by value (its state, recursively) and gets fresh storage when restored.

use std::collections::HashMap;

use inkwell::basic_block::BasicBlock;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{BasicTypeEnum, StructType};
use inkwell::values::{BasicValueEnum, FunctionValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use numba_ir::{FunctionIR, VarId};
use numba_typeinfer::types::*;
use numba_typeinfer::TypingResult;

use crate::callconv::{boundary_shape, native_fn_type};
use crate::function::FnLower;
use crate::model::generator::{field, object_type, parts};
use crate::model::{lowered, memory_type, model_of, value_type, SlotCodec};
use crate::registry::Registry;
use crate::{llvm_err, LinkedFunctions, LowerError, LowerOptions, R, STATUS_OK, STATUS_STOPIT};

/// What lowering a generator's `next` needs beside the ordinary function state.
pub(crate) struct NextState<'ctx> {
    obj: PointerValue<'ctx>,
    obj_t: StructType<'ctx>,
    args: Vec<BasicValueEnum<'ctx>>,
    gen_t: TypeId,
    /// Per yield index: the variables it saves and their state slots.
    saved: HashMap<u32, Vec<(VarId, u32)>>,
    resume: Vec<(u32, BasicBlock<'ctx>)>,
}

/// The names of a generator's functions, from its init symbol.
pub struct GeneratorSymbols {
    pub init: String,
    pub next: String,
    pub close: String,
    pub finalize: String,
    pub resume_entry: String,
}

impl GeneratorSymbols {
    pub fn of(init: &str) -> Self {
        GeneratorSymbols {
            init: init.to_string(),
            next: format!("{init}.next"),
            close: format!("{init}.close"),
            finalize: format!("finalize_{init}.next"),
            resume_entry: format!("{init}.next.entry"),
        }
    }
}

/// The storage types of an iterator's state members (`model::iterator_storage`).
fn iterator_members(t: TypeId) -> Option<Vec<TypeId>> {
    Some(match t.get() {
        Type::RangeIter64 => vec![INT64; 3],
        Type::Enumerate(inner) => vec![INT64, inner],
        Type::Zip(inners) => inners,
        Type::ArrayIter(src) => vec![INT64, src],
        _ => return None,
    })
}

/// How a state variable of type `t` is kept in the object: its memory form, or for an
/// iterator its state by value.
pub(crate) fn state_type(ctx: &Context, t: TypeId) -> R<BasicTypeEnum<'_>> {
    match iterator_members(t) {
        Some(ms) => {
            let tys = ms
                .iter()
                .map(|&m| state_type(ctx, m))
                .collect::<R<Vec<_>>>()?;
            Ok(ctx.struct_type(&tys, false).into())
        }
        None => memory_type(ctx, t),
    }
}

impl<'ctx> FnLower<'ctx, '_> {
    /// `v` (of type `t`) in its state form.
    fn state_save(&mut self, t: TypeId, v: BasicValueEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let Some(ms) = iterator_members(t) else {
            return model_of(t)?.store_memory(self.ctx, &self.b, t, v);
        };
        let st = crate::model::iterator_storage(self.ctx, t)?;
        let out_t = state_type(self.ctx, t)?.into_struct_type();
        let mut agg = out_t.get_undef();
        for (i, m) in ms.into_iter().enumerate() {
            let p = self
                .b
                .build_struct_gep(st, v.into_pointer_value(), i as u32, "")
                .map_err(llvm_err)?;
            let x = self
                .b
                .build_load(value_type(self.ctx, m)?, p, "")
                .map_err(llvm_err)?;
            let x = self.state_save(m, x)?;
            agg = self
                .b
                .build_insert_value(agg, x, i as u32, "")
                .map_err(llvm_err)?
                .into_struct_value();
        }
        Ok(agg.into())
    }

    /// A value of type `t` from its state form.
    fn state_restore(&mut self, t: TypeId, m: BasicValueEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let Some(ms) = iterator_members(t) else {
            return model_of(t)?.load_memory(self.ctx, &self.b, t, m);
        };
        let st = crate::model::iterator_storage(self.ctx, t)?;
        let storage = self.alloca_in_entry(st.into(), "restored_iter")?;
        for (i, mt) in ms.into_iter().enumerate() {
            let x = self
                .b
                .build_extract_value(m.into_struct_value(), i as u32, "")
                .map_err(llvm_err)?;
            let x = self.state_restore(mt, x)?;
            let p = self
                .b
                .build_struct_gep(st, storage, i as u32, "")
                .map_err(llvm_err)?;
            self.b.build_store(p, x).map_err(llvm_err)?;
        }
        Ok(storage.into())
    }

    fn next_state(&self) -> R<&NextState<'ctx>> {
        self.gen
            .as_ref()
            .ok_or_else(|| LowerError::Llvm("not lowering a generator".into()))
    }

    fn obj_field(&self, i: u32) -> R<PointerValue<'ctx>> {
        let g = self.next_state()?;
        self.b
            .build_struct_gep(g.obj_t, g.obj, i, "")
            .map_err(llvm_err)
    }

    /// Argument `i` of the generator, loaded from the object on entry to `next`.
    pub(crate) fn generator_arg(&self, i: usize) -> R<BasicValueEnum<'ctx>> {
        self.next_state()?
            .args
            .get(i)
            .copied()
            .ok_or_else(|| LowerError::Llvm("generator argument out of range".into()))
    }

    fn store_resume_index(&self, i: i64) -> R<()> {
        let p = self.obj_field(field::RESUME_INDEX)?;
        self.b
            .build_store(p, self.ctx.i32_type().const_int(i as u64, true))
            .map_err(llvm_err)?;
        Ok(())
    }

    /// `target = yield value` (yield point `index`).
    pub(crate) fn lower_yield(&mut self, target: VarId, value: VarId, index: u32) -> R<()> {
        let (gen_t, saved) = {
            let g = self.next_state()?;
            (g.gen_t, g.saved.get(&index).cloned().unwrap_or_default())
        };
        let p = parts(gen_t)?;
        // Suspend: the live variables move into the state (their references with them).
        for &(v, k) in &saved {
            let x = self.load(v)?;
            let x = self.state_save(self.ty(v), x)?;
            let st = self.obj_field(field::STATE)?;
            let g = self.next_state()?;
            let state_t = g
                .obj_t
                .get_field_type_at_index(field::STATE)
                .ok_or_else(|| LowerError::Llvm("generator object without state".into()))?;
            let slot = self
                .b
                .build_struct_gep(state_t.into_struct_type(), st, k, "")
                .map_err(llvm_err)?;
            self.b.build_store(slot, x).map_err(llvm_err)?;
        }
        self.store_resume_index(i64::from(index))?;
        // The yielded value is a new reference for the consumer.
        let y = lowered(p.yield_type);
        let v = self.load(value)?;
        let v = self.cast(v, self.ty(value), y)?;
        self.incref(y, v)?;
        let mem = model_of(y)?.store_memory(self.ctx, &self.b, y, v)?;
        self.b.build_store(self.retptr(), mem).map_err(llvm_err)?;
        self.release_caught()?;
        self.b
            .build_return(Some(&self.ctx.i32_type().const_int(STATUS_OK as u64, true)))
            .map_err(llvm_err)?;
        // Resume: the variables move back; the yield evaluates to what was sent.
        let bb = self.new_block(&format!("generator_resume{index}"));
        if let Some(g) = self.gen.as_mut() {
            g.resume.push((index, bb));
        }
        self.b.position_at_end(bb);
        for &(v, k) in &saved {
            let st = self.obj_field(field::STATE)?;
            let g = self.next_state()?;
            let state_t = g
                .obj_t
                .get_field_type_at_index(field::STATE)
                .ok_or_else(|| LowerError::Llvm("generator object without state".into()))?
                .into_struct_type();
            let slot = self
                .b
                .build_struct_gep(state_t, st, k, "")
                .map_err(llvm_err)?;
            let slot_t = state_t
                .get_field_type_at_index(k)
                .ok_or_else(|| LowerError::Llvm("state slot".into()))?;
            let m = self.b.build_load(slot_t, slot, "").map_err(llvm_err)?;
            let x = self.state_restore(self.ty(v), m)?;
            self.b.build_store(self.slot(v), x).map_err(llvm_err)?;
        }
        let sent_t = lowered(p.send_type);
        let sent = if sent_t == NONE {
            self.ghost()
        } else {
            let sp = self.obj_field(field::SENT)?;
            let mt = memory_type(self.ctx, sent_t)?;
            let m = self.b.build_load(mt, sp, "sent").map_err(llvm_err)?;
            // Consumed: the next `next()` sends None again.
            self.b.build_store(sp, mt.const_zero()).map_err(llvm_err)?;
            model_of(sent_t)?.load_memory(self.ctx, &self.b, sent_t, m)?
        };
        let sent = self.cast(sent, sent_t, self.ty(target))?;
        self.store_var(target, sent)
    }

    /// `return` in a generator: the value is dropped and iteration ends.
    pub(crate) fn generator_return(&mut self, value: VarId) -> R<()> {
        let v = self.load(value)?;
        self.decref(self.ty(value), v)?;
        self.store_resume_index(-1)?;
        self.release_caught()?;
        self.b
            .build_return(Some(
                &self.ctx.i32_type().const_int(STATUS_STOPIT as u64, true),
            ))
            .map_err(llvm_err)?;
        Ok(())
    }

    /// The resume switch `generator_prologue` ends with.
    pub(crate) fn finish_generator_prologue(
        &mut self,
        prologue: BasicBlock<'ctx>,
        first: BasicBlock<'ctx>,
    ) -> R<()> {
        let stop = self.new_block("stop_iteration");
        self.b.position_at_end(stop);
        self.b
            .build_return(Some(
                &self.ctx.i32_type().const_int(STATUS_STOPIT as u64, true),
            ))
            .map_err(llvm_err)?;
        self.b.position_at_end(prologue);
        let p = self.obj_field(field::RESUME_INDEX)?;
        let i32t = self.ctx.i32_type();
        let idx = self
            .b
            .build_load(i32t, p, "resume_index")
            .map_err(llvm_err)?
            .into_int_value();
        let mut cases = vec![(i32t.const_zero(), first)];
        for &(i, bb) in &self.next_state()?.resume {
            cases.push((i32t.const_int(u64::from(i), false), bb));
        }
        self.b.build_switch(idx, stop, &cases).map_err(llvm_err)?;
        Ok(())
    }
}

/// The functions of one lowered generator.
pub(crate) struct LoweredGenerator<'ctx> {
    pub init: FunctionValue<'ctx>,
    pub externals: Vec<(String, usize)>,
    pub frozen_data: Vec<std::sync::Arc<[u8]>>,
}

/// The generator's arguments, loaded from the object `obj` (of layout `obj_t`).
fn load_args<'ctx>(
    lw: &FnLower<'ctx, '_>,
    obj_t: StructType<'ctx>,
    obj: PointerValue<'ctx>,
    arg_types: &[TypeId],
) -> R<Vec<BasicValueEnum<'ctx>>> {
    let args_t = obj_t
        .get_field_type_at_index(field::ARGS)
        .ok_or_else(|| LowerError::Llvm("generator object without args".into()))?
        .into_struct_type();
    let args_p =
        lw.b.build_struct_gep(obj_t, obj, field::ARGS, "gen.args")
            .map_err(llvm_err)?;
    let mut out = Vec::with_capacity(arg_types.len());
    for (i, &a) in arg_types.iter().enumerate() {
        let a = lowered(a);
        let ap =
            lw.b.build_struct_gep(args_t, args_p, i as u32, "")
                .map_err(llvm_err)?;
        let m =
            lw.b.build_load(memory_type(lw.ctx, a)?, ap, "")
                .map_err(llvm_err)?;
        out.push(model_of(a)?.load_memory(lw.ctx, &lw.b, a, m)?);
    }
    Ok(out)
}

/// Lower the generator function `ir` into `module` under `symbol` (see the module docs).
#[allow(clippy::too_many_arguments)]
pub(crate) fn lower_generator<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    symbol: &str,
    ir: &FunctionIR,
    typing: &TypingResult,
    registry: &Registry,
    options: &LowerOptions,
    linked: &dyn LinkedFunctions,
) -> R<LoweredGenerator<'ctx>> {
    let gen_t = typing.return_type;
    let p = parts(gen_t)?;
    let names = GeneratorSymbols::of(symbol);
    let gi = ir.generator_info.clone().unwrap_or_default();
    let state_tys: Vec<TypeId> = gi
        .state_vars
        .iter()
        .map(|v| lowered(typing.type_of(*v)))
        .collect();
    let state_llvm = state_tys
        .iter()
        .map(|&t| state_type(ctx, t))
        .collect::<R<Vec<_>>>()?;
    let obj_t = object_type(ctx, gen_t, &state_llvm)?;
    let index_of: HashMap<VarId, u32> = gi
        .state_vars
        .iter()
        .enumerate()
        .map(|(i, v)| (*v, i as u32))
        .collect();
    let mut saved = HashMap::new();
    for yp in &gi.yield_points {
        let mut vars: Vec<(VarId, u32)> = yp
            .live_vars
            .iter()
            .chain(yp.weak_live_vars.iter())
            .filter_map(|v| index_of.get(v).map(|&k| (*v, k)))
            .collect();
        vars.sort();
        vars.dedup();
        saved.insert(yp.index, vars);
    }

    let ptr = ctx.ptr_type(AddressSpace::default());
    let void_obj = ctx.void_type().fn_type(&[ptr.into()], false);
    let init = module.add_function(symbol, native_fn_type(ctx, &typing.arg_types)?, None);
    let next = module.add_function(&names.next, native_fn_type(ctx, &[gen_t])?, None);
    let close = module.add_function(&names.close, void_obj, None);
    let finalize = module.add_function(&names.finalize, void_obj, None);
    let resume_entry = module.add_function(
        &names.resume_entry,
        ctx.i32_type()
            .fn_type(&[ptr.into(), ptr.into(), ptr.into(), ptr.into()], false),
        None,
    );
    let mut externals = Vec::new();
    let mut frozen_data = Vec::new();

    // next: the body.
    {
        let mut lw = FnLower::new(ctx, module, next, ir, typing, registry, options, linked)?;
        let obj = next
            .get_nth_param(2)
            .ok_or_else(|| LowerError::Llvm("next without its generator".into()))?
            .into_pointer_value();
        obj.set_name("gen");
        let args = load_args(&lw, obj_t, obj, &typing.arg_types)?;
        lw.gen = Some(NextState {
            obj,
            obj_t,
            args,
            gen_t,
            saved: saved.clone(),
            resume: Vec::new(),
        });
        lw.lower_body()?;
        externals.append(&mut lw.externals);
        frozen_data.append(&mut lw.frozen_data);
    }
    exhaust_on_error(ctx, next, obj_t)?;
    next.add_attribute(
        inkwell::attributes::AttributeLoc::Function,
        ctx.create_enum_attribute(
            inkwell::attributes::Attribute::get_named_enum_kind_id("inlinehint"),
            0,
        ),
    );

    // close: release what the current yield point saved; mark exhausted.
    {
        let mut lw = FnLower::new(ctx, module, close, ir, typing, registry, options, linked)?;
        let obj = close
            .get_nth_param(0)
            .ok_or_else(|| LowerError::Llvm("close without its generator".into()))?
            .into_pointer_value();
        let i32t = ctx.i32_type();
        let ip =
            lw.b.build_struct_gep(obj_t, obj, field::RESUME_INDEX, "")
                .map_err(llvm_err)?;
        let idx =
            lw.b.build_load(i32t, ip, "resume_index")
                .map_err(llvm_err)?
                .into_int_value();
        let done = lw.new_block("closed");
        let mut cases = Vec::new();
        let here =
            lw.b.get_insert_block()
                .ok_or_else(|| LowerError::Llvm("no block".into()))?;
        let state_t = obj_t
            .get_field_type_at_index(field::STATE)
            .ok_or_else(|| LowerError::Llvm("generator object without state".into()))?
            .into_struct_type();
        let mut points: Vec<(&u32, &Vec<(VarId, u32)>)> = saved.iter().collect();
        points.sort();
        for (&i, vars) in points {
            if !vars
                .iter()
                .any(|(v, _)| crate::nrt::is_refcounted(lw.ty(*v)))
            {
                continue;
            }
            let bb = lw.new_block(&format!("release{i}"));
            lw.b.position_at_end(bb);
            let sp =
                lw.b.build_struct_gep(obj_t, obj, field::STATE, "")
                    .map_err(llvm_err)?;
            for &(v, k) in vars {
                let t = lw.ty(v);
                if !crate::nrt::is_refcounted(t) {
                    continue;
                }
                let slot =
                    lw.b.build_struct_gep(state_t, sp, k, "")
                        .map_err(llvm_err)?;
                let m =
                    lw.b.build_load(state_llvm[k as usize], slot, "")
                        .map_err(llvm_err)?;
                let x = lw.state_restore(t, m)?;
                lw.decref(t, x)?;
            }
            lw.b.build_unconditional_branch(done).map_err(llvm_err)?;
            cases.push((i32t.const_int(u64::from(i), false), bb));
        }
        lw.b.position_at_end(here);
        lw.b.build_switch(idx, done, &cases).map_err(llvm_err)?;
        lw.b.position_at_end(done);
        lw.b.build_store(ip, i32t.const_int(u64::MAX, true))
            .map_err(llvm_err)?;
        lw.b.build_return(None).map_err(llvm_err)?;
    }

    // finalize: close, release the arguments, free the object.
    {
        let mut lw = FnLower::new(ctx, module, finalize, ir, typing, registry, options, linked)?;
        let obj = finalize
            .get_nth_param(0)
            .ok_or_else(|| LowerError::Llvm("finalize without its generator".into()))?
            .into_pointer_value();
        lw.b.build_call(close, &[obj.into()], "")
            .map_err(llvm_err)?;
        let args = load_args(&lw, obj_t, obj, &typing.arg_types)?;
        for (&a, v) in typing.arg_types.iter().zip(args) {
            lw.decref(lowered(a), v)?;
        }
        let free = lw.runtime_fn("NRT_Free", void_obj);
        lw.b.build_call(free, &[obj.into()], "").map_err(llvm_err)?;
        lw.b.build_return(None).map_err(llvm_err)?;
    }

    // The resume entry for numba-py (null in the header when values cannot cross).
    let entry_ok = build_resume_entry(ctx, module, resume_entry, next, obj_t, &p)?;
    if !entry_ok {
        // SAFETY: the function has no uses yet.
        unsafe { resume_entry.delete() };
    }

    // init: allocate and fill the object.
    {
        let mut lw = FnLower::new(ctx, module, init, ir, typing, registry, options, linked)?;
        let alloc = lw.runtime_fn("NRT_Allocate", ptr.fn_type(&[ctx.i64_type().into()], false));
        let size = obj_t
            .size_of()
            .ok_or_else(|| LowerError::Llvm("generator object size".into()))?;
        let obj = lw.call_value(alloc, &[size.into()])?.into_pointer_value();
        let field_p = |lw: &FnLower<'ctx, '_>, i: u32| {
            lw.b.build_struct_gep(obj_t, obj, i, "").map_err(llvm_err)
        };
        let st = |lw: &FnLower<'ctx, '_>, i: u32, v: BasicValueEnum<'ctx>| -> R<()> {
            let p = field_p(lw, i)?;
            lw.b.build_store(p, v).map_err(llvm_err)?;
            Ok(())
        };
        st(
            &lw,
            field::REFCOUNT,
            ctx.i64_type().const_int(1, false).into(),
        )?;
        st(
            &lw,
            field::NEXT,
            next.as_global_value().as_pointer_value().into(),
        )?;
        st(
            &lw,
            field::FINALIZE,
            finalize.as_global_value().as_pointer_value().into(),
        )?;
        st(
            &lw,
            field::CLOSE,
            close.as_global_value().as_pointer_value().into(),
        )?;
        let re = if entry_ok {
            resume_entry.as_global_value().as_pointer_value()
        } else {
            ptr.const_null()
        };
        st(&lw, field::RESUME_ENTRY, re.into())?;
        st(&lw, field::RESUME_INDEX, ctx.i32_type().const_zero().into())?;
        let sent_t = obj_t
            .get_field_type_at_index(field::SENT)
            .ok_or_else(|| LowerError::Llvm("generator object without a send slot".into()))?;
        st(&lw, field::SENT, sent_t.const_zero())?;
        let state_t = obj_t
            .get_field_type_at_index(field::STATE)
            .ok_or_else(|| LowerError::Llvm("generator object without state".into()))?;
        st(&lw, field::STATE, state_t.const_zero())?;
        let args_t = obj_t
            .get_field_type_at_index(field::ARGS)
            .ok_or_else(|| LowerError::Llvm("generator object without args".into()))?
            .into_struct_type();
        let args_p = field_p(&lw, field::ARGS)?;
        for (i, &a) in typing.arg_types.iter().enumerate() {
            let a = lowered(a);
            let v = init
                .get_nth_param(i as u32 + 2)
                .ok_or_else(|| LowerError::Llvm("missing argument".into()))?;
            // The object keeps its own reference to every argument.
            lw.incref(a, v)?;
            let m = model_of(a)?.store_memory(ctx, &lw.b, a, v)?;
            let ap =
                lw.b.build_struct_gep(args_t, args_p, i as u32, "")
                    .map_err(llvm_err)?;
            lw.b.build_store(ap, m).map_err(llvm_err)?;
        }
        let ret = lw.retptr();
        lw.b.build_store(ret, obj).map_err(llvm_err)?;
        lw.b.build_return(Some(&ctx.i32_type().const_int(STATUS_OK as u64, true)))
            .map_err(llvm_err)?;
    }
    mark_allocator_fns(ctx, module);
    Ok(LoweredGenerator {
        init,
        externals,
        frozen_data,
    })
}

/// Tell LLVM that `NRT_Allocate` and `NRT_Free` are an allocator pair (as it knows
/// `malloc`/`free`): a generator consumed where it was made then lives in registers, its
/// object's allocation and stores removed, as Numba's stack-allocated generators are.
pub(crate) fn mark_allocator_fns<'ctx>(ctx: &'ctx Context, module: &Module<'ctx>) {
    use inkwell::attributes::{Attribute, AttributeLoc};
    let kind = |name: &str| Attribute::get_named_enum_kind_id(name);
    let family = ctx.create_string_attribute("alloc-family", "nrt");
    if let Some(f) = module.get_function("NRT_Allocate") {
        f.add_attribute(
            AttributeLoc::Return,
            ctx.create_enum_attribute(kind("noalias"), 0),
        );
        // allockind("alloc,uninitialized"); allocsize(0) (no element-count argument).
        f.add_attribute(
            AttributeLoc::Function,
            ctx.create_enum_attribute(kind("allockind"), 1 | 8),
        );
        f.add_attribute(
            AttributeLoc::Function,
            ctx.create_enum_attribute(kind("allocsize"), 0xFFFF_FFFF),
        );
        f.add_attribute(AttributeLoc::Function, family);
    }
    if let Some(f) = module.get_function("NRT_Free") {
        f.add_attribute(
            AttributeLoc::Function,
            ctx.create_enum_attribute(kind("allockind"), 4),
        );
        f.add_attribute(
            AttributeLoc::Param(0),
            ctx.create_enum_attribute(kind("allocptr"), 0),
        );
        f.add_attribute(
            AttributeLoc::Param(0),
            ctx.create_enum_attribute(kind("nocapture"), 0),
        );
        f.add_attribute(AttributeLoc::Function, family);
    }
}

/// Any return from `next` that is neither a yield (OK) nor the end (STOPIT) is an
/// exception: the generator is finished afterwards, as in Python.
fn exhaust_on_error<'ctx>(
    ctx: &'ctx Context,
    next: FunctionValue<'ctx>,
    obj_t: StructType<'ctx>,
) -> R<()> {
    let b = ctx.create_builder();
    let obj = next
        .get_nth_param(2)
        .ok_or_else(|| LowerError::Llvm("next without its generator".into()))?
        .into_pointer_value();
    for bb in next.get_basic_blocks() {
        let Some(term) = bb.get_terminator() else {
            continue;
        };
        if term.get_opcode() != inkwell::values::InstructionOpcode::Return {
            continue;
        }
        let status = term.get_operand(0).and_then(|o| match o {
            inkwell::values::Operand::Value(v) => Some(v.into_int_value()),
            inkwell::values::Operand::Block(_) => None,
        });
        let Some(status) = status else { continue };
        if let Some(c) = status.get_sign_extended_constant() {
            if c == i64::from(STATUS_OK) || c == i64::from(STATUS_STOPIT) {
                continue;
            }
        }
        b.position_before(&term);
        let p = b
            .build_struct_gep(obj_t, obj, field::RESUME_INDEX, "")
            .map_err(llvm_err)?;
        b.build_store(p, ctx.i32_type().const_int(u64::MAX, true))
            .map_err(llvm_err)?;
    }
    Ok(())
}

/// `i32 resume_entry(u64* ret, excinfo**, obj*, const u64* sent)`; false when the
/// yielded (or sent) values cannot cross into Python.
fn build_resume_entry<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    f: FunctionValue<'ctx>,
    next: FunctionValue<'ctx>,
    obj_t: StructType<'ctx>,
    p: &crate::model::generator::GenParts,
) -> R<bool> {
    let y = lowered(p.yield_type);
    let s = lowered(p.send_type);
    if boundary_shape(y).is_err() || boundary_shape(s).is_err() {
        return Ok(false);
    }
    let _ = module;
    let b = ctx.create_builder();
    let entry = ctx.append_basic_block(f, "entry");
    b.position_at_end(entry);
    let param = |i: u32| -> R<PointerValue<'ctx>> {
        f.get_nth_param(i)
            .map(|p| p.into_pointer_value())
            .ok_or_else(|| LowerError::Llvm("resume entry parameter".into()))
    };
    let (ret, exc, obj, sent) = (param(0)?, param(1)?, param(2)?, param(3)?);
    if s != NONE {
        let has = b.build_is_not_null(sent, "").map_err(llvm_err)?;
        let put = ctx.append_basic_block(f, "send");
        let go = ctx.append_basic_block(f, "resume");
        b.build_conditional_branch(has, put, go).map_err(llvm_err)?;
        b.position_at_end(put);
        let codec = SlotCodec {
            ctx,
            b: &b,
            slots: sent,
        };
        let mut idx = 0u32;
        let v = model_of(s)?.unpack(&codec, s, &mut idx)?;
        let m = model_of(s)?.store_memory(ctx, &b, s, v)?;
        let sp = b
            .build_struct_gep(obj_t, obj, field::SENT, "")
            .map_err(llvm_err)?;
        b.build_store(sp, m).map_err(llvm_err)?;
        b.build_unconditional_branch(go).map_err(llvm_err)?;
        b.position_at_end(go);
    }
    let ym = memory_type(ctx, y)?;
    let slot = b.build_alloca(ym, "yielded").map_err(llvm_err)?;
    let status = b
        .build_call(next, &[slot.into(), exc.into(), obj.into()], "status")
        .map_err(llvm_err)?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("next returned void".into()))?
        .into_int_value();
    let ok = b
        .build_int_compare(IntPredicate::EQ, status, ctx.i32_type().const_zero(), "")
        .map_err(llvm_err)?;
    let pack = ctx.append_basic_block(f, "box");
    let done = ctx.append_basic_block(f, "done");
    b.build_conditional_branch(ok, pack, done)
        .map_err(llvm_err)?;
    b.position_at_end(pack);
    let v = b.build_load(ym, slot, "").map_err(llvm_err)?;
    let v = model_of(y)?.load_memory(ctx, &b, y, v)?;
    let out = SlotCodec {
        ctx,
        b: &b,
        slots: ret,
    };
    let mut idx = 0u32;
    model_of(y)?.pack(&out, y, v, &mut idx)?;
    b.build_unconditional_branch(done).map_err(llvm_err)?;
    b.position_at_end(done);
    b.build_return(Some(&status)).map_err(llvm_err)?;
    Ok(true)
}
