//! Linear algebra: `np.dot` and `@` for 1-d and 2-d float and complex arrays, each lowered
//! to one call of the GEMM helper (`crate::blas`), with vectors read as 1×k or k×1
//! matrices through their strides; `np.outer` as a loop over the flattened operands; and
//! `np.linalg` (plus `np.vdot`, `np.trace`), each one call of a `crate::lapack` helper.
//!
//! A `lapack` call passes its operands as descriptors (data, rows, cols, byte strides) and
//! its scalar parameters in a small `f64` buffer. The result arrays are allocated here
//! first (NRT arrays of the types typing chose), so the helper only fills them; when it
//! reports a failure, the results are released before the exception is raised.

use inkwell::types::StructType;
use inkwell::values::{BasicValueEnum, FloatValue, IntValue, PointerValue, StructValue};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::array_ops::{
    apply_binop, data_ptr, dim, dtype_of, flat_ptr, is_array, load_elem, store_elem, Loop,
};
use super::arrays::allocate;
use crate::blas::GemmKind;
use crate::function::FnLower;
use crate::lapack::Status;
use crate::model::array::{field, ndim};
use crate::model::{members, model_of};
use crate::registry::{Args, LowerFn, Registry, TypePat};
use crate::{llvm_err, LowerError, R};

pub(crate) fn register(r: &mut Registry) {
    let two = || Args::Exact(vec![TypePat::Pred(is_array), TypePat::Pred(is_array)]);
    r.register(ImplKey::Function("numpy.dot".into()), two(), dot);
    r.register(ImplKey::Function("array.dot".into()), two(), dot);
    r.register(ImplKey::BinOp(BinOp::MatMul), two(), dot);
    r.register(ImplKey::Function("numpy.vdot".into()), two(), vdot);
    r.register(
        ImplKey::Function("numpy.outer".into()),
        Args::Exact(vec![TypePat::Any, TypePat::Any]),
        outer,
    );
    let table: [(&str, LowerFn); 16] = [
        ("numpy.linalg.inv", inv),
        ("numpy.linalg.solve", solve),
        ("numpy.linalg.det", det),
        ("numpy.linalg.slogdet", det),
        ("numpy.linalg.eig", eig),
        ("numpy.linalg.eigvals", eig),
        ("numpy.linalg.eigh", eig),
        ("numpy.linalg.eigvalsh", eig),
        ("numpy.linalg.svd", svd),
        ("numpy.linalg.qr", qr),
        ("numpy.linalg.cholesky", cholesky),
        ("numpy.linalg.lstsq", lstsq),
        ("numpy.linalg.norm", norm),
        ("numpy.linalg.matrix_rank", matrix_rank),
        ("numpy.linalg.pinv", pinv),
        ("numpy.trace", trace),
    ];
    for (key, f) in table {
        r.register(
            ImplKey::Function(key.into()),
            Args::Variadic(TypePat::Any),
            f,
        );
    }
}

fn gemm_kind(dtype: TypeId) -> Option<GemmKind> {
    Some(match dtype {
        FLOAT32 => GemmKind::F32,
        FLOAT64 => GemmKind::F64,
        COMPLEX64 => GemmKind::C64,
        COMPLEX128 => GemmKind::C128,
        _ => return None,
    })
}

/// A product operand as a matrix: rows, columns, and their byte strides.
struct Operand<'ctx> {
    rows: IntValue<'ctx>,
    cols: IntValue<'ctx>,
    row_stride: IntValue<'ctx>,
    col_stride: IntValue<'ctx>,
}

