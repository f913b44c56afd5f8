//! The calling convention: Numba's native signature and status codes (numba-facts §5), the
//! exception-info protocol, and the one codec for every value crossing the CPython boundary.
//!
//! Native functions are `i32 fn(ret*, excinfo**, args...)`: arguments in their register
//! form, the result stored through `ret` in its memory form, a status returned. Callers
//! without LLVM (numba-py, Rust tests) use the uniform entry wrapper
//! `i32 entry(u64* ret, ExcInfo** excinfo, const u64* args)`, whose arguments and result
//! are flattened into 8-byte slots by the data models, as described by a [`Shape`]. numba-py
//! encodes and decodes Python objects from the same shapes, so there is one codec.

use std::ffi::{c_char, CStr};

use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{BasicMetadataTypeEnum, FunctionType};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue};
use inkwell::AddressSpace;
use numba_typeinfer::types::*;

use crate::model::{memory_type, model_of, value_type, SlotCodec};
use crate::{llvm_err, LowerError, R};

/// A value was returned.
pub const STATUS_OK: i32 = 0;
/// A Python exception is already set (object mode; unused in nopython code so far).
pub const STATUS_EXC: i32 = -1;
/// "Returned None" (Numba's `RETCODE_NONE`).
pub const STATUS_NONE: i32 = -2;
/// `StopIteration` (exhausted generators).
pub const STATUS_STOPIT: i32 = -3;
/// A user exception; its description is stored through `excinfo` (any code ≥ 1).
pub const STATUS_USER_EXC: i32 = 1;

/// The exception-info record a failing native function stores through `excinfo`.
///
/// Static raises point at constant data. A raise with runtime arguments allocates the
/// record and its argument slots in one block with `NRT_Allocate` and sets `dynamic`; the
/// reader frees it ([`ExcInfo::take`]).
#[repr(C)]
#[derive(Debug)]
pub struct ExcInfo {
    /// The class key: a builtin name (`ValueError`) or `module.qualname` of a user class.
    pub class: *const c_char,
    /// Number of constructor arguments.
    pub nargs: u64,
    /// Their typecodes (literal types carry their value: `Literal[str](bad)`).
    pub arg_types: *const u32,
    /// Their values as boundary slots, in order.
    pub args: *const u64,
    /// Number of slots in `args`.
    pub nslots: u64,
    /// 1 when the record was allocated at run time and must be freed by the reader.
    pub dynamic: u64,
    /// The raising function's qualified name and line, for the traceback.
    pub func: *const c_char,
    pub line: u64,
}

/// The LLVM layout of [`ExcInfo`].
pub fn excinfo_type(ctx: &Context) -> inkwell::types::StructType<'_> {
    let p = ctx.ptr_type(AddressSpace::default()).into();
    let i = ctx.i64_type().into();
    ctx.struct_type(&[p, i, p, p, i, i, p, i], false)
}

/// An exception read back from an [`ExcInfo`].
#[derive(Debug, Clone, PartialEq)]
pub struct RaisedException {
    pub class: String,
    pub arg_types: Vec<TypeId>,
    pub slots: Vec<u64>,
    pub func: String,
    pub line: u32,
}

