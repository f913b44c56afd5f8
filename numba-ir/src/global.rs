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
    /// A constant value (ints, floats, bools, strings, tuples of them).
    Const(Constant),
    /// Another jitted function, by the id of its dispatcher.
    Dispatcher { id: u64, name: String },
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
    /// A builtin with the repr CPython gives it.
    pub fn builtin(name: &str) -> Global {
        let classes = [
            "range",
            "int",
            "float",
            "bool",
            "complex",
            "slice",
            "str",
            "tuple",
            "list",
            "dict",
            "set",
            "enumerate",
            "zip",
            "type",
            "object",
        ];
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

/// Resolves the names a function reads with `LOAD_GLOBAL` (globals, then builtins).
pub trait GlobalResolver {
    fn resolve_global(&self, name: &str) -> Global;
}

/// The builtins every function sees when its globals do not shadow them.
pub fn default_builtin(name: &str) -> Option<Global> {
    const FUNCS: &[&str] = &[
        "range",
        "int",
        "float",
        "bool",
        "complex",
        "abs",
        "len",
        "min",
        "max",
        "round",
        "print",
        "enumerate",
        "zip",
        "slice",
        "str",
        "tuple",
        "list",
        "dict",
        "set",
        "isinstance",
        "pow",
        "divmod",
        "sum",
        "any",
        "all",
        "hash",
        "type",
        "iter",
        "next",
        "getattr",
        "hasattr",
    ];
    const EXCEPTIONS: &[&str] = &[
        "Exception",
        "ValueError",
        "TypeError",
        "ZeroDivisionError",
        "IndexError",
        "KeyError",
        "RuntimeError",
        "AssertionError",
        "OverflowError",
        "ArithmeticError",
        "StopIteration",
        "NotImplementedError",
        "LookupError",
        "AttributeError",
    ];
    if FUNCS.contains(&name) {
        Some(Global::builtin(name))
    } else if EXCEPTIONS.contains(&name) {
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
                repr: "<undefined>".into(),
            })
    }
}
