//! Calls to other jitted functions (through the native calling convention, propagating a
//! failing status) and exception construction (the instance's arguments are read at the
//! `raise`; see `exceptions`).

use inkwell::module::Linkage;
use inkwell::types::BasicType;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue, PointerValue};
use inkwell::IntPredicate;
use numba_typeinfer::{ImplKey, Signature, TypeId};

use crate::callconv::native_fn_type;
use crate::function::FnLower;
use crate::model::{lowered, memory_type, model_of};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, LowerError, R};

pub(crate) fn register(r: &mut Registry) {
    r.register(
        ImplKey::Dispatcher { id: 0 },
        Args::Variadic(TypePat::Any),
        call_dispatcher,
    );
    r.register(
        ImplKey::Function(numba_typeinfer::infer::C_CALL_KEY.into()),
        Args::Variadic(TypePat::Any),
        call_c_function,
    );
    // Lowered where it is raised (`exceptions`): the entry only pairs the key.
    r.register(
        ImplKey::Exception(String::new()),
        Args::Variadic(TypePat::Any),
        |lw, _, _| Ok(lw.ghost()),
    );
}

/// A call to a C function through its address (the first argument), with the C types
/// of its signature: numbers by value, pointers as `ptr`, `none` for a `void` result.
fn call_c_function<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let Some((callee, args)) = a.split_first() else {
        return Err(lw.unsupported("a C function call without its address"));
    };
    let mut params = Vec::with_capacity(args.len());
    for &t in &sig.args[1..] {
        params.push(crate::model::value_type(lw.ctx, lowered(t))?.into());
    }
    let none = lowered(sig.ret) == numba_typeinfer::types::NONE;
    let fnty = if none {
        lw.ctx.void_type().fn_type(&params, false)
    } else {
        crate::model::value_type(lw.ctx, lowered(sig.ret))?.fn_type(&params, false)
    };
    let argv: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|&v| v.into()).collect();
    let call =
        lw.b.build_indirect_call(fnty, callee.into_pointer_value(), &argv, "")
            .map_err(llvm_err)?;
    if none {
        return Ok(lw.ghost());
    }
    call.try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("a C function returned no value".into()))
}

impl<'ctx> FnLower<'ctx, '_> {
    /// In a block reached when a callee failed with `status` (its excinfo filled): inside
    /// a `try` the exception stays pending for the next `exception_check` and control
    /// goes on to `cont`; outside, the status is returned.
    pub(crate) fn propagate_status(
        &mut self,
        status: inkwell::values::IntValue<'ctx>,
        cont: inkwell::basic_block::BasicBlock<'ctx>,
    ) -> R<()> {
        match self.try_depth {
            Some(depth) => {
                let i32t = self.ctx.i32_type();
                let d = self
                    .b
                    .build_load(i32t, depth, "")
                    .map_err(llvm_err)?
                    .into_int_value();
                let inside = self
                    .b
                    .build_int_compare(IntPredicate::SGT, d, i32t.const_zero(), "")
                    .map_err(llvm_err)?;
                let leave = self.new_block("call.return");
                self.b
                    .build_conditional_branch(inside, cont, leave)
                    .map_err(llvm_err)?;
                self.b.position_at_end(leave);
                self.release_caught()?;
                self.b.build_return(Some(&status)).map_err(llvm_err)?;
            }
            None => {
                self.b.build_return(Some(&status)).map_err(llvm_err)?;
            }
        }
        Ok(())
    }
}

