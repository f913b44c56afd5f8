//! `str` values (`model::unicode`): literals as constants in the module, `len`,
//! comparisons, `+`, `*`, `in`, indexing and slicing (the run-time helpers of
//! `crate::strings`).

use inkwell::values::{BasicValueEnum, PointerValue};
use inkwell::AddressSpace;
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::binop_of;
use crate::function::FnLower;
use crate::model::unicode;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    let s = TypePat::Exact(UNICODE);
    r.register(ImplKey::Function("len".into()), Args::Exact(vec![s]), len);
    r.register(
        ImplKey::Function("len".into()),
        Args::Exact(vec![TypePat::Pred(|t| {
            matches!(t.get(), Type::StringLiteral(_))
        })]),
        len_literal,
    );
    for op in [
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ] {
        r.register(ImplKey::BinOp(op), Args::Exact(vec![s, s]), compare);
    }
    r.register(ImplKey::BinOp(BinOp::Add), Args::Exact(vec![s, s]), concat);
    // A string and a value of another kind: never equal.
    let other = TypePat::Pred(|t| t != UNICODE);
    for args in [vec![s, other], vec![other, s]] {
        r.register(
            ImplKey::BinOp(BinOp::Eq),
            Args::Exact(args.clone()),
            |lw, _, _| Ok(lw.ctx.bool_type().const_zero().into()),
        );
        r.register(ImplKey::BinOp(BinOp::Ne), Args::Exact(args), |lw, _, _| {
            Ok(lw.ctx.bool_type().const_all_ones().into())
        });
    }
    r.register(ImplKey::BinOp(BinOp::In), Args::Exact(vec![s, s]), contains);
    r.register(
        ImplKey::BinOp(BinOp::Mul),
        Args::Exact(vec![s, TypePat::Int]),
        repeat,
    );
    r.register(
        ImplKey::BinOp(BinOp::Mul),
        Args::Exact(vec![TypePat::Int, s]),
        repeat,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![s, TypePat::Int]),
        getitem,
    );
    r.register(ImplKey::GetIter, Args::Exact(vec![s]), getiter);
    // `not x` of a string, list, set or dict: whether it is empty.
    r.register(
        ImplKey::Unary(numba_ir::UnaryOp::Not),
        Args::Exact(vec![TypePat::Pred(|t| {
            matches!(
                t.get(),
                Type::Unicode | Type::List { .. } | Type::Set { .. } | Type::Dict { .. }
            )
        })]),
        |lw, sig, a| {
            let t = lw.truth(a[0], sig.args[0])?;
            Ok(lw.b.build_not(t, "").map_err(llvm_err)?.into())
        },
    );
    let f = |k: &str| ImplKey::Function(k.into());
    r.register(f("str"), Args::Exact(vec![]), |lw, _, _| {
        lw.unicode_constant("")
    });
    r.register(f("str"), Args::Exact(vec![s]), |lw, _, a| {
        // A call returns a new reference: the same string, one more owner.
        lw.incref(UNICODE, a[0])?;
        Ok(a[0])
    });
    r.register(f("str"), Args::Exact(vec![TypePat::Bool]), |lw, _, a| {
        let t = lw.unicode_constant("True")?;
        let f = lw.unicode_constant("False")?;
        lw.b.build_select(a[0].into_int_value(), t, f, "")
            .map_err(llvm_err)
    });
    r.register(f("str"), Args::Exact(vec![TypePat::Int]), |lw, sig, a| {
        let v = lw.cast(a[0], sig.args[0], INT64)?;
        let unsigned = matches!(sig.args[0].get(), Type::Integer { signed: false, .. });
        let flag = lw.ctx.i32_type().const_int(u64::from(unsigned), false);
        new_string(lw, "numba_rs_str_from_int", &[v, flag.into()], false)
    });
    r.register(f("str"), Args::Exact(vec![TypePat::Float]), |lw, sig, a| {
        let v = lw.cast(a[0], sig.args[0], FLOAT64)?;
        new_string(lw, "numba_rs_str_from_float", &[v], false)
    });
    // `format(x)` is `str(x)`; `format(x, spec)` (f-string fields with a spec) formats by
    // Python's mini-language in the runtime (`crate::str_format`).
    r.register(
        f("format"),
        Args::Exact(vec![TypePat::Any]),
        |lw, sig, a| {
            let as_str = Signature {
                ret: UNICODE,
                args: sig.args.clone(),
                key: ImplKey::Function("str".into()),
            };
            lw.call_impl(&as_str, a)
        },
    );
    // CPython's message for a spec the value does not take, written by the helper.
    const BAD_SPEC: (&str, Option<&str>) = ("ValueError", None);
    r.register(
        f("format"),
        Args::Exact(vec![TypePat::IntOrBool, s]),
        |lw, sig, a| {
            let v = lw.cast(a[0], sig.args[0], INT64)?;
            let unsigned = matches!(sig.args[0].get(), Type::Integer { signed: false, .. });
            let boolean = sig.args[0].unliteral() == BOOLEAN;
            let flags = u64::from(unsigned) | (u64::from(boolean) << 1);
            let flag = lw.ctx.i32_type().const_int(flags, false);
            let spec = lw.unicode_slot(a[1])?;
            new_string_raising(
                lw,
                "numba_rs_format_int",
                &[v, flag.into(), spec.into()],
                BAD_SPEC,
            )
        },
    );
    r.register(
        f("format"),
        Args::Exact(vec![TypePat::Float, s]),
        |lw, sig, a| {
            let v = lw.cast(a[0], sig.args[0], FLOAT64)?;
            let spec = lw.unicode_slot(a[1])?;
            new_string_raising(lw, "numba_rs_format_float", &[v, spec.into()], BAD_SPEC)
        },
    );
    r.register(f("format"), Args::Exact(vec![s, s]), |lw, _, a| {
        let (v, spec) = (lw.unicode_slot(a[0])?, lw.unicode_slot(a[1])?);
        new_string_raising(
            lw,
            "numba_rs_format_str",
            &[v.into(), spec.into()],
            BAD_SPEC,
        )
    });
    r.register(
        ImplKey::GetAttr("_hash".into()),
        Args::Exact(vec![s]),
        |lw, _, a| {
            lw.b.build_extract_value(a[0].into_struct_value(), unicode::field::HASH, "")
                .map_err(llvm_err)
        },
    );
    // A constant's hash is computed where it is hashed (it depends on the process's key).
    r.register(
        ImplKey::GetAttr("_hash".into()),
        Args::Exact(vec![TypePat::Pred(|t| {
            matches!(t.get(), Type::StringLiteral(_))
        })]),
        |lw, _, _| Ok(lw.ctx.i64_type().const_int(u64::MAX, true).into()),
    );
    r.register(
        ImplKey::GetAttr("_is_ascii".into()),
        Args::Exact(vec![s]),
        |lw, _, a| {
            lw.b.build_extract_value(a[0].into_struct_value(), unicode::field::IS_ASCII, "")
                .map_err(llvm_err)
        },
    );
    r.register(
        ImplKey::GetAttr("_is_ascii".into()),
        Args::Exact(vec![TypePat::Pred(|t| {
            matches!(t.get(), Type::StringLiteral(_))
        })]),
        |lw, sig, _| {
            let ascii = matches!(sig.args[0].get(), Type::StringLiteral(s) if s.is_ascii());
            Ok(lw.ctx.i32_type().const_int(u64::from(ascii), false).into())
        },
    );
    // `repr` / `ascii`: of numbers `str`, of strings escaped and quoted, of bytes
    // `b'...'` (the specific entries after the generic one: later registrations win);
    // `str(b)` of bytes is its repr.
    for key in ["repr", "ascii"] {
        r.register(f(key), Args::Exact(vec![TypePat::Any]), |lw, sig, a| {
            let as_str = Signature {
                ret: UNICODE,
                args: sig.args.clone(),
                key: ImplKey::Function("str".into()),
            };
            lw.call_impl(&as_str, a)
        });
        r.register(
            f(key),
            Args::Exact(vec![TypePat::Exact(BYTES)]),
            |lw, _, a| new_string(lw, "numba_rs_bytes_repr", &[a[0]], false),
        );
    }
    r.register(f("repr"), Args::Exact(vec![s]), |lw, _, a| {
        let flag = lw.ctx.i32_type().const_zero();
        new_string(lw, "numba_rs_str_repr", &[a[0], flag.into()], false)
    });
    r.register(f("ascii"), Args::Exact(vec![s]), |lw, _, a| {
        let flag = lw.ctx.i32_type().const_int(1, false);
        new_string(lw, "numba_rs_str_repr", &[a[0], flag.into()], false)
    });
    r.register(
        f("str"),
        Args::Exact(vec![TypePat::Exact(BYTES)]),
        |lw, _, a| new_string(lw, "numba_rs_bytes_repr", &[a[0]], false),
    );
    r.register(f("chr"), Args::Exact(vec![TypePat::Int]), |lw, sig, a| {
        let v = lw.cast(a[0], sig.args[0], INT64)?;
        new_string_raising(
            lw,
            "numba_rs_str_chr",
            &[v],
            ("ValueError", Some("chr() arg not in range(0x110000)")),
        )
    });
    r.register(f("ord"), Args::Exact(vec![s]), |lw, _, a| {
        let p = lw.unicode_slot(a[0])?;
        let i64t = lw.ctx.i64_type();
        let ptr = lw.ctx.ptr_type(AddressSpace::default());
        let func = lw.runtime_fn("numba_rs_str_ord", i64t.fn_type(&[ptr.into()], false));
        let c = lw.call_value(func, &[p.into()])?.into_int_value();
        let bad =
            lw.b.build_int_compare(inkwell::IntPredicate::SLT, c, i64t.const_zero(), "")
                .map_err(llvm_err)?;
        lw.raise_const_if(bad, "TypeError", &["ord() expected a character"])?;
        Ok(c.into())
    });
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(
            |t| matches!(t.get(), Type::ArrayIter(s) if s == UNICODE),
        )]),
        iternext,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![
            s,
            TypePat::Pred(|t| matches!(t.get(), Type::Slice(_))),
        ]),
        getslice,
    );
}

