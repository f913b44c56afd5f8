//! NumPy typing of array manipulation: joining (`concatenate`, `stack`, `hstack`,
//! `vstack`, `dstack`, `column_stack`), views (`expand_dims`, `flip`, `fliplr`, `flipud`,
//! `transpose`), copies and rearrangements (`roll`, `diff`, `unique`, `diag`, `ravel`,
//! `copy`, `asarray`) and counting (`bincount`, `histogram`; `searchsorted` is
//! numba-py's `_npdtfuncs` overload).
//!
//! Accepted arguments, result dtypes and layouts are Numba's (`numba/np/arrayobj.py`,
//! `numba/np/arraymath.py`): joined arrays take the unified dtype of their inputs and are
//! F-ordered only when every input is; views keep the input's dtype and read-only flag
//! with layout `A`; new arrays are C-ordered.

use numba_bytecode::Constant;

use crate::context::{BaseContext, FnTemplate};
use crate::conv::{tuple_items, unify};
use crate::numpy::{array_attr, array_parts, dtype_arg, sortable};
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// Parameter names of the manipulation functions, for keyword arguments.
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "numpy.concatenate" | "numpy.stack" => &["arrays", "axis"],
        "numpy.hstack" | "numpy.vstack" | "numpy.dstack" | "numpy.column_stack" => &["tup"],
        "numpy.expand_dims" => &["a", "axis"],
        "numpy.flip" | "numpy.fliplr" | "numpy.flipud" => &["m"],
        "numpy.roll" => &["a", "shift"],
        "numpy.diff" => &["a", "n"],
        "numpy.unique" => &["ar"],
        "numpy.bincount" => &["a", "weights", "minlength"],
        "numpy.histogram" => &["a", "bins", "range"],
        "numpy.diag" => &["v", "k"],
        "numpy.ravel" | "numpy.copy" => &["a"],
        "numpy.transpose" => &["a", "axes"],
        "numpy.asarray" => &["a", "dtype"],
        "numpy.lib.stride_tricks.as_strided" => &["x", "shape", "strides"],
        _ => return None,
    })
}

/// Defaults of the parameters keywords may skip over.
pub fn param_default(key: &str, param: &str) -> Option<Constant> {
    Some(match (key, param) {
        ("numpy.concatenate" | "numpy.stack", "axis") => Constant::Int(0),
        ("numpy.diff", "n") => Constant::Int(1),
        ("numpy.bincount", "weights") => Constant::None,
        ("numpy.bincount", "minlength") => Constant::Int(0),
        ("numpy.histogram", "bins") => Constant::Int(10),
        ("numpy.histogram", "range") => Constant::None,
        ("numpy.diag", "k") => Constant::Int(0),
        ("numpy.transpose", "axes") | ("numpy.asarray", "dtype") => Constant::None,
        ("numpy.lib.stride_tricks.as_strided", "shape" | "strides") => Constant::None,
        _ => return None,
    })
}

fn sig(key: &str, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::Function(key.to_string()),
    }
}

fn int(t: TypeId) -> bool {
    t.unliteral().is_integer()
}

/// A real (not complex) number or bool.
fn real(t: TypeId) -> bool {
    let t = t.unliteral();
    t.is_scalar() && !t.is_complex()
}

/// A non-empty tuple of arrays: the arrays' parts.
fn array_tuple(t: TypeId) -> Option<Vec<(TypeId, u32, Layout, bool)>> {
    let items = tuple_items(t)?;
    if items.is_empty() {
        return None;
    }
    items.into_iter().map(array_parts).collect()
}

/// What joining the arrays of a tuple gives: the unified dtype, the common rank (all the
/// inputs must have the same one) and the layout (F only when every input is F).
fn joined(t: TypeId) -> Option<(TypeId, u32, Layout)> {
    let parts = array_tuple(t)?;
    let ndim = parts[0].1;
    if parts.iter().any(|p| p.1 != ndim) {
        return None;
    }
    let mut dtype = parts[0].0;
    for p in &parts[1..] {
        dtype = unify(dtype, p.0)?;
    }
    if !dtype.is_scalar() {
        return None;
    }
    let layout = if parts.iter().all(|p| p.2 == Layout::F) {
        Layout::F
    } else {
        Layout::C
    };
    Some((dtype, ndim, layout))
}

/// A `range=` of `histogram`: a pair of real numbers.
fn range_pair(t: TypeId) -> bool {
    tuple_items(t).is_some_and(|items| items.len() == 2 && items.iter().all(|&i| real(i)))
}

