//! Foreign entry points of a compiled function (Numba's `wrappers.py` and the cfunc
//! wrapper): built in the function's own module, so the optimiser inlines the function
//! into them.
//!
//! - **ufunc loop** `void {symbol}.loop(char **args, i64 *dims, i64 *steps, void *data)`:
//!   NumPy's legacy inner-loop signature. Element `i` of input `k` is read at
//!   `args[k] + i * steps[k]` in its memory form, the function is called, and its result
//!   stored at the output's position. When every step equals its element's size a second,
//!   contiguous copy of the loop runs (plain typed indexing that LLVM vectorises).
//! - **gufunc loop** (same signature): `dims[0]` is the outer count and `dims[1..]` the
//!   core dimension sizes; after the `nargs` outer steps come each argument's core
//!   strides. Each argument with core dimensions is passed as an array view (no MemInfo)
//!   over NumPy's buffer; a `()` argument as its element.
//! - **cfunc** `ret {symbol}.cfunc(args...)`: the C ABI (booleans as bytes).
//!
//! On an exception the wrappers hand the record to [`crate::runtime::numba_rs_report_error`]
//! (the embedder sets it as the pending Python exception for a loop, which stops there;
//! a cfunc reports it as unraisable and returns zero), as Numba's wrappers do.

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PointerValue,
};
use inkwell::{AddressSpace, IntPredicate};
use numba_typeinfer::types::*;

use crate::model::array::field;
use crate::model::{lowered, memory_type, model_of, value_type};
use crate::{llvm_err, LowerError, R};

/// Which foreign entry points to build beside the native function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wrappers {
    /// A NumPy ufunc inner loop over scalar arguments.
    pub ufunc: bool,
    /// A gufunc inner loop: for each argument, the indices (into the layout's dimension
    /// symbols, in order of first appearance) of its core dimensions.
    pub gufunc: Option<Vec<Vec<usize>>>,
    /// A C-ABI function.
    pub cfunc: bool,
    /// The C-ABI function leaves an exception pending in Python (for code that calls it
    /// with the GIL held and checks `PyErr_Occurred`, as a box/unbox function calling
    /// jitted code does) instead of reporting it as unraisable.
    pub cfunc_raises: bool,
}

/// The addresses of the wrappers that were built (0: not built).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WrapperAddresses {
    pub ufunc_loop: usize,
    pub cfunc: usize,
}

/// Status codes the error hook gets, with the record.
pub const REPORT_LOOP: i32 = 0;
pub const REPORT_UNRAISABLE: i32 = 1;

/// Symbol names of the wrappers of `symbol`.
pub fn loop_symbol(symbol: &str) -> String {
    format!("{symbol}.loop")
}
pub fn cfunc_symbol(symbol: &str) -> String {
    format!("{symbol}.cfunc")
}

/// The element types a loop or cfunc can carry: NumPy's scalar dtypes.
fn check_scalar(t: TypeId, what: &str) -> R<()> {
    // datetime64 / timedelta64 elements are their int64 counts in NumPy's buffers.
    if (t.is_scalar() && !matches!(t.get(), Type::NoneType))
        || numba_typeinfer::npdatetime::is_datetime_like(t)
    {
        Ok(())
    } else {
        Err(LowerError::Unsupported {
            message: format!("{what} of type {t} is not supported by numba-rs yet"),
            line: 0,
        })
    }
}

struct Ctx<'a, 'ctx> {
    ctx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    f: FunctionValue<'ctx>,
}

