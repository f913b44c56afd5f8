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
    /// `Bytes(uint8, 1d, C)`: an immutable `bytes` (Numba's read-only `types.Bytes`). Its
    /// values share `unicode_type`'s data model with one byte per character, so the string
    /// helpers serve both; indexing gives `uint8`.
    Bytes,
    /// `[char x 8]`: one item of a NumPy `S8` array (Numba's `CharSeq`), held by value as
    /// its bytes, NUL padded; converts to `bytes` without the trailing NULs.
    CharSeq(u32),
    /// `[unichr x 8]`: one item of a NumPy `<U8` array (Numba's `UnicodeCharSeq`), held by
    /// value as UCS-4 code points, NUL padded; converts to `str`.
    UnicodeCharSeq(u32),
    /// `undefined`: the item type of an empty list not yet known (typing refines it from
    /// later `append`s; a type still holding it after typing is an error).
    Undefined,
    /// `list(int64)<iv=None>` (Numba's `types.List`): a growable list of one item type
    /// owned by an NRT MemInfo; `reflected` for a list unboxed from a Python argument,
    /// whose changes are written back into the caller's list. `typed` for Numba's
    /// `ListType[int64]` (`numba_rs.typed.List`): the same list in compiled code, shared
    /// by reference with its Python object instead of copied.
    List {
        dtype: TypeId,
        reflected: bool,
        typed: bool,
    },
    /// Numba's typed dict (`DictType[unicode_type,int64]<iv=None>`): keys of one type,
    /// values of one type, CPython's insertion order (`model::list`'s layout, the payload
    /// of numba-lower's `dicts`). `undefined` key and value: an empty `{}` before a store
    /// types it.
    Dict {
        key: TypeId,
        value: TypeId,
    },
    /// A dict literal with string-constant keys and values of different types (Numba's
    /// `LiteralStrKeyDict`): read-only, laid out as the tuple of its values in key order;
    /// indexed by constant keys. `values` are the held (non-literal) types of the
    /// layout; `literals` the values' own types as typed (`Literal[int](1)` for a
    /// constant), Numba's `literal_value`, which an overload reads.
    LiteralStrKeyDict {
        keys: Vec<String>,
        values: Vec<TypeId>,
        literals: Vec<TypeId>,
    },
    /// A dict's `keys()` (kind 0), `values()` (1) or `items()` (2): Numba's
    /// `DictKeysIterableType` and siblings, printed `keys[DictType[...]]`.
    DictView {
        dict: TypeId,
        kind: u8,
    },
    /// `set(int64)` (Numba's `types.Set`): a hash set of one item type owned by an NRT
    /// MemInfo; `reflected` for a set unboxed from a Python argument.
    Set {
        dtype: TypeId,
        reflected: bool,
    },
    /// `ellipsis`: the `...` in an index.
    Ellipsis,
    /// `float64*`: a C pointer to values of a type (Numba's `CPointer`), as C callbacks
    /// take arrays.
    CPointer(TypeId),
    /// `void*`: an untyped C pointer (Numba's `voidptr`).
    VoidPtr,
    /// A C function's address, called with C argument types (Numba's
    /// `ExternalFunctionPointer`: ctypes and cffi functions).
    ExternalFunctionPointer {
        args: Vec<TypeId>,
        ret: TypeId,
    },
    /// `array.ctypes` (Numba's `ArrayCTypes`): the array's data, passed where C takes a
    /// `void*` or a pointer to the dtype; `.data` is the address as an integer.
    ArrayCTypes(TypeId),
    /// `ArrayFlags(array(float64, 2d, C))`: `a.flags`, whose `c_contiguous`,
    /// `f_contiguous` and `contiguous` are read from the strides at run time.
    ArrayFlags(TypeId),
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
    /// A vectorize (`gufunc` false) or guvectorize object compiled by numba-rs, by the
    /// id its driver registered it under.
    UFunc {
        id: u64,
        name: String,
        gufunc: bool,
    },
    ExceptionClass(String),
    ExceptionInstance(String),
    /// `Literal[int](1)`: an int known at compile time.
    IntegerLiteral(i64),
    /// `Literal[bool](True)`.
    BooleanLiteral(bool),
    /// `Literal[str](abc)`.
    StringLiteral(String),
    /// `OptionalType(int64)`: a value or `None`.
    Optional(TypeId),
    /// `omitted(default=...)`: an argument left to its default (the default's repr).
    Omitted(String),
    /// `array(float64, 1d, C)`; `readonly array(...)` when not writeable.
    Array {
        dtype: TypeId,
        ndim: u32,
        layout: Layout,
        readonly: bool,
    },
    /// `Point(int64 x 2)`: a namedtuple whose fields share a type. `names` are the field
    /// names (attribute access) and `class` the Python class's `module.qualname`, so boxing
    /// can rebuild the same class.
    NamedUniTuple {
        name: String,
        dtype: TypeId,
        count: u32,
        names: Vec<String>,
        class: String,
    },
    /// `Point(int64, float64)`.
    NamedTuple {
        name: String,
        fields: Vec<TypeId>,
        names: Vec<String>,
        class: String,
    },
    /// `slice<a:b>` (2 = no step) / `slice<a:b:c>`.
    Slice(u8),
    /// A slice of constants, `Literal[slice](slice(1, 3, None))`: tuples are sliced at
    /// compile time.
    SliceLiteral(Option<i64>, Option<i64>, Option<i64>),
    /// `iter(array(float64, 1d, C))`.
    ArrayIter(TypeId),
    /// `array.flat(array(float64, 2d, C))`: the array's elements in C order (`a.flat`).
    NumpyFlat(TypeId),
    /// `ndenumerate(array(float64, 2d, C))`: `np.ndenumerate(a)`.
    NdEnumerate(TypeId),
    /// `ndindex(ndim=2)`: `np.ndindex(shape)` / `numba.pndindex(shape)`, carried as a
    /// storage-less `array(intp, nd, C)` of that shape, walked in C order.
    NdIndex(TypeId),
    /// `enumerate(range_iter64)`: over the iterator of the given type.
    Enumerate(TypeId),
    /// `zip(range_iter64, iter(array(...)))`.
    Zip(Vec<TypeId>),
    /// An instance of a jitclass (`crate::jitclass`): a reference to a heap record of
    /// its fields. `name` is the class's name, id and fields, as Numba prints
    /// `instance.jitclass.Name#id<x:int64,...>`.
    ClassInstance {
        id: u32,
        name: String,
    },
    /// `typeref[unicode_type]`: a type object used as a value (a non-number type given to
    /// `Dict.empty`, `List.empty_list`).
    TypeRef(TypeId),
    /// `dtype(float64)`: a NumPy dtype object.
    DType(TypeId),
    /// `datetime64[D]`: NumPy's datetime64 in a unit (an index into
    /// [`crate::npdatetime::UNITS`]); its value is an int64 count of units since the
    /// epoch, `i64::MIN` for NaT.
    NPDatetime(u8),
    /// `timedelta64[s]`: NumPy's timedelta64 in a unit; an int64 count, `i64::MIN` for
    /// NaT.
    NPTimedelta(u8),
    /// `Record(a[type=float64;offset=0],b[type=int16;offset=8];10;False)`: one item of a
    /// NumPy structured dtype (Numba's `Record`, see [`crate::records`]). Its value is a
    /// reference to the item's bytes, as in Numba: `a[i].x = 1` writes into the array.
    Record {
        fields: Vec<RecordField>,
        size: u32,
        aligned: bool,
    },
    /// `NumPyRandomGeneratorType`: a `numpy.random.Generator` passed in from Python (see
    /// [`crate::np_generator`]); compiled code draws from its bit generator.
    NumPyRandomGenerator,
    /// `nestedarray(float32, (3, 2))`: an array field of a record (`('h', 'f4', (3, 2))`),
    /// stored inline in C order; reading the field gives a C array viewing those bytes.
    NestedArray {
        dtype: TypeId,
        shape: Vec<u32>,
    },
    /// A type a user defines with the extension API (a `types.Opaque` subclass, ours or
    /// Numba's): printed by its `name`, told apart by `class`, a key for its Python type
    /// class. Its values carry no data in compiled code: they are passed around and
    /// handed to the overloads that accept the type.
    Opaque {
        name: String,
        class: String,
    },
    /// A method bound to a value: `BoundFunction(array.sum for array(float64, 1d, C))`.
    BoundFunction {
        key: String,
        this: TypeId,
    },
    /// A member of an `enum.Enum` (`EnumMember(<enum 'Color'>, int64)`) or `enum.IntEnum`
    /// (`IntEnumMember(...)`) class with integer values; `class` is the class's key.
    EnumMember {
        name: String,
        class: String,
        int_enum: bool,
    },
    /// An enum class: its members by name, with their values.
    EnumClass {
        name: String,
        class: String,
        members: Vec<(String, i64)>,
        int_enum: bool,
    },
    /// A namedtuple class used as a constructor: `class(Point)`.
    NamedTupleClass {
        name: String,
        class: String,
        names: Vec<String>,
    },
    /// A generator function's generator object (Numba's `types.Generator`): what it
    /// yields, the types of its arguments and of its state variables (in
    /// `GeneratorInfo::state_vars` order), and the type a yield expression evaluates to
    /// (`none` unless the generator uses the value of a `yield`, see numba-typeinfer's
    /// `infer`). `id` is the generator function's dispatcher, `func` its qualified name.
    Generator {
        func: String,
        id: u64,
        yield_type: TypeId,
        args: Vec<TypeId>,
        state_types: Vec<TypeId>,
        send_type: TypeId,
        has_finalizer: bool,
    },
}

