//! `str` methods: each a call of its run-time helper in `crate::str_methods`, with the
//! arguments the typing table (`numba_typeinfer::strings`) describes, defaults filled
//! in for those left out, and the helper's status raised as CPython's exception.

use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};
use inkwell::AddressSpace;
use numba_typeinfer::strings::{method_spec, Default, Method, Param};
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use crate::function::FnLower;
use crate::model::unicode;
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    for m in numba_typeinfer::strings::METHODS {
        r.register(
            ImplKey::Function(format!("str.{}", m.name)),
            Args::Variadic(TypePat::Any),
            str_method,
        );
    }
}

/// The order of `numba_rs_str_is`'s predicates.
const PREDICATES: &[&str] = &[
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
];

/// A helper's argument: a string by pointer (null for `None`) or an integer.
#[derive(Clone, Copy)]
enum Arg<'ctx> {
    Str(PointerValue<'ctx>),
    Int(IntValue<'ctx>),
    List(PointerValue<'ctx>),
}

impl<'ctx> Arg<'ctx> {
    fn ptr(self) -> R<PointerValue<'ctx>> {
        match self {
            Arg::Str(p) | Arg::List(p) => Ok(p),
            Arg::Int(_) => Err(crate::LowerError::Llvm("expected a string argument".into())),
        }
    }
    fn int(self) -> R<IntValue<'ctx>> {
        match self {
            Arg::Int(i) => Ok(i),
            _ => Err(crate::LowerError::Llvm(
                "expected an integer argument".into(),
            )),
        }
    }
}

/// Parameter `i` of method `m`: the call's argument, or the parameter's default.
fn argument<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    m: &Method,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
    i: usize,
) -> R<Arg<'ctx>> {
    let (_, param, default) = m.params[i];
    let null = lw.ctx.ptr_type(AddressSpace::default()).const_null();
    let i64t = lw.ctx.i64_type();
    let none_int = i64t.const_int(i64::MIN as u64, true);
    if let (Some(&v), Some(&t)) = (a.get(i + 1), sig.args.get(i + 1)) {
        if t == NONE {
            return Ok(match param {
                Param::OptInt => Arg::Int(none_int),
                _ => Arg::Str(null),
            });
        }
        return Ok(match param {
            Param::StrOrTuple if t != UNICODE => {
                return Err(lw.unsupported("a tuple of prefixes is lowered item by item"))
            }
            Param::Str | Param::OptStr | Param::StrOrTuple => Arg::Str(lw.unicode_slot(v)?),
            Param::StrList => Arg::List(lw.list_payload(v)?),
            Param::Int | Param::OptInt | Param::Bool => {
                Arg::Int(lw.cast(v, t, INT64)?.into_int_value())
            }
        });
    }
    Ok(match default {
        Default::None if param == Param::OptInt => Arg::Int(none_int),
        Default::None => Arg::Str(null),
        Default::Int(k) => Arg::Int(i64t.const_int(k as u64, true)),
        Default::Bool(b) => Arg::Int(i64t.const_int(u64::from(b), false)),
        Default::Str(s) => {
            let v = lw.unicode_constant(s)?;
            Arg::Str(lw.unicode_slot(v)?)
        }
        Default::Required => {
            return Err(lw.unsupported(format!("str.{} needs argument {}", m.name, i + 1)))
        }
    })
}

