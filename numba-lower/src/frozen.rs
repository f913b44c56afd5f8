//! Values frozen into the code at compile time: global arrays and tuples holding them
//! (Numba's `make_constant_array`, `constant_array`).
//!
//! A global array's elements become a private LLVM constant (aligned for its dtype); past
//! Numba's size limit the code instead points at the captured bytes, which the compiled
//! function keeps (Numba reads such arrays in place, without a copy). The array struct is a
//! constant: null MemInfo (so `NRT_incref`/`NRT_decref` do nothing), null parent, shape and
//! strides of the capture. Typing makes such an array
//! readonly, so compiled code never writes into the constant. Later changes to the Python
//! global are not seen: the capture is the value at compile time, as in Numba.

use inkwell::module::Linkage;
use inkwell::values::{BasicValue, BasicValueEnum, PointerValue};
use inkwell::AddressSpace;
use numba_ir::{ConstArray, GlobalKind};
use numba_typeinfer::context::{typeof_const_array, typeof_global_value};
use numba_typeinfer::types::*;

use crate::function::FnLower;
use crate::model::array::array_struct;
use crate::model::lowered;
use crate::{FREEZE_IN_MODULE_LIMIT, R};

/// The ABI alignment of an element of `dtype` (a complex number aligns as its parts).
fn element_align(dtype: TypeId) -> u32 {
    match dtype.get() {
        Type::Integer { bits, .. } | Type::Float { bits } => u32::from(bits / 8).max(1),
        Type::Complex { bits } => u32::from(bits / 16).max(1),
        Type::NPDatetime(_) | Type::NPTimedelta(_) => 8,
        _ => 1,
    }
}

