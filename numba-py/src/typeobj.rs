//! The Python face of numba-rs types: the `_Type` base class that `numba_rs.types`
//! subclasses with Numba's class hierarchy (`Integer`, `Array`, `UniTuple`, ...), and the
//! functions that class layer is built on: a type's kind and fields ([`type_info`]) and
//! the constructors ([`type_make`]). Every type handed to Python goes through
//! [`py_type`], so it is an instance of its Numba class and `isinstance` answers as in
//! Numba.

use std::sync::OnceLock;

use numba_typeinfer::types::{self, TypeId};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

/// The `numba_rs.types` object for a type (one per typecode, made by
/// `numba_rs.types._from_code`).
pub(crate) fn py_type(py: Python<'_>, t: TypeId) -> PyResult<Py<PyAny>> {
    static FROM_CODE: OnceLock<Py<PyAny>> = OnceLock::new();
    let f = match FROM_CODE.get() {
        Some(f) => f,
        None => {
            let f = py.import("numba_rs.types")?.getattr("_from_code")?.unbind();
            FROM_CODE.get_or_init(|| f)
        }
    };
    Ok(f.bind(py).call1((t.0,))?.unbind())
}

/// Python objects for a list of types.
pub(crate) fn py_types(py: Python<'_>, ts: &[TypeId]) -> PyResult<Vec<Py<PyAny>>> {
    ts.iter().map(|&t| py_type(py, t)).collect()
}

/// A numba-rs type, printing as Numba prints it.
#[pyclass(module = "numba_rs.types", frozen, subclass, name = "_Type")]
#[derive(PartialEq, Eq, Hash, Clone)]
pub(crate) struct Type {
    pub(crate) code: u32,
}

#[pymethods]
impl Type {
    /// `numba_rs.types` builds instances of its classes from a typecode.
    #[new]
    fn new(code: u32) -> PyResult<Self> {
        if (code as usize) < types::count() {
            Ok(Type { code })
        } else {
            Err(PyValueError::new_err(format!(
                "no type has the typecode {code}"
            )))
        }
    }
    /// Equal to the same numba-rs type, and to a Numba type object that prints the same
    /// (`numba.core.types.int64`): code written against Numba compares signatures with
    /// Numba's types.
    fn __richcmp__(
        &self,
        other: &Bound<'_, PyAny>,
        op: pyo3::basic::CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let same = if let Ok(t) = other.cast::<Type>() {
            Some(t.get().code == self.code)
        } else {
            let module: String = other
                .get_type()
                .getattr("__module__")
                .and_then(|m| m.extract())
                .unwrap_or_default();
            if module.starts_with("numba.core.types") {
                // Numba's `unaligned array(...)` (a packed record array) is numba-rs's
                // array: fields are read with alignment 1 whatever the array's.
                let text = other.str()?.to_string();
                let text = text.strip_prefix("unaligned ").unwrap_or(&text);
                Some(text == TypeId(self.code).to_string())
            } else {
                None
            }
        };
        Ok(match (same, op) {
            (Some(s), pyo3::basic::CompareOp::Eq) => {
                s.into_pyobject(py)?.to_owned().into_any().unbind()
            }
            (Some(s), pyo3::basic::CompareOp::Ne) => {
                (!s).into_pyobject(py)?.to_owned().into_any().unbind()
            }
            _ => py.NotImplemented(),
        })
    }

    fn __hash__(&self) -> u64 {
        u64::from(self.code)
    }

