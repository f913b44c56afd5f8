//! The Python object for a jitted generator: what calling a generator function (or a
//! jitted function returning a generator) gives Python. It owns one reference to the
//! native generator object (numba-lower's `model::generator`) and drives it through the
//! pointers in its header: `__next__`/`send` call the native resume entry directly (no
//! Python frame in between), `close` the native close, and dropping the object the
//! native finalizer once the last reference goes.

use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;

use numba_lower::{boundary_shape, ExcInfo, Shape, STATUS_OK, STATUS_STOPIT};
use numba_typeinfer::types::{self, Type, TypeId};

use crate::boxing;

/// The object's header (numba-lower `model::generator::field`).
#[repr(C)]
struct Header {
    refcount: i64,
    next: usize,
    finalize: unsafe extern "C" fn(*mut Header),
    close: unsafe extern "C" fn(*mut Header),
    resume_entry: Option<ResumeEntry>,
    resume_index: i32,
}

type ResumeEntry =
    unsafe extern "C" fn(*mut u64, *mut *const ExcInfo, *mut Header, *const u64) -> i32;

const _: () =
    assert!(std::mem::offset_of!(Header, resume_index) == numba_lower::RESUME_INDEX_OFFSET);

/// A generator made by jitted code.
#[pyclass(module = "numba_rs", name = "generator")]
pub struct NativeGenerator {
    obj: *mut Header,
    gen_t: TypeId,
    name: String,
    yield_shape: Option<Shape>,
    send_shape: Option<Shape>,
    /// The Python arguments of the call that made it: arrays from Python have no NRT
    /// MemInfo, so the generator keeps their objects alive itself.
    keepalive: Option<Py<PyAny>>,
}

// SAFETY: the native state behind `obj` is plain memory whose references are NRT's
// atomic counts; pyo3 hands out `&mut NativeGenerator` only under the GIL and its
// borrow flag, so two threads never resume (or free) one generator at once, as CPython
// runs one thread's generator frame at a time.
unsafe impl Send for NativeGenerator {}
unsafe impl Sync for NativeGenerator {}

/// After a call whose result may be a generator made from `args`: keep them alive with it.
pub fn keep_args_alive(
    py: Python<'_>,
    result: &Py<PyAny>,
    args: &[*mut pyo3::ffi::PyObject],
) -> PyResult<()> {
    if let Ok(g) = result.bind(py).cast::<NativeGenerator>() {
        let objs: Vec<Py<PyAny>> = args
            .iter()
            .filter(|p| !p.is_null())
            // SAFETY: the caller holds these arguments for the call.
            .map(|&p| unsafe { Bound::from_borrowed_ptr(py, p) }.unbind())
            .collect();
        g.borrow_mut().keepalive = Some(pyo3::types::PyTuple::new(py, objs)?.into_any().unbind());
    }
    Ok(())
}

impl NativeGenerator {
    /// Wrap a native generator object, taking over the reference the caller holds.
    ///
    /// # Safety
    /// `obj` must be a live generator object of type `gen_t` made by numba-lower.
    pub unsafe fn adopt(obj: usize, gen_t: TypeId) -> Self {
        let (name, yield_shape, send_shape) = match gen_t.get() {
            Type::Generator {
                func,
                yield_type,
                send_type,
                ..
            } => (
                func.rsplit('.').next().unwrap_or(&func).to_string(),
                boundary_shape(yield_type).ok(),
                (send_type != types::NONE)
                    .then(|| boundary_shape(send_type).ok())
                    .flatten(),
            ),
            _ => (String::from("?"), None, None),
        };
        NativeGenerator {
            obj: obj as *mut Header,
            gen_t,
            name,
            yield_shape,
            send_shape,
            keepalive: None,
        }
    }

    /// The object's address, for passing it to jitted code (borrowed).
    pub fn address(&self) -> usize {
        self.obj as usize
    }

    pub fn gen_type(&self) -> TypeId {
        self.gen_t
    }