fn dot<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (ta, tb) = (sig.args[0], sig.args[1]);
    let (x, y) = (a[0].into_struct_value(), a[1].into_struct_value());
    let dtype = dtype_of(ta);
    let kind = gemm_kind(dtype).ok_or_else(|| lw.unsupported("np.dot of this dtype"))?;
    let i64t = lw.ctx.i64_type();
    let one = i64t.const_int(1, false);
    let size = i64t.const_int(kind.itemsize() as u64, false);
    // A vector is a 1×k row on the left and a k×1 column on the right.
    let operand = |lw: &mut FnLower<'ctx, '_>, t: TypeId, v, left: bool| -> R<Operand<'ctx>> {
        let len0 = dim(lw, v, field::SHAPE, 0)?;
        let st0 = dim(lw, v, field::STRIDES, 0)?;
        Ok(if ndim(t) == 2 {
            Operand {
                rows: len0,
                cols: dim(lw, v, field::SHAPE, 1)?,
                row_stride: st0,
                col_stride: dim(lw, v, field::STRIDES, 1)?,
            }
        } else if left {
            Operand {
                rows: one,
                cols: len0,
                row_stride: size,
                col_stride: st0,
            }
        } else {
            Operand {
                rows: len0,
                cols: one,
                row_stride: st0,
                col_stride: size,
            }
        })
    };
    let l = operand(lw, ta, x, true)?;
    let r = operand(lw, tb, y, false)?;
    let bad =
        lw.b.build_int_compare(IntPredicate::NE, l.cols, r.rows, "")
            .map_err(llvm_err)?;
    // Numba's message names the operand kinds.
    let shape_name = |t: TypeId| if ndim(t) == 1 { "vector" } else { "matrix" };
    let msg = format!(
        "incompatible array sizes for np.dot(a, b) ({} * {})",
        shape_name(ta),
        shape_name(tb)
    );
    lw.raise_const_if(bad, "ValueError", &[msg.as_str()])?;
    let (m, k, n) = (l.rows, l.cols, r.cols);
    // The result: a new array (its dims are the non-vector ones), or one stack element.
    let (out, c, rsc) = if sig.ret.is_array() {
        let dims: Vec<IntValue> = match (ndim(ta), ndim(tb)) {
            (2, 2) => vec![m, n],
            (2, _) => vec![m],
            _ => vec![n],
        };
        let out = allocate(lw, sig.ret, &dims)?;
        let data = data_ptr(lw, out)?;
        let rsc = lw.b.build_int_mul(n, size, "").map_err(llvm_err)?;
        (Some(out), data, rsc)
    } else {
        let slot = lw.alloca_in_entry(model_of(dtype)?.memory_type(lw.ctx, dtype)?, "dot")?;
        (None, slot, size)
    };
    let ptr = lw.ctx.ptr_type(inkwell::AddressSpace::default());
    let i32t = lw.ctx.i32_type();
    let f = lw.runtime_fn(
        "numba_rs_gemm",
        lw.ctx.void_type().fn_type(
            &[
                i32t.into(),
                i64t.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
            ],
            false,
        ),
    );
    let (pa, pb) = (data_ptr(lw, x)?, data_ptr(lw, y)?);
    lw.b.build_call(
        f,
        &[
            i32t.const_int(kind as u64, false).into(),
            m.into(),
            k.into(),
            n.into(),
            pa.into(),
            l.row_stride.into(),
            l.col_stride.into(),
            pb.into(),
            r.row_stride.into(),
            r.col_stride.into(),
            c.into(),
            rsc.into(),
            size.into(),
        ],
        "",
    )
    .map_err(llvm_err)?;
    match out {
        Some(out) => Ok(out.into()),
        None => {
            let m = model_of(dtype)?;
            let v =
                lw.b.build_load(m.memory_type(lw.ctx, dtype)?, c, "")
                    .map_err(llvm_err)?;
            m.load_memory(lw.ctx, &lw.b, dtype, v)
        }
    }
}

/// The element kind of an array type's dtype (typing admits only float and complex).
fn kind_of(lw: &FnLower<'_, '_>, t: TypeId) -> R<GemmKind> {
    gemm_kind(dtype_of(t)).ok_or_else(|| lw.unsupported(format!("linear algebra on {t}")))
}

