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
                let inner: Vec<String> = items.iter().map(Constant::py_repr).collect();
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
    pub fn arg_names(&self) -> Vec<String> {
        let mut n = (self.argcount + self.kwonlyargcount) as usize;
        if self.flags & CO_VARARGS != 0 {
            n += 1;
        }
        if self.flags & CO_VARKEYWORDS != 0 {
            n += 1;
        }
        self.localsplusnames.iter().take(n).cloned().collect()
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