    fn resume(&self, py: Python<'_>, sent: Option<&[u64]>) -> PyResult<Py<PyAny>> {
        if self.obj.is_null() {
            return Err(PyStopIteration::new_err(()));
        }
        // SAFETY: obj is a live generator object (we hold a reference).
        let header = unsafe { &*self.obj };
        let (Some(entry), Some(shape)) = (header.resume_entry, self.yield_shape.as_ref()) else {
            return Err(PyTypeError::new_err(format!(
                "the values of {} cannot cross into Python yet",
                self.gen_t
            )));
        };
        let mut ret: smallvec::SmallVec<[u64; 8]> =
            smallvec::SmallVec::from_elem(0, shape.slots().max(1));
        let mut exc: *const ExcInfo = std::ptr::null();
        let sent_ptr = sent.map_or(std::ptr::null(), |s| s.as_ptr());
        // SAFETY: the entry was generated for this object's type; ret has room for the
        // yielded value's slots and sent (when given) holds the send type's slots.
        // Through the stack guard: the body may recurse (RecursionError, not a crash).
        let status = unsafe {
            numba_nrt::stack_guard::call_guarded_resume(
                std::mem::transmute::<ResumeEntry, numba_nrt::stack_guard::GuardedResume>(entry),
                ret.as_mut_ptr(),
                (&mut exc as *mut *const ExcInfo).cast(),
                self.obj.cast(),
                sent_ptr,
            )
        };
        if status == numba_nrt::stack_guard::STACK_OVERFLOW {
            return Err(pyo3::exceptions::PyRecursionError::new_err(
                "maximum recursion depth exceeded",
            ));
        }
        match status {
            STATUS_OK => match shape {
                // The common scalars without the general decoder.
                Shape::Leaf(
                    numba_lower::Leaf::Int {
                        bits: 64,
                        signed: true,
                    },
                    _,
                ) => Ok((ret[0] as i64).into_pyobject(py)?.into_any().unbind()),
                Shape::Leaf(numba_lower::Leaf::Float, _) => Ok(f64::from_bits(ret[0])
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()),
                _ => {
                    let mut pos = 0;
                    boxing::decode(py, &ret, &mut pos, shape)
                }
            },
            STATUS_STOPIT => Err(PyStopIteration::new_err(())),
            _ => Err(crate::call::status_error(py, status, exc)),
        }
    }
}

#[pymethods]
impl NativeGenerator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.resume(py, None)
    }

    /// Resume with `value` as the result of the paused `yield` (CPython's semantics:
    /// a just-started generator only accepts None).
    fn send(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        if value.is_none() {
            return self.resume(py, None);
        }
        // SAFETY: obj is live while we hold our reference.
        let started = !self.obj.is_null() && unsafe { (*self.obj).resume_index } != 0;
        if !started && !self.obj.is_null() {
            return Err(PyTypeError::new_err(
                "can't send non-None value to a just-started generator",
            ));
        }
        match &self.send_shape {
            // The generator never reads a yield's value: what is sent is dropped.
            None => self.resume(py, None),
            Some(shape) => {
                let mut slots = boxing::Slots::new();
                boxing::encode(value, shape, &mut slots).map_err(|e| {
                    PyTypeError::new_err(format!(
                        "cannot send {} to {}: {e}",
                        value
                            .get_type()
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default(),
                        self.gen_t
                    ))
                })?;
                self.resume(py, Some(&slots))
            }
        }
    }

    /// Release what the paused generator holds; later `next` calls raise StopIteration.
    fn close(&self) {
        if !self.obj.is_null() {
            // SAFETY: obj is live; close only touches the object.
            unsafe { ((*self.obj).close)(self.obj) };
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<generator object {} at {:#x}>",
            self.name, self.obj as usize
        )
    }

    /// The generator's numba-rs type.
    #[getter]
    fn _numba_type_(&self) -> String {
        self.gen_t.to_string()
    }
}

impl Drop for NativeGenerator {
    fn drop(&mut self) {
        if self.obj.is_null() {
            return;
        }
        // SAFETY: we own one reference; the last one finalizes (and frees) the object.
        unsafe {
            (*self.obj).refcount -= 1;
            if (*self.obj).refcount == 0 {
                ((*self.obj).finalize)(self.obj);
            }
        }
    }
}
