//! Calls to other jitted functions (through the native calling convention, propagating a
//! failing status) and exception construction (the instance's arguments are read at the
//! `raise`; see `exceptions`).

use inkwell::module::Linkage;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum};
use inkwell::IntPredicate;
use numba_typeinfer::{ImplKey, Signature};

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
    // Lowered where it is raised (`exceptions`): the entry only pairs the key.
    r.register(
        ImplKey::Exception(String::new()),
        Args::Variadic(TypePat::Any),
        |lw, _, _| Ok(lw.ghost()),
    );
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
    let fnty = native_fn_type(lw.ctx, &sig.args)?;
    // A callee still being compiled (mutual recursion) is called through the word that
    // will hold its address.
    let direct = (lw.options.self_id == Some(id) && sig.args == lw.typing.arg_types)
        || lw.linked.native_address(id, &sig.args).is_some();
    let indirect = if direct {
        None
    } else {
        let slot = lw
            .linked
            .native_slot(id, &sig.args)
            .ok_or_else(|| lw.unsupported("the called function has not been compiled"))?;
        let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
        let cell =
            lw.b.build_int_to_ptr(lw.ctx.i64_type().const_int(slot as u64, false), ptr, "slot")
                .map_err(llvm_err)?;
        Some(
            lw.b.build_load(ptr, cell, "callee")
                .map_err(llvm_err)?
                .into_pointer_value(),
        )
    };
    // A generator function's init comes with its library, linked in for inlining.
    let linked_init =
        if indirect.is_none() && matches!(sig.ret.get(), numba_typeinfer::Type::Generator { .. }) {
            lw.link_library(id, &sig.args)?
                .and_then(|s| lw.module.get_function(&s))
        } else {
            None
        };
    let callee = if let Some(f) = linked_init {
        f
    } else if indirect.is_some()
        || (lw.options.self_id == Some(id) && sig.args == lw.typing.arg_types)
    {
        // (Unused when indirect.)
        lw.func
    } else {
        let addr = lw.linked.native_address(id, &sig.args).unwrap_or(0);
        let name = format!("numba_rs.callee.{id}.{addr:x}");
        match lw.module.get_function(&name) {
            Some(f) => f,
            None => {
                lw.externals.push((name.clone(), addr));
                lw.module.add_function(
                    &name,
                    native_fn_type(lw.ctx, &sig.args)?,
                    Some(Linkage::External),
                )
            }
        }
    };
    let ret = lowered(sig.ret);
    let slot = lw.alloca_in_entry(memory_type(lw.ctx, ret)?, "callres")?;
    let mut args: Vec<BasicMetadataValueEnum> = vec![slot.into(), lw.excinfo.into()];
    args.extend(vals.iter().map(|v| BasicMetadataValueEnum::from(*v)));
    let call = match indirect {
        Some(p) => lw.b.build_indirect_call(fnty, p, &args, "status"),
        None => lw.b.build_call(callee, &args, "status"),
    };
    let status = call
        .map_err(llvm_err)?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("native call returned void".into()))?
        .into_int_value();
    // Propagate any non-OK status: the callee already filled excinfo.
    let failed =
        lw.b.build_int_compare(IntPredicate::NE, status, lw.ctx.i32_type().const_zero(), "")
            .map_err(llvm_err)?;
    let fail_bb = lw.new_block("call.fail");
    let ok_bb = lw.new_block("call.ok");
    lw.b.build_conditional_branch(failed, fail_bb, ok_bb)
        .map_err(llvm_err)?;
    lw.b.position_at_end(fail_bb);
    lw.propagate_status(status, ok_bb)?;
    lw.b.position_at_end(ok_bb);
    let v =
        lw.b.build_load(memory_type(lw.ctx, ret)?, slot, "")
            .map_err(llvm_err)?;
    model_of(ret)?.load_memory(lw.ctx, &lw.b, ret, v)
}