impl ExcInfo {
    /// Read (and, when dynamic, free) the record a native function stored.
    ///
    /// # Safety
    /// `ptr` must be null or an `ExcInfo` stored by code this crate generated, not read
    /// before.
    pub unsafe fn take(ptr: *const ExcInfo) -> RaisedException {
        if ptr.is_null() {
            return RaisedException {
                class: "SystemError".into(),
                arg_types: vec![],
                slots: vec![],
                func: String::new(),
                line: 0,
            };
        }
        // SAFETY: per the contract, ptr is a generated record whose pointers are valid for
        // the lengths it states.
        unsafe {
            let info = &*ptr;
            let s = |p: *const c_char| {
                if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            let arg_types = (0..info.nargs as usize)
                .map(|i| TypeId(*info.arg_types.add(i)))
                .collect();
            let slots = (0..info.nslots as usize)
                .map(|i| *info.args.add(i))
                .collect();
            let out = RaisedException {
                class: s(info.class),
                arg_types,
                slots,
                func: s(info.func),
                line: info.line as u32,
            };
            if info.dynamic != 0 {
                numba_nrt::NRT_Free(ptr as *mut u8);
            }
            out
        }
    }
}

/// The uniform entry point of a compiled specialisation (see the module docs).
pub type EntryFn =
    unsafe extern "C" fn(ret: *mut u64, excinfo: *mut *const ExcInfo, args: *const u64) -> i32;

/// One boundary slot's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf {
    /// 0 or 1.
    Bool,
    /// Sign- or zero-extended to 64 bits.
    Int { bits: u8, signed: bool },
    /// A float64's bits (float32 values are widened).
    Float,
}

/// How a value of some type is laid out in boundary slots.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// One slot; the type says which Python scalar to build.
    Leaf(Leaf, TypeId),
    /// Two float slots (real, imag) of a complex type.
    Complex(TypeId),
    /// A tuple of the items' slots, in order.
    Tuple(Vec<Shape>),
    /// A namedtuple: `class` is the Python class's `module.qualname`.
    Named { class: String, items: Vec<Shape> },
    /// A flag slot (1 = a value follows) and the value's slots.
    Optional(Box<Shape>),
    /// A value of a user's type (`model::user`): its members' slots, in order (none for
    /// an opaque type). The host's unbox code fills them from the Python object and its
    /// box code makes the object from them (`crate::boxing`); a result's references stay
    /// the receiver's, released after boxing.
    Boxed { t: TypeId, items: Vec<Shape> },
    /// `None`: no slots.
    None,
    /// A literal type whose value is known: no slots.
    Literal(TypeId),
    /// An enum member: its value in one slot; the key of its class.
    Enum(String),
    /// A NumPy array of this type: Numba's array struct, one slot per field
    /// (`5 + 2 * ndim`).
    Array(TypeId),
    /// A generator object: one slot holding its address (see `model::generator`).
    Generator(TypeId),
    /// A `slice`: start, stop, step with Numba's defaults for the missing bounds (start
    /// 0 or `i64::MAX`, stop `i64::MAX` or `i64::MIN` by the step's sign; step 1).
    Slice,
    /// A Python object (object mode): one slot holding its `PyObject*`, borrowed in
    /// arguments, a new reference in results.
    Object,
    /// A `str` (`model::unicode`): data, length, kind, is_ascii, hash, MemInfo and
    /// parent, one slot each. An argument borrows the Python string's data (null
    /// MemInfo, the object as parent); a result's MemInfo reference (if any) goes to the
    /// receiver, which releases it once it has made its `str`.
    Unicode,
    /// `bytes`: `Unicode`'s seven slots over one byte per character; an argument borrows
    /// the Python object's buffer, a result becomes a new `bytes`.
    Bytes,
    /// A list (`model::list`): its MemInfo and its Python list (null when none), one
    /// slot each; its items are stored in `item`'s slot form. An argument is a new
    /// list the receiver releases after the call (writing a reflected list's changes
    /// back first); a result's reference goes to the receiver.
    List {
        item: Box<Shape>,
        dtype: TypeId,
        reflected: bool,
        /// A `typed.List` (`ListType[T]`): it crosses by reference, as a typed dict does
        /// (an argument is the object's MemInfo with a reference for the call; a result
        /// becomes a `typed.List` around the MemInfo).
        typed: bool,
    },
    /// A set (`model::list`'s layout, `crate::sets`'s payload): as a list.
    Set {
        item: Box<Shape>,
        dtype: TypeId,
        reflected: bool,
    },
    /// A typed dict (`model::list`'s layout, `crate::dicts`'s payload): its MemInfo and a
    /// null slot; keys and values stored in `key`'s and `value`'s slot forms. It
    /// crosses by reference: an argument borrows the `typed.Dict`'s MemInfo, a result's
    /// reference goes to the `typed.Dict` the receiver makes.
    Dict {
        key: Box<Shape>,
        value: Box<Shape>,
        dict: TypeId,
    },
    /// A jitclass instance of this type (`model::list`'s layout: its MemInfo and a null
    /// slot; the record of its fields in the payload). It crosses by reference, as a
    /// typed dict does: an argument borrows the proxy's MemInfo, a result's reference
    /// goes to the proxy the receiver makes.
    Instance(TypeId),
    /// A record (`model::record`): one slot, the address of its bytes. An argument
    /// borrows an `np.void`'s data (writes reach it, as Numba's); a result is copied
    /// into a new `np.void` of the record's dtype by the receiver.
    Record(TypeId),
    /// An item of a character array (`[char x n]`, `[unichr x n]`, `model::charseq`):
    /// its bytes, NUL padded, in as many slots as they fill. An argument comes from a
    /// `bytes` / `str` (truncated or padded, as NumPy stores one); a result goes back
    /// as one without the trailing NULs.
    Chars(TypeId),
    /// A `numpy.random.Generator` (`model::npgen`): its `bitgen_t` address and the
    /// Python object, borrowed for the call; a result is that object.
    NpGenerator,
}

