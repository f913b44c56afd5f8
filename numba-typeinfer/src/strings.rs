//! Typing of `str` methods (Numba's `unicode.py` overloads): one table of each method's
//! parameters, defaults and result, which keyword binding, the call templates and the
//! lowering (by the `str.<name>` key) all read.

use numba_bytecode::Constant;

use crate::lists::list_of;
use crate::signature::{ImplKey, Signature};
use crate::types::*;

/// What a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Str,
    Int,
    /// `None` or a string.
    OptStr,
    /// `None` or an integer.
    OptInt,
    Bool,
    /// A list of strings.
    StrList,
    /// A string or a tuple of strings (`startswith`).
    StrOrTuple,
}

/// What a method returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    Str,
    Bool,
    Int,
    StrList,
    /// Three strings (`partition`).
    Str3,
}

/// A parameter's default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Default {
    Required,
    None,
    Int(i64),
    Str(&'static str),
    Bool(bool),
}

/// One method: its name, parameters (after `self`) and result.
pub struct Method {
    pub name: &'static str,
    pub params: &'static [(&'static str, Param, Default)],
    pub ret: Ret,
}

const SEARCH: &[(&str, Param, Default)] = &[
    ("sub", Param::Str, Default::Required),
    ("start", Param::OptInt, Default::None),
    ("end", Param::OptInt, Default::None),
];
const AFFIX: &[(&str, Param, Default)] = &[
    ("prefix", Param::StrOrTuple, Default::Required),
    ("start", Param::OptInt, Default::None),
    ("end", Param::OptInt, Default::None),
];
const PAD: &[(&str, Param, Default)] = &[
    ("width", Param::Int, Default::Required),
    ("fillchar", Param::Str, Default::Str(" ")),
];
const STRIP: &[(&str, Param, Default)] = &[("chars", Param::OptStr, Default::None)];
const SPLIT: &[(&str, Param, Default)] = &[
    ("sep", Param::OptStr, Default::None),
    ("maxsplit", Param::Int, Default::Int(-1)),
];

macro_rules! methods {
    ($($name:literal => $params:expr, $ret:ident;)*) => {
        /// Every `str` method numba-rs compiles.
        pub const METHODS: &[Method] = &[$(Method { name: $name, params: $params, ret: Ret::$ret }),*];
    };
}

methods! {
    "capitalize" => &[], Str;
    "casefold" => &[], Str;
    "lower" => &[], Str;
    "upper" => &[], Str;
    "swapcase" => &[], Str;
    "title" => &[], Str;
    "isalnum" => &[], Bool;
    "isalpha" => &[], Bool;
    "isascii" => &[], Bool;
    "isdecimal" => &[], Bool;
    "isdigit" => &[], Bool;
    "isidentifier" => &[], Bool;
    "islower" => &[], Bool;
    "isnumeric" => &[], Bool;
    "isprintable" => &[], Bool;
    "isspace" => &[], Bool;
    "istitle" => &[], Bool;
    "isupper" => &[], Bool;
    "center" => PAD, Str;
    "ljust" => PAD, Str;
    "rjust" => PAD, Str;
    "zfill" => &[("width", Param::Int, Default::Required)], Str;
    "count" => SEARCH, Int;
    "find" => SEARCH, Int;
    "rfind" => SEARCH, Int;
    "index" => SEARCH, Int;
    "rindex" => SEARCH, Int;
    "startswith" => AFFIX, Bool;
    "endswith" => AFFIX, Bool;
    "expandtabs" => &[("tabsize", Param::Int, Default::Int(8))], Str;
    "join" => &[("iterable", Param::StrList, Default::Required)], Str;
    "strip" => STRIP, Str;
    "lstrip" => STRIP, Str;
    "rstrip" => STRIP, Str;
    "replace" => &[
        ("old", Param::Str, Default::Required),
        ("new", Param::Str, Default::Required),
        ("count", Param::Int, Default::Int(-1)),
    ], Str;
    "split" => SPLIT, StrList;
    "rsplit" => SPLIT, StrList;
    "splitlines" => &[("keepends", Param::Bool, Default::Bool(false))], StrList;
    "partition" => &[("sep", Param::Str, Default::Required)], Str3;
    "rpartition" => &[("sep", Param::Str, Default::Required)], Str3;
}

