//! Types, interned once per process. The index of a type in the table is its typecode.

use std::fmt;
use std::sync::{LazyLock, RwLock};

use indexmap::IndexSet;

/// A typecode: the index of an interned [`Type`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

/// A numba-rs type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Boolean,
    Integer {
        bits: u8,
        signed: bool,
    },
    Float {
        bits: u8,
    },
    Complex {
        bits: u8,
    },
    NoneType,
    Unicode,
    PyObject,
    /// `range_state64`: the result of `range(...)`.
    RangeState64,
    /// `range_iter64`.
    RangeIter64,
    /// The result of `iternext`: value and validity.
    Pair(TypeId, TypeId),
    UniTuple(TypeId, u32),
    Tuple(Vec<TypeId>),
    /// A module, by name.
    Module(String),
    /// A typing-template key: `abs`, `math.sqrt`, a user's function.
    Function(String),
    /// A number class used as a callable: `int`, `float`, `bool` → `class(int64)`.
    NumberClass(TypeId),
    /// Another jitted function, by dispatcher id and name.
    Dispatcher {
        id: u64,
        name: String,
    },
    ExceptionClass(String),
    ExceptionInstance(String),
}

struct Table {
    types: IndexSet<Type>,
}

static TABLE: LazyLock<RwLock<Table>> = LazyLock::new(|| {
    let mut types = IndexSet::new();
    for t in PRIMITIVES.iter() {
        types.insert(t.clone());
    }
    RwLock::new(Table { types })
});

/// Pre-interned primitives, in typecode order.
static PRIMITIVES: LazyLock<Vec<Type>> = LazyLock::new(|| {
    vec![
        Type::Boolean,
        Type::Integer {
            bits: 8,
            signed: true,
        },
        Type::Integer {
            bits: 16,
            signed: true,
        },
        Type::Integer {
            bits: 32,
            signed: true,
        },
        Type::Integer {
            bits: 64,
            signed: true,
        },
        Type::Integer {
            bits: 8,
            signed: false,
        },
        Type::Integer {
            bits: 16,
            signed: false,
        },
        Type::Integer {
            bits: 32,
            signed: false,
        },
        Type::Integer {
            bits: 64,
            signed: false,
        },
        Type::Float { bits: 16 },
        Type::Float { bits: 32 },
        Type::Float { bits: 64 },
        Type::Complex { bits: 64 },
        Type::Complex { bits: 128 },
        Type::NoneType,
        Type::Unicode,
        Type::PyObject,
        Type::RangeState64,
        Type::RangeIter64,
    ]
});

pub const BOOLEAN: TypeId = TypeId(0);
pub const INT8: TypeId = TypeId(1);
pub const INT16: TypeId = TypeId(2);
pub const INT32: TypeId = TypeId(3);
pub const INT64: TypeId = TypeId(4);
pub const UINT8: TypeId = TypeId(5);
pub const UINT16: TypeId = TypeId(6);
pub const UINT32: TypeId = TypeId(7);
pub const UINT64: TypeId = TypeId(8);
pub const FLOAT16: TypeId = TypeId(9);
pub const FLOAT32: TypeId = TypeId(10);
pub const FLOAT64: TypeId = TypeId(11);
pub const COMPLEX64: TypeId = TypeId(12);
pub const COMPLEX128: TypeId = TypeId(13);
pub const NONE: TypeId = TypeId(14);
pub const UNICODE: TypeId = TypeId(15);
pub const PYOBJECT: TypeId = TypeId(16);
pub const RANGE_STATE64: TypeId = TypeId(17);
pub const RANGE_ITER64: TypeId = TypeId(18);
/// `intp` on 64-bit targets.
pub const INTP: TypeId = INT64;

/// Intern a type, returning its typecode.
pub fn intern(t: Type) -> TypeId {
    if let Some(i) = TABLE
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .types
        .get_index_of(&t)
    {
        return TypeId(i as u32);
    }
    let mut table = TABLE.write().unwrap_or_else(|e| e.into_inner());
    let (i, _) = table.types.insert_full(t);
    TypeId(i as u32)
}

/// The type behind a typecode.
pub fn get(id: TypeId) -> Type {
    TABLE
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .types
        .get_index(id.0 as usize)
        .cloned()
        .unwrap_or(Type::PyObject)
}

impl TypeId {
    pub fn get(self) -> Type {
        get(self)
    }

