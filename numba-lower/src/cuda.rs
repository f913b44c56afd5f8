//! The cuda target (seed 001's third target context): a typed kernel lowered for an
//! NVIDIA GPU and emitted as PTX text by LLVM's NVPTX back end.
//!
//! The function itself lowers as on the CPU (the same registry, so every target-neutral
//! implementation applies), as a device function of the native calling convention. A
//! kernel entry named by the symbol (marked in `nvvm.annotations`; the function it calls
//! becomes `<symbol>_impl`) takes the arguments in
//! Numba's CUDA ABI, each flattened into its data model's leaves (an array: meminfo,
//! parent, nitems, itemsize, data, shape..., strides...), rebuilds them and calls the
//! device function. The intrinsics of `numba_rs.cuda` (thread indices, `grid`,
//! `gridsize`, `syncthreads`, shared and local arrays, atomics) are registered here as
//! lowering implementations over NVVM intrinsics; shared arrays live in address space 3.
//!
//! Kernels get no runtime: arrays passed to a kernel carry no MemInfo, so the naive
//! reference counting is removed, and any other call into numba-rs's runtime (an
//! allocation, a print, a dict) is refused naming the construct. Functions LLVM's NVPTX
//! back end cannot lower without libdevice (`sin`, `exp`, ...) are refused by name too,
//! never left for the code generator to abort on.

use std::sync::OnceLock;

use inkwell::context::Context;
use inkwell::module::Linkage;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::AsValueRef;
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, InstructionOpcode, PointerValue,
};
use inkwell::{AddressSpace, OptimizationLevel};
use numba_ir::FunctionIR;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature, TypingResult};

use crate::callconv::native_fn_type;
use crate::function::FnLower;
use crate::model::array::{array_struct, ndim};
use crate::registry::{Args, Registry, TypePat};
use crate::{
    impls, llvm_err, mangle, CompiledFunction, LinkedFunctions, LowerError, LowerOptions,
    TargetContext, R,
};

/// The default compute capability when no device says otherwise (the issue's floor).
pub const DEFAULT_ARCH: &str = "sm_80";

const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// Lowering for NVIDIA GPUs: the CPU's implementations plus the CUDA intrinsics.
#[derive(Debug, Clone)]
pub struct CudaTarget {
    registry: Registry,
    /// `sm_XY`: the compute capability PTX is generated for.
    pub arch: String,
}

impl Default for CudaTarget {
    fn default() -> Self {
        Self::new()
    }
}

impl CudaTarget {
    /// Every built-in implementation and the CUDA intrinsics, for `sm_80`.
    pub fn new() -> Self {
        let mut registry = Registry::new();
        impls::register_all(&mut registry);
        Self::from_registry(registry)
    }

    /// A target over an existing registry (the CPU target's, with a user's extensions).
    pub fn from_registry(mut registry: Registry) -> Self {
        registry
            .drop_not_yet(|k| matches!(k, ImplKey::Function(f) if f.starts_with("numba_rs.cuda.")));
        register_intrinsics(&mut registry);
        CudaTarget {
            registry,
            arch: DEFAULT_ARCH.to_string(),
        }
    }

    fn machine(&self) -> R<TargetMachine> {
        static INIT: OnceLock<()> = OnceLock::new();
        INIT.get_or_init(|| Target::initialize_nvptx(&InitializationConfig::default()));
        let triple = TargetTriple::create(TRIPLE);
        let target = Target::from_triple(&triple).map_err(|e| LowerError::Llvm(e.to_string()))?;
        target
            .create_target_machine(
                &triple,
                &self.arch,
                "",
                OptimizationLevel::Aggressive,
                RelocMode::Default,
                CodeModel::Default,
            )
            .ok_or_else(|| LowerError::Llvm(format!("no NVPTX target machine for {}", self.arch)))
    }
}

/// `cuda.<dim3>.<axis>`'s special register.
fn special_register(dim3: &str, axis: &str) -> String {
    let reg = match dim3 {
        "threadIdx" => "tid",
        "blockIdx" => "ctaid",
        "blockDim" => "ntid",
        _ => "nctaid",
    };
    format!("llvm.nvvm.read.ptx.sreg.{reg}.{axis}")
}

fn read_sreg<'ctx>(lw: &FnLower<'ctx, '_>, name: &str) -> R<inkwell::values::IntValue<'ctx>> {
    let f = nvvm(lw, name, lw.ctx.i32_type().fn_type(&[], false));
    Ok(lw.call_value(f, &[])?.into_int_value())
}

/// Whether `t` is one of the index objects, `cuda.threadIdx` and the others.
fn is_dim3(t: TypeId) -> bool {
    matches!(t.get(), Type::Module(m) if m.strip_prefix("numba_rs.cuda.")
        .is_some_and(|d| numba_typeinfer::cuda::DIM3.contains(&d)))
}

/// `cuda.<dim3>.<axis>`: its special register.
fn dim3_attr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (Type::Module(m), ImplKey::GetAttr(axis)) = (sig.args[0].get(), &sig.key) else {
        return Err(LowerError::Llvm("a CUDA index without its object".into()));
    };
    let dim = m.rsplit('.').next().unwrap_or_default();
    Ok(read_sreg(lw, &special_register(dim, axis))?.into())
}

