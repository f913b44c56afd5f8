//! The Rust model of a CPython 3.11 code object and of the constants it can hold.

use std::fmt;

/// `co_flags` bit: the function is a generator.
pub const CO_GENERATOR: u32 = 0x20;
/// `co_flags` bit: the function takes `*args`.
pub const CO_VARARGS: u32 = 0x04;
/// `co_flags` bit: the function takes `**kwargs`.
pub const CO_VARKEYWORDS: u32 = 0x08;

/// `co_localspluskinds` bits (CPython 3.11 `Include/internal/pycore_code.h`).
pub const CO_FAST_LOCAL: u8 = 0x20;
pub const CO_FAST_CELL: u8 = 0x40;
pub const CO_FAST_FREE: u8 = 0x80;

/// A constant of `co_consts` (or any marshalled value).
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    None,
    Ellipsis,
    StopIteration,
    Bool(bool),
    Int(i64),
    /// An int that does not fit in i64: sign and magnitude in base-2**15 digits, least
    /// significant first, as marshal stores them.
    BigInt {
        negative: bool,
        digits: Vec<u16>,
    },
    Float(f64),
    Complex(f64, f64),
    Str(String),
    Bytes(Vec<u8>),
    Tuple(Vec<Constant>),
    List(Vec<Constant>),
    Set(Vec<Constant>),
    FrozenSet(Vec<Constant>),
    Dict(Vec<(Constant, Constant)>),
    Code(Box<CodeObject>),
}

impl Constant {
    /// A `BigInt` from 2**63 to 2**64 - 1 as its value (Numba types such ints
    /// uint64); None for any other constant.
    pub fn as_u64(&self) -> Option<u64> {
        let Constant::BigInt {
            negative: false,
            digits,
        } = self
        else {
            return None;
        };
        let mut v: u128 = 0;
        for &d in digits.iter().rev() {
            v = (v << 15) | u128::from(d);
            if v > u128::from(u64::MAX) {
                return None;
            }
        }
        u64::try_from(v).ok()
    }

