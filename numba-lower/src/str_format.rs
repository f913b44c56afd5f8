//! `format(x, spec)` and f-string fields with a spec: Python's format-spec
//! mini-language (`[[fill]align][sign][z][#][0][width][grouping][.precision][type]`) for
//! ints, floats and strings, with CPython's results and its `ValueError`s.

use crate::strings::{chars, float_repr, new_str_of, Str};

/// A parsed spec.
#[derive(Debug, Default, Clone, PartialEq)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: Option<char>,
    /// `z`: negative zero coerced to zero (floats alone).
    no_neg_0: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    grouping: Option<char>,
    precision: Option<usize>,
    kind: Option<char>,
}

/// Why a value could not be formatted: CPython's exception class and message.
#[derive(Debug, Clone, PartialEq)]
pub enum FormatError {
    Value(String),
    Overflow(String),
}

impl FormatError {
    pub fn message(&self) -> &str {
        match self {
            FormatError::Value(m) | FormatError::Overflow(m) => m,
        }
    }
}

type Formatted = Result<String, FormatError>;

fn value_error<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError::Value(msg.into()))
}

/// Parse a spec as CPython's `parse_internal_render_format_spec` does for an object of
/// type `tname` whose presentation type defaults to `default` (`s` for strings), with
/// its errors in its order: a malformed spec, a missing precision, both `,` and `_`, and
/// a grouping the presentation type does not take.
fn parse(text: &str, tname: &str, default: Option<char>) -> Result<Spec, FormatError> {
    let c: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut s = Spec::default();
    let is_align = |ch: char| matches!(ch, '<' | '>' | '^' | '=');
    if c.len() >= 2 && is_align(c[1]) {
        s.fill = Some(c[0]);
        s.align = Some(c[1]);
        i = 2;
    } else if !c.is_empty() && is_align(c[0]) {
        s.align = Some(c[0]);
        i = 1;
    }
    if i < c.len() && matches!(c[i], '+' | '-' | ' ') {
        s.sign = Some(c[i]);
        i += 1;
    }
    if i < c.len() && c[i] == 'z' {
        s.no_neg_0 = true;
        i += 1;
    }
    if i < c.len() && c[i] == '#' {
        s.alternate = true;
        i += 1;
    }
    if s.fill.is_none() && i < c.len() && c[i] == '0' {
        s.zero = true;
        i += 1;
    }
    let digits = |i: &mut usize| -> Result<Option<usize>, FormatError> {
        let start = *i;
        while *i < c.len() && c[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start {
            return Ok(None);
        }
        let t: String = c[start..*i].iter().collect();
        t.parse()
            .map(Some)
            .or_else(|_| value_error("Too many decimal digits in format string"))
    };
    s.width = digits(&mut i)?.unwrap_or(0);
    let both = || value_error("Cannot specify both ',' and '_'.");
    if i < c.len() && c[i] == ',' {
        s.grouping = Some(',');
        i += 1;
    }
    if i < c.len() && c[i] == '_' {
        if s.grouping.is_some() {
            return both();
        }
        s.grouping = Some('_');
        i += 1;
    }
    if i < c.len() && c[i] == ',' && s.grouping == Some('_') {
        return both();
    }
    if i < c.len() && c[i] == '.' {
        i += 1;
        s.precision = Some(
            digits(&mut i)?
                .ok_or_else(|| FormatError::Value("Format specifier missing precision".into()))?,
        );
    }
    if c.len() - i > 1 {
        return value_error(format!(
            "Invalid format specifier '{text}' for object of type '{tname}'"
        ));
    }
    s.kind = c.get(i).copied().or(default);
    if let Some(g) = s.grouping {
        let ok = match s.kind {
            None | Some('d' | 'e' | 'f' | 'g' | 'E' | 'G' | '%' | 'F') => true,
            Some('b' | 'o' | 'x' | 'X') => g == '_',
            _ => false,
        };
        if !ok {
            return value_error(format!(
                "Cannot specify '{g}' with '{}'.",
                s.kind.unwrap_or('s')
            ));
        }
    }
    Ok(s)
}

/// Insert `sep` every three digits from the right of an integer's digits.
fn group(digits: &str, sep: char, every: usize) -> String {
    let n = digits.len();
    let mut out = String::with_capacity(n + n / every);
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (n - k).is_multiple_of(every) {
            out.push(sep);
        }
        out.push(ch);
    }
    out
}