/// Slots holding the bytes of a character-array item type.
pub fn char_slots(t: TypeId) -> usize {
    crate::model::charseq::units(t).map_or(0, |(n, w)| ((n * w) as usize).div_ceil(8))
}

impl Shape {
    /// Number of slots.
    pub fn slots(&self) -> usize {
        match self {
            Shape::Leaf(..)
            | Shape::Enum(_)
            | Shape::Generator(_)
            | Shape::Object
            | Shape::Record(_) => 1,
            Shape::Array(t) => 5 + 2 * crate::model::array::ndim(*t) as usize,
            Shape::Complex(_) => 2,
            Shape::Slice => 3,
            Shape::Unicode | Shape::Bytes => crate::model::unicode::FIELDS as usize,
            Shape::List { .. } | Shape::Set { .. } | Shape::Dict { .. } | Shape::Instance(_) => 2,
            Shape::Tuple(items) | Shape::Named { items, .. } | Shape::Boxed { items, .. } => {
                items.iter().map(Shape::slots).sum()
            }
            Shape::Optional(x) => 1 + x.slots(),
            Shape::Chars(t) => char_slots(*t),
            Shape::NpGenerator => 2,
            Shape::None | Shape::Literal(_) => 0,
        }
    }
}

/// The boundary shape of a type: `Err` names a type that cannot cross yet.
/// Drop the NRT references values of this shape hold in `slots` from `*pos` on (an
/// array's or a string's MemInfo), advancing `pos`: what a reader that makes no Python
/// objects of them does.
pub fn release_slots(shape: &Shape, slots: &[u64], pos: &mut usize) {
    let release = |mi: u64| {
        // SAFETY: the slot holds a MemInfo reference of its own, or null.
        unsafe { numba_nrt::NRT_decref(mi as *mut numba_nrt::MemInfo) };
    };
    match shape {
        Shape::Array(_)
        | Shape::List { .. }
        | Shape::Set { .. }
        | Shape::Dict { .. }
        | Shape::Instance(_) => release(slots[*pos]),
        Shape::Unicode | Shape::Bytes => {
            release(slots[*pos + crate::model::unicode::field::MEMINFO as usize])
        }
        Shape::Tuple(items) | Shape::Named { items, .. } | Shape::Boxed { items, .. } => {
            for s in items {
                release_slots(s, slots, pos);
            }
            return;
        }
        Shape::Optional(inner) => {
            let present = slots[*pos] & 1 == 1;
            *pos += 1;
            if present {
                release_slots(inner, slots, pos);
            } else {
                *pos += inner.slots();
            }
            return;
        }
        _ => {}
    }
    *pos += shape.slots();
}