/// One operand as a `lapack` helper reads it (see `crate::lapack::Desc`): a vector is a
/// `len × 1` matrix.
#[derive(Clone, Copy)]
struct Desc<'ctx> {
    data: PointerValue<'ctx>,
    rows: IntValue<'ctx>,
    cols: IntValue<'ctx>,
    row_stride: IntValue<'ctx>,
    col_stride: IntValue<'ctx>,
}

fn desc<'ctx>(lw: &FnLower<'ctx, '_>, t: TypeId, v: StructValue<'ctx>) -> R<Desc<'ctx>> {
    let data = data_ptr(lw, v)?;
    let rows = dim(lw, v, field::SHAPE, 0)?;
    let row_stride = dim(lw, v, field::STRIDES, 0)?;
    Ok(if ndim(t) == 2 {
        Desc {
            data,
            rows,
            cols: dim(lw, v, field::SHAPE, 1)?,
            row_stride,
            col_stride: dim(lw, v, field::STRIDES, 1)?,
        }
    } else {
        let one = lw.ctx.i64_type().const_int(1, false);
        Desc {
            data,
            rows,
            cols: one,
            row_stride,
            col_stride: one,
        }
    })
}

/// A new result array of type `t` and shape `dims`, with its descriptor.
fn output<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    dims: &[IntValue<'ctx>],
) -> R<(TypeId, StructValue<'ctx>, Desc<'ctx>)> {
    let arr = allocate(lw, t, dims)?;
    let d = desc(lw, t, arr)?;
    Ok((t, arr, d))
}

fn min_of<'ctx>(lw: &FnLower<'ctx, '_>, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
    let lt =
        lw.b.build_int_compare(IntPredicate::SLT, a, b, "")
            .map_err(llvm_err)?;
    Ok(lw
        .b
        .build_select(lt, a, b, "")
        .map_err(llvm_err)?
        .into_int_value())
}

/// The `lapack` descriptor layout: `{ptr, i64 rows, i64 cols, i64 row_stride, i64 col_stride}`.
fn desc_type<'ctx>(lw: &FnLower<'ctx, '_>) -> StructType<'ctx> {
    let i64t = lw.ctx.i64_type();
    lw.ctx.struct_type(
        &[
            lw.ctx.ptr_type(AddressSpace::default()).into(),
            i64t.into(),
            i64t.into(),
            i64t.into(),
            i64t.into(),
        ],
        false,
    )
}

/// Scalar slots every call gets (parameters in, results out).
const SCALARS: u32 = 8;

/// What a `lapack` call leaves: its result arrays (with a null MemInfo on the path where
/// an exception is pending inside a `try`) and its scalar slots.
struct Called<'ctx> {
    outs: Vec<StructValue<'ctx>>,
    scalars: PointerValue<'ctx>,
}

impl<'ctx> Called<'ctx> {
    fn scalar(&self, lw: &FnLower<'ctx, '_>, i: u32) -> R<FloatValue<'ctx>> {
        let f64t = lw.ctx.f64_type();
        // SAFETY (of the generated code): i < SCALARS.
        let p = unsafe {
            lw.b.build_in_bounds_gep(
                f64t,
                self.scalars,
                &[lw.ctx.i64_type().const_int(u64::from(i), false)],
                "",
            )
            .map_err(llvm_err)?
        };
        Ok(lw
            .b
            .build_load(f64t, p, "")
            .map_err(llvm_err)?
            .into_float_value())
    }
}

