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

/// `s.name`: a bound method of a string (literal strings too).
pub fn getattr(value: TypeId, attr: &str) -> Option<TypeId> {
    if value.unliteral() != UNICODE {
        return None;
    }
    method_spec(attr)?;
    Some(intern(Type::BoundFunction {
        key: format!("str.{attr}"),
        this: UNICODE,
    }))
}

/// The parameter names of `str.<name>` (keyword binding).
pub fn param_names(key: &str) -> Option<&'static [&'static str]> {
    static NAMES: std::sync::LazyLock<Vec<Vec<&'static str>>> = std::sync::LazyLock::new(|| {
        METHODS
            .iter()
            .map(|m| m.params.iter().map(|p| p.0).collect())
            .collect()
    });
    let name = key.strip_prefix("str.")?;
    let i = METHODS.iter().position(|m| m.name == name)?;
    Some(&NAMES[i])
}

/// The default of a parameter of `str.<name>`, as a constant.
pub fn param_default(key: &str, param: &str) -> Option<Constant> {
    let m = method_spec(key.strip_prefix("str.")?)?;
    let (_, _, d) = m.params.iter().find(|p| p.0 == param)?;
    match *d {
        Default::Required => None,
        Default::None => Some(Constant::None),
        Default::Int(i) => Some(Constant::Int(i)),
        Default::Str(s) => Some(Constant::Str(s.into())),
        Default::Bool(b) => Some(Constant::Bool(b)),
    }
}

/// The type an argument is passed as, if `param` accepts `t`.
fn accept(param: Param, t: TypeId) -> Option<TypeId> {
    let t = t.unliteral();
    let is_int = t.is_integer() || t == BOOLEAN;
    match param {
        Param::Str if t == UNICODE => Some(UNICODE),
        Param::Int if is_int => Some(INT64),
        Param::OptStr if t == UNICODE || t == NONE => Some(t),
        Param::OptInt if t == NONE => Some(NONE),
        Param::OptInt if is_int => Some(INT64),
        Param::Bool if is_int => Some(BOOLEAN),
        Param::StrOrTuple if t == UNICODE => Some(UNICODE),
        Param::StrOrTuple => match t.get() {
            Type::UniTuple(e, _) if e.unliteral() == UNICODE => Some(intern(Type::UniTuple(
                UNICODE,
                crate::conv::tuple_items(t)?.len() as u32,
            ))),
            _ => None,
        },
        Param::StrList => match t.get() {
            Type::List { dtype, .. } if dtype == UNICODE => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// The signature of a call `s.name(args)`; arguments left out take their defaults in
/// the lowering.
pub fn method(key: &str, this: TypeId, args: &[TypeId]) -> Option<Signature> {
    let m = method_spec(key.strip_prefix("str.")?)?;
    if args.len() > m.params.len() {
        return None;
    }
    let mut sig_args = vec![this.unliteral()];
    for (i, (_, p, d)) in m.params.iter().enumerate() {
        match args.get(i) {
            Some(&t) => sig_args.push(accept(*p, t)?),
            None if *d == Default::Required => return None,
            None => break,
        }
    }
    let ret = match m.ret {
        Ret::Str => UNICODE,
        Ret::Bool => BOOLEAN,
        Ret::Int => INTP,
        Ret::StrList => list_of(UNICODE),
        Ret::Str3 => intern(Type::UniTuple(UNICODE, 3)),
    };
    Some(Signature {
        ret,
        args: sig_args,
        key: ImplKey::Function(key.into()),
    })
}

/// Numba's message for a method given an argument of the wrong kind.
pub fn explain(key: &str, args: &[TypeId]) -> Option<String> {
    let name = key.strip_prefix("str.")?;
    let m = method_spec(name)?;
    for (i, &t) in args.iter().enumerate() {
        let (pname, param, _) = *m.params.get(i)?;
        if accept(param, t).is_some() {
            continue;
        }
        let t = t.unliteral();
        return Some(match (name, pname) {
            ("center" | "ljust" | "rjust", "width") => "The width must be an Integer".into(),
            ("center" | "ljust" | "rjust", "fillchar") => {
                "The fillchar must be a UnicodeType".into()
            }
            ("zfill", _) => "<width> must be an Integer".into(),
            ("count" | "find" | "rfind" | "index" | "rindex", "start" | "end") => {
                "The slice indices must be an Integer or None".into()
            }
            ("count" | "find" | "rfind" | "index" | "rindex", _) => {
                format!("The substring must be a UnicodeType, not {t}")
            }
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