/// The method named `name`.
pub fn method_spec(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.name == name)
}

/// The string type a value of `t` acts as: `str` for strings, string literals and items
/// of `<U` arrays (`[unichr x n]`), `bytes` for bytes and items of `S` arrays
/// (`[char x n]`). Items convert to the string they hold where an operation needs one,
/// as Numba's charseq overloads do.
pub fn text_kind(t: TypeId) -> Option<TypeId> {
    match t.get() {
        Type::Unicode | Type::StringLiteral(_) | Type::UnicodeCharSeq(_) => Some(UNICODE),
        Type::Bytes | Type::CharSeq(_) => Some(BYTES),
        _ => None,
    }
}

/// `t` with character-array items replaced by the strings they hold (in tuples too):
/// what a function returns and what a list holds, as Python sees those values.
pub fn held_text(t: TypeId) -> TypeId {
    match t.get() {
        Type::CharSeq(_) => BYTES,
        Type::UnicodeCharSeq(_) => UNICODE,
        Type::UniTuple(e, n) if held_text(e) != e => intern(Type::UniTuple(held_text(e), n)),
        Type::Tuple(items) if items.iter().any(|&e| held_text(e) != e) => {
            tuple_of(&items.iter().map(|&e| held_text(e)).collect::<Vec<_>>())
        }
        _ => t,
    }
}

/// Whether `t` is an item of a NumPy character array or `bytes`: the kinds whose
/// operators [`text_binop`] types (plain strings keep their own templates).
fn charseq_or_bytes(t: TypeId) -> bool {
    matches!(
        t.get(),
        Type::Bytes | Type::CharSeq(_) | Type::UnicodeCharSeq(_)
    )
}

/// Operators over `bytes` and character-array items: comparisons and `+` between values
/// of one kind (items taken as the strings they hold), `*` by an integer, `in` (a
/// substring, or an integer in `bytes`).
pub fn text_binop(op: numba_ir::BinOp, lhs: TypeId, rhs: TypeId) -> Option<Signature> {
    use numba_ir::BinOp;
    if !charseq_or_bytes(lhs) && !charseq_or_bytes(rhs) {
        return None;
    }
    let (kl, kr) = (text_kind(lhs), text_kind(rhs));
    let sig = |ret: TypeId, args: Vec<TypeId>| Signature {
        ret,
        args,
        key: ImplKey::BinOp(op),
    };
    match op {
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
            if kl.is_some() && kl == kr =>
        {
            let k = kl?;
            Some(sig(BOOLEAN, vec![k, k]))
        }
        BinOp::Add if kl.is_some() && kl == kr => {
            let k = kl?;
            Some(sig(k, vec![k, k]))
        }
        BinOp::Mul => match (kl, kr) {
            (Some(k), None) if rhs.unliteral().is_integer() => Some(sig(k, vec![k, INT64])),
            (None, Some(k)) if lhs.unliteral().is_integer() => Some(sig(k, vec![INT64, k])),
            _ => None,
        },
        // Numba's IR holds `contains(container, item)`.
        BinOp::In if kl.is_some() && kl == kr => {
            let k = kl?;
            Some(sig(BOOLEAN, vec![k, k]))
        }
        BinOp::In if kl == Some(BYTES) && rhs.unliteral().is_integer() => {
            Some(sig(BOOLEAN, vec![BYTES, INT64]))
        }
        _ => None,
    }
}

