//! Typing of the `numba_rs.cuda` module inside kernels and device functions (Numba's
//! `numba.cuda` intrinsics): the thread indices (`cuda.threadIdx.x`, `blockIdx`,
//! `blockDim`, `gridDim`: int32, as Numba types its `Dim3`), `cuda.laneid`,
//! `cuda.warpsize`, `cuda.grid(n)`/`cuda.gridsize(n)` (int64, or a tuple of n),
//! `cuda.syncthreads()`, `cuda.shared.array`/`cuda.local.array` (a C-contiguous array of
//! constant shape) and `cuda.atomic.<op>(ary, idx, val)` (the element's old value).
//!
//! Only the cuda target lowers these (numba-lower's `cuda`); on the CPU they type but
//! have no implementation, which the lowering reports.

use crate::context::{BaseContext, FnTemplate};
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// The module's name as the host classifies it.
pub const MODULE: &str = "numba_rs.cuda";

/// The index objects: `cuda.<name>.x/.y/.z`.
pub const DIM3: [&str; 4] = ["threadIdx", "blockIdx", "blockDim", "gridDim"];

/// Warp shuffles: `cuda.<name>(mask, value, lane_or_delta)`.
pub const SHUFFLES: [&str; 4] = [
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
];

/// Warp votes: `cuda.<name>(mask, predicate)`.
pub const VOTES: [&str; 4] = ["ballot_sync", "all_sync", "any_sync", "eq_sync"];

/// Block-wide barriers that reduce a predicate: `cuda.<name>(predicate)`.
pub const BARRIER_REDUCTIONS: [&str; 3] =
    ["syncthreads_count", "syncthreads_and", "syncthreads_or"];

/// Bit intrinsics on integers: `cuda.<name>(x)`.
pub const BIT_OPS: [&str; 4] = ["popc", "brev", "clz", "ffs"];

/// Atomic operations on integers (all) and floats (`add sub max min exch`).
pub const ATOMICS: [&str; 10] = [
    "add", "sub", "max", "min", "nanmax", "nanmin", "exch", "and_", "or_", "xor",
];

/// Every function key this module types (`numba_rs.cuda.grid`, ...).
pub fn function_keys() -> Vec<String> {
    [
        "grid",
        "gridsize",
        "syncthreads",
        "syncwarp",
        "shared.array",
        "local.array",
    ]
    .into_iter()
    .chain(SHUFFLES)
    .chain(VOTES)
    .chain(BARRIER_REDUCTIONS)
    .chain(BIT_OPS)
    .chain([
        "fma",
        "cbrt",
        "selp",
        "activemask",
        "lanemask_lt",
        "atomic.cas",
        "atomic.inc",
        "atomic.dec",
        "atomic.compare_and_swap",
    ])
    .map(str::to_string)
    .chain(ATOMICS.iter().map(|op| format!("atomic.{op}")))
    .map(|k| format!("{MODULE}.{k}"))
    .collect()
}

