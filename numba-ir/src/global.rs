//! What a global name refers to, resolved without a Python interpreter.

use std::sync::Arc;

use numba_bytecode::Constant;

/// The kind of object a global name is bound to.
#[derive(Debug, Clone, PartialEq)]
pub enum GlobalKind {
    /// A builtin function or class by its name: `range`, `abs`, `int`, `bool`, `len`, ...
    Builtin(String),
    /// A module by its name: `math`, `numpy`.
    Module(String),
    /// A function of a module bound directly (`from math import sqrt`): module and name.
    ModuleFunction { module: String, name: String },
    /// A builtin exception class: `ValueError`, `ZeroDivisionError`, ...
    ExceptionClass(String),
    /// One of Numba's exception-handling intrinsics the interpreter calls in `try` blocks:
    /// `mark_try_block`, `end_try_block`, `exception_check`, `exception_match`.
    Intrinsic(String),
    /// A constant value (ints, floats, bools, strings, tuples of them).
    Const(Constant),
    /// A NumPy array frozen into the compiled code at compile time, as Numba freezes
    /// global arrays.
    Array(ConstArray),
    /// A NumPy scalar (`np.int32(0)`, `np.float32(1e-6)`, `np.bool_(True)`) frozen as a
    /// constant of its exact dtype, as Numba types it: a 0-d capture (empty `shape`) of
    /// its bytes.
    Scalar(ConstArray),
    /// A tuple holding at least one array or NumPy scalar (a tuple of plain constants is a `Const`): its
    /// items, each a `Const`, an `Array` or a `Tuple`.
    Tuple(Vec<GlobalKind>),
    /// A `slice` of ints and Nones (`slice(1, None)`), typed as its literal: an index
    /// kept in a global or closure tuple (`index = (slice(1, None), Ellipsis)`).
    Slice(Option<i64>, Option<i64>, Option<i64>),
    /// Another jitted function, by the id of its dispatcher.
    Dispatcher { id: u64, name: String },
    /// A ufunc numba-rs compiles (`@vectorize`, `@guvectorize`), by the id its driver
    /// registered it under; `gufunc` for a generalized ufunc. Its loops are chosen (or
    /// compiled) per call through `CalleeResolver::resolve_ufunc`.
    UFunc { id: u64, name: String, gufunc: bool },
    /// A loop lifted out of an object-mode function (`looplift`), by its index among the
    /// function's lifted loops: the dispatcher compiling it, which object-mode code reads
    /// from its environment.
    LiftedLoop { index: usize },
    /// A context manager the compiler implements by rewriting the `with` body
    /// (`numba_ir::withlift`): `objmode`, `parallel_chunksize` and Numba's testing
    /// contexts.
    WithContext(WithContextKind),
    /// A Numba type object (`types.int64`, `types.float64[:]`), by its printed name
    /// (`array(float64, 1d, A)`), its Python class name and, when the host knows it, the
    /// compiler's typecode of the type it stands for.
    TypeObject {
        text: String,
        type_name: String,
        code: Option<u32>,
    },
    /// An `enum.Enum` / `enum.IntEnum` class with integer values: its name, a key for the
    /// class object (`module.qualname`) and its members.
    EnumClass {
        name: String,
        key: String,
        members: Vec<(String, i64)>,
        int_enum: bool,
    },
    /// A `collections.namedtuple` class: its name, a key for the class object
    /// (`module.qualname`) and its field names.
    NamedTupleClass {
        name: String,
        key: String,
        fields: Vec<String>,
    },
    /// A C function jitted code calls through its address (a ctypes function pointer, a
    /// cffi function): its name, its address and its C signature as signature text
    /// (`float64(float64, void*)`).
    CFunction {
        name: String,
        address: u64,
        signature: String,
    },
    /// Bound to something numba-rs cannot type; the text says what.
    Opaque { type_name: String },
    /// A value of a user's data-less type (a `types.Opaque` with `OpaqueModel`, a class
    /// reference with class methods): the type is all there is. `type_code` is the
    /// host's typecode for it (numba-typeinfer's interned id, valid in this process).
    UserValue { type_code: u32, type_name: String },
    /// Bound to a value of a kind numba-rs knows but cannot compile (an array of an
    /// unsupported dtype); the message says why.
    Unsupported { message: String },
    /// Not bound at all.
    Undefined,
}

/// The context managers `with` may use in nopython code (Numba's `WithContext`
/// subclasses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithContextKind {
    /// `numba.objmode` / `numba_rs.objmode`: the body runs in object mode.
    ObjMode,
    /// `numba.parallel_chunksize(n)`: the chunk size is `n` inside the body.
    ParallelChunksize,
    /// Numba's `call_context` (testing): the body is a function of its own, which runs
    /// as if inline.
    Call,
    /// Numba's `bypass_context` (testing): the body is skipped.
    Bypass,
}

