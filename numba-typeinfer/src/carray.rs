//! `numba.carray(ptr, shape, dtype=None)` and `numba.farray`: a C or Fortran ordered
//! array viewing the memory a C pointer points at (no owner), as C callbacks read their
//! buffers. The pointer is `T*` (the dtype defaults to `T`, and must be `T` when given)
//! or `void*` (the dtype is required); the shape is an integer or a tuple of integers of
//! any width.

use crate::context::{BaseContext, FunctionTemplate};
use crate::numpy::{dtype_arg, shape_rank};
use crate::signature::{ImplKey, Signature};
use crate::types::{array, Layout, Type, TypeId, NONE};

struct CArray {
    key: &'static str,
    layout: Layout,
}

impl CArray {
    /// The array's type, or Numba's message for what is wrong.
    fn check(&self, args: &[TypeId]) -> Result<TypeId, String> {
        let (ptr, shape, dtype) = match args {
            [p, s] => (*p, *s, None),
            [p, s, d] if *d != NONE => (*p, *s, Some(*d)),
            [p, s, _] => (*p, *s, None),
            _ => return Err("carray() takes a pointer, a shape and an optional dtype".into()),
        };
        let given = match dtype {
            Some(d) => Some(dtype_arg(d).ok_or_else(|| "invalid dtype spec".to_string())?),
            None => None,
        };
        let elem = match (ptr.get(), given) {
            (Type::CPointer(t), None) => t,
            (Type::CPointer(t), Some(d)) if d == t => t,
            (Type::CPointer(_), Some(d)) => {
                return Err(format!("mismatching dtype '{d}' for pointer type '{ptr}'"))
            }
            (Type::VoidPtr, Some(d)) => d,
            (Type::VoidPtr, None) => {
                return Err("explicit dtype required for void* argument".into())
            }
            _ => return Err(format!("pointer argument expected, got '{ptr}'")),
        };
        let ndim = shape_rank(shape).ok_or_else(|| "invalid shape".to_string())?;
        Ok(array(elem, ndim, self.layout))
    }
}

impl FunctionTemplate for CArray {
    fn generic(&self, args: &[TypeId]) -> Option<Signature> {
        let ret = self.check(args).ok()?;
        Some(Signature {
            ret,
            args: args.iter().map(|a| a.unliteral()).collect(),
            key: ImplKey::Function(self.key.to_string()),
        })
    }
    fn describe(&self) -> String {
        "(T* or void*, int or tuple of ints, dtype=None)".into()
    }
    fn explain(&self, args: &[TypeId]) -> Option<String> {
        self.check(args).err()
    }
}

impl BaseContext {
    pub(crate) fn install_carray(&mut self) {
        // `numba_rs.carray` as a module attribute, `numba.carray` in code written for Numba.
        for (key, layout) in [
            ("numba.carray", Layout::C),
            ("numba.farray", Layout::F),
            ("numba_rs.carray", Layout::C),
            ("numba_rs.farray", Layout::F),
        ] {
            self.register(key, Box::new(CArray { key, layout }));
        }
    }
}
