//! NumPy structured dtypes at the boundary: the `Record` type of a dtype (arrays of
//! records, `np.void` / `np.record` scalars, Numba's `Record` type objects), the dtype
//! of a `Record` type (results), and record arguments and results.

use std::collections::HashMap;
use std::sync::Mutex;

use numba_typeinfer::types::{self, RecordField, Type, TypeId};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::TypingError;

/// The dtype object of each record type built so far (results are made from it).
static DTYPES: Mutex<Option<HashMap<u32, Py<PyAny>>>> = Mutex::new(None);

/// The type of one field's dtype: a number, text, a datetime, a nested array or record.
fn field_type(dt: &Bound<'_, PyAny>) -> PyResult<TypeId> {
    let sub = dt.getattr("subdtype")?;
    if !sub.is_none() {
        let (base, shape): (Bound<'_, PyAny>, Vec<u32>) = sub.extract()?;
        let inner = field_type(&base)?;
        return Ok(types::intern(Type::NestedArray {
            dtype: inner,
            shape,
        }));
    }
    if !dt.getattr("names")?.is_none() {
        return record_type(dt);
    }
    let kind: String = dt.getattr("kind")?.extract()?;
    let itemsize: u32 = dt.getattr("itemsize")?.extract()?;
    let name: String = dt.getattr("name")?.extract()?;
    if !dt.getattr("isnative")?.extract::<bool>()? {
        return Err(TypingError::new_err(format!(
            "Cannot determine numba-rs type of a record field of non-native byte order ({})",
            dt.str()?
        )));
    }
    match kind.as_str() {
        "S" => Ok(types::intern(Type::CharSeq(itemsize))),
        "U" => Ok(types::intern(Type::UnicodeCharSeq(itemsize / 4))),
        _ => types::from_name(&name)
            .filter(|t| *t != types::intern(Type::Float { bits: 16 }))
            .or_else(|| numba_typeinfer::npdatetime::parse(&name))
            .ok_or_else(|| {
                TypingError::new_err(format!(
                    "Cannot determine numba-rs type of a record field of dtype {name}"
                ))
            }),
    }
}

/// The `Record` type of a structured dtype (`dtype.names` not None).
pub fn record_type(dt: &Bound<'_, PyAny>) -> PyResult<TypeId> {
    // Every key of `dtype.fields`, titles too, as Numba's record lists them (a title
    // reads the same bytes as its field's name).
    let items = dt.getattr("fields")?.call_method0("items")?;
    let mut out = Vec::new();
    for item in items.try_iter()? {
        let (name, info): (String, Bound<'_, PyAny>) = item?.extract()?;
        let info = info.cast::<PyTuple>()?;
        let ty = field_type(&info.get_item(0)?)?;
        let offset: u32 = info.get_item(1)?.extract()?;
        let title = if info.len() > 2 {
            Some(info.get_item(2)?.str()?.to_string())
        } else {
            None
        };
        out.push(RecordField {
            name,
            ty,
            offset,
            title,
        });
    }
    let size: u32 = dt.getattr("itemsize")?.extract()?;
    let aligned: bool = dt.getattr("isalignedstruct")?.extract()?;
    let t = types::intern(Type::Record {
        fields: out,
        size,
        aligned,
    });
    let mut g = DTYPES.lock().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert_with(HashMap::new)
        .entry(t.0)
        .or_insert_with(|| dt.clone().unbind());
    Ok(t)
}

/// The dtype format of a field type (`'<f8'`, `('<f4', (3, 2))`, a nested dtype).
fn field_format<'py>(py: Python<'py>, t: TypeId) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    Ok(match t.get() {
        Type::NestedArray { dtype, shape } => {
            let base = field_format(py, dtype)?;
            (base, PyTuple::new(py, shape)?)
                .into_pyobject(py)?
                .into_any()
        }
        Type::Record { .. } => dtype_of(py, t)?,
        Type::CharSeq(n) => np.getattr("dtype")?.call1((format!("S{n}"),))?,
        Type::UnicodeCharSeq(n) => np.getattr("dtype")?.call1((format!("U{n}"),))?,
        Type::NPDatetime(_) | Type::NPTimedelta(_) => np
            .getattr("dtype")?
            .call1((crate::boxing::datetime_dtype_str(t),))?,
        Type::Boolean => np.getattr("dtype")?.call1(("bool",))?,
        _ => np.getattr("dtype")?.call1((t.to_string(),))?,
    })
}

/// The dtype object of a record type: the one it was typed from, or one rebuilt from
/// its fields (names, formats, offsets, titles, size, alignment).
pub fn dtype_of<'py>(py: Python<'py>, t: TypeId) -> PyResult<Bound<'py, PyAny>> {
    {
        let g = DTYPES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = g.as_ref().and_then(|m| m.get(&t.0)) {
            return Ok(d.bind(py).clone());
        }
    }
    let Type::Record {
        fields,
        size,
        aligned,
    } = t.get()
    else {
        return Err(PyTypeError::new_err(format!("{t} is not a record type")));
    };
    let spec = PyDict::new(py);
    let names = PyList::empty(py);
    let formats = PyList::empty(py);
    let offsets = PyList::empty(py);
    let titles = PyList::empty(py);
    // A title's own entry (`x[...;title=x]`) is not a field of the dtype.
    for f in fields
        .iter()
        .filter(|f| f.title.as_deref() != Some(f.name.as_str()))
    {
        names.append(&f.name)?;
        formats.append(field_format(py, f.ty)?)?;
        offsets.append(f.offset)?;
        titles.append(f.title.clone())?;
    }
    spec.set_item("names", names)?;
    spec.set_item("formats", formats)?;
    spec.set_item("offsets", offsets)?;
    if titles.iter().any(|t| !t.is_none()) {
        spec.set_item("titles", titles)?;
    }
    spec.set_item("itemsize", size)?;
    let np = py.import("numpy")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("align", aligned)?;
    let d = np.getattr("dtype")?.call((spec,), Some(&kwargs))?;
    let mut g = DTYPES.lock().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert_with(HashMap::new)
        .insert(t.0, d.clone().unbind());
    Ok(d)
}