    fn __repr__(&self) -> String {
        TypeId(self.code).to_string()
    }
    fn __str__(&self) -> String {
        TypeId(self.code).to_string()
    }
    /// The typecode (index in the process-wide type table).
    #[getter]
    fn typecode(&self) -> u32 {
        self.code
    }
    /// An array type's element type (Numba's `Array.dtype`); None for other types.
    #[getter]
    fn dtype(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match TypeId(self.code).get() {
            types::Type::Array { dtype, .. } => py_type(py, dtype).map(Some),
            _ => Ok(None),
        }
    }
    /// An array type's dimension count (Numba's `Array.ndim`); 0 for other types.
    #[getter]
    fn ndim(&self) -> u32 {
        match TypeId(self.code).get() {
            types::Type::Array { ndim, .. } => ndim,
            _ => 0,
        }
    }
    /// An array type's layout (`'C'`, `'F'` or `'A'`, Numba's `Array.layout`); None for
    /// other types.
    #[getter]
    fn layout(&self) -> Option<&'static str> {
        match TypeId(self.code).get() {
            types::Type::Array { layout, .. } => Some(match layout {
                types::Layout::C => "C",
                types::Layout::F => "F",
                types::Layout::A => "A",
            }),
            _ => None,
        }
    }
    /// `float64[:]`, `int32[:, ::1]` (C), `float64[::1, :]` (F), `float64[:, :, :]` (A):
    /// an array type of this dtype, as Numba's type objects build them.
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        let bad = || {
            PyTypeError::new_err(format!(
                "Can only index numba types with slices with no start or stop, got {}.",
                key.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        };
        // Whether each axis is `::1` (contiguous) or `:`.
        let mut unit = Vec::with_capacity(items.len());
        for item in &items {
            let slice = item.cast::<pyo3::types::PySlice>().map_err(|_| bad())?;
            if !slice.getattr("start")?.is_none() || !slice.getattr("stop")?.is_none() {
                return Err(bad());
            }
            let step = slice.getattr("step")?;
            if step.is_none() {
                unit.push(false);
            } else if step.extract::<i64>().ok() == Some(1) {
                unit.push(true);
            } else {
                return Err(bad());
            }
        }
        let n = unit.len();
        if n == 0 {
            return Err(bad());
        }
        let layout =
            match unit.iter().filter(|&&u| u).count() {
                0 => types::Layout::A,
                1 if unit[n - 1] => types::Layout::C,
                1 if unit[0] => types::Layout::F,
                1 => return Err(PyTypeError::new_err(
                    "Can only specify the step 1 on the first or last dimension of an array type",
                )),
                _ => {
                    return Err(PyTypeError::new_err(
                        "Can only specify one of [::1] in an array type",
                    ))
                }
            };
        let dtype = TypeId(self.code);
        if matches!(dtype.get(), types::Type::Array { .. }) {
            return Err(PyTypeError::new_err(format!(
                "an array type's dtype cannot be the array type {dtype}"
            )));
        }
        py_type(key.py(), types::array(dtype, n as u32, layout))
    }
    /// `float64(int64, int64)` builds a signature (`numba_rs.types.Signature`), as in
    /// `@njit(float64(int64))`.
    #[pyo3(signature = (*args))]
    fn __call__(slf: &Bound<'_, Self>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        for a in args.iter() {
            a.cast::<Type>().map_err(PyErr::from)?;
        }
        let py = slf.py();
        let sig_cls = py.import("numba_rs.types")?.getattr("Signature")?;
        Ok(sig_cls.call1((slf, args))?.unbind())
    }
}