/// One field of a [`Type::Record`]: its name, type, byte offset, and NumPy title.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordField {
    pub name: String,
    pub ty: TypeId,
    pub offset: u32,
    pub title: Option<String>,
}

/// An array's memory layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layout {
    /// C-contiguous.
    C,
    /// Fortran-contiguous.
    F,
    /// Any strides.
    A,
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layout::C => "C",
            Layout::F => "F",
            Layout::A => "A",
        })
    }
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
        Type::Undefined,
        Type::Bytes,
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
/// `undefined`: an empty list's item type before typing refines it.
pub const UNDEFINED: TypeId = TypeId(19);
/// `Bytes(uint8, 1d, C)`.
pub const BYTES: TypeId = TypeId(20);
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

/// How many types are interned: every typecode below it names one.
pub fn count() -> usize {
    TABLE.read().unwrap_or_else(|e| e.into_inner()).types.len()
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

    /// Whether this is one of the primitive types interned first (numbers, `none`, ...):
    /// known without reading the table, for checks on hot paths.
    pub fn is_primitive(self) -> bool {
        (self.0 as usize) < PRIMITIVES.len()
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
    /// A C pointer (`float64*`, `void*`).
    pub fn is_pointer(self) -> bool {
        matches!(self.get(), Type::CPointer(_) | Type::VoidPtr)
    }

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

    pub fn is_literal(self) -> bool {
        matches!(
            self.get(),
            Type::IntegerLiteral(_)
                | Type::BooleanLiteral(_)
                | Type::StringLiteral(_)
                | Type::SliceLiteral(..)
        )
    }

    /// The type a literal stands for (`Literal[int](1)` → `int64`); other types unchanged.
    pub fn unliteral(self) -> TypeId {
        match self.get() {
            Type::IntegerLiteral(_) => INT64,
            Type::BooleanLiteral(_) => BOOLEAN,
            Type::StringLiteral(_) => UNICODE,
            Type::SliceLiteral(_, _, step) => {
                intern(Type::Slice(if step.is_some() { 3 } else { 2 }))
            }
            _ => self,
        }
    }

    pub fn is_array(self) -> bool {
        matches!(self.get(), Type::Array { .. })
    }

    /// `a.flat` / `np.ndenumerate(a)`: an array walked element by element in C order.
    pub fn flat_array(self) -> Option<TypeId> {
        match self.get() {
            Type::NumpyFlat(a) | Type::NdEnumerate(a) | Type::NdIndex(a) => Some(a),
            _ => None,
        }
    }
}

/// `types.Array(dtype, ndim, layout)`, interned.
pub fn array(dtype: TypeId, ndim: u32, layout: Layout) -> TypeId {
    intern(Type::Array {
        dtype,
        ndim,
        layout,
        readonly: false,
    })
}

/// `UniTuple` when every element has the same type, else `Tuple` (`BaseTuple.from_types`).
/// The items `slice(start, stop, step)` selects from a sequence of `n` (Python's
/// `slice.indices` and `range`); `None` for a zero step.
pub fn slice_indices(
    (start, stop, step): (Option<i64>, Option<i64>, Option<i64>),
    n: usize,
) -> Option<Vec<usize>> {
    let n = n as i64;
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let clamp = |v: Option<i64>, default: i64, lo: i64, hi: i64| match v {
        None => default,
        Some(v) if v < 0 => (v + n).max(lo),
        Some(v) => v.min(hi),
    };
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let (dstart, dstop) = if step > 0 { (0, n) } else { (n - 1, -1) };
    let a = clamp(start, dstart, lo, hi);
    let b = clamp(stop, dstop, lo, hi);
    let mut out = Vec::new();
    let mut i = a;
    while (step > 0 && i < b) || (step < 0 && i > b) {
        out.push(i as usize);
        i += step;
    }
    Some(out)
}

/// Whether `t` is an `IntEnum` member (it behaves as an int in arithmetic).
pub fn is_int_enum_member(t: TypeId) -> bool {
    matches!(t.get(), Type::EnumMember { int_enum: true, .. })
}

/// A namedtuple's field types and names.
pub fn namedtuple_fields(t: TypeId) -> Option<(Vec<TypeId>, Vec<String>)> {
    match t.get() {
        Type::NamedUniTuple {
            dtype,
            count,
            names,
            ..
        } => Some((vec![dtype; count as usize], names)),
        Type::NamedTuple { fields, names, .. } => Some((fields, names)),
        _ => None,
    }
}

/// The namedtuple type of a class with these field names and values.
pub fn namedtuple_of(name: &str, class: &str, names: &[String], fields: &[TypeId]) -> TypeId {
    let first = fields.first().copied();
    if let Some(f) = first.filter(|&f| fields.iter().all(|&x| x == f)) {
        intern(Type::NamedUniTuple {
            name: name.to_string(),
            dtype: f,
            count: fields.len() as u32,
            names: names.to_vec(),
            class: class.to_string(),
        })
    } else {
        intern(Type::NamedTuple {
            name: name.to_string(),
            fields: fields.to_vec(),
            names: names.to_vec(),
            class: class.to_string(),
        })
    }
}

pub fn tuple_of(items: &[TypeId]) -> TypeId {
    match items.first() {
        Some(&first) if items.iter().all(|&t| t == first) => {
            intern(Type::UniTuple(first, items.len() as u32))
        }
        _ => intern(Type::Tuple(items.to_vec())),
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
            Type::Ellipsis => f.write_str("ellipsis"),
            Type::CPointer(t) => write!(f, "{t}*"),
            Type::VoidPtr => f.write_str("void*"),
            Type::ExternalFunctionPointer { args, ret } => {
                let a: Vec<String> = args.iter().map(|t| t.to_string()).collect();
                let comma = if a.len() == 1 { "," } else { "" };
                write!(
                    f,
                    "ExternalFunctionPointer(({}{comma}) -> {ret})",
                    a.join(", ")
                )
            }
            Type::ArrayCTypes(a) => match a.get() {
                Type::Array { dtype, ndim, .. } => {
                    write!(f, "ArrayCTypes(dtype={dtype}, ndim={ndim})")
                }
                _ => write!(f, "ArrayCTypes({a})"),
            },
            Type::ArrayFlags(a) => write!(f, "ArrayFlags({a})"),
            Type::Unicode => f.write_str("unicode_type"),
            Type::Bytes => f.write_str("Bytes(uint8, 1d, C)"),
            Type::CharSeq(n) => write!(f, "[char x {n}]"),
            Type::Record {
                fields,
                size,
                aligned,
            } => {
                f.write_str("Record(")?;
                for (i, fd) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}[type={};offset={}", fd.name, fd.ty, fd.offset)?;
                    if let Some(t) = &fd.title {
                        write!(f, ";title={t}")?;
                    }
                    f.write_str("]")?;
                }
                let aligned = if *aligned { "True" } else { "False" };
                write!(f, ";{size};{aligned})")
            }
            Type::NumPyRandomGenerator => f.write_str("NumPyRandomGeneratorType"),
            Type::NestedArray { dtype, shape } => {
                let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                let comma = if shape.len() == 1 { "," } else { "" };
                write!(f, "nestedarray({dtype}, ({}{comma}))", dims.join(", "))
            }
            Type::UnicodeCharSeq(n) => write!(f, "[unichr x {n}]"),
            Type::Undefined => f.write_str("undefined"),
            Type::List {
                dtype, typed: true, ..
            } => write!(f, "ListType[{dtype}]"),
            Type::List {
                dtype, reflected, ..
            } => {
                let r = if *reflected { "reflected " } else { "" };
                write!(f, "{r}list({dtype})<iv=None>")
            }
            Type::Set { dtype, reflected } => {
                let r = if *reflected { "reflected " } else { "" };
                write!(f, "{r}set({dtype})")
            }
            Type::Dict { key, value } => write!(f, "DictType[{key},{value}]<iv=None>"),
            Type::TypeRef(t) => write!(f, "typeref[{t}]"),
            Type::ClassInstance { id, name } => f.write_str(&crate::jitclass::describe(*id, name)),
            Type::LiteralStrKeyDict { keys, literals, .. } => {
                // Numba's name: the repr of its `literal_value` dict.
                let items: Vec<String> = keys
                    .iter()
                    .zip(literals)
                    .map(|(k, v)| format!("Literal[str]({k}): {v}"))
                    .collect();
                write!(f, "LiteralStrKey[Dict]({{{}}})", items.join(", "))
            }
            Type::DictView { dict, kind } => {
                let k = ["keys", "values", "items"][(*kind).min(2) as usize];
                write!(f, "{k}[{dict}]")
            }
            Type::PyObject => f.write_str("pyobject"),
            Type::Opaque { name, .. } => f.write_str(name),
            Type::RangeState64 => f.write_str("range_state_int64"),
            Type::RangeIter64 => f.write_str("range_iter_int64"),
            Type::Pair(a, b) => write!(f, "pair<{a}, {b}>"),
            Type::UniTuple(t, n) => write!(f, "UniTuple({t} x {n})"),
            Type::Tuple(items) => {
                let s: Vec<String> = items.iter().map(|t| t.to_string()).collect();
                write!(f, "Tuple({})", s.join(", "))
            }
            Type::Module(m) => write!(f, "Module(<module '{m}'>)"),
            Type::Function(k) => match k.split_once('.') {
                Some((m, n)) => write!(f, "Function(<built-in function {n}> of {m})"),
                // Builtin classes print as classes (`Function(<class 'range'>)`).
                None if numba_ir::global::BUILTIN_CLASSES.contains(&k.as_str()) => {
                    write!(f, "Function(<class '{k}'>)")
                }
                None => write!(f, "Function(<built-in function {k}>)"),
            },
            Type::NumberClass(t) => write!(f, "class({t})"),
            Type::Dispatcher { name, .. } => write!(f, "type(CPUDispatcher(<function {name}>))"),
            Type::UFunc { name, gufunc, .. } => {
                let kind = if *gufunc { "GUFunc" } else { "DUFunc" };
                write!(f, "Function(<numba._{kind} '{name}'>)")
            }
            Type::ExceptionClass(n) => write!(f, "ExceptionClass(<class '{n}'>)"),
            Type::ExceptionInstance(n) => write!(f, "ExceptionInstance(<class '{n}'>)"),
            Type::IntegerLiteral(v) => write!(f, "Literal[int]({v})"),
            Type::BooleanLiteral(v) => {
                write!(f, "Literal[bool]({})", if *v { "True" } else { "False" })
            }
            Type::StringLiteral(s) => write!(f, "Literal[str]({s})"),
            Type::Optional(t) => write!(f, "OptionalType({t})"),
            Type::Omitted(d) => write!(f, "omitted(default={d})"),
            Type::Array {
                dtype,
                ndim,
                layout,
                readonly,
            } => {
                if *readonly {
                    f.write_str("readonly ")?;
                }
                write!(f, "array({dtype}, {ndim}d, {layout})")
            }
            Type::NamedUniTuple {
                name, dtype, count, ..
            } => write!(f, "{name}({dtype} x {count})"),
            Type::NamedTuple { name, fields, .. } => {
                let s: Vec<String> = fields.iter().map(|t| t.to_string()).collect();
                write!(f, "{name}({})", s.join(", "))
            }
            Type::Slice(2) => f.write_str("slice<a:b>"),
            Type::Slice(_) => f.write_str("slice<a:b:c>"),
            Type::ArrayIter(a) => write!(f, "iter({a})"),
            Type::NumpyFlat(a) => write!(f, "array.flat({a})"),
            Type::NdEnumerate(a) => write!(f, "ndenumerate({a})"),
            Type::NdIndex(a) => match a.get() {
                Type::Array { ndim, .. } => write!(f, "ndindex(ndim={ndim})"),
                _ => write!(f, "ndindex({a})"),
            },
            Type::Enumerate(it) => write!(f, "enumerate({it})"),
            Type::Zip(its) => {
                let s: Vec<String> = its.iter().map(|t| t.to_string()).collect();
                write!(f, "zip({})", s.join(", "))
            }
            Type::DType(t) => write!(f, "dtype({t})"),
            Type::NPDatetime(u) => write!(f, "datetime64{}", crate::npdatetime::unit_suffix(*u)),
            Type::NPTimedelta(u) => write!(f, "timedelta64{}", crate::npdatetime::unit_suffix(*u)),
            Type::BoundFunction { key, this } => write!(f, "BoundFunction({key} for {this})"),
            Type::NamedTupleClass { name, .. } => write!(f, "class({name})"),
            Type::SliceLiteral(a, b, c) => {
                let p = |x: &Option<i64>| x.map_or("None".to_string(), |v| v.to_string());
                write!(f, "Literal[slice](slice({}, {}, {}))", p(a), p(b), p(c))
            }
            Type::EnumMember { name, int_enum, .. } => {
                let kind = if *int_enum {
                    "IntEnumMember"
                } else {
                    "EnumMember"
                };
                write!(f, "{kind}(<enum '{name}'>, int64)")
            }
            Type::EnumClass { name, int_enum, .. } => {
                let kind = if *int_enum {
                    "IntEnumClass"
                } else {
                    "EnumClass"
                };
                write!(f, "{kind}(<enum '{name}'>, int64)")
            }
            Type::Generator {
                func,
                args,
                has_finalizer,
                yield_type,
                ..
            } => {
                let s: Vec<String> = args.iter().map(|t| t.to_string()).collect();
                let args = if s.len() == 1 {
                    format!("({},)", s[0])
                } else {
                    format!("({})", s.join(", "))
                };
                write!(
                    f,
                    "{yield_type} generator(func=<function {func}>, args={args}, has_finalizer={})",
                    if *has_finalizer { "True" } else { "False" }
                )
            }
        }
    }
}