/// Pad `body` (after its `sign`) to the spec's width.
fn pad(s: &Spec, sign: &str, body: &str, numeric: bool) -> String {
    let fill = s.fill.unwrap_or(if s.zero { '0' } else { ' ' });
    let align = s.align.unwrap_or(if s.zero && numeric {
        '='
    } else if numeric {
        '>'
    } else {
        '<'
    });
    let len = sign.chars().count() + body.chars().count();
    let n = s.width.saturating_sub(len);
    let fills = |k: usize| std::iter::repeat_n(fill, k).collect::<String>();
    match align {
        '<' => format!("{sign}{body}{}", fills(n)),
        '^' => format!("{}{sign}{body}{}", fills(n / 2), fills(n - n / 2)),
        '=' => format!("{sign}{}{body}", fills(n)),
        _ => format!("{}{sign}{body}", fills(n)),
    }
}

fn sign_of(s: &Spec, negative: bool) -> &'static str {
    match (negative, s.sign) {
        (true, _) => "-",
        (false, Some('+')) => "+",
        (false, Some(' ')) => " ",
        _ => "",
    }
}

/// Python's `format(v, spec)` of an int (`tname` is `int` or `bool`).
pub fn format_int(v: i128, spec: &str, tname: &str) -> Formatted {
    let s = parse(spec, tname, Some('d'))?;
    let (radix, prefix, upper) = match s.kind {
        Some('d') | Some('n') => (10, "", false),
        Some('b') => (2, "0b", false),
        Some('o') => (8, "0o", false),
        Some('x') => (16, "0x", false),
        Some('X') => (16, "0X", true),
        Some('c') => (0, "", false),
        Some('e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%') => return format_float(v as f64, spec),
        k => {
            return value_error(format!(
                "Unknown format code '{}' for object of type '{tname}'",
                k.unwrap_or('d')
            ))
        }
    };
    if s.precision.is_some() {
        return value_error("Precision not allowed in integer format specifier");
    }
    if s.no_neg_0 {
        return value_error("Negative zero coercion (z) not allowed in integer format specifier");
    }
    if radix == 0 {
        if s.sign.is_some() {
            return value_error("Sign not allowed with integer format specifier 'c'");
        }
        if s.alternate {
            return value_error("Alternate form (#) not allowed with integer format specifier 'c'");
        }
        let ch = u32::try_from(v)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(|| FormatError::Overflow("%c arg not in range(0x110000)".into()))?;
        return Ok(pad(&s, "", &ch.to_string(), false));
    }
    let m = v.unsigned_abs();
    let mut digits = match radix {
        2 => format!("{m:b}"),
        8 => format!("{m:o}"),
        16 if upper => format!("{m:X}"),
        16 => format!("{m:x}"),
        _ => m.to_string(),
    };
    if let Some(g) = s.grouping {
        digits = group(&digits, g, if radix == 10 { 3 } else { 4 });
    }
    let prefix = if s.alternate { prefix } else { "" };
    let sign = format!("{}{prefix}", sign_of(&s, v < 0));
    Ok(pad(&s, &sign, &digits, true))
}

/// `x` in scientific notation with `p` digits after the point: `1.50e+03`.
fn sci(x: f64, p: usize, upper: bool) -> String {
    let t = format!("{:.*e}", p, x);
    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let sign = if e < 0 { '-' } else { '+' };
    let out = format!("{m}e{sign}{:02}", e.abs());
    if upper {
        out.to_uppercase()
    } else {
        out
    }
}

/// Python's general format (`g`) with `p` significant digits; trailing zeros go unless
/// `keep` (`#`). With `add_dot` (the spec without a type) an integral fixed result gets
/// `.0`, and exponent notation starts one digit sooner, as CPython's
/// `format_float_short` does.
fn general(x: f64, p: usize, upper: bool, keep: bool, add_dot: bool) -> String {
    let p = p.max(1);
    let t = format!("{:.*e}", p - 1, x);
    let exp: i32 = t
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let strip = |s: String| -> String {
        if keep || !s.contains('.') {
            return s;
        }
        let s = s.trim_end_matches('0');
        s.strip_suffix('.').unwrap_or(s).to_string()
    };
    let limit = if add_dot { p as i32 - 1 } else { p as i32 };
    if -4 <= exp && exp < limit {
        let f = strip(format!("{:.*}", (p as i32 - 1 - exp) as usize, x));
        if add_dot && !f.contains('.') {
            format!("{f}.0")
        } else {
            f
        }
    } else {
        let m = sci(x, p - 1, upper);
        let (mant, e) = m.split_once(['e', 'E']).unwrap_or((&m, ""));
        format!(
            "{}{}{e}",
            strip(mant.to_string()),
            if upper { 'E' } else { 'e' }
        )
    }
}