/// The `bytes` methods: `str`'s but those about Unicode text alone.
fn bytes_has(name: &str) -> bool {
    !matches!(
        name,
        "casefold" | "isdecimal" | "isidentifier" | "isnumeric" | "isprintable"
    )
}

/// `s.name`: a bound method of a string (literal strings too), of `bytes`, or of an
/// item of a character array (bound to the string it holds).
pub fn getattr(value: TypeId, attr: &str) -> Option<TypeId> {
    let kind = text_kind(value)?;
    // `template.format(...)`: bound to the template itself, whose text the call needs.
    if attr == "format" && kind == UNICODE {
        return Some(intern(Type::BoundFunction {
            key: "str.format".into(),
            this: value,
        }));
    }
    method_spec(attr)?;
    let prefix = if kind == BYTES {
        if !bytes_has(attr) {
            return None;
        }
        "bytes"
    } else {
        "str"
    };
    Some(intern(Type::BoundFunction {
        key: format!("{prefix}.{attr}"),
        this: kind,
    }))
}

/// The method name of a `str.<name>` or `bytes.<name>` key.
pub fn method_name(key: &str) -> Option<&str> {
    key.strip_prefix("str.")
        .or_else(|| key.strip_prefix("bytes."))
}

/// The parameter names of `str.<name>` (keyword binding).
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    static NAMES: std::sync::LazyLock<Vec<Vec<&'static str>>> = std::sync::LazyLock::new(|| {
        METHODS
            .iter()
            .map(|m| m.params.iter().map(|p| p.0).collect())
            .collect()
    });
    let name = method_name(key)?;
    let i = METHODS.iter().position(|m| m.name == name)?;
    Some(&NAMES[i])
}

/// The default of a parameter of `str.<name>`, as a constant.
pub fn param_default(key: &str, param: &str) -> Option<Constant> {
    let m = method_spec(method_name(key)?)?;
    let (_, _, d) = m.params.iter().find(|p| p.0 == param)?;
    match *d {
        Default::Required => None,
        Default::None => Some(Constant::None),
        Default::Int(i) => Some(Constant::Int(i)),
        Default::Str(s) if key.starts_with("bytes.") => Some(Constant::Bytes(s.into())),
        Default::Str(s) => Some(Constant::Str(s.into())),
        Default::Bool(b) => Some(Constant::Bool(b)),
    }
}

