//! `bytes` values and NumPy character-array items (`model::charseq`).
//!
//! `bytes` shares `str`'s model with one byte per character, so comparisons, `+`, `*`,
//! `in`, slicing, `len` and `hash` are `str`'s helpers; indexing and iteration give the
//! byte as an integer. Items convert to and from the strings they hold through two
//! run-time helpers (`crate::bytes`): reading keeps the characters before the trailing
//! NULs, storing truncates or pads with NULs, as NumPy does.

use inkwell::values::BasicValueEnum;
use inkwell::AddressSpace;
use numba_ir::BinOp;
use numba_typeinfer::types::*;
use numba_typeinfer::{ImplKey, Signature};

use super::unicode;
use crate::function::FnLower;
use crate::model::{charseq, unicode as umodel, value_type};
use crate::registry::{Args, Registry, TypePat};
use crate::{llvm_err, R};

pub(crate) fn register(r: &mut Registry) {
    let b = TypePat::Exact(BYTES);
    let f = |k: &str| ImplKey::Function(k.into());
    r.register(f("numba_rs._npbuffer.view"), Args::Exact(vec![b]), view);
    r.register(f("len"), Args::Exact(vec![b]), unicode::len);
    for op in [
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ] {
        r.register(
            ImplKey::BinOp(op),
            Args::Exact(vec![b, b]),
            unicode::compare,
        );
    }
    r.register(
        ImplKey::BinOp(BinOp::Add),
        Args::Exact(vec![b, b]),
        unicode::concat,
    );
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![b, b]),
        unicode::contains,
    );
    r.register(
        ImplKey::BinOp(BinOp::In),
        Args::Exact(vec![b, TypePat::Int]),
        |lw, sig, a| {
            // An integer in bytes: that byte value (CPython's ValueError outside 0..256).
            let c = lw.cast(a[1], sig.args[1], INT64)?.into_int_value();
            let i64t = lw.ctx.i64_type();
            let bad =
                lw.b.build_int_compare(
                    inkwell::IntPredicate::UGE,
                    c,
                    i64t.const_int(256, false),
                    "",
                )
                .map_err(llvm_err)?;
            lw.raise_const_if(bad, "ValueError", &["byte must be in range(0, 256)"])?;
            let one = lw.ctx.i8_type();
            let byte = lw.b.build_int_truncate(c, one, "").map_err(llvm_err)?;
            let needle_data = lw.alloca_in_entry(one.into(), "byte")?;
            lw.b.build_store(needle_data, byte).map_err(llvm_err)?;
            let st = umodel::struct_type(lw.ctx);
            let needle = st.const_named_struct(&[
                lw.ctx.ptr_type(AddressSpace::default()).const_null().into(),
                i64t.const_int(1, false).into(),
                lw.ctx.i32_type().const_int(1, false).into(),
                lw.ctx.i32_type().const_zero().into(),
                i64t.const_int(u64::MAX, true).into(),
                lw.ctx.ptr_type(AddressSpace::default()).const_null().into(),
                lw.ctx.ptr_type(AddressSpace::default()).const_null().into(),
            ]);
            let needle =
                lw.b.build_insert_value(needle, needle_data, umodel::field::DATA, "")
                    .map_err(llvm_err)?
                    .into_struct_value();
            let as_bytes = numba_typeinfer::Signature {
                ret: BOOLEAN,
                args: vec![BYTES, BYTES],
                key: sig.key.clone(),
            };
            unicode::contains(lw, &as_bytes, &[a[0], needle.into()])
        },
    );
    for args in [vec![b, TypePat::Int], vec![TypePat::Int, b]] {
        r.register(
            ImplKey::BinOp(BinOp::Mul),
            Args::Exact(args),
            unicode::repeat,
        );
    }
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![b, TypePat::Int]),
        getitem,
    );
    r.register(
        ImplKey::GetItem,
        Args::Exact(vec![
            b,
            TypePat::Pred(|t| matches!(t.get(), Type::Slice(_))),
        ]),
        unicode::getslice,
    );
    r.register(ImplKey::GetIter, Args::Exact(vec![b]), unicode::getiter);
    r.register(
        ImplKey::IterNext,
        Args::Exact(vec![TypePat::Pred(
            |t| matches!(t.get(), Type::ArrayIter(s) if s == BYTES),
        )]),
        iternext,
    );
    r.register(
        ImplKey::Unary(numba_ir::UnaryOp::Not),
        Args::Exact(vec![b]),
        |lw, sig, a| {
            let t = lw.truth(a[0], sig.args[0])?;
            Ok(lw.b.build_not(t, "").map_err(llvm_err)?.into())
        },
    );
    r.register(f("bool"), Args::Exact(vec![b]), |lw, sig, a| {
        Ok(lw.truth(a[0], sig.args[0])?.into())
    });
    r.register(f("bytes"), Args::Exact(vec![b]), |lw, _, a| {
        // A call returns a new reference: the same bytes, one more owner.
        lw.incref(BYTES, a[0])?;
        Ok(a[0])
    });
    r.register(f("hash"), Args::Exact(vec![b]), |lw, _, a| {
        // CPython hashes bytes as it hashes a one-byte-kind string of the same data.
        let p = lw.unicode_slot(a[0])?;
        let i64t = lw.ctx.i64_type();
        let ptr = lw.ctx.ptr_type(AddressSpace::default());
        let func = lw.runtime_fn("numba_rs_str_hash", i64t.fn_type(&[ptr.into()], false));
        lw.call_value(func, &[p.into()])
    });
}