/// A view of `t` with layout A (read-only when `t` is).
fn view_a(t: TypeId, ndim: u32) -> Option<TypeId> {
    let (dtype, _, _, readonly) = array_parts(t)?;
    Some(intern(Type::Array {
        dtype,
        ndim,
        layout: Layout::A,
        readonly,
    }))
}

type Template = fn(&[TypeId]) -> Option<Signature>;

fn concatenate(a: &[TypeId]) -> Option<Signature> {
    let (tup, axis) = match a {
        [t] => (*t, None),
        [t, ax] if int(*ax) => (*t, Some(INT64)),
        _ => return None,
    };
    let (dtype, ndim, layout) = joined(tup)?;
    let mut args = vec![tup];
    args.extend(axis);
    Some(sig("numpy.concatenate", array(dtype, ndim, layout), args))
}

fn stack(a: &[TypeId]) -> Option<Signature> {
    let (tup, axis) = match a {
        [t] => (*t, None),
        [t, ax] if int(*ax) => (*t, Some(INT64)),
        _ => return None,
    };
    let (dtype, ndim, layout) = joined(tup)?;
    let mut args = vec![tup];
    args.extend(axis);
    Some(sig("numpy.stack", array(dtype, ndim + 1, layout), args))
}

/// `hstack`/`vstack`/`dstack`: at least 1, 2 or 3 dimensions.
fn nd_stack(key: &'static str, min: u32, a: &[TypeId]) -> Option<Signature> {
    let [tup] = a else { return None };
    let (dtype, ndim, layout) = joined(*tup)?;
    Some(sig(key, array(dtype, ndim.max(min), layout), vec![*tup]))
}

fn column_stack(a: &[TypeId]) -> Option<Signature> {
    let [tup] = a else { return None };
    let parts = array_tuple(*tup)?;
    // 1-d arrays become columns; 2-d ones are joined as they are.
    if parts.iter().any(|p| !(1..=2).contains(&p.1)) {
        return None;
    }
    let mut dtype = parts[0].0;
    for p in &parts[1..] {
        dtype = unify(dtype, p.0)?;
    }
    let layout = if parts.iter().all(|p| p.2 == Layout::F) {
        Layout::F
    } else {
        Layout::C
    };
    Some(sig(
        "numpy.column_stack",
        array(dtype, 2, layout),
        vec![*tup],
    ))
}

fn expand_dims(a: &[TypeId]) -> Option<Signature> {
    let [x, axis] = a else { return None };
    let (dtype, ndim, layout, readonly) = array_parts(*x)?;
    if !int(*axis) {
        return None;
    }
    let ret = intern(Type::Array {
        dtype,
        ndim: ndim + 1,
        layout: if ndim <= 1 { layout } else { Layout::A },
        readonly,
    });
    Some(sig("numpy.expand_dims", ret, vec![*x, INT64]))
}

fn flip(key: &'static str, min_ndim: u32, a: &[TypeId]) -> Option<Signature> {
    let [x] = a else { return None };
    let (_, ndim, ..) = array_parts(*x)?;
    if ndim < min_ndim {
        return None;
    }
    Some(sig(key, view_a(*x, ndim)?, vec![*x]))
}

fn roll(a: &[TypeId]) -> Option<Signature> {
    let [x, shift] = a else { return None };
    let (dtype, ndim, ..) = array_parts(*x)?;
    let s = shift.unliteral();
    if !(s.is_integer() || s == BOOLEAN) {
        return None;
    }
    Some(sig(
        "numpy.roll",
        array(dtype, ndim, Layout::C),
        vec![*x, INT64],
    ))
}

fn diff(a: &[TypeId]) -> Option<Signature> {
    let (x, n) = match a {
        [x] => (*x, None),
        [x, n] if int(*n) => (*x, Some(INT64)),
        _ => return None,
    };
    let (dtype, ndim, ..) = array_parts(x)?;
    // NumPy's ValueError for a 0-d array is Numba's TypingError.
    if ndim == 0 {
        return None;
    }
    let mut args = vec![x];
    args.extend(n);
    Some(sig("numpy.diff", array(dtype, ndim, Layout::C), args))
}

fn unique(a: &[TypeId]) -> Option<Signature> {
    let [x] = a else { return None };
    let (dtype, ..) = array_parts(*x)?;
    sortable(dtype).then(|| sig("numpy.unique", array(dtype, 1, Layout::C), vec![*x]))
}

