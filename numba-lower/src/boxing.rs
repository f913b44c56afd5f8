//! Boxing and unboxing of user types (`model::user`) with the host's code: numba-py's
//! `@box` / `@unbox` functions, whose bodies llvmlite's IR builder wrote. Each is
//! compiled once per type into a module of its own, wrapped so that the host's slot
//! codec can call it:
//!
//! - the body `void unbox(i8* obj, T* out, i8* is_error)` becomes
//!   `i32 wrapper(i8* obj, u64* slots)`: 0 with the value in `slots`, 1 on error (the
//!   Python error set, or none when the code set none);
//! - the body `i8* box(T* value)` becomes `i8* wrapper(const u64* slots)`: a new
//!   reference, or null with the Python error set.
//!
//! `T` is the type's LLVM value type (its data model's); the slots are the type's
//! boundary shape ([`crate::callconv::Shape::Boxed`]).

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::AddressSpace;
use numba_typeinfer::types::TypeId;

use crate::model::{model_of, value_type, SlotCodec};
use crate::{codegen, llvm_err, LowerError, R};

/// Which direction a host function converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Python object to native value.
    Unbox,
    /// Native value to Python object.
    Box,
}

/// Compile the host's body `symbol` (defined in the LLVM module `text`) for values of
/// `t`, mapping `externals` (symbol, address: the C API functions and data it uses), and
/// return the wrapper's address. The code lives as long as the process.
pub fn compile(
    t: TypeId,
    direction: Direction,
    symbol: &str,
    text: &str,
    externals: &[(String, usize)],
) -> R<usize> {
    let machine = codegen::host_machine()?;
    let ctx: &'static Context = Box::leak(Box::new(Context::create()));
    let buf = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), symbol);
    let module = ctx
        .create_module_from_ir(buf)
        .map_err(|e| LowerError::Unsupported {
            message: format!("the LLVM IR of a box/unbox function does not parse: {e}"),
            line: 0,
        })?;
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    let body = module
        .get_function(symbol)
        .ok_or_else(|| LowerError::Llvm(format!("the boxing module defines no {symbol}")))?;
    let ptr = ctx.ptr_type(AddressSpace::default());
    let b = ctx.create_builder();
    let vt = value_type(ctx, t)?;
    let model = model_of(t)?;
    let wrapper = format!("{symbol}.wrapper");
    match direction {
        Direction::Unbox => {
            let f = module.add_function(
                &wrapper,
                ctx.i32_type().fn_type(&[ptr.into(), ptr.into()], false),
                None,
            );
            let entry = ctx.append_basic_block(f, "entry");
            let ok = ctx.append_basic_block(f, "ok");
            let failed = ctx.append_basic_block(f, "failed");
            b.position_at_end(entry);
            let (obj, slots) = (param(f, 0)?, param(f, 1)?);
            let out = b.build_alloca(vt, "out").map_err(llvm_err)?;
            b.build_store(out, vt.const_zero()).map_err(llvm_err)?;
            let err = b.build_alloca(ctx.i8_type(), "err").map_err(llvm_err)?;
            b.build_store(err, ctx.i8_type().const_zero())
                .map_err(llvm_err)?;
            b.build_call(body, &[obj.into(), out.into(), err.into()], "")
                .map_err(llvm_err)?;
            let e = b
                .build_load(ctx.i8_type(), err, "e")
                .map_err(llvm_err)?
                .into_int_value();
            let is_err = b
                .build_int_compare(
                    inkwell::IntPredicate::NE,
                    e,
                    ctx.i8_type().const_zero(),
                    "is_err",
                )
                .map_err(llvm_err)?;
            b.build_conditional_branch(is_err, failed, ok)
                .map_err(llvm_err)?;
            b.position_at_end(ok);
            let v = b.build_load(vt, out, "v").map_err(llvm_err)?;
            let codec = SlotCodec { ctx, b: &b, slots };
            model.pack(&codec, t, v, &mut 0)?;
            b.build_return(Some(&ctx.i32_type().const_zero()))
                .map_err(llvm_err)?;
            b.position_at_end(failed);
            b.build_return(Some(&ctx.i32_type().const_int(1, false)))
                .map_err(llvm_err)?;
        }
        Direction::Box => {
            let f = module.add_function(&wrapper, ptr.fn_type(&[ptr.into()], false), None);
            let entry = ctx.append_basic_block(f, "entry");
            b.position_at_end(entry);
            let slots = param(f, 0)?;
            let codec = SlotCodec { ctx, b: &b, slots };
            let v = model.unpack(&codec, t, &mut 0)?;
            let cell = b.build_alloca(vt, "value").map_err(llvm_err)?;
            b.build_store(cell, v).map_err(llvm_err)?;
            let obj = b
                .build_call(body, &[cell.into()], "obj")
                .map_err(llvm_err)?
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| LowerError::Llvm(format!("{symbol} returns no object")))?;
            b.build_return(Some(&obj)).map_err(llvm_err)?;
        }
    }
    Ok(finish(&module, machine, externals, &[&wrapper])?[0])
}