    /// Python's `type(v).__name__`, as Numba prints it in `const(int, 1)`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Constant::None => "NoneType",
            Constant::Ellipsis => "ellipsis",
            Constant::StopIteration => "type",
            Constant::Bool(_) => "bool",
            Constant::Int(_) | Constant::BigInt { .. } => "int",
            Constant::Float(_) => "float",
            Constant::Complex(..) => "complex",
            Constant::Str(_) => "str",
            Constant::Bytes(_) => "bytes",
            Constant::Tuple(_) => "tuple",
            Constant::List(_) => "list",
            Constant::Set(_) => "set",
            Constant::FrozenSet(_) => "frozenset",
            Constant::Dict(_) => "dict",
            Constant::Code(_) => "code",
        }
    }

    /// CPython 3.11's `hash(v)` under `PYTHONHASHSEED=0`, where it is reproducible: ints,
    /// bools, floats, strings, bytes and tuples of those. `None` for the rest (`None`,
    /// `Ellipsis` and NaN hash by address; frozensets and code objects are not needed).
    pub fn py_hash(&self) -> Option<u64> {
        use crate::pyset::{hash_bytes, hash_int, hash_str, hash_tuple};
        Some(match self {
            Constant::Bool(b) => u64::from(*b),
            Constant::Int(i) => hash_int(*i),
            Constant::BigInt { negative, digits } => {
                // Horner's rule on base-2**15 digits modulo 2**61 - 1.
                const MODULUS: u128 = (1 << 61) - 1;
                let m = digits
                    .iter()
                    .rev()
                    .fold(0u128, |acc, &d| ((acc << 15) + u128::from(d)) % MODULUS);
                let h = if *negative { -(m as i128) } else { m as i128 };
                let h = if h == -1 { -2 } else { h };
                h as i64 as u64
            }
            Constant::Float(f) => hash_float(*f)?,
            Constant::Str(s) => hash_str(s),
            Constant::Bytes(b) => hash_bytes(b),
            Constant::Tuple(items) => {
                let hashes: Option<Vec<u64>> = items.iter().map(Constant::py_hash).collect();
                hash_tuple(&hashes?)
            }
            _ => return None,
        })
    }

    /// The elements of a frozenset in CPython's iteration order (inserting the stored
    /// elements in order, as `marshal.loads` does), when every element's hash is known;
    /// otherwise in stored order.
    pub fn frozenset_order(items: &[Constant]) -> Vec<&Constant> {
        use crate::pyset::PySet;
        let hashes: Option<Vec<u64>> = items.iter().map(Constant::py_hash).collect();
        match hashes {
            // Elements are distinct, so indices can stand in for them as keys.
            Some(h) => PySet::from_keys((0..items.len()).zip(h))
                .iter()
                .map(|&i| &items[i])
                .collect(),
            None => items.iter().collect(),
        }
    }

    /// Python's `str(v)` for the constant (strings without quotes).
    pub fn py_str(&self) -> String {
        match self {
            Constant::Str(s) => s.clone(),
            other => other.py_repr(),
        }
    }

    /// Python's `repr(v)`.
    pub fn py_repr(&self) -> String {
        match self {
            Constant::None => "None".into(),
            Constant::Ellipsis => "Ellipsis".into(),
            Constant::StopIteration => "<class 'StopIteration'>".into(),
            Constant::Bool(true) => "True".into(),
            Constant::Bool(false) => "False".into(),
            Constant::Int(i) => i.to_string(),
            Constant::BigInt { negative, digits } => bigint_to_string(*negative, digits),
            Constant::Float(f) => float_repr(*f),
            Constant::Complex(re, im) => complex_repr(*re, *im),
            Constant::Str(s) => str_repr(s),
            Constant::Bytes(b) => bytes_repr(b),
            Constant::Tuple(items) => {
                let inner: Vec<String> = items.iter().map(Constant::py_repr).collect();
                if items.len() == 1 {
                    format!("({},)", inner[0])
                } else {
                    format!("({})", inner.join(", "))
                }
            }
            Constant::List(items) => {
                let inner: Vec<String> = items.iter().map(Constant::py_repr).collect();
                format!("[{}]", inner.join(", "))
            }
            Constant::Set(items) | Constant::FrozenSet(items) => {
                let inner: Vec<String> = Constant::frozenset_order(items)
                    .into_iter()
                    .map(Constant::py_repr)
                    .collect();
                let body = format!("{{{}}}", inner.join(", "));
                if matches!(self, Constant::FrozenSet(_)) {
                    if items.is_empty() {
                        "frozenset()".into()
                    } else {
                        format!("frozenset({body})")
                    }
                } else {
                    body
                }
            }
            Constant::Dict(items) => {
                let inner: Vec<String> = items
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.py_repr(), v.py_repr()))
                    .collect();
                format!("{{{}}}", inner.join(", "))
            }
            Constant::Code(code) => code.to_string(),
        }
    }
}

/// CPython's `_Py_HashDouble` for a float (`None` for NaN, which hashes by address).
fn hash_float(v: f64) -> Option<u64> {
    const BITS: i32 = 61;
    const MODULUS: u64 = (1 << 61) - 1;
    if v.is_nan() {
        return None;
    }
    if v.is_infinite() {
        return Some(if v > 0.0 {
            314_159
        } else {
            (-314_159i64) as u64
        });
    }
    // frexp: v = m * 2**e with 0.5 <= |m| < 1.
    let (mut m, mut e) = if v == 0.0 {
        (0.0, 0)
    } else {
        let bits = v.abs().to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        if exp == 0 {
            // Subnormal: scale into the normal range first.
            let scaled = v.abs() * f64::powi(2.0, 64);
            let b = scaled.to_bits();
            let ex = ((b >> 52) & 0x7ff) as i32;
            (
                f64::from_bits((b & !(0x7ff << 52)) | (1022 << 52)),
                ex - 1022 - 64,
            )
        } else {
            (
                f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52)),
                exp - 1022,
            )
        }
    };
    let sign: i64 = if v < 0.0 { -1 } else { 1 };
    let mut x: u64 = 0;
    while m != 0.0 {
        x = ((x << 28) & MODULUS) | (x >> (BITS - 28));
        m *= 268_435_456.0;
        e -= 28;
        let y = m as u64;
        m -= y as f64;
        x += y;
        if x >= MODULUS {
            x -= MODULUS;
        }
    }
    let e = if e >= 0 {
        e % BITS
    } else {
        BITS - 1 - ((-1 - e) % BITS)
    };
    x = ((x << e) & MODULUS) | (x >> (BITS - e));
    let h = (x as i64).wrapping_mul(sign);
    Some(if h == -1 { (-2i64) as u64 } else { h as u64 })
}