/// The absolute positions (`grid`) or extents (`gridsize`) of the first `n` axes.
fn grid_axes<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    size: bool,
) -> R<BasicValueEnum<'ctx>> {
    let n = match sig.args[0].get() {
        Type::IntegerLiteral(n @ 1..=3) => n as usize,
        _ => return Err(lw.unsupported("cuda.grid/gridsize need a constant 1, 2 or 3")),
    };
    let i64t = lw.ctx.i64_type();
    let mut vals = Vec::with_capacity(n);
    for axis in ["x", "y", "z"].into_iter().take(n) {
        let (a, b, c) = if size {
            ("blockDim", "gridDim", None)
        } else {
            ("blockIdx", "blockDim", Some("threadIdx"))
        };
        let wide = |lw: &FnLower<'ctx, '_>, dim: &str| -> R<inkwell::values::IntValue<'ctx>> {
            let v = read_sreg(lw, &special_register(dim, axis))?;
            lw.b.build_int_s_extend(v, i64t, "").map_err(llvm_err)
        };
        let prod =
            lw.b.build_int_mul(wide(lw, a)?, wide(lw, b)?, "")
                .map_err(llvm_err)?;
        let v = match c {
            Some(t) => {
                lw.b.build_int_add(prod, wide(lw, t)?, "")
                    .map_err(llvm_err)?
            }
            None => prod,
        };
        vals.push(BasicValueEnum::from(v));
    }
    if n == 1 {
        return Ok(vals[0]);
    }
    lw.make_struct(sig.ret, &vals)
}

/// A C-contiguous array over `data` with these dimensions (no MemInfo: not reference
/// counted), as `cuda.shared.array` and `cuda.local.array` make.
fn unowned_array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    data: inkwell::values::PointerValue<'ctx>,
    shape: &[inkwell::values::IntValue<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let Type::Array { dtype, .. } = t.get() else {
        return Err(LowerError::Llvm("a CUDA array of a non-array type".into()));
    };
    let i64t = lw.ctx.i64_type();
    let item = i64t.const_int(numba_typeinfer::records::field_size(dtype), false);
    let mut strides = vec![item; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] =
            lw.b.build_int_mul(strides[k + 1], shape[k + 1], "")
                .map_err(llvm_err)?;
    }
    // The base the view takes its (null) MemInfo, parent and item size from.
    let base =
        lw.b.build_insert_value(
            array_struct(lw.ctx, ndim(t)).const_zero(),
            item,
            crate::model::array::field::ITEMSIZE,
            "",
        )
        .map_err(llvm_err)?
        .into_struct_value();
    Ok(impls::array_ops::view_with(lw, base, data, shape, &strides)?.into())
}

fn memory_array<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    shared: bool,
) -> R<BasicValueEnum<'ctx>> {
    let dims = numba_typeinfer::cuda::const_shape(sig.args[0])
        .ok_or_else(|| lw.unsupported("the shape of a CUDA array must be constant"))?;
    let Type::Array { dtype, .. } = sig.ret.get() else {
        return Err(LowerError::Llvm("cuda array of a non-array type".into()));
    };
    let elem = crate::model::value_type(lw.ctx, dtype)?;
    let n: i64 = dims.iter().product();
    let arr_t = inkwell::types::BasicType::array_type(&elem, n.max(0) as u32);
    if shared && dims == [0] {
        return dynamic_shared(lw, sig.ret, elem, dtype);
    }
    let data = if shared {
        let g = lw
            .module
            .add_global(arr_t, Some(AddressSpace::from(3u16)), "cuda.shared");
        g.set_linkage(Linkage::Internal);
        g.set_initializer(&arr_t.get_undef());
        g.set_alignment(16);
        lw.b.build_address_space_cast(
            g.as_pointer_value(),
            lw.ctx.ptr_type(AddressSpace::default()),
            "shared",
        )
        .map_err(llvm_err)?
    } else {
        lw.alloca_in_entry(arr_t.into(), "cuda.local")?
    };
    let i64t = lw.ctx.i64_type();
    let shape: Vec<_> = dims
        .iter()
        .map(|&d| i64t.const_int(d as u64, true))
        .collect();
    unowned_array(lw, sig.ret, data, &shape)
}

/// `cuda.shared.array(0, dtype)`: the dynamic shared memory sized at launch, one
/// `.extern .shared` array every such call aliases, its length the launch's bytes over
/// the item size.
fn dynamic_shared<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    elem: inkwell::types::BasicTypeEnum<'ctx>,
    dtype: TypeId,
) -> R<BasicValueEnum<'ctx>> {
    let ctx = lw.ctx;
    let i64t = ctx.i64_type();
    let name = "cuda_dynamic_shared";
    let g = lw.module.get_global(name).unwrap_or_else(|| {
        let ty = inkwell::types::BasicType::array_type(&elem, 0);
        let g = lw
            .module
            .add_global(ty, Some(AddressSpace::from(3u16)), name);
        g.set_linkage(Linkage::External);
        g.set_alignment(16);
        g
    });
    let data =
        lw.b.build_address_space_cast(
            g.as_pointer_value(),
            ctx.ptr_type(AddressSpace::default()),
            "dynshared",
        )
        .map_err(llvm_err)?;
    // `%dynamic_smem_size` has no NVVM intrinsic: read it with one `mov`.
    let i32t = ctx.i32_type();
    let asm = ctx.create_inline_asm(
        i32t.fn_type(&[], false),
        "mov.u32 $0, %dynamic_smem_size;".to_string(),
        "=r".to_string(),
        false,
        false,
        None,
        false,
    );
    let bytes =
        lw.b.build_indirect_call(i32t.fn_type(&[], false), asm, &[], "dynsize")
            .map_err(llvm_err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("inline asm returned nothing".into()))?
            .into_int_value();
    let bytes = lw.b.build_int_z_extend(bytes, i64t, "").map_err(llvm_err)?;
    let item = numba_typeinfer::records::field_size(dtype);
    let n =
        lw.b.build_int_unsigned_div(bytes, i64t.const_int(item, false), "")
            .map_err(llvm_err)?;
    unowned_array(lw, t, data, &[n])
}