/// Call `helper(values...)` returning an i32 status, and raise what it reports.
fn call_checked<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    helper: &str,
    values: &[BasicMetadataValueEnum<'ctx>],
) -> R<()> {
    let i32t = lw.ctx.i32_type();
    let params: Vec<inkwell::types::BasicMetadataTypeEnum> = values
        .iter()
        .map(|v| match v {
            BasicMetadataValueEnum::IntValue(i) => i.get_type().into(),
            _ => lw.ctx.ptr_type(AddressSpace::default()).into(),
        })
        .collect();
    let f = lw.runtime_fn(helper, i32t.fn_type(&params, false));
    let status = lw.call_value(f, values)?.into_int_value();
    for (k, (class, msg)) in crate::str_methods::ERRORS.iter().enumerate() {
        let hit =
            lw.b.build_int_compare(
                inkwell::IntPredicate::EQ,
                status,
                i32t.const_int(k as u64 + 1, false),
                "",
            )
            .map_err(llvm_err)?;
        lw.raise_const_if(hit, class, &[msg])?;
    }
    let failed =
        lw.b.build_int_compare(inkwell::IntPredicate::SLT, status, i32t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(failed, "MemoryError", &["Allocation failed"])
}

fn str_method<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let ImplKey::Function(key) = &sig.key else {
        return Err(lw.unsupported("a str method without its name"));
    };
    let name = key.trim_start_matches("str.");
    let m = method_spec(name).ok_or_else(|| lw.unsupported(format!("str.{name}")))?;
    let s = lw.unicode_slot(a[0])?;
    let i32t = lw.ctx.i32_type();
    let i64t = lw.ctx.i64_type();
    let st = unicode::struct_type(lw.ctx);
    let op = |k: u64| i32t.const_int(k, false);
    // `s.startswith(("a", "b"))`: any of the tuple's strings.
    if matches!(name, "startswith" | "endswith") && sig.args.get(1).is_some_and(|t| *t != UNICODE) {
        let items = numba_typeinfer::conv::tuple_items(sig.args[1]).unwrap_or_default();
        let mut any = lw.ctx.bool_type().const_zero();
        for k in 0..items.len() {
            let item =
                lw.b.build_extract_value(a[1].into_struct_value(), k as u32, "")
                    .map_err(llvm_err)?;
            let mut one = a.to_vec();
            one[1] = item;
            let mut one_sig = sig.clone();
            one_sig.args[1] = UNICODE;
            let hit = str_method(lw, &one_sig, &one)?.into_int_value();
            any = lw.b.build_or(any, hit, "").map_err(llvm_err)?;
        }
        return Ok(any.into());
    }
    let mut args = Vec::new();
    for i in 0..m.params.len() {
        args.push(argument(lw, m, sig, a, i)?);
    }
    // A new string result: the helper writes it to `out`.
    let new_str = |lw: &mut FnLower<'ctx, '_>,
                   helper: &str,
                   mut values: Vec<BasicMetadataValueEnum<'ctx>>|
     -> R<BasicValueEnum<'ctx>> {
        let out = lw.alloca_in_entry(st.into(), "str.out")?;
        values.push(out.into());
        call_checked(lw, helper, &values)?;
        lw.b.build_load(st, out, "s").map_err(llvm_err)
    };
    match name {
        "lower" | "upper" | "casefold" | "swapcase" | "title" | "capitalize" => {
            new_str(lw, &format!("numba_rs_str_{name}"), vec![s.into()])
        }
        _ if name.starts_with("is") => {
            let which = PREDICATES
                .iter()
                .position(|p| *p == name)
                .ok_or_else(|| lw.unsupported(format!("str.{name}")))?;
            let f = lw.runtime_fn(
                "numba_rs_str_is",
                i32t.fn_type(&[s.get_type().into(), i32t.into()], false),
            );
            let r = lw
                .call_value(f, &[s.into(), op(which as u64).into()])?
                .into_int_value();
            Ok(lw
                .b
                .build_int_compare(inkwell::IntPredicate::NE, r, i32t.const_zero(), "")
                .map_err(llvm_err)?
                .into())
        }
        "center" | "ljust" | "rjust" | "zfill" => {
            let k = ["center", "ljust", "rjust", "zfill"]
                .iter()
                .position(|p| *p == name)
                .unwrap_or(0) as u64;
            let fill = match args.get(1) {
                Some(f) => f.ptr()?,
                None => lw.ctx.ptr_type(AddressSpace::default()).const_null(),
            };
            new_str(
                lw,
                "numba_rs_str_pad",
                vec![s.into(), args[0].int()?.into(), fill.into(), op(k).into()],
            )
        }
        "find" | "rfind" | "index" | "rindex" | "count" | "startswith" | "endswith" => {
            let k = [
                "find",
                "rfind",
                "index",
                "rindex",
                "count",
                "startswith",
                "endswith",
            ]
            .iter()
            .position(|p| *p == name)
            .unwrap_or(0) as u64;
            let out = lw.alloca_in_entry(i64t.into(), "str.found")?;
            call_checked(
                lw,
                "numba_rs_str_search",
                &[
                    s.into(),
                    args[0].ptr()?.into(),
                    args[1].int()?.into(),
                    args[2].int()?.into(),
                    op(k).into(),
                    out.into(),
                ],
            )?;
            let r = lw.b.build_load(i64t, out, "").map_err(llvm_err)?;
            if sig.ret == BOOLEAN {
                return Ok(lw
                    .b
                    .build_int_compare(
                        inkwell::IntPredicate::NE,
                        r.into_int_value(),
                        i64t.const_zero(),
                        "",
                    )
                    .map_err(llvm_err)?
                    .into());
            }
            Ok(r)
        }
        "expandtabs" => new_str(
            lw,
            "numba_rs_str_expandtabs",
            vec![s.into(), args[0].int()?.into()],
        ),
        "join" => new_str(
            lw,
            "numba_rs_str_join",
            vec![s.into(), args[0].ptr()?.into()],
        ),
        "strip" | "lstrip" | "rstrip" => {
            let k = ["strip", "lstrip", "rstrip"]
                .iter()
                .position(|p| *p == name)
                .unwrap_or(0) as u64;
            new_str(
                lw,
                "numba_rs_str_strip",
                vec![s.into(), args[0].ptr()?.into(), op(k).into()],
            )
        }
        "replace" => new_str(
            lw,
            "numba_rs_str_replace",
            vec![
                s.into(),
                args[0].ptr()?.into(),
                args[1].ptr()?.into(),
                args[2].int()?.into(),
            ],
        ),
        "split" | "rsplit" | "splitlines" => {
            let refs = lw.ref_map_ptr(UNICODE)?;
            let ptr = lw.ctx.ptr_type(AddressSpace::default());
            let out = lw.alloca_in_entry(ptr.into(), "str.list")?;
            let values: Vec<BasicMetadataValueEnum> = if name == "splitlines" {
                let keep =
                    lw.b.build_int_truncate(args[0].int()?, i32t, "")
                        .map_err(llvm_err)?;
                vec![s.into(), keep.into(), refs.into(), out.into()]
            } else {
                vec![
                    s.into(),
                    args[0].ptr()?.into(),
                    args[1].int()?.into(),
                    op(u64::from(name == "rsplit")).into(),
                    refs.into(),
                    out.into(),
                ]
            };
            let helper = if name == "splitlines" {
                "numba_rs_str_splitlines"
            } else {
                "numba_rs_str_split"
            };
            call_checked(lw, helper, &values)?;
            let mi =
                lw.b.build_load(ptr, out, "")
                    .map_err(llvm_err)?
                    .into_pointer_value();
            lw.list_value(mi)
        }
        "partition" | "rpartition" => {
            let three = st.array_type(3);
            let out = lw.alloca_in_entry(three.into(), "str.parts")?;
            call_checked(
                lw,
                "numba_rs_str_partition",
                &[
                    s.into(),
                    args[0].ptr()?.into(),
                    op(u64::from(name == "rpartition")).into(),
                    out.into(),
                ],
            )?;
            let mut parts = Vec::with_capacity(3);
            for k in 0..3u64 {
                // SAFETY (of the generated code): three structs at `out`.
                let p = unsafe {
                    lw.b.build_in_bounds_gep(
                        three,
                        out,
                        &[i64t.const_zero(), i64t.const_int(k, false)],
                        "",
                    )
                    .map_err(llvm_err)?
                };
                parts.push(lw.b.build_load(st, p, "").map_err(llvm_err)?);
            }
            lw.make_struct(sig.ret, &parts)
        }
        _ => Err(lw.unsupported(format!("str.{name}"))),
    }
}
