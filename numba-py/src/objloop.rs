//! Inner loops of object-mode ufunc kernels (`vectorize(..., forceobj=True)`,
//! `guvectorize(..., forceobj=True)`): NumPy calls one loop that runs the Python kernel
//! for each element (or each core slice) under the GIL, as Numba's object-mode loop
//! does. Elements cross as Python numbers (Numba's boxing of the declared scalar types),
//! results are converted back as Numba's unboxing does (`int()` truncation, `float()`,
//! `complex()`, truth), core slices as NumPy views over the operands' memory. A Python
//! exception stops the loop and stays pending, and NumPy raises it from the call.

use std::ffi::{c_char, c_void};

use numpy::npyffi::{NPY_ARRAY_ALIGNED, NPY_ARRAY_WRITEABLE, PY_ARRAY_API};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

/// One operand of a loop.
struct Operand {
    /// NumPy's kind (`b`, `i`, `u`, `f`, `c`) and item size of the element type.
    kind: u8,
    size: usize,
    /// NumPy's type number, for views.
    typenum: i32,
    /// The kernel gets an array (a view of its core slice), not a number.
    array: bool,
    /// Its core dimensions, as indices into the gufunc's distinct dimensions.
    core: Vec<usize>,
}

struct ObjectLoop {
    func: Py<PyAny>,
    nin: usize,
    ops: Vec<Operand>,
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(object_loop, m)?)?;
    Ok(())
}

/// The loop address, its data pointer and the capsule keeping the data alive, for a
/// kernel `func` with `nin` inputs and `operands` given as `(kind, itemsize, typenum,
/// is_array, core dimension indices)`.
#[pyfunction]
fn object_loop(
    py: Python<'_>,
    func: Py<PyAny>,
    nin: usize,
    operands: Vec<(String, usize, i32, bool, Vec<usize>)>,
) -> PyResult<(usize, usize, Py<PyCapsule>)> {
    let mut ops = Vec::new();
    for (kind, size, typenum, array, core) in operands {
        let k = kind.bytes().next().unwrap_or(b'?');
        if !matches!(
            (k, size),
            (b'b', 1) | (b'i' | b'u', 1 | 2 | 4 | 8) | (b'f', 4 | 8) | (b'c', 8 | 16)
        ) {
            return Err(PyValueError::new_err(format!(
                "an object-mode ufunc operand of kind {kind}{size} is not supported"
            )));
        }
        ops.push(Operand {
            kind: k,
            size,
            typenum,
            array,
            core,
        });
    }
    let spec = Box::new(ObjectLoop { func, nin, ops });
    let data = &*spec as *const ObjectLoop as usize;
    let capsule =
        PyCapsule::new_with_value_and_destructor(py, spec, c"numba_rs.object_loop", |_, _| {})?;
    Ok((run as *const () as usize, data, capsule.unbind()))
}

/// NumPy's inner-loop signature.
unsafe extern "C" fn run(
    args: *mut *mut c_char,
    dims: *mut isize,
    steps: *mut isize,
    data: *mut c_void,
) {
    // SAFETY: `data` is the ObjectLoop `object_loop` made, kept alive by the ufunc's
    // storage; NumPy passes one pointer and one step per operand (then the core steps)
    // and the outer count followed by the core dimensions.
    let spec = unsafe { &*(data as *const ObjectLoop) };
    Python::attach(|py| {
        if let Err(e) = unsafe { run_loop(py, spec, args, dims, steps) } {
            // The first error of a call is the one raised.
            if !PyErr::occurred(py) {
                e.restore(py);
            }
        }
    });
}

unsafe fn run_loop(
    py: Python<'_>,
    spec: &ObjectLoop,
    args: *mut *mut c_char,
    dims: *mut isize,
    steps: *mut isize,
) -> PyResult<()> {
    let nargs = spec.ops.len();
    let n = unsafe { *dims };
    // Each operand's core strides start after the outer steps, in operand order.
    let mut core_at = Vec::with_capacity(nargs);
    let mut at = nargs;
    for op in &spec.ops {
        core_at.push(at);
        at += op.core.len();
    }
    let func = spec.func.bind(py);
    for i in 0..n {
        let ptr = |k: usize| unsafe { (*args.add(k)).offset(i * *steps.add(k)) as *mut u8 };
        let mut items = Vec::with_capacity(nargs);
        for (k, op) in spec.ops.iter().enumerate() {
            let p = ptr(k);
            if op.array {
                let shape: Vec<isize> = if op.core.is_empty() {
                    vec![1]
                } else {
                    op.core
                        .iter()
                        .map(|&d| unsafe { *dims.add(1 + d) })
                        .collect()
                };
                let strides: Vec<isize> = if op.core.is_empty() {
                    vec![op.size as isize]
                } else {
                    (0..op.core.len())
                        .map(|j| unsafe { *steps.add(core_at[k] + j) })
                        .collect()
                };
                items.push(unsafe { view(py, op, p, &shape, &strides) }?);
            } else if k < spec.nin {
                items.push(unsafe { boxed(py, op, p) }?);
            }
        }
        let r = func.call1(PyTuple::new(py, items)?)?;
        // A vectorize kernel returns its output; a gufunc kernel writes into views.
        if let Some((k, op)) = spec
            .ops
            .iter()
            .enumerate()
            .skip(spec.nin)
            .find(|(_, op)| !op.array)
        {
            unsafe { store(op, ptr(k), &r) }?;
        }
    }
    Ok(())
}