fn atomic<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    use inkwell::llvm_sys::LLVMAtomicRMWBinOp as Op;
    let ImplKey::Function(key) = &sig.key else {
        return Err(LowerError::Llvm("atomic without a key".into()));
    };
    let op = key.rsplit('.').next().unwrap_or_default();
    let dtype = sig.ret;
    let float = dtype.is_float();
    let signed = matches!(dtype.get(), Type::Integer { signed: true, .. });
    if float && matches!(op, "max" | "min" | "nanmax" | "nanmin") {
        let ptr = impls::indexing::element_address(lw, sig.args[0], a[0], sig.args[1], a[1])?;
        return float_min_max(lw, op, ptr, a[2].into_float_value());
    }
    let bin = match (op, float) {
        ("add", false) => Op::LLVMAtomicRMWBinOpAdd,
        ("add", true) => Op::LLVMAtomicRMWBinOpFAdd,
        ("sub", false) => Op::LLVMAtomicRMWBinOpSub,
        ("sub", true) => Op::LLVMAtomicRMWBinOpFSub,
        ("max" | "nanmax", false) if signed => Op::LLVMAtomicRMWBinOpMax,
        ("min" | "nanmin", false) if signed => Op::LLVMAtomicRMWBinOpMin,
        ("max" | "nanmax", false) => Op::LLVMAtomicRMWBinOpUMax,
        ("min" | "nanmin", false) => Op::LLVMAtomicRMWBinOpUMin,
        ("exch", _) => Op::LLVMAtomicRMWBinOpXchg,
        ("and_", false) => Op::LLVMAtomicRMWBinOpAnd,
        ("or_", false) => Op::LLVMAtomicRMWBinOpOr,
        ("xor", false) => Op::LLVMAtomicRMWBinOpXor,
        _ => return Err(lw.unsupported(format!("cuda.atomic.{op} on {dtype}"))),
    };
    let ptr = impls::indexing::element_address(lw, sig.args[0], a[0], sig.args[1], a[1])?;
    // SAFETY: a positioned builder, a pointer to an element of `dtype` and a value of
    // `dtype` (the call converted it); inkwell's own builder takes integers only.
    let old = unsafe {
        let v = inkwell::llvm_sys::core::LLVMBuildAtomicRMW(
            lw.b.as_mut_ptr(),
            bin,
            ptr.as_value_ref(),
            a[2].as_value_ref(),
            inkwell::llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic,
            0,
        );
        BasicValueEnum::new(v)
    };
    Ok(old)
}

/// `cuda.atomic.max/min/nanmax/nanmin` on a float element, with numba-cuda's NaN rules:
/// `max`/`min` leave the element alone when it or the value is NaN; `nanmax`/`nanmin`
/// ignore a NaN value and replace a NaN element. A compare-and-swap loop on the bits
/// (PTX has no float max); the result is the element as first read, as numba-cuda's.
fn float_min_max<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    op: &str,
    ptr: PointerValue<'ctx>,
    val: inkwell::values::FloatValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    use inkwell::AtomicOrdering::Monotonic;
    use inkwell::FloatPredicate as P;
    let e = llvm_err;
    let ft = val.get_type();
    let it = if ft == lw.ctx.f64_type() {
        lw.ctx.i64_type()
    } else {
        lw.ctx.i32_type()
    };
    let first =
        lw.b.build_load(ft, ptr, "old")
            .map_err(e)?
            .into_float_value();
    if let Some(i) = inkwell::values::AnyValue::as_any_value_enum(&first)
        .into_float_value()
        .as_instruction()
    {
        i.set_volatile(true)
            .map_err(|m| LowerError::Llvm(m.to_string()))?;
    }
    let nan_rule = op.starts_with("nan");
    // Nothing to do for a NaN value, or (max/min) a NaN element.
    let other = if nan_rule { val } else { first };
    let skip =
        lw.b.build_float_compare(P::UNO, val, other, "skip")
            .map_err(e)?;
    let entry =
        lw.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    let check = lw.new_block("atomic.check");
    let attempt = lw.new_block("atomic.attempt");
    let done = lw.new_block("atomic.done");
    lw.b.build_conditional_branch(skip, done, check)
        .map_err(e)?;
    lw.b.position_at_end(check);
    let seen = lw.b.build_phi(ft, "seen").map_err(e)?;
    seen.add_incoming(&[(&first, entry)]);
    let cur = seen.as_basic_value().into_float_value();
    // Swap while the element loses to the value (or, for nan*, is NaN).
    let pred = match (op.ends_with("max"), nan_rule) {
        (true, false) => P::OLT,
        (true, true) => P::ULT,
        (false, false) => P::OGT,
        (false, true) => P::UGT,
    };
    let swap = lw.b.build_float_compare(pred, cur, val, "").map_err(e)?;
    lw.b.build_conditional_branch(swap, attempt, done)
        .map_err(e)?;
    lw.b.position_at_end(attempt);
    let expect =
        lw.b.build_bit_cast(cur, it, "")
            .map_err(e)?
            .into_int_value();
    let new =
        lw.b.build_bit_cast(val, it, "")
            .map_err(e)?
            .into_int_value();
    let pair =
        lw.b.build_cmpxchg(ptr, expect, new, Monotonic, Monotonic)
            .map_err(e)?;
    let found =
        lw.b.build_extract_value(pair, 0, "")
            .map_err(e)?
            .into_int_value();
    let found =
        lw.b.build_bit_cast(found, ft, "")
            .map_err(e)?
            .into_float_value();
    let here =
        lw.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    seen.add_incoming(&[(&found, here)]);
    lw.b.build_unconditional_branch(check).map_err(e)?;
    lw.b.position_at_end(done);
    Ok(first.into())
}