fn bincount(a: &[TypeId]) -> Option<Signature> {
    let (x, weights, minlength) = match a {
        [x] => (*x, NONE, None),
        [x, w] => (*x, *w, None),
        [x, w, m] if int(*m) => (*x, *w, Some(INT64)),
        _ => return None,
    };
    let (dtype, ndim, ..) = array_parts(x)?;
    if ndim != 1 || !dtype.is_integer() {
        return None;
    }
    let out = if weights == NONE {
        INTP
    } else {
        let (w, wn, ..) = array_parts(weights)?;
        if wn != 1 || !real(w) {
            return None;
        }
        FLOAT64
    };
    let mut args = vec![x, weights];
    args.extend(minlength);
    Some(sig("numpy.bincount", array(out, 1, Layout::C), args))
}

fn histogram(a: &[TypeId]) -> Option<Signature> {
    let (x, bins, range) = match a {
        [x] => (*x, None, NONE),
        [x, b] => (*x, Some(*b), NONE),
        [x, b, r] => (*x, Some(*b), *r),
        _ => return None,
    };
    let (dtype, ..) = array_parts(x)?;
    if !(dtype.is_integer() || dtype.is_float()) {
        return None;
    }
    let hist = array(INTP, 1, Layout::C);
    let (bins_t, edges) = match bins {
        None => (None, array(FLOAT64, 1, Layout::C)),
        Some(b) if int(b) => (Some(INT64), array(FLOAT64, 1, Layout::C)),
        // An array of edges is returned as it is (the range is then ignored, as in
        // Numba and NumPy).
        Some(b) => {
            let (d, n, ..) = array_parts(b)?;
            if n != 1 || !(d.is_integer() || d.is_float()) {
                return None;
            }
            (Some(b), b)
        }
    };
    let edges_given = bins.is_some_and(|b| !int(b));
    if !(edges_given || range == NONE || range_pair(range)) {
        return None;
    }
    let mut args = vec![x];
    args.extend(bins_t);
    if a.len() == 3 {
        args.push(range);
    }
    Some(sig("numpy.histogram", tuple_of(&[hist, edges]), args))
}

fn diag(a: &[TypeId]) -> Option<Signature> {
    let (v, k) = match a {
        [v] => (*v, None),
        [v, k] if int(*k) => (*v, Some(INT64)),
        _ => return None,
    };
    let (dtype, ndim, ..) = array_parts(v)?;
    let ret = match ndim {
        1 => array(dtype, 2, Layout::C),
        2 => array(dtype, 1, Layout::C),
        _ => return None,
    };
    let mut args = vec![v];
    args.extend(k);
    Some(sig("numpy.diag", ret, args))
}

fn ravel(a: &[TypeId]) -> Option<Signature> {
    let [x] = a else { return None };
    let (dtype, _, layout, readonly) = array_parts(*x)?;
    // A C array's ravel is a view (it keeps readonly); a copy is writeable.
    let ret = intern(Type::Array {
        dtype,
        ndim: 1,
        layout: Layout::C,
        readonly: readonly && layout == Layout::C,
    });
    Some(sig("numpy.ravel", ret, vec![*x]))
}

fn transpose(a: &[TypeId]) -> Option<Signature> {
    match a {
        [x] => Some(sig("numpy.transpose", array_attr(*x, "T")?, a.to_vec())),
        [x, none] if *none == NONE => {
            Some(sig("numpy.transpose", array_attr(*x, "T")?, a.to_vec()))
        }
        // A permutation of the axes: a view with layout A.
        [x, axes] => {
            let (_, ndim, ..) = array_parts(*x)?;
            let items = tuple_items(*axes)?;
            if items.len() as u32 != ndim || !items.iter().all(|&i| int(i)) {
                return None;
            }
            Some(sig("numpy.transpose", view_a(*x, ndim)?, vec![*x, *axes]))
        }
        _ => None,
    }
}

/// `as_strided(x, shape, strides)`: a view of `x`'s memory with any shape and byte
/// strides (layout A; Numba's `as_strided`). A missing shape or strides is `x`'s own.
/// Like NumPy, nothing checks that the view stays inside `x`'s memory: the caller's
/// strides say where it reads.
fn as_strided(a: &[TypeId]) -> Option<Signature> {
    let ints = |t: TypeId| -> Option<usize> {
        let items = tuple_items(t)?;
        items.iter().all(|&i| int(i)).then_some(items.len())
    };
    let (_, xnd, ..) = array_parts(*a.first()?)?;
    let (nd, args) = match a {
        [x] => (xnd, vec![*x, NONE, NONE]),
        [x, s] if *s == NONE => (xnd, vec![*x, NONE, NONE]),
        [x, s] => (ints(*s)? as u32, vec![*x, *s, NONE]),
        [x, s, st] if *s == NONE && *st == NONE => (xnd, a.to_vec()),
        [x, s, st] if *s == NONE => {
            (ints(*st)? as u32 == xnd).then_some((xnd, vec![*x, NONE, *st]))?
        }
        [x, s, st] if *st == NONE => (ints(*s)? as u32, vec![*x, *s, NONE]),
        [x, s, st] => {
            let n = ints(*s)?;
            (ints(*st)? == n).then_some((n as u32, vec![*x, *s, *st]))?
        }
        _ => return None,
    };
    // Without strides the view keeps `x`'s, so the ranks must agree.
    if args[2] == NONE && nd != xnd {
        return None;
    }
    Some(sig(
        "numpy.lib.stride_tricks.as_strided",
        view_a(args[0], nd)?,
        args,
    ))
}

