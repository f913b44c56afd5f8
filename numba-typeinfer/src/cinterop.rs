//! Typing of C interop helpers: cffi's `ffi.from_buffer(array)`, a pointer to an array's
//! data for a C function (calls to C functions themselves are typed from their
//! `ExternalFunctionPointer` signature in the inference engine).

use crate::context::{BaseContext, FunctionTemplate};
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// The key of `ffi.from_buffer` (an FFI object is typed as the module `cffi.ffi`).
pub const FROM_BUFFER: &str = "cffi.ffi.from_buffer";

struct FromBuffer;

impl FunctionTemplate for FromBuffer {
    fn generic(&self, args: &[TypeId]) -> Option<Signature> {
        let [a] = args else { return None };
        let Type::Array {
            dtype,
            ndim,
            layout,
            ..
        } = a.get()
        else {
            return None;
        };
        let contiguous = layout == Layout::C || (ndim <= 1 && layout == Layout::F);
        contiguous.then(|| Signature {
            ret: intern(Type::CPointer(dtype)),
            args: vec![*a],
            key: ImplKey::Function(FROM_BUFFER.into()),
        })
    }

    fn describe(&self) -> String {
        "(array) -> pointer to its data".into()
    }

    /// Numba's messages for arrays C cannot read as one buffer.
    fn explain(&self, args: &[TypeId]) -> Option<String> {
        let [a] = args else { return None };
        match a.get() {
            Type::Array {
                layout: Layout::A, ..
            } => Some("from_buffer() unsupported on non-contiguous buffers".into()),
            Type::Array {
                layout: Layout::F,
                ndim,
                ..
            } if ndim > 1 => {
                Some("from_buffer() only supports multidimensional arrays with C layout".into())
            }
            _ => None,
        }
    }
}

pub(crate) fn install(ctx: &mut BaseContext) {
    ctx.register(FROM_BUFFER, Box::new(FromBuffer));
}