fn nvvm<'ctx>(
    lw: &FnLower<'ctx, '_>,
    name: &str,
    ty: inkwell::types::FunctionType<'ctx>,
) -> FunctionValue<'ctx> {
    lw.module
        .get_function(name)
        .unwrap_or_else(|| lw.module.add_function(name, ty, None))
}

/// `cuda.shfl_*_sync(mask, value, lane)`: 32-bit values in one `shfl.sync`, 64-bit ones
/// in two (low and high words), floats through their bits.
fn shuffle<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(key) = &sig.key else {
        return Err(LowerError::Llvm("shuffle without a key".into()));
    };
    let (mode, clamp) = match key.rsplit('.').next().unwrap_or_default() {
        "shfl_up_sync" => ("up", 0),
        "shfl_down_sync" => ("down", 0x1f),
        "shfl_xor_sync" => ("bfly", 0x1f),
        _ => ("idx", 0x1f),
    };
    let ctx = lw.ctx;
    let (i32t, i64t) = (ctx.i32_type(), ctx.i64_type());
    let f = nvvm(
        lw,
        &format!("llvm.nvvm.shfl.sync.{mode}.i32"),
        i32t.fn_type(&[i32t.into(), i32t.into(), i32t.into(), i32t.into()], false),
    );
    let mask = a[0].into_int_value();
    let lane = a[2].into_int_value();
    let c = i32t.const_int(clamp, false);
    let shfl = |lw: &FnLower<'ctx, '_>, word: inkwell::values::IntValue<'ctx>| {
        lw.call_value(f, &[mask.into(), word.into(), lane.into(), c.into()])
            .map(|v| v.into_int_value())
    };
    let v = a[1];
    let bits = match sig.ret.get() {
        Type::Integer { bits, .. } | Type::Float { bits } => bits,
        _ => 32,
    };
    let e = llvm_err;
    let b = &lw.b;
    let word_t = if bits == 64 { i64t } else { i32t };
    let as_int = if v.is_float_value() {
        b.build_bit_cast(v, word_t, "").map_err(e)?.into_int_value()
    } else {
        v.into_int_value()
    };
    let out = if bits == 64 {
        let lo = b.build_int_truncate(as_int, i32t, "").map_err(e)?;
        let hi = b
            .build_right_shift(as_int, i64t.const_int(32, false), false, "")
            .map_err(e)?;
        let hi = b.build_int_truncate(hi, i32t, "").map_err(e)?;
        let (lo, hi) = (shfl(lw, lo)?, shfl(lw, hi)?);
        let b = &lw.b;
        let lo = b.build_int_z_extend(lo, i64t, "").map_err(e)?;
        let hi = b.build_int_z_extend(hi, i64t, "").map_err(e)?;
        let hi = b
            .build_left_shift(hi, i64t.const_int(32, false), "")
            .map_err(e)?;
        b.build_or(hi, lo, "").map_err(e)?
    } else {
        shfl(lw, as_int)?
    };
    Ok(if sig.ret.is_float() {
        let ft = crate::model::value_type(ctx, sig.ret)?;
        lw.b.build_bit_cast(out, ft, "").map_err(e)?
    } else {
        out.into()
    })
}

/// `cuda.ballot_sync`/`all_sync`/`any_sync(mask, predicate)`.
fn vote<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(key) = &sig.key else {
        return Err(LowerError::Llvm("vote without a key".into()));
    };
    let ctx = lw.ctx;
    let (i1, i32t) = (ctx.bool_type(), ctx.i32_type());
    let p = a[1].into_int_value();
    let pred = if p.get_type().get_bit_width() == 1 {
        p
    } else {
        lw.b.build_int_compare(inkwell::IntPredicate::NE, p, p.get_type().const_zero(), "")
            .map_err(llvm_err)?
    };
    let name = key.rsplit('.').next().unwrap_or_default();
    let mask = a[0].into_int_value();
    if name == "ballot_sync" {
        let f = nvvm(
            lw,
            "llvm.nvvm.vote.ballot.sync",
            i32t.fn_type(&[i32t.into(), i1.into()], false),
        );
        return lw.call_value(f, &[mask.into(), pred.into()]);
    }
    let which = match name {
        "all_sync" => "all",
        "eq_sync" => "uni",
        _ => "any",
    };
    let f = nvvm(
        lw,
        &format!("llvm.nvvm.vote.{which}.sync"),
        i1.fn_type(&[i32t.into(), i1.into()], false),
    );
    let r = lw
        .call_value(f, &[mask.into(), pred.into()])?
        .into_int_value();
    Ok(lw
        .b
        .build_int_z_extend(r, i32t, "")
        .map_err(llvm_err)?
        .into())
}

/// The CPU's entries for the CUDA intrinsics: typed (a kernel's typing is the CPU's),
/// never lowered there.
pub(crate) fn register_placeholders(r: &mut Registry) {
    for key in numba_typeinfer::cuda::function_keys() {
        r.not_yet(
            ImplKey::Function(key),
            "a CUDA intrinsic: only kernels and device functions compiled by \
             numba_rs.cuda.jit can use it",
        );
    }
}

/// `cuda.syncthreads_count/_and/_or(predicate)`: `bar.red` over the block.
fn barrier_reduce<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(key) = &sig.key else {
        return Err(LowerError::Llvm("barrier without a key".into()));
    };
    let which = match key.rsplit('.').next().unwrap_or_default() {
        "syncthreads_count" => "popc",
        "syncthreads_and" => "and",
        _ => "or",
    };
    let i32t = lw.ctx.i32_type();
    let p = a[0].into_int_value();
    let p =
        lw.b.build_int_compare(inkwell::IntPredicate::NE, p, p.get_type().const_zero(), "")
            .map_err(llvm_err)?;
    let p = lw.b.build_int_z_extend(p, i32t, "").map_err(llvm_err)?;
    let f = nvvm(
        lw,
        &format!("llvm.nvvm.barrier0.{which}"),
        i32t.fn_type(&[i32t.into()], false),
    );
    lw.call_value(f, &[p.into()])
}