/// Python's `format(v, spec)` of a float.
pub fn format_float(v: f64, spec: &str) -> Formatted {
    let s = parse(spec, "float", None)?;
    let upper = matches!(s.kind, Some('E' | 'F' | 'G'));
    let mut negative = v.is_sign_negative() && !v.is_nan();
    let x = v.abs();
    let body = if !x.is_finite() {
        let t = if x.is_nan() { "nan" } else { "inf" };
        let t = if upper {
            t.to_uppercase()
        } else {
            t.to_string()
        };
        if s.kind == Some('%') {
            format!("{t}%")
        } else {
            t
        }
    } else {
        match s.kind {
            Some('f' | 'F') => format!("{:.*}", s.precision.unwrap_or(6), x),
            Some('e' | 'E') => sci(x, s.precision.unwrap_or(6), upper),
            // `n` is `g` (numba-rs formats in the C locale).
            Some('g' | 'G' | 'n') => {
                general(x, s.precision.unwrap_or(6), upper, s.alternate, false)
            }
            Some('%') => format!("{:.*}%", s.precision.unwrap_or(6), x * 100.0),
            None => match s.precision {
                None => float_repr(x),
                Some(p) => general(x, p, false, s.alternate, true),
            },
            Some(k) => {
                return value_error(format!(
                    "Unknown format code '{k}' for object of type 'float'"
                ))
            }
        }
    };
    // `z`: a result that rounded to zero loses its sign.
    if s.no_neg_0 && negative && !body.chars().any(|ch| ('1'..='9').contains(&ch)) {
        negative = false;
    }
    let body = match s.grouping {
        Some(g) if x.is_finite() => {
            let (int, rest) = match body.find(|c: char| !c.is_ascii_digit()) {
                Some(k) => body.split_at(k),
                None => (body.as_str(), ""),
            };
            format!("{}{rest}", group(int, g, 3))
        }
        _ => body,
    };
    Ok(pad(&s, sign_of(&s, negative), &body, true))
}

/// Python's `format(s, spec)` of a string.
pub fn format_str(v: &str, spec: &str) -> Formatted {
    let s = parse(spec, "str", Some('s'))?;
    if s.kind != Some('s') {
        return value_error(format!(
            "Unknown format code '{}' for object of type 'str'",
            s.kind.unwrap_or('s')
        ));
    }
    match s.sign {
        Some(' ') => return value_error("Space not allowed in string format specifier"),
        Some(_) => return value_error("Sign not allowed in string format specifier"),
        None => {}
    }
    if s.no_neg_0 {
        return value_error("Negative zero coercion (z) not allowed in string format specifier");
    }
    if s.alternate {
        return value_error("Alternate form (#) not allowed in string format specifier");
    }
    if s.align == Some('=') {
        return value_error("'=' alignment not allowed in string format specifier");
    }
    let body: String = match s.precision {
        Some(p) => v.chars().take(p).collect(),
        None => v.to_string(),
    };
    Ok(pad(&s, "", &body, false))
}

/// # Safety
/// `s` points to a valid string struct.
unsafe fn text(s: *const Str) -> String {
    // SAFETY: the caller's contract.
    unsafe { chars(&*s) }
        .map(|c| char::from_u32(c).unwrap_or('\u{FFFD}'))
        .collect()
}

/// Write `r` into `out`: 0; 1 (`ValueError`) or 2 (`OverflowError`) when the spec was
/// invalid for the value, with CPython's message in `out` (the lowering raises it); -1
/// when the allocation failed.
///
/// # Safety
/// `out` points to writable storage for a string struct.
unsafe fn emit(r: Formatted, out: *mut Str) -> i32 {
    let (text, status) = match r {
        Ok(t) => (t, 0),
        Err(FormatError::Value(m)) => (m, 1),
        Err(FormatError::Overflow(m)) => (m, 2),
    };
    let cs: Vec<u32> = text.chars().map(u32::from).collect();
    // SAFETY: the caller's contract.
    match unsafe { new_str_of(&cs, out) } {
        0 => status,
        failed => failed,
    }
}

