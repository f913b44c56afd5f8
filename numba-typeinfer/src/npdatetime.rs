//! NumPy's `datetime64` and `timedelta64` (Numba's `npdatetime`): their units, the
//! operators between them and numbers, and the unit a mixed operation computes in.
//!
//! A value is an int64 count of its unit (since 1970-01-01 for a datetime), `i64::MIN`
//! being NaT. An operation on two values takes the finer of their units, as NumPy's type
//! resolution does; years and months convert to the other units only for datetimes
//! (through the calendar: a month is not a fixed number of days), so a timedelta in years
//! or months meets a timedelta in days (or finer) only as a `TypingError`.

use numba_ir::{BinOp, UnaryOp};

use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// NumPy's unit codes, coarsest first; the last is the generic unit (a plain count that
/// takes the unit of whatever it meets).
pub const UNITS: &[&str] = &[
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "",
];

/// The generic unit's index.
pub const GENERIC: u8 = 13;

/// NaT's value.
pub const NAT: i64 = i64::MIN;

/// `[D]` for a unit (nothing for the generic one), as NumPy and Numba print it.
pub fn unit_suffix(u: u8) -> String {
    match UNITS.get(u as usize) {
        Some(&"") | None => String::new(),
        Some(s) => format!("[{s}]"),
    }
}

/// The index of a unit code (`""` is generic).
pub fn unit_index(code: &str) -> Option<u8> {
    UNITS.iter().position(|&u| u == code).map(|i| i as u8)
}

/// `datetime64[D]` / `timedelta64[ns]` / `datetime64` (generic) as a type.
pub fn parse(text: &str) -> Option<TypeId> {
    // Numba's constructor spelling in signatures: `NPDatetime('us')`, `NPTimedelta('')`.
    for (prefix, kind) in [("NPDatetime(", true), ("NPTimedelta(", false)] {
        if let Some(inner) = text.strip_prefix(prefix).and_then(|r| r.strip_suffix(')')) {
            let u = unit_index(inner.trim().trim_matches(['\'', '"']))?;
            return Some(if kind { datetime(u) } else { timedelta(u) });
        }
    }
    let (kind, rest) = if let Some(r) = text.strip_prefix("datetime64") {
        (true, r)
    } else {
        (false, text.strip_prefix("timedelta64")?)
    };
    let unit = if rest.is_empty() {
        GENERIC
    } else {
        unit_index(rest.strip_prefix('[')?.strip_suffix(']')?)?
    };
    Some(if kind {
        datetime(unit)
    } else {
        timedelta(unit)
    })
}

/// A dtype string of a datetime64 / timedelta64 (`'M8[D]'`, `'<m8[s]'`,
/// `'datetime64[ms]'`) as its type.
pub fn parse_dtype_str(text: &str) -> Option<TypeId> {
    let t = text.trim_start_matches(['<', '=', '|']);
    if let Some(rest) = t.strip_prefix("M8") {
        return parse(&format!("datetime64{rest}"));
    }
    if let Some(rest) = t.strip_prefix("m8") {
        return parse(&format!("timedelta64{rest}"));
    }
    parse(t)
}

pub fn datetime(u: u8) -> TypeId {
    intern(Type::NPDatetime(u))
}

pub fn timedelta(u: u8) -> TypeId {
    intern(Type::NPTimedelta(u))
}

/// Whether the unit is a year or a month (calendar units).
fn calendar(u: u8) -> bool {
    u <= 1
}

/// How many `fine` units one `coarse` unit holds, for linear units (`W` and finer, or
/// `Y` to `M`); None when one is a calendar unit and the other is not.
pub fn factor(coarse: u8, fine: u8) -> Option<i64> {
    if coarse == GENERIC || fine == GENERIC || coarse == fine {
        return Some(1);
    }
    if coarse > fine {
        return None;
    }
    if calendar(coarse) != calendar(fine) {
        return None;
    }
    // Each unit in terms of the next finer one.
    const STEP: [i64; 13] = [12, 0, 7, 24, 60, 60, 1000, 1000, 1000, 1000, 1000, 1000, 1];
    let mut f: i64 = 1;
    for u in coarse..fine {
        f = f.checked_mul(STEP[u as usize])?;
    }
    Some(f)
}

/// The unit two timedeltas compute in: the finer one (a generic one takes the other's);
/// None when they do not convert.
pub fn common_timedelta_unit(a: u8, b: u8) -> Option<u8> {
    let (coarse, fine) = order(a, b);
    factor(coarse, fine).map(|_| fine)
}