/// Call the helper `name` on `descs` with the scalar parameters `inputs`; when its status
/// is one of `fails` (or an internal error), release `outs` and raise what Numba raises.
fn call_lapack<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    name: &str,
    kind: GemmKind,
    descs: &[Desc<'ctx>],
    inputs: &[FloatValue<'ctx>],
    fails: &[Status],
    outs: &[(TypeId, StructValue<'ctx>)],
) -> R<Called<'ctx>> {
    let i64t = lw.ctx.i64_type();
    let i32t = lw.ctx.i32_type();
    let f64t = lw.ctx.f64_type();
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let dt = desc_type(lw);
    let n = u32::try_from(descs.len().max(1)).map_err(|_| lw.unsupported("too many operands"))?;
    let darr = lw.alloca_in_entry(dt.array_type(n).into(), "linalg.descs")?;
    let scalars = lw.alloca_in_entry(f64t.array_type(SCALARS).into(), "linalg.scalars")?;
    let idx = |i: u64| i64t.const_int(i, false);
    for (i, d) in descs.iter().enumerate() {
        // SAFETY (of the generated code): i < n.
        let p = unsafe {
            lw.b.build_in_bounds_gep(dt, darr, &[idx(i as u64)], "")
                .map_err(llvm_err)?
        };
        let fields: [BasicValueEnum<'ctx>; 5] = [
            d.data.into(),
            d.rows.into(),
            d.cols.into(),
            d.row_stride.into(),
            d.col_stride.into(),
        ];
        for (k, v) in fields.into_iter().enumerate() {
            let fp =
                lw.b.build_struct_gep(dt, p, k as u32, "")
                    .map_err(llvm_err)?;
            lw.b.build_store(fp, v).map_err(llvm_err)?;
        }
    }
    for (i, v) in inputs.iter().enumerate() {
        // SAFETY (of the generated code): i < SCALARS.
        let p = unsafe {
            lw.b.build_in_bounds_gep(f64t, scalars, &[idx(i as u64)], "")
                .map_err(llvm_err)?
        };
        lw.b.build_store(p, *v).map_err(llvm_err)?;
    }
    let f = lw.runtime_fn(
        name,
        i32t.fn_type(&[i32t.into(), ptr.into(), ptr.into()], false),
    );
    let status = lw
        .call_value(
            f,
            &[
                i32t.const_int(kind as u64, false).into(),
                darr.into(),
                scalars.into(),
            ],
        )?
        .into_int_value();
    let failed =
        lw.b.build_int_compare(IntPredicate::NE, status, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    let fail_bb = lw.new_block("linalg.fail");
    let ok_bb = lw.new_block("linalg.ok");
    let join = lw.new_block("linalg.done");
    lw.b.build_conditional_branch(failed, fail_bb, ok_bb)
        .map_err(llvm_err)?;
    lw.b.position_at_end(fail_bb);
    for &(t, v) in outs {
        lw.decref(t, v.into())?;
    }
    for &st in fails.iter().chain([Status::Internal].iter()) {
        let (class, message) = st.exception();
        let is =
            lw.b.build_int_compare(
                IntPredicate::EQ,
                status,
                i32t.const_int(st as u64, false),
                "",
            )
            .map_err(llvm_err)?;
        lw.raise_const_if(is, class, &[message])?;
    }
    // Reached only inside a `try` (the exception is pending): the released results must
    // not be released again, so they continue without a MemInfo.
    let mut released = Vec::with_capacity(outs.len());
    for &(_, v) in outs {
        released.push(
            lw.b.build_insert_value(v, ptr.const_null(), field::MEMINFO, "")
                .map_err(llvm_err)?
                .into_struct_value(),
        );
    }
    let fail_end =
        lw.b.get_insert_block()
            .ok_or_else(|| LowerError::Llvm("no block".into()))?;
    lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
    lw.b.position_at_end(ok_bb);
    lw.b.build_unconditional_branch(join).map_err(llvm_err)?;
    lw.b.position_at_end(join);
    let mut merged = Vec::with_capacity(outs.len());
    for (&(_, v), r) in outs.iter().zip(released) {
        let phi = lw.b.build_phi(v.get_type(), "").map_err(llvm_err)?;
        phi.add_incoming(&[(&v, ok_bb), (&r, fail_end)]);
        merged.push(phi.as_basic_value().into_struct_value());
    }
    Ok(Called {
        outs: merged,
        scalars,
    })
}

/// A scalar argument as `f64` (ints, floats and bools).
fn scalar_arg<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    v: BasicValueEnum<'ctx>,
    t: TypeId,
) -> R<FloatValue<'ctx>> {
    Ok(lw.cast(v, t, FLOAT64)?.into_float_value())
}

/// A scalar result of type `ret` from its real and imaginary parts in `f64`.
fn scalar_result<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    ret: TypeId,
    re: FloatValue<'ctx>,
    im: FloatValue<'ctx>,
) -> R<BasicValueEnum<'ctx>> {
    if ret.is_complex() {
        let z = lw.make_struct(COMPLEX128, &[re.into(), im.into()])?;
        lw.cast(z, COMPLEX128, ret)
    } else {
        lw.cast(re.into(), FLOAT64, ret)
    }
}

