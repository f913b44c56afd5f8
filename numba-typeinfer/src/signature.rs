//! Resolved call signatures and explicit signature strings.

use std::fmt;

use numba_ir::{BinOp, UnaryOp};

use crate::types::{self, Type, TypeId};

/// Which implementation a typed operation selects: the key of the lowering registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ImplKey {
    BinOp(BinOp),
    Unary(UnaryOp),
    /// A function template by key (`abs`, `range`, `math.sqrt`, a user's key).
    Function(String),
    /// A call to another jitted function (or to the function being compiled).
    Dispatcher {
        id: u64,
    },
    /// A call to a numba-rs ufunc: the kernel's dispatcher, its argument types and its
    /// result, and a gufunc's core dimensions (`UFuncLoop`).
    UFunc {
        kernel: u64,
        args: Vec<TypeId>,
        ret: TypeId,
        nin: usize,
        core: Option<Vec<Vec<u32>>>,
    },
    /// Constructing an exception instance.
    Exception(String),
    /// `value.attr` (the receiver type is the signature's only argument).
    GetAttr(String),
    /// `iter(value)`.
    GetIter,
    /// `next(iterator)`, giving a (value, valid) pair.
    IterNext,
    /// `value[index]` with a runtime index.
    GetItem,
    /// `value[<constant>]`: the index is the literal type of the second argument.
    StaticGetItem,
    /// `target[index] = value`.
    SetItem,
    /// `target.attr = value` where the receiver's type implements it natively (a
    /// record's field); the signature's arguments are the receiver and the value.
    SetAttr(String),
}

impl ImplKey {
    /// The key as Numba would name the operation (`add`, `getattr(real)`, `math.sqrt`).
    pub fn describe(&self) -> String {
        match self {
            ImplKey::BinOp(op) => op.operator_name().to_string(),
            ImplKey::Unary(op) => op.operator_name().to_string(),
            ImplKey::Function(k) => k.clone(),
            ImplKey::Dispatcher { id } => format!("dispatcher #{id}"),
            ImplKey::UFunc { kernel, .. } => format!("ufunc of dispatcher #{kernel}"),
            ImplKey::Exception(n) => format!("exception class {n}"),
            ImplKey::GetAttr(a) => format!("getattr(.{a})"),
            ImplKey::GetIter => "getiter".into(),
            ImplKey::IterNext => "iternext".into(),
            ImplKey::GetItem => "getitem".into(),
            ImplKey::StaticGetItem => "static_getitem".into(),
            ImplKey::SetItem => "setitem".into(),
            ImplKey::SetAttr(a) => format!("setattr(.{a})"),
        }
    }
}

/// A resolved signature: argument types the operands are converted to, and the result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    pub ret: TypeId,
    pub args: Vec<TypeId>,
    pub key: ImplKey,
}

impl fmt::Display for Signature {
    /// `(int64, float64) -> float64`, as Numba prints signatures (a Python tuple, so one
    /// argument is `(int64,)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(|a| a.to_string()).collect();
        let comma = if args.len() == 1 { "," } else { "" };
        write!(f, "({}{comma}) -> {}", args.join(", "), self.ret)
    }
}

/// Parse `"float64(float64, int64)"` (or `"(int64, int64)"` with no return type) into the
/// return type (if given) and the argument types.
pub fn parse_signature(text: &str) -> Result<(Option<TypeId>, Vec<TypeId>), String> {
    let text = text.trim();
    let close = text
        .rfind(')')
        .filter(|&c| text[c + 1..].trim().is_empty())
        .ok_or_else(|| format!("invalid signature {text:?}: expected 'ret(args)'"))?;
    // The argument list is the group the last `)` closes: the return type before it may
    // hold parentheses of its own (`array(float64, 1d, A)(array(float64, 1d, C))`).
    let mut depth = 0usize;
    let mut open = None;
    for (i, c) in text[..=close].char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '(' | '[' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("invalid signature {text:?}: unbalanced parentheses"))?;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open.ok_or_else(|| format!("invalid signature {text:?}: unbalanced parentheses"))?;
    let ret_name = text[..open].trim();
    let ret = if ret_name.is_empty() {
        None
    } else {
        Some(parse_sig_type(ret_name)?)
    };
    let inner = text[open + 1..close].trim();
    let args = types::split_top(inner)
        .into_iter()
        .enumerate()
        .filter(|(i, a)| !(a.is_empty() && *i > 0))
        .map(|(_, a)| parse_sig_type(a))
        .collect::<Result<_, _>>()?;
    Ok((ret, args))
}