fn copy(a: &[TypeId]) -> Option<Signature> {
    let [x] = a else { return None };
    let (dtype, ndim, layout, _) = array_parts(*x)?;
    let layout = if layout == Layout::F {
        Layout::F
    } else {
        Layout::C
    };
    Some(sig("numpy.copy", array(dtype, ndim, layout), vec![*x]))
}

fn asarray(a: &[TypeId]) -> Option<Signature> {
    match a {
        // An array is returned as it is.
        [x] if x.is_array() => Some(sig("numpy.asarray", *x, a.to_vec())),
        [x, none] if x.is_array() && *none == NONE => Some(sig("numpy.asarray", *x, a.to_vec())),
        [x, none] if *none == NONE => crate::numpy::array_from(&[*x]),
        [x, d] if !x.is_array() => crate::numpy::array_from(&[*x, *d]),
        [x, d] => {
            let (dtype, ndim, layout, _) = array_parts(*x)?;
            let want = dtype_arg(*d)?;
            // A converted copy keeps an F-ordered array's order (NumPy's 'K').
            let ret = if want == dtype {
                *x
            } else if layout == Layout::F {
                array(want, ndim, Layout::F)
            } else {
                array(want, ndim, Layout::C)
            };
            Some(sig("numpy.asarray", ret, a.to_vec()))
        }
        // A scalar or a (nested) tuple makes a new array, as `np.array` does.
        [x] => crate::numpy::array_from(&[*x]),
        _ => None,
    }
}

impl BaseContext {
    /// The manipulation functions of the `numpy` module (installed by `install_numpy`).
    pub(crate) fn install_numpy_manip(&mut self) {
        let plain: [(&'static str, Template, &'static str); 13] = [
            (
                "numpy.concatenate",
                concatenate,
                "(tuple of arrays, axis=0)",
            ),
            ("numpy.stack", stack, "(tuple of arrays, axis=0)"),
            (
                "numpy.column_stack",
                column_stack,
                "(tuple of 1-d or 2-d arrays,)",
            ),
            ("numpy.expand_dims", expand_dims, "(array, axis: int)"),
            ("numpy.roll", roll, "(array, shift: int)"),
            ("numpy.diff", diff, "(array, n=1)"),
            ("numpy.unique", unique, "(array(int, float or bool),)"),
            (
                "numpy.bincount",
                bincount,
                "(array(int, 1d), weights=None, minlength=0)",
            ),
            (
                "numpy.histogram",
                histogram,
                "(array, bins=10 or array of edges, range=None or (min, max))",
            ),
            ("numpy.diag", diag, "(array(1d or 2d), k=0)"),
            ("numpy.ravel", ravel, "(array,)"),
            ("numpy.transpose", transpose, "(array, axes=None)"),
            ("numpy.asarray", asarray, "(array, dtype=None)"),
        ];
        for (key, f, doc) in plain {
            self.register(key, Box::new(FnTemplate(f, doc)));
        }
        self.register("numpy.copy", Box::new(FnTemplate(copy, "(array,)")));
        self.register(
            "numpy.lib.stride_tricks.as_strided",
            Box::new(FnTemplate(
                as_strided,
                "(array, shape=None or tuple of ints, strides=None or tuple of ints)",
            )),
        );
        for (key, min) in [
            ("numpy.hstack", 1),
            ("numpy.vstack", 2),
            ("numpy.dstack", 3),
        ] {
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| nd_stack(key, min, a),
                    "(tuple of arrays,)",
                )),
            );
        }
        for (key, min) in [("numpy.flip", 1), ("numpy.fliplr", 2), ("numpy.flipud", 1)] {
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| flip(key, min, a),
                    "(array,)",
                )),
            );
        }
    }
}