impl<'ctx> FnLower<'ctx, '_> {
    /// A string constant: its PEP 393 data a private global of the module (one per
    /// distinct string), no MemInfo, the hash not computed yet.
    pub fn unicode_constant(&self, s: &str) -> R<BasicValueEnum<'ctx>> {
        use std::hash::{Hash, Hasher};
        let (kind, ascii, n, data) = unicode::encode(s);
        let mut h = std::hash::DefaultHasher::new();
        data.hash(&mut h);
        let name = format!("numba_rs.str.{kind}.{:016x}", h.finish());
        let global = match self.module.get_global(&name) {
            Some(g) => g,
            None => {
                let init = self.ctx.const_string(&data, false);
                let g = self.module.add_global(init.get_type(), None, &name);
                g.set_initializer(&init);
                g.set_constant(true);
                g.set_linkage(inkwell::module::Linkage::Private);
                g.set_unnamed_addr(true);
                g.set_alignment(4);
                g
            }
        };
        let (i64t, i32t) = (self.ctx.i64_type(), self.ctx.i32_type());
        let null = self.ctx.ptr_type(AddressSpace::default()).const_null();
        Ok(unicode::struct_type(self.ctx)
            .const_named_struct(&[
                global.as_pointer_value().into(),
                i64t.const_int(n, false).into(),
                i32t.const_int(u64::from(kind), false).into(),
                i32t.const_int(u64::from(ascii), false).into(),
                i64t.const_int(u64::MAX, true).into(),
                null.into(),
                null.into(),
            ])
            .into())
    }

    /// `v` stored in a stack slot, for the helpers that take strings by pointer.
    pub(crate) fn unicode_slot(&self, v: BasicValueEnum<'ctx>) -> R<PointerValue<'ctx>> {
        let p = self.alloca_in_entry(unicode::struct_type(self.ctx).into(), "str")?;
        self.b.build_store(p, v).map_err(llvm_err)?;
        Ok(p)
    }
}