/// The element at `p` as the Python number Numba boxes it as.
unsafe fn boxed<'py>(py: Python<'py>, op: &Operand, p: *const u8) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY (all reads): `p` points at one element of the operand's kind and size.
    let part = if op.kind == b'c' {
        op.size / 2
    } else {
        op.size
    };
    let float = |k: usize| unsafe {
        if part == 4 {
            f64::from((p as *const f32).add(k).read_unaligned())
        } else {
            (p as *const f64).add(k).read_unaligned()
        }
    };
    Ok(match op.kind {
        b'b' => unsafe { *p != 0 }.into_pyobject(py)?.to_owned().into_any(),
        b'i' => unsafe {
            match op.size {
                1 => i64::from(*(p as *const i8)),
                2 => i64::from((p as *const i16).read_unaligned()),
                4 => i64::from((p as *const i32).read_unaligned()),
                _ => (p as *const i64).read_unaligned(),
            }
        }
        .into_pyobject(py)?
        .into_any(),
        b'u' => unsafe {
            match op.size {
                1 => u64::from(*p),
                2 => u64::from((p as *const u16).read_unaligned()),
                4 => u64::from((p as *const u32).read_unaligned()),
                _ => (p as *const u64).read_unaligned(),
            }
        }
        .into_pyobject(py)?
        .into_any(),
        b'f' => float(0).into_pyobject(py)?.into_any(),
        _ => pyo3::types::PyComplex::from_doubles(py, float(0), float(1)).into_any(),
    })
}

/// Store the kernel's result at `p` as the output's type (Numba's unboxing: `int()`
/// truncated to the width, `float()`, `complex()`, truth).
unsafe fn store(op: &Operand, p: *mut u8, r: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = r.py();
    let builtins = py.import("builtins")?;
    unsafe {
        match op.kind {
            b'b' => *p = u8::from(r.is_truthy()?),
            b'i' | b'u' => {
                let v: i128 = builtins.getattr("int")?.call1((r,))?.extract()?;
                match op.size {
                    1 => *p = v as u8,
                    2 => (p as *mut u16).write_unaligned(v as u16),
                    4 => (p as *mut u32).write_unaligned(v as u32),
                    _ => (p as *mut u64).write_unaligned(v as u64),
                }
            }
            b'f' => {
                let v: f64 = builtins.getattr("float")?.call1((r,))?.extract()?;
                if op.size == 4 {
                    (p as *mut f32).write_unaligned(v as f32);
                } else {
                    (p as *mut f64).write_unaligned(v);
                }
            }
            _ => {
                let c = builtins.getattr("complex")?.call1((r,))?;
                let re: f64 = c.getattr("real")?.extract()?;
                let im: f64 = c.getattr("imag")?.extract()?;
                if op.size == 8 {
                    (p as *mut f32).write_unaligned(re as f32);
                    (p as *mut f32).add(1).write_unaligned(im as f32);
                } else {
                    (p as *mut f64).write_unaligned(re);
                    (p as *mut f64).add(1).write_unaligned(im);
                }
            }
        }
    }
    Ok(())
}

/// A writable NumPy view of `shape`/`strides` over the memory at `p` (no owner: it is
/// valid while the loop runs).
unsafe fn view<'py>(
    py: Python<'py>,
    op: &Operand,
    p: *mut u8,
    shape: &[isize],
    strides: &[isize],
) -> PyResult<Bound<'py, PyAny>> {
    unsafe {
        let descr = PY_ARRAY_API.PyArray_DescrFromType(py, op.typenum);
        let subtype = numpy::npyffi::get_type_object(py, numpy::npyffi::NpyTypes::PyArray_Type);
        let mut shape = shape.to_vec();
        let mut strides = strides.to_vec();
        let obj = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            subtype,
            descr,
            shape.len() as i32,
            shape.as_mut_ptr(),
            strides.as_mut_ptr(),
            p as *mut c_void,
            NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, obj)
    }
}