    pub fn is_integer(self) -> bool {
        matches!(self.get(), Type::Integer { .. })
    }

    pub fn is_float(self) -> bool {
        matches!(self.get(), Type::Float { .. })
    }

    pub fn is_complex(self) -> bool {
        matches!(self.get(), Type::Complex { .. })
    }

    /// Integer, float or complex (not bool, as in Numba).
    pub fn is_number(self) -> bool {
        matches!(
            self.get(),
            Type::Integer { .. } | Type::Float { .. } | Type::Complex { .. }
        )
    }

    /// Bool or number.
    pub fn is_scalar(self) -> bool {
        self == BOOLEAN || self.is_number()
    }

    pub fn bitwidth(self) -> u32 {
        match self.get() {
            Type::Boolean => 1,
            Type::Integer { bits, .. } | Type::Float { bits } | Type::Complex { bits } => {
                u32::from(bits)
            }
            _ => 64,
        }
    }

    pub fn is_signed(self) -> bool {
        matches!(self.get(), Type::Integer { signed: true, .. })
    }
}

impl fmt::Display for TypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

impl fmt::Display for Type {
    /// Numba's spelling of the type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Boolean => f.write_str("bool"),
            Type::Integer { bits, signed: true } => write!(f, "int{bits}"),
            Type::Integer {
                bits,
                signed: false,
            } => write!(f, "uint{bits}"),
            Type::Float { bits } => write!(f, "float{bits}"),
            Type::Complex { bits } => write!(f, "complex{bits}"),
            Type::NoneType => f.write_str("none"),
            Type::Unicode => f.write_str("unicode_type"),
            Type::PyObject => f.write_str("pyobject"),
            Type::RangeState64 => f.write_str("range_state64"),
            Type::RangeIter64 => f.write_str("range_iter64"),
            Type::Pair(a, b) => write!(f, "pair<{a}, {b}>"),
            Type::UniTuple(t, n) => write!(f, "UniTuple({t} x {n})"),
            Type::Tuple(items) => {
                let s: Vec<String> = items.iter().map(|t| t.to_string()).collect();
                write!(f, "Tuple({})", s.join(", "))
            }
            Type::Module(m) => write!(f, "Module(<module '{m}'>)"),
            Type::Function(k) => match k.split_once('.') {
                Some((m, n)) => write!(f, "Function(<built-in function {n}> of {m})"),
                None => write!(f, "Function(<built-in function {k}>)"),
            },
            Type::NumberClass(t) => write!(f, "class({t})"),
            Type::Dispatcher { name, .. } => write!(f, "type(CPUDispatcher(<function {name}>))"),
            Type::ExceptionClass(n) => write!(f, "ExceptionClass(<class '{n}'>)"),
            Type::ExceptionInstance(n) => write!(f, "ExceptionInstance(<class '{n}'>)"),
        }
    }
}

/// Parse a scalar type name (`int64`, `float64`, `bool`, `boolean`, `intp`, ...).
pub fn from_name(name: &str) -> Option<TypeId> {
    Some(match name {
        "bool" | "boolean" | "b1" => BOOLEAN,
        "int8" | "i1" => INT8,
        "int16" | "i2" => INT16,
        "int32" | "i4" => INT32,
        "int64" | "i8" | "intp" | "int_" => INT64,
        "uint8" | "u1" => UINT8,
        "uint16" | "u2" => UINT16,
        "uint32" | "u4" => UINT32,
        "uint64" | "u8" | "uintp" => UINT64,
        "float16" | "f2" => FLOAT16,
        "float32" | "f4" => FLOAT32,
        "float64" | "f8" | "double" => FLOAT64,
        "complex64" | "c8" => COMPLEX64,
        "complex128" | "c16" => COMPLEX128,
        "none" | "void" => NONE,
        "unicode_type" => UNICODE,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_are_preinterned_and_named() {
        assert_eq!(
            intern(Type::Integer {
                bits: 64,
                signed: true
            }),
            INT64
        );
        assert_eq!(FLOAT64.to_string(), "float64");
        assert_eq!(BOOLEAN.to_string(), "bool");
        let t = intern(Type::UniTuple(INT64, 2));
        assert_eq!(t.to_string(), "UniTuple(int64 x 2)");
        assert_eq!(intern(Type::UniTuple(INT64, 2)), t);
    }
}