pub(super) fn len<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    lw.b.build_extract_value(a[0].into_struct_value(), unicode::field::LENGTH, "len")
        .map_err(llvm_err)
}

/// `len` of a literal string: its length in characters, a constant.
fn len_literal<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    _a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let n = match sig.args[0].get() {
        Type::StringLiteral(s) => s.chars().count() as u64,
        _ => unreachable!("registered for literal strings"),
    };
    Ok(lw.ctx.i64_type().const_int(n, false).into())
}

/// `==` `!=` `<` `<=` `>` `>=`: by code points, as CPython compares strings.
pub(super) fn compare<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let op = binop_of(&sig.key);
    let (x, y) = (lw.unicode_slot(a[0])?, lw.unicode_slot(a[1])?);
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let i32t = lw.ctx.i32_type();
    let fty = i32t.fn_type(&[ptr.into(), ptr.into()], false);
    let (name, pred) = match op {
        BinOp::Eq => ("numba_rs_str_eq", inkwell::IntPredicate::NE),
        BinOp::Ne => ("numba_rs_str_eq", inkwell::IntPredicate::EQ),
        BinOp::Lt => ("numba_rs_str_cmp", inkwell::IntPredicate::SLT),
        BinOp::Le => ("numba_rs_str_cmp", inkwell::IntPredicate::SLE),
        BinOp::Gt => ("numba_rs_str_cmp", inkwell::IntPredicate::SGT),
        _ => ("numba_rs_str_cmp", inkwell::IntPredicate::SGE),
    };
    let f = lw.runtime_fn(name, fty);
    let r = lw.call_value(f, &[x.into(), y.into()])?.into_int_value();
    Ok(lw
        .b
        .build_int_compare(pred, r, i32t.const_zero(), "")
        .map_err(llvm_err)?
        .into())
}