/// The argument at `i` when given and not None, with its type.
fn optional_arg<'ctx>(
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    i: usize,
) -> Option<(BasicValueEnum<'ctx>, TypeId)> {
    match (a.get(i), sig.args.get(i)) {
        (Some(v), Some(&t)) if t != NONE => Some((*v, t)),
        _ => None,
    }
}

/// The tuple of `vals` (the function's return type).
fn tuple_of<'ctx>(
    lw: &FnLower<'ctx, '_>,
    sig: &Signature,
    vals: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.make_struct(sig.ret, vals)
}

/// Common operands: the first argument as an array value, its type, kind and descriptor.
fn first<'ctx>(
    lw: &FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<(TypeId, GemmKind, Desc<'ctx>)> {
    let t = sig.args[0];
    let kind = kind_of(lw, t)?;
    Ok((t, kind, desc(lw, t, a[0].into_struct_value())?))
}

/// `np.linalg.inv(a)`.
fn inv<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let out = output(lw, sig.ret, &[da.cols, da.cols])?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_inv",
        kind,
        &[da, out.2],
        &[],
        &[Status::NotSquare, Status::NonFinite, Status::Singular],
        &[(out.0, out.1)],
    )?;
    Ok(called.outs[0].into())
}

/// `np.linalg.solve(a, b)` with `b` a vector or a matrix of right-hand sides.
fn solve<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let db = desc(lw, sig.args[1], a[1].into_struct_value())?;
    let dims = if ndim(sig.args[1]) == 2 {
        vec![da.cols, db.cols]
    } else {
        vec![da.cols]
    };
    let out = output(lw, sig.ret, &dims)?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_solve",
        kind,
        &[da, db, out.2],
        &[],
        &[
            Status::NonFinite,
            Status::Incompatible,
            Status::NotSquare,
            Status::Singular,
        ],
        &[(out.0, out.1)],
    )?;
    Ok(called.outs[0].into())
}

/// `np.linalg.det(a)` and `np.linalg.slogdet(a)` (from one LU factorisation).
fn det<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_slogdet",
        kind,
        &[da],
        &[],
        &[Status::NotSquare, Status::NonFinite],
        &[],
    )?;
    if super::function_of(&sig.key) == "numpy.linalg.det" {
        let (re, im) = (called.scalar(lw, 3)?, called.scalar(lw, 4)?);
        return scalar_result(lw, sig.ret, re, im);
    }
    let parts = members(sig.ret);
    let re = called.scalar(lw, 0)?;
    let im = called.scalar(lw, 1)?;
    let logdet = called.scalar(lw, 2)?;
    let sign = scalar_result(lw, parts[0], re, im)?;
    let logdet = scalar_result(lw, parts[1], logdet, logdet)?;
    tuple_of(lw, sig, &[sign, logdet])
}