/// `cuda.popc/brev/clz/ffs(x)` over LLVM's bit intrinsics.
fn bit_op<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(key) = &sig.key else {
        return Err(LowerError::Llvm("bit op without a key".into()));
    };
    let x = a[0].into_int_value();
    let t = x.get_type();
    let f = |lw: &FnLower<'ctx, '_>, name: &str| lw.intrinsic(name, &[t.into()]);
    let no_poison = lw.ctx.bool_type().const_zero();
    Ok(match key.rsplit('.').next().unwrap_or_default() {
        "popc" => lw.call_value(f(lw, "llvm.ctpop")?, &[x.into()])?,
        "brev" => lw.call_value(f(lw, "llvm.bitreverse")?, &[x.into()])?,
        "clz" => lw.call_value(f(lw, "llvm.ctlz")?, &[x.into(), no_poison.into()])?,
        _ => {
            // ffs: the 1-based position of the lowest set bit, 0 for none.
            let tz = lw
                .call_value(f(lw, "llvm.cttz")?, &[x.into(), no_poison.into()])?
                .into_int_value();
            let one =
                lw.b.build_int_add(tz, t.const_int(1, false), "")
                    .map_err(llvm_err)?;
            let zero =
                lw.b.build_int_compare(inkwell::IntPredicate::EQ, x, t.const_zero(), "")
                    .map_err(llvm_err)?;
            lw.b.build_select(zero, t.const_zero(), one, "")
                .map_err(llvm_err)?
        }
    })
}

/// `cuda.atomic.cas(ary, idx, old, val)` / `compare_and_swap(ary, old, val)`: the value
/// found; `inc`/`dec` wrap as CUDA's `atomicInc`/`atomicDec`.
fn atomic_exchange_ops<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    use inkwell::llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic as RELAXED;
    let ImplKey::Function(key) = &sig.key else {
        return Err(LowerError::Llvm("atomic without a key".into()));
    };
    let op = key.rsplit('.').next().unwrap_or_default();
    let (ptr, rest) = if op == "compare_and_swap" {
        let zero = lw.ctx.i64_type().const_zero();
        let p = impls::indexing::element_address(lw, sig.args[0], a[0], INT64, zero.into())?;
        (p, &a[1..])
    } else {
        let p = impls::indexing::element_address(lw, sig.args[0], a[0], sig.args[1], a[1])?;
        (p, &a[2..])
    };
    // SAFETY: a positioned builder, a pointer to an element of the value's type.
    unsafe {
        let b = lw.b.as_mut_ptr();
        let v = match op {
            "inc" | "dec" => {
                let bin = if op == "inc" {
                    inkwell::llvm_sys::LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpUIncWrap
                } else {
                    inkwell::llvm_sys::LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpUDecWrap
                };
                inkwell::llvm_sys::core::LLVMBuildAtomicRMW(
                    b,
                    bin,
                    ptr.as_value_ref(),
                    rest[0].as_value_ref(),
                    RELAXED,
                    0,
                )
            }
            _ => {
                let pair = inkwell::llvm_sys::core::LLVMBuildAtomicCmpXchg(
                    b,
                    ptr.as_value_ref(),
                    rest[0].as_value_ref(),
                    rest[1].as_value_ref(),
                    RELAXED,
                    RELAXED,
                    0,
                );
                inkwell::llvm_sys::core::LLVMBuildExtractValue(b, pair, 0, c"".as_ptr())
            }
        };
        Ok(BasicValueEnum::new(v))
    }
}