/// How a jitted function's native code is reached.
pub(super) enum Callee<'ctx> {
    Direct(FunctionValue<'ctx>),
    /// Through the word that will hold the address of a callee still being compiled.
    Indirect(PointerValue<'ctx>),
}

/// Whether the callee (dispatcher `id` for `args`) is still being compiled (mutual
/// recursion), so it is called through its slot.
fn needs_slot(lw: &FnLower<'_, '_>, id: u64, args: &[TypeId]) -> bool {
    let this = lw.options.self_id == Some(id) && args == lw.typing.arg_types.as_slice();
    !this && lw.linked.native_address(id, args).is_none()
}

/// The native function of dispatcher `id`'s specialisation for `args`: this function
/// itself, a declared external, or a load through the slot of one being compiled.
pub(super) fn native_callee<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    id: u64,
    args: &[TypeId],
) -> R<Callee<'ctx>> {
    if lw.options.self_id == Some(id) && args == lw.typing.arg_types.as_slice() {
        stack_probe(lw)?;
        return Ok(Callee::Direct(lw.func));
    }
    if needs_slot(lw, id, args) {
        // A function being compiled with this one: mutual recursion.
        stack_probe(lw)?;
        let slot = lw
            .linked
            .native_slot(id, args)
            .ok_or_else(|| lw.unsupported("the called function has not been compiled"))?;
        let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
        let cell =
            lw.b.build_int_to_ptr(lw.ctx.i64_type().const_int(slot as u64, false), ptr, "slot")
                .map_err(llvm_err)?;
        let p =
            lw.b.build_load(ptr, cell, "callee")
                .map_err(llvm_err)?
                .into_pointer_value();
        return Ok(Callee::Indirect(p));
    }
    // A compiled callee's module is linked in, so that LLVM may inline it (Numba links
    // every callee's library into its caller's); called through its address otherwise.
    if let Some(symbol) = lw.link_library(id, args, true)? {
        if let Some(f) = lw
            .module
            .get_function(&symbol)
            .filter(|f| f.count_basic_blocks() > 0)
        {
            return Ok(Callee::Direct(f));
        }
    }
    let addr = lw.linked.native_address(id, args).unwrap_or(0);
    let name = format!("numba_rs.callee.{id}.{addr:x}");
    Ok(Callee::Direct(match lw.module.get_function(&name) {
        Some(f) => f,
        None => {
            lw.externals.push((name.clone(), addr));
            lw.module.add_function(
                &name,
                native_fn_type(lw.ctx, args)?,
                Some(Linkage::External),
            )
        }
    }))
}

/// Before a recursive call: read the stack [`STACK_PROBE_MARGIN`] bytes below the
/// stack pointer, so that recursion that exhausts the stack faults here, in compiled
/// code, while the runtime functions this frame calls still have that margin (a fault
/// inside `malloc` could not be recovered: it holds a lock). The signal handler of
/// `numba_nrt::stack_guard` recognises this instruction and turns the fault into
/// Python's `RecursionError`. x86-64 only (the handler's platform).
///
/// [`STACK_PROBE_MARGIN`]: numba_nrt::stack_guard::STACK_PROBE_MARGIN
fn stack_probe(lw: &mut FnLower<'_, '_>) -> R<()> {
    let triple = lw.module.get_triple();
    if !triple.as_str().to_bytes().starts_with(b"x86_64") {
        return Ok(());
    }
    let void = lw.ctx.void_type().fn_type(&[], false);
    let asm = lw.ctx.create_inline_asm(
        void,
        numba_nrt::stack_guard::STACK_PROBE_ASM.to_string(),
        "~{dirflag},~{fpsr},~{flags}".to_string(),
        true,
        false,
        None,
        false,
    );
    lw.b.build_indirect_call(void, asm, &[], "")
        .map_err(llvm_err)?;
    Ok(())
}

/// Call a native function (`ret*`, `excinfo**`, the values) and branch on its status:
/// the builder is left in the failure block, and the block after it is returned with
/// the status.
fn native_call<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    (callee, fnty): (Callee<'ctx>, inkwell::types::FunctionType<'ctx>),
    (slot, exc): (PointerValue<'ctx>, PointerValue<'ctx>),
    vals: &[BasicValueEnum<'ctx>],
    names: (&str, &str),
) -> R<(
    inkwell::values::IntValue<'ctx>,
    inkwell::basic_block::BasicBlock<'ctx>,
)> {
    let mut call: Vec<BasicMetadataValueEnum> = vec![slot.into(), exc.into()];
    call.extend(vals.iter().map(|v| BasicMetadataValueEnum::from(*v)));
    let site = match callee {
        Callee::Indirect(p) => lw.b.build_indirect_call(fnty, p, &call, "status"),
        Callee::Direct(f) => lw.b.build_call(f, &call, "status"),
    }
    .map_err(llvm_err)?;
    let status = site
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("native call returned void".into()))?
        .into_int_value();
    let failed =
        lw.b.build_int_compare(IntPredicate::NE, status, lw.ctx.i32_type().const_zero(), "")
            .map_err(llvm_err)?;
    let fail_bb = lw.new_block(names.0);
    let ok_bb = lw.new_block(names.1);
    lw.b.build_conditional_branch(failed, fail_bb, ok_bb)
        .map_err(llvm_err)?;
    lw.b.position_at_end(fail_bb);
    Ok((status, ok_bb))
}