/// Parse a scalar type name (`int64`, `float64`, `bool`, `boolean`, `intp`, ...).
pub fn from_name(name: &str) -> Option<TypeId> {
    Some(match name {
        // Numba's C names too (`numba.types.intc`, `size_t`, ... on an LP64 host).
        "bool" | "boolean" | "b1" | "bool_" => BOOLEAN,
        "int8" | "i1" | "char" => INT8,
        "int16" | "i2" | "short" => INT16,
        "int32" | "i4" | "intc" => INT32,
        "int64" | "i8" | "intp" | "int_" | "long_" | "longlong" | "ssize_t" => INT64,
        "uint8" | "u1" | "byte" | "uchar" => UINT8,
        "uint16" | "u2" | "ushort" => UINT16,
        "uint32" | "u4" | "uintc" => UINT32,
        "uint64" | "u8" | "uintp" | "uint" | "ulong" | "ulonglong" | "size_t" => UINT64,
        "float16" | "f2" => FLOAT16,
        "float32" | "f4" | "float_" => FLOAT32,
        "float64" | "f8" | "double" => FLOAT64,
        "complex64" | "c8" => COMPLEX64,
        "complex128" | "c16" => COMPLEX128,
        "none" | "void" => NONE,
        "pyobject" => PYOBJECT,
        "unicode_type" => UNICODE,
        "Bytes(uint8, 1d, C)" => BYTES,
        "ellipsis" => intern(Type::Ellipsis),
        _ => return None,
    })
}