/// How a constant array's elements are laid out, as Numba's `map_layout` reads the
/// array's flags: C-contiguous, else Fortran-contiguous, else any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayLayout {
    C,
    F,
    A,
}

/// Why the pieces of a constant array do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstArrayError {
    #[error("array of shape {shape:?} and itemsize {itemsize} needs {expected} bytes, got {got}")]
    Size {
        shape: Vec<i64>,
        itemsize: usize,
        expected: usize,
        got: usize,
    },
    #[error("array dimension {0} is negative")]
    NegativeDim(i64),
}

/// A NumPy array captured as data: dtype name, shape and the element bytes, contiguous
/// in Fortran order for an `F` array and in C order otherwise (a non-contiguous array is
/// captured as a C-ordered copy and keeps layout `A`, as Numba types it).
#[derive(Clone, PartialEq)]
pub struct ConstArray {
    /// The NumPy dtype name: `bool`, `int8` ... `uint64`, `float32`, `complex128`.
    pub dtype: String,
    /// Bytes per element.
    pub itemsize: usize,
    pub shape: Vec<i64>,
    pub layout: ArrayLayout,
    /// The elements' bytes (shared: every load of the global holds the same capture).
    pub data: Arc<[u8]>,
}

impl ConstArray {
    /// A constant array, checking that `data` holds exactly the elements of `shape`.
    pub fn new(
        dtype: impl Into<String>,
        itemsize: usize,
        shape: Vec<i64>,
        layout: ArrayLayout,
        data: Arc<[u8]>,
    ) -> Result<ConstArray, ConstArrayError> {
        if let Some(&d) = shape.iter().find(|&&d| d < 0) {
            return Err(ConstArrayError::NegativeDim(d));
        }
        let expected = shape
            .iter()
            .try_fold(itemsize, |n, &d| n.checked_mul(d as usize));
        if expected != Some(data.len()) {
            return Err(ConstArrayError::Size {
                shape,
                itemsize,
                expected: expected.unwrap_or(usize::MAX),
                got: data.len(),
            });
        }
        Ok(ConstArray {
            dtype: dtype.into(),
            itemsize,
            shape,
            layout,
            data,
        })
    }

    /// The number of elements.
    pub fn nitems(&self) -> i64 {
        self.shape.iter().product()
    }

    /// The strides (in bytes) of `data`: Fortran order for layout `F`, C order otherwise.
    pub fn strides(&self) -> Vec<i64> {
        let n = self.shape.len();
        let mut strides = vec![0i64; n];
        let mut step = self.itemsize as i64;
        let mut set = |i: usize| {
            strides[i] = step;
            step *= self.shape[i].max(1);
        };
        if self.layout == ArrayLayout::F {
            (0..n).for_each(&mut set);
        } else {
            (0..n).rev().for_each(&mut set);
        }
        strides
    }
}

/// Without the element bytes (a capture may be large).
impl std::fmt::Debug for ConstArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConstArray")
            .field("dtype", &self.dtype)
            .field("itemsize", &self.itemsize)
            .field("shape", &self.shape)
            .field("layout", &self.layout)
            .field("bytes", &self.data.len())
            .finish()
    }
}

/// A resolved global: its kind and the text Numba prints for the value
/// (`<class 'range'>`, `<built-in function abs>`, `<module 'math' from '...'>`).
#[derive(Debug, Clone, PartialEq)]
pub struct Global {
    pub kind: GlobalKind,
    pub repr: String,
}

impl Global {
    /// A Numba intrinsic (`<intrinsic mark_try_block>`).
    pub fn intrinsic(name: &str) -> Global {
        Global {
            kind: GlobalKind::Intrinsic(name.to_string()),
            repr: format!("<intrinsic {name}>"),
        }
    }

    /// A builtin with the repr CPython gives it.
    pub fn builtin(name: &str) -> Global {
        let classes = BUILTIN_CLASSES;
        let repr = if classes.contains(&name) {
            format!("<class '{name}'>")
        } else {
            format!("<built-in function {name}>")
        };
        Global {
            kind: GlobalKind::Builtin(name.to_string()),
            repr,
        }
    }
}

