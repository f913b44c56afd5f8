//! `np.finfo` and `np.iinfo`: the machine limits of a float or integer dtype, as Numba
//! gives them (a namedtuple of constants, `numba.np.arraymath.finfo`/`iinfo`; here the
//! classes `numba_rs.np_info.finfo`/`iinfo`).
//!
//! The argument is a dtype (`np.float32`, `a.dtype`), an array (its dtype) or a number
//! (its type), as Numba's `getattr(arg, 'dtype', arg)`. A complex dtype's `finfo` is its
//! float part's; `iinfo` of a bool or a float and `finfo` of an integer are rejected, as
//! NumPy rejects them. The values are NumPy's, computed here from IEEE 754 and the
//! integer widths: the compiler never asks Python.

use crate::numpy::{array_parts, dtype_arg};
use crate::types::*;

/// One field's value: its type is the field type the namedtuple declares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InfoValue {
    Int(i128),
    Float(f64),
}

/// `finfo` fields, in Numba's order (`_finfo_supported`).
pub const FINFO_FIELDS: [&str; 15] = [
    "eps",
    "epsneg",
    "iexp",
    "machep",
    "max",
    "maxexp",
    "min",
    "minexp",
    "negep",
    "nexp",
    "nmant",
    "precision",
    "resolution",
    "tiny",
    "bits",
];

/// `iinfo` fields, in Numba's order.
pub const IINFO_FIELDS: [&str; 3] = ["min", "max", "bits"];

/// The dtype `np.finfo(t)` / `np.iinfo(t)` describes.
fn described(t: TypeId) -> Option<TypeId> {
    let t = t.unliteral();
    dtype_arg(t)
        .or_else(|| array_parts(t).map(|p| p.0))
        .or_else(|| t.is_scalar().then_some(t))
}

/// The fields' types and values of `np.finfo(arg)` (`func == "finfo"`) or `np.iinfo(arg)`.
pub fn machine_info(func: &str, arg: TypeId) -> Option<Vec<(TypeId, InfoValue)>> {
    let d = described(arg)?;
    match (func, d.get()) {
        ("iinfo", Type::Integer { bits, signed }) => {
            let (min, max) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            // Typed as Numba types the Python ints: int64, or uint64 past int64's range.
            let ty = |v: i128| if v > i64::MAX as i128 { UINT64 } else { INT64 };
            Some(
                [min, max, i128::from(bits)]
                    .into_iter()
                    .map(|v| (ty(v), InfoValue::Int(v)))
                    .collect(),
            )
        }
        ("finfo", Type::Float { bits }) => float_info(bits),
        ("finfo", Type::Complex { bits }) => float_info(bits / 2),
        _ => None,
    }
}

/// NumPy's `finfo` of an IEEE binary32/binary64 float.
fn float_info(bits: u8) -> Option<Vec<(TypeId, InfoValue)>> {
    // (exponent bits, mantissa bits, precision, resolution, float type)
    let (nexp, nmant, precision, resolution, ft): (i32, i32, i32, f64, TypeId) = match bits {
        32 => (8, 23, 6, 1e-6, FLOAT32),
        64 => (11, 52, 15, 1e-15, FLOAT64),
        _ => return None,
    };
    let maxexp = 1i32 << (nexp - 1);
    let minexp = 2 - maxexp;
    let (eps, max, tiny) = if bits == 32 {
        (
            f64::from(f32::EPSILON),
            f64::from(f32::MAX),
            f64::from(f32::MIN_POSITIVE),
        )
    } else {
        (f64::EPSILON, f64::MAX, f64::MIN_POSITIVE)
    };
    let f = |v: f64| (ft, InfoValue::Float(v));
    let i = |v: i32| (INT64, InfoValue::Int(i128::from(v)));
    Some(vec![
        f(eps),
        f(eps / 2.0),
        i(nexp),
        i(-nmant),
        f(max),
        i(maxexp),
        f(-max),
        i(minexp),
        i(-nmant - 1),
        i(nexp),
        i(nmant),
        i(precision),
        // Rounded to the float type, as NumPy's `float32(1e-06)`.
        f(if bits == 32 {
            f64::from(resolution as f32)
        } else {
            resolution
        }),
        f(tiny),
        i(i32::from(bits)),
    ])
}

/// The namedtuple type `np.finfo(arg)` / `np.iinfo(arg)` returns.
pub fn info_type(func: &str, arg: TypeId) -> Option<TypeId> {
    let values = machine_info(func, arg)?;
    let names: Vec<String> = match func {
        "finfo" => FINFO_FIELDS.iter().map(|s| s.to_string()).collect(),
        _ => IINFO_FIELDS.iter().map(|s| s.to_string()).collect(),
    };
    let fields: Vec<TypeId> = values.iter().map(|v| v.0).collect();
    Some(namedtuple_of(
        func,
        &format!("numba_rs.np_info.{func}"),
        &names,
        &fields,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(func: &str, t: TypeId) -> Vec<InfoValue> {
        machine_info(func, t)
            .unwrap()
            .into_iter()
            .map(|v| v.1)
            .collect()
    }

    #[test]
    fn finfo_matches_numpy() {
        // NumPy 2's np.finfo(np.float64) / np.finfo(np.float32), field by field.
        let f64_ = values("finfo", intern(Type::NumberClass(FLOAT64)));
        let want: [f64; 15] = [
            2.220446049250313e-16,
            1.1102230246251565e-16,
            11.0,
            -52.0,
            1.7976931348623157e308,
            1024.0,
            -1.7976931348623157e308,
            -1022.0,
            -53.0,
            11.0,
            52.0,
            15.0,
            1e-15,
            2.2250738585072014e-308,
            64.0,
        ];
        for (got, want) in f64_.iter().zip(want) {
            match got {
                InfoValue::Float(v) => assert_eq!(*v, want),
                InfoValue::Int(v) => assert_eq!(*v as f64, want),
            }
        }
        let f32_ = values("finfo", intern(Type::NumberClass(COMPLEX64)));
        assert_eq!(f32_[0], InfoValue::Float(f64::from(1.1920929e-07f32)));
        assert_eq!(f32_[1], InfoValue::Float(f64::from(5.9604645e-08f32)));
        assert_eq!(f32_[4], InfoValue::Float(f64::from(3.4028235e38f32)));
        assert_eq!(f32_[7], InfoValue::Int(-126));
        assert_eq!(f32_[12], InfoValue::Float(f64::from(1e-6f32)));
        assert_eq!(f32_[13], InfoValue::Float(f64::from(1.1754944e-38f32)));
        assert_eq!(f32_[14], InfoValue::Int(32));
    }

    #[test]
    fn iinfo_matches_numpy() {
        let u64_ = machine_info("iinfo", intern(Type::NumberClass(UINT64))).unwrap();
        assert_eq!(u64_[1], (UINT64, InfoValue::Int(18446744073709551615)));
        assert_eq!(
            values("iinfo", INT8),
            [InfoValue::Int(-128), InfoValue::Int(127), InfoValue::Int(8)]
        );
        assert!(machine_info("iinfo", FLOAT64).is_none());
        assert!(machine_info("iinfo", BOOLEAN).is_none());
        assert!(machine_info("finfo", INT32).is_none());
    }
}