/// Parse a type as Numba prints it (`str(type)`): scalars, `none`, `unicode_type`,
/// `array(float64, 1d, C)` (optionally `readonly `), `UniTuple(int64 x 2)`,
/// `Tuple(int64, float64)`, `OptionalType(int64)`, `Literal[int](1)`,
/// `Literal[bool](True)`, `Literal[str](abc)`, `slice<a:b>`, `dtype(float64)`.
pub fn parse_type(text: &str) -> Option<TypeId> {
    let t = text.trim();
    if let Some(x) = from_name(t) {
        return Some(x);
    }
    if let Some(rest) = t.strip_prefix("readonly ") {
        let a = parse_type(rest)?;
        return match a.get() {
            Type::Array {
                dtype,
                ndim,
                layout,
                ..
            } => Some(intern(Type::Array {
                dtype,
                ndim,
                layout,
                readonly: true,
            })),
            _ => None,
        };
    }
    // Numba's `unaligned array(...)` (a packed record array's): numba-rs reads fields
    // with alignment 1 whatever the array says.
    if let Some(rest) = t.strip_prefix("unaligned ") {
        return parse_type(rest);
    }
    // Numba's list and set names (`reflected list(float64)<iv=None>`, `set(int64)`,
    // `ListType[int64]`), as a signature built from Numba's `typeof` carries them.
    let (reflected, rest) = match t.strip_prefix("reflected ") {
        Some(r) => (true, r),
        None => (false, t),
    };
    if let Some(inner) = rest
        .strip_prefix("list(")
        .and_then(|r| r.strip_suffix(")<iv=None>").or_else(|| r.strip_suffix(')')))
    {
        return Some(intern(Type::List {
            dtype: parse_type(inner)?,
            reflected,
            typed: false,
        }));
    }
    if let Some(inner) = rest.strip_prefix("set(").and_then(|r| r.strip_suffix(')')) {
        return Some(intern(Type::Set {
            dtype: parse_type(inner)?,
            reflected,
        }));
    }
    if let Some(inner) = t
        .strip_prefix("ListType[")
        .and_then(|r| r.strip_suffix(']'))
    {
        return Some(intern(Type::List {
            dtype: parse_type(inner)?,
            reflected: false,
            typed: true,
        }));
    }
    if t == "NumPyRandomGeneratorType" {
        return Some(intern(Type::NumPyRandomGenerator));
    }
    if t == "void*" || t == "voidptr" {
        return Some(intern(Type::VoidPtr));
    }
    if let Some(inner) = t.strip_prefix("Record(").and_then(|r| r.strip_suffix(')')) {
        return parse_record(inner);
    }
    if let Some(inner) = t
        .strip_prefix("nestedarray(")
        .and_then(|r| r.strip_suffix(')'))
    {
        let parts = split_top(inner);
        let [dtype, shape] = parts.as_slice() else {
            return None;
        };
        let dims = shape.strip_prefix('(')?.strip_suffix(')')?;
        let shape: Option<Vec<u32>> = split_top(dims)
            .into_iter()
            .filter(|d| !d.is_empty())
            .map(|d| d.parse().ok())
            .collect();
        return Some(intern(Type::NestedArray {
            dtype: parse_type(dtype)?,
            shape: shape?,
        }));
    }
    if let Some(n) = t.strip_prefix("[char x ").and_then(|r| r.strip_suffix(']')) {
        return Some(intern(Type::CharSeq(n.parse().ok()?)));
    }
    if let Some(t) = crate::npdatetime::parse(t) {
        return Some(t);
    }
    if let Some(n) = t
        .strip_prefix("[unichr x ")
        .and_then(|r| r.strip_suffix(']'))
    {
        return Some(intern(Type::UnicodeCharSeq(n.parse().ok()?)));
    }
    if let Some(base) = t.strip_suffix('*') {
        return Some(intern(Type::CPointer(parse_type(base)?)));
    }
    let call = |prefix: &str| -> Option<&str> { t.strip_prefix(prefix)?.strip_suffix(')') };
    if let Some(inner) = call("array(") {
        let parts = split_top(inner);
        let [dtype, ndim, layout] = parts.as_slice() else {
            return None;
        };
        let ndim: u32 = ndim.strip_suffix('d')?.parse().ok()?;
        let layout = match *layout {
            "C" => Layout::C,
            "F" => Layout::F,
            "A" => Layout::A,
            _ => return None,
        };
        return Some(array(parse_type(dtype)?, ndim, layout));
    }
    if let Some(inner) = call("UniTuple(") {
        let (e, n) = inner.rsplit_once(" x ")?;
        return Some(intern(Type::UniTuple(parse_type(e)?, n.parse().ok()?)));
    }
    if let Some(inner) = call("Tuple(") {
        let items: Option<Vec<TypeId>> = split_top(inner)
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(parse_type)
            .collect();
        return Some(intern(Type::Tuple(items?)));
    }
    if let Some(inner) = call("OptionalType(") {
        return Some(intern(Type::Optional(parse_type(inner)?)));
    }
    if let Some(inner) = call("dtype(") {
        return Some(intern(Type::DType(parse_type(inner)?)));
    }
    if let Some(v) = call("Literal[int](") {
        return Some(intern(Type::IntegerLiteral(v.parse().ok()?)));
    }
    if let Some(v) = call("Literal[bool](") {
        return Some(intern(Type::BooleanLiteral(match v {
            "True" => true,
            "False" => false,
            _ => return None,
        })));
    }
    if let Some(v) = call("Literal[str](") {
        return Some(intern(Type::StringLiteral(v.to_string())));
    }
    match t {
        "slice<a:b>" => Some(intern(Type::Slice(2))),
        "slice<a:b:c>" => Some(intern(Type::Slice(3))),
        _ => None,
    }
}