impl<'ctx> Ctx<'_, 'ctx> {
    fn block(&self, name: &str) -> inkwell::basic_block::BasicBlock<'ctx> {
        self.ctx.append_basic_block(self.f, name)
    }

    fn param_ptr(&self, i: u32) -> R<PointerValue<'ctx>> {
        self.f
            .get_nth_param(i)
            .map(|p| p.into_pointer_value())
            .ok_or_else(|| LowerError::Llvm("wrapper parameter".into()))
    }

    /// `base[i]` of LLVM type `t`.
    fn load_at(
        &self,
        t: BasicTypeEnum<'ctx>,
        base: PointerValue<'ctx>,
        i: u64,
    ) -> R<BasicValueEnum<'ctx>> {
        let idx = self.ctx.i64_type().const_int(i, false);
        // SAFETY (of the generated code): NumPy passes arrays of nargs pointers/steps
        // and of every dimension.
        let p = unsafe { self.b.build_in_bounds_gep(t, base, &[idx], "") }.map_err(llvm_err)?;
        self.b.build_load(t, p, "").map_err(llvm_err)
    }

    /// `for i in 0..n { body(i) }` from the current block, then continue in `exit`. The
    /// body leaves the builder in the block that goes on to the next iteration.
    fn counted_loop(
        &self,
        n: IntValue<'ctx>,
        exit: inkwell::basic_block::BasicBlock<'ctx>,
        body: &mut dyn FnMut(IntValue<'ctx>) -> R<()>,
    ) -> R<()> {
        let i64t = self.ctx.i64_type();
        let pre = self.b.get_insert_block().expect("positioned");
        let head = self.block("head");
        let first = self.block("body");
        self.b.build_unconditional_branch(head).map_err(llvm_err)?;
        self.b.position_at_end(head);
        let phi = self.b.build_phi(i64t, "i").map_err(llvm_err)?;
        phi.add_incoming(&[(&i64t.const_zero(), pre)]);
        let i = phi.as_basic_value().into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::SLT, i, n, "")
            .map_err(llvm_err)?;
        self.b
            .build_conditional_branch(more, first, exit)
            .map_err(llvm_err)?;
        self.b.position_at_end(first);
        body(i)?;
        let next = self
            .b
            .build_int_add(i, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
        let latch = self.b.get_insert_block().expect("positioned");
        phi.add_incoming(&[(&next, latch)]);
        self.b.build_unconditional_branch(head).map_err(llvm_err)?;
        self.b.position_at_end(exit);
        Ok(())
    }

    /// The value of type `t` stored (in its memory form) at `p`.
    fn load_scalar(&self, t: TypeId, p: PointerValue<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let m = self
            .b
            .build_load(memory_type(self.ctx, t)?, p, "")
            .map_err(llvm_err)?;
        model_of(t)?.load_memory(self.ctx, &self.b, t, m)
    }

    /// `p + off` bytes.
    fn offset(&self, p: PointerValue<'ctx>, off: IntValue<'ctx>) -> R<PointerValue<'ctx>> {
        // SAFETY (of the generated code): offsets NumPy's strides give stay in its buffer.
        unsafe { self.b.build_gep(self.ctx.i8_type(), p, &[off], "") }.map_err(llvm_err)
    }

    /// Call the native function; on an error status report it (`mode`) and return the
    /// status so the caller can leave.
    /// Leaves the builder in the block where the call succeeded; the error block ends
    /// with `error_exit`.
    fn call_native(
        &self,
        native: FunctionValue<'ctx>,
        (ret_slot, exc_slot): (PointerValue<'ctx>, PointerValue<'ctx>),
        args: &[BasicValueEnum<'ctx>],
        mode: i32,
        error_exit: &dyn Fn(&Self) -> R<()>,
        inline: bool,
    ) -> R<()> {
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        self.b
            .build_store(exc_slot, ptr.const_null())
            .map_err(llvm_err)?;
        let mut call: Vec<BasicMetadataValueEnum> = vec![ret_slot.into(), exc_slot.into()];
        call.extend(args.iter().map(|&a| BasicMetadataValueEnum::from(a)));
        let site = self
            .b
            .build_call(native, &call, "status")
            .map_err(llvm_err)?;
        if !inline {
            let kind = inkwell::attributes::Attribute::get_named_enum_kind_id("noinline");
            site.add_attribute(
                inkwell::attributes::AttributeLoc::Function,
                self.ctx.create_enum_attribute(kind, 0),
            );
        }
        let status = site
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError::Llvm("native call returned void".into()))?
            .into_int_value();
        let ok = self
            .b
            .build_int_compare(
                IntPredicate::EQ,
                status,
                self.ctx.i32_type().const_zero(),
                "",
            )
            .map_err(llvm_err)?;
        let bad = self.block("error");
        let good = self.block("ok");
        self.b
            .build_conditional_branch(ok, good, bad)
            .map_err(llvm_err)?;
        self.b.position_at_end(bad);
        let i32t = self.ctx.i32_type();
        let report = self
            .module
            .get_function("numba_rs_report_error")
            .unwrap_or_else(|| {
                self.module.add_function(
                    "numba_rs_report_error",
                    self.ctx
                        .void_type()
                        .fn_type(&[i32t.into(), ptr.into(), i32t.into()], false),
                    Some(Linkage::External),
                )
            });
        let rec = self.b.build_load(ptr, exc_slot, "").map_err(llvm_err)?;
        self.b
            .build_call(
                report,
                &[
                    status.into(),
                    rec.into(),
                    i32t.const_int(mode as u64, false).into(),
                ],
                "",
            )
            .map_err(llvm_err)?;
        error_exit(self)?;
        self.b.position_at_end(good);
        Ok(())
    }
}