/// The type an argument is passed as, if `param` accepts `t`; `kind` is the receiver's
/// string type (`str` or `bytes`), which string parameters take.
fn accept(param: Param, t: TypeId, kind: TypeId) -> Option<TypeId> {
    let is_int = t.unliteral().is_integer() || t.unliteral() == BOOLEAN;
    let text = text_kind(t) == Some(kind);
    let t = t.unliteral();
    match param {
        Param::Str if text => Some(kind),
        Param::Int if is_int => Some(INT64),
        Param::OptStr if text => Some(kind),
        Param::OptStr if t == NONE => Some(NONE),
        Param::OptInt if t == NONE => Some(NONE),
        // An optional value: None or the value, known at run time.
        Param::OptInt if matches!(t.get(), Type::Optional(x) if x.is_integer()) => Some(t),
        Param::OptStr if matches!(t.get(), Type::Optional(x) if text_kind(x) == Some(kind)) => {
            Some(t)
        }
        Param::OptInt if is_int => Some(INT64),
        Param::Bool if is_int => Some(BOOLEAN),
        Param::StrOrTuple if text => Some(kind),
        Param::StrOrTuple => match t.get() {
            Type::UniTuple(e, _) if text_kind(e) == Some(kind) => Some(intern(Type::UniTuple(
                kind,
                crate::conv::tuple_items(t)?.len() as u32,
            ))),
            _ => None,
        },
        // `join`'s iterable: a list or tuple of strings, or a 1-d character array.
        Param::StrList => match t.get() {
            Type::List { dtype, .. } if dtype == kind => Some(t),
            // A string's characters.
            Type::Unicode | Type::StringLiteral(_) if kind == UNICODE => Some(UNICODE),
            Type::UniTuple(..) | Type::Tuple(_) => crate::conv::tuple_items(t)?
                .iter()
                .all(|&e| text_kind(e) == Some(kind))
                .then_some(t),
            Type::Array { dtype, ndim: 1, .. }
                if matches!(dtype.get(), Type::CharSeq(_) | Type::UnicodeCharSeq(_))
                    && text_kind(dtype) == Some(kind) =>
            {
                Some(t)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The signature of a call `s.name(args)`; arguments left out take their defaults in
/// the lowering.
pub fn method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    if key == "str.format" {
        return format_method(this, args).ok();
    }
    let m = method_spec(method_name(key)?)?;
    if args.len() > m.params.len() {
        return None;
    }
    let kind = if key.starts_with("bytes.") {
        BYTES
    } else {
        UNICODE
    };
    let mut sig_args = vec![text_kind(this).unwrap_or(kind)];
    for (i, (_, p, d)) in m.params.iter().enumerate() {
        match args.get(i) {
            Some(&t) => sig_args.push(accept(*p, t, kind)?),
            None if *d == Default::Required => return None,
            None => break,
        }
    }
    let ret = match m.ret {
        Ret::Str => kind,
        Ret::Bool => BOOLEAN,
        Ret::Int => INTP,
        Ret::StrList => list_of(kind),
        Ret::Str3 => intern(Type::UniTuple(kind, 3)),
    };
    Some(Signature {
        ret,
        args: sig_args,
        key: ImplKey::Function(key.into()),
    })
}

/// Numba's message for a method given an argument of the wrong kind.
pub fn explain(key: &str, this: TypeId, args: &[TypeId]) -> Option<String> {
    if key == "str.format" {
        return format_method(this, args).err();
    }
    let name = method_name(key)?;
    let m = method_spec(name)?;
    let kind = if key.starts_with("bytes.") {
        BYTES
    } else {
        UNICODE
    };
    for (i, &t) in args.iter().enumerate() {
        let (pname, param, _) = *m.params.get(i)?;
        if accept(param, t, kind).is_some() {
            continue;
        }
        let t = t.unliteral();
        return Some(match (name, pname) {
            ("center" | "ljust" | "rjust", "width") => "The width must be an Integer".into(),
            ("center" | "ljust" | "rjust", "fillchar") => {
                "The fillchar must be a UnicodeType".into()
            }
            ("zfill", _) => "<width> must be an Integer".into(),
            ("count", "start" | "end") => "The slice indices must be an Integer or None".into(),
            ("count", _) => format!("The substring must be a UnicodeType, not {t}"),
            ("find" | "rfind" | "index" | "rindex", "start" | "end") => {
                format!(
                    "\"{pname}\" must be {}, not {t}",
                    numba_classes(&["Integer", "NoneType"])
                )
            }
            ("find" | "rfind" | "index" | "rindex", _) => {
                format!("\"substr\" must be {}, not {t}", numba_class("UnicodeType"))
            }
            ("partition" | "rpartition", _) => format!(
                "\"sep\" must be {}, not {t}",
                numba_classes(&["UnicodeType", "UnicodeCharSeq"])
            ),
            ("expandtabs", _) => format!(
                "\"tabsize\" must be {}, not {t}",
                numba_classes(&["Integer", "int"])
            ),
            ("rsplit", "maxsplit") => format!(
                "\"maxsplit\" must be {}, not {t}",
                numba_classes(&["Integer", "int"])
            ),
            ("rsplit", _) => format!(
                "\"sep\" must be {}, not {t}",
                numba_classes(&["UnicodeType", "UnicodeCharSeq", "NoneType"])
            ),
            ("splitlines", _) => format!(
                "\"keepends\" must be {}, not {t}",
                numba_classes(&["Integer", "int", "Boolean", "bool"])
            ),
            ("startswith", "start" | "end") => {
                format!("When specified, the arg '{pname}' must be an Integer or None")
            }
            ("startswith", _) => "The arg 'prefix' should be a string or a tuple of strings".into(),
            ("endswith", "start" | "end") => "The arg must be a Integer or None".into(),
            ("endswith", _) => "The arg 'substr' should be a string or a tuple of strings".into(),
            ("replace", "count") => {
                format!("Unsupported parameters. The parameters must be Integer. Given count: {t}")
            }
            ("replace", _) => format!("The object must be a UnicodeType. Given: {t}"),
            ("strip" | "lstrip" | "rstrip", _) => "The arg must be a UnicodeType or None".into(),
            ("join", _) => format!("\"parts\" must be a list of strings, not {t}"),
            (_, "sep") => format!("\"sep\" must be a UnicodeType or None, not {t}"),
            (_, "keepends") => format!("\"keepends\" must be an Integer or a Boolean, not {t}"),
            (_, p) => format!("\"{p}\" must be an Integer, not {t}"),
        });
    }
    None
}

/// How Numba's error messages print a type class (`<class 'numba.core.types...'>`):
/// its messages name the classes an argument may be, and users match on them.
fn numba_class(name: &str) -> String {
    let module = match name {
        "int" | "bool" => return format!("<class '{name}'>"),
        "Integer" | "Boolean" => "scalars",
        "UnicodeCharSeq" => "npytypes",
        _ => "misc",
    };
    format!("<class 'numba.core.types.{module}.{name}'>")
}

/// A tuple of [`numba_class`]es, as Python prints one.
fn numba_classes(names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| numba_class(n)).collect();
    format!("({})", items.join(", "))
}

/// One piece of a `str.format` template.
#[derive(Debug, Clone, PartialEq)]
pub enum FormatPiece {
    Text(String),
    /// A replacement field: the positional argument, its conversion (`r`, `a`, `s`)
    /// and its format spec.
    Field {
        index: usize,
        conversion: Option<char>,
        spec: String,
    },
}

/// A `str.format` template in pieces, with CPython's errors for a malformed one.
/// Positional fields only (`{}`, `{0}`, with `!r`/`!a`/`!s` and a spec without nested
/// fields); named fields, attributes and items are refused.
pub fn parse_format(template: &str) -> Result<Vec<FormatPiece>, String> {
    let c: Vec<char> = template.chars().collect();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let (mut auto, mut manual) = (0usize, false);
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '{' if c.get(i + 1) == Some(&'{') => {
                text.push('{');
                i += 2;
            }
            '}' if c.get(i + 1) == Some(&'}') => {
                text.push('}');
                i += 2;
            }
            '}' => return Err("Single '}' encountered in format string".into()),
            '{' => {
                let close = c[i + 1..]
                    .iter()
                    .position(|&x| x == '}')
                    .map(|k| i + 1 + k)
                    .ok_or_else(|| "expected '}' before end of string".to_string())?;
                let field: String = c[i + 1..close].iter().collect();
                if field.contains('{') {
                    return Err(
                        "nested replacement fields in str.format are not supported by numba-rs"
                            .into(),
                    );
                }
                let (head, spec) = match field.split_once(':') {
                    Some((h, s)) => (h, s.to_string()),
                    None => (field.as_str(), String::new()),
                };
                let (name, conversion) = match head.split_once('!') {
                    Some((n, conv)) => {
                        let mut cs = conv.chars();
                        let k = match (cs.next(), cs.next()) {
                            (Some(k @ ('r' | 's' | 'a')), None) => k,
                            (Some(k), None) => {
                                return Err(format!("Unknown conversion specifier {k}"))
                            }
                            (None, _) => {
                                return Err(
                                    "end of string while looking for conversion specifier".into()
                                )
                            }
                            _ => return Err("expected ':' after conversion specifier".into()),
                        };
                        (n, Some(k))
                    }
                    None => (head, None),
                };
                let index = if name.is_empty() {
                    if manual {
                        return Err(
                            "cannot switch from manual field specification to automatic \
                                    field numbering"
                                .into(),
                        );
                    }
                    auto += 1;
                    auto - 1
                } else if let Ok(k) = name.parse::<usize>() {
                    if auto > 0 {
                        return Err("cannot switch from automatic field numbering to manual \
                                    field specification"
                            .into());
                    }
                    manual = true;
                    k
                } else {
                    return Err(format!(
                        "str.format fields name positional arguments in numba-rs, not '{name}'"
                    ));
                };
                if !text.is_empty() {
                    pieces.push(FormatPiece::Text(std::mem::take(&mut text)));
                }
                pieces.push(FormatPiece::Field {
                    index,
                    conversion,
                    spec,
                });
                i = close + 1;
            }
            ch => {
                text.push(ch);
                i += 1;
            }
        }
    }
    if !text.is_empty() {
        pieces.push(FormatPiece::Text(text));
    }
    Ok(pieces)
}