/// The unit a datetime and a datetime or timedelta compute in: the finer one. A datetime
/// in years or months converts to days and finer through the calendar; a timedelta in
/// years or months does not.
pub fn common_datetime_unit(dt: u8, other: u8, other_is_timedelta: bool) -> Option<u8> {
    let (coarse, fine) = order(dt, other);
    if factor(coarse, fine).is_some() {
        return Some(fine);
    }
    // Calendar datetime with a linear unit (weeks and finer): through days, in that
    // unit (NumPy's `M8[Y] + m8[W]` is `M8[W]`).
    if calendar(dt) && !calendar(other) {
        return Some(other);
    }
    if !other_is_timedelta && calendar(other) && !calendar(dt) {
        return Some(dt);
    }
    None
}

fn order(a: u8, b: u8) -> (u8, u8) {
    if a == GENERIC {
        (b, b)
    } else if b == GENERIC || a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

fn unit_of(t: TypeId) -> Option<(bool, u8)> {
    match t.get() {
        Type::NPDatetime(u) => Some((true, u)),
        Type::NPTimedelta(u) => Some((false, u)),
        _ => None,
    }
}

/// Whether the type is a datetime64 or timedelta64 scalar.
pub fn is_datetime_like(t: TypeId) -> bool {
    // Primitives answer without a table read (the boundary asks for every int slot).
    !t.is_primitive() && unit_of(t).is_some()
}

fn sig(op: BinOp, ret: TypeId, args: Vec<TypeId>) -> Signature {
    Signature {
        ret,
        args,
        key: ImplKey::BinOp(op),
    }
}

/// The typing of `lhs op rhs` when either is a datetime64 or timedelta64: the operands
/// converted to the signature's argument types (the common unit) and the result.
pub fn binop(op: BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    let (l, r) = (lhs.unliteral(), rhs.unliteral());
    let cmp = op.is_comparison();
    match (unit_of(l), unit_of(r)) {
        (Some((false, a)), Some((false, b))) => {
            let u = common_timedelta_unit(a, b)?;
            let td = timedelta(u);
            let ret = match op {
                _ if cmp => BOOLEAN,
                BinOp::Add | BinOp::Sub | BinOp::Mod => td,
                BinOp::TrueDiv => FLOAT64,
                BinOp::FloorDiv => INT64,
                _ => return None,
            };
            Some(sig(op, ret, vec![td, td]))
        }
        (Some((true, a)), Some((true, b))) => {
            let u = common_datetime_unit(a, b, false)?;
            let dt = datetime(u);
            let ret = match op {
                _ if cmp => BOOLEAN,
                BinOp::Sub => timedelta(u),
                _ => return None,
            };
            Some(sig(op, ret, vec![dt, dt]))
        }
        (Some((true, a)), Some((false, b))) if matches!(op, BinOp::Add | BinOp::Sub) => {
            let u = common_datetime_unit(a, b, true)?;
            Some(sig(op, datetime(u), vec![datetime(u), timedelta(u)]))
        }
        (Some((false, a)), Some((true, b))) if op == BinOp::Add => {
            let u = common_datetime_unit(b, a, true)?;
            Some(sig(op, datetime(u), vec![timedelta(u), datetime(u)]))
        }
        // A timedelta scaled by a number (ints as int64, floats as float64).
        (Some((false, a)), None) if matches!(op, BinOp::Mul | BinOp::TrueDiv | BinOp::FloorDiv) => {
            let n = number_operand(r)?;
            Some(sig(op, timedelta(a), vec![timedelta(a), n]))
        }
        (None, Some((false, b))) if op == BinOp::Mul => {
            let n = number_operand(l)?;
            Some(sig(op, timedelta(b), vec![n, timedelta(b)]))
        }
        _ => None,
    }
}

fn number_operand(t: TypeId) -> Option<TypeId> {
    if t.is_integer() || t == BOOLEAN {
        Some(INT64)
    } else if t.is_float() {
        Some(FLOAT64)
    } else {
        None
    }
}

/// `-td`, `+td`.
pub fn unary(op: UnaryOp, t: TypeId) -> Option<Signature> {
    match (op, t.get()) {
        (UnaryOp::Neg | UnaryOp::Pos, Type::NPTimedelta(_)) => Some(Signature {
            ret: t,
            args: vec![t],
            key: ImplKey::Unary(op),
        }),
        _ => None,
    }
}

/// Whether values of `from` convert to `to` (same kind, `to`'s unit at least as fine
/// and linearly related): a safe conversion, as NumPy's `same_kind` casting of units.
pub fn can_convert(from: TypeId, to: TypeId) -> bool {
    match (unit_of(from), unit_of(to)) {
        (Some((k1, a)), Some((k2, b))) if k1 == k2 => {
            a == b || b == GENERIC && a == GENERIC || factor(a, b).is_some() && a != GENERIC
        }
        _ => false,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (the civil calendar).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// NumPy's reading of a datetime string (`'2020'`, `'2020-03'`, `'2020-03-01'`,
/// `'2020-03-01T12'`, `...T12:30`, `...T12:30:15`, `...T12:30:15.250`, `'NaT'`): its
/// count and the unit its precision gives.
pub fn parse_datetime(text: &str) -> Option<(i64, u8)> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("nat") || t.is_empty() {
        return Some((NAT, GENERIC));
    }
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let mut parts = date.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: Option<i64> = match parts.next() {
        Some(m) => Some(m.parse().ok()?),
        None => None,
    };
    let day: Option<i64> = match parts.next() {
        Some(d) => Some(d.parse().ok()?),
        None => None,
    };
    let Some(month) = month else {
        return Some((year - 1970, 0));
    };
    if !(1..=12).contains(&month) {
        return None;
    }
    let Some(day) = day else {
        return Some(((year - 1970) * 12 + month - 1, 1));
    };
    let days = days_from_civil(year, month, day);
    let Some(time) = time else {
        return Some((days, 3));
    };
    let mut hms = time.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let m: Option<i64> = match hms.next() {
        Some(v) => Some(v.parse().ok()?),
        None => None,
    };
    let sec = hms.next();
    let hours = days * 24 + h;
    let Some(m) = m else {
        return Some((hours, 4));
    };
    let minutes = hours * 60 + m;
    let Some(sec) = sec else {
        return Some((minutes, 5));
    };
    let (whole, frac) = match sec.split_once('.') {
        Some((w, f)) => (w, f),
        None => (sec, ""),
    };
    let seconds = minutes * 60 + whole.parse::<i64>().ok()?;
    if frac.is_empty() {
        return Some((seconds, 6));
    }
    // Fractions: ms, us, ns ... by their digits (3 per unit).
    let digits = frac.len().div_ceil(3) * 3;
    let unit = 6 + (digits / 3) as u8;
    if unit > 12 {
        return None;
    }
    let padded = format!("{frac:0<digits$}");
    let scale = 10i64.checked_pow(digits as u32)?;
    Some((
        seconds.checked_mul(scale)? + padded.parse::<i64>().ok()?,
        unit,
    ))
}

/// The count `(value, unit)` expressed in the finer unit `to` (calendar units through
/// their first day).
pub fn rescale(value: i64, from: u8, to: u8) -> Option<i64> {
    if value == NAT || from == to || from == GENERIC || to == GENERIC {
        return Some(value);
    }
    if let Some(f) = factor(from, to) {
        return value.checked_mul(f);
    }
    if from <= 1 && to >= 2 {
        let months = if from == 0 { value * 12 } else { value };
        let days = days_from_civil(1970 + months.div_euclid(12), months.rem_euclid(12) + 1, 1);
        // Weeks count from the epoch's week, rounding down as NumPy does.
        if to == 2 {
            return Some(days.div_euclid(7));
        }
        return days.checked_mul(factor(3, to)?);
    }
    None
}

fn text_of(t: TypeId) -> Option<String> {
    match t.get() {
        Type::StringLiteral(s) => Some(s),
        _ => None,
    }
}

/// `np.datetime64(...)` / `np.timedelta64(...)` in compiled code: `(count, 'unit')`, a
/// constant date string (`'2020-03-01'`, its unit from its precision or given), or
/// `'NaT'`. Returns the value's type.
pub fn constructor(datetime_kind: bool, args: &[TypeId]) -> Option<TypeId> {
    let unit_arg = |t: &TypeId| text_of(*t).and_then(|u| unit_index(&u));
    let (first, unit) = match args {
        [x] => (*x, None),
        [x, u] => (*x, Some(unit_arg(u)?)),
        _ => return None,
    };
    let make = |u: u8| {
        if datetime_kind {
            datetime(u)
        } else {
            timedelta(u)
        }
    };
    if first.unliteral().is_integer() {
        return Some(make(unit.unwrap_or(GENERIC)));
    }
    let text = text_of(first)?;
    if text.eq_ignore_ascii_case("nat") {
        return Some(make(unit.unwrap_or(GENERIC)));
    }
    if !datetime_kind {
        return None;
    }
    let (_, own) = parse_datetime(&text)?;
    let u = unit.unwrap_or(own);
    // A given unit must hold the string's precision.
    rescale(0, own, u)?;
    Some(datetime(u))
}

impl crate::context::BaseContext {
    /// `np.datetime64` and `np.timedelta64` as constructors.
    pub(crate) fn install_npdatetime(&mut self) {
        for (key, kind) in [("numpy.datetime64", true), ("numpy.timedelta64", false)] {
            self.register(
                key,
                Box::new(crate::context::FnTemplate(
                    move |a: &[TypeId]| {
                        Some(Signature {
                            ret: constructor(kind, a)?,
                            args: a.to_vec(),
                            key: ImplKey::Function(key.into()),
                        })
                    },
                    "(count: int or a constant date string or 'NaT', unit: a constant unit string)",
                )),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_combine_as_numpy_resolves_them() {
        // np.timedelta64(1, 'h') + np.timedelta64(1, 'm') is in minutes; days and weeks
        // meet in days; years and days do not meet for timedeltas.
        let u = |s| unit_index(s).expect("a unit");
        assert_eq!(common_timedelta_unit(u("h"), u("m")), Some(u("m")));
        assert_eq!(common_timedelta_unit(u("W"), u("D")), Some(u("D")));
        assert_eq!(common_timedelta_unit(u("Y"), u("M")), Some(u("M")));
        assert_eq!(common_timedelta_unit(u("Y"), u("D")), None);
        assert_eq!(common_timedelta_unit(GENERIC, u("s")), Some(u("s")));
        // A datetime in months plus days computes in days.
        assert_eq!(common_datetime_unit(u("M"), u("D"), true), Some(u("D")));
        assert_eq!(common_datetime_unit(u("D"), u("M"), true), None);
        assert_eq!(factor(u("D"), u("s")), Some(86_400));
        assert_eq!(factor(u("W"), u("h")), Some(168));
        assert_eq!(factor(u("Y"), u("M")), Some(12));
    }

    #[test]
    fn date_strings_read_as_numpy_reads_them() {
        // np.datetime64('2020-03-01').astype(int) == 18322, ...
        assert_eq!(parse_datetime("2020-03-01"), Some((18_322, 3)));
        assert_eq!(parse_datetime("1969-12-31"), Some((-1, 3)));
        assert_eq!(parse_datetime("2020"), Some((50, 0)));
        assert_eq!(parse_datetime("2020-03"), Some((602, 1)));
        assert_eq!(parse_datetime("2020-03-01T12:30"), Some((26_384_430, 5)));
        assert_eq!(parse_datetime("1970-01-01T00:00:01.5"), Some((1_500, 7)));
        assert_eq!(parse_datetime("NaT"), Some((NAT, GENERIC)));
        assert_eq!(rescale(602, 1, 3), Some(18_322));
        assert_eq!(rescale(50, 0, 3), Some(18_262));
    }

    #[test]
    fn operators_type_as_numpy() {
        let d = unit_index("D").expect("D");
        let s = unit_index("s").expect("s");
        let r = |op, a, b| binop(op, a, b).map(|sig| sig.ret.to_string());
        assert_eq!(
            r(BinOp::Sub, datetime(d), datetime(s)).as_deref(),
            Some("timedelta64[s]")
        );
        assert_eq!(
            r(BinOp::Add, datetime(d), timedelta(s)).as_deref(),
            Some("datetime64[s]")
        );
        assert_eq!(
            r(BinOp::TrueDiv, timedelta(d), timedelta(s)).as_deref(),
            Some("float64")
        );
        assert_eq!(
            r(BinOp::Mul, INT64, timedelta(d)).as_deref(),
            Some("timedelta64[D]")
        );
        assert_eq!(r(BinOp::Add, datetime(d), datetime(d)), None);
        assert_eq!(
            r(BinOp::Lt, datetime(d), datetime(s)).as_deref(),
            Some("bool")
        );
        assert_eq!(
            parse("datetime64[ms]"),
            Some(datetime(unit_index("ms").expect("ms")))
        );
        assert_eq!(parse("timedelta64"), Some(timedelta(GENERIC)));
    }
}