/// `eig`, `eigvals`, `eigh`, `eigvalsh`: eigenvalues (and eigenvectors as columns).
fn eig<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let name = super::function_of(&sig.key).trim_start_matches("numpy.linalg.");
    let hermitian = name.starts_with("eigh") || name == "eigvalsh";
    let vectors = name == "eig" || name == "eigh";
    let n = da.cols;
    let (wt, vt) = if vectors {
        let parts = members(sig.ret);
        (parts[0], Some(parts[1]))
    } else {
        (sig.ret, None)
    };
    let mut outs = vec![output(lw, wt, &[n])?];
    if let Some(vt) = vt {
        outs.push(output(lw, vt, &[n, n])?);
    }
    let mut descs = vec![da];
    descs.extend(outs.iter().map(|o| o.2));
    let mut fails = vec![Status::NotSquare, Status::NonFinite, Status::NoConvergence];
    if !hermitian {
        fails.push(if vectors {
            Status::EigDomain
        } else {
            Status::EigvalsDomain
        });
    }
    let helper = format!("numba_rs_linalg_{name}");
    let arrays: Vec<(TypeId, StructValue)> = outs.iter().map(|o| (o.0, o.1)).collect();
    let called = call_lapack(lw, &helper, kind, &descs, &[], &fails, &arrays)?;
    if vectors {
        tuple_of(lw, sig, &[called.outs[0].into(), called.outs[1].into()])
    } else {
        Ok(called.outs[0].into())
    }
}

/// `np.linalg.svd(a, full_matrices=True)` → `(u, s, vh)`.
fn svd<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let f64t = lw.ctx.f64_type();
    let full = match optional_arg(sig, a, 1) {
        Some((v, t)) => {
            let x = scalar_arg(lw, v, t)?;
            lw.b.build_float_compare(FloatPredicate::UNE, x, f64t.const_zero(), "")
                .map_err(llvm_err)?
        }
        None => lw.ctx.bool_type().const_int(1, false),
    };
    let (m, n) = (da.rows, da.cols);
    let k = min_of(lw, m, n)?;
    let sel = |lw: &FnLower<'ctx, '_>, x: IntValue<'ctx>| -> R<IntValue<'ctx>> {
        Ok(lw
            .b
            .build_select(full, x, k, "")
            .map_err(llvm_err)?
            .into_int_value())
    };
    let (ucols, vrows) = (sel(lw, m)?, sel(lw, n)?);
    let parts = members(sig.ret);
    let u = output(lw, parts[0], &[m, ucols])?;
    let s = output(lw, parts[1], &[k])?;
    let vh = output(lw, parts[2], &[vrows, n])?;
    let full_f =
        lw.b.build_unsigned_int_to_float(full, f64t, "")
            .map_err(llvm_err)?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_svd",
        kind,
        &[da, u.2, s.2, vh.2],
        &[full_f],
        &[Status::Empty, Status::NonFinite, Status::NoConvergence],
        &[(u.0, u.1), (s.0, s.1), (vh.0, vh.1)],
    )?;
    let o = &called.outs;
    tuple_of(lw, sig, &[o[0].into(), o[1].into(), o[2].into()])
}

/// `np.linalg.qr(a)` (reduced) → `(q, r)`.
fn qr<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let (m, n) = (da.rows, da.cols);
    let k = min_of(lw, m, n)?;
    let parts = members(sig.ret);
    let q = output(lw, parts[0], &[m, k])?;
    let r = output(lw, parts[1], &[k, n])?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_qr",
        kind,
        &[da, q.2, r.2],
        &[],
        &[Status::Empty, Status::NonFinite],
        &[(q.0, q.1), (r.0, r.1)],
    )?;
    tuple_of(lw, sig, &[called.outs[0].into(), called.outs[1].into()])
}

/// `np.linalg.cholesky(a)`: the lower factor.
fn cholesky<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let out = output(lw, sig.ret, &[da.cols, da.cols])?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_cholesky",
        kind,
        &[da, out.2],
        &[],
        &[Status::NotSquare, Status::NotPositiveDefinite],
        &[(out.0, out.1)],
    )?;
    Ok(called.outs[0].into())
}

