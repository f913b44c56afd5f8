//! The C functions object-mode code calls: CPython's API and the embedder's helpers.
//!
//! numba-lower never links against Python. Object-mode code declares what it calls by
//! name, with the LLVM signature [`DECLS`] gives, and the embedder (numba-py) installs the
//! addresses once with [`install_python_api`]; the JIT maps them like the runtime's own
//! symbols. Without an installed table object mode cannot compile
//! ([`LowerError::Unsupported`]).

use std::sync::OnceLock;

use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{FunctionValue, GlobalValue};
use inkwell::AddressSpace;

use crate::{LowerError, R};

/// `(symbol, signature)`: the signature is the return type then the parameters, one
/// letter each: `p` a pointer, `i` an `int`, `l` a `Py_ssize_t`/`long long`, `v` void.
///
/// The `numba_rs_obj_*` helpers are the embedder's (numba-py's `objmode` module); each
/// returns a new reference (or -1 / null with the Python error set) unless noted.
pub const DECLS: &[(&str, &str)] = &[
    ("Py_IncRef", "vp"),
    ("Py_DecRef", "vp"),
    ("PyNumber_Add", "ppp"),
    ("PyNumber_Subtract", "ppp"),
    ("PyNumber_Multiply", "ppp"),
    ("PyNumber_TrueDivide", "ppp"),
    ("PyNumber_FloorDivide", "ppp"),
    ("PyNumber_Remainder", "ppp"),
    ("PyNumber_Power", "pppp"),
    ("PyNumber_Lshift", "ppp"),
    ("PyNumber_Rshift", "ppp"),
    ("PyNumber_And", "ppp"),
    ("PyNumber_Or", "ppp"),
    ("PyNumber_Xor", "ppp"),
    ("PyNumber_MatrixMultiply", "ppp"),
    ("PyNumber_InPlaceAdd", "ppp"),
    ("PyNumber_InPlaceSubtract", "ppp"),
    ("PyNumber_InPlaceMultiply", "ppp"),
    ("PyNumber_InPlaceTrueDivide", "ppp"),
    ("PyNumber_InPlaceFloorDivide", "ppp"),
    ("PyNumber_InPlaceRemainder", "ppp"),
    ("PyNumber_InPlacePower", "pppp"),
    ("PyNumber_InPlaceLshift", "ppp"),
    ("PyNumber_InPlaceRshift", "ppp"),
    ("PyNumber_InPlaceAnd", "ppp"),
    ("PyNumber_InPlaceOr", "ppp"),
    ("PyNumber_InPlaceXor", "ppp"),
    ("PyNumber_InPlaceMatrixMultiply", "ppp"),
    ("PyNumber_Negative", "pp"),
    ("PyNumber_Positive", "pp"),
    ("PyNumber_Invert", "pp"),
    ("PyObject_Not", "ip"),
    ("PyObject_IsTrue", "ip"),
    ("PyObject_RichCompare", "pppi"),
    ("PySequence_Contains", "ipp"),
    ("PyBool_FromLong", "pl"),
    ("PyLong_FromLongLong", "pl"),
    ("PyObject_GetAttr", "ppp"),
    ("PyObject_SetAttr", "ippp"),
    ("PyObject_GetItem", "ppp"),
    ("PyObject_SetItem", "ippp"),
    ("PyObject_DelItem", "ipp"),
    ("PyObject_GetIter", "pp"),
    ("PySequence_Tuple", "pp"),
    ("PyObject_Call", "pppp"),
    ("PyTuple_New", "pl"),
    ("PyTuple_SetItem", "iplp"),
    ("PyTuple_GetItem", "ppl"),
    ("PyList_New", "pl"),
    ("PyList_SetItem", "iplp"),
    ("PySet_New", "pp"),
    ("PySet_Add", "ipp"),
    ("PyDict_New", "p"),
    ("PyDict_SetItem", "ippp"),
    // (env, name str): a global by name, from the function's globals then its builtins;
    // NameError as Python words it.
    ("numba_rs_obj_global", "ppp"),
    // (env, name str): a free variable's cell contents.
    ("numba_rs_obj_freevar", "ppp"),
    // (exception or null): set the error `raise x` (or a bare `raise`) sets. Returns void.
    ("numba_rs_obj_raise", "vp"),
    // (env, class name str, args tuple or null): `raise Cls(*args)` for a builtin class.
    ("numba_rs_obj_raise_builtin", "vppp"),
    // (iterator): `(item, True)`, or `(None, False)` when exhausted.
    ("numba_rs_obj_iternext", "pp"),
    // (iterable, count): a tuple of exactly `count` items, with unpacking's ValueErrors.
    ("numba_rs_obj_unpack", "ppl"),
    // (func, args tuple, kwargs dict or null, *args or null, **kwargs or null).
    ("numba_rs_obj_call", "pppppp"),
    // (name str): UnboundLocalError for a local read before assignment. Returns void.
    ("numba_rs_obj_unbound", "vp"),
];