impl<'ctx> FnLower<'ctx, '_> {
    /// The value of a global frozen into the code: a constant, an array, or a tuple of
    /// these, with the type typing gave it.
    pub fn frozen_global(&mut self, kind: &GlobalKind) -> R<(BasicValueEnum<'ctx>, TypeId)> {
        match kind {
            GlobalKind::Const(c) => self.constant(c),
            GlobalKind::Array(a) => self.const_array(a),
            GlobalKind::Scalar(a) => self.const_scalar(a),
            GlobalKind::Tuple(items) => {
                let t = match typeof_global_value(kind) {
                    Some(Ok(t)) => lowered(t),
                    Some(Err(m)) => return Err(self.unsupported(m)),
                    None => return Err(self.unsupported("this global cannot be frozen")),
                };
                let item_types = numba_typeinfer::conv::tuple_items(t)
                    .ok_or_else(|| self.unsupported(format!("{t} is not a tuple type")))?;
                let mut vals = Vec::with_capacity(items.len());
                for (item, &to) in items.iter().zip(&item_types) {
                    let (v, from) = self.frozen_global(item)?;
                    vals.push(self.cast(v, from, to)?);
                }
                Ok((self.make_struct(t, &vals)?, t))
            }
            // A slice of constants: its type is its value.
            GlobalKind::Slice(a, b, c) => {
                Ok((self.ghost(), intern(Type::SliceLiteral(*a, *b, *c))))
            }
            // A jitted function held in a frozen tuple: a value without data.
            GlobalKind::Dispatcher { id, name } => Ok((
                self.ghost(),
                intern(Type::Dispatcher {
                    id: *id,
                    name: name.clone(),
                }),
            )),
            _ => Err(self.unsupported("this global cannot be frozen into the code")),
        }
    }

    /// A NumPy scalar global: its bytes read as the Python number of the same value, then
    /// converted to the scalar's own dtype (exact: every dtype's values fit the number).
    fn const_scalar(&mut self, a: &ConstArray) -> R<(BasicValueEnum<'ctx>, TypeId)> {
        let t =
            numba_typeinfer::context::typeof_const_scalar(a).map_err(|m| self.unsupported(m))?;
        let bytes = &a.data[..];
        let word = |n: usize| -> u64 {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(&bytes[..n]);
            u64::from_le_bytes(w)
        };
        // A datetime64 / timedelta64: its int64 count, of its own type.
        if numba_typeinfer::npdatetime::is_datetime_like(t) {
            let v = self.ctx.i64_type().const_int(word(8), false);
            return Ok((v.into(), t));
        }
        let c = match t.get() {
            Type::Boolean => numba_bytecode::Constant::Bool(bytes.first().is_some_and(|&b| b != 0)),
            Type::Integer { bits, signed } => {
                let n = usize::from(bits / 8);
                let raw = word(n);
                let shift = 64 - u32::from(bits);
                // Sign-extend signed values; uint64 keeps its bits (the cast to uint64 below
                // reads them back).
                let v = if signed && shift > 0 {
                    ((raw << shift) as i64) >> shift
                } else {
                    raw as i64
                };
                numba_bytecode::Constant::Int(v)
            }
            Type::Float { bits: 32 } => {
                numba_bytecode::Constant::Float(f64::from(f32::from_bits(word(4) as u32)))
            }
            Type::Float { .. } => numba_bytecode::Constant::Float(f64::from_bits(word(8))),
            Type::Complex { bits: 64 } => {
                let re = f32::from_bits(word(4) as u32);
                let im =
                    f32::from_bits(u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]));
                numba_bytecode::Constant::Complex(f64::from(re), f64::from(im))
            }
            Type::Complex { .. } => {
                let mut im = [0u8; 8];
                im.copy_from_slice(&bytes[8..16]);
                numba_bytecode::Constant::Complex(f64::from_bits(word(8)), f64::from_le_bytes(im))
            }
            _ => return Err(self.unsupported(format!("a global NumPy scalar of type {t}"))),
        };
        let (v, from) = self.constant(&c)?;
        Ok((self.cast(v, from, t)?, t))
    }

    /// The array struct of a global array: its data a private constant in the module (one
    /// per capture and function) or, past [`FREEZE_IN_MODULE_LIMIT`] bytes, the capture
    /// itself; no MemInfo, no parent.
    fn const_array(&mut self, a: &ConstArray) -> R<(BasicValueEnum<'ctx>, TypeId)> {
        let t = typeof_const_array(a).map_err(|m| self.unsupported(m))?;
        let dtype = match t.get() {
            Type::Array { dtype, .. } => dtype,
            _ => return Err(self.unsupported(format!("{t} is not an array type"))),
        };
        let i64t = self.ctx.i64_type();
        let ptr_t = self.ctx.ptr_type(AddressSpace::default());
        let align = element_align(dtype);
        let key = a.data.as_ptr() as usize;
        let data: PointerValue<'ctx> =
            if a.data.len() > FREEZE_IN_MODULE_LIMIT && key.is_multiple_of(align as usize) {
                // Too large for the module: the code reads the capture where it is, and the
                // compiled function keeps it.
                if !self.frozen_data.iter().any(|d| d.as_ptr() as usize == key) {
                    self.frozen_data.push(a.data.clone());
                }
                i64t.const_int(key as u64, false).const_to_pointer(ptr_t)
            } else if let Some(g) = self.frozen.get(&key) {
                g.as_pointer_value()
            } else {
                let bytes = self.ctx.const_string(&a.data, false);
                let name = format!(".const.array.data.{}", self.frozen.len());
                let g = self.module.add_global(bytes.get_type(), None, &name);
                g.set_initializer(&bytes);
                g.set_constant(true);
                g.set_linkage(Linkage::Private);
                g.set_unnamed_addr(true);
                g.set_alignment(align);
                self.frozen.insert(key, g);
                g.as_pointer_value()
            };
        let ints = |xs: &[i64]| {
            let vals: Vec<_> = xs.iter().map(|&x| i64t.const_int(x as u64, true)).collect();
            i64t.const_array(&vals)
        };
        let null = ptr_t.const_null();
        let st = array_struct(self.ctx, a.shape.len() as u32);
        let v = st.const_named_struct(&[
            null.into(),
            null.into(),
            i64t.const_int(a.nitems() as u64, true).into(),
            i64t.const_int(a.itemsize as u64, false).into(),
            data.into(),
            ints(&a.shape).into(),
            ints(&a.strides()).into(),
        ]);
        Ok((v.as_basic_value_enum(), t))
    }
}