/// Call a helper that makes a new string: its arguments (strings passed by pointer,
/// integers as i64) then the result's slot; its status is 0, -1 when the allocation
/// failed (`MemoryError`) or, for a helper that `indexes`, 1 when the index was out of
/// range (`IndexError`). The result is a new reference to its MemInfo.
pub(super) fn new_string<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    helper: &str,
    args: &[BasicValueEnum<'ctx>],
    indexes: bool,
) -> R<BasicValueEnum<'ctx>> {
    let st = unicode::struct_type(lw.ctx);
    let out = lw.alloca_in_entry(st.into(), "new_str")?;
    let mut params = Vec::with_capacity(args.len() + 1);
    let mut values = Vec::with_capacity(args.len() + 1);
    for &a in args {
        let v: BasicValueEnum = if a.is_struct_value() {
            lw.unicode_slot(a)?.into()
        } else {
            a
        };
        params.push(v.get_type().into());
        values.push(v.into());
    }
    params.push(lw.ctx.ptr_type(AddressSpace::default()).into());
    values.push(out.into());
    let i32t = lw.ctx.i32_type();
    let f = lw.runtime_fn(helper, i32t.fn_type(&params, false));
    let status = lw.call_value(f, &values)?.into_int_value();
    if indexes {
        let outside =
            lw.b.build_int_compare(
                inkwell::IntPredicate::EQ,
                status,
                i32t.const_int(1, false),
                "",
            )
            .map_err(llvm_err)?;
        lw.raise_const_if(outside, "IndexError", &["string index out of range"])?;
    }
    let failed =
        lw.b.build_int_compare(inkwell::IntPredicate::SLT, status, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(failed, "MemoryError", &["Allocation failed"])?;
    lw.b.build_load(st, out, "s").map_err(llvm_err)
}