/// The data symbols object-mode code reads: the singletons, by their C names.
pub const DATA: &[&str] = &["_Py_NoneStruct", "_Py_TrueStruct", "_Py_FalseStruct"];

static API: OnceLock<Vec<(String, usize)>> = OnceLock::new();

/// Install the addresses of [`DECLS`] and [`DATA`] (the embedder's job, once per
/// process). A later call changes nothing.
pub fn install_python_api(symbols: Vec<(String, usize)>) {
    let _ = API.set(symbols);
}

/// The installed table, or why object mode cannot compile.
pub(crate) fn table() -> R<&'static [(String, usize)]> {
    let t = API.get().ok_or_else(|| LowerError::Unsupported {
        message: "object mode needs the Python C API, which no embedder installed \
                  (numba_lower::objmode::install_python_api)"
            .into(),
        line: 0,
    })?;
    for (name, _) in DECLS {
        if !t.iter().any(|(n, _)| n == name) {
            return Err(LowerError::Unsupported {
                message: format!("the installed Python API has no {name}"),
                line: 0,
            });
        }
    }
    Ok(t)
}

/// Declare `name` in `module` (once) with its [`DECLS`] signature.
pub(crate) fn function<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
) -> R<FunctionValue<'ctx>> {
    if let Some(f) = module.get_function(name) {
        return Ok(f);
    }
    let sig = DECLS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .ok_or_else(|| LowerError::Llvm(format!("object mode: no declaration for {name}")))?;
    let ptr = ctx.ptr_type(AddressSpace::default());
    let ty = |c: char| -> Option<BasicTypeEnum<'ctx>> {
        match c {
            'p' => Some(ptr.into()),
            'i' => Some(ctx.i32_type().into()),
            'l' => Some(ctx.i64_type().into()),
            _ => None,
        }
    };
    let mut chars = sig.chars();
    let ret = chars.next().unwrap_or('v');
    let params: Vec<BasicMetadataTypeEnum> = chars.filter_map(ty).map(Into::into).collect();
    let fnty = match ty(ret) {
        Some(t) => t.fn_type(&params, false),
        None => ctx.void_type().fn_type(&params, false),
    };
    Ok(module.add_function(name, fnty, Some(Linkage::External)))
}

/// Declare the data symbol `name` (an object whose address is the value).
pub(crate) fn data<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
) -> GlobalValue<'ctx> {
    module.get_global(name).unwrap_or_else(|| {
        let g = module.add_global(ctx.i8_type(), None, name);
        g.set_linkage(Linkage::External);
        g
    })
}

/// The installed address of a helper outside [`DECLS`] (numba-py's
/// `numba_rs_objmode_with`, which nopython code calls to run an `objmode` block).
pub(crate) fn address(name: &str) -> R<usize> {
    table()?
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, a)| *a)
        .ok_or_else(|| LowerError::Unsupported {
            message: format!("the installed Python API has no {name}"),
            line: 0,
        })
}