fn return_void(w: &Ctx<'_, '_>) -> R<()> {
    w.b.build_return(None).map_err(llvm_err)?;
    Ok(())
}

fn new_wrapper<'a, 'ctx>(
    ctx: &'ctx Context,
    module: &'a Module<'ctx>,
    name: &str,
    fnty: inkwell::types::FunctionType<'ctx>,
) -> Ctx<'a, 'ctx> {
    let f = module.add_function(name, fnty, None);
    let b = ctx.create_builder();
    b.position_at_end(ctx.append_basic_block(f, "entry"));
    Ctx { ctx, module, b, f }
}

fn loop_fn_type(ctx: &Context) -> inkwell::types::FunctionType<'_> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    ctx.void_type()
        .fn_type(&[ptr.into(), ptr.into(), ptr.into(), ptr.into()], false)
}

/// The ufunc inner loop of `native` (scalar arguments, one scalar result). `straight`:
/// the kernel has no branches, so it is inlined into the loop and may be vectorised. A
/// kernel with branches stays a call: vectorising it would evaluate both sides of each
/// branch for every element (`if x == 0: 1.0 else: sin(x) / x` divides 0 by 0), and
/// the floating-point flags that leaves would make NumPy warn about values the kernel
/// never computed.
pub fn build_ufunc_loop<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    symbol: &str,
    native: FunctionValue<'ctx>,
    (arg_types, ret_type): (&[TypeId], TypeId),
    straight: bool,
) -> R<FunctionValue<'ctx>> {
    for &t in arg_types {
        check_scalar(t, "a vectorize argument")?;
    }
    check_scalar(ret_type, "a vectorize result")?;
    let w = new_wrapper(ctx, module, &loop_symbol(symbol), loop_fn_type(ctx));
    let i64t = ctx.i64_type();
    let ptr = ctx.ptr_type(AddressSpace::default());
    let (args, dims, steps) = (w.param_ptr(0)?, w.param_ptr(1)?, w.param_ptr(2)?);
    let nargs = arg_types.len() as u64 + 1;
    let n = w.load_at(i64t.into(), dims, 0)?.into_int_value();
    let mut bases = Vec::new();
    let mut strides = Vec::new();
    let mut contiguous = ctx.bool_type().const_int(1, false);
    let types: Vec<TypeId> = arg_types
        .iter()
        .chain(std::iter::once(&ret_type))
        .map(|&t| lowered(t))
        .collect();
    for (k, &t) in types.iter().enumerate() {
        bases.push(w.load_at(ptr.into(), args, k as u64)?.into_pointer_value());
        let s = w.load_at(i64t.into(), steps, k as u64)?.into_int_value();
        strides.push(s);
        let size = memory_type(ctx, t)?
            .size_of()
            .ok_or_else(|| LowerError::Llvm("unsized element".into()))?;
        let same =
            w.b.build_int_compare(IntPredicate::EQ, s, size, "")
                .map_err(llvm_err)?;
        contiguous = w.b.build_and(contiguous, same, "").map_err(llvm_err)?;
    }
    debug_assert_eq!(bases.len() as u64, nargs);
    let ret_mem = memory_type(ctx, ret_type)?;
    let ret_slot = w.b.build_alloca(ret_mem, "ret").map_err(llvm_err)?;
    let exc_slot = w.b.build_alloca(ptr, "exc").map_err(llvm_err)?;
    let contig_bb = w.block("contiguous");
    let strided_bb = w.block("strided");
    let done = w.block("done");
    w.b.build_conditional_branch(contiguous, contig_bb, strided_bb)
        .map_err(llvm_err)?;
    for (bb, contig) in [(contig_bb, true), (strided_bb, false)] {
        w.b.position_at_end(bb);
        w.counted_loop(n, done, &mut |i| {
            let elem_ptr = |k: usize| -> R<PointerValue<'ctx>> {
                if contig {
                    let mt = memory_type(ctx, types[k])?;
                    // SAFETY (of the generated code): i < n elements of NumPy's buffer.
                    unsafe { w.b.build_in_bounds_gep(mt, bases[k], &[i], "") }.map_err(llvm_err)
                } else {
                    let off = w.b.build_int_mul(i, strides[k], "").map_err(llvm_err)?;
                    w.offset(bases[k], off)
                }
            };
            let mut vals = Vec::new();
            for (k, &t) in types[..arg_types.len()].iter().enumerate() {
                vals.push(w.load_scalar(t, elem_ptr(k)?)?);
            }
            // An exception stops the loop (NumPy sees the pending Python error after it).
            w.call_native(
                native,
                (ret_slot, exc_slot),
                &vals,
                REPORT_LOOP,
                &return_void,
                straight,
            )?;
            let out = elem_ptr(arg_types.len())?;
            let v = w.b.build_load(ret_mem, ret_slot, "").map_err(llvm_err)?;
            w.b.build_store(out, v).map_err(llvm_err)?;
            Ok(())
        })?;
    }
    w.b.build_return(None).map_err(llvm_err)?;
    Ok(w.f)
}