fn register_intrinsics(r: &mut Registry) {
    for name in numba_typeinfer::cuda::BARRIER_REDUCTIONS {
        r.register(
            ImplKey::Function(format!("numba_rs.cuda.{name}")),
            Args::Exact(vec![TypePat::Any]),
            barrier_reduce,
        );
    }
    for name in numba_typeinfer::cuda::BIT_OPS {
        r.register(
            ImplKey::Function(format!("numba_rs.cuda.{name}")),
            Args::Exact(vec![TypePat::Int]),
            bit_op,
        );
    }
    for op in ["cas", "inc", "dec", "compare_and_swap"] {
        r.register(
            ImplKey::Function(format!("numba_rs.cuda.atomic.{op}")),
            Args::Variadic(TypePat::Any),
            atomic_exchange_ops,
        );
    }
    r.register(
        ImplKey::Function("numba_rs.cuda.fma".into()),
        Args::Exact(vec![TypePat::Float, TypePat::Float, TypePat::Float]),
        |lw, _, a| {
            let f = lw.intrinsic("llvm.fma", &[a[0].get_type()])?;
            lw.call_value(f, &[a[0].into(), a[1].into(), a[2].into()])
        },
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.cbrt".into()),
        Args::Exact(vec![TypePat::Float]),
        |lw, _, a| {
            let x = a[0].into_float_value();
            let f = lw.libm("cbrt", 1, x.get_type());
            lw.call_value(f, &[x.into()])
        },
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.selp".into()),
        Args::Exact(vec![TypePat::Bool, TypePat::Any, TypePat::Any]),
        |lw, _, a| {
            lw.b.build_select(a[0].into_int_value(), a[1], a[2], "")
                .map_err(llvm_err)
        },
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.activemask".into()),
        Args::Exact(vec![]),
        |lw, _, _| {
            let i32t = lw.ctx.i32_type();
            let f = nvvm(lw, "llvm.nvvm.activemask", i32t.fn_type(&[], false));
            lw.call_value(f, &[])
        },
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.lanemask_lt".into()),
        Args::Exact(vec![]),
        |lw, _, _| Ok(read_sreg(lw, "llvm.nvvm.read.ptx.sreg.lanemask.lt")?.into()),
    );
    for name in numba_typeinfer::cuda::SHUFFLES {
        r.register(
            ImplKey::Function(format!("numba_rs.cuda.{name}")),
            Args::Exact(vec![TypePat::Any, TypePat::Any, TypePat::Any]),
            shuffle,
        );
    }
    for name in numba_typeinfer::cuda::VOTES {
        r.register(
            ImplKey::Function(format!("numba_rs.cuda.{name}")),
            Args::Exact(vec![TypePat::Any, TypePat::Any]),
            vote,
        );
    }
    r.register(
        ImplKey::Function("numba_rs.cuda.syncwarp".into()),
        Args::Variadic(TypePat::Any),
        |lw, _, a| {
            let i32t = lw.ctx.i32_type();
            let f = nvvm(
                lw,
                "llvm.nvvm.bar.warp.sync",
                lw.ctx.void_type().fn_type(&[i32t.into()], false),
            );
            let mask = a
                .first()
                .map(|v| v.into_int_value())
                .unwrap_or_else(|| i32t.const_all_ones());
            lw.b.build_call(f, &[mask.into()], "").map_err(llvm_err)?;
            Ok(lw.ghost())
        },
    );
    for axis in ["x", "y", "z"] {
        r.register(
            ImplKey::GetAttr(axis.into()),
            Args::Exact(vec![TypePat::Pred(is_dim3)]),
            dim3_attr,
        );
    }
    r.register(
        ImplKey::GetAttr("laneid".into()),
        Args::Exact(vec![TypePat::Module("numba_rs.cuda")]),
        |lw, _, _| Ok(read_sreg(lw, "llvm.nvvm.read.ptx.sreg.laneid")?.into()),
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.grid".into()),
        Args::Exact(vec![TypePat::Any]),
        |lw, sig, _| grid_axes(lw, sig, false),
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.gridsize".into()),
        Args::Exact(vec![TypePat::Any]),
        |lw, sig, _| grid_axes(lw, sig, true),
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.syncthreads".into()),
        Args::Exact(vec![]),
        |lw, _, _| {
            let f = nvvm(
                lw,
                "llvm.nvvm.barrier0",
                lw.ctx.void_type().fn_type(&[], false),
            );
            lw.b.build_call(f, &[], "").map_err(llvm_err)?;
            Ok(lw.ghost())
        },
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.shared.array".into()),
        Args::Exact(vec![TypePat::Any, TypePat::Any]),
        |lw, sig, _| memory_array(lw, sig, true),
    );
    r.register(
        ImplKey::Function("numba_rs.cuda.local.array".into()),
        Args::Exact(vec![TypePat::Any, TypePat::Any]),
        |lw, sig, _| memory_array(lw, sig, false),
    );
    for op in numba_typeinfer::cuda::ATOMICS {
        r.register(
            ImplKey::Function(format!("numba_rs.cuda.atomic.{op}")),
            Args::Exact(vec![TypePat::Any, TypePat::Any, TypePat::Number]),
            atomic,
        );
    }
}

/// The kernel's parameters: each argument's data-model leaves, in order.
fn flat_params<'ctx>(ctx: &'ctx Context, t: TypeId) -> R<Vec<BasicMetadataTypeEnum<'ctx>>> {
    let t = crate::model::lowered(t);
    if t.is_array() {
        let p = ctx.ptr_type(AddressSpace::default());
        let i = ctx.i64_type();
        let nd = ndim(t) as usize;
        let mut v: Vec<BasicMetadataTypeEnum> =
            vec![p.into(), p.into(), i.into(), i.into(), p.into()];
        v.extend(std::iter::repeat_n(BasicMetadataTypeEnum::from(i), 2 * nd));
        return Ok(v);
    }
    if t.is_scalar() || t == BOOLEAN {
        return Ok(vec![crate::model::value_type(ctx, t)?.into()]);
    }
    Err(LowerError::Unsupported {
        message: format!("a CUDA kernel argument of type {t} (arrays and numbers are supported)"),
        line: 0,
    })
}