/// `format(v, spec)` of an integer: `flags` bit 0 for an unsigned one, bit 1 for a
/// bool (its errors name `bool`).
///
/// # Safety
/// `spec` points to a valid string struct, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_format_int(
    v: i64,
    flags: i32,
    spec: *const Str,
    out: *mut Str,
) -> i32 {
    let v = if flags & 1 != 0 {
        i128::from(v as u64)
    } else {
        i128::from(v)
    };
    let tname = if flags & 2 != 0 { "bool" } else { "int" };
    // SAFETY: the caller's contract.
    let spec = unsafe { text(spec) };
    // An empty spec is `str(v)`: a bool's name.
    if spec.is_empty() && flags & 2 != 0 {
        let name = if v != 0 { "True" } else { "False" };
        // SAFETY: the caller's contract.
        return unsafe { emit(Ok(name.into()), out) };
    }
    // SAFETY: the caller's contract.
    unsafe { emit(format_int(v, &spec, tname), out) }
}

/// `format(v, spec)` of a float.
///
/// # Safety
/// As [`numba_rs_format_int`].
pub unsafe extern "C" fn numba_rs_format_float(v: f64, spec: *const Str, out: *mut Str) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { emit(format_float(v, &text(spec)), out) }
}

/// `format(s, spec)` of a string.
///
/// # Safety
/// `s` and `spec` point to valid string structs, `out` to writable storage for one.
pub unsafe extern "C" fn numba_rs_format_str(
    s: *const Str,
    spec: *const Str,
    out: *mut Str,
) -> i32 {
    // SAFETY: the caller's contract.
    unsafe { emit(format_str(&text(s), &text(spec)), out) }
}

/// Every helper by symbol name, with its address.
pub fn symbols() -> Vec<(&'static str, usize)> {
    vec![
        (
            "numba_rs_format_int",
            numba_rs_format_int as *const () as usize,
        ),
        (
            "numba_rs_format_float",
            numba_rs_format_float as *const () as usize,
        ),
        (
            "numba_rs_format_str",
            numba_rs_format_str as *const () as usize,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_format_as_cpython() {
        // Hand-checked against CPython 3.11's format().
        assert_eq!(format_int(42, "05d", "int").unwrap(), "00042");
        assert_eq!(format_int(-42, "05d", "int").unwrap(), "-0042");
        assert_eq!(format_int(1234567, ",", "int").unwrap(), "1,234,567");
        assert_eq!(format_int(255, "#x", "int").unwrap(), "0xff");
        assert_eq!(format_int(255, "_b", "int").unwrap(), "1111_1111");
        assert_eq!(format_int(7, "^7", "int").unwrap(), "   7   ");
        assert_eq!(format_int(7, "*<4", "int").unwrap(), "7***");
        assert_eq!(format_float(5.43216, ">8.3f").unwrap(), "   5.432");
        assert_eq!(format_float(1234.5, ".3").unwrap(), "1.23e+03");
        assert_eq!(format_float(1.0, ".3").unwrap(), "1.0");
        assert_eq!(format_float(560.1529781671129, ".3").unwrap(), "5.6e+02");
        assert_eq!(format_float(56.0, ".3").unwrap(), "56.0");
        assert_eq!(format_float(0.000012345, "g").unwrap(), "1.2345e-05");
        assert_eq!(format_float(1e6, "g").unwrap(), "1e+06");
        assert_eq!(format_float(0.5, ".1%").unwrap(), "50.0%");
        assert_eq!(format_float(-2.5, "+.2e").unwrap(), "-2.50e+00");
        assert_eq!(format_float(1234567.891, ",.2f").unwrap(), "1,234,567.89");
        assert_eq!(format_float(2.5, "").unwrap(), "2.5");
        assert_eq!(format_float(f64::INFINITY, ".2%").unwrap(), "inf%");
        assert_eq!(format_str("ab", "<5").unwrap(), "ab   ");
        assert_eq!(format_str("abcdef", ".2").unwrap(), "ab");
        assert!(format_str("ab", "d").is_err());
        assert!(format_int(1, "z!", "int").is_err());
    }
}