/// `b[i]`: the byte as an integer; IndexError out of range.
fn getitem<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &numba_typeinfer::Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let i = lw.cast(a[1], sig.args[1], INT64)?;
    let s = lw.unicode_slot(a[0])?;
    let i64t = lw.ctx.i64_type();
    let ptr = lw.ctx.ptr_type(AddressSpace::default());
    let f = lw.runtime_fn(
        "numba_rs_bytes_getitem",
        i64t.fn_type(&[ptr.into(), i64t.into()], false),
    );
    let c = lw.call_value(f, &[s.into(), i.into()])?.into_int_value();
    let outside =
        lw.b.build_int_compare(inkwell::IntPredicate::SLT, c, i64t.const_zero(), "")
            .map_err(llvm_err)?;
    lw.raise_const_if(outside, "IndexError", &["index out of range"])?;
    lw.cast(c.into(), INT64, sig.ret)
}

/// The next byte of an iterated `bytes`, as an integer.
fn iternext<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &numba_typeinfer::Signature,
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
    let s =
        lw.b.build_load(umodel::struct_type(lw.ctx), ps, "")
            .map_err(llvm_err)?
            .into_struct_value();
    let idx =
        lw.b.build_load(i64t, pi, "")
            .map_err(llvm_err)?
            .into_int_value();
    let n =
        lw.b.build_extract_value(s, umodel::field::LENGTH, "")
            .map_err(llvm_err)?
            .into_int_value();
    let valid =
        lw.b.build_int_compare(inkwell::IntPredicate::SLT, idx, n, "")
            .map_err(llvm_err)?;
    let next =
        lw.b.build_int_add(idx, i64t.const_int(1, false), "")
            .map_err(llvm_err)?;
    lw.b.build_store(pi, next).map_err(llvm_err)?;
    let data =
        lw.b.build_extract_value(s, umodel::field::DATA, "")
            .map_err(llvm_err)?
            .into_pointer_value();
    // SAFETY (of the generated code): `idx <= length`; past the end the byte read is the
    // terminating NUL, never used.
    let at = unsafe {
        lw.b.build_in_bounds_gep(lw.ctx.i8_type(), data, &[idx], "")
            .map_err(llvm_err)?
    };
    let byte =
        lw.b.build_load(lw.ctx.i8_type(), at, "")
            .map_err(llvm_err)?;
    lw.make_struct(sig.ret, &[byte, valid.into()])
}