/// `void <name>(leaves...)`: rebuild each argument and call the device function.
fn build_kernel<'ctx>(
    ctx: &'ctx Context,
    module: &inkwell::module::Module<'ctx>,
    name: &str,
    device: FunctionValue<'ctx>,
    args: &[TypeId],
) -> R<FunctionValue<'ctx>> {
    let mut params = Vec::new();
    for &t in args {
        params.extend(flat_params(ctx, t)?);
    }
    let f = module.add_function(name, ctx.void_type().fn_type(&params, false), None);
    let b = ctx.create_builder();
    b.position_at_end(ctx.append_basic_block(f, "entry"));
    let ptr = ctx.ptr_type(AddressSpace::default());
    let ret = b
        .build_alloca(ctx.i64_type().array_type(4), "ret")
        .map_err(llvm_err)?;
    let exc = b.build_alloca(ptr, "excinfo").map_err(llvm_err)?;
    let mut call_args: Vec<BasicMetadataValueEnum> = vec![ret.into(), exc.into()];
    let mut k = 0u32;
    let mut next = || -> R<BasicValueEnum<'ctx>> {
        let p = f
            .get_nth_param(k)
            .ok_or_else(|| LowerError::Llvm("kernel parameter missing".into()))?;
        k += 1;
        Ok(p)
    };
    for &t in args {
        let t = crate::model::lowered(t);
        if t.is_array() {
            let nd = ndim(t);
            let st = array_struct(ctx, nd);
            let mut v = st.get_undef();
            for i in 0..5u32 {
                v = b
                    .build_insert_value(v, next()?, i, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
            }
            for field in 5..7u32 {
                let mut dims = ctx.i64_type().array_type(nd).get_undef();
                for d in 0..nd {
                    dims = b
                        .build_insert_value(dims, next()?, d, "")
                        .map_err(llvm_err)?
                        .into_array_value();
                }
                v = b
                    .build_insert_value(v, dims, field, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
            }
            call_args.push(v.into());
        } else {
            call_args.push(next()?.into());
        }
    }
    b.build_call(device, &call_args, "status")
        .map_err(llvm_err)?;
    b.build_return(None).map_err(llvm_err)?;
    let md = ctx.metadata_node(&[
        f.as_global_value().as_pointer_value().into(),
        ctx.metadata_string("kernel").into(),
        ctx.i32_type().const_int(1, false).into(),
    ]);
    module
        .add_global_metadata("nvvm.annotations", &md)
        .map_err(llvm_err)?;
    Ok(f)
}

/// LLVM intrinsics NVPTX lowers by itself (prefixes).
const NVPTX_INTRINSICS: &[&str] = &[
    "llvm.nvvm.",
    "llvm.memcpy",
    "llvm.memset",
    "llvm.memmove",
    "llvm.smax",
    "llvm.smin",
    "llvm.umax",
    "llvm.umin",
    "llvm.abs",
    "llvm.fabs",
    "llvm.sqrt",
    "llvm.fma",
    "llvm.fmuladd",
    "llvm.floor",
    "llvm.ceil",
    "llvm.trunc",
    "llvm.rint",
    "llvm.nearbyint",
    "llvm.round",
    "llvm.roundeven",
    "llvm.copysign",
    "llvm.minnum",
    "llvm.maxnum",
    "llvm.minimum",
    "llvm.maximum",
    "llvm.ctpop",
    "llvm.ctlz",
    "llvm.cttz",
    "llvm.bswap",
    "llvm.bitreverse",
    "llvm.sadd.with",
    "llvm.ssub.with",
    "llvm.smul.with",
    "llvm.uadd.with",
    "llvm.usub.with",
    "llvm.umul.with",
    "llvm.assume",
    "llvm.expect",
    "llvm.lifetime",
    "llvm.fshl",
    "llvm.fshr",
];

static LIBDEVICE: std::sync::RwLock<Option<std::path::PathBuf>> = std::sync::RwLock::new(None);

/// Where `libdevice.10.bc` is (the embedder looks in `CUDA_HOME` and the
/// `nvidia-cuda-nvcc` wheel): kernels calling math functions link it.
pub fn set_libdevice_path(path: std::path::PathBuf) {
    *LIBDEVICE.write().unwrap_or_else(|e| e.into_inner()) = Some(path);
}

/// libdevice's bitcode, read once.
fn libdevice_bitcode() -> Option<&'static [u8]> {
    static BYTES: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let path = LIBDEVICE.read().unwrap_or_else(|e| e.into_inner()).clone();
    BYTES
        .get_or_init(|| path.and_then(|p| std::fs::read(p).ok()))
        .as_deref()
}

/// libdevice's name for a math function the lowering calls: `llvm.sin.f64` and `sin`
/// are `__nv_sin`, their float32 forms `__nv_sinf`.
fn libdevice_name(name: &str) -> Option<String> {
    let (base, f32) = if let Some(rest) = name.strip_prefix("llvm.") {
        let (base, ty) = rest.rsplit_once('.')?;
        match ty {
            "f64" => (base.to_string(), false),
            "f32" => (base.to_string(), true),
            _ => return None,
        }
    } else if name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    {
        (name.to_string(), false)
    } else {
        return None;
    };
    Some(format!("__nv_{base}{}", if f32 { "f" } else { "" }))
}

/// Calls of math functions become calls of libdevice's, whose bitcode is linked in
/// (internal: O3 keeps what is used). Without libdevice they are refused later.
fn link_libdevice<'ctx>(ctx: &'ctx Context, module: &inkwell::module::Module<'ctx>) -> R<()> {
    let wanted: Vec<(FunctionValue<'ctx>, String)> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0 && !unused(*f))
        .filter_map(|f| {
            let name = f.get_name().to_string_lossy().into_owned();
            if NVPTX_INTRINSICS.iter().any(|p| name.starts_with(p)) {
                return None;
            }
            libdevice_name(&name).map(|nv| (f, nv))
        })
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let Some(bitcode) = libdevice_bitcode() else {
        return Ok(());
    };
    let buf =
        inkwell::memory_buffer::MemoryBuffer::create_from_memory_range_copy(bitcode, "libdevice");
    let lib = inkwell::module::Module::parse_bitcode_from_buffer(&buf, ctx).map_err(llvm_err)?;
    let known: std::collections::HashSet<String> = lib
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .collect();
    let mut any = false;
    for (f, nv) in wanted {
        if !known.contains(&nv) {
            continue;
        }
        let target = module
            .get_function(&nv)
            .unwrap_or_else(|| module.add_function(&nv, f.get_type(), None));
        f.replace_all_uses_with(target);
        any = true;
    }
    if any {
        lib.set_triple(&module.get_triple());
        lib.set_data_layout(&module.get_data_layout());
        crate::codegen::link_internal(module, lib)?;
    }
    Ok(())
}