/// Optimise and JIT a module of host-facing functions (kept for the process) and
/// return the addresses of `names`.
fn finish(
    module: &inkwell::module::Module<'static>,
    machine: &inkwell::targets::TargetMachine,
    externals: &[(String, usize)],
    names: &[&str],
) -> R<Vec<usize>> {
    codegen::optimise(module, machine, crate::refprune::RefPruneFlags::NONE)?;
    let loaded = crate::jit::load_module(module, externals)?;
    names.iter().map(|name| loaded.address(name)).collect()
}

/// The slot codec of values of `t` as two C functions for host-written code:
/// `void load(const u64* slots, T* out)` (the value the slots describe) and
/// `void store(const T* value, u64* slots)`. Returns their addresses.
pub fn compile_codec(t: TypeId) -> R<(usize, usize)> {
    let machine = codegen::host_machine()?;
    let ctx: &'static Context = Box::leak(Box::new(Context::create()));
    let module = codegen::new_module(ctx, &format!("numba_rs_codec_{}", t.0), machine);
    let ptr = ctx.ptr_type(AddressSpace::default());
    let fnty = ctx.void_type().fn_type(&[ptr.into(), ptr.into()], false);
    let b = ctx.create_builder();
    let vt = value_type(ctx, t)?;
    let model = model_of(t)?;
    let load = module.add_function("numba_rs_codec_load", fnty, None);
    b.position_at_end(ctx.append_basic_block(load, "entry"));
    let codec = SlotCodec {
        ctx,
        b: &b,
        slots: param(load, 0)?,
    };
    let v = model.unpack(&codec, t, &mut 0)?;
    b.build_store(param(load, 1)?, v).map_err(llvm_err)?;
    b.build_return(None).map_err(llvm_err)?;
    let store = module.add_function("numba_rs_codec_store", fnty, None);
    b.position_at_end(ctx.append_basic_block(store, "entry"));
    let v = b.build_load(vt, param(store, 0)?, "v").map_err(llvm_err)?;
    let codec = SlotCodec {
        ctx,
        b: &b,
        slots: param(store, 1)?,
    };
    model.pack(&codec, t, v, &mut 0)?;
    b.build_return(None).map_err(llvm_err)?;
    let found = finish(
        &module,
        machine,
        &[],
        &["numba_rs_codec_load", "numba_rs_codec_store"],
    )?;
    Ok((found[0], found[1]))
}

fn param(f: inkwell::values::FunctionValue<'_>, i: u32) -> R<inkwell::values::PointerValue<'_>> {
    f.get_nth_param(i)
        .map(|p| p.into_pointer_value())
        .ok_or_else(|| LowerError::Llvm("boxing wrapper parameter".into()))
}