/// The signature of `template.format(args)`, or why it cannot compile.
fn format_method(this: TypeId, args: &[TypeId]) -> Result<Signature, String> {
    let Type::StringLiteral(template) = this.get() else {
        return Err("str.format needs a constant format string in numba-rs".into());
    };
    for piece in parse_format(&template)? {
        let FormatPiece::Field {
            index,
            conversion,
            spec,
        } = piece
        else {
            continue;
        };
        let t = args.get(index).ok_or_else(|| {
            format!("Replacement index {index} out of range for positional args tuple")
        })?;
        let u = t.unliteral();
        let number = u.is_integer() || u == BOOLEAN || u.is_float();
        let ok = match (conversion, spec.is_empty()) {
            (Some('r' | 'a'), _) => text_kind(u).is_some() || number,
            (_, true) => text_kind(u).is_some() || number,
            (_, false) => text_kind(u) == Some(UNICODE) || number,
        };
        if !ok {
            return Err(format!("str.format cannot format a value of type {t}"));
        }
    }
    // Character-array items are formatted as the strings they hold.
    let mut sig_args = vec![this];
    sig_args.extend(args.iter().map(|t| held_text(t.unliteral())));
    Ok(Signature {
        ret: UNICODE,
        args: sig_args,
        key: ImplKey::Function("str.format".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_type_with_defaults_and_reject_wrong_kinds() {
        let find = method("str.find", UNICODE, &[UNICODE]).expect("find(sub)");
        assert_eq!((find.ret, find.args.len()), (INTP, 2));
        assert!(method("str.find", UNICODE, &[INT64]).is_none());
        assert!(method("str.center", UNICODE, &[]).is_none());
        let split = method("str.split", UNICODE, &[NONE, INT64]).expect("split(None, 2)");
        // Hand-checked against CPython 3.11's str.format.
        assert_eq!(
            parse_format("a{{b}}{}:{!r:>4}").unwrap(),
            vec![
                FormatPiece::Text("a{b}".into()),
                FormatPiece::Field {
                    index: 0,
                    conversion: None,
                    spec: String::new()
                },
                FormatPiece::Text(":".into()),
                FormatPiece::Field {
                    index: 1,
                    conversion: Some('r'),
                    spec: ">4".into()
                },
            ]
        );
        assert_eq!(
            parse_format("{0}{}").unwrap_err(),
            "cannot switch from manual field specification to automatic field numbering"
        );
        assert_eq!(
            parse_format("x}").unwrap_err(),
            "Single '}' encountered in format string"
        );
        assert_eq!(split.ret, list_of(UNICODE));
        assert_eq!(
            param_default("str.center", "fillchar"),
            Some(Constant::Str(" ".into()))
        );
        assert_eq!(
            param_names("str.replace"),
            Some(&["old", "new", "count"][..])
        );
    }
}