/// Split on commas not nested in brackets (an empty string gives no parts).
pub(crate) fn split_top(s: &str) -> Vec<&str> {
    split_top_at(s, ',')
}

/// `Record(<fields>;<size>;<aligned>)`'s inside, each field `name[type=T;offset=N]`
/// (`;title=X` or `;alignment=N` may follow), as Numba prints a record type.
fn parse_record(inner: &str) -> Option<TypeId> {
    let parts = split_top_at(inner, ';');
    let [fields_text, size, aligned] = parts.as_slice() else {
        return None;
    };
    let mut fields = Vec::new();
    for f in split_top(fields_text) {
        let open = f.find('[')?;
        let name = f[..open].to_string();
        let body = f[open + 1..].strip_suffix(']')?;
        let (mut ty, mut offset, mut title) = (None, None, None);
        for item in split_top_at(body, ';') {
            let (k, v) = item.split_once('=')?;
            match k {
                "type" => ty = Some(parse_type(v)?),
                "offset" => offset = Some(v.parse().ok()?),
                "title" => title = Some(v.to_string()),
                _ => {}
            }
        }
        fields.push(RecordField {
            name,
            ty: ty?,
            offset: offset?,
            title,
        });
    }
    Some(intern(Type::Record {
        fields,
        size: size.parse().ok()?,
        aligned: *aligned == "True",
    }))
}