/// Call dispatcher `id`'s specialisation for `args` and give its result, ignoring a
/// failure: the result is then the zero value and the exception record is freed. This
/// is how Numba runs a ufunc's kernel from jitted code (`npyimpl._Kernel`).
pub(super) fn call_swallowing<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    id: u64,
    (args, ret): (&[TypeId], TypeId),
    vals: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let fnty = native_fn_type(lw.ctx, args)?;
    let callee = native_callee(lw, id, args)?;
    let ret = lowered(ret);
    let mem = memory_type(lw.ctx, ret)?;
    let slot = lw.alloca_in_entry(mem, "kernres")?;
    lw.b.build_store(slot, mem.const_zero()).map_err(llvm_err)?;
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let exc = lw.alloca_in_entry(ptr.into(), "kernexc")?;
    lw.b.build_store(exc, ptr.const_null()).map_err(llvm_err)?;
    let (_, ok_bb) = native_call(
        lw,
        (callee, fnty),
        (slot, exc),
        vals,
        ("kernel.fail", "kernel.done"),
    )?;
    let rec = lw.b.build_load(ptr, exc, "").map_err(llvm_err)?;
    let free = lw.runtime_fn(
        "numba_rs_exc_free",
        lw.ctx.void_type().fn_type(&[ptr.into()], false),
    );
    lw.b.build_call(free, &[rec.into()], "").map_err(llvm_err)?;
    lw.b.build_unconditional_branch(ok_bb).map_err(llvm_err)?;
    lw.b.position_at_end(ok_bb);
    let v = lw.b.build_load(mem, slot, "").map_err(llvm_err)?;
    model_of(ret)?.load_memory(lw.ctx, &lw.b, ret, v)
}

fn call_dispatcher<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    vals: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Dispatcher { id } = sig.key else {
        return Err(LowerError::Llvm(
            "dispatcher call without a dispatcher key".into(),
        ));
    };
    if lw.linked.objmode_with(id) {
        return super::objmode_with::call(lw, id, sig, vals);
    }
    let fnty = native_fn_type(lw.ctx, &sig.args)?;
    // A generator function's init comes with its library, linked in for inlining.
    let linked_init = if matches!(sig.ret.get(), numba_typeinfer::Type::Generator { .. })
        && !needs_slot(lw, id, &sig.args)
    {
        lw.link_library(id, &sig.args, false)?
            .and_then(|s| lw.module.get_function(&s))
    } else {
        None
    };
    let callee = match linked_init {
        Some(f) => Callee::Direct(f),
        None => native_callee(lw, id, &sig.args)?,
    };
    let ret = lowered(sig.ret);
    let slot = lw.alloca_in_entry(memory_type(lw.ctx, ret)?, "callres")?;
    // Propagate any non-OK status: the callee already filled excinfo.
    let excinfo = lw.excinfo;
    let (status, ok_bb) = native_call(
        lw,
        (callee, fnty),
        (slot, excinfo),
        vals,
        ("call.fail", "call.ok"),
    )?;
    lw.propagate_status(status, ok_bb)?;
    lw.b.position_at_end(ok_bb);
    let mem_t = memory_type(lw.ctx, ret)?;
    let mut v = lw.b.build_load(mem_t, slot, "").map_err(llvm_err)?;
    if lw.try_depth.is_some() {
        // Inside a `try` a failed call continues here with the exception pending: its
        // result was never written, so it is a zero value (null MemInfos), which the
        // handler's release of the result variable leaves alone.
        let ok =
            lw.b.build_int_compare(
                IntPredicate::EQ,
                status,
                status.get_type().const_zero(),
                "call.ok",
            )
            .map_err(llvm_err)?;
        v =
            lw.b.build_select(ok, v, mem_t.const_zero(), "")
                .map_err(llvm_err)?;
    }
    model_of(ret)?.load_memory(lw.ctx, &lw.b, ret, v)
}