/// `np.linalg.lstsq(a, b, rcond=-1)` → `(x, residuals, rank, sv)`.
fn lstsq<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let tb = sig.args[1];
    let db = desc(lw, tb, a[1].into_struct_value())?;
    let rcond = match optional_arg(sig, a, 2) {
        Some((v, t)) => scalar_arg(lw, v, t)?,
        None => lw.ctx.f64_type().const_float(-1.0),
    };
    let (m, n, nrhs) = (da.rows, da.cols, db.cols);
    let k = min_of(lw, m, n)?;
    let parts = members(sig.ret);
    let xdims = if ndim(tb) == 2 {
        vec![n, nrhs]
    } else {
        vec![n]
    };
    let x = output(lw, parts[0], &xdims)?;
    let res = output(lw, parts[1], &[nrhs])?;
    let sv = output(lw, parts[3], &[k])?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_lstsq",
        kind,
        &[da, db, x.2, res.2, sv.2],
        &[rcond],
        &[
            Status::NonFinite,
            Status::Empty,
            Status::Incompatible,
            Status::NoConvergence,
        ],
        &[(x.0, x.1), (res.0, res.1), (sv.0, sv.1)],
    )?;
    let rank = called.scalar(lw, 1)?;
    let rank = lw.cast(rank.into(), FLOAT64, parts[2])?;
    // The residuals are empty unless the system was of full rank and overdetermined.
    let has = called.scalar(lw, 2)?;
    let has =
        lw.b.build_float_compare(FloatPredicate::UNE, has, lw.ctx.f64_type().const_zero(), "")
            .map_err(llvm_err)?;
    let len =
        lw.b.build_select(has, nrhs, lw.ctx.i64_type().const_zero(), "")
            .map_err(llvm_err)?
            .into_int_value();
    let mut r = called.outs[1];
    let shape = lw.ctx.i64_type().array_type(1).get_undef();
    let shape =
        lw.b.build_insert_value(shape, len, 0, "")
            .map_err(llvm_err)?
            .into_array_value();
    r =
        lw.b.build_insert_value(r, shape, field::SHAPE, "")
            .map_err(llvm_err)?
            .into_struct_value();
    r =
        lw.b.build_insert_value(r, len, field::NITEMS, "")
            .map_err(llvm_err)?
            .into_struct_value();
    tuple_of(
        lw,
        sig,
        &[called.outs[0].into(), r.into(), rank, called.outs[2].into()],
    )
}

/// The `(is a vector, is None, value)` scalars of an optional parameter (`ord`, `tol`).
fn flag_args<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<[FloatValue<'ctx>; 3]> {
    let f64t = lw.ctx.f64_type();
    let bit = |b: bool| f64t.const_float(if b { 1.0 } else { 0.0 });
    let vector = bit(ndim(sig.args[0]) == 1);
    Ok(match optional_arg(sig, a, 1) {
        Some((v, t)) => [vector, bit(false), scalar_arg(lw, v, t)?],
        None => [vector, bit(true), f64t.const_zero()],
    })
}

/// `np.linalg.norm(x, ord=None)` for vectors and matrices.
fn norm<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    flagged_scalar(
        lw,
        sig,
        a,
        "numba_rs_linalg_norm",
        &[Status::NormOrder, Status::NonFinite, Status::NoConvergence],
    )
}

/// `np.linalg.matrix_rank(A, tol=None)`.
fn matrix_rank<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    flagged_scalar(
        lw,
        sig,
        a,
        "numba_rs_linalg_matrix_rank",
        &[Status::Empty, Status::NonFinite, Status::NoConvergence],
    )
}

/// A helper over the first argument with `flag_args`' optional scalar, returning the
/// scalar it stores in slot 3 (as the result type).
fn flagged_scalar<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    helper: &str,
    statuses: &[Status],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let inputs = flag_args(lw, sig, a)?;
    let called = call_lapack(lw, helper, kind, &[da], &inputs, statuses, &[])?;
    let v = called.scalar(lw, 3)?;
    lw.cast(v.into(), FLOAT64, sig.ret)
}

