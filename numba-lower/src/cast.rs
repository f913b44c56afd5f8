//! Conversions between types: the lowering half of numba-typeinfer's conversion table
//! (Numba's `context.cast`), and Python truthiness.

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use numba_typeinfer::types::*;

use crate::function::FnLower;
use crate::model::{lowered, members, value_type};
use crate::{llvm_err, R};

impl<'ctx> FnLower<'ctx, '_> {
    /// Python truthiness as an `i1`.
    pub fn truth(&mut self, v: BasicValueEnum<'ctx>, t: TypeId) -> R<IntValue<'ctx>> {
        match t.get() {
            Type::NoneType => Ok(self.ctx.bool_type().const_zero()),
            Type::List { .. } => crate::impls::lists::truth(self, v),
            Type::Set { .. } => crate::impls::sets::truth(self, v),
            Type::Dict { .. } => crate::impls::dicts::truth(self, v),
            Type::Unicode | Type::Bytes => {
                let n = self
                    .b
                    .build_extract_value(
                        v.into_struct_value(),
                        crate::model::unicode::field::LENGTH,
                        "",
                    )
                    .map_err(llvm_err)?
                    .into_int_value();
                Ok(self
                    .b
                    .build_int_compare(inkwell::IntPredicate::NE, n, n.get_type().const_zero(), "")
                    .map_err(llvm_err)?)
            }
            Type::Optional(x) => {
                // None is false; otherwise the value's truth.
                let sv = v.into_struct_value();
                let valid = self
                    .b
                    .build_extract_value(sv, 0, "")
                    .map_err(llvm_err)?
                    .into_int_value();
                let inner = self.b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
                let it = self.truth(inner, lowered(x))?;
                Ok(self.b.build_and(valid, it, "").map_err(llvm_err)?)
            }
            Type::Complex { .. } => {
                let sv = v.into_struct_value();
                let re = self.b.build_extract_value(sv, 0, "").map_err(llvm_err)?;
                let im = self.b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
                let part = |s: &Self, x: BasicValueEnum<'ctx>| {
                    let f = x.into_float_value();
                    s.b.build_float_compare(FloatPredicate::UNE, f, f.get_type().const_zero(), "")
                        .map_err(llvm_err)
                };
                let a = part(self, re)?;
                let b = part(self, im)?;
                Ok(self.b.build_or(a, b, "").map_err(llvm_err)?)
            }
            // A character-array item is true when it holds a character: NumPy strips
            // only trailing NULs, so any nonzero code unit.
            Type::CharSeq(_) | Type::UnicodeCharSeq(_) => {
                let arr = v.into_array_value();
                let mut any = self.ctx.bool_type().const_zero();
                for i in 0..arr.get_type().len() {
                    let u = self
                        .b
                        .build_extract_value(arr, i, "")
                        .map_err(llvm_err)?
                        .into_int_value();
                    let nz = self
                        .b
                        .build_int_compare(
                            inkwell::IntPredicate::NE,
                            u,
                            u.get_type().const_zero(),
                            "",
                        )
                        .map_err(llvm_err)?;
                    any = self.b.build_or(any, nz, "").map_err(llvm_err)?;
                }
                Ok(any)
            }
            Type::UniTuple(..) | Type::Tuple(_) => Ok(self
                .ctx
                .bool_type()
                .const_int(u64::from(!members(t).is_empty()), false)),
            _ => Ok(self.cast(v, t, BOOLEAN)?.into_int_value()),
        }
    }

    /// Convert `v` from type `from` to type `to`.
    pub fn cast(
        &mut self,
        v: BasicValueEnum<'ctx>,
        from: TypeId,
        to: TypeId,
    ) -> R<BasicValueEnum<'ctx>> {
        let (from, to) = (lowered(from), lowered(to));
        if from == to {
            return Ok(v);
        }
        // A user's type converted implicitly (`can_convert_to`): the host's `lower_cast`.
        if matches!(from.get(), Type::Opaque { .. }) && !matches!(to.get(), Type::Optional(_)) {
            let sig = numba_typeinfer::Signature {
                ret: to,
                args: vec![from],
                key: numba_typeinfer::ImplKey::Function(
                    numba_typeinfer::extension::CAST_KEY.into(),
                ),
            };
            return crate::external::call_external(self, &sig, &[v]);
        }
        // A datetime64 / timedelta64 in another unit.
        if matches!(
            (from.get(), to.get()),
            (Type::NPDatetime(_), Type::NPDatetime(_))
                | (Type::NPTimedelta(_), Type::NPTimedelta(_))
        ) {
            let v = crate::impls::npdatetime::convert_unit(self, v.into_int_value(), from, to)?;
            return Ok(v.into());
        }
        // A datetime64 / timedelta64's count as an integer (`a.astype(np.int64)`), and
        // back.
        if numba_typeinfer::npdatetime::is_datetime_like(from) && to.is_integer() {
            return self.cast(v, INT64, to);
        }
        // A slice of constants made a slice value: its bounds with the defaults filled in
        // as `slice(...)` fills them.
        if let (Type::SliceLiteral(a, b, c), Type::Slice(_)) = (from.get(), to.get()) {
            let step = c.unwrap_or(1);
            let (start, stop) = if step > 0 {
                (a.unwrap_or(0), b.unwrap_or(i64::MAX))
            } else {
                (a.unwrap_or(i64::MAX), b.unwrap_or(i64::MIN))
            };
            let i64t = self.ctx.i64_type();
            let vals = [start, stop, step].map(|x| i64t.const_int(x as u64, true).into());
            return self.make_struct(to, &vals);
        }
        // A reflected list kept as a plain list (stored in a jitclass field, say): a copy
        // of its items, as the Python list it reflects to lives only for the call. The
        // new list is the statement's temporary (`FnLower::temps`).
        if let (
            Type::List {
                dtype: a,
                reflected: true,
                typed: false,
            },
            Type::List {
                dtype: b,
                reflected: false,
                typed: false,
            },
        ) = (from.get(), to.get())
        {
            if a == b && a != UNDEFINED {
                let copy = self.list_copy(v)?;
                self.temps.push((to, copy));
                return Ok(copy);
            }
        }
        // Lists of one item type share their layout (reflected or not).
        if let (Type::List { dtype: a, .. }, Type::List { dtype: b, .. })
        | (Type::Set { dtype: a, .. }, Type::Set { dtype: b, .. }) = (from.get(), to.get())
        {
            if a == b || a == UNDEFINED {
                return Ok(v);
            }
        }
        // A literal string becomes a value: a constant in the module.
        if let (Type::StringLiteral(s), Type::Unicode) = (from.get(), to.get()) {
            return self.unicode_constant(&s);
        }
        // Character-array items and the strings they hold.
        if let Some(v) = self.cast_charseq(v, from, to)? {
            return Ok(v);
        }
        let target = value_type(self.ctx, to)?;
        let b = &self.b;
        Ok(match (from.get(), to.get(), target) {
            // C pointers: an array's `.ctypes`, a typed pointer or a function pointer
            // passed as `void*` or a typed pointer is the same address.
            (
                Type::ArrayCTypes(_)
                | Type::CPointer(_)
                | Type::VoidPtr
                | Type::ExternalFunctionPointer { .. },
                Type::VoidPtr | Type::CPointer(_),
                _,
            ) => v,
            (Type::Integer { .. }, Type::VoidPtr | Type::CPointer(_), _) => b
                .build_int_to_ptr(
                    v.into_int_value(),
                    self.ctx.ptr_type(inkwell::AddressSpace::default()),
                    "",
                )
                .map_err(llvm_err)?
                .into(),
            (
                Type::VoidPtr | Type::CPointer(_) | Type::ArrayCTypes(_),
                Type::Integer { .. },
                BasicTypeEnum::IntType(it),
            ) => b
                .build_ptr_to_int(v.into_pointer_value(), it, "")
                .map_err(llvm_err)?
                .into(),
            (Type::Boolean, Type::Integer { .. }, BasicTypeEnum::IntType(it)) => b
                .build_int_z_extend(v.into_int_value(), it, "")
                .map_err(llvm_err)?
                .into(),
            (Type::Boolean, Type::Float { .. }, BasicTypeEnum::FloatType(ft)) => b
                .build_unsigned_int_to_float(v.into_int_value(), ft, "")
                .map_err(llvm_err)?
                .into(),
            (Type::Integer { .. }, Type::Boolean, _) => {
                let iv = v.into_int_value();
                b.build_int_compare(IntPredicate::NE, iv, iv.get_type().const_zero(), "")
                    .map_err(llvm_err)?
                    .into()
            }
            (Type::Float { .. }, Type::Boolean, _) => {
                let fv = v.into_float_value();
                b.build_float_compare(FloatPredicate::UNE, fv, fv.get_type().const_zero(), "")
                    .map_err(llvm_err)?
                    .into()
            }
            (
                Type::Integer { bits: fb, signed },
                Type::Integer { bits: tb, .. },
                BasicTypeEnum::IntType(it),
            ) => {
                let iv = v.into_int_value();
                if tb < fb {
                    b.build_int_truncate(iv, it, "").map_err(llvm_err)?.into()
                } else if tb == fb {
                    iv.into()
                } else if signed {
                    b.build_int_s_extend(iv, it, "").map_err(llvm_err)?.into()
                } else {
                    b.build_int_z_extend(iv, it, "").map_err(llvm_err)?.into()
                }
            }
            (Type::Integer { signed, .. }, Type::Float { .. }, BasicTypeEnum::FloatType(ft)) => {
                if signed {
                    b.build_signed_int_to_float(v.into_int_value(), ft, "")
                } else {
                    b.build_unsigned_int_to_float(v.into_int_value(), ft, "")
                }
                .map_err(llvm_err)?
                .into()
            }
            (Type::Float { .. }, Type::Integer { signed, .. }, BasicTypeEnum::IntType(it)) => {
                if signed {
                    b.build_float_to_signed_int(v.into_float_value(), it, "")
                } else {
                    b.build_float_to_unsigned_int(v.into_float_value(), it, "")
                }
                .map_err(llvm_err)?
                .into()
            }
            (Type::Float { .. }, Type::Float { .. }, BasicTypeEnum::FloatType(ft)) => b
                .build_float_cast(v.into_float_value(), ft, "")
                .map_err(llvm_err)?
                .into(),
            (
                Type::Boolean | Type::Integer { .. } | Type::Float { .. },
                Type::Complex { .. },
                BasicTypeEnum::StructType(st),
            ) => {
                let part = crate::model::complex_part(to);
                let re = self.cast(v, from, part)?;
                let ft = value_type(self.ctx, part)?.into_float_type();
                let agg = self
                    .b
                    .build_insert_value(st.get_undef(), re, 0, "")
                    .map_err(llvm_err)?;
                self.b
                    .build_insert_value(agg, ft.const_zero(), 1, "")
                    .map_err(llvm_err)?
                    .into_struct_value()
                    .into()
            }
            (Type::Complex { .. }, Type::Complex { .. }, BasicTypeEnum::StructType(st)) => {
                let sv = v.into_struct_value();
                let ft = value_type(self.ctx, crate::model::complex_part(to))?.into_float_type();
                let mut agg = st.get_undef();
                for i in 0..2 {
                    let p = self.b.build_extract_value(sv, i, "").map_err(llvm_err)?;
                    let p = self
                        .b
                        .build_float_cast(p.into_float_value(), ft, "")
                        .map_err(llvm_err)?;
                    agg = self
                        .b
                        .build_insert_value(agg, p, i, "")
                        .map_err(llvm_err)?
                        .into_struct_value();
                }
                agg.into()
            }
            (Type::Complex { .. }, Type::Boolean, _) => self.truth(v, from)?.into(),
            // An enum member is its integer value.
            (
                Type::EnumMember { .. },
                Type::Integer { .. } | Type::Float { .. } | Type::Boolean,
                _,
            ) => return self.cast(v, INT64, to),
            (Type::NoneType, Type::Optional(_), BasicTypeEnum::StructType(st)) => self
                .b
                .build_insert_value(st.get_undef(), self.ctx.bool_type().const_zero(), 0, "")
                .map_err(llvm_err)?
                .into_struct_value()
                .into(),
            (Type::Optional(a), Type::Optional(bt), BasicTypeEnum::StructType(st)) => {
                // Convert the payload; the flag is kept.
                let sv = v.into_struct_value();
                let flag = self.b.build_extract_value(sv, 0, "").map_err(llvm_err)?;
                let x = self.b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
                let x = self.cast(x, a, bt)?;
                let agg = self
                    .b
                    .build_insert_value(st.get_undef(), flag, 0, "")
                    .map_err(llvm_err)?;
                self.b
                    .build_insert_value(agg, x, 1, "")
                    .map_err(llvm_err)?
                    .into_struct_value()
                    .into()
            }
            (Type::Optional(a), _, _) => {
                // Using an optional as its value: None is a TypeError, as in Numba.
                let sv = v.into_struct_value();
                let flag = self
                    .b
                    .build_extract_value(sv, 0, "")
                    .map_err(llvm_err)?
                    .into_int_value();
                let none = self.b.build_not(flag, "").map_err(llvm_err)?;
                let msg = format!("expected {a}, got None");
                self.raise_const_if(none, "TypeError", &[&msg])?;
                let x = self.b.build_extract_value(sv, 1, "").map_err(llvm_err)?;
                self.cast(x, a, to)?
            }
            (_, Type::Optional(bt), BasicTypeEnum::StructType(st)) => {
                let x = self.cast(v, from, bt)?;
                let agg = self
                    .b
                    .build_insert_value(
                        st.get_undef(),
                        self.ctx.bool_type().const_int(1, false),
                        0,
                        "",
                    )
                    .map_err(llvm_err)?;
                self.b
                    .build_insert_value(agg, x, 1, "")
                    .map_err(llvm_err)?
                    .into_struct_value()
                    .into()
            }
            // Tuples item by item; literal dicts (unified across branches) the same.
            (
                Type::UniTuple(..)
                | Type::Tuple(_)
                | Type::NamedTuple { .. }
                | Type::NamedUniTuple { .. },
                Type::UniTuple(..)
                | Type::Tuple(_)
                | Type::NamedTuple { .. }
                | Type::NamedUniTuple { .. },
                BasicTypeEnum::StructType(st),
            )
            | (
                Type::LiteralStrKeyDict { .. },
                Type::LiteralStrKeyDict { .. },
                BasicTypeEnum::StructType(st),
            ) if members(from).len() == members(to).len() => {
                let (fe, te) = (members(from), members(to));
                let sv = v.into_struct_value();
                let mut out = st.get_undef();
                for (i, (&f, &t)) in fe.iter().zip(&te).enumerate() {
                    let e = self
                        .b
                        .build_extract_value(sv, i as u32, "")
                        .map_err(llvm_err)?;
                    let e = self.cast(e, f, t)?;
                    out = self
                        .b
                        .build_insert_value(out, e, i as u32, "")
                        .map_err(llvm_err)?
                        .into_struct_value();
                }
                out.into()
            }
            // An array seen with a laxer layout or as readonly (`C` or `F` where the
            // variable is `A`): the same struct, the same reference.
            (
                Type::Array {
                    dtype: d1,
                    ndim: n1,
                    ..
                },
                Type::Array {
                    dtype: d2,
                    ndim: n2,
                    ..
                },
                _,
            ) if d1 == d2 && n1 == n2 => v,
            // Between types without data (a literal string and its kind, modules...).
            (_, _, BasicTypeEnum::StructType(st)) if st.count_fields() == 0 => self.ghost(),
            _ => return Err(self.unsupported(format!("cannot convert {from} to {to}"))),
        })
    }
}