/// The gufunc inner loop of `native`: `core[k]` are argument `k`'s core dimension
/// indices (empty: a scalar passed by value).
pub fn build_gufunc_loop<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    symbol: &str,
    native: FunctionValue<'ctx>,
    arg_types: &[TypeId],
    core: &[Vec<usize>],
) -> R<FunctionValue<'ctx>> {
    if core.len() != arg_types.len() {
        return Err(LowerError::Unsupported {
            message: format!(
                "the layout names {} arguments but the signature has {}",
                core.len(),
                arg_types.len()
            ),
            line: 0,
        });
    }
    let w = new_wrapper(ctx, module, &loop_symbol(symbol), loop_fn_type(ctx));
    let i64t = ctx.i64_type();
    let ptr = ctx.ptr_type(AddressSpace::default());
    let (args, dims, steps) = (w.param_ptr(0)?, w.param_ptr(1)?, w.param_ptr(2)?);
    let nargs = arg_types.len() as u64;
    let n = w.load_at(i64t.into(), dims, 0)?.into_int_value();
    // Core strides follow the outer steps, argument by argument.
    let mut core_step = nargs;
    let mut bases = Vec::new();
    let mut outer = Vec::new();
    let mut views: Vec<Option<(Vec<IntValue>, Vec<IntValue>)>> = Vec::new();
    for (k, &t) in arg_types.iter().enumerate() {
        let t = lowered(t);
        bases.push(w.load_at(ptr.into(), args, k as u64)?.into_pointer_value());
        outer.push(w.load_at(i64t.into(), steps, k as u64)?.into_int_value());
        match t.get() {
            // A `()` argument declared as a 1-d array: a one-element view (stride 0).
            Type::Array { ndim: 1, .. } if core[k].is_empty() => {
                views.push(Some((vec![i64t.const_int(1, false)], vec![i64t.const_zero()])));
            }
            Type::Array { ndim, .. } => {
                if ndim as usize != core[k].len() {
                    return Err(LowerError::Unsupported {
                        message: format!(
                            "argument {} is a {ndim}-dimensional array but its layout has {} dimensions",
                            k + 1,
                            core[k].len()
                        ),
                        line: 0,
                    });
                }
                let mut shape = Vec::new();
                let mut strides = Vec::new();
                for &d in &core[k] {
                    shape.push(w.load_at(i64t.into(), dims, 1 + d as u64)?.into_int_value());
                    strides.push(w.load_at(i64t.into(), steps, core_step)?.into_int_value());
                    core_step += 1;
                }
                views.push(Some((shape, strides)));
            }
            _ if core[k].is_empty() => {
                check_scalar(t, "a guvectorize argument")?;
                views.push(None);
            }
            _ => {
                return Err(LowerError::Unsupported {
                    message: format!(
                        "argument {} of type {t} has core dimensions in the layout; declare it as an array",
                        k + 1
                    ),
                    line: 0,
                })
            }
        }
    }
    // A gufunc kernel returns nothing: its result slot is never written.
    let ret_slot = w.b.build_alloca(i64t, "ret").map_err(llvm_err)?;
    let exc_slot = w.b.build_alloca(ptr, "exc").map_err(llvm_err)?;
    let done = w.block("done");
    w.counted_loop(n, done, &mut |i| {
        let mut vals = Vec::new();
        for (k, &t) in arg_types.iter().enumerate() {
            let t = lowered(t);
            let off = w.b.build_int_mul(i, outer[k], "").map_err(llvm_err)?;
            let data = w.offset(bases[k], off)?;
            vals.push(match &views[k] {
                None => w.load_scalar(t, data)?,
                Some((shape, strides)) => array_view(&w, t, data, shape, strides)?,
            });
        }
        w.call_native(
            native,
            (ret_slot, exc_slot),
            &vals,
            REPORT_LOOP,
            &return_void,
            true,
        )
    })?;
    w.b.build_return(None).map_err(llvm_err)?;
    Ok(w.f)
}