impl<'ctx> FnLower<'ctx, '_> {
    /// A `bytes` constant: its data a private global of the module, as string literals.
    pub fn bytes_constant(&self, data: &[u8]) -> R<BasicValueEnum<'ctx>> {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        data.hash(&mut h);
        let name = format!("numba_rs.bytes.{:016x}", h.finish());
        let global = match self.module.get_global(&name) {
            Some(g) => g,
            None => {
                let init = self.ctx.const_string(data, true);
                let g = self.module.add_global(init.get_type(), None, &name);
                g.set_initializer(&init);
                g.set_constant(true);
                g.set_linkage(inkwell::module::Linkage::Private);
                g.set_unnamed_addr(true);
                g
            }
        };
        let (i64t, i32t) = (self.ctx.i64_type(), self.ctx.i32_type());
        let null = self.ctx.ptr_type(AddressSpace::default()).const_null();
        Ok(umodel::struct_type(self.ctx)
            .const_named_struct(&[
                global.as_pointer_value().into(),
                i64t.const_int(data.len() as u64, false).into(),
                i32t.const_int(1, false).into(),
                i32t.const_int(u64::from(data.is_ascii()), false).into(),
                i64t.const_int(u64::MAX, true).into(),
                null.into(),
                null.into(),
            ])
            .into())
    }

    /// Conversions between character-array items and strings (`from` or `to` an item
    /// type); `None` for other pairs.
    pub(crate) fn cast_charseq(
        &mut self,
        v: BasicValueEnum<'ctx>,
        from: TypeId,
        to: TypeId,
    ) -> R<Option<BasicValueEnum<'ctx>>> {
        let ptr = self.ctx.ptr_type(AddressSpace::default());
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        if let Some((n, width)) = charseq::units(from) {
            // The string the item holds, then whatever that string converts to.
            let text = if width == 1 { BYTES } else { UNICODE };
            let item = self.alloca_in_entry(value_type(self.ctx, from)?, "charseq")?;
            self.b.build_store(item, v).map_err(llvm_err)?;
            let s = unicode::new_string(
                self,
                "numba_rs_charseq_to_str",
                &[
                    item.into(),
                    i64t.const_int(u64::from(n), false).into(),
                    i32t.const_int(u64::from(width), false).into(),
                ],
                false,
            )?;
            // The new string is the statement's temporary (`FnLower::temps`).
            self.temps.push((text, s));
            return Ok(Some(self.cast(s, text, to)?));
        }
        let Some((n, width)) = charseq::units(to) else {
            return Ok(None);
        };
        let s = match from.get() {
            Type::Unicode | Type::Bytes => v,
            Type::StringLiteral(text) => self.unicode_constant(&text)?,
            _ => return Ok(None),
        };
        let slot = self.unicode_slot(s)?;
        let item_t = value_type(self.ctx, to)?;
        let item = self.alloca_in_entry(item_t, "charseq")?;
        let f = self.runtime_fn(
            "numba_rs_charseq_from_str",
            self.ctx
                .void_type()
                .fn_type(&[ptr.into(), ptr.into(), i64t.into(), i32t.into()], false),
        );
        self.b
            .build_call(
                f,
                &[
                    slot.into(),
                    item.into(),
                    i64t.const_int(u64::from(n), false).into(),
                    i32t.const_int(u64::from(width), false).into(),
                ],
                "",
            )
            .map_err(llvm_err)?;
        Ok(Some(self.b.build_load(item_t, item, "").map_err(llvm_err)?))
    }
}

/// `numba_rs._npbuffer.view(b)`: the bytes' memory as a read-only `uint8` array sharing
/// their owner (the MemInfo, taking a reference, or the Python object a `bytes` argument
/// is, which a returned view keeps alive as its base).
fn view<'ctx>(
    lw: &mut FnLower<'ctx, '_>,
    sig: &Signature,
    a: &[BasicValueEnum<'ctx>],
) -> R<BasicValueEnum<'ctx>> {
    let sv = a[0].into_struct_value();
    let get =
        |lw: &FnLower<'ctx, '_>, k: u32| lw.b.build_extract_value(sv, k, "").map_err(llvm_err);
    let data = get(lw, umodel::field::DATA)?;
    let len = get(lw, umodel::field::LENGTH)?;
    let meminfo = get(lw, umodel::field::MEMINFO)?;
    let parent = get(lw, umodel::field::PARENT)?;
    let one = lw.ctx.i64_type().const_int(1, false);
    let i64a = lw.ctx.i64_type().array_type(1);
    let shape =
        lw.b.build_insert_value(i64a.get_undef(), len, 0, "")
            .map_err(llvm_err)?
            .into_array_value();
    let strides =
        lw.b.build_insert_value(i64a.get_undef(), one, 0, "")
            .map_err(llvm_err)?
            .into_array_value();
    let out = lw.make_struct(
        sig.ret,
        &[
            meminfo,
            parent,
            len,
            one.into(),
            data,
            shape.into(),
            strides.into(),
        ],
    )?;
    lw.incref(sig.ret, out)?;
    Ok(out)
}