/// `np.linalg.pinv(a, rcond=1e-15)`.
fn pinv<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let rcond = match optional_arg(sig, a, 1) {
        Some((v, t)) => scalar_arg(lw, v, t)?,
        None => lw.ctx.f64_type().const_float(1e-15),
    };
    let out = output(lw, sig.ret, &[da.cols, da.rows])?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_pinv",
        kind,
        &[da, out.2],
        &[rcond],
        &[Status::NonFinite, Status::NoConvergence],
        &[(out.0, out.1)],
    )?;
    Ok(called.outs[0].into())
}

/// `np.trace(a, offset=0)`.
fn trace<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let offset = match optional_arg(sig, a, 1) {
        Some((v, t)) => scalar_arg(lw, v, t)?,
        None => lw.ctx.f64_type().const_zero(),
    };
    let called = call_lapack(
        lw,
        "numba_rs_linalg_trace",
        kind,
        &[da],
        &[offset],
        &[],
        &[],
    )?;
    let (re, im) = (called.scalar(lw, 1)?, called.scalar(lw, 2)?);
    scalar_result(lw, sig.ret, re, im)
}

/// `np.vdot(a, b)`: `Σ conj(aᵢ)·bᵢ` over two vectors.
fn vdot<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (_, kind, da) = first(lw, sig, a)?;
    let db = desc(lw, sig.args[1], a[1].into_struct_value())?;
    let called = call_lapack(
        lw,
        "numba_rs_linalg_vdot",
        kind,
        &[da, db],
        &[],
        &[Status::VectorSizes],
        &[],
    )?;
    let (re, im) = (called.scalar(lw, 0)?, called.scalar(lw, 1)?);
    scalar_result(lw, sig.ret, re, im)
}

/// An `outer` operand: its element count and a way to read element `i` (C order over an
/// array of any layout; a scalar is one element).
fn outer_len<'ctx>(
    lw: &FnLower<'ctx, '_>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
) -> R<IntValue<'ctx>> {
    if t.is_array() {
        super::array_ops::get_int(lw, v.into_struct_value(), field::NITEMS)
    } else {
        Ok(lw.ctx.i64_type().const_int(1, false))
    }
}

fn outer_elem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    t: TypeId,
    v: BasicValueEnum<'ctx>,
    i: IntValue<'ctx>,
) -> R<(BasicValueEnum<'ctx>, TypeId)> {
    if !t.is_array() {
        return Ok((v, t));
    }
    let p = flat_ptr(lw, t, v.into_struct_value(), i)?;
    let d = dtype_of(t);
    Ok((load_elem(lw, d, p)?, d))
}

/// `np.outer(a, b)`: `out[i, j] = a.ravel()[i] * b.ravel()[j]`, with NumPy's `multiply`
/// on the two dtypes.
fn outer<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (ta, tb) = (sig.args[0], sig.args[1]);
    let na = outer_len(lw, ta, a[0])?;
    let nb = outer_len(lw, tb, a[1])?;
    let out = allocate(lw, sig.ret, &[na, nb])?;
    let dtype = dtype_of(sig.ret);
    let (outer_loop, i) = Loop::begin(lw, na)?;
    let x = outer_elem(lw, ta, a[0], i)?;
    let row = lw.b.build_int_mul(i, nb, "").map_err(llvm_err)?;
    let (inner_loop, j) = Loop::begin(lw, nb)?;
    let y = outer_elem(lw, tb, a[1], j)?;
    let (r, rt) = apply_binop(lw, BinOp::Mul, x, y)?;
    let r = lw.cast(r, rt, dtype)?;
    let k = lw.b.build_int_add(row, j, "").map_err(llvm_err)?;
    let p = flat_ptr(lw, sig.ret, out, k)?;
    store_elem(lw, dtype, p, r)?;
    inner_loop.end(lw)?;
    outer_loop.end(lw)?;
    Ok(out.into())
}