/// An array value of type `t` viewing `data` with the given shape and byte strides (no
/// MemInfo: NumPy owns the buffer for the call).
fn array_view<'ctx>(
    w: &Ctx<'_, 'ctx>,
    t: TypeId,
    data: PointerValue<'ctx>,
    shape: &[IntValue<'ctx>],
    strides: &[IntValue<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ctx = w.ctx;
    let i64t = ctx.i64_type();
    let ptr = ctx.ptr_type(AddressSpace::default());
    let st = value_type(ctx, t)?.into_struct_type();
    let dtype = match t.get() {
        Type::Array { dtype, .. } => dtype,
        _ => return Err(LowerError::Llvm("array view of a non-array".into())),
    };
    let itemsize = memory_type(ctx, dtype)?
        .size_of()
        .ok_or_else(|| LowerError::Llvm("unsized element".into()))?;
    let mut nitems = i64t.const_int(1, false);
    for &d in shape {
        nitems = w.b.build_int_mul(nitems, d, "").map_err(llvm_err)?;
    }
    let arr_t = i64t.array_type(shape.len() as u32);
    let mut shape_v = arr_t.get_undef();
    let mut strides_v = arr_t.get_undef();
    for (j, (&d, &s)) in shape.iter().zip(strides).enumerate() {
        shape_v =
            w.b.build_insert_value(shape_v, d, j as u32, "")
                .map_err(llvm_err)?
                .into_array_value();
        strides_v =
            w.b.build_insert_value(strides_v, s, j as u32, "")
                .map_err(llvm_err)?
                .into_array_value();
    }
    let fields: [(u32, BasicValueEnum<'ctx>); 7] = [
        (field::MEMINFO, ptr.const_null().into()),
        (field::PARENT, ptr.const_null().into()),
        (field::NITEMS, nitems.into()),
        (field::ITEMSIZE, itemsize.into()),
        (field::DATA, data.into()),
        (field::SHAPE, shape_v.into()),
        (field::STRIDES, strides_v.into()),
    ];
    let mut agg = st.get_undef();
    for (i, v) in fields {
        agg =
            w.b.build_insert_value(agg, v, i, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    Ok(agg.into())
}

/// The C type of a scalar at the C ABI: its memory form (booleans are bytes).
fn c_type(ctx: &Context, t: TypeId) -> R<BasicTypeEnum<'_>> {
    memory_type(ctx, lowered(t))
}

/// The C-ABI wrapper of `native`: `ret cfunc(args...)`; an exception is handed over with
/// `report` ([`REPORT_UNRAISABLE`], or [`REPORT_LOOP`] to leave it pending).
pub fn build_cfunc<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    symbol: &str,
    native: FunctionValue<'ctx>,
    arg_types: &[TypeId],
    ret_type: TypeId,
    report: i32,
) -> R<FunctionValue<'ctx>> {
    for &t in arg_types.iter().filter(|t| !t.is_pointer()) {
        check_scalar(t, "a cfunc argument")?;
        if t.is_complex() && !COMPLEX_C_ABI {
            return Err(LowerError::Unsupported {
                message: format!(
                    "a cfunc argument of type {t} is not supported by numba-rs on this architecture yet"
                ),
                line: 0,
            });
        }
    }
    let void = matches!(ret_type.get(), Type::NoneType);
    if !void && !ret_type.is_pointer() {
        check_scalar(ret_type, "a cfunc result")?;
        if ret_type.is_complex() && !COMPLEX_C_ABI {
            return Err(LowerError::Unsupported {
                message: format!(
                    "a cfunc result of type {ret_type} is not supported by numba-rs on this architecture yet"
                ),
                line: 0,
            });
        }
    }
    let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = Vec::new();
    for &t in arg_types {
        params.extend(
            c_params(ctx, t)?
                .into_iter()
                .map(inkwell::types::BasicMetadataTypeEnum::from),
        );
    }
    let fnty = if void {
        ctx.void_type().fn_type(&params, false)
    } else {
        c_result(ctx, ret_type)?.fn_type(&params, false)
    };
    let w = new_wrapper(ctx, module, &cfunc_symbol(symbol), fnty);
    let ptr = ctx.ptr_type(AddressSpace::default());
    let ret_t = lowered(ret_type);
    let ret_mem = memory_type(ctx, ret_t)?;
    let ret_slot = w.b.build_alloca(ret_mem, "ret").map_err(llvm_err)?;
    let exc_slot = w.b.build_alloca(ptr, "exc").map_err(llvm_err)?;
    let mut vals = Vec::new();
    let mut k = 0u32;
    for &t in arg_types {
        let t = lowered(t);
        let n = c_params(ctx, t)?.len() as u32;
        let ps: Vec<BasicValueEnum<'ctx>> = (k..k + n)
            .map(|i| {
                w.f.get_nth_param(i)
                    .ok_or_else(|| LowerError::Llvm("cfunc parameter".into()))
            })
            .collect::<R<_>>()?;
        k += n;
        vals.push(if t.is_complex() {
            complex_from_c(ctx, &w.b, t, &ps)?
        } else {
            model_of(t)?.load_memory(ctx, &w.b, t, ps[0])?
        });
    }
    let c_ret = if void {
        None
    } else {
        Some(c_result(ctx, ret_type)?)
    };
    // After an exception (reported as unraisable, or left pending) the C caller gets zero.
    let zero_exit = |w: &Ctx<'_, 'ctx>| -> R<()> {
        match c_ret {
            None => w.b.build_return(None).map_err(llvm_err)?,
            Some(rt) => w.b.build_return(Some(&rt.const_zero())).map_err(llvm_err)?,
        };
        Ok(())
    };
    w.call_native(
        native,
        (ret_slot, exc_slot),
        &vals,
        report,
        &zero_exit,
        true,
    )?;
    if void {
        w.b.build_return(None).map_err(llvm_err)?;
    } else {
        let v = w.b.build_load(ret_mem, ret_slot, "").map_err(llvm_err)?;
        let v = if ret_t.is_complex() {
            complex_to_c(ctx, &w.b, ret_t, v)?
        } else {
            v
        };
        w.b.build_return(Some(&v)).map_err(llvm_err)?;
    }
    Ok(w.f)
}

/// Complex arguments and results follow the C ABI as clang lowers `_Complex` on x86-64
/// System V: a `double complex` is two `double` parameters and a `{double, double}`
/// result, a `float complex` one `<2 x float>` (both parts in one SSE register).
const COMPLEX_C_ABI: bool = cfg!(target_arch = "x86_64");

/// The LLVM parameters one C argument of type `t` takes.
fn c_params(ctx: &Context, t: TypeId) -> R<Vec<BasicTypeEnum<'_>>> {
    let t = lowered(t);
    Ok(if t == COMPLEX128 {
        vec![ctx.f64_type().into(), ctx.f64_type().into()]
    } else if t == COMPLEX64 {
        vec![ctx.f32_type().vec_type(2).into()]
    } else {
        vec![c_type(ctx, t)?]
    })
}

