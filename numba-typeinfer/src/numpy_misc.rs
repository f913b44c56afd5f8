//! NumPy typing of small array functions: `ptp`, `take` (function and method),
//! `ascontiguousarray`, `asfortranarray`, `real`/`imag` (functions), `conj`/`conjugate`
//! (function and method), `flatnonzero`, `atleast_1d`/`2d`/`3d` (one array), `finfo`/`iinfo`
//! (see [`crate::machine_info`]).
//!
//! Result types are Numba's: `ptp` keeps the dtype; `take` gives the dtype for an integer
//! index and a C array shaped like the indices for an index array; the layout functions
//! give C or F arrays of at least one axis; `atleast_Nd` gives views of layout `A`.

use crate::context::{BaseContext, FnTemplate};
use crate::numpy::array_parts;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

/// `np.take(a, indices)` / `a.take(indices)` (flat positions).
pub fn take(key: &str, a: TypeId, idx: TypeId) -> Option<Signature> {
    let (d, ..) = array_parts(a)?;
    let idx = idx.unliteral();
    let ret = if idx.is_integer() {
        d
    } else {
        let (id, n, ..) = array_parts(idx)?;
        if !id.is_integer() {
            return None;
        }
        array(d, n, Layout::C)
    };
    Some(sig(key, ret, vec![a, idx]))
}

/// `a.conj()` / `np.conj(a)`: a new C array (complex conjugated; real dtypes copied).
pub fn conj(key: &str, a: TypeId) -> Option<Signature> {
    let (d, n, ..) = array_parts(a)?;
    Some(sig(key, array(d, n, Layout::C), vec![a]))
}

impl BaseContext {
    pub(crate) fn install_numpy_misc(&mut self) {
        // `numba_rs._npbuffer.view(b)`: a `bytes` value's memory as a read-only uint8
        // array (`np.frombuffer` of bytes).
        self.register(
            "numba_rs._npbuffer.view",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [b] if b.unliteral() == BYTES => Some(sig(
                        "numba_rs._npbuffer.view",
                        intern(Type::Array {
                            dtype: UINT8,
                            ndim: 1,
                            layout: Layout::C,
                            readonly: true,
                        }),
                        vec![BYTES],
                    )),
                    _ => None,
                },
                "(bytes)",
            )),
        );
        self.register(
            "numpy.ptp",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] => {
                        let (d, ..) = array_parts(*x)?;
                        (!d.is_complex() && d != BOOLEAN).then(|| sig("numpy.ptp", d, vec![*x]))
                    }
                    _ => None,
                },
                "(array(int or float),)",
            )),
        );
        self.register(
            "numpy.take",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x, i] => take("numpy.take", *x, *i),
                    _ => None,
                },
                "(array, int or array of ints)",
            )),
        );
        for (name, layout) in [
            ("ascontiguousarray", Layout::C),
            ("asfortranarray", Layout::F),
        ] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] => {
                            let (d, n, have, readonly) = array_parts(*x)?;
                            // The array itself when already laid out so (a 1-d C or F
                            // array is both), keeping its read-only flag; else a copy.
                            let keeps = n == 0
                                || have == layout
                                || (n == 1 && matches!(have, Layout::C | Layout::F));
                            let ret = intern(Type::Array {
                                dtype: d,
                                ndim: n.max(1),
                                layout,
                                readonly: keeps && readonly,
                            });
                            Some(sig(key, ret, vec![*x]))
                        }
                        _ => None,
                    },
                    "(array,)",
                )),
            );
        }
        for name in ["real", "imag"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] if array_parts(*x).is_some_and(|p| p.0.is_complex()) => {
                            let ret = crate::numpy::array_attr(*x, name)?;
                            Some(sig(key, ret, vec![*x]))
                        }
                        // A number: its part (a complex one's float part; a real one's
                        // value, or zero for `imag`).
                        [x] if x.unliteral().is_scalar() => {
                            let x = x.unliteral();
                            // As the `.real`/`.imag` attributes type.
                            let ret = match x.get() {
                                Type::Complex { bits } => intern(Type::Float { bits: bits / 2 }),
                                _ => x,
                            };
                            Some(sig(key, ret, vec![x]))
                        }
                        _ => None,
                    },
                    "(array(complex),), (number,)",
                )),
            );
        }
        for name in ["conj", "conjugate"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            let inner = move |a: &[TypeId]| match a {
                [x] if x.unliteral().is_scalar() => {
                    Some(sig(key, x.unliteral(), vec![x.unliteral()]))
                }
                [x] => conj(key, *x),
                _ => None,
            };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| crate::numpy::ufunc_with_out(key, a, 1, &inner),
                    "(array,), (number,), (number or array, out)",
                )),
            );
        }
        self.register(
            "numpy.flatnonzero",
            Box::new(FnTemplate(
                |a: &[TypeId]| match a {
                    [x] if x.is_array() => Some(sig(
                        "numpy.flatnonzero",
                        array(INTP, 1, Layout::C),
                        vec![*x],
                    )),
                    _ => None,
                },
                "(array,)",
            )),
        );
        for name in ["finfo", "iinfo"] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] => {
                            let ret = crate::machine_info::info_type(name, *x)?;
                            Some(sig(key, ret, vec![*x]))
                        }
                        _ => None,
                    },
                    if name == "finfo" {
                        "(float or complex dtype, array or number,)"
                    } else {
                        "(integer dtype, array or number,)"
                    },
                )),
            );
        }
        for (name, n) in [("atleast_1d", 1), ("atleast_2d", 2), ("atleast_3d", 3)] {
            let key: &'static str = Box::leak(format!("numpy.{name}").into_boxed_str());
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] => {
                            let (d, nd, layout, ro) = array_parts(*x)?;
                            let ret = if nd >= n {
                                *x
                            } else {
                                intern(Type::Array {
                                    dtype: d,
                                    ndim: n,
                                    layout: if nd == 0 { layout } else { Layout::A },
                                    readonly: ro,
                                })
                            };
                            Some(sig(key, ret, vec![*x]))
                        }
                        _ => None,
                    },
                    "(array,)",
                )),
            );
        }
    }
}
