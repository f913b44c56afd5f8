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
    r.register(
        ImplKey::Function("str.format".into()),
        Args::Variadic(TypePat::Any),
        str_format,
    );
    for m in numba_typeinfer::strings::METHODS {
        for prefix in ["str", "bytes"] {
            r.register(
                ImplKey::Function(format!("{prefix}.{}", m.name)),
                Args::Variadic(TypePat::Any),
                str_method,
            );
        }
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
        // An optional argument: its value when present, else what None passes.
        if let Type::Optional(x) = t.get() {
            let sv = v.into_struct_value();
            let valid =
                lw.b.build_extract_value(sv, 0, "")
                    .map_err(llvm_err)?
                    .into_int_value();
            let inner = lw.b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
            return Ok(match param {
                Param::OptInt => {
                    let n = lw.cast(inner, x, INT64)?.into_int_value();
                    Arg::Int(
                        lw.b.build_select(valid, n, none_int, "")
                            .map_err(llvm_err)?
                            .into_int_value(),
                    )
                }
                _ => {
                    let p = lw.unicode_slot(inner)?;
                    Arg::Str(
                        lw.b.build_select(valid, p, null, "")
                            .map_err(llvm_err)?
                            .into_pointer_value(),
                    )
                }
            });
        }
        if t == NONE {
            return Ok(match param {
                Param::OptInt => Arg::Int(none_int),
                _ => Arg::Str(null),
            });
        }
        return Ok(match param {
            Param::StrOrTuple if t != UNICODE && t != BYTES => {
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
    let name = numba_typeinfer::strings::method_name(key).unwrap_or(key);
    let m = method_spec(name).ok_or_else(|| lw.unsupported(format!("str.{name}")))?;
    // `bytes` methods are `str`'s over the same one-byte data, but for those whose
    // meaning is ASCII's alone (case, character classes, whitespace, line breaks).
    let kind = sig.args[0];
    if kind == BYTES {
        if let Some(v) = bytes_only(lw, name, sig, a)? {
            return Ok(v);
        }
    }
    let s = lw.unicode_slot(a[0])?;
    let i32t = lw.ctx.i32_type();
    let i64t = lw.ctx.i64_type();
    let st = unicode::struct_type(lw.ctx);
    let op = |k: u64| i32t.const_int(k, false);
    // `s.startswith(("a", "b"))`: any of the tuple's strings.
    if matches!(name, "startswith" | "endswith") && sig.args.get(1).is_some_and(|t| *t != kind) {
        let items = numba_typeinfer::conv::tuple_items(sig.args[1]).unwrap_or_default();
        let mut any = lw.ctx.bool_type().const_zero();
        for k in 0..items.len() {
            let item =
                lw.b.build_extract_value(a[1].into_struct_value(), k as u32, "")
                    .map_err(llvm_err)?;
            let mut one = a.to_vec();
            one[1] = item;
            let mut one_sig = sig.clone();
            one_sig.args[1] = kind;
            let hit = str_method(lw, &one_sig, &one)?.into_int_value();
            any = lw.b.build_or(any, hit, "").map_err(llvm_err)?;
        }
        return Ok(any.into());
    }
    // `sep.join(t)` of a tuple or a character array rather than a list.
    if name == "join" && !matches!(sig.args[1].get(), Type::List { .. }) {
        return join_items(lw, sig, a);
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
            let refs = lw.ref_map_ptr(kind)?;
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

/// The `bytes` methods that differ from `str`'s: ASCII case mapping and classes, and
/// splitting or stripping on ASCII whitespace and line breaks. `None` for the others.
fn bytes_only<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    name: &str,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<Option<BasicValueEnum<'ctx>>> {
    let i32t = lw.ctx.i32_type();
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let st = unicode::struct_type(lw.ctx);
    // Whether argument `i` (after the receiver) is absent or None.
    let absent = |i: usize| sig.args.get(i + 1).is_none_or(|t| *t == NONE);
    let s = lw.unicode_slot(a[0])?;
    let new_bytes = |lw: &mut FnLower<'ctx, '_>,
                     helper: &str,
                     mut values: Vec<BasicMetadataValueEnum<'ctx>>|
     -> R<BasicValueEnum<'ctx>> {
        let out = lw.alloca_in_entry(st.into(), "bytes.out")?;
        values.push(out.into());
        call_checked(lw, helper, &values)?;
        lw.b.build_load(st, out, "b").map_err(llvm_err)
    };
    let new_list = |lw: &mut FnLower<'ctx, '_>,
                    helper: &str,
                    mut values: Vec<BasicMetadataValueEnum<'ctx>>|
     -> R<BasicValueEnum<'ctx>> {
        let refs = lw.ref_map_ptr(BYTES)?;
        let out = lw.alloca_in_entry(ptr.into(), "bytes.list")?;
        values.push(refs.into());
        values.push(out.into());
        call_checked(lw, helper, &values)?;
        let mi =
            lw.b.build_load(ptr, out, "")
                .map_err(llvm_err)?
                .into_pointer_value();
        lw.list_value(mi)
    };
    let op = |k: usize| i32t.const_int(k as u64, false);
    Ok(Some(match name {
        "lower" | "upper" | "swapcase" | "title" | "capitalize" => {
            let k = ["lower", "upper", "swapcase", "title", "capitalize"]
                .iter()
                .position(|p| *p == name)
                .unwrap_or(0);
            new_bytes(lw, "numba_rs_bytes_case", vec![s.into(), op(k).into()])?
        }
        _ if name.starts_with("is") => {
            let which = PREDICATES
                .iter()
                .position(|p| *p == name)
                .ok_or_else(|| lw.unsupported(format!("bytes.{name}")))?;
            let f = lw.runtime_fn(
                "numba_rs_bytes_is",
                i32t.fn_type(&[ptr.into(), i32t.into()], false),
            );
            let r = lw
                .call_value(f, &[s.into(), op(which).into()])?
                .into_int_value();
            lw.b.build_int_compare(inkwell::IntPredicate::NE, r, i32t.const_zero(), "")
                .map_err(llvm_err)?
                .into()
        }
        "strip" | "lstrip" | "rstrip" if absent(0) => {
            let k = ["strip", "lstrip", "rstrip"]
                .iter()
                .position(|p| *p == name)
                .unwrap_or(0);
            new_bytes(lw, "numba_rs_bytes_strip_ws", vec![s.into(), op(k).into()])?
        }
        "split" | "rsplit" if absent(0) => {
            let maxsplit = match (a.get(2), sig.args.get(2)) {
                (Some(&v), Some(&t)) => lw.cast(v, t, INT64)?.into_int_value(),
                _ => i64t.const_int(u64::MAX, true),
            };
            new_list(
                lw,
                "numba_rs_bytes_split_ws",
                vec![
                    s.into(),
                    maxsplit.into(),
                    op(usize::from(name == "rsplit")).into(),
                ],
            )?
        }
        "splitlines" => {
            let keep = match (a.get(1), sig.args.get(1)) {
                (Some(&v), Some(&t)) => {
                    let k = lw.cast(v, t, INT64)?.into_int_value();
                    lw.b.build_int_truncate(k, i32t, "").map_err(llvm_err)?
                }
                _ => i32t.const_zero(),
            };
            new_list(lw, "numba_rs_bytes_splitlines", vec![s.into(), keep.into()])?
        }
        _ => return Ok(None),
    }))
}

/// `sep.join(items)` of a tuple of strings (joined as a list of them) or of a 1-d
/// character array (joined item by item in the runtime).
fn join_items<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let kind = sig.args[0];
    let st = unicode::struct_type(lw.ctx);
    let sep = lw.unicode_slot(a[0])?;
    let out = lw.alloca_in_entry(st.into(), "join.out")?;
    if sig.args[1] == UNICODE {
        // A string's characters, the separator between each two.
        let s = lw.unicode_slot(a[1])?;
        call_checked(
            lw,
            "numba_rs_str_join_chars",
            &[sep.into(), s.into(), out.into()],
        )?;
    } else if let Some(items) = numba_typeinfer::conv::tuple_items(sig.args[1]) {
        let mut vals = Vec::with_capacity(items.len());
        for (k, &t) in items.iter().enumerate() {
            let v =
                lw.b.build_extract_value(a[1].into_struct_value(), k as u32, "")
                    .map_err(llvm_err)?;
            vals.push((v, t));
        }
        let list_t = numba_typeinfer::lists::list_of(kind);
        let list = crate::impls::lists::build(lw, list_t, &vals)?;
        let payload = lw.list_payload(list)?;
        call_checked(
            lw,
            "numba_rs_str_join",
            &[sep.into(), payload.into(), out.into()],
        )?;
        lw.decref(list_t, list)?;
    } else {
        let Type::Array { dtype, .. } = sig.args[1].get() else {
            return Err(lw.unsupported(format!("join of {}", sig.args[1])));
        };
        let (units, width) = crate::model::charseq::units(dtype)
            .ok_or_else(|| lw.unsupported(format!("join of {}", sig.args[1])))?;
        let arr = a[1].into_struct_value();
        let field =
            |lw: &FnLower<'ctx, '_>, i: u32| lw.b.build_extract_value(arr, i, "").map_err(llvm_err);
        use crate::model::array::field as af;
        let data = field(lw, af::DATA)?;
        let shape = field(lw, af::SHAPE)?.into_array_value();
        let strides = field(lw, af::STRIDES)?.into_array_value();
        let n = lw.b.build_extract_value(shape, 0, "").map_err(llvm_err)?;
        let stride = lw.b.build_extract_value(strides, 0, "").map_err(llvm_err)?;
        let i64t = lw.ctx.i64_type();
        call_checked(
            lw,
            "numba_rs_charseq_join",
            &[
                sep.into(),
                data.into(),
                n.into(),
                stride.into(),
                i64t.const_int(u64::from(units), false).into(),
                lw.ctx.i32_type().const_int(u64::from(width), false).into(),
                out.into(),
            ],
        )?;
    }
    lw.b.build_load(st, out, "joined").map_err(llvm_err)
}

/// `template.format(args)` of a constant template: its text pieces as constants, each
/// field the value converted (`!r`, `!a`) and formatted as `format(value, spec)` (`str`
/// without a spec), all concatenated in order.
fn str_format<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    use numba_typeinfer::strings::{parse_format, FormatPiece};
    let Type::StringLiteral(template) = sig.args[0].get() else {
        return Err(lw.unsupported("str.format of a template that is not a constant"));
    };
    let pieces = parse_format(&template).map_err(|e| lw.unsupported(e))?;
    let call = |lw: &mut FnLower<'ctx, '_>,
                key: &str,
                args: Vec<TypeId>,
                vals: &[BasicValueEnum<'ctx>]| {
        let s = Signature {
            ret: UNICODE,
            args,
            key: ImplKey::Function(key.into()),
        };
        lw.call_impl(&s, vals)
    };
    let mut acc: Option<BasicValueEnum<'ctx>> = None;
    for piece in pieces {
        let part = match piece {
            FormatPiece::Text(t) => lw.unicode_constant(&t)?,
            FormatPiece::Field {
                index,
                conversion,
                spec,
            } => {
                let (mut v, mut t) = (a[index + 1], sig.args[index + 1]);
                let mut converted = false;
                if let Some(conv @ ('r' | 'a')) = conversion {
                    let key = if conv == 'r' { "repr" } else { "ascii" };
                    v = call(lw, key, vec![t], &[v])?;
                    t = UNICODE;
                    converted = true;
                }
                let out = if spec.is_empty() {
                    call(lw, "str", vec![t], &[v])?
                } else {
                    let spec_v = lw.unicode_constant(&spec)?;
                    call(lw, "format", vec![t, UNICODE], &[v, spec_v])?
                };
                if converted {
                    lw.decref(UNICODE, v)?;
                }
                out
            }
        };
        acc = Some(match acc {
            None => part,
            Some(prev) => {
                let s = Signature {
                    ret: UNICODE,
                    args: vec![UNICODE, UNICODE],
                    key: ImplKey::BinOp(numba_ir::BinOp::Add),
                };
                let joined = lw.call_impl(&s, &[prev, part])?;
                lw.decref(UNICODE, prev)?;
                lw.decref(UNICODE, part)?;
                joined
            }
        });
    }
    match acc {
        Some(v) => Ok(v),
        None => lw.unicode_constant(""),
    }
}