/// The LLVM type of a C result of type `t`.
fn c_result(ctx: &Context, t: TypeId) -> R<BasicTypeEnum<'_>> {
    let t = lowered(t);
    Ok(if t == COMPLEX128 {
        ctx.struct_type(&[ctx.f64_type().into(), ctx.f64_type().into()], false)
            .into()
    } else if t == COMPLEX64 {
        ctx.f32_type().vec_type(2).into()
    } else {
        c_type(ctx, t)?
    })
}

/// A complex value from its C parameters ([`c_params`]).
fn complex_from_c<'ctx>(
    ctx: &'ctx Context,
    b: &Builder<'ctx>,
    t: TypeId,
    ps: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = value_type(ctx, t)?.into_struct_type();
    let parts: Vec<BasicValueEnum<'ctx>> = if t == COMPLEX64 {
        let v = ps[0].into_vector_value();
        (0..2)
            .map(|i| {
                b.build_extract_element(v, ctx.i32_type().const_int(i, false), "")
                    .map_err(llvm_err)
            })
            .collect::<R<_>>()?
    } else {
        ps.to_vec()
    };
    struct_of(b, st, &parts)
}

/// A struct of type `st` holding `parts`.
fn struct_of<'ctx>(
    b: &Builder<'ctx>,
    st: inkwell::types::StructType<'ctx>,
    parts: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let mut out = st.get_undef();
    for (i, &p) in parts.iter().enumerate() {
        out = b
            .build_insert_value(out, p, i as u32, "")
            .map_err(llvm_err)?
            .into_struct_value();
    }
    Ok(out.into())
}

/// A complex value (its memory form, `{re, im}`) as the C result ([`c_result`]).
fn complex_to_c<'ctx>(
    ctx: &'ctx Context,
    b: &Builder<'ctx>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    let sv = v.into_struct_value();
    let re = b.build_extract_value(sv, 0, "").map_err(llvm_err)?;
    let im = b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
    let rt = c_result(ctx, t)?;
    if t == COMPLEX64 {
        let vt = rt.into_vector_type();
        let mut out = vt.get_undef();
        for (i, p) in [re, im].into_iter().enumerate() {
            out = b
                .build_insert_element(out, p, ctx.i32_type().const_int(i as u64, false), "")
                .map_err(llvm_err)?;
        }
        return Ok(out.into());
    }
    struct_of(b, rt.into_struct_type(), &[re, im])
}