/// As [`new_string`], for a helper whose status 1 is `error` (class, message).
fn new_string_raising<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    helper: &str,
    args: &[BasicValueEnum<'ctx>],
    error: (&str, Option<&str>),
) -> R<BasicValueEnum<'ctx>> {
    let st = unicode::struct_type(lw.ctx);
    let out = lw.alloca_in_entry(st.into(), "new_str")?;
    let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = Vec::new();
    let mut values: Vec<inkwell::values::BasicMetadataValueEnum> = Vec::new();
    for &a in args {
        params.push(a.get_type().into());
        values.push(a.into());
    }
    params.push(lw.ctx.ptr_type(AddressSpace::default()).into());
    values.push(out.into());
    let i32t = lw.ctx.i32_type();
    let f = lw.runtime_fn(helper, i32t.fn_type(&params, false));
    let status = lw.call_value(f, &values)?.into_int_value();
    let hit =
        lw.b.build_int_compare(
            inkwell::IntPredicate::EQ,
            status,
            i32t.const_int(1, false),
            "",
        )
        .map_err(llvm_err)?;
    match error.1 {
        Some(msg) => lw.raise_const_if(hit, error.0, &[msg])?,
        // The helper wrote the message into `out`; status 2 is an OverflowError.
        None => {
            lw.raise_message_if(hit, error.0, |lw| {
                lw.b.build_load(st, out, "msg").map_err(llvm_err)
            })?;
            let overflow =
                lw.b.build_int_compare(
                    inkwell::IntPredicate::EQ,
                    status,
                    i32t.const_int(2, false),
                    "",
                )
                .map_err(llvm_err)?;
            lw.raise_message_if(overflow, "OverflowError", |lw| {
                lw.b.build_load(st, out, "msg").map_err(llvm_err)
            })?;
        }
    }
    let failed =
        lw.b.build_int_compare(inkwell::IntPredicate::SLT, status, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(failed, "MemoryError", &["Allocation failed"])?;
    lw.b.build_load(st, out, "s").map_err(llvm_err)
}

/// `a + b`: the characters of both, in the wider kind.
pub(super) fn concat<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    new_string(lw, "numba_rs_str_concat", &[a[0], a[1]], false)
}

/// `s = s + piece`: as [`concat`], appending into room in `s`'s block when it has some
/// (`strings::numba_rs_str_append`).
pub(crate) fn append<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    new_string(lw, "numba_rs_str_append", &[a[0], a[1]], false)
}

/// `s[i]`: a one-character string; CPython's IndexError out of range.
fn getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i = lw.cast(a[1], sig.args[1], INT64)?;
    new_string(lw, "numba_rs_str_getitem", &[a[0], i], true)
}

/// `s[start:stop:step]`: a new string of the selected characters.
pub(super) fn getslice<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let n =
        lw.b.build_extract_value(a[0].into_struct_value(), unicode::field::LENGTH, "n")
            .map_err(llvm_err)?
            .into_int_value();
    let (start, len, step) = super::slices::slice_bounds(lw, a[1].into_struct_value(), n)?;
    new_string(
        lw,
        "numba_rs_str_slice",
        &[a[0], start.into(), len.into(), step.into()],
        false,
    )
}