/// Numba's type constructors as Python expressions (what `numba.types` evaluates a
/// string annotation to): `UniTuple(int64, 2)`, `Tuple((int64, float64))`,
/// `Optional(int64)`, `Array(float64, 2, 'C')`.
fn constructor(text: &str) -> Result<Option<TypeId>, String> {
    let Some((name, rest)) = text.split_once('(') else {
        return Ok(None);
    };
    let Some(inner) = rest.strip_suffix(')') else {
        return Ok(None);
    };
    let parts = types::split_top(inner);
    let t = match (name.trim(), parts.as_slice()) {
        // A type given by its typecode (a host writes type objects this way: a user's
        // type or a jitclass instance type has no name this parser knows).
        ("typecode", [n]) => {
            let n: u32 = n
                .trim()
                .parse()
                .map_err(|_| format!("invalid typecode {n:?} in {text:?}"))?;
            if n as usize >= types::count() {
                return Err(format!("unknown typecode {n} in signature"));
            }
            TypeId(n)
        }
        ("UniTuple", [item, n]) => {
            let n: u32 = n
                .parse()
                .map_err(|_| format!("invalid tuple length {n:?} in {text:?}"))?;
            types::intern(Type::UniTuple(parse_sig_type(item)?, n))
        }
        ("Tuple", [items]) => {
            let items = items
                .trim()
                .strip_prefix(['(', '['])
                .and_then(|i| i.strip_suffix([')', ']']))
                .ok_or_else(|| format!("Tuple takes a sequence of types in {text:?}"))?;
            let tys = types::split_top(items)
                .into_iter()
                .filter(|p| !p.is_empty())
                .map(parse_sig_type)
                .collect::<Result<Vec<_>, _>>()?;
            types::tuple_of(&tys)
        }
        // `Optional(T)` (the class) and `optional(T)` (Numba's function of that name).
        ("Optional" | "optional", [item]) => types::intern(Type::Optional(parse_sig_type(item)?)),
        // `List(int64)`, `List(int64, reflected=True)`, `Set(int64)` (Numba's classes).
        ("List" | "Set", [item, rest @ ..]) if rest.len() <= 1 => {
            let reflected = match rest {
                [] => false,
                [r] => {
                    let r = r.trim();
                    let r = r
                        .strip_prefix("reflected")
                        .map_or(r, |x| x.trim_start_matches([' ', '=']));
                    match r.trim() {
                        "True" => true,
                        "False" => false,
                        other => {
                            return Err(format!("invalid reflected flag {other:?} in {text:?}"))
                        }
                    }
                }
                _ => false,
            };
            let dtype = parse_sig_type(item)?;
            if name.trim() == "List" {
                types::intern(Type::List {
                    dtype,
                    reflected,
                    typed: false,
                })
            } else {
                types::intern(Type::Set { dtype, reflected })
            }
        }
        ("Array", [dtype, ndim, layout]) => {
            let ndim: u32 = ndim
                .parse()
                .map_err(|_| format!("invalid array rank {ndim:?} in {text:?}"))?;
            let layout = match layout.trim_matches(|c| c == '\'' || c == '"') {
                "C" => types::Layout::C,
                "F" => types::Layout::F,
                "A" => types::Layout::A,
                other => return Err(format!("invalid array layout {other:?} in {text:?}")),
            };
            types::array(parse_sig_type(dtype)?, ndim, layout)
        }
        _ => return Ok(None),
    };
    Ok(Some(t))
}

