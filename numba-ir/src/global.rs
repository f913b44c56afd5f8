//! What a global name refers to, resolved without a Python interpreter.

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
    /// Another jitted function, by the id of its dispatcher.
    Dispatcher { id: u64, name: String },
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
    /// Bound to something numba-rs cannot type; the text says what.
    Opaque { type_name: String },
    /// Not bound at all.
    Undefined,
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