pub fn boundary_shape(t: TypeId) -> R<Shape> {
    let t = crate::model::lowered(t);
    model_of(t)?.shape(t)
}

/// The LLVM type of a native function with these argument types.
pub fn native_fn_type<'ctx>(ctx: &'ctx Context, args: &[TypeId]) -> R<FunctionType<'ctx>> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    let mut params: Vec<BasicMetadataTypeEnum> = vec![ptr.into(), ptr.into()];
    for &a in args {
        params.push(value_type(ctx, crate::model::lowered(a))?.into());
    }
    Ok(ctx.i32_type().fn_type(&params, false))
}

/// Build `i32 name(u64* ret, ExcInfo** excinfo, const u64* args)` calling `native`.
pub fn build_entry_wrapper<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    native: FunctionValue<'ctx>,
    arg_types: &[TypeId],
    ret_type: TypeId,
) -> R<FunctionValue<'ctx>> {
    let ptr = ctx.ptr_type(AddressSpace::default());
    let fnty = ctx
        .i32_type()
        .fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
    let f = module.add_function(name, fnty, None);
    let entry = ctx.append_basic_block(f, "entry");
    let b = ctx.create_builder();
    b.position_at_end(entry);
    let param = |i: u32| -> R<inkwell::values::PointerValue<'ctx>> {
        f.get_nth_param(i)
            .map(|p| p.into_pointer_value())
            .ok_or_else(|| LowerError::Llvm("entry wrapper parameter".into()))
    };
    let (ret, exc, argv) = (param(0)?, param(1)?, param(2)?);
    let ret_type = crate::model::lowered(ret_type);
    let ret_mem = memory_type(ctx, ret_type)?;
    let ret_slot = b.build_alloca(ret_mem, "ret").map_err(llvm_err)?;
    let codec = SlotCodec {
        ctx,
        b: &b,
        slots: argv,
    };
    let mut args: Vec<BasicMetadataValueEnum> = vec![ret_slot.into(), exc.into()];
    let mut idx = 0u32;
    for &t in arg_types {
        let t = crate::model::lowered(t);
        args.push(model_of(t)?.unpack(&codec, t, &mut idx)?.into());
    }
    let call = b.build_call(native, &args, "status").map_err(llvm_err)?;
    // Not inlined: the native function is compiled once, not a second time inside its
    // wrapper (about a quarter of a small function's optimisation and code generation;
    // the call costs no measurable dispatch time, bench/dispatch.py).
    call.add_attribute(
        inkwell::attributes::AttributeLoc::Function,
        ctx.create_enum_attribute(
            inkwell::attributes::Attribute::get_named_enum_kind_id("noinline"),
            0,
        ),
    );
    let status = call
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| LowerError::Llvm("native call returned void".into()))?
        .into_int_value();
    let ok = b
        .build_int_compare(
            inkwell::IntPredicate::EQ,
            status,
            ctx.i32_type().const_zero(),
            "",
        )
        .map_err(llvm_err)?;
    let box_bb = ctx.append_basic_block(f, "box");
    let done = ctx.append_basic_block(f, "done");
    b.build_conditional_branch(ok, box_bb, done)
        .map_err(llvm_err)?;
    b.position_at_end(box_bb);
    let m = model_of(ret_type)?;
    let v = b.build_load(ret_mem, ret_slot, "").map_err(llvm_err)?;
    let v = m.load_memory(ctx, &b, ret_type, v)?;
    let out = SlotCodec {
        ctx,
        b: &b,
        slots: ret,
    };
    let mut ridx = 0u32;
    m.pack(&out, ret_type, v, &mut ridx)?;
    b.build_unconditional_branch(done).map_err(llvm_err)?;
    b.position_at_end(done);
    b.build_return(Some(&status)).map_err(llvm_err)?;
    Ok(f)
}