/// `needle in hay` (Numba's IR holds `contains(hay, needle)`).
pub(super) fn contains<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    _sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (hay, needle) = (lw.unicode_slot(a[0])?, lw.unicode_slot(a[1])?);
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let i64t = lw.ctx.i64_type();
    let f = lw.runtime_fn(
        "numba_rs_str_find",
        i64t.fn_type(&[ptr.into(), ptr.into()], false),
    );
    let at = lw
        .call_value(f, &[hay.into(), needle.into()])?
        .into_int_value();
    Ok(lw
        .b
        .build_int_compare(inkwell::IntPredicate::SGE, at, i64t.const_zero(), "in")
        .map_err(llvm_err)?
        .into())
}

/// `s * n` and `n * s`: a new string (empty for `n <= 0`).
pub(super) fn repeat<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let (s, n) = if sig.args[0] == UNICODE || sig.args[0] == BYTES {
        (a[0], lw.cast(a[1], sig.args[1], INT64)?)
    } else {
        (a[1], lw.cast(a[0], sig.args[0], INT64)?)
    };
    new_string(lw, "numba_rs_str_repeat", &[s, n], false)
}

/// `iter(s)`: the index and the string (whose reference the iterator's holder keeps).
pub(super) fn getiter<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = crate::model::iterator_storage(lw.ctx, sig.ret)?;
    let storage = lw.alloca_in_entry(st.into(), "str_iter")?;
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, lw.ctx.i64_type().const_zero())
        .map_err(llvm_err)?;
    let ps =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    lw.b.build_store(ps, a[0]).map_err(llvm_err)?;
    Ok(storage.into())
}

/// The next character: a one-character view into the iterated string's data, sharing
/// its MemInfo (borrowed, as a list's items are), so iterating allocates nothing.
fn iternext<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let st = crate::model::iterator_storage(lw.ctx, sig.args[0])?;
    let storage = a[0].into_pointer_value();
    let i64t = lw.ctx.i64_type();
    let pi =
        lw.b.build_struct_gep(st, storage, 0, "")
            .map_err(llvm_err)?;
    let ps =
        lw.b.build_struct_gep(st, storage, 1, "")
            .map_err(llvm_err)?;
    let ust = unicode::struct_type(lw.ctx);
    let s =
        lw.b.build_load(ust, ps, "")
            .map_err(llvm_err)?
            .into_struct_value();
    let idx =
        lw.b.build_load(i64t, pi, "")
            .map_err(llvm_err)?
            .into_int_value();
    let field =
        |lw: &FnLower<'ctx, '_>, f: u32| lw.b.build_extract_value(s, f, "").map_err(llvm_err);
    let n = field(lw, unicode::field::LENGTH)?.into_int_value();
    let valid =
        lw.b.build_int_compare(inkwell::IntPredicate::SLT, idx, n, "")
            .map_err(llvm_err)?;
    let next =
        lw.b.build_int_add(idx, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, next).map_err(llvm_err)?;
    // Past the end the view is never read; it points at the terminating NUL.
    let kind = field(lw, unicode::field::KIND)?.into_int_value();
    let kind64 = lw.b.build_int_z_extend(kind, i64t, "").map_err(llvm_err)?;
    let off = lw.b.build_int_mul(idx, kind64, "").map_err(llvm_err)?;
    let data = field(lw, unicode::field::DATA)?.into_pointer_value();
    // SAFETY (of the generated code): `idx <= length`, inside the data and its NUL.
    let at = unsafe {
        lw.b.build_in_bounds_gep(lw.ctx.i8_type(), data, &[off], "")
            .map_err(llvm_err)?
    };
    let mut c = s;
    let fields: [(u32, BasicValueEnum<'ctx>); 3] = [
        (unicode::field::DATA, at.into()),
        (unicode::field::LENGTH, i64t.const_int(1, false).into()),
        (unicode::field::HASH, i64t.const_int(u64::MAX, true).into()),
    ];
    for (f, v) in fields {
        c =
            lw.b.build_insert_value(c, v, f, "")
                .map_err(llvm_err)?
                .into_struct_value();
    }
    lw.make_struct(sig.ret, &[c.into(), valid.into()])
}