/// CPython's `repr(float)`: shortest round-trip digits, `.0` for integral values, exponent
/// form outside [1e-4, 1e16).
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
        // Rust prints `1e16` / `1.5e-5`; Python prints `1e+16` / `1.5e-05`.
        let s = format!("{f:e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    let s = format!("{f}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

fn complex_repr(re: f64, im: f64) -> String {
    let part = |v: f64| {
        let s = float_repr(v);
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    };
    if re == 0.0 && re.is_sign_positive() {
        format!("{}j", part(im))
    } else {
        let sign = if im < 0.0 || (im == 0.0 && im.is_sign_negative()) {
            "-"
        } else {
            "+"
        };
        format!("({}{}{}j)", part(re), sign, part(im.abs()))
    }
}

fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = String::from("b");
    out.push(quote as char);
    for &c in b {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..=0x7e => out.push(c as char),
            c => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push(quote as char);
    out
}

/// Decimal text of a marshal long (base 2**15 digits).
fn bigint_to_string(negative: bool, digits: &[u16]) -> String {
    // Repeated division of the base-2**15 magnitude by 10**4.
    let mut mag: Vec<u32> = digits.iter().rev().map(|&d| u32::from(d)).collect();
    let mut chunks = Vec::new();
    while mag.iter().any(|&d| d != 0) {
        let mut rem = 0u32;
        for d in mag.iter_mut() {
            let cur = (rem << 15) | *d;
            *d = cur / 10_000;
            rem = cur % 10_000;
        }
        chunks.push(rem);
    }
    let mut s = if negative {
        String::from("-")
    } else {
        String::new()
    };
    match chunks.split_last() {
        None => s.push('0'),
        Some((last, rest)) => {
            s.push_str(&last.to_string());
            for c in rest.iter().rev() {
                s.push_str(&format!("{c:04}"));
            }
        }
    }
    s
}

/// A CPython 3.11 code object, field for field as `marshal` stores it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodeObject {
    pub argcount: u32,
    pub posonlyargcount: u32,
    pub kwonlyargcount: u32,
    pub stacksize: u32,
    pub flags: u32,
    pub code: Vec<u8>,
    pub consts: Vec<Constant>,
    pub names: Vec<String>,
    pub localsplusnames: Vec<String>,
    pub localspluskinds: Vec<u8>,
    pub filename: String,
    pub name: String,
    pub qualname: String,
    pub firstlineno: u32,
    pub linetable: Vec<u8>,
    pub exceptiontable: Vec<u8>,
}