/// `s` split at `sep` outside brackets and parentheses.
fn split_top_at(s: &str, sep: char) -> Vec<&str> {
    if s.trim().is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// A name for `t` that [`parse_cache_name`] turns back into `t` in another process (an
/// on-disk cache's entries name types so): Numba's name, except that a namedtuple,
/// whose name lacks its class and field names, is
/// `namedtuple[<class>|<name>|<field>,...](<field types>)`. `None` when there is no such
/// name.
pub fn cache_name(t: TypeId) -> Option<String> {
    if matches!(t.get(), Type::ClassInstance { .. }) {
        return crate::jitclass::cache_name(t);
    }
    if let Some((fields, names)) = namedtuple_fields(t) {
        let (Type::NamedTuple { name, class, .. } | Type::NamedUniTuple { name, class, .. }) =
            t.get()
        else {
            return None;
        };
        let items = fields
            .iter()
            .map(|&f| cache_name(f))
            .collect::<Option<Vec<_>>>()?;
        let text = format!(
            "namedtuple[{class}|{name}|{}]({})",
            names.join(","),
            items.join(", ")
        );
        return (parse_cache_name(&text) == Some(t)).then_some(text);
    }
    let text = t.to_string();
    (parse_type(&text) == Some(t)).then_some(text)
}

/// The type [`cache_name`] named.
pub fn parse_cache_name(text: &str) -> Option<TypeId> {
    if text.starts_with("record[") {
        return crate::jitclass::parse_cache_name(text);
    }
    let Some(rest) = text.strip_prefix("namedtuple[") else {
        return parse_type(text);
    };
    let (head, items) = rest.split_once("](")?;
    let items = items.strip_suffix(')')?;
    let mut parts = head.splitn(3, '|');
    let (class, name, names) = (parts.next()?, parts.next()?, parts.next()?);
    let names: Vec<String> = names
        .split(',')
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    let fields = split_top(items)
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| parse_cache_name(s.trim()))
        .collect::<Option<Vec<_>>>()?;
    (fields.len() == names.len()).then(|| namedtuple_of(name, class, &names, &fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names_round_trip_namedtuples() {
        let f = parse_type("float64").unwrap();
        let i = parse_type("int64").unwrap();
        let p = namedtuple_of("P", "m.P", &["x".into(), "y".into()], &[i, f]);
        let q = namedtuple_of("Q", "m.Q", &["a".into(), "b".into()], &[p, p]);
        for t in [f, p, q, parse_type("array(float64, 2d, C)").unwrap()] {
            let name = cache_name(t).expect("nameable");
            assert_eq!(parse_cache_name(&name), Some(t), "{name}");
        }
        assert_eq!(
            cache_name(p).as_deref(),
            Some("namedtuple[m.P|P|x,y](int64, float64)")
        );
    }

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