/// One type of a signature string: a name (`float64`), Numba's printed form
/// (`array(float64, 1d, C)`), or the array shorthand `float64[:]`, `float64[:, ::1]` (C),
/// `float64[::1, :]` (F), any other `[:, :]` is layout A.
pub fn parse_sig_type(text: &str) -> Result<TypeId, String> {
    let text = text.trim();
    let text = text.strip_prefix("types.").unwrap_or(text);
    if let Some(t) = types::parse_type(text) {
        return Ok(t);
    }
    if let Some(t) = constructor(text)? {
        return Ok(t);
    }
    if let Some((base, dims)) = text.strip_suffix(']').and_then(|t| t.split_once('[')) {
        let dtype = types::from_name(base.trim())
            .ok_or_else(|| format!("unknown type {:?} in signature", base.trim()))?;
        let dims: Vec<&str> = dims.split(',').map(str::trim).collect();
        if dims.iter().any(|d| *d != ":" && *d != "::1") {
            return Err(format!("invalid array type {text:?} in signature"));
        }
        let n = dims.len();
        let layout = if dims[n - 1] == "::1" && dims[..n - 1].iter().all(|d| *d == ":") {
            types::Layout::C
        } else if n > 1 && dims[0] == "::1" && dims[1..].iter().all(|d| *d == ":") {
            types::Layout::F
        } else if dims.iter().all(|d| *d == ":") {
            types::Layout::A
        } else {
            return Err(format!("invalid array layout in {text:?}"));
        };
        return Ok(types::array(dtype, n as u32, layout));
    }
    Err(format!("unknown type {text:?} in signature"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn typecodes_name_types_in_signatures() {
        let t = types::intern(Type::UniTuple(types::INT64, 3));
        let text = format!("float64(typecode({}), int64)", t.0);
        let (ret, args) = parse_signature(&text).expect("parses");
        assert_eq!(ret, Some(types::FLOAT64));
        assert_eq!(args, vec![t, types::INT64]);
        assert!(parse_signature("float64(typecode(4000000000))").is_err());
    }

    use super::*;
    use crate::types::*;

    #[test]
    fn return_types_with_parentheses() {
        // What a Numba `Signature` of array types prints.
        let (ret, args) =
            parse_signature("array(float64, 1d, A)(array(float64, 1d, C), float64)").unwrap();
        assert_eq!(ret, Some(array(FLOAT64, 1, Layout::A)));
        assert_eq!(args, vec![array(FLOAT64, 1, Layout::C), FLOAT64]);
        let (ret, args) = parse_signature("float64[:](float64[::1], float64, float64)").unwrap();
        assert_eq!(ret, Some(array(FLOAT64, 1, Layout::A)));
        assert_eq!(args.len(), 3);
        let (ret, args) = parse_signature("UniTuple(int64 x 2)(int64)").unwrap();
        assert_eq!(ret, Some(intern(Type::UniTuple(INT64, 2))));
        assert_eq!(args, vec![INT64]);
        assert_eq!(parse_signature("(int64,)").unwrap(), (None, vec![INT64]));
        assert!(parse_signature("int64(int64").is_err());
        assert!(parse_signature("int64)").is_err());
    }

    #[test]
    fn parses() {
        assert_eq!(
            parse_signature("float64(float64, int64)"),
            Ok((Some(FLOAT64), vec![FLOAT64, INT64]))
        );
        assert_eq!(parse_signature("(int64,)"), Ok((None, vec![INT64])));
        assert_eq!(parse_signature("void()"), Ok((Some(NONE), vec![])));
        assert!(parse_signature("float64(str)").is_err());
        // Numba's array shorthand and printed names.
        let (ret, args) =
            parse_signature("float64(float64[:], int32[:, ::1], float32[::1, :])").unwrap();
        assert_eq!(ret, Some(FLOAT64));
        let names: Vec<String> = args.iter().map(|t| t.to_string()).collect();
        assert_eq!(
            names,
            [
                "array(float64, 1d, A)",
                "array(int32, 2d, C)",
                "array(float32, 2d, F)"
            ]
        );
        assert_eq!(
            parse_signature("(array(float64, 1d, C), UniTuple(int64 x 2))").map(|(_, a)| a.len()),
            Ok(2)
        );
        assert!(parse_signature("f8(float64[::2])").is_err());
        assert!(parse_signature("float64").is_err());
    }
}