impl CodeObject {
    fn locals_of_kind(&self, kind: u8) -> Vec<String> {
        self.localsplusnames
            .iter()
            .zip(&self.localspluskinds)
            .filter(|(_, &k)| k & kind != 0)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// `co_varnames`: arguments and plain locals (a cell that is also an argument counts).
    pub fn varnames(&self) -> Vec<String> {
        self.locals_of_kind(CO_FAST_LOCAL)
    }

    /// `co_cellvars`.
    pub fn cellvars(&self) -> Vec<String> {
        self.locals_of_kind(CO_FAST_CELL)
    }

    /// `co_freevars`.
    pub fn freevars(&self) -> Vec<String> {
        self.locals_of_kind(CO_FAST_FREE)
    }

    /// Positional parameter names, then keyword-only ones, then `*args` and `**kwargs`.
    /// In signature order (as `inspect.signature` lists them): positional, `*args`,
    /// keyword-only, `**kwargs`. `co_varnames` stores `*args` after the keyword-only ones.
    pub fn arg_names(&self) -> Vec<String> {
        let names = &self.localsplusnames;
        let pos = self.argcount as usize;
        let kwonly = self.kwonlyargcount as usize;
        let mut out: Vec<String> = names.iter().take(pos).cloned().collect();
        let mut next = pos + kwonly;
        if self.flags & CO_VARARGS != 0 {
            out.extend(names.get(next).cloned());
            next += 1;
        }
        out.extend(names.iter().skip(pos).take(kwonly).cloned());
        if self.flags & CO_VARKEYWORDS != 0 {
            out.extend(names.get(next).cloned());
        }
        out
    }

    /// Whether this is a generator function.
    pub fn is_generator(&self) -> bool {
        self.flags & CO_GENERATOR != 0
    }

    /// `_varname_from_oparg`: the name a `LOAD_FAST`/`LOAD_DEREF` argument refers to.
    pub fn localsplus_name(&self, oparg: u32) -> Option<&str> {
        self.localsplusnames.get(oparg as usize).map(String::as_str)
    }

    /// Every code object nested in the constants, depth first (not including `self`).
    pub fn nested_code(&self) -> Vec<&CodeObject> {
        fn walk<'a>(c: &'a Constant, out: &mut Vec<&'a CodeObject>) {
            match c {
                Constant::Code(code) => {
                    out.push(code);
                    for k in &code.consts {
                        walk(k, out);
                    }
                }
                Constant::Tuple(items) | Constant::FrozenSet(items) => {
                    items.iter().for_each(|k| walk(k, out))
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        for c in &self.consts {
            walk(c, &mut out);
        }
        out
    }
}

impl fmt::Display for CodeObject {
    /// `repr(code)` without the address, which is process-specific.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<code object {} at 0x0, file \"{}\", line {}>",
            self.name, self.filename, self.firstlineno
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        assert_eq!(float_repr(2.0), "2.0");
        assert_eq!(float_repr(0.1), "0.1");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(1.5e-5), "1.5e-05");
        assert_eq!(float_repr(-0.0), "-0.0");
        assert_eq!(float_repr(123456.75), "123456.75");
    }

    #[test]
    fn bigint_text() {
        // 2**63 = 8 * 32768**4 ... digits of 2**63 in base 2**15: [0,0,0,0,8]
        assert_eq!(
            bigint_to_string(false, &[0, 0, 0, 0, 8]),
            "9223372036854775808"
        );
        assert_eq!(bigint_to_string(true, &[1]), "-1");
    }

    #[test]
    fn str_repr_quotes_like_python() {
        assert_eq!(Constant::Str("a'b".into()).py_repr(), "\"a'b\"");
        assert_eq!(Constant::Str("x\n".into()).py_repr(), "'x\\n'");
        assert_eq!(Constant::Tuple(vec![Constant::Int(1)]).py_repr(), "(1,)");
    }
}

#[cfg(test)]
mod hash_tests {
    use super::*;

    #[test]
    fn hashes_match_cpython() {
        // python3.11 -c "print([hash(x) for x in (1.5, -2.25, 1e300, 0.1, -0.0, 5e-324)])"
        let floats = [
            (1.5, 1_152_921_504_606_846_977i64),
            (-2.25, -576_460_752_303_423_490),
            (1e300, 1_224_995_262_755_759_164),
            (0.1, 230_584_300_921_369_408),
            (-0.0, 0),
            (5e-324, 16_777_216),
        ];
        for (f, want) in floats {
            assert_eq!(Constant::Float(f).py_hash(), Some(want as u64), "{f}");
        }
        // hash(12345678901234567890) == 816463855166098135, and its negation.
        let digits = |mut n: u128| {
            let mut d = Vec::new();
            while n > 0 {
                d.push((n & 0x7fff) as u16);
                n >>= 15;
            }
            d
        };
        let big = 12_345_678_901_234_567_890u128;
        let pos = Constant::BigInt {
            negative: false,
            digits: digits(big),
        };
        let neg = Constant::BigInt {
            negative: true,
            digits: digits(big),
        };
        assert_eq!(pos.py_hash(), Some(816_463_855_166_098_135));
        assert_eq!(neg.py_hash(), Some((-816_463_855_166_098_135i64) as u64));
    }

    #[test]
    fn frozenset_of_strings_prints_in_cpython_order() {
        // PYTHONHASHSEED=0: repr(frozenset(['__name__', '__qualname__'])) ==
        // "frozenset({'__qualname__', '__name__'})"
        let fs = Constant::FrozenSet(vec![
            Constant::Str("__name__".into()),
            Constant::Str("__qualname__".into()),
        ]);
        assert_eq!(fs.py_repr(), "frozenset({'__qualname__', '__name__'})");
    }
}