/// Parameter names, for keyword arguments (`cuda.shared.array(128, dtype=np.float64)`).
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    let rest = key.strip_prefix(MODULE)?.strip_prefix('.')?;
    Some(match rest {
        "shared.array" | "local.array" => &["shape", "dtype"],
        "grid" | "gridsize" => &["ndim"],
        "shfl_sync" => &["mask", "value", "src_lane"],
        "shfl_up_sync" | "shfl_down_sync" => &["mask", "value", "delta"],
        "shfl_xor_sync" => &["mask", "value", "lane_mask"],
        "ballot_sync" | "all_sync" | "any_sync" | "eq_sync" => &["mask", "predicate"],
        "atomic.cas" => &["ary", "idx", "old", "val"],
        "atomic.inc" | "atomic.dec" => &["ary", "idx", "val"],
        r if r
            .strip_prefix("atomic.")
            .is_some_and(|op| ATOMICS.contains(&op)) =>
        {
            &["ary", "idx", "val"]
        }
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

/// `cuda.<attr>` and `cuda.<dim3>.<attr>`, typed on use (types are interned when a
/// kernel names them, not at start-up).
pub fn getattr(module: &str, attr: &str) -> Option<TypeId> {
    let sub = module.strip_prefix(MODULE)?;
    match sub {
        "" => match attr {
            a if DIM3.contains(&a) => Some(intern(Type::Module(format!("{MODULE}.{a}")))),
            "shared" | "local" | "atomic" => Some(intern(Type::Module(format!("{MODULE}.{attr}")))),
            "laneid" => Some(INT32),
            "warpsize" => Some(intern(Type::IntegerLiteral(32))),
            _ => None,
        },
        _ => {
            let dim = sub.strip_prefix('.')?;
            (DIM3.contains(&dim) && matches!(attr, "x" | "y" | "z")).then_some(INT32)
        }
    }
}

/// The constant dimensions of a shape argument: an int literal or a tuple of them.
pub fn const_shape(t: TypeId) -> Option<Vec<i64>> {
    match t.get() {
        Type::IntegerLiteral(n) => Some(vec![n]),
        Type::UniTuple(_, _) | Type::Tuple(_) => crate::conv::tuple_items(t)?
            .iter()
            .map(|i| match i.get() {
                Type::IntegerLiteral(n) => Some(n),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// `cuda.<name>` as a template key (made once per template, at start-up).
fn template_key(name: &str) -> &'static str {
    Box::leak(format!("{MODULE}.{name}").into_boxed_str())
}

/// Whether `idx` indexes one element of an array of `ndim` dimensions.
fn indexes_element(idx: TypeId, ndim: u32) -> bool {
    let n = crate::conv::tuple_items(idx).map_or(1, |i| i.len());
    is_index(idx) && n == ndim as usize
}

fn is_index(t: TypeId) -> bool {
    t.unliteral().is_integer()
        || crate::conv::tuple_items(t).is_some_and(|items| {
            !items.is_empty() && items.iter().all(|i| i.unliteral().is_integer())
        })
}

impl BaseContext {
    pub(crate) fn install_cuda(&mut self) {
        for name in ["grid", "gridsize"] {
            let key = template_key(name);
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [n] => match n.get() {
                            Type::IntegerLiteral(1) => Some(sig(key, INT64, vec![*n])),
                            Type::IntegerLiteral(k @ (2 | 3)) => {
                                Some(sig(key, intern(Type::UniTuple(INT64, k as u32)), vec![*n]))
                            }
                            _ => None,
                        },
                        _ => None,
                    },
                    "(ndim: a constant 1, 2 or 3)",
                )),
            );
        }
        let key = template_key("syncthreads");
        self.register(
            key,
            Box::new(FnTemplate(
                move |a: &[TypeId]| a.is_empty().then(|| sig(key, NONE, vec![])),
                "()",
            )),
        );
        for name in SHUFFLES {
            let key = template_key(name);
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [mask, value, lane]
                            if mask.unliteral().is_integer() && lane.unliteral().is_integer() =>
                        {
                            let v = value.unliteral();
                            let ok = matches!(
                                v.get(),
                                Type::Integer { bits: 32 | 64, .. } | Type::Float { bits: 32 | 64 }
                            );
                            ok.then(|| sig(key, v, vec![UINT32, v, INT32]))
                        }
                        _ => None,
                    },
                    "(mask, value: a 32- or 64-bit int or float, lane)",
                )),
            );
        }
        for name in VOTES {
            let key = template_key(name);
            let ret = if name == "ballot_sync" { UINT32 } else { INT32 };
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [mask, pred]
                            if mask.unliteral().is_integer()
                                && (*pred == BOOLEAN || pred.unliteral().is_integer()) =>
                        {
                            Some(sig(key, ret, vec![UINT32, pred.unliteral()]))
                        }
                        _ => None,
                    },
                    "(mask, predicate)",
                )),
            );
        }
        let key = template_key("syncwarp");
        self.register(
            key,
            Box::new(FnTemplate(
                move |a: &[TypeId]| match a {
                    [] => Some(sig(key, NONE, vec![])),
                    [m] if m.unliteral().is_integer() => Some(sig(key, NONE, vec![UINT32])),
                    _ => None,
                },
                "(mask=0xffffffff)",
            )),
        );
        for name in BARRIER_REDUCTIONS {
            let key = template_key(name);
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [p] if *p == BOOLEAN || p.unliteral().is_integer() => {
                            Some(sig(key, INT32, vec![p.unliteral()]))
                        }
                        _ => None,
                    },
                    "(predicate)",
                )),
            );
        }
        for name in BIT_OPS {
            let key = template_key(name);
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [x] if x.unliteral().is_integer() => {
                            let t = x.unliteral();
                            Some(sig(key, t, vec![t]))
                        }
                        _ => None,
                    },
                    "(an integer)",
                )),
            );
        }
        for (name, nargs) in [("fma", 3usize), ("cbrt", 1)] {
            let key = template_key(name);
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        let t = a.first()?.unliteral();
                        let t = if t.is_float() {
                            t
                        } else if t.is_number() {
                            FLOAT64
                        } else {
                            return None;
                        };
                        (a.len() == nargs && a.iter().all(|x| x.unliteral().is_number()))
                            .then(|| sig(key, t, vec![t; nargs]))
                    },
                    "(floats)",
                )),
            );
        }
        let key = template_key("selp");
        self.register(
            key,
            Box::new(FnTemplate(
                move |a: &[TypeId]| match a {
                    [c, x, y]
                        if (*c == BOOLEAN || c.unliteral().is_integer())
                            && x.unliteral() == y.unliteral()
                            && x.unliteral().is_number() =>
                    {
                        let t = x.unliteral();
                        Some(sig(key, t, vec![BOOLEAN, t, t]))
                    }
                    _ => None,
                },
                "(condition, a, b of one type)",
            )),
        );
        for name in ["activemask", "lanemask_lt"] {
            let key = template_key(name);
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| a.is_empty().then(|| sig(key, UINT32, vec![])),
                    "()",
                )),
            );
        }
        for op in ["cas", "inc", "dec", "compare_and_swap"] {
            let key = template_key(&format!("atomic.{op}"));
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| {
                        let (ary, rest) = a.split_first()?;
                        let Type::Array { dtype, ndim, .. } = ary.get() else {
                            return None;
                        };
                        let unsigned = matches!(
                            dtype.get(),
                            Type::Integer {
                                signed: false,
                                bits: 32 | 64
                            }
                        );
                        let int = matches!(dtype.get(), Type::Integer { bits: 32 | 64, .. });
                        match (op, rest) {
                            ("cas", [idx, old, val]) => (int
                                && indexes_element(*idx, ndim)
                                && old.unliteral().is_number()
                                && val.unliteral().is_number())
                            .then(|| sig(key, dtype, vec![*ary, *idx, dtype, dtype])),
                            ("compare_and_swap", [old, val]) => (int
                                && ndim == 1
                                && old.unliteral().is_number()
                                && val.unliteral().is_number())
                            .then(|| sig(key, dtype, vec![*ary, dtype, dtype])),
                            ("inc" | "dec", [idx, val]) => (unsigned
                                && indexes_element(*idx, ndim)
                                && val.unliteral().is_number())
                            .then(|| sig(key, dtype, vec![*ary, *idx, dtype])),
                            _ => None,
                        }
                    },
                    "(array, index, ...)",
                )),
            );
        }
        for space in ["shared", "local"] {
            let key = template_key(&format!("{space}.array"));
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [shape, dtype] => {
                            let dims = const_shape(*shape)?;
                            if dims.iter().any(|&d| d < 0) {
                                return None;
                            }
                            let d = crate::numpy::dtype_arg(*dtype)?;
                            let ret = array(d, dims.len() as u32, Layout::C);
                            Some(sig(key, ret, vec![*shape, *dtype]))
                        }
                        _ => None,
                    },
                    "(shape: a constant int or tuple of ints, dtype)",
                )),
            );
        }
        for op in ATOMICS {
            let key = template_key(&format!("atomic.{op}"));
            let bitwise = matches!(op, "and_" | "or_" | "xor");
            self.register(
                key,
                Box::new(FnTemplate(
                    move |a: &[TypeId]| match a {
                        [ary, idx, val] => {
                            let Type::Array { dtype, ndim, .. } = ary.get() else {
                                return None;
                            };
                            let ok_dtype = dtype.is_integer() || (!bitwise && dtype.is_float());
                            (ok_dtype && indexes_element(*idx, ndim) && val.unliteral().is_number())
                                .then(|| sig(key, dtype, vec![*ary, *idx, dtype]))
                        }
                        _ => None,
                    },
                    "(array, index, value)",
                )),
            );
        }
    }
}