/// CPython 3.11's `builtins`: functions, classes and exception classes (generated from
/// `dir(builtins)`).
const BUILTIN_FUNCTIONS: &[&str] = &[
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "breakpoint",
    "callable",
    "chr",
    "compile",
    "delattr",
    "dir",
    "divmod",
    "eval",
    "exec",
    "format",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "hex",
    "id",
    "input",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "locals",
    "max",
    "min",
    "next",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "repr",
    "round",
    "setattr",
    "sorted",
    "sum",
    "vars",
];
pub const BUILTIN_CLASSES: &[&str] = &[
    "bool",
    "bytearray",
    "bytes",
    "classmethod",
    "complex",
    "dict",
    "enumerate",
    "filter",
    "float",
    "frozenset",
    "int",
    "list",
    "map",
    "memoryview",
    "object",
    "property",
    "range",
    "reversed",
    "set",
    "slice",
    "staticmethod",
    "str",
    "super",
    "tuple",
    "type",
    "zip",
];
const BUILTIN_EXCEPTIONS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
];

/// Resolves the names a function reads with `LOAD_GLOBAL` (globals, then builtins).
pub trait GlobalResolver {
    fn resolve_global(&self, name: &str) -> Global;

    /// The value of free variable `index` (`name`) from the function's `__closure__`, for
    /// jitted closures. The default knows none.
    fn resolve_freevar(&self, index: usize, name: &str) -> Global {
        let _ = (index, name);
        Global {
            kind: GlobalKind::Undefined,
            repr: "Undefined".into(),
        }
    }

    /// Attribute `attr` of module `module` read at compile time (`types.intp` in a
    /// `with objmode(...)` annotation); `None` when it cannot be read. The default knows
    /// none.
    fn resolve_attr(&self, module: &str, attr: &str) -> Option<Global> {
        let _ = (module, attr);
        None
    }
}

/// The builtins every function sees when its globals do not shadow them.
pub fn default_builtin(name: &str) -> Option<Global> {
    if name == "NotImplemented" || name == "Ellipsis" {
        return Some(Global {
            kind: GlobalKind::Opaque {
                type_name: format!("{name}Type"),
            },
            repr: name.to_string(),
        });
    }
    if BUILTIN_FUNCTIONS.contains(&name) || BUILTIN_CLASSES.contains(&name) {
        Some(Global::builtin(name))
    } else if BUILTIN_EXCEPTIONS.contains(&name) {
        Some(Global {
            kind: GlobalKind::ExceptionClass(name.to_string()),
            repr: format!("<class '{name}'>"),
        })
    } else {
        None
    }
}

/// A resolver from a table, falling back to the builtins: what Rust tests use.
impl GlobalResolver for std::collections::HashMap<String, Global> {
    fn resolve_global(&self, name: &str) -> Global {
        self.get(name)
            .cloned()
            .or_else(|| default_builtin(name))
            .unwrap_or(Global {
                kind: GlobalKind::Undefined,
                repr: "Undefined".into(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(shape: Vec<i64>, layout: ArrayLayout) -> ConstArray {
        let n: i64 = shape.iter().product();
        let data: Arc<[u8]> = vec![0u8; n as usize * 8].into();
        ConstArray::new("float64", 8, shape, layout, data).expect("sizes match")
    }

    #[test]
    fn strides_follow_the_capture_order() {
        // NumPy's strides for the same shapes: C, Fortran, and A captured in C order.
        assert_eq!(array(vec![2, 3, 4], ArrayLayout::C).strides(), [96, 32, 8]);
        assert_eq!(array(vec![2, 3, 4], ArrayLayout::F).strides(), [8, 16, 48]);
        assert_eq!(array(vec![2, 3], ArrayLayout::A).strides(), [24, 8]);
        // A zero-length dimension counts as one, as in NumPy (`np.zeros((0, 3))`).
        assert_eq!(array(vec![0, 3], ArrayLayout::C).strides(), [24, 8]);
        let scalar = array(vec![], ArrayLayout::C);
        assert!(scalar.strides().is_empty());
        assert_eq!(scalar.nitems(), 1);
    }

    #[test]
    fn data_must_hold_the_shape() {
        let data: Arc<[u8]> = vec![0u8; 20].into();
        let err = ConstArray::new("int32", 4, vec![2, 3], ArrayLayout::C, data.clone());
        assert!(matches!(
            err,
            Err(ConstArrayError::Size {
                expected: 24,
                got: 20,
                ..
            })
        ));
        assert_eq!(
            ConstArray::new("int32", 4, vec![-1], ArrayLayout::C, data),
            Err(ConstArrayError::NegativeDim(-1))
        );
    }

    #[test]
    fn debug_omits_the_bytes() {
        let text = format!("{:?}", array(vec![1000], ArrayLayout::C));
        assert!(text.contains("bytes: 8000"), "{text}");
        assert!(text.len() < 200, "{text}");
    }
}