/// The record type of an `np.void` / `np.record` scalar of a structured dtype.
pub fn typeof_void(v: &Bound<'_, PyAny>) -> PyResult<Option<TypeId>> {
    let ty = v.get_type();
    let name = ty.name()?;
    if !(name == "void" || name == "record")
        || !ty
            .module()
            .is_ok_and(|m| m.to_str().is_ok_and(|m| m == "numpy"))
    {
        return Ok(None);
    }
    let dt = v.getattr("dtype")?;
    if dt.getattr("names")?.is_none() {
        return Ok(None);
    }
    record_type(&dt).map(Some)
}

/// A record argument: the address of the scalar's bytes (an `np.void` taken from an
/// array shares the array's memory, so writes reach the array, as under Numba).
pub fn encode(v: &Bound<'_, PyAny>, t: TypeId) -> PyResult<u64> {
    // Its type was checked by dispatch; only its kind is checked here.
    let cls = v.get_type();
    if !cls.name().is_ok_and(|n| n == "void" || n == "record") {
        return Err(PyTypeError::new_err(format!(
            "expected a NumPy record for {t}, got {}",
            v.get_type().name()?
        )));
    }
    // SAFETY: a zeroed Py_buffer filled by the exporter and released at once; the
    // scalar (alive for the call) keeps the memory.
    unsafe {
        let mut view: pyo3::ffi::Py_buffer = std::mem::zeroed();
        if pyo3::ffi::PyObject_GetBuffer(v.as_ptr(), &mut view, pyo3::ffi::PyBUF_SIMPLE) != 0 {
            return Err(PyErr::fetch(v.py()));
        }
        let p = view.buf as u64;
        pyo3::ffi::PyBuffer_Release(&mut view);
        Ok(p)
    }
}

/// A record result: a new `np.void` holding a copy of the bytes at `addr`.
pub fn decode(py: Python<'_>, addr: u64, t: TypeId) -> PyResult<Py<PyAny>> {
    let size = numba_typeinfer::records::size(t).unwrap_or(0) as usize;
    let dt = dtype_of(py, t)?;
    let np = py.import("numpy")?;
    let arr = np.getattr("zeros")?.call1((1, dt))?;
    let a = crate::ndarray::raw(&arr)
        .ok_or_else(|| PyTypeError::new_err("numpy.zeros gave no array"))?;
    // SAFETY: the new array holds `size` bytes; `addr` is a live record's bytes.
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, a.data, size) };
    Ok(arr.get_item(0)?.unbind())
}

/// A `bytes` (for `[char x n]`) or `str` (for `[unichr x n]`) argument stored as the
/// item NumPy would hold: truncated to `n` units, NUL padded.
pub fn encode_chars(
    v: &Bound<'_, PyAny>,
    t: TypeId,
    out: &mut crate::boxing::Slots,
) -> PyResult<()> {
    let mut bytes: Vec<u8> = match t.get() {
        Type::CharSeq(n) => {
            let b: Vec<u8> = if let Ok(s) = v.extract::<String>() {
                s.into_bytes()
            } else {
                v.extract()?
            };
            b.into_iter().take(n as usize).collect()
        }
        Type::UnicodeCharSeq(n) => {
            let s: String = v.extract()?;
            s.chars()
                .take(n as usize)
                .flat_map(|c| (c as u32).to_le_bytes())
                .collect()
        }
        _ => return Err(PyTypeError::new_err(format!("{t} is not a character type"))),
    };
    let slots = numba_lower::callconv::char_slots(t);
    bytes.resize(slots * 8, 0);
    out.extend(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())),
    );
    Ok(())
}

/// A character-array item result: the `bytes` / `str` it holds, trailing NULs dropped.
pub fn decode_chars(py: Python<'_>, words: &[u64], t: TypeId) -> PyResult<Py<PyAny>> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    Ok(match t.get() {
        Type::CharSeq(n) => {
            let mut b = bytes[..n as usize].to_vec();
            while b.last() == Some(&0) {
                b.pop();
            }
            pyo3::types::PyBytes::new(py, &b).into_any().unbind()
        }
        Type::UnicodeCharSeq(n) => {
            let mut cs: Vec<u32> = bytes[..4 * n as usize]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect();
            while cs.last() == Some(&0) {
                cs.pop();
            }
            let s: String = cs
                .into_iter()
                .map(|c| char::from_u32(c).unwrap_or('\u{fffd}'))
                .collect();
            s.into_pyobject(py)?.into_any().unbind()
        }
        _ => return Err(PyTypeError::new_err(format!("{t} is not a character type"))),
    })
}