/// Remove the naive reference counting (kernel arrays carry no MemInfo) and point math
/// calls at libdevice.
fn strip_runtime<'ctx>(ctx: &'ctx Context, module: &inkwell::module::Module<'ctx>) -> R<()> {
    for f in module.get_functions() {
        for bb in f.get_basic_blocks() {
            let mut inst = bb.get_first_instruction();
            while let Some(i) = inst {
                inst = i.get_next_instruction();
                if i.get_opcode() != InstructionOpcode::Call {
                    continue;
                }
                let callee = inkwell::values::CallSiteValue::try_from(i)
                    .ok()
                    .and_then(inkwell::values::CallSiteValue::get_called_fn_value)
                    .map(|f| f.get_name().to_string_lossy().into_owned());
                if matches!(
                    callee.as_deref(),
                    Some(crate::refprune::INCREF | crate::refprune::DECREF)
                ) {
                    i.erase_from_basic_block();
                }
            }
        }
    }
    for name in [crate::refprune::INCREF, crate::refprune::DECREF] {
        if let Some(f) = module.get_function(name) {
            // SAFETY: every call of it was erased above.
            unsafe { f.delete() };
        }
    }
    link_libdevice(ctx, module)
}

/// Refuse, naming it, any call left that the GPU cannot make (after O3: what libdevice
/// brought but the kernel does not use is gone by then).
fn refuse_calls(module: &inkwell::module::Module<'_>, qualname: &str) -> R<()> {
    for f in module.get_functions() {
        if f.count_basic_blocks() > 0 {
            continue;
        }
        let name = f.get_name().to_string_lossy().into_owned();
        if unused(f) || name.starts_with("__nvvm_reflect") {
            continue;
        }
        // A name under `llvm.` that LLVM does not know is no intrinsic: the back end
        // would emit it as an external function ptxas cannot resolve.
        if NVPTX_INTRINSICS.iter().any(|p| name.starts_with(p)) && f.get_intrinsic_id() != 0 {
            continue;
        }
        let what = if name.starts_with("NRT_") {
            "allocates memory, which a CUDA kernel cannot do".to_string()
        } else if libdevice_name(&name).is_some() {
            if libdevice_bitcode().is_some() {
                "calls a math function libdevice does not have".to_string()
            } else {
                "needs libdevice's math functions, and libdevice.10.bc was not found (set \
                 CUDA_HOME, or pip install nvidia-cuda-nvcc-cu12)"
                    .to_string()
            }
        } else {
            "calls into numba-rs's CPU runtime, which a CUDA kernel cannot do".to_string()
        };
        return Err(LowerError::Unsupported {
            message: format!("{qualname}: this kernel {what} ({name})"),
            line: 0,
        });
    }
    Ok(())
}

fn unused(f: FunctionValue<'_>) -> bool {
    inkwell::values::BasicValue::get_first_use(&f.as_global_value().as_pointer_value()).is_none()
}

/// A stand-in entry for a kernel: kernels are launched, never called from the host.
unsafe extern "C" fn no_host_entry(
    _ret: *mut u64,
    _excinfo: *mut *const crate::ExcInfo,
    _args: *const u64,
) -> i32 {
    crate::STATUS_NONE
}

impl TargetContext for CudaTarget {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn registry(&self) -> &Registry {
        &self.registry
    }

    fn compile(
        &self,
        ir: &FunctionIR,
        typing: &TypingResult,
        options: &LowerOptions,
        linked: &dyn LinkedFunctions,
    ) -> R<CompiledFunction> {
        let start = std::time::Instant::now();
        if ir.is_generator {
            return Err(LowerError::Unsupported {
                message: format!("{}: generators in CUDA kernels", ir.qualname),
                line: 0,
            });
        }
        let machine = self.machine()?;
        // Nothing of the module outlives this call (the PTX and texts are copies).
        let context = Context::create();
        let ctx = &context;
        let symbol = mangle::mangle(
            &format!("cudapy.{}", options.module),
            &ir.qualname,
            options.uid,
            &typing.arg_types,
        );
        let module = ctx.create_module(&symbol);
        module.set_triple(&machine.get_triple());
        module.set_data_layout(&machine.get_target_data().get_data_layout());
        let func = module.add_function(&symbol, native_fn_type(ctx, &typing.arg_types)?, None);
        {
            let mut lw = FnLower::new(
                ctx,
                &module,
                func,
                ir,
                typing,
                &self.registry,
                options,
                linked,
            )?;
            lw.lower_body()?;
        }
        if options.fastmath != 0 {
            impls::float::apply_fastmath(func, options.fastmath);
        }
        let kernel = typing.return_type == NONE;
        if kernel {
            // The kernel takes the symbol (PTX names admit no '.'; Numba's kernels are
            // named so too); the function it calls becomes a private helper.
            func.as_global_value().set_name(&format!("{symbol}_impl"));
            func.set_linkage(Linkage::Internal);
            build_kernel(ctx, &module, &symbol, func, &typing.arg_types)?;
        }
        strip_runtime(ctx, &module)?;
        let llvm_ir = module.print_to_string().to_string();
        let lowered_at = std::time::Instant::now();
        module.verify().map_err(llvm_err)?;
        module
            .run_passes("default<O3>", &machine, PassBuilderOptions::create())
            .map_err(llvm_err)?;
        refuse_calls(&module, &ir.qualname)?;
        let optimized_ir = module.print_to_string().to_string();
        let ptx = machine
            .write_to_memory_buffer(&module, FileType::Assembly)
            .map_err(llvm_err)?;
        let ptx = String::from_utf8_lossy(ptx.as_slice()).into_owned();
        let done = std::time::Instant::now();
        Ok(CompiledFunction {
            assembly: Some(ptx),
            // Kernels never cross into Python as values.
            arg_shapes: Vec::new(),
            ret_shape: None,
            timings: vec![
                ("native_lowering".into(), lowered_at - start),
                ("ptx_codegen".into(), done - lowered_at),
            ],
            ..CompiledFunction::new(
                (symbol, 0, no_host_entry),
                (&typing.arg_types, typing.return_type),
                (llvm_ir.into(), optimized_ir.into()),
            )
        })
    }
}