/// A type's kind (the name `numba_rs.types` maps to its class) and its fields, as a
/// tuple of plain values and typecodes.
#[pyfunction]
pub(crate) fn _type_info(py: Python<'_>, code: u32) -> PyResult<(String, Py<PyTuple>)> {
    use types::Type as T;
    let t = TypeId(code);
    if code as usize >= types::count() {
        return Err(PyValueError::new_err(format!(
            "no type has the typecode {code}"
        )));
    }
    let codes = |v: &[TypeId]| v.iter().map(|t| t.0).collect::<Vec<u32>>();
    let layout = |l: types::Layout| l.to_string();
    let (kind, fields): (&str, Bound<'_, PyTuple>) = match t.get() {
        T::Boolean => ("boolean", PyTuple::empty(py)),
        T::Integer { bits, signed } => ("integer", (bits, signed).into_pyobject(py)?),
        T::Float { bits } => ("float", (bits,).into_pyobject(py)?),
        T::Complex { bits } => ("complex", (bits,).into_pyobject(py)?),
        T::NoneType => ("none", PyTuple::empty(py)),
        T::Unicode => ("unicode", PyTuple::empty(py)),
        T::Bytes => (
            "bytes",
            (types::UINT8.0, 1u32, "C", true).into_pyobject(py)?,
        ),
        T::CharSeq(n) => ("char_seq", (n,).into_pyobject(py)?),
        T::UnicodeCharSeq(n) => ("unicode_char_seq", (n,).into_pyobject(py)?),
        T::Undefined => ("undefined", PyTuple::empty(py)),
        T::List {
            dtype, typed: true, ..
        } => ("list_type", (dtype.0,).into_pyobject(py)?),
        T::List {
            dtype, reflected, ..
        } => ("list", (dtype.0, reflected).into_pyobject(py)?),
        T::Set { dtype, reflected } => ("set", (dtype.0, reflected).into_pyobject(py)?),
        T::Dict { key, value } => ("dict", (key.0, value.0).into_pyobject(py)?),
        T::DictView { dict, kind } => ("dict_view", (dict.0, kind).into_pyobject(py)?),
        T::ClassInstance { id, name } => ("class_instance", (id, name).into_pyobject(py)?),
        T::LiteralStrKeyDict {
            keys,
            values,
            literals,
        } => (
            "literal_str_key_dict",
            (keys, codes(&values), codes(&literals)).into_pyobject(py)?,
        ),
        T::PyObject => ("pyobject", PyTuple::empty(py)),
        T::Ellipsis => ("ellipsis", PyTuple::empty(py)),
        T::CPointer(d) => ("cpointer", (d.0,).into_pyobject(py)?),
        T::VoidPtr => ("voidptr", PyTuple::empty(py)),
        T::ExternalFunctionPointer { args, ret } => (
            "external_function_pointer",
            (codes(&args), ret.0).into_pyobject(py)?,
        ),
        T::ArrayCTypes(a) => ("array_ctypes", (a.0,).into_pyobject(py)?),
        T::RangeState64 => ("range", PyTuple::empty(py)),
        T::RangeIter64 => ("range_iter", PyTuple::empty(py)),
        T::UniTuple(d, n) => ("unituple", (d.0, n).into_pyobject(py)?),
        T::Tuple(items) => ("tuple", (codes(&items),).into_pyobject(py)?),
        T::Module(name) => ("module", (name,).into_pyobject(py)?),
        T::Function(key) => ("function", (key,).into_pyobject(py)?),
        T::NumberClass(i) => ("number_class", (i.0,).into_pyobject(py)?),
        T::Dispatcher { id, name } => ("dispatcher", (id, name).into_pyobject(py)?),
        T::UFunc { id, name, gufunc } => ("ufunc", (id, name, gufunc).into_pyobject(py)?),
        T::ExceptionClass(n) => ("exception_class", (n,).into_pyobject(py)?),
        T::ExceptionInstance(n) => ("exception_instance", (n,).into_pyobject(py)?),
        T::IntegerLiteral(v) => ("integer_literal", (v,).into_pyobject(py)?),
        T::BooleanLiteral(v) => ("boolean_literal", (v,).into_pyobject(py)?),
        T::StringLiteral(v) => ("string_literal", (v,).into_pyobject(py)?),
        T::Optional(i) => ("optional", (i.0,).into_pyobject(py)?),
        T::Omitted(text) => ("omitted", (text,).into_pyobject(py)?),
        T::Array {
            dtype,
            ndim,
            layout: l,
            readonly,
        } => (
            "array",
            (dtype.0, ndim, layout(l), readonly).into_pyobject(py)?,
        ),
        T::NamedUniTuple {
            name,
            dtype,
            count,
            names,
            class,
        } => (
            "named_tuple",
            (name, codes(&vec![dtype; count as usize]), names, class).into_pyobject(py)?,
        ),
        T::NamedTuple {
            name,
            fields,
            names,
            class,
        } => (
            "named_tuple",
            (name, codes(&fields), names, class).into_pyobject(py)?,
        ),
        T::Slice(n) => ("slice", (n,).into_pyobject(py)?),
        T::SliceLiteral(a, b, c) => ("slice_literal", (a, b, c).into_pyobject(py)?),
        T::DType(d) => ("dtype", (d.0,).into_pyobject(py)?),
        T::NPDatetime(u) => (
            "npdatetime",
            (numba_typeinfer::npdatetime::UNITS[u as usize],).into_pyobject(py)?,
        ),
        T::NPTimedelta(u) => (
            "nptimedelta",
            (numba_typeinfer::npdatetime::UNITS[u as usize],).into_pyobject(py)?,
        ),
        T::BoundFunction { key, this } => ("bound_function", (key, this.0).into_pyobject(py)?),
        T::EnumMember {
            name,
            class,
            int_enum,
        } => ("enum_member", (name, class, int_enum).into_pyobject(py)?),
        T::EnumClass {
            name,
            class,
            int_enum,
            ..
        } => ("enum_class", (name, class, int_enum).into_pyobject(py)?),
        T::NamedTupleClass { name, class, .. } => {
            ("named_tuple_class", (name, class).into_pyobject(py)?)
        }
        T::Generator {
            func, yield_type, ..
        } => ("generator", (func, yield_type.0).into_pyobject(py)?),
        T::ArrayIter(a) => ("array_iter", (a.0,).into_pyobject(py)?),
        T::Opaque { name, class } => ("opaque", (name, class).into_pyobject(py)?),
        T::NumPyRandomGenerator => ("np_generator", PyTuple::empty(py)),
        T::Record { fields, .. } => {
            let names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
            let codes: Vec<u32> = fields.iter().map(|f| f.ty.0).collect();
            let offsets: Vec<u32> = fields.iter().map(|f| f.offset).collect();
            (
                "record",
                (crate::records::dtype_of(py, t)?, names, codes, offsets).into_pyobject(py)?,
            )
        }
        _ => ("other", PyTuple::empty(py)),
    };
    Ok((kind.to_string(), fields.unbind()))
}

/// The typecode of a type `numba_rs.types` builds: `kind` names the constructor, `args`
/// its arguments (typecodes for types).
#[pyfunction]
pub(crate) fn _type_make(kind: &str, args: &Bound<'_, PyTuple>) -> PyResult<u32> {
    use types::Type as T;
    let ty = |i: usize| -> PyResult<TypeId> {
        let code: u32 = args.get_item(i)?.extract()?;
        if code as usize >= types::count() {
            return Err(PyValueError::new_err(format!(
                "no type has the typecode {code}"
            )));
        }
        Ok(TypeId(code))
    };
    let not_array = |t: TypeId, what: &str| -> PyResult<TypeId> {
        if t.is_array() {
            Err(PyTypeError::new_err(format!(
                "{what} cannot be the array type {t}"
            )))
        } else {
            Ok(t)
        }
    };
    let t = match kind {
        "array" => {
            let dtype = not_array(ty(0)?, "an array type's dtype")?;
            let ndim: u32 = args.get_item(1)?.extract()?;
            let layout = match args.get_item(2)?.extract::<String>()?.as_str() {
                "C" => types::Layout::C,
                "F" => types::Layout::F,
                "A" => types::Layout::A,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "an array layout is 'C', 'F' or 'A', not {other:?}"
                    )))
                }
            };
            let readonly: bool = args.get_item(3)?.extract()?;
            if ndim == 0 && layout != types::Layout::C {
                types::intern(T::Array {
                    dtype,
                    ndim,
                    layout: types::Layout::C,
                    readonly,
                })
            } else {
                types::intern(T::Array {
                    dtype,
                    ndim,
                    layout,
                    readonly,
                })
            }
        }
        "bytes" => types::BYTES,
        "char_seq" => types::intern(T::CharSeq(args.get_item(0)?.extract()?)),
        "unicode_char_seq" => types::intern(T::UnicodeCharSeq(args.get_item(0)?.extract()?)),
        "unituple" => {
            let n: u32 = args.get_item(1)?.extract()?;
            types::intern(T::UniTuple(ty(0)?, n))
        }
        "list_type" => numba_typeinfer::lists::typed_list_of(ty(0)?),
        "dict" => types::intern(T::Dict {
            key: ty(0)?.unliteral(),
            value: ty(1)?.unliteral(),
        }),
        // `(keys, value types)`: Numba's `LiteralStrKeyDict(literal_value)` read back.
        "literal_str_key_dict" => {
            let keys: Vec<String> = args.get_item(0)?.extract()?;
            let codes: Vec<u32> = args.get_item(1)?.extract()?;
            if keys.len() != codes.len()
                || keys.is_empty()
                || codes.iter().any(|&c| c as usize >= types::count())
            {
                return Err(PyValueError::new_err(
                    "a literal dict type needs one valid value type per key",
                ));
            }
            let literals: Vec<TypeId> = codes.into_iter().map(TypeId).collect();
            let values = literals
                .iter()
                .map(|v| numba_typeinfer::strings::held_text(v.unliteral()))
                .collect();
            types::intern(T::LiteralStrKeyDict {
                keys,
                values,
                literals,
            })
        }
        "list" | "set" => {
            let dtype = ty(0)?;
            let reflected: bool = args.get_item(1)?.extract()?;
            if kind == "list" {
                types::intern(T::List {
                    dtype,
                    reflected,
                    typed: false,
                })
            } else {
                types::intern(T::Set { dtype, reflected })
            }
        }
        "tuple" => {
            let items = (0..args.len()).map(ty).collect::<PyResult<Vec<_>>>()?;
            types::tuple_of(&items)
        }
        "optional" => {
            let inner = ty(0)?;
            match inner.get() {
                // Numba: Optional(Optional(t)) is Optional(t); Optional(none) is none.
                T::Optional(_) | T::NoneType => inner,
                _ => types::intern(T::Optional(inner)),
            }
        }
        "opaque" => types::intern(T::Opaque {
            name: args.get_item(0)?.extract()?,
            class: args.get_item(1)?.extract()?,
        }),
        "cpointer" => types::intern(T::CPointer(ty(0)?)),
        "voidptr" => types::intern(T::VoidPtr),
        "range" => types::RANGE_STATE64,
        "range_iter" => types::RANGE_ITER64,
        "slice" => types::intern(T::Slice(args.get_item(0)?.extract()?)),
        "dtype" => types::intern(T::DType(ty(0)?)),
        "npdatetime" | "nptimedelta" => {
            let unit: String = args.get_item(0)?.extract()?;
            let u = numba_typeinfer::npdatetime::unit_index(&unit)
                .ok_or_else(|| PyValueError::new_err(format!("unknown datetime unit {unit:?}")))?;
            types::intern(if kind == "npdatetime" {
                T::NPDatetime(u)
            } else {
                T::NPTimedelta(u)
            })
        }
        "number_class" => types::intern(T::NumberClass(ty(0)?)),
        "literal" => {
            let v = args.get_item(0)?;
            if v.is_instance_of::<pyo3::types::PyBool>() {
                types::intern(T::BooleanLiteral(v.extract()?))
            } else if let Ok(i) = v.extract::<i64>() {
                types::intern(T::IntegerLiteral(i))
            } else if let Ok(s) = v.cast::<PyString>() {
                types::intern(T::StringLiteral(s.to_string()))
            } else {
                return Err(PyTypeError::new_err(format!(
                    "numba-rs has no literal type for {}",
                    v.repr()?
                )));
            }
        }
        "omitted" => {
            let v = args.get_item(0)?;
            types::intern(T::Omitted(v.repr()?.to_string()))
        }
        // A NumPy structured dtype: its record type.
        "record_from_dtype" => crate::records::record_type(&args.get_item(0)?)?,
        "parse" => {
            let text: String = args.get_item(0)?.extract()?;
            types::parse_type(&text)
                .ok_or_else(|| PyTypeError::new_err(format!("numba-rs has no type {text}")))?
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "numba_rs.types cannot build a {other:?} type"
            )))
        }
    };
    Ok(t.0)
}

/// The Python class a class key names (a namedtuple's, an enum's), for the types'
/// `instance_class`.
#[pyfunction]
pub(crate) fn _class_by_key(py: Python<'_>, key: &str) -> PyResult<Py<PyAny>> {
    Ok(crate::boxing::class_by_key(py, key)?.unbind())
}
